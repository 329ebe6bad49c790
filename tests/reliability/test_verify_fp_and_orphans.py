"""verify_fp sees NaN/Inf written into arrays held in structs; orphaned .build-* directories of killed compiles are
removed by the next build, never those of a live build (issue 13, item 7)."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest

import weft as wp
from weft.toolchain import cache


@wp.struct
class State:
    x: wp.array(dtype=float)
    scale: float


@wp.struct
class Outer:
    inner: State
    y: wp.array(dtype=wp.vec3)


@wp.kernel
def write_through_struct(st: State):
    i = wp.tid()
    st.x[i] = 1.0 / st.scale


@wp.kernel
def write_nested(o: Outer):
    i = wp.tid()
    o.y[i] = wp.vec3(wp.log(o.inner.scale), 0.0, 0.0)


@wp.kernel
def read_only_struct(st: State, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.where(st.x[i] > 0.0, 2.0, 1.0)


@pytest.fixture
def verify_fp():
    old = wp.config.verify_fp
    wp.config.verify_fp = True
    yield
    wp.config.verify_fp = old


def test_verify_fp_struct_array(verify_fp):
    st = State(x=wp.zeros(4, dtype=float), scale=0.0)
    with pytest.raises(wp.RuntimeError_, match="non-finite value \\((nan|inf|-inf)\\) into argument .st.x. at index \\(0,\\)"):
        wp.launch(write_through_struct, dim=4, inputs=[st])
    st.scale = 2.0
    wp.launch(write_through_struct, dim=4, inputs=[st])
    np.testing.assert_array_equal(st.x.numpy(), 0.5)


def test_verify_fp_nested_struct_array(verify_fp):
    o = Outer(inner=State(x=wp.zeros(2, dtype=float), scale=-1.0), y=wp.zeros(3, dtype=wp.vec3))
    with pytest.raises(wp.RuntimeError_, match="argument 'o.y'"):
        wp.launch(write_nested, dim=3, inputs=[o])


def test_verify_fp_ignores_struct_arrays_only_read(verify_fp):
    st = State(x=wp.array(np.array([np.nan, 1.0], dtype=np.float32)), scale=1.0)
    out = wp.zeros(2, dtype=float)
    wp.launch(read_only_struct, dim=1, inputs=[st, out])  # NaN in an input is not the kernel's doing


def _orphan(root, name, age_s=0.0):
    d = root / name
    d.mkdir(mode=0o700)
    (d / "module.cpp").write_text("// partial")
    if age_s:
        t = time.time() - age_s
        os.utime(d, (t, t))
    return d


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_sweep_orphans_only_removes_dead_or_stale(tmp_path):
    old = wp.config.kernel_cache_dir
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    wp.config.kernel_cache_dir = str(root)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        host = cache._HOST
        dead = _orphan(root, f".build-aaaaaaaa-{host}-{_dead_pid()}-x1")
        mine = _orphan(root, f".build-bbbbbbbb-{host}-{os.getpid()}-x2")
        running = _orphan(root, f".build-cccccccc-{host}-{live.pid}-x3")
        other_host = _orphan(root, f".build-dddddddd-0000beef-{_dead_pid()}-x4")
        legacy_fresh = _orphan(root, ".build-eeeeeeee-x5")
        legacy_stale = _orphan(root, ".build-ffffffff-x6", age_s=2 * 3600)
        stale_running = _orphan(root, f".build-abababab-{host}-{live.pid}-x7", age_s=2 * 3600)
        other = _orphan(root, "not-a-build-dir")
        removed = set(cache.sweep_orphans(now=time.time()))
        assert removed == {dead, legacy_stale, stale_running}
        for d in (mine, running, other_host, legacy_fresh, other):
            assert d.exists()
    finally:
        live.kill()
        live.wait()
        wp.config.kernel_cache_dir = old


def test_next_build_removes_orphan_of_killed_compile(tmp_path):
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    env = {**os.environ, "WEFT_CACHE_DIR": str(root), "PYTHONPATH": str(cache.native_dir().parents[1])}
    # a process that dies in the middle of a build (its build directory stays behind)
    code = ("import os, tempfile; from weft.toolchain import cache; "
            "d = tempfile.mkdtemp(prefix=f'.build-12345678-{cache._HOST}-{os.getpid()}-', dir=cache.root()); "
            "open(os.path.join(d, 'module.cpp'), 'w').write('//'); os._exit(9)")
    subprocess.run([sys.executable, "-c", code], env=env, check=False, timeout=60)
    assert len(list(root.glob(".build-*"))) == 1
    old = wp.config.kernel_cache_dir
    wp.config.kernel_cache_dir = str(root)
    try:
        @wp.kernel
        def after_orphan(a: wp.array(dtype=float)):
            i = wp.tid()
            a[i] = 4.5

        a = wp.zeros(2, dtype=float)
        wp.launch(after_orphan, dim=2, inputs=[a])
        assert list(root.glob(".build-*")) == []
        np.testing.assert_array_equal(a.numpy(), 4.5)
    finally:
        wp.config.kernel_cache_dir = old
