"""The kernel cache loads native code only from paths no other user can write (issue 13, item 5).

A library whose constructor writes a marker file is planted as a cache entry; weft must refuse it (CacheError) when
any directory between the cache root and the entry is world-writable or foreign-owned, and must delete and rebuild
an entry file that others could write. The control case (everything owned and private) shows the planted library
really would run if loaded.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .child import ROOT, run_child

KERNEL = """
import numpy as np, weft as wp

@wp.kernel
def trust_probe(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = float(i) * 3.0

a = wp.zeros(8, dtype=float)
try:
    wp.launch(trust_probe, dim=8, inputs=[a])
    print("ok", bool((a.numpy() == np.arange(8) * 3.0).all()))
except wp.CacheError as e:
    print("CacheError", str(e).replace(chr(10), " "))
"""

EVIL = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void planted(void) {
    FILE* f = fopen(getenv("WEFT_TEST_MARKER"), "w");
    if (f) { fputs("planted code ran", f); fclose(f); }
}
"""


@pytest.fixture(scope="module")
def evil_so(tmp_path_factory):
    d = tmp_path_factory.mktemp("evil")
    src = d / "evil.c"
    src.write_text(EVIL)
    cc = shutil.which("gcc") or shutil.which("cc") or shutil.which("g++")
    if cc is None:
        pytest.skip("no C compiler to build the planted library")
    subprocess.run([cc, "-shared", "-fPIC", "-x", "c", str(src), "-o", str(d / "evil.so")], check=True)
    return d / "evil.so"


@pytest.fixture(scope="module")
def primed(tmp_path_factory):
    """A private cache holding the probe kernel's entry (built once, copied for each test)."""
    cache = tmp_path_factory.mktemp("primed") / "cache"
    cache.mkdir(mode=0o700)
    env = {"WEFT_CACHE_DIR": str(cache), "WEFT_TEST_MARKER": str(cache.parent / "marker")}
    assert run_child(KERNEL, env=env).split() == ["ok", "True"]
    return cache


def _prime(tmp_path, primed) -> tuple[Path, dict]:
    """A copy of the primed cache; returns (the entry's .ref, env for children)."""
    cache = tmp_path / "cache"
    shutil.copytree(primed, cache, symlinks=True, ignore=shutil.ignore_patterns("pch", ".build-*"))
    env = {"WEFT_CACHE_DIR": str(cache), "WEFT_TEST_MARKER": str(tmp_path / "marker"),
           "WEFT_PCH": "0"}
    refs = list((cache / "cpu").glob("*/*.ref"))
    assert len(refs) == 1
    return refs[0], env


def _plant(ref: Path, evil: Path) -> Path:
    """Replace the entry's binary by ``evil`` under a self-consistent name (digest matches)."""
    data = evil.read_bytes()
    key = ref.name[:-len(".ref")]
    name = f"{key}-{hashlib.sha256(data).hexdigest()[:16]}.so"
    target = ref.parent / name
    target.write_bytes(data)
    os.chmod(target, 0o700)
    ref.write_text(name)
    return target


def _run_raw(env):
    full = {**os.environ, **env, "PYTHONPATH": str(ROOT)}
    script = Path(env["WEFT_CACHE_DIR"]).parent / "probe.py"
    script.write_text(KERNEL)
    return subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, env=full,
                          timeout=180)


def test_control_planted_library_runs_when_trusted(tmp_path, evil_so, primed):
    ref, env = _prime(tmp_path, primed)
    _plant(ref, evil_so)
    _run_raw(env)  # loads the planted library (which then lacks weft's entry points)
    assert (tmp_path / "marker").exists()


@pytest.mark.parametrize("where", ["entry_dir", "kind_dir"])
def test_world_writable_subdirectory_is_refused(tmp_path, evil_so, primed, where):
    ref, env = _prime(tmp_path, primed)
    _plant(ref, evil_so)
    os.chmod(ref.parent if where == "entry_dir" else ref.parent.parent, 0o777)
    out = run_child(KERNEL, env=env)
    assert out.startswith("CacheError") and "writable by other users" in out
    assert not (tmp_path / "marker").exists()


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="making a foreign-owned directory needs root")
def test_foreign_owned_subdirectory_is_refused(tmp_path, evil_so, primed):
    ref, env = _prime(tmp_path, primed)
    _plant(ref, evil_so)
    os.chown(ref.parent, 65534, 65534)
    out = run_child(KERNEL, env=env)
    assert out.startswith("CacheError") and "belongs to another user" in out
    assert not (tmp_path / "marker").exists()


def test_symlinked_subdirectory_is_refused(tmp_path, evil_so, primed):
    ref, env = _prime(tmp_path, primed)
    _plant(ref, evil_so)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(str(ref.parent), elsewhere)
    os.symlink(elsewhere, ref.parent)
    out = run_child(KERNEL, env=env)
    assert out.startswith("CacheError") and "symbolic link" in out
    assert not (tmp_path / "marker").exists()


def test_writable_entry_file_is_rebuilt(tmp_path, evil_so, primed):
    ref, env = _prime(tmp_path, primed)
    planted = _plant(ref, evil_so)
    os.chmod(planted, 0o666)
    assert run_child(KERNEL, env=env).split() == ["ok", "True"]
    assert not (tmp_path / "marker").exists()
    assert not planted.exists()
    mode = os.stat(ref.parent / ref.read_text().strip()).st_mode
    assert not mode & 0o022
