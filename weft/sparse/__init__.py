"""``weft.sparse``: block sparse row (BSR) matrices and their operations, with Warp 1.19's ``warp.sparse`` API.

Build matrices with ``bsr_zeros``, ``bsr_from_triplets`` / ``bsr_set_from_triplets``, ``bsr_diag``,
``bsr_identity``; combine them with ``bsr_axpy``, ``bsr_scale``, ``bsr_mm``, ``bsr_mv``, ``bsr_transposed`` or the
operators of ``BsrMatrix`` (``+ - * / @``). Topology (which blocks exist) is computed on the host with NumPy,
values by weft kernels (multi-threaded on the CPU, on CUDA devices, and differentiable through ``wp.Tape``).
See docs/sparse.md.
"""

from __future__ import annotations

from ._algebra import (
    bsr_axpy,
    bsr_axpy_work_arrays,
    bsr_block_index,
    bsr_mm,
    bsr_mm_work_arrays,
    bsr_mv,
    bsr_row_index,
    bsr_scale,
)
from ._matrix import (
    BSR_STATUS_ROW_CAPACITY_EXCEEDED,
    BSR_STATUS_SUCCESS,
    BsrMatrix,
    BsrTripletMap,
    ScaledBsr,
    SparseTypeError,
    SparseValueError,
    Topology,
    bsr_matrix_t,
    bsr_set_zero,
    bsr_zeros,
)
from ._ops import (
    bsr_assign,
    bsr_compress,
    bsr_copy,
    bsr_diag,
    bsr_from_triplets,
    bsr_get_diag,
    bsr_identity,
    bsr_set_diag,
    bsr_set_from_mapped_values,
    bsr_set_from_triplets,
    bsr_set_identity,
    bsr_set_transpose,
    bsr_transposed,
)

__all__ = [
    "BSR_STATUS_ROW_CAPACITY_EXCEEDED", "BSR_STATUS_SUCCESS", "BsrMatrix", "BsrTripletMap", "ScaledBsr",
    "SparseTypeError", "SparseValueError", "Topology", "bsr_assign", "bsr_axpy", "bsr_axpy_work_arrays",
    "bsr_block_index", "bsr_compress", "bsr_copy", "bsr_diag", "bsr_from_triplets", "bsr_get_diag", "bsr_identity",
    "bsr_matrix_t", "bsr_mm", "bsr_mm_work_arrays", "bsr_mv", "bsr_row_index", "bsr_scale", "bsr_set_diag",
    "bsr_set_from_mapped_values", "bsr_set_from_triplets", "bsr_set_identity", "bsr_set_transpose", "bsr_set_zero",
    "bsr_transposed", "bsr_zeros",
]
