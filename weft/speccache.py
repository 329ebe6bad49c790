"""Warm starts without lowering: the result of lowering a kernel specialisation, remembered on disk.

A record maps (kernel source, parameter types, options, the toolchain's identity, weft's own source) to the
kernel-cache key of its binary plus the launch metadata, together with the dependencies the frontend resolved
(``frontend/deps.py``). A later process uses the record only if every dependency still has the same
fingerprint; the IR is then lowered only if something asks for it (a backward pass, the CUDA renderer).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from . import __version__ as WEFT_VERSION
from . import config
from .frontend.deps import scope_key, source_text, verified_scopes
from .toolchain import cache
from .toolchain.compiler import find_compiler, host_target


@functools.cache
def _weft_stamp() -> str:
    """Changes whenever any of weft's Python files or native headers changes (size or modification time)."""
    found: list[tuple[str, int, int]] = []
    stack = [str(Path(__file__).resolve().parent)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__" and not e.name.startswith("."):
                        stack.append(e.path)
                elif e.name.endswith((".py", ".h")):
                    st = e.stat()
                    found.append((e.path, st.st_size, st.st_mtime_ns))
    found.sort()
    return hashlib.sha256(repr(found).encode()).hexdigest()


def record_key(kernel, types, debug: bool, block_dim, flags: str) -> str | None:
    text = source_text(kernel.func)
    if text is None:
        return None
    cc = find_compiler()
    opts = repr(sorted((k, repr(v)) for k, v in kernel.options.items()))
    # the stamp covers weft's sources and its native headers, so the binary the record names is still current
    return cache.make_key("spec", WEFT_VERSION, _weft_stamp(), scope_key(kernel.func), text, repr(types), opts,
                          str(debug), str(block_dim), str(config.max_unroll), cc.path, cc.version, flags,
                          host_target())


def _path(key: str) -> Path:
    return cache.root() / "spec" / key[:2] / f"{key}.json"


def load(kernel, key: str) -> dict | None:
    if not cache.trusted_file(_path(key)):  # only records no other user could have written
        return None
    try:
        record = json.loads(_path(key).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    try:  # a damaged record (wrong field types) counts as missing
        scopes = verified_scopes(kernel.func, [tuple(d) for d in record.get("deps", ())])
        if scopes is None:
            return None
        # generated code that shows a file path (assert and expect_* messages) is only right for the files it was
        # made from
        for scope, file in record.get("paths", {}).items():
            fn = scopes.get(scope)
            if fn is None or fn.__code__.co_filename != file:
                return None
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    return record


def save(key: str, record: dict, kernel=None, source: str = "") -> None:
    """Store ``record``; ``source`` (the generated code) tells which of the scopes' file paths it shows."""
    if kernel is not None:
        scopes = verified_scopes(kernel.func, [tuple(d) for d in record.get("deps", ())])
        if scopes is None:
            return
        paths = {scope: fn.__code__.co_filename for scope, fn in scopes.items()}
        record = {**record, "paths": {s: f for s, f in paths.items() if f in source}}
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        cache._atomic_write(path, json.dumps(record))
    except OSError:
        pass  # a record is an optimisation; failing to write one is not an error
