"""Small kernels the runtime launches on accelerators (gradient accumulation), written in weft itself.

Generic over the dtype (``typing.Any``), so one definition serves scalars, vectors and matrices; launched on
contiguous 1-D views of the arrays.
"""

from __future__ import annotations

import typing

from ..builtins import tid
from ..kernel import kernel
from .array import array


@kernel
def accumulate_1d(dst: array(dtype=typing.Any), src: array(dtype=typing.Any)):
    i = tid()
    dst[i] = dst[i] + src[i]
