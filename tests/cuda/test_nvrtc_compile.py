"""The CUDA backend without a GPU: a corpus of kernels rendered as CUDA and compiled by NVRTC for sm_80 and sm_90.

(Every other kernel of the suite is compiled the same way by the ``nvrtc_check`` plugin.)
"""

from __future__ import annotations

import pytest

import weft as wp
from weft.toolchain import nvrtc

pytestmark = pytest.mark.skipif(not nvrtc.is_available(), reason="NVRTC not installed (pip install -e '.[cuda]')")

ARCHS = (80, 90)


def _lower(name: str, debug: bool):
    from cuda_corpus import CASES

    kernel, make_args, _ = CASES[name]
    return kernel._lower(kernel.infer_types(make_args("cpu")), debug)


def _case_names():
    from cuda_corpus import CASES

    return list(CASES)


@pytest.mark.parametrize("debug", [False, True], ids=["release", "debug"])
@pytest.mark.parametrize("name", _case_names())
def test_corpus_kernel_compiles(name, debug):
    from weft import pipeline
    from weft.cuda.launch import args_bytes
    from weft.pipeline import Direction, Target

    spec = _lower(name, debug)
    source = pipeline.render_module(spec.fn, spec.kernel.__name__, debug,
                                    Target.CUDA, Direction.FORWARD, args_bytes(spec)).source
    for arch in ARCHS:
        image = nvrtc.build_cuda(source, nvrtc.NvrtcOptions(arch=arch, debug=debug), spec.kernel.__name__)
        assert image[:4] == b"\x7fELF"  # a CUBIN


@pytest.mark.parametrize("name", ["saxpy", "vectors", "matrices", "quats", "structs", "loops", "views", "noise", "native",
                                  "array_at", "fabric"])
def test_corpus_adjoint_compiles(name):
    from weft import pipeline
    from weft.pipeline import Direction, Target

    spec = _lower(name, False)
    source = pipeline.render_module(pipeline.differentiate(spec.fn), spec.kernel.__name__, False,
                                    Target.CUDA, Direction.ADJOINT).source
    assert 'extern "C" __global__ void weft_bwd(' in source
    for arch in ARCHS:
        nvrtc.build_cuda(source, nvrtc.NvrtcOptions(arch=arch), spec.kernel.__name__)


def test_cuda_source_is_device_code():
    from weft import pipeline
    from weft.pipeline import Direction, Target

    spec = _lower("structs", True)
    source = pipeline.render_module(spec.fn, "k_structs", True, Target.CUDA, Direction.FORWARD).source
    assert 'extern "C" __global__ void weft_fwd(const Args args, const weft::Grid grid)' in source
    assert "__device__ __forceinline__ void fwd_body" in source
    assert "omp" not in source and "weft_args_size" not in source  # no host entry points
    assert "static inline" not in source  # every function the module defines is callable on the device
    assert "checked_access(" in source  # debug bounds checks, out of line


def test_ptx_output_and_arch_selection():
    from weft import pipeline
    from weft.pipeline import Direction, Target

    spec = _lower("saxpy", False)
    source = pipeline.render_module(spec.fn, "k_saxpy", False, Target.CUDA, Direction.FORWARD).source
    ptx = nvrtc.build_cuda(source, nvrtc.NvrtcOptions(arch=90, output="ptx"), "k")
    assert b".entry weft_fwd" in ptx and b".target sm_90" in ptx
    assert nvrtc.target_arch(90) == 90
    assert nvrtc.target_arch(91) == 90  # a newer GPU of the same family runs the newest CUBIN this NVRTC makes


def test_cache_key_includes_arch_and_nvrtc_version():
    source = 'extern "C" __global__ void f() {}\n'
    k80 = nvrtc.cuda_key(source, nvrtc.NvrtcOptions(arch=80))
    k90 = nvrtc.cuda_key(source, nvrtc.NvrtcOptions(arch=90))
    assert k80 != k90
    assert k80 != nvrtc.cuda_key(source, nvrtc.NvrtcOptions(arch=80, debug=True))
    first = nvrtc.build_cuda(source, nvrtc.NvrtcOptions(arch=80), "f")
    nvrtc._loaded.clear()  # force the on-disk path
    from weft.toolchain import cache

    assert cache.lookup("cuda", k80, "cubin") is not None
    assert nvrtc.build_cuda(source, nvrtc.NvrtcOptions(arch=80), "f") == first


def test_nvrtc_error_names_kernel_and_keeps_source():
    with pytest.raises(wp.ToolchainError) as info:
        nvrtc.compile_source('extern "C" __global__ void f() { undefined_thing(); }\n',
                             nvrtc.NvrtcOptions(arch=80), "broken_kernel")
    text = str(info.value)
    assert "broken_kernel" in text and "undefined_thing" in text
    assert "generated source:" in text and "reproduce:" in text


def test_quick_check_options_still_reject_bad_code(monkeypatch):
    """The suite's default check (unoptimised PTX) runs NVRTC's front end and code generation: it produces PTX for a
    good kernel and rejects a type error and an undefined function, as the optimised CUBIN build does."""
    from nvrtc_check import options

    monkeypatch.setenv("WEFT_NVRTC_CHECK", "quick")
    quick = options(80, False)
    assert quick.output == "ptx" and "-opt=0" in quick.flags()
    ptx = nvrtc.compile_source('extern "C" __global__ void f(float* x) { x[threadIdx.x] *= 2.0f; }\n', quick, "f")
    assert b".entry f" in ptx and b".target sm_80" in ptx
    for body in ("undefined_thing();", "float* p = 1.5;"):
        with pytest.raises(wp.ToolchainError):
            nvrtc.compile_source('extern "C" __global__ void f() { ' + body + " }\n", quick, "broken_kernel")
    monkeypatch.setenv("WEFT_NVRTC_CHECK", "full")
    assert options(90, False) == nvrtc.NvrtcOptions(arch=90)


def test_without_gpu_cuda_devices_are_absent_and_cpu_works():
    if wp.is_cuda_available():
        pytest.skip("a GPU is present")
    assert all(d.is_cpu for d in wp.get_devices())
    with pytest.raises(wp.DeviceError, match="no CUDA device"):
        wp.get_device("cuda")
    with pytest.raises(wp.DeviceError):
        wp.zeros(4, device="cuda:0")
    from cuda_corpus import k_saxpy

    x = wp.array([1.0, 2.0], dtype=float)
    y = wp.zeros(2)
    wp.launch(k_saxpy, 2, inputs=[2.0, x, y])
    assert y.numpy().tolist() == [2.0, 4.0]


def test_tile_kernels_compile_as_cooperative_blocks():
    from weft import pipeline
    from weft.pipeline import Direction, Target

    @wp.kernel
    def tile_row_sum(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(a[i], 16)
        wp.tile_store(out, wp.tile_sum(t), offset=i)

    tile_row_sum.annotations()
    spec = tile_row_sum._lower(tile_row_sum._fixed_types, False, 64)
    source = pipeline.render_module(spec.fn, "tile_row_sum", False, Target.CUDA, Direction.FORWARD).source
    assert "nblocks" in source and "run_blocks" not in source
    assert "weft::cta::tile_sum(" in source and "threadIdx.x" in source  # one thread per lane (test_cuda_tiles.py)
    for arch in ARCHS:
        nvrtc.build_cuda(source, nvrtc.NvrtcOptions(arch=arch), "tile_row_sum")
