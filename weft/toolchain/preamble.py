"""``wp.ModuleBuildOptions``: extra build inputs of a module's kernels (Warp's experimental ``extra_build_options``
module option), applied to the rendered source of each kernel module.

- ``extra_cpu_preamble`` / ``extra_cuda_preamble``: C++ inserted after weft's header (``#include "weft.h"``) and
  before the generated code, in CPU / CUDA modules, so it may use weft's types and define functions the kernels
  call through ``wp.func_native`` or ``build_experimental.add_builtin``.
- ``extra_cpu_include_dirs`` / ``extra_cuda_include_dirs``: the preamble's ``#include "..."`` / ``<...>`` lines
  that name a file found in one of these folders (searched in order) include it by its absolute path. (weft compiles
  the kernels of a wave together, with one set of compiler flags, so the folders act on the preamble's includes
  rather than as ``-I`` flags; a header's own includes resolve relative to the header, as usual.)
- ``extra_build_dependencies``: files whose contents are hashed into the module source (a comment line per file):
  editing one makes the kernels compile again, since the source is the kernel cache key.

Everything lands in the source text, so the kernel cache, compile-ahead batches and warm starts need nothing else.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence

_HEADER = '#include "weft.h"\n'
_INCLUDE = re.compile(r'^(\s*#\s*include\s*)(["<])([^">]+)[">]', re.MULTILINE)


def _paths(value, what: str, want_dir: bool) -> list:
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)) or not isinstance(value, Sequence):
        raise TypeError(f"{what} must be a sequence of paths, got {type(value).__name__}")
    out = []
    for p in value:
        path = os.fspath(p)
        if not os.path.isabs(path):
            raise ValueError(f"{what}: {path!r} is not an absolute path")
        if want_dir and not os.path.isdir(path):
            raise ValueError(f"{what}: {path!r} is not an existing directory")
        if not want_dir and not os.path.isfile(path):
            raise ValueError(f"{what}: {path!r} is not an existing file")
        out.append(p)
    return out


class ModuleBuildOptions:
    """Extra build inputs for a module's kernels: ``wp.set_module_options({"extra_build_options": opts})`` (set it
    before the kernels are defined, as weft's module options are read when a kernel is made)."""

    def __init__(self, *, extra_cuda_include_dirs=None, extra_cpu_include_dirs=None, extra_cuda_preamble: str = "",
                 extra_cpu_preamble: str = "", extra_build_dependencies=None):
        if not isinstance(extra_cuda_preamble, str):
            raise TypeError(f"extra_cuda_preamble must be a str, got {type(extra_cuda_preamble).__name__}")
        if not isinstance(extra_cpu_preamble, str):
            raise TypeError(f"extra_cpu_preamble must be a str, got {type(extra_cpu_preamble).__name__}")
        self.extra_cuda_include_dirs = _paths(extra_cuda_include_dirs, "extra_cuda_include_dirs", True)
        self.extra_cpu_include_dirs = _paths(extra_cpu_include_dirs, "extra_cpu_include_dirs", True)
        self.extra_cuda_preamble = extra_cuda_preamble
        self.extra_cpu_preamble = extra_cpu_preamble
        self.extra_build_dependencies = _paths(extra_build_dependencies, "extra_build_dependencies", False)

    def merged(self, *others: ModuleBuildOptions) -> ModuleBuildOptions:
        """A new set with ``others`` appended: folders and dependencies keep their first occurrence, preambles are
        joined in order with a newline between non-empty ones."""
        def unique(lists):
            seen, out = set(), []
            for lst in lists:
                for p in lst:
                    if os.fspath(p) not in seen:
                        seen.add(os.fspath(p))
                        out.append(p)
            return out

        def join(texts):
            out = ""
            for t in texts:
                if t:
                    out += ("\n" if out and not out.endswith("\n") else "") + t
            return out

        for other in others:
            if not isinstance(other, ModuleBuildOptions):
                raise TypeError(f"others must contain ModuleBuildOptions instances, got {type(other).__name__}")
        every = (self, *others)
        return ModuleBuildOptions(
            extra_cuda_include_dirs=unique(o.extra_cuda_include_dirs for o in every),
            extra_cpu_include_dirs=unique(o.extra_cpu_include_dirs for o in every),
            extra_cuda_preamble=join([o.extra_cuda_preamble for o in every]),
            extra_cpu_preamble=join([o.extra_cpu_preamble for o in every]),
            extra_build_dependencies=unique(o.extra_build_dependencies for o in every))

    def __eq__(self, other) -> bool:
        return isinstance(other, ModuleBuildOptions) and vars(self) == vars(other)

    __hash__ = None

    def __repr__(self) -> str:
        # the dependencies' contents are part of it: weft's warm-start records key on the options' repr
        fields = [f"{k}={v!r}" for k, v in vars(self).items() if v]
        fields += [f"sha256({os.fspath(d)})={_digest(d)}" for d in self.extra_build_dependencies]
        return f"ModuleBuildOptions({', '.join(fields)})"


def _digest(path) -> str:
    try:
        with open(os.fspath(path), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return "missing"


def _resolve_includes(preamble: str, dirs: list) -> str:
    if not dirs:
        return preamble

    def sub(m):
        for d in dirs:
            candidate = os.path.join(os.fspath(d), m.group(3))
            if os.path.isfile(candidate):
                return f'{m.group(1)}"{candidate}"'
        return m.group(0)
    return _INCLUDE.sub(sub, preamble)


def apply(source: str, options: dict, cuda: bool) -> str:
    """``source`` with the module's ``extra_build_options`` applied (unchanged without them)."""
    opts = options.get("extra_build_options") if options else None
    if opts is None:
        return source
    if not isinstance(opts, ModuleBuildOptions):
        raise TypeError(f"the extra_build_options module option must be a wp.ModuleBuildOptions, got "
                        f"{type(opts).__name__}")
    preamble = opts.extra_cuda_preamble if cuda else opts.extra_cpu_preamble
    dirs = opts.extra_cuda_include_dirs if cuda else opts.extra_cpu_include_dirs
    lines = []
    for dep in opts.extra_build_dependencies:
        lines.append(f"// build dependency {os.fspath(dep)}: sha256 {_digest(dep)}\n")
    if preamble:
        text = _resolve_includes(preamble, dirs)
        lines.append(text if text.endswith("\n") else text + "\n")
    if not lines:
        return source
    extra = "".join(lines)
    at = source.find(_HEADER)
    if at < 0:
        return extra + source
    at += len(_HEADER)
    return source[:at] + extra + source[at:]
