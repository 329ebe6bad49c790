"""Shared helpers for the tile tests."""

from __future__ import annotations

import numpy as np

import weft as wp

if not hasattr(wp, "launch_tiled"):  # until weft/__init__ re-exports it
    from weft.runtime.tiles import launch_tiled

    wp.launch_tiled = launch_tiled


def complex_array(z: np.ndarray, dtype=None):
    """A vec2f / vec2d weft array holding the complex NumPy array z."""
    dtype = dtype or (wp.vec2d if z.dtype == np.complex128 else wp.vec2f)
    real = np.float64 if dtype is wp.vec2d else np.float32
    pairs = np.stack([z.real, z.imag], axis=-1).astype(real)
    return wp.array(pairs, dtype=dtype)


def as_complex(a) -> np.ndarray:
    x = a.numpy()
    return x[..., 0] + 1j * x[..., 1]


def rel_err(a, b) -> float:
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(np.linalg.norm(np.asarray(b)), 1e-30))
