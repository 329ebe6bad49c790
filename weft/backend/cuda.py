"""Typed IR -> CUDA C++ for NVRTC: the CPU renderer with the few things that differ overridden.

What differs from the CPU module: device qualifiers on the body, no OpenMP, and the entry point, a
``__global__`` kernel taking the ``Args`` struct and the launch grid by value, walking the flattened grid with a
grid-stride loop (so any grid size works with any block count). Everything else, the statements and the ops,
is the base renderer's, over the same ``weft/native`` headers compiled for the device.

Module interface (read by ``weft.cuda.launch``):
    ``extern "C" __global__ void weft_fwd(Args args, weft::Grid grid)``
    ``__device__ weft::ErrorState weft_error_storage``  (debug-mode error state, read with cuModuleGetGlobal)
"""

from __future__ import annotations

from .adjoint import AdjointRenderer
from .renderer import Renderer

#: Names the runtime looks up in a loaded module.
FWD_ENTRY = "weft_fwd"
BWD_ENTRY = "weft_bwd"
ERROR_SYMBOL = "weft_error_storage"

# Index computation for one grid point, shared by the forward and adjoint entries. 32-bit division when the grid
# fits (several times cheaper than 64-bit on the GPU); the innermost launch dimension varies fastest, as on the CPU.
_GRID_HELPERS = """\
struct GridIndex {
    int32_t i0, i1, i2, i3;
};

__device__ __forceinline__ GridIndex grid_index(const weft::Grid& g, weft::int64 flat, bool small) {
    GridIndex ix = {int32_t(flat), 0, 0, 0};
    if (g.ndim <= 1) return ix;
    if (small) {
        weft::uint32 r = weft::uint32(flat);
        if (g.ndim >= 4) { const weft::uint32 d = weft::uint32(g.dim[3]); ix.i3 = int32_t(r % d); r /= d; }
        if (g.ndim >= 3) { const weft::uint32 d = weft::uint32(g.dim[2]); ix.i2 = int32_t(r % d); r /= d; }
        const weft::uint32 d = weft::uint32(g.dim[1]);
        ix.i1 = int32_t(r % d);
        ix.i0 = int32_t(r / d);
    } else {
        weft::int64 r = flat;
        if (g.ndim >= 4) { ix.i3 = int32_t(r % g.dim[3]); r /= g.dim[3]; }
        if (g.ndim >= 3) { ix.i2 = int32_t(r % g.dim[2]); r /= g.dim[2]; }
        ix.i1 = int32_t(r % g.dim[1]);
        ix.i0 = int32_t(r / g.dim[1]);
    }
    return ix;
}

__device__ __forceinline__ weft::int64 grid_total(const weft::Grid& g) {
    return g.dim[0] * g.dim[1] * g.dim[2] * g.dim[3];
}

// Debug-mode bounds checks: the test inline, the message formatting in one out-of-line function (inlining it at
// every access makes NVRTC ~50x slower and the kernel far larger).
__device__ __noinline__ void report_out_of_bounds(const char* what, const char* kernel, const char* name,
                                                  const weft::int32* shape, int ndim, const weft::int64* idx) {
    char buf[400];
    weft::detail::format_index(buf, sizeof(buf), what, kernel, name, shape, ndim, idx);
    weft::report_error(1, buf);
}

template <typename T, typename... I>
__device__ __forceinline__ bool checked_access(const weft::array_t<T>& a, const char* what, const char* kernel,
                                               const char* name, I... idx) {
    if (a.data != nullptr && weft::detail::in_bounds(a.shape, weft::int64(idx)...)) return true;
    const weft::int64 ids[4] = {weft::int64(idx)...};
    report_out_of_bounds(a.data == nullptr ? "null array access" : what, kernel, name, a.shape, int(sizeof...(I)),
                         ids);
    return false;
}

// other array kinds (indexed, fixed): the generic check, out of line
template <typename A, typename... I>
__device__ __noinline__ bool checked_access(const A& a, const char* what, const char* kernel, const char* name,
                                            I... idx) {
    return weft::check(a, what, kernel, name, idx...);
}"""


class CudaTarget:
    """The CUDA target's hooks (overriding renderer.CpuTarget's), shared by the forward and adjoint renderers:
    device qualifiers, out-of-line bounds checks, the grid-stride ``__global__`` entry and the Args layout check."""

    body_qualifiers = "__device__ __forceinline__"
    struct_fn_qualifiers = "static WEFT_FN"  # the struct operators, callable on the device
    check_fn = "checked_access"  # debug-mode bounds checks, out of line (see _GRID_HELPERS)
    int64 = "weft::int64"
    fresh_adjoint_slots = False  # tile_cuda.h has no store forms of tile adjoints (autodiff/decls.py)

    def layout_check(self) -> str:
        """A ``static_assert`` that the device's ``Args`` has the size Python packs (NVRTC checks it), when the
        render options name that size."""
        total = self.opts.args_bytes
        if not total:
            return ""
        return (f'static_assert(sizeof(Args) == {total}, "internal error: argument layout mismatch between Python '
                f'({total} bytes) and the device");')

    def render_entry(self, name: str = FWD_ENTRY, body: str = "fwd_body") -> str:
        """A grid-stride ``__global__`` entry calling ``body<C>`` once per grid point."""
        call = "(args, ix.i0, ix.i1, ix.i2, ix.i3, flat);"
        return (
            f'extern "C" __global__ void {name}(const Args args, const weft::Grid grid) {{\n'
            f"    const bool contig = {self.contiguity_check()};\n"
            "    const weft::int64 total = grid_total(grid);\n"
            "    const bool small = total <= weft::int64(0xffffffffLL);\n"
            "    const weft::int64 step = weft::int64(gridDim.x) * blockDim.x;\n"
            "    for (weft::int64 flat = weft::int64(blockIdx.x) * blockDim.x + threadIdx.x; flat < total; "
            "flat += step) {\n"
            "        const GridIndex ix = grid_index(grid, flat, small);\n"
            f"        if (contig) {body}<true>{call}\n"
            f"        else {body}<false>{call}\n"
            "    }\n"
            "}"
        )


class CudaRenderer(CudaTarget, Renderer):
    """Renders one kernel specialisation's forward pass as a CUDA module for NVRTC."""

    def render_module(self) -> str:
        parts = [self.header(), self.render_structs(self.fn.params), "namespace {", self.render_args_struct(),
                 _GRID_HELPERS, self.render_body("fwd_body", self.fn.body), "}  // namespace",
                 self.render_entry(), self.layout_check()]
        return "\n".join(p for p in parts if p) + "\n"


class CudaAdjointRenderer(CudaTarget, AdjointRenderer):
    """Renders one kernel specialisation's backward pass as a CUDA module for NVRTC."""

    def render_module(self) -> str:
        parts = [self.header(), self.render_structs(self.fn.params), "namespace {", self.render_args_struct(),
                 _GRID_HELPERS, self.render_bwd_body(), "}  // namespace", self.render_bwd_entry(), self.layout_check()]
        return "\n".join(p for p in parts if p) + "\n"
