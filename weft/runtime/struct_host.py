"""Host operations on ``@wp.struct`` values that need the runtime: moving a struct's array fields to a device and the
array annotations standing for array fields read back from a record. ``weft.types.struct`` sits below the runtime,
so it calls these through its ``RUNTIME_HOOKS`` table, which this module fills when ``import weft`` loads it."""

from __future__ import annotations

from ..errors import StructFieldValueError
from ..ir import types as T
from ..types.composite import class_for
from ..types.struct import RUNTIME_HOOKS
from .array import array
from .device import get_device
from .fabric import fabricarray, indexedfabricarray
from .indexed import indexedarray

_FAMILY = {T.ArrayKind.INDEXED: indexedarray, T.ArrayKind.FABRIC: fabricarray,
           T.ArrayKind.FABRIC_INDEXED: indexedfabricarray}


def struct_to(value, device):
    """A copy of the struct ``value`` with every array field on ``device`` (arrays already there are kept as they
    are). Fabric array fields cannot move (weft does not own their memory): they must already be on ``device``."""
    device = get_device(device)
    out = type(value)()
    for name, ftype in value._ir_.fields:
        v = getattr(value, name)
        if isinstance(ftype, T.StructType) and v is not None:
            v = v.to(device)
        elif isinstance(ftype, T.ArrayType) and v is not None and getattr(v, "device", None) is not None:
            if ftype.kind in (T.ArrayKind.FABRIC, T.ArrayKind.FABRIC_INDEXED):
                if v.device != device:
                    what = "indexed Fabric array" if ftype.kind is T.ArrayKind.FABRIC_INDEXED else "Fabric array"
                    raise StructFieldValueError(f"Cannot move struct field '{name}' containing a Warp {what} from "
                                                f"device {v.device} to {device} (weft does not own its memory)")
            elif ftype.kind is T.ArrayKind.INDEXED and v.device != device:
                v = indexedarray(v.to(device) if hasattr(v, "to") else v.numpy())
            else:
                v = v.to(device)
        object.__setattr__(out, name, v)
    return out


def array_stub(ftype: T.ArrayType):
    """An annotation (no data) of an array field's type."""
    dtype = ftype.dtype.pyclass if isinstance(ftype.dtype, T.StructType) else class_for(ftype.dtype)
    return _FAMILY.get(ftype.kind, array)(dtype=dtype, ndim=ftype.ndim)


RUNTIME_HOOKS.update(struct_to=struct_to, array_stub=array_stub, as_indexed=indexedarray)
