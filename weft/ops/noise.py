"""Gradient (Perlin) noise, periodic noise and curl noise (``weft/native/noise.h``).

The state selects the field (``wp.rand_init(seed)``) and is never advanced. Derivatives are with respect to the
point (noise, pnoise: the analytic gradient; curlnoise: through the analytic Hessian, also with respect to
``lacunarity`` and ``gain``); the lattice hash makes the result piecewise smooth in the point only.
"""

from __future__ import annotations

from ..ir import types as T
from .forms import Form, Syntax
from .registry import Op, register

D = "noise"
H = "noise.h"
F32 = T.FLOAT32


def _point(t) -> int:
    """Dimension of a noise point: 1 for a float32, n for a float32 vector of length 2-4 (0 otherwise)."""
    if t == F32:
        return 1
    if isinstance(t, T.VectorType) and t.flavor is T.VecFlavor.VECTOR and t.scalar == F32 and 2 <= t.length <= 4:
        return t.length
    return 0


def _noise(args, attrs):
    if len(args) == 2 and args[0] == T.UINT32 and _point(args[1]):
        return F32
    return None


def _pnoise(args, attrs):
    if len(args) >= 3 and args[0] == T.UINT32 and _point(args[1]) == len(args) - 2 \
            and all(a == T.INT32 for a in args[2:]):
        return F32
    return None


def _curlnoise(args, attrs):
    if len(args) == 5 and args[0] == T.UINT32 and _point(args[1]) >= 2 and args[2] == T.UINT32 \
            and args[3] == args[4] == F32:
        return T.VectorType(2 if _point(args[1]) == 2 else 3, F32)
    return None


register(Op("noise", _noise, native="noise", domain=D, header=H,
            doc="noise(state, p): Perlin gradient noise at p (a float or a vec2/vec3/vec4 of float32), a value in "
                "about [-1, 1]; the field is chosen by state (not advanced). Differentiable in p."))
register(Op("pnoise", _pnoise, native="pnoise", domain=D, header=H,
            doc="pnoise(state, p, px[, py, pz, pt]): Perlin noise that repeats with integer period px (py, ...) "
                "along each axis. Differentiable in p."))
register(Op("curlnoise", _curlnoise, native="curlnoise", domain=D, header=H,
            syntax=Syntax(Form.KEYWORDS, params=("state", "xy", "octaves", "lacunarity", "gain"),
                          types=(T.UINT32, None, T.UINT32, F32, F32), defaults=(1, 2.0, 0.5)),
            doc="curlnoise(state, p, octaves=1, lacunarity=2.0, gain=0.5): a divergence-free field from the curl "
                "of Perlin noise summed over octaves (octave i at frequency lacunarity^i, weight gain^i); vec2 for "
                "a 2-D point, vec3 for 3-D and 4-D points. Differentiable in p, lacunarity and gain."))
