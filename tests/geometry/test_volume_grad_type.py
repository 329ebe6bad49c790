"""A gradient variable of the wrong shape for volume_sample_grad is refused with the reason (Warp's text), not a list
of argument types: the op's rule returns ops.registry.Rejected, which the compile error shows."""

import pytest

import weft as wp
from weft.ir import types as T
from weft.ops import registry

mat34f = wp.types.matrix(shape=(3, 4), dtype=wp.float32)


def test_transposed_gradient_is_refused_with_the_reason():
    @wp.kernel(module="unique")
    def k(volume: wp.uint64, points: wp.array[wp.vec3], values: wp.array[wp.vec4f]):
        grad = mat34f()
        values[0] = wp.volume_sample_grad(volume, points[0], wp.Volume.LINEAR, grad, dtype=wp.vec4f)

    points = wp.zeros(1, dtype=wp.vec3)
    values = wp.zeros(1, dtype=wp.vec4f)
    with pytest.raises(wp.CompileError, match=r"volume_sample_grad\(\): Incompatible gradient type, expected "
                                               r"mat43f, got mat34f"):
        wp.launch(k, dim=1, inputs=[wp.uint64(0), points, values])


def test_index_sampling_refuses_a_scalar_gradient_with_the_reason():
    @wp.kernel(module="unique")
    def k(volume: wp.uint64, data: wp.array[float], out: wp.array[float]):
        g = wp.float32(0.0)
        out[0] = wp.volume_sample_grad_index(volume, wp.vec3(0.0), wp.Volume.LINEAR, data, 0.0, g)

    with pytest.raises(wp.CompileError, match="Incompatible gradient type, expected vec3f, got float32"):
        wp.launch(k, dim=1, inputs=[wp.uint64(0), wp.zeros(1, dtype=float), wp.zeros(1, dtype=float)])


def test_rejected_is_no_match_and_explains():
    args = (T.UINT64, T.VectorType(3, T.FLOAT32), T.INT32, T.MatrixType(3, 4, T.FLOAT32))
    attrs = (T.VectorType(4, T.FLOAT32),)
    assert registry.resolve("volume_sample_grad", args, attrs) is None
    assert registry.explain("volume_sample_grad", args, attrs) == (
        "Incompatible gradient type, expected mat43f, got mat34f")
    good = args[:3] + (T.MatrixType(4, 3, T.FLOAT32),)
    _, results = registry.resolve("volume_sample_grad", good, attrs)
    assert results == (attrs[0], good[3])
    assert registry.explain("volume_sample_grad", good, attrs) is None
    # an argument of another kind (not a value type) is simply no match, without a reason
    assert registry.explain("volume_sample_grad", args[:3] + (T.ArrayType(T.FLOAT32, 1),), attrs) is None
