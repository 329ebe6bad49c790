"""The named value types of the public API (``vec3``, ``mat33d``, ``quatf``, ``spatial_vector`` ...)."""

from __future__ import annotations

from . import scalars as S
from .composite import matrix, quaternion, transformation, vector

_SUFFIXES = {
    "h": S.float16, "f": S.float32, "d": S.float64, "i": S.int32, "ui": S.uint32, "l": S.int64, "ul": S.uint64,
    "b": S.int8, "ub": S.uint8, "s": S.int16, "us": S.uint16,
}


def _build() -> dict[str, type]:
    names: dict[str, type] = {}
    for n in (2, 3, 4):
        names[f"vec{n}"] = vector(n, S.float32)
        for suffix, scls in _SUFFIXES.items():
            names[f"vec{n}{suffix}"] = vector(n, scls)
    for n in (2, 3, 4):
        names[f"mat{n}{n}"] = matrix((n, n), S.float32)
        for suffix in ("h", "f", "d"):
            names[f"mat{n}{n}{suffix}"] = matrix((n, n), _SUFFIXES[suffix])
    names["quat"] = quaternion(S.float32)
    names["transform"] = transformation(S.float32)
    for suffix in ("h", "f", "d"):
        names[f"quat{suffix}"] = quaternion(_SUFFIXES[suffix])
        names[f"transform{suffix}"] = transformation(_SUFFIXES[suffix])
        names[f"spatial_vector{suffix}"] = vector(6, _SUFFIXES[suffix])
        names[f"spatial_matrix{suffix}"] = matrix((6, 6), _SUFFIXES[suffix])
    names["spatial_vector"] = vector(6, S.float32)
    names["spatial_matrix"] = matrix((6, 6), S.float32)
    return names


NAMED_TYPES = _build()
