"""``from __future__ import annotations``: string annotations of @wp.func parameters are evaluated (in the module's
globals and the function's closure) and type-checked like any other annotation."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp


@wp.func
def half(x: wp.float32, v: wp.vec3) -> wp.vec3:
    return v * x * 0.5


def make_kernel(scale_type):
    @wp.func
    def scaled(x: scale_type) -> scale_type:  # a closure name in a string annotation
        return x * scale_type(2.0)

    @wp.kernel
    def k(out: wp.array(dtype=wp.vec3)):
        out[0] = half(scaled(scale_type(1.5)), wp.vec3(1.0, 2.0, 3.0))

    return k


def test_string_annotations_resolved_and_checked():
    out = wp.zeros(1, dtype=wp.vec3)
    wp.launch(make_kernel(wp.float32), dim=1, inputs=[out])
    np.testing.assert_allclose(out.numpy(), [[1.5, 3.0, 4.5]])

    @wp.kernel
    def wrong(out: wp.array(dtype=wp.vec3)):
        out[0] = half(wp.float64(1.0), wp.vec3(1.0, 2.0, 3.0))  # float64 for a float32 parameter

    with pytest.raises(wp.CompileError, match="argument .x. expects float32"):
        wp.launch(wrong, dim=1, inputs=[out])
