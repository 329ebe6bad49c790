"""Values weft's Python side shares with its C++ headers (weft/native), in one place.

Each constant names the header that defines its C++ counterpart; tests/native/test_abi.py reads those headers and
fails when a value here and there disagree.
"""

from __future__ import annotations

import struct

#: weft::ErrorState::code (error.h): what a module's error state reports
ERROR_NONE = 0
ERROR_BOUNDS = 1  # an out-of-bounds access (debug mode), or a component index out of range
ERROR_ASSERT = 2  # assert in kernel code (debug mode)
ERROR_EXPECT = 3  # wp.expect_* failed: printed by the kernel, not raised (as in Warp)
ERROR_OUT_OF_MEMORY = 4  # a backward pass ran out of memory (loop stack, deferred gradient adds)
#: sizeof(weft::ErrorState::message) (error.h)
ERROR_MESSAGE_BYTES = 480

#: weft::array_t::flags bits (atomic.h, tile.h): set by the backward launch on the descriptors it passes
ARRAY_FLAG_REPLAY_WRITES = 1  # the replay stores into this array (a private copy of a snapshot)
ARRAY_FLAG_CONSUME_GRAD = 2  # a store's adjoint reads the gradient and clears it (the array is overwritten later)
ARRAY_FLAG_GRAD_PLAIN = 4  # the launch owns this gradient: plain adds, no atomics (weft::kGradPlain)

#: weft::kEntry* (launch.h): what a generated CPU entry (weft_fwd, weft_bwd) returns
ENTRY_DONE = 0
ENTRY_NEEDS_STRIDED = 1  # a non-contiguous array (or a backward launch outside the deferred form): run the module's
# general instantiation (compiled on demand)
ENTRY_GRID_UNFIT = 2  # a grid the entry's loop cannot index (launches are checked before; an internal error)

#: weft::kDeferLanes (launch.h): grid points per chunk of a deferred-form backward
DEFER_LANES = 128

#: weft::Grid (launch.h), passed by value to CUDA entries: int64 dim[4]; int32 ndim; padding
GRID = struct.Struct("<4qi4x")
#: the head of weft::ErrorState: code, count (the message follows)
ERROR_HEAD = struct.Struct("<ii")


def error_report(code: int, count: int, message: str) -> str | None:
    """The text of the error a launch raises for an error state, or None when it raises nothing."""
    if code in (ERROR_NONE, ERROR_EXPECT):
        return None  # expect_* failures are printed by the kernel, as in Warp
    more = f" (and {count - 1} more)" if count > 1 else ""
    kind = "assertion failed" if code == ERROR_ASSERT else "error"
    return f"{kind}: {message}{more}"
