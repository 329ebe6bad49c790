"""Samplers (input domains) and the record types of the op table (``op_table.py``); shared by its domain
modules (``op_table_mathx.py``, ``op_table_geometry.py``)."""

# no `from __future__ import annotations`: kernel, func and struct annotations are evaluated where defined
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import weft as wp

f64 = wp.float64
V2, V3, V4 = wp.vec2d, wp.vec3d, wp.vec4d
M22, M33, M44 = wp.mat22d, wp.mat33d, wp.mat44d
Q = wp.quatd
TF = wp.transformd
SV = wp.spatial_vectord
SM = wp.spatial_matrixd

Sampler = Callable[[np.random.Generator, int], np.ndarray]
_S = (f64,)  # input signatures of one and two float64 scalars
_SS = (f64, f64)


# ------------------------------------------------------------------------------------------------ samplers
def normal(*trailing: int, scale: float = 1.0) -> Sampler:
    return lambda rng, n: rng.normal(scale=scale, size=(n, *trailing))


def uniform(lo: float, hi: float, *trailing: int) -> Sampler:
    return lambda rng, n: rng.uniform(lo, hi, size=(n, *trailing))


def away_from_zero(*trailing: int, margin: float = 0.2) -> Sampler:
    def s(rng, n):
        x = rng.uniform(margin, 1.5, size=(n, *trailing))
        return x * rng.choice([-1.0, 1.0], size=x.shape)
    return s


def away_from_integers(lo: float, hi: float, margin: float = 0.1) -> Sampler:
    def s(rng, n):
        k = rng.integers(int(np.floor(lo)), int(np.ceil(hi)), size=n)
        return k + rng.uniform(margin, 1.0 - margin, size=n)
    return s


def well_conditioned(k: int, scale: float = 0.3) -> Sampler:
    return lambda rng, n: np.eye(k) + rng.normal(scale=scale, size=(n, k, k))


def _rotations(rng, n, max_angle=np.pi):
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    angle = rng.uniform(0.1, max_angle, size=n)
    out = np.empty((n, 3, 3))
    for i in range(n):
        a = axis[i]
        K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
        out[i] = np.eye(3) + np.sin(angle[i]) * K + (1 - np.cos(angle[i])) * K @ K
    return out


def rotation_matrix(max_angle: float = 1.5) -> Sampler:
    """Rotations of at most ``max_angle`` (trace > 0: quat_from_matrix stays on one branch)."""
    return lambda rng, n: _rotations(rng, n, max_angle)


def distinct_singular_values() -> Sampler:
    """U diag(s) V^T with singular values 3, 2, 1 (+-0.2): well separated, so U and V are smooth."""
    def s(rng, n):
        U, V = _rotations(rng, n), _rotations(rng, n)
        sig = np.array([3.0, 2.0, 1.0]) + rng.uniform(-0.2, 0.2, size=(n, 3))
        return np.einsum("nij,nj,nkj->nik", U, sig, V)
    return s


def distinct_singular_values_2() -> Sampler:
    """2x2 U diag(s) V^T with rotations U, V and singular values 2, 0.8 (+-0.2), one pair of each sign of det."""
    def s(rng, n):
        def rot(a):
            c, si = np.cos(a), np.sin(a)
            return np.stack([np.stack([c, -si], -1), np.stack([si, c], -1)], -2)
        U, V = rot(rng.uniform(-3.0, 3.0, n)), rot(rng.uniform(-3.0, 3.0, n))
        sig = np.array([2.0, 0.8]) + rng.uniform(-0.2, 0.2, size=(n, 2))
        sig[::2, 1] *= -1.0
        return np.einsum("nij,nj,nkj->nik", U, sig, V)
    return s


def symmetric_distinct_eigenvalues() -> Sampler:
    def s(rng, n):
        R = _rotations(rng, n)
        d = np.array([-1.0, 0.5, 2.0]) + rng.uniform(-0.2, 0.2, size=(n, 3))
        return np.einsum("nij,nj,nkj->nik", R, d, R)
    return s


