"""Cooperative tile kernels on CUDA, without a GPU: NVRTC compiles a corpus (forward and adjoint, several block
sizes, sm_80 and sm_90), one module's source is compared with a golden file, and the source is checked for the
cooperative model (shared memory, barriers, ``weft::cta`` calls, no loop over lanes). These show that the code
compiles and has the intended shape; they do not run it (tests/gpu/run_gpu_checks.sh does, on a GPU).

Update the golden file with ``WEFT_UPDATE_GOLDEN=1 python -m pytest tests/cuda/test_cuda_tiles.py`` and review the
diff.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

import weft as wp
from weft.toolchain import nvrtc

pytestmark = pytest.mark.skipif(not nvrtc.is_available(), reason="NVRTC not installed (pip install -e '.[cuda]')")

GOLDEN = Path(__file__).parent / "golden" / "tile_cooperative.cu.txt"
ROOT = Path(__file__).resolve().parents[2]

M, N = 8, 16


@wp.func
def _softplus(x: float):
    return wp.log(1.0 + wp.exp(x))


@wp.func
def _max2(a: float, b: float):
    return wp.max(a, b)


@wp.kernel
def t_load_map_store(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a, shape=(M, N), offset=(i * M, 0))
    u = wp.tile_map(_softplus, t) * 2.0 + t
    wp.tile_store(out, u, offset=(i * M, 0))


@wp.kernel
def t_reduce(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_load(a, shape=(M, N), offset=(i * M, 0))
    s = wp.tile_sum(t)[0] + wp.tile_max(t)[0] - wp.tile_min(t)[0] + wp.tile_reduce(_max2, t)[0]
    if lane == 0:
        out[i] = s + float(wp.tile_argmax(t)[0])


@wp.kernel
def t_lanes(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i, lane = wp.tid()
    x = a[i * wp.block_dim() + lane]
    t = wp.tile(x * x)
    b = wp.tile_broadcast(t, shape=(2, 64))  # launched with block_dim=64
    y = wp.untile(wp.tile_transpose(wp.tile_transpose(b)))
    out[i * wp.block_dim() + lane] = y[0] + y[1] + wp.tile_sum(t)[0]


@wp.kernel
def t_matmul(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(M, M), dtype=float)
    x = wp.tile_load(a, shape=(M, N), offset=(i * M, 0))
    y = wp.tile_load(b, shape=(N, M), offset=(0, j * M))
    wp.tile_matmul(x, y, acc, alpha=0.5, beta=1.0)
    wp.tile_store(c, acc + x @ y, offset=(i * M, j * M))


@wp.kernel
def t_cholesky(a: wp.array2d(dtype=wp.float64), b: wp.array(dtype=wp.float64), x: wp.array(dtype=wp.float64)):
    A = wp.tile_load(a, shape=(4, 4))
    L = wp.tile_cholesky(A)
    wp.tile_store(x, wp.tile_cholesky_solve(L, wp.tile_load(b, shape=4)))


def _fft_kernel(n: int, rows: int):
    @wp.kernel
    def t_fft(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
        i, _, _ = wp.tid()
        t = wp.tile_load(x, shape=(rows, n), offset=(i * rows, 0))
        wp.tile_fft(t)
        u = t * 0.5
        wp.tile_ifft(u)
        wp.tile_store(y, u, offset=(i * rows, 0))

    return t_fft


@wp.kernel
def t_atomic_extract(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_load(a, shape=32, offset=i * 32)
    v = t[lane % 4]  # several lanes read one element: its gradient is added atomically
    if lane >= 40:
        return  # an early return of some lanes
    old = wp.tile_atomic_add(out, wp.tile_full(32, value=v, dtype=float), offset=i * 32)
    out[i * 32 + lane % 32] += old[0] * 0.0


def _spec(kernel, block_dim: int):
    kernel.annotations()
    return kernel._lower(kernel._fixed_types, False, block_dim)


CORPUS = [
    ("load_map_store", t_load_map_store, 64),
    ("reduce", t_reduce, 32),
    ("reduce_bd96", t_reduce, 96),
    ("lanes", t_lanes, 64),
    ("matmul", t_matmul, 128),
    ("cholesky", t_cholesky, 32),
    ("fft_64x2", _fft_kernel(64, 2), 64),
    ("fft_37_bluestein", _fft_kernel(37, 1), 32),
    ("fft_1000", _fft_kernel(1000, 1), 256),
    ("atomic_extract", t_atomic_extract, 64),
]


@pytest.mark.parametrize("name,kernel,block_dim", CORPUS, ids=[c[0] for c in CORPUS])
def test_cooperative_tile_kernel_compiles(name, kernel, block_dim):
    from nvrtc_check import archs, compile_all, cuda_sources

    spec = _spec(kernel, block_dim)
    labels = [label for label, _ in cuda_sources(spec)]
    assert len(labels) == 2, labels  # forward and adjoint
    count, failures = compile_all([spec])
    assert not failures, "\n".join(failures)
    assert count == 2 * len(archs())  # (forward, adjoint) x WEFT_NVRTC_ARCHS


def test_benchmark_tile_kernels_compile():
    """benchmarks/_tile_kernels.py (the seed's FFT at 512 and the 64x64 tile GEMM) compile, forward and adjoint."""
    from nvrtc_check import archs, compile_all

    namespace = {"wp": wp, "__name__": "bench_tile_kernels"}
    path = ROOT / "benchmarks" / "_tile_kernels.py"
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102 - our own file, wp injected as there
    specs = [_spec(namespace["fft_tiled"], 256), _spec(namespace["tile_gemm"], 256)]
    count, failures = compile_all(specs)
    assert not failures, "\n".join(failures)
    assert count == 4 * len(archs())  # 2 kernels x (forward, adjoint) x WEFT_NVRTC_ARCHS


def _program(kernel, block_dim: int, adjoint: bool = False):
    from weft import pipeline
    from weft.pipeline import Direction, Target

    spec = _spec(kernel, block_dim)
    if adjoint:
        return pipeline.render_module(pipeline.differentiate(spec.fn), spec.kernel.__name__, False,
                                      Target.CUDA, Direction.ADJOINT)
    return pipeline.render_module(spec.fn, spec.kernel.__name__, False, Target.CUDA, Direction.FORWARD)


def _source(kernel, block_dim: int, adjoint: bool = False) -> str:
    return _program(kernel, block_dim, adjoint).source


def _stated_shared_bytes(source: str) -> int:
    """The number the module's comment states for its readers (the launcher never reads it)."""
    m = re.search(r"^// weft: dynamic shared memory bytes = (\d+)$", source, re.MULTILINE)
    return int(m.group(1)) if m else 0


def test_cuda_tile_source_is_cooperative():
    for adjoint in (False, True):
        program = _program(t_matmul, 128, adjoint)
        src = program.source
        assert "extern __shared__ __align__(16) unsigned char weft_smem[];" in src
        assert "__launch_bounds__(128)" in src and "if (blockDim.x != 128) return;" in src
        assert "const int32_t _l = int32_t(threadIdx.x);" in src
        assert "__syncthreads();" in src
        assert "for (int32_t _l = 0" not in src and "_l >= 0; --_l" not in src  # no loop over lanes
        assert "run_blocks" not in src and "omp" not in src
        assert "weft::cta::tile_load(" in src and "weft::cta::tile_matmul_acc(" in src
        assert re.search(r"weft::tile_t<float,8,8>& \w+ = \*reinterpret_cast<weft::tile_t<float,8,8>\*>\(weft_smem \+ \d+\);",
                         src)
        # an 8x16 and a 16x8 float tile and at least one 8x8 (others share slots through the alias analysis)
        assert program.shared_bytes >= 2 * 512 + 256
    adj = _source(t_matmul, 128, True)
    assert "weft::cta::adj_tile_matmul_acc(" in adj and "weft_scratch_" in adj
    fft_program = _program(_fft_kernel(64, 2), 64)
    fft = fft_program.source
    assert "weft::cta::tile_fft(" in fft and "weft::cta::tile_ifft(" in fft
    # FFT scratch: 2 rows x 64 complex float
    assert fft_program.shared_bytes >= 2 * 64 * 8 * 2
    lanes = _source(t_atomic_extract, 64, True)
    assert "weft::cta::from_lane0(" in lanes  # the guard after the lanes' return follows lane 0, as on the CPU
    assert "weft::cta::adj_tile_extract(" in lanes and "weft::cta::zero(adj_" in lanes


@pytest.mark.parametrize("name,kernel,block_dim", CORPUS, ids=[c[0] for c in CORPUS])
def test_program_carries_the_shared_memory_the_module_states(name, kernel, block_dim):
    """The launcher sizes dynamic shared memory from the Program the pipeline returns (the renderer's count), never
    by reading the generated source; the module's comment states the same number."""
    from weft import pipeline

    spec = _spec(kernel, block_dim)
    for direction, code in ((pipeline.Direction.FORWARD, spec.fn),
                            (pipeline.Direction.ADJOINT, pipeline.differentiate(spec.fn))):
        program = pipeline.render_module(code, spec.kernel.__name__, False, pipeline.Target.CUDA, direction)
        assert program.block_dim == block_dim and program.entry == pipeline.ENTRIES[direction]
        assert program.shared_bytes > 0 and program.shared_bytes == _stated_shared_bytes(program.source)


def test_shared_bytes_of_other_modules_is_zero():
    from weft import pipeline
    from weft.backend.tile_cuda import fft_scratch
    from weft.pipeline import Direction, Target

    @wp.kernel
    def plain(a: wp.array(dtype=float)):
        a[wp.tid()] = 1.0

    plain.annotations()
    spec = plain._lower(plain._fixed_types, False)
    program = pipeline.render_module(spec.fn, "plain", False, Target.CUDA, Direction.FORWARD)
    assert program.shared_bytes == 0 and _stated_shared_bytes(program.source) == 0
    assert fft_scratch(64, 2) == 128 and fft_scratch(1000, 1) == 1000
    assert fft_scratch(37, 1) == 3 * 128  # Bluestein: 2 rows of M = 128 plus the kernel spectrum


def _normalise(text: str) -> str:
    return re.sub(r"from \S+:(\d+)", r"from <tests/cuda/test_cuda_tiles.py>:\1", text)


def test_golden_cooperative_tile_module():
    text = _normalise(_source(t_load_map_store, 64))
    if os.environ.get("WEFT_UPDATE_GOLDEN") == "1" or not GOLDEN.exists():
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "generated CUDA changed: review, then update with WEFT_UPDATE_GOLDEN=1"


def test_cpu_results_of_corpus_kernels():
    """The corpus kernels are valid weft programs: they run on the CPU (the reference a GPU run is compared with)."""
    a = np.random.default_rng(0).standard_normal((2 * M, N)).astype(np.float32)
    out = wp.zeros((2 * M, N), dtype=float)
    wp.launch_tiled(t_load_map_store, dim=2, inputs=[wp.array(a), out], block_dim=64)
    ref = 2.0 * np.log1p(np.exp(a)) + a
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------------- on a GPU
def _gpu_cases():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2 * M, N)).astype(np.float32)
    b = rng.standard_normal((N, 2 * M)).astype(np.float32)
    x64 = rng.standard_normal((4, 64, 2)).astype(np.float32)
    x37 = rng.standard_normal((2, 37, 2)).astype(np.float32)
    return [
        # (kernel, block_dim, grid, inputs (numpy or shape of a zero output), index of the output)
        (t_load_map_store, 64, 2, [a, ("f", (2 * M, N))], 1),
        (t_reduce, 32, 2, [a, ("f", (2,))], 1),
        (t_reduce, 96, 2, [a, ("f", (2,))], 1),
        (t_matmul, 128, (2, 2), [a, b, ("f", (2 * M, 2 * M))], 2),
        (_fft_kernel(64, 2), 64, (2, 1), [x64, ("v", (4, 64))], 1),
        (_fft_kernel(37, 1), 32, (2, 1), [x37, ("v", (2, 37))], 1),
    ]


