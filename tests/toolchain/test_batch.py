"""Batched compiles (weft/toolchain/batch.py): a wave of cold kernels in one translation unit, each kernel still its
own library and cache entry."""

from __future__ import annotations

import ctypes
import importlib.util
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import weft as wp
from weft import ahead, pipeline
from weft.toolchain import batch, cache
from weft.toolchain.compiler import find_compiler
from weft.toolchain.options import lean_link

pytestmark = pytest.mark.skipif(not lean_link(find_compiler().is_clang), reason="batches need GCC on Linux")

MODULE = """
import weft as wp

@wp.kernel
def add(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + {value}

@wp.kernel
def scale(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = a[i] * s + {other}

@wp.kernel
def shift(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + wp.vec3(b[i], 2.0 * b[i], {other})

@wp.kernel
def broken(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * undefined_name
"""


def _load(tmp_path, name: str, value: float, other: float | None = None, text: str = MODULE):
    """The module with new constants: ``value`` in ``add``, ``other`` (default ``value``) in its siblings (values no
    other test uses: cold compiles, the cache being keyed on content)."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text.format(value=value, other=value if other is None else other)))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def batches(monkeypatch):
    """Compile ahead and batching on; records every batch run."""
    monkeypatch.setattr(wp.config, "compile_ahead", True)
    monkeypatch.setattr(wp.config, "batch_compile", True)
    monkeypatch.setattr(ahead, "_tile_block_dim", 0)
    runs = []
    real = batch.Batch.run

    def run(self):
        real(self)
        runs.append(self)

    monkeypatch.setattr(batch.Batch, "run", run)
    return runs


def _key(kernel) -> str:
    (spec,) = kernel._specs.values()
    return kernel.cpp_key(spec)


def test_wave_compiles_as_one_unit_with_an_entry_per_kernel(tmp_path, batches):
    mod = _load(tmp_path, "weft_batch_module_a", 1.375)  # a value no other test uses: a cold compile
    a = wp.array(np.arange(4, dtype=np.float32), dtype=float)
    wp.launch(mod.add, dim=4, inputs=[a])
    assert len(batches) == 1 and not batches[0].error
    assert {m.name for m in batches[0].members} == {"add", "scale", "shift"}
    assert sorted(batches[0].published) == sorted(m.key for m in batches[0].members)
    for k in (mod.add, mod.scale, mod.shift):  # each kernel: its own cache entry and library, usual entry points
        path = cache.lookup("cpu", _key(k), "so")
        assert path is not None
        lib = ctypes.CDLL(str(path))
        assert hasattr(lib, "weft_fwd") and hasattr(lib, "weft_errors") and hasattr(lib, "weft_args_size")
        assert not any(hasattr(lib, f"weft_fwd__m{i}") for i in range(3))
    wp.launch(mod.scale, dim=4, inputs=[a, 2.0])
    b = wp.array(np.array([1.0, -1.0], dtype=np.float32), dtype=float)
    v = wp.zeros(2, dtype=wp.vec3)
    wp.launch(mod.shift, dim=2, inputs=[v, b])
    np.testing.assert_allclose(a.numpy(), (np.arange(4) + 1.375) * 2.0 + 1.375)
    np.testing.assert_allclose(v.numpy(), [[1.0, 2.0, 1.375], [-1.0, -2.0, 1.375]])
    assert len(batches) == 1  # nothing else compiled
    # the kernel that does not lower was left out; its launch reports the user's line
    with pytest.raises(wp.CompileError, match="undefined_name") as info:
        wp.launch(mod.broken, dim=4, inputs=[a])
    assert "weft_batch_module_a.py" in str(info.value) and ":22:" in str(info.value)


def test_edit_one_kernel_recompiles_it_alone(tmp_path, batches):
    mod = _load(tmp_path, "weft_batch_module_b", 3.625, 7.25)
    a = wp.zeros(4, dtype=float)
    wp.launch(mod.add, dim=4, inputs=[a])
    assert len(batches) == 1
    keys = {k: _key(k) for k in (mod.scale, mod.shift)}
    edited = _load(tmp_path, "weft_batch_module_b2", 4.625, 7.25)  # `add` edited, its siblings unchanged
    wp.launch(edited.add, dim=4, inputs=[a])
    assert len(batches) == 1  # the edited kernel compiled alone: its siblings were cached
    assert {k: _key(getattr(edited, k.__name__)) for k in keys} == {k: keys[k] for k in keys}
    np.testing.assert_allclose(a.numpy(), 3.625 + 4.625)


def _generated(kernel, types) -> str:
    spec = kernel.specialize(types)
    return spec.source


def test_failing_member_leaves_the_others_published(tmp_path, monkeypatch):
    monkeypatch.setattr(wp.config, "batch_compile", True)
    mod = _load(tmp_path, "weft_batch_module_c", 5.875)
    monkeypatch.setattr(wp.config, "compile_ahead", False)
    good = [_generated(mod.add, tuple(mod.add.annotations())), _generated(mod.scale, tuple(mod.scale.annotations()))]
    # distinct sources the cache does not hold: the kernels' own are cached by the specialisations above
    good = [s + f"\n// batch test {i} {tmp_path.name}\n" for i, s in enumerate(good)]
    bad = good[0].replace("batch test 0", "batch test bad")
    bad = bad.replace("return weft::kEntryDone;", "return weft::kEntryDone + no_such_name;", 1)
    options = pipeline.cpu_options(False)
    members = [batch.Member(n, s, pipeline.built_key(s, False)) for n, s in (("g0", good[0]), ("bad", bad),
                                                                            ("g1", good[1]))]
    (b,) = batch.plan(members, options, 1)
    b.run()
    assert "no_such_name" in b.error and not b.published  # the unit failed: nothing published
    assert cache.lookup("cpu", members[0].key, "so") is None
    # each compiles alone at its launch: the good ones work, the bad one is reported as weft's own error
    lib = pipeline.build(good[0], "g0", False)
    assert hasattr(lib, "weft_fwd")
    with pytest.raises(wp.Error, match="rejected the code weft generated for 'bad'"):
        pipeline.build(bad, "bad", False)


def test_batches_are_shared_out_by_estimated_compile_time(tmp_path, monkeypatch):
    """``plan`` shares members out by weight x balance (``ahead._member``: less for a kernel that branches or loops,
    which g++ compiles faster per character than a straight-line body it vectorises); how many batches to make still
    follows the weights alone."""
    monkeypatch.setattr(wp.config, "batch_compile", True)
    monkeypatch.setattr(wp.config, "compile_ahead", False)
    text = MODULE.replace("@wp.kernel\ndef broken", "def broken") + """
