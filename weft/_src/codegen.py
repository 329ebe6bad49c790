"""``warp._src.codegen``: the error classes kernels raise; Warp's code generator itself has no weft counterpart
(weft lowers kernels to its own IR and renders C++ from that)."""

from __future__ import annotations

from ..errors import CompileError, TypeError_
from ._unsupported import unsupported

WarpCodegenError = CompileError
WarpCodegenTypeError = TypeError_

_WHY = "Warp's Python-to-C++ code generator; weft lowers kernels to its own IR (weft.ir) and renders from that"
Adjoint = unsupported("warp._src.codegen.Adjoint", _WHY)
Var = unsupported("warp._src.codegen.Var", _WHY)
codegen_func_forward = unsupported("warp._src.codegen.codegen_func_forward", _WHY)
cuda_kernel_forward_name = unsupported("warp._src.codegen.cuda_kernel_forward_name", _WHY)
cuda_kernel_backward_name = unsupported("warp._src.codegen.cuda_kernel_backward_name", _WHY)
resolve_grid_stride = unsupported("warp._src.codegen.resolve_grid_stride", _WHY)
_is_tid_call = unsupported("warp._src.codegen._is_tid_call", _WHY)
_codegen_lock = unsupported("warp._src.codegen._codegen_lock", "Warp's module-builder lock; weft locks per kernel")
