"""wp.overload on kernels declares specialisations that compile() builds (as Warp's module load does) and rejects
types the annotations do not accept; launch(max_blocks=) caps the CUDA blocks (the grid-stride entries still run every
point) and is accepted, with no effect, on the CPU; a recorded launch's block_dim, stream and max_blocks reach its
backward launch."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
from weft.types.mapping import to_ir


@wp.kernel
def k_generic_scale(x: wp.array(dtype=wp.Float), s: wp.Float, y: wp.array(dtype=wp.Float)):
    i = wp.tid()
    y[i] = x[i] * s


def test_overload_declares_what_compile_builds():
    wp.overload(k_generic_scale, [wp.array(dtype=wp.float64), wp.float64, wp.array(dtype=wp.float64)])
    spec = k_generic_scale.compile()
    assert spec.types[1] == to_ir(wp.float64) and spec.types[0].dtype == to_ir(wp.float64)
    assert spec.fwd is not None  # built, not only declared
    x = wp.array(np.arange(4.0), dtype=wp.float64)
    y = wp.zeros(4, dtype=wp.float64)
    wp.launch(k_generic_scale, dim=4, inputs=[x, np.float64(2.0), y])
    np.testing.assert_array_equal(y.numpy(), 2.0 * np.arange(4.0))
    assert k_generic_scale.specialize(spec.types) is spec  # the launch used the declared specialisation


def test_overload_rejects_types_the_annotations_do_not_accept():
    with pytest.raises(wp.Error, match="takes 3 arguments"):
        wp.overload(k_generic_scale, [wp.array(dtype=float), float])
    with pytest.raises(wp.Error, match="argument 'x' is annotated"):
        wp.overload(k_generic_scale, [wp.array2d(dtype=float), float, wp.array(dtype=float)])
    with pytest.raises(wp.Error, match="no parameter named z"):
        wp.overload(k_generic_scale, {"z": float})


def test_launch_max_blocks_on_cpu_runs_every_point():
    x = wp.array(np.arange(1000, dtype=np.float32))
    y = wp.zeros(1000, dtype=float)
    wp.launch(k_generic_scale, dim=1000, inputs=[x, 3.0, y], max_blocks=1)
    np.testing.assert_array_equal(y.numpy(), 3.0 * np.arange(1000, dtype=np.float32))


def test_recorded_launch_keeps_block_dim_stream_and_max_blocks():
    x = wp.array(np.arange(8, dtype=np.float32), requires_grad=True)
    y = wp.zeros(8, dtype=float, requires_grad=True)
    tape = wp.Tape()
    old = wp.config.enable_cpu_blocks
    wp.config.enable_cpu_blocks = True  # else a CPU launch runs (and records) one lane per block, as in Warp 1.19
    try:
        with tape:
            wp.launch(k_generic_scale, dim=8, inputs=[x, 2.0, y], block_dim=64, max_blocks=3)
    finally:
        wp.config.enable_cpu_blocks = old
    (rec,) = [r for r in tape.launches if hasattr(r, "block_dim")]
    assert rec.block_dim == 64 and rec.max_blocks == 3 and rec.stream is None
    tape.backward(grads={y: wp.ones(8, dtype=float)})
    np.testing.assert_array_equal(x.grad.numpy(), np.full(8, 2.0, dtype=np.float32))