@wp.kernel
def clamp(a: wp.array(dtype=float)):
    i = wp.tid()
    if a[i] > {other}:
        a[i] = {other}
"""
    mod = _load(tmp_path, "weft_batch_module_balance", 6.625, text=text)
    straight = ahead._member("add", mod.add.specialize(tuple(mod.add.annotations())), "k0")
    branchy = ahead._member("clamp", mod.clamp.specialize(tuple(mod.clamp.annotations())), "k1")
    assert straight.balance == 1.0 and branchy.balance == ahead.BRANCHY_BALANCE
    base = _generated(mod.add, tuple(mod.add.annotations()))
    # five members of one length: three straight-line, the last two branchy (distinct sources the cache lacks)
    sources = [base + f"\n// balance test {i} {tmp_path.name}\n" for i in range(5)]
    members = [batch.Member(f"m{i}", s, pipeline.built_key(s, False), balance=1.0 if i < 3 else 0.4)
               for i, s in enumerate(sources)]
    monkeypatch.setattr(batch, "MIN_BATCH_WEIGHT", len(sources[0]))
    batches = batch.plan(members, pipeline.cpu_options(False), 2)
    try:
        # by weight alone: m0 m2 m4 / m1 m3; by estimated time: m0 m2 (2.0) / m1 m3 m4 (1.8)
        assert sorted([m.name for m in b.members] for b in batches) == [["m0", "m2"], ["m1", "m3", "m4"]]
    finally:
        for b in batches:
            b.release()


CONCURRENT = """
import sys
import numpy as np
import weft as wp
wp.config.compile_ahead = True
sys.path.insert(0, sys.argv[1])
import weft_batch_concurrent as mod
a = wp.array(np.arange(4, dtype=np.float32), dtype=float)
wp.launch(mod.add, dim=4, inputs=[a])
wp.launch(mod.scale, dim=4, inputs=[a, 2.0])
print(a.numpy().tolist())
"""


def test_concurrent_processes_share_the_cache(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    text = MODULE.replace("@wp.kernel\ndef broken", "def broken")  # two processes, three kernels, one cache
    (src / "weft_batch_concurrent.py").write_text(textwrap.dedent(text.format(value=6.125, other=0.0)))
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir(mode=0o700)
    env = {**__import__("os").environ, "WEFT_CACHE_DIR": str(cache_dir), "WEFT_COMPILE_AHEAD": "1",
           "PYTHONPATH": str(__import__("pathlib").Path(wp.__file__).parent.parent)}
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT, str(src)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        np.testing.assert_allclose(eval(out.strip().splitlines()[-1]), (np.arange(4) + 6.125) * 2.0)
    refs = sorted(cache_dir.glob("cpu/*/*.ref"))
    assert len(refs) == 3  # one entry per kernel, whoever built it
    assert not list(cache_dir.glob(".build-*"))  # no build directory left behind


def test_fft_libraries_match_the_native_plan():
    """The runtime libraries a batch builds for a tile FFT length are those fft.h's plan calls (radix_bits)."""
    from weft.toolchain import runtime
    from weft.toolchain.build import build_cpu

    source = ('// weft test: radix_bits\n#include "weft.h"\n'
              'extern "C" WEFT_EXPORT int weft_test_radix_bits(int n) { return weft::fft::radix_bits(n); }\n')
    lib = build_cpu(source, runtime.options(), "radix_bits")
    lib.weft_test_radix_bits.argtypes = [ctypes.c_int]
    for n in range(2, 1100):
        bits = lib.weft_test_radix_bits(n)
        native = {str(r) for r in (2, 3, 4, 5, 8) if bits & (1 << r)} | ({"g"} if bits & 1 else set())
        for scalar in ("float", "double"):
            libs = runtime.fft_libraries(scalar, n)
            assert {x.radix for x in libs} == native, n
            assert all(x.scalar == scalar for x in libs)


