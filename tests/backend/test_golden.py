"""Golden tests: the printed typed IR and generated C++ and CUDA source (forward and adjoint) of a kernel corpus.

A change in lowering, differentiation or rendering shows up here as a reviewable diff. To accept changes, rerun with
``WEFT_UPDATE_GOLDEN=1 python -m pytest tests/backend/test_golden.py`` and review ``git diff tests/backend/golden``.
Absolute paths are replaced by placeholders so the files do not depend on the checkout location.
"""

import os
import re
from pathlib import Path

import pytest

import weft as wp
from weft.ir.printer import print_adjoint, print_function
from weft.ir.verify import verify, verify_adjoint

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("WEFT_UPDATE_GOLDEN") == "1"
REPO = Path(__file__).resolve().parents[2]


@wp.kernel
def g_saxpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.func
def wrap(idx: int, n: int):
    ret = idx % n
    if ret < 0:
        ret += n
    return ret


@wp.kernel
def g_stencil(n: int, u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    left = wrap(i - 1, n)
    right = wrap(i + 1, n)
    out[i, j] = u[left, j] + u[right, j] - 2.0 * u[i, j]


@wp.kernel
def g_vector(points: wp.array(dtype=wp.vec3), m: wp.mat33, out: wp.array(dtype=float)):
    i = wp.tid()
    p = m * points[i]
    p.y = 0.0
    out[i] = wp.length(p) + wp.dot(p, wp.vec3(1.0, 2.0, 3.0))


@wp.kernel
def g_loops(n: int, out: wp.array(dtype=int)):
    i = wp.tid()
    s = 0
    for k in range(n):
        if k == i:
            continue
        if k > 10:
            break
        s += k
    while s > 100:
        s = s // 2
    out[i] = s if s > 0 else -1


@wp.kernel
def g_atomic(values: wp.array(dtype=float), bins: wp.array(dtype=int), total: wp.array(dtype=float)):
    i = wp.tid()
    b = int(values[i] * 4.0)
    wp.atomic_add(bins, wp.clamp(b, 0, 3), 1)
    wp.atomic_max(total, 0, values[i])


@wp.struct
class GState:
    dt: float
    vel: wp.vec3


@wp.kernel
def g_struct(s: GState, pos: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    pos[i] = pos[i] + s.vel * s.dt


@wp.kernel
def g_dynloop(n: int, x: wp.array(dtype=float), out: wp.array(dtype=float)):
    # a loop with a run-time trip count carrying a differentiable value: the adjoint records it on the loop stack
    i = wp.tid()
    v = x[i]
    acc = 0.0
    for k in range(n):
        acc = acc * 0.5 + wp.sin(v * float(k))
        if acc > 10.0:
            break
    out[i] = acc


@wp.kernel
def g_matrix(m: wp.array(dtype=wp.mat33), q: wp.array(dtype=wp.quat), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a = m[i]
    r = wp.quat_rotate(q[i], wp.vec3(1.0, 0.0, 0.0))
    out[i] = wp.transpose(a) * r + wp.cross(r, a[0]) * wp.determinant(a)


G_M, G_N = 8, 16


@wp.kernel
def g_tile_fft(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
    i, _, _ = wp.tid()
    t = wp.tile_load(x, shape=(2, 32), offset=(i * 2, 0))
    wp.tile_fft(t)
    u = t * 0.5
    wp.tile_ifft(u)
    wp.tile_store(y, u, offset=(i * 2, 0))


@wp.kernel
def g_tile_matmul(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(G_M, G_M), dtype=float)
    x = wp.tile_load(a, shape=(G_M, G_N), offset=(i * G_M, 0))
    y = wp.tile_load(b, shape=(G_N, G_M), offset=(0, j * G_M))
    wp.tile_matmul(x, y, acc)
    wp.tile_store(c, acc + x @ y, offset=(i * G_M, j * G_M))


@wp.kernel
def g_tile_reduce(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_load(a, shape=(G_M, G_N), offset=(i * G_M, 0))
    s = wp.tile_sum(t * t)[0] + wp.tile_max(t)[0]
    if lane == 0:
        out[i] = s


@wp.kernel
def g_guarded(n: int, m: int, u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    # the guard is split off the grid loop: fwd_known (the guard folded) runs on fwd_clip's interval of each row
    i, j = wp.tid()
    if i > 0 and j > 0 and i < n - 1 and j < m - 1:
        out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]


@wp.kernel
def g_hash_grid_lanes(grid: wp.uint64, pts: wp.array(dtype=wp.vec3), r: float, out: wp.array(dtype=float)):
    # threads of one cell walk one candidate stream: fwd_lanes (backend/lanes.py), branches as selects
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = pts[i]
    s = float(0.0)  # noqa: UP018
    for j in wp.hash_grid_query(grid, p, r):
        d = wp.length(p - pts[j])
        if d < r:
            s += r - d
        else:
            s -= 0.0
    out[i] = s


@wp.kernel
def g_periodic(n: int, u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    # rk3_update's periodic stencil: the backward's row-affine gradient sites (bwd_known_deferred stores values only,
    # bwd_bases gives their rows' offsets, flush_affine adds whole chunks)
    i, j = wp.tid()
    out[i, j] = u[wrap(i + 1, n), j] * u[i, wrap(j - 1, n)] - 2.0 * u[i, j] + u[i, wrap(j + 1, n)]


@wp.kernel
def g_flat_rows(f: wp.array(dtype=float), width: int, height: int, out: wp.array(dtype=float)):
    # Warp's example_wave: x = tid % width, y = tid // width; run in rows (run_grid_split_rows), fwd_known takes the
    # column, row and flat index from the row loop and folds the clamps
    tid = wp.tid()
    x = tid % width
    y = tid // width
    out[tid] = f[wp.clamp(y, 0, height - 1) * width + wp.clamp(x + 1, 0, width - 1)] - f[tid]


CORPUS = {
    "saxpy": (g_saxpy, [1.0, wp.zeros(1, dtype=float), wp.zeros(1, dtype=float)]),
    "stencil": (g_stencil, [4, wp.zeros((2, 2), dtype=float), wp.zeros((2, 2), dtype=float)]),
    "vector": (g_vector, [wp.zeros(1, dtype=wp.vec3), wp.mat33(), wp.zeros(1, dtype=float)]),
    "loops": (g_loops, [3, wp.zeros(1, dtype=int)]),
    "atomic": (g_atomic, [wp.zeros(1, dtype=float), wp.zeros(4, dtype=int), wp.zeros(1, dtype=float)]),
    "struct": (g_struct, [GState(), wp.zeros(1, dtype=wp.vec3)]),
    "dynloop": (g_dynloop, [3, wp.zeros(1, dtype=float), wp.zeros(1, dtype=float)]),
    "matrix": (g_matrix, [wp.zeros(1, dtype=wp.mat33), wp.zeros(1, dtype=wp.quat), wp.zeros(1, dtype=wp.vec3)]),
    "tile_fft": (g_tile_fft, [wp.zeros((2, 32), dtype=wp.vec2f), wp.zeros((2, 32), dtype=wp.vec2f)]),
    "tile_matmul": (g_tile_matmul, [wp.zeros((8, 16), dtype=float), wp.zeros((16, 8), dtype=float),
                                    wp.zeros((8, 8), dtype=float)]),
    "tile_reduce": (g_tile_reduce, [wp.zeros((8, 16), dtype=float), wp.zeros(1, dtype=float)]),
    "hash_grid_lanes": (g_hash_grid_lanes, [wp.uint64(0), wp.zeros(1, dtype=wp.vec3), 0.1, wp.zeros(1, dtype=float)]),
    "guarded": (g_guarded, [4, 4, wp.zeros((2, 2), dtype=float), wp.zeros((2, 2), dtype=float)]),
    "periodic": (g_periodic, [4, wp.zeros((2, 2), dtype=float), wp.zeros((2, 2), dtype=float)]),
    "flat_rows": (g_flat_rows, [wp.zeros(4, dtype=float), 2, 2, wp.zeros(4, dtype=float)]),
}
#: block_dim of the tile kernels (the block size their modules are rendered for)
BLOCK_DIM = {"tile_fft": 32, "tile_matmul": 64, "tile_reduce": 32}


def _normalise(text: str) -> str:
    text = text.replace(str(REPO), "<repo>")
    text = re.sub(r'"/[^"\n]*/(tests/backend/test_golden\.py)"', r'"<repo>/\1"', text)
    return text.rstrip() + "\n"


# imported below the corpus so that its line numbers (in the golden files) stay put
from weft import pipeline
from weft.pipeline import Direction, Target


def _spec(name):
    # lowered, not compiled: the golden texts need no C++ compiler
    kernel, args = CORPUS[name]
    return kernel._lower(kernel.infer_types(args), False, BLOCK_DIM.get(name))


_adjoints: dict = {}


def _adjoint(name):
    if name not in _adjoints:
        spec = _spec(name)
        _adjoints[name] = (spec, pipeline.differentiate(spec.fn))
    return _adjoints[name]


def _compare(path: Path, actual: str) -> None:
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"golden file {path} is missing; create it with WEFT_UPDATE_GOLDEN=1")
        path.write_text(actual)
        return
    expected = path.read_text()
    assert actual == expected, (
        f"{path.name} differs from the generated text; if the change is intended, rerun with WEFT_UPDATE_GOLDEN=1 "
        "and review the diff")


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_golden_ir(name):
    spec = _spec(name)
    verify(spec.fn)
    _compare(GOLDEN / f"{name}.ir.txt", _normalise(print_function(spec.fn)))


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_golden_cpp(name):
    spec = _spec(name)
    text = _normalise(spec.source)
    assert str(REPO) not in text
    _compare(GOLDEN / f"{name}.cpp.txt", text)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_golden_adjoint_ir(name):
    _, prog = _adjoint(name)
    verify_adjoint(prog)
    _compare(GOLDEN / f"{name}.adj.ir.txt", _normalise(print_adjoint(prog)))


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_golden_adjoint_cpp(name):
    spec, prog = _adjoint(name)
    _compare(GOLDEN / f"{name}.adj.cpp.txt", _normalise(pipeline.render_module(prog, spec.kernel.__name__, False,
                                                                               Target.CPU, Direction.ADJOINT).source))


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_golden_cuda(name):
    spec = _spec(name)
    _compare(GOLDEN / f"{name}.cu.txt", _normalise(pipeline.render_module(spec.fn, spec.kernel.__name__, False,
                                                                          Target.CUDA, Direction.FORWARD).source))


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_golden_cuda_adjoint(name):
    spec, prog = _adjoint(name)
    _compare(GOLDEN / f"{name}.adj.cu.txt", _normalise(pipeline.render_module(prog, spec.kernel.__name__, False,
                                                                              Target.CUDA, Direction.ADJOINT).source))


def test_verifier_rejects_broken_programs():
    """The verifier is not vacuous: a use before definition and unbalanced loop-stack traffic are caught."""
    import dataclasses

    from weft.ir.nodes import Pop
    from weft.ir.verify import VerifyError

    spec = _spec("saxpy")
    body = list(spec.fn.body)
    broken = dataclasses.replace(spec.fn, body=body[1:] + body[:1])  # the tid() Let moved to the end
    with pytest.raises(VerifyError, match="used before definition"):
        verify(broken)
    _, prog = _adjoint("dynloop")
    verify_adjoint(prog)
    pops = [s for s in prog.reverse if isinstance(s, Pop)]
    assert pops
    with pytest.raises(VerifyError, match="loop stack"):
        verify_adjoint(dataclasses.replace(prog, reverse=[s for s in prog.reverse if s is not pops[0]]))


def test_golden_kernels_run():
    # the corpus is valid code, not just text: spot-check two kernels numerically
    import numpy as np

    x = wp.array(np.arange(4, dtype=np.float32))
    y = wp.ones(4, dtype=float)
    wp.launch(g_saxpy, dim=4, inputs=[2.0, x, y])
    np.testing.assert_array_equal(y.numpy(), 2 * np.arange(4) + 1)
    out = wp.zeros(4, dtype=int)
    wp.launch(g_loops, dim=4, inputs=[5, out])
    np.testing.assert_array_equal(out.numpy(), [10 - i for i in range(4)])
