"""``wp.fixedarray(shape, dtype)``: the annotation of a kernel-local array of fixed shape.

Inside kernels and funcs ``wp.zeros(shape, dtype=...)`` makes such an array (on the thread's stack); this names its
type, for instance as a func's return annotation.
"""

from __future__ import annotations

from ..ir import types as T
from ..types.mapping import to_ir


class fixedarray:
    """``wp.fixedarray(shape=(2, 3), dtype=int)``: a fixed-shape, kernel-local array type (an annotation)."""

    def __init__(self, shape=None, dtype=float):
        self.dtype = dtype
        if shape is None:  # wp.fixedarray(dtype=int): the family with its shape not given yet (as Warp allows)
            self.shape, self.ndim = None, 1
            return
        self.shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
        if not 1 <= len(self.shape) <= 4 or any(s < 0 for s in self.shape):
            raise ValueError(f"fixedarray shape must have 1-4 non-negative extents, got {shape!r}")
        self.ndim = len(self.shape)

    def _annotation_ir(self) -> T.ArrayType:
        if self.shape is None:
            raise TypeError("wp.fixedarray(dtype=...) without a shape cannot annotate kernel code: give shape=(...)")
        return T.ArrayType(to_ir(self.dtype), self.ndim, T.ArrayKind.FIXED, self.shape)

    def __repr__(self) -> str:
        return f"fixedarray(shape={self.shape}, dtype={getattr(self.dtype, '__name__', self.dtype)})"
