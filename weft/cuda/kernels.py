"""Small device kernels the runtime needs on GPUs (gradient accumulation), written in weft itself.

Generic over the dtype (``wp.Any``), so one definition serves scalars, vectors and matrices; launched on
contiguous 1-D views of the arrays.
"""

from __future__ import annotations

import typing

import weft as wp


@wp.kernel
def accumulate_1d(dst: wp.array(dtype=typing.Any), src: wp.array(dtype=typing.Any)):
    i = wp.tid()
    dst[i] = dst[i] + src[i]
