"""``wp.ModuleBuildOptions`` (weft/toolchain/preamble.py): preambles, include folders and build dependencies of a
module's kernels, applied to the CPU and CUDA sources (Warp's experimental ``extra_build_options`` module option)."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

import weft as wp
from weft.toolchain import nvrtc

MODULE = '''
import weft as wp

OPTS = wp.ModuleBuildOptions(
    extra_cpu_include_dirs=[{inc!r}], extra_cuda_include_dirs=[{inc!r}],
    extra_cpu_preamble='#include "mylib.h"', extra_cuda_preamble='#include "mylib.h"',
    extra_build_dependencies=[{dep!r}])
wp.set_module_options({{"extra_build_options": OPTS}})


@wp.func_native("return mylib_triple(x);")
def triple(x: float) -> float: ...


@wp.kernel
def apply_triple(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = triple(a[i])
'''


def _module(tmp_path, name, factor="3.0f"):
    inc = tmp_path / "inc"
    inc.mkdir(exist_ok=True)
    (inc / "mylib.h").write_text(f"WEFT_FN float mylib_triple(float x) {{ return {factor} * x; }}\n")
    dep = tmp_path / "table.dat"
    if not dep.exists():
        dep.write_text("version 1\n")
    path = tmp_path / f"{name}.py"
    path.write_text(MODULE.format(inc=str(inc), dep=str(dep)))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod, dep


def test_preamble_include_dirs_and_dependencies(tmp_path):
    mod, dep = _module(tmp_path, "weft_mbo_mod")
    a = wp.array(np.arange(4, dtype=np.float32))
    wp.launch(mod.apply_triple, 4, inputs=[a], device="cpu")
    np.testing.assert_allclose(a.numpy(), 3.0 * np.arange(4))
    spec = mod.apply_triple.compile()
    src = spec.source
    assert f'#include "{tmp_path / "inc" / "mylib.h"}"' in src  # resolved against the include folder
    assert src.index('#include "weft.h"') < src.index("mylib.h")  # after weft's header
    assert f"// build dependency {dep}: sha256" in src
    # editing a dependency changes the source (the kernel cache key): the kernel compiles again
    dep.write_text("version 2\n")
    mod2, _ = _module(tmp_path, "weft_mbo_mod2")
    src2 = mod2.apply_triple.compile().source

    def dep_line(text):
        return next(line for line in text.splitlines() if line.startswith("// build dependency"))
    assert dep_line(src2) != dep_line(src)  # the new contents hash


@pytest.mark.skipif(not nvrtc.is_available(), reason="NVRTC not installed")
def test_cuda_source_gets_the_cuda_preamble(tmp_path):
    from weft.cuda import launch as cuda_launch
    from weft.pipeline import Direction

    mod, _ = _module(tmp_path, "weft_mbo_cuda")
    spec = mod.apply_triple.compile()
    program = cuda_launch.cuda_program(spec, Direction.FORWARD)
    assert "mylib.h" in program.source
    nvrtc.compile_source(program.source, nvrtc.NvrtcOptions(arch=80, output="ptx"), "apply_triple")


def test_merged_and_validation(tmp_path):
    a = wp.ModuleBuildOptions(extra_cpu_include_dirs=[str(tmp_path)], extra_cpu_preamble="int a;")
    b = wp.ModuleBuildOptions(extra_cpu_include_dirs=[str(tmp_path)], extra_cpu_preamble="int b;\n",
                              extra_cuda_preamble="int c;")
    m = a.merged(b)
    assert m.extra_cpu_include_dirs == [str(tmp_path)] and m.extra_cpu_preamble == "int a;\nint b;\n"
    assert m.extra_cuda_preamble == "int c;" and a.extra_cpu_preamble == "int a;"  # inputs unchanged
    with pytest.raises(TypeError, match="extra_cpu_preamble must be a str"):
        wp.ModuleBuildOptions(extra_cpu_preamble=3)
    with pytest.raises(ValueError, match="absolute"):
        wp.ModuleBuildOptions(extra_cuda_include_dirs=["relative/dir"])
    with pytest.raises(ValueError, match="existing file"):
        wp.ModuleBuildOptions(extra_build_dependencies=[str(tmp_path / "missing.txt")])
    with pytest.raises(TypeError, match="ModuleBuildOptions instances"):
        a.merged("x")