FFT_MODULE = """
import weft as wp

@wp.kernel
def rows_fft(x: wp.array2d(dtype=wp.vec2d), y: wp.array2d(dtype=wp.vec2d)):
    i = wp.tid()
    a = wp.tile_load(x, shape=(1, 20), offset=(i, 0))
    wp.tile_fft(a)
    wp.tile_store(y, a * {value}, offset=(i, 0))
"""


def test_tile_fft_kernel_batches_with_its_runtime_libraries(tmp_path, batches, monkeypatch):
    from weft.toolchain import runtime

    for lib in runtime.fft_libraries("double", 20):  # length 20: radix 4 and 5 passes, double precision
        monkeypatch.delitem(runtime._loaded, lib.name, raising=False)
    cache_dir = tmp_path / "cache"  # a cache and a runtime library directory without the libraries
    cache_dir.mkdir(mode=0o700)
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(cache_dir))
    monkeypatch.setattr(wp.config, "runtime_cache_dir", str(tmp_path / "runtime"))
    mod = _load(tmp_path, "weft_batch_module_fft", 1.5, text=FFT_MODULE)
    x = np.random.default_rng(1).standard_normal((3, 20, 2))
    xa = wp.array(x, dtype=wp.vec2d)
    y = wp.zeros((3, 20), dtype=wp.vec2d)
    wp.launch_tiled(mod.rows_fft, dim=[3], inputs=[xa, y], block_dim=32)
    (b,) = batches
    assert sorted(m.name for m in b.members) == ["rows_fft", "weft_runtime_fft_f64_r4", "weft_runtime_fft_f64_r5"]
    assert len(b.published) == 3
    assert len(list((tmp_path / "runtime" / "runtime").rglob("*.so"))) == 2  # the libraries: in the runtime directory
    assert len(list((cache_dir / "cpu").rglob("*.so"))) == 1
    ref = np.fft.fft(x[..., 0] + 1j * x[..., 1], axis=1) * 1.5
    np.testing.assert_allclose(y.numpy()[..., 0] + 1j * y.numpy()[..., 1], ref, rtol=1e-12, atol=1e-12)


LOCAL_MODULE = """
import functools
import weft as wp

@functools.cache
def make(n):
    @wp.kernel
    def fill(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = float(n) + {value}

    @wp.kernel
    def double(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * 2.0 + float(n)

    return fill, double

@wp.kernel
def top(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] - {value}
"""


def test_kernels_made_inside_functions_join_the_wave(tmp_path, batches):
    mod = _load(tmp_path, "weft_batch_module_local", 2.625, text=LOCAL_MODULE)
    fill, double = mod.make(3)
    a = wp.zeros(4, dtype=float)
    wp.launch(mod.top, dim=4, inputs=[a])
    (b,) = batches
    assert sorted(m.name for m in b.members) == ["double", "fill", "top"]
    wp.launch(fill, dim=4, inputs=[a])
    wp.launch(double, dim=4, inputs=[a])
    np.testing.assert_allclose(a.numpy(), (3 + 2.625) * 2 + 3)
    assert len(batches) == 1  # nothing else compiled


GRAD_MODULE = """
import weft as wp

@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i] * {value}

@wp.kernel
def total(y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.sin(y[i]))
"""


