// weft's FFT runtime library, float: the forward passes of tile_fft / tile_ifft on float data, compiled once per
// kernel cache (weft/toolchain/runtime.py) and loaded with global symbol visibility before kernel modules that call
// it (fft.h declares this entry point instead of compiling the passes into every such kernel).
#include "weft.h"

extern "C" WEFT_EXPORT bool weft_rt_fft_f32(const weft::fft::stage_t* st, int nstages, const float* twr,
                                            const float* twi, const float* tabr, const float* tabi, float* xr,
                                            float* xi, float* yr, float* yi, int batch) {
    return weft::fft::run_stages<false, float>(st, nstages, twr, twi, tabr, tabi, xr, xi, yr, yi, batch);
}
