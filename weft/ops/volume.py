"""Sparse-volume builtins (``wp.Volume``; native side ``weft/native/geometry/volume.h``).

A volume is passed to kernels as its ``wp.uint64`` id. Values are read by voxel (``volume_lookup``), sampled at
fractional index-space points (``volume_sample``: CLOSEST or LINEAR) with their gradient (``volume_sample_grad``),
written (``volume_store``), or read from a separate per-voxel array through the volume's voxel indices
(``volume_sample_index``). The ``dtype`` of a typed read is a compile-time attribute; the native function takes it
from the type of its output parameter.
"""

from __future__ import annotations

from ..ir import types as T
from .forms import Form, Syntax
from .registry import Adjoint, Op, OpKind, Rejected, register

D = "geometry"
HEADER = "geometry/geometry.h"

VEC3 = T.VectorType(3, T.FLOAT32)
VEC3D = T.VectorType(3, T.FLOAT64)
_ID_IJK = (T.UINT64, T.INT32, T.INT32, T.INT32)
#: the scalar types a volume may hold (bfloat16 has no NanoVDB counterpart)
VALUE_SCALARS = tuple(s for s in T.SCALARS if s is not T.BFLOAT16)


def is_value_type(t) -> bool:
    """Whether ``t`` can be a volume's value type: a scalar, or a plain vector of one."""
    if isinstance(t, T.ScalarType):
        return t in VALUE_SCALARS
    return isinstance(t, T.VectorType) and t.flavor is T.VecFlavor.VECTOR and t.scalar in VALUE_SCALARS


def grad_type(t):
    """The gradient of a sampled value of type ``t`` w.r.t. uvw: vec3 of its scalar, or an N x 3 matrix (one row per
    component) for an N-vector."""
    if isinstance(t, T.ScalarType):
        return T.VectorType(3, t)
    return T.MatrixType(t.length, 3, t.scalar)


def _typed(params: tuple, want: tuple, result, updates: tuple = ()):
    """A rule for ``params`` (``dtype`` last when present, an attribute); ``result(dtype, args)`` types the call
    or returns None."""
    n = len(want)

    def rule(args, attrs):
        if len(args) != n or any(w is not None and a != w for a, w in zip(args, want)):
            return None
        dtype = attrs[0] if attrs else None
        if "dtype" in params and (dtype is None or not is_value_type(dtype)):
            return None
        return result(dtype, args)
    return Syntax(Form.TYPED_OUTPUTS, params=params, types=want, updates=updates), rule


def _op(name: str, params: tuple, want: tuple, result, doc: str, *, native: str = "", kind=OpKind.OUT_CALL,
        adjoint=Adjoint.NONE, updates: tuple = (), side_effect: bool = False) -> Op:
    syntax, rule = _typed(params, want, result, updates)
    return register(Op(name, rule, native=native or name, kind=kind, adjoint=adjoint, domain=D, header=HEADER,
                       doc=doc, syntax=syntax, side_effect=side_effect))


# ------------------------------------------------------------------------------------------------ lookups, stores
_op("volume_lookup", ("id", "i", "j", "k", "dtype"), _ID_IJK, lambda t, a: t,
    "volume_lookup(id, i, j, k, dtype) -> dtype: the value of voxel (i, j, k) (the background where no leaf holds "
    "it). dtype must be the volume's value type. Not differentiable.")
for _suffix, _t in (("f", T.FLOAT32), ("v", VEC3), ("i", T.INT32)):
    _op(f"volume_lookup_{_suffix}", ("id", "i", "j", "k"), _ID_IJK, lambda t, a, _t=_t: _t,
        f"volume_lookup_{_suffix}(id, i, j, k) -> {_t}: volume_lookup with dtype={_t}.", native="volume_lookup")
    _op(f"volume_store_{_suffix}", ("id", "i", "j", "k", "value"), (*_ID_IJK, _t), lambda t, a: T.VOID,
        f"volume_store_{_suffix}(id, i, j, k, value): volume_store of a {_t} value.", native="volume_store",
        kind=OpKind.CALL, side_effect=True)
_op("volume_store", ("id", "i", "j", "k", "value"), (*_ID_IJK, None),
    lambda t, a: T.VOID if is_value_type(a[4]) else None,
    "volume_store(id, i, j, k, value): write value into voxel (i, j, k) if a leaf holds it (stores never allocate; "
    "allocate leaves with Volume.allocate_by_tiles). value's type must be the volume's. Not differentiable.",
    kind=OpKind.CALL, side_effect=True)
_op("volume_lookup_index", ("id", "i", "j", "k"), _ID_IJK, lambda t, a: T.INT32,
    "volume_lookup_index(id, i, j, k) -> int32: the linear index of active voxel (i, j, k) in [0, voxel count) "
    "(the order of Volume.get_voxels()), or -1 when the voxel is not active.", kind=OpKind.CALL)
_op("volume_voxel_count", ("id",), (T.UINT64,), lambda t, a: T.INT32,
    "volume_voxel_count(id) -> int32: the number of active (indexable) voxels.", kind=OpKind.CALL)