def _arrays(inputs, device):
    out = []
    for x in inputs:
        if isinstance(x, tuple):
            dtype = wp.vec2f if x[0] == "v" else float
            out.append(wp.zeros(x[1], dtype=dtype, device=device, requires_grad=True))
        elif x.ndim == 3:
            out.append(wp.array(x, dtype=wp.vec2f, device=device, requires_grad=True))
        else:
            out.append(wp.array(x, device=device, requires_grad=True))
    return out


@pytest.mark.parametrize("case", range(6))
def test_cooperative_tiles_on_gpu_match_cpu(cuda_device, case):
    """Forward results and input gradients of the corpus on the GPU against the CPU reference."""
    kernel, block_dim, grid, inputs, k_out = _gpu_cases()[case]
    results = {}
    for device in ("cpu", cuda_device):
        arrays = _arrays(inputs, device)
        tape = wp.Tape()
        with tape:
            wp.launch_tiled(kernel, dim=grid, inputs=arrays, block_dim=block_dim, device=device)
        seed = np.ones(arrays[k_out].shape + ((2,) if arrays[k_out].dtype is wp.vec2f else ()), np.float32)
        tape.backward(grads={arrays[k_out]: wp.array(seed, dtype=arrays[k_out].dtype, device=device)})
        results[str(device)] = [arrays[k_out].numpy()] + [arrays[i].grad.numpy() for i in range(k_out)]
    cpu, gpu = results["cpu"], results[str(cuda_device)]
    for c, g in zip(cpu, gpu):
        np.testing.assert_allclose(g, c, rtol=2e-4, atol=2e-4 * max(1.0, float(np.abs(c).max())))


def test_cuda_module_checks_the_args_layout_python_packs():
    """cuda_program renders the Args size check from the renderer (nothing is appended to the rendered text); NVRTC
    rejects a module whose Args struct differs from the bytes Python packs."""
    from weft import pipeline
    from weft.cuda.launch import args_bytes, cuda_program
    from weft.pipeline import Direction, Target

    @wp.kernel
    def packed(a: wp.array(dtype=float), s: float, n: int):
        a[wp.tid()] = s * float(n)

    packed.annotations()
    spec = packed._lower(packed._fixed_types, False)
    size = args_bytes(spec)
    check = f"static_assert(sizeof(Args) == {size},"
    assert size > 0 and check in cuda_program(spec, Direction.FORWARD).source
    assert "static_assert(sizeof(Args)" not in pipeline.render_module(spec.fn, "packed", False, Target.CUDA,
                                                                      Direction.FORWARD).source
