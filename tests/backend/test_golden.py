"""Golden tests: the printed typed IR and the generated C++ of a small kernel corpus, compared with files on disk.

A change in lowering or rendering shows up here as a reviewable diff. To accept changes, rerun with
``WEFT_UPDATE_GOLDEN=1 python -m pytest tests/backend/test_golden.py`` and review ``git diff tests/backend/golden``.
Absolute paths are replaced by placeholders so the files do not depend on the checkout location.
"""

import os
import re
from pathlib import Path

import pytest

import weft as wp
from weft.ir.printer import print_function
from weft.ir.verify import verify

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


CORPUS = {
    "saxpy": (g_saxpy, [1.0, wp.zeros(1, dtype=float), wp.zeros(1, dtype=float)]),
    "stencil": (g_stencil, [4, wp.zeros((2, 2), dtype=float), wp.zeros((2, 2), dtype=float)]),
    "vector": (g_vector, [wp.zeros(1, dtype=wp.vec3), wp.mat33(), wp.zeros(1, dtype=float)]),
    "loops": (g_loops, [3, wp.zeros(1, dtype=int)]),
    "atomic": (g_atomic, [wp.zeros(1, dtype=float), wp.zeros(4, dtype=int), wp.zeros(1, dtype=float)]),
    "struct": (g_struct, [GState(), wp.zeros(1, dtype=wp.vec3)]),
}


def _normalise(text: str) -> str:
    text = text.replace(str(REPO), "<repo>")
    text = re.sub(r'"/[^"\n]*/(tests/backend/test_golden\.py)"', r'"<repo>/\1"', text)
    return text.rstrip() + "\n"


def _spec(name):
    kernel, args = CORPUS[name]
    return kernel.specialize(kernel.infer_types(args))


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