# ------------------------------------------------------------------------------------------------ sampling
_SAMPLE = ("id", "uvw", "sampling_mode")
_SAMPLE_T = (T.UINT64, VEC3, T.INT32)
_op("volume_sample", (*_SAMPLE, "dtype"), _SAMPLE_T, lambda t, a: t,
    "volume_sample(id, uvw, sampling_mode, dtype) -> dtype: the volume sampled at index-space point uvw: "
    "Volume.CLOSEST (the voxel nearest uvw, halfway cases away from zero) or Volume.LINEAR (trilinear over the cell "
    "with lower corner floor(uvw), float weights). Differentiable w.r.t. uvw for LINEAR on float data.",
    adjoint=Adjoint.NATIVE)
for _suffix, _t in (("f", T.FLOAT32), ("v", VEC3)):
    _op(f"volume_sample_{_suffix}", _SAMPLE, _SAMPLE_T, lambda t, a, _t=_t: _t,
        f"volume_sample_{_suffix}(id, uvw, sampling_mode) -> {_t}: volume_sample with dtype={_t}.",
        native="volume_sample", adjoint=Adjoint.NATIVE)
_op("volume_sample_i", ("id", "uvw"), (T.UINT64, VEC3), lambda t, a: T.INT32,
    "volume_sample_i(id, uvw) -> int32: the int32 volume's voxel nearest uvw (CLOSEST).", kind=OpKind.CALL)




def _grad_result(value, grad):
    """The results of a sample with its gradient: the value and the gradient's type, or why ``grad`` cannot hold it
    (Warp's words: a transposed N x 3 matrix is refused, not adapted)."""
    want = grad_type(value)
    if grad == want:
        return value, want
    composite = isinstance(grad, (T.ScalarType, T.VectorType, T.MatrixType))
    return Rejected(f"Incompatible gradient type, expected {want}, got {grad}") if composite else None


_op("volume_sample_grad", (*_SAMPLE, "grad", "dtype"), (*_SAMPLE_T, None), lambda t, a: _grad_result(t, a[3]),
    "volume_sample_grad(id, uvw, sampling_mode, grad, dtype) -> dtype: volume_sample, and writes the gradient of "
    "the sample w.r.t. uvw into the variable grad (vec3 of the scalar type for scalar data; an N x 3 matrix with one "
    "row per component for N-vectors; zero for CLOSEST). Differentiable w.r.t. uvw (value and gradient).",
    adjoint=Adjoint.NATIVE, updates=(3,))
_op("volume_sample_grad_f", (*_SAMPLE, "grad"), (*_SAMPLE_T, VEC3), lambda t, a: (T.FLOAT32, VEC3),
    "volume_sample_grad_f(id, uvw, sampling_mode, grad) -> float: volume_sample_grad with dtype=float32.",
    native="volume_sample_grad", adjoint=Adjoint.NATIVE, updates=(3,))


def _index_rule(with_grad: bool):
    def result(t, a):
        data, background = a[3], a[4]
        if not (isinstance(data, T.ArrayType) and data.kind is T.ArrayKind.ARRAY and data.ndim == 1
                and data.dtype == background and is_value_type(background)):
            return None
        if not with_grad:
            return background
        return _grad_result(background, a[5])
    return result


_op("volume_sample_index", (*_SAMPLE, "voxel_data", "background"), (*_SAMPLE_T, None, None), _index_rule(False),
    "volume_sample_index(id, uvw, sampling_mode, voxel_data, background) -> value: volume_sample with the voxel "
    "values read from voxel_data[volume_lookup_index(...)] (background where a voxel is not active). "
    "Differentiable w.r.t. uvw, voxel_data and background for LINEAR on float data.",
    kind=OpKind.CALL, adjoint=Adjoint.NATIVE)
_op("volume_sample_grad_index", (*_SAMPLE, "voxel_data", "background", "grad"), (*_SAMPLE_T, None, None, None),
    _index_rule(True),
    "volume_sample_grad_index(id, uvw, sampling_mode, voxel_data, background, grad) -> value: volume_sample_index, "
    "and writes the gradient w.r.t. uvw into grad (as volume_sample_grad). Differentiable w.r.t. uvw, voxel_data "
    "and background.", adjoint=Adjoint.NATIVE, updates=(5,))


# ------------------------------------------------------------------------------------------------ transforms
for _name, _what in (("volume_index_to_world", "world = M uvw + t: index space to world space"),
                     ("volume_world_to_index", "M^-1 (xyz - t): world space to index space"),
                     ("volume_index_to_world_dir", "M v: a direction from index space to world space"),
                     ("volume_world_to_index_dir", "M^-1 v: a direction from world space to index space")):
    _param = "uvw" if "index_to" in _name else "xyz"
    _op(_name, ("id", _param), (T.UINT64, None), lambda t, a: a[1] if a[1] in (VEC3, VEC3D) else None,
        f"{_name}(id, {_param}) -> vec3f or vec3d (as {_param}): {_what} (the volume's affine index-to-world map, "
        "applied in the precision of the argument). Differentiable.", kind=OpKind.CALL, adjoint=Adjoint.NATIVE)
