// weft's FFT runtime library, double: the forward passes of tile_fft / tile_ifft on double data (see fft_f32.cpp).
#include "weft.h"

extern "C" WEFT_EXPORT bool weft_rt_fft_f64(const weft::fft::stage_t* st, int nstages, const double* twr,
                                            const double* twi, const double* tabr, const double* tabi, double* xr,
                                            double* xi, double* yr, double* yi, int batch) {
    return weft::fft::run_stages<false, double>(st, nstages, twr, twi, tabr, tabi, xr, xi, yr, yi, batch);
}
