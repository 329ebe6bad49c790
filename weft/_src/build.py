"""``warp._src.build``: Warp's native build and LTO cache. weft compiles with its own toolchain
(:mod:`weft.toolchain`) and has no MathDx/LTO path, so every name raises when used."""

from __future__ import annotations

from ._unsupported import unsupported

_WHY = "weft builds kernels with its own toolchain (weft.toolchain) and has no MathDx LTO cache"
init_kernel_cache = unsupported("warp._src.build.init_kernel_cache", _WHY)
get_cached_lto_meta = unsupported("warp._src.build.get_cached_lto_meta", _WHY)
get_lto_cache_dir = unsupported("warp._src.build.get_lto_cache_dir", _WHY)
hash_symbol = unsupported("warp._src.build.hash_symbol", _WHY)
_build_lto_base = unsupported("warp._src.build._build_lto_base", _WHY)
_gemm_lto_alignment_unsupported = unsupported("warp._src.build._gemm_lto_alignment_unsupported", _WHY)
_gemm_operand_alignments = unsupported("warp._src.build._gemm_operand_alignments", _WHY)