def test_first_backward_compiles_its_adjoints_as_one_unit(tmp_path, batches):
    mod = _load(tmp_path, "weft_batch_module_grad", 0.75, text=GRAD_MODULE)
    x0 = np.linspace(0.1, 1.0, 5).astype(np.float32)
    x = wp.array(x0, dtype=float, requires_grad=True)
    y = wp.zeros(5, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(mod.square, dim=5, inputs=[x, y])
        wp.launch(mod.total, dim=5, inputs=[y, loss])
    forward = len(batches)
    tape.backward(loss)
    assert len(batches) == forward + 1
    assert sorted(m.name for m in batches[-1].members) == ["square_adj", "total_adj"]
    assert len(batches[-1].published) == 2
    # d/dx sum(sin(0.75 x^2)) = cos(0.75 x^2) * 1.5 x
    np.testing.assert_allclose(x.grad.numpy(), np.cos(0.75 * x0 ** 2) * 1.5 * x0, rtol=1e-5)
    tape.zero()
    tape.backward(loss)  # compiled: no more batches
    assert len(batches) == forward + 1


def test_load_module_compiles_the_cold_kernels_as_one_unit(tmp_path, batches, monkeypatch):
    monkeypatch.setattr(wp.config, "compile_ahead", False)  # wp.load_module batches by itself
    text = MODULE.replace("@wp.kernel\ndef broken", "def broken")  # load_module would raise its error
    mod = _load(tmp_path, "weft_batch_module_load", 8.375, text=text)
    wp.load_module(mod)
    assert len(batches) == 1 and {m.name for m in batches[0].members} == {"add", "scale", "shift"}
    assert all(k._specs and next(iter(k._specs.values())).fwd is not None for k in (mod.add, mod.scale, mod.shift))
    a = wp.zeros(3, dtype=float)
    wp.launch(mod.add, dim=3, inputs=[a])
    np.testing.assert_allclose(a.numpy(), 8.375)


def test_wave_split_over_cores_runs_every_batch(tmp_path, batches, monkeypatch):
    import os

    monkeypatch.setattr(batch, "MIN_BATCH_WEIGHT", 1)  # split even a small wave
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    text = MODULE.replace("@wp.kernel\ndef broken", "def broken") + """
@wp.kernel
def halve(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 0.5 + {other}
"""
    mod = _load(tmp_path, "weft_batch_module_split", 9.125, text=text)
    a = wp.zeros(4, dtype=float)
    wp.launch(mod.add, dim=4, inputs=[a])  # its batch on this thread, the other on a compile-ahead worker
    wp.launch(mod.halve, dim=4, inputs=[a])  # waits for the other batch if it is still compiling
    wp.launch(mod.scale, dim=4, inputs=[a, 2.0])
    ahead.wait(120)
    assert len(batches) == 2 and all(len(b.published) == 2 for b in batches)
    assert {m.name for b in batches for m in b.members} == {"add", "scale", "shift", "halve"}
    np.testing.assert_allclose(a.numpy(), (9.125 * 0.5 + 9.125) * 2.0 + 9.125)


def test_direct_link_matches_the_driver(tmp_path):
    """A member's library linked by the linker itself (batch._linker, from the driver's -### output) is the one the
    compiler driver links, byte for byte."""
    import subprocess as sp

    options = pipeline.cpu_options(False)
    cc = find_compiler()
    link = batch._linker(cc.path, tuple(options.flags(cc.is_clang)), tuple(options.libs(cc.is_clang)))
    assert link is not None
    src = tmp_path / "u.cpp"
    src.write_text('extern "C" __attribute__((visibility("default"))) int f__m0(int x) { return 3 * x; }\n'
                   'extern "C" __attribute__((visibility("default"))) int f__m1(int x) { return 5 * x; }\n')
    obj = tmp_path / "u.o"
    flags = [f for f in options.flags(cc.is_clang) if f != "-shared"]
    assert sp.run([cc.path, *flags, *batch._SECTIONS, "-c", str(src), "-o", str(obj)]).returncode == 0
    script = tmp_path / "m.map"
    script.write_text("{ global: f; local: *; };\n")
    direct, driven = tmp_path / "d.so", tmp_path / "g.so"
    assert sp.run(link.command(obj, direct, script, ["--defsym=f=f__m1"])).returncode == 0
    assert sp.run([cc.path, *options.flags(cc.is_clang), str(obj), "-Wl,--defsym=f=f__m1", *batch._MEMBER_LINK,
                   f"-Wl,--version-script={script}", *options.libs(cc.is_clang), "-o", str(driven)]).returncode == 0
    assert direct.read_bytes() == driven.read_bytes()
    lib = ctypes.CDLL(str(direct))
    assert lib.f(2) == 10 and not hasattr(lib, "f__m0")