def unit_quat() -> Sampler:
    def s(rng, n):
        q = rng.normal(size=(n, 4))
        return q / np.linalg.norm(q, axis=1, keepdims=True)
    return s


def transform() -> Sampler:
    def s(rng, n):
        return np.concatenate([rng.normal(size=(n, 3)), unit_quat()(rng, n)], axis=1)
    return s


def positive(lo: float = 0.2, hi: float = 2.0, *trailing: int) -> Sampler:
    return uniform(lo, hi, *trailing)


def const(value) -> Sampler:
    return lambda rng, n: np.broadcast_to(np.asarray(value, dtype=np.float64), (n, *np.shape(value))).copy()


# joint samplers (several inputs at once) for kinked functions
def separated_pair(*trailing: int, gap: float = 0.2):
    """Two inputs whose components differ by at least ``gap`` (min / max)."""
    def s(rng, n):
        a = rng.normal(size=(n, *trailing))
        d = rng.uniform(gap, 1.0, size=a.shape) * rng.choice([-1.0, 1.0], size=a.shape)
        return [a, a + d]
    return s


def clamp_inputs(rng, n):
    lo = rng.uniform(-1.0, -0.5, size=n)
    hi = rng.uniform(0.5, 1.0, size=n)
    # one third below lo, one third inside, one third above hi, each at least 0.1 from the edges
    region = np.arange(n) % 3
    x = np.where(region == 0, lo - rng.uniform(0.1, 0.5, n),
                 np.where(region == 1, rng.uniform(-0.4, 0.4, n), hi + rng.uniform(0.1, 0.5, n)))
    return [x, lo, hi]


def smoothstep_inputs(rng, n):
    a = rng.uniform(-1.0, -0.5, size=n)
    b = rng.uniform(0.5, 1.0, size=n)
    x = rng.uniform(-0.4, 0.4, size=n)
    return [a, b, x]


def mod_inputs(rng, n):
    b = rng.uniform(0.5, 1.5, size=n) * rng.choice([-1.0, 1.0], size=n)
    q = rng.integers(-3, 4, size=n) + rng.uniform(0.15, 0.85, size=n)
    return [q * b, b]


def slerp_inputs(rng, n):
    a = unit_quat()(rng, n)
    b = a + rng.normal(scale=0.6, size=(n, 4))
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    return [a, b, rng.uniform(0.1, 0.9, size=n)]


# ------------------------------------------------------------------------------------------------ table records
@dataclass(frozen=True)
class Case:
    """One overload to check: ``func`` applied element-wise, or a ready ``kernel(in..., out)``."""

    label: str
    inputs: tuple  # weft dtypes of the input arrays
    output: object  # weft dtype of the output array
    sample: object  # one Sampler per input, or a joint sampler returning a list of arrays
    func: object = None
    kernel: object = None
    out_len: int | None = None  # output length for ready kernels (default: one per thread)
    out_init: float = 0.0
    n: int = 3  # threads
    dim: tuple | None = None  # launch grid and array shape of ready kernels over 2-D arrays
    eps: float = 1e-6
    rtol: float = 1e-6
    atol: float = 1e-7

    def draw(self, rng: np.random.Generator) -> list[np.ndarray]:
        if callable(self.sample):
            return list(self.sample(rng, self.n))
        return [s(rng, self.n) for s in self.sample]


@dataclass(frozen=True)
class Entry:
    domain: str
    name: str
    cases: tuple[Case, ...] = field(default_factory=tuple)


TABLE: list[Entry] = []


def entry(domain: str, name: str, *cases: Case) -> None:
    TABLE.append(Entry(domain, name, tuple(cases)))


def case(label, inputs, output, sample, func=None, **kw) -> Case:
    return Case(label, tuple(inputs), output, sample if callable(sample) else tuple(sample), func=func, **kw)
