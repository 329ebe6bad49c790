"""``wp.build_experimental.add_builtin``: an external C++ function (from a ``wp.ModuleBuildOptions`` preamble) as the
kernel builtin ``wp.<name>``, checked against NumPy on the CPU and compiled for CUDA by NVRTC."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

import weft as wp
from weft.toolchain import nvrtc

MODULE = '''
import weft as wp

wp.set_module_options({"extra_build_options": wp.ModuleBuildOptions(
    extra_cpu_preamble=PRE, extra_cuda_preamble=PRE)})


@wp.kernel
def use(a: wp.array(dtype=float), b: wp.array(dtype=wp.int32)):
    i = wp.tid()
    a[i] = wp.ext_axpb(a[i], 3.0, 1.0)
    b[i] = wp.ext_twice(b[i])
'''
PRE = ("namespace wp { WEFT_FN float ext_axpb(float x, float a, float b) { return a * x + b; } }\n"
       "namespace mylib { WEFT_FN int twice(int v) { return 2 * v; } }\n")


@pytest.fixture(autouse=True)
def _forget_registrations():
    """Remove the builtins a test registers (from weft's namespace and __all__) when it ends."""
    names, all_names = set(vars(wp)), list(wp.__all__)
    registered = dict(wp.build_experimental._registered)
    yield
    for n in set(vars(wp)) - names:
        delattr(wp, n)
    wp.__all__[:] = all_names
    wp.build_experimental._registered.clear()
    wp.build_experimental._registered.update(registered)


def test_add_builtin(tmp_path):
    f = wp.build_experimental.add_builtin("ext_axpb", {"x": float, "a": float, "b": float}, float)
    g = wp.build_experimental.add_builtin("ext_twice", {"v": wp.int32}, wp.int32, native_name="mylib::twice")
    assert wp.ext_axpb is f and wp.ext_twice is g
    assert wp.build_experimental.add_builtin("ext_axpb", {"x": float, "a": float, "b": float}, float) is f
    path = tmp_path / "weft_ext_builtin_mod.py"
    path.write_text(f"PRE = {PRE!r}\n" + MODULE)
    spec = importlib.util.spec_from_file_location("weft_ext_builtin_mod", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["weft_ext_builtin_mod"] = mod
    spec.loader.exec_module(mod)
    a = wp.array(np.arange(4, dtype=np.float32))
    b = wp.array(np.arange(4, dtype=np.int32))
    wp.launch(mod.use, 4, inputs=[a, b], device="cpu")
    np.testing.assert_allclose(a.numpy(), 3.0 * np.arange(4) + 1.0)
    np.testing.assert_array_equal(b.numpy(), 2 * np.arange(4))
    with pytest.raises(RuntimeError, match="kernels only"):
        wp.ext_axpb(1.0, 2.0, 3.0)
    if nvrtc.is_available():
        from weft.cuda import launch as cuda_launch
        from weft.pipeline import Direction

        program = cuda_launch.cuda_program(mod.use.compile(), Direction.FORWARD)
        nvrtc.compile_source(program.source, nvrtc.NvrtcOptions(arch=80, output="ptx"), "use")


def test_add_builtin_errors():
    with pytest.raises(ValueError, match="identifier"):
        wp.build_experimental.add_builtin("not a name")
    with pytest.raises(TypeError, match="mapping"):
        wp.build_experimental.add_builtin("ext_bad", [("x", float)])
    with pytest.raises(ValueError, match="qualified C\\+\\+ identifier"):
        wp.build_experimental.add_builtin("ext_bad", {"x": float}, native_name="a b")
    with pytest.raises(ValueError, match="already exists"):
        wp.build_experimental.add_builtin("sin", {"x": float}, float)
    wp.build_experimental.add_builtin("ext_once", {"x": float}, float)
    with pytest.raises(RuntimeError, match="conflicting"):
        wp.build_experimental.add_builtin("ext_once", {"x": wp.float64}, wp.float64)
