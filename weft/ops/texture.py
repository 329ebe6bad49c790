"""Textures: the kernel types of ``wp.Texture1D`` / ``2D`` / ``3D`` and the ``texture_sample`` builtin.

A texture reaches a kernel as a struct of plain values (the address of its float32 texels, sizes, filter and
address modes; ``weft/textures.py`` packs it), so sampling (``weft/native/texture.h``) reads ordinary memory on the
CPU and under CUDA alike. ``dtype`` is a compile-time attribute choosing how many channels are read.
"""

from __future__ import annotations

from ..ir import types as T
from .forms import Form, Syntax
from .registry import Adjoint, Op, OpKind, register

D = "misc"
HEADER = "texture.h"

#: the fields every texture struct has, in the order weft/textures.py packs them
FIELDS = (("data", T.UINT64), ("width", T.INT32), ("height", T.INT32), ("depth", T.INT32),
          ("num_channels", T.INT32), ("filter_mode", T.INT32), ("address_mode_u", T.INT32),
          ("address_mode_v", T.INT32), ("address_mode_w", T.INT32), ("normalized_coords", T.INT32))

TEXTURE1D = T.StructType("Texture1D", "weft_Texture1D", FIELDS)
TEXTURE2D = T.StructType("Texture2D", "weft_Texture2D", FIELDS)
TEXTURE3D = T.StructType("Texture3D", "weft_Texture3D", FIELDS)

#: texture type -> the type of its sampling coordinate
COORDS = {TEXTURE1D: T.FLOAT32, TEXTURE2D: T.VectorType(2, T.FLOAT32), TEXTURE3D: T.VectorType(3, T.FLOAT32)}
#: the result types texture_sample returns (1, 2 or 4 channels, as in Warp)
RESULTS = (T.FLOAT32, T.VectorType(2, T.FLOAT32), T.VectorType(4, T.FLOAT32))


def _rule(args, attrs):
    if len(args) != 3 or not attrs:
        return None
    tex, coord, lod = args
    dtype = attrs[0]
    if tex not in COORDS or coord != COORDS[tex] or lod != T.FLOAT32 or dtype not in RESULTS:
        return None
    return dtype


register(Op("texture_sample", _rule, native="texture_sample", kind=OpKind.OUT_CALL, adjoint=Adjoint.NATIVE, domain=D,
            header=HEADER, syntax=Syntax(Form.TYPED_OUTPUTS, params=("tex", "uv", "dtype", "lod"),
                                         types=(None, None, T.FLOAT32), defaults=(-1.0,)),
            doc="texture_sample(tex, uv, dtype, lod=-1.0) -> dtype: the texture sampled at a coordinate (float for "
                "a Texture1D, vec2f for a Texture2D, vec3f for a Texture3D; normalised to [0, 1] unless the texture "
                "was made with normalized_coords=False), with its filter mode (CLOSEST, LINEAR) and per-axis address "
                "modes (WRAP, CLAMP, MIRROR, BORDER). dtype (float, vec2f or vec4f) chooses how many channels are "
                "read; components beyond the texture's channels are zero. lod is accepted for Warp's signature: weft "
                "textures have one mip level. Differentiable w.r.t. the coordinate (LINEAR; zero for CLOSEST)."))
