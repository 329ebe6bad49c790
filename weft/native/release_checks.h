// weft native: included by kernel modules whose ops report errors in release mode too (geometry queries with an
// invalid id, an array slice with a run-time step of zero). The export tells the launch to read the module's error
// state after every launch, not only in debug mode.
#pragma once
#if !WEFT_CUDA
extern "C" __attribute__((visibility("default"))) int weft_release_checks() { return 1; }
#endif
