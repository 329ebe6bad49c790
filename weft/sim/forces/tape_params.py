"""Element-parameter gradients summed over a taped rollout and applied once, for the hand-written tetrahedron adjoint.

A tetrahedron's material and rest-pose gradients are linear in a few per-element sums (``elastic_adjoint.
adj_tetrahedra``): every step adds to one accumulator per tape and model, laid out one row per sum (contiguous
vector stores, where a strided ``mat33`` gradient is a scatter on the CPU), and one callback turns the sums into
``tet_materials.grad`` and ``tet_poses.grad`` at the end of the backward pass. That callback is recorded on the tape
just before the first step that uses the accumulator, so ``tape.backward`` (which runs the records in reverse) runs it
after every step's adjoint. The step whose adjoint runs first in a backward pass (the last one recorded) zeroes the
sums and re-reads the element data into its row layout (so arrays edited between backward passes are honoured, also
through NumPy views), which keeps repeated or interrupted backward passes correct.
"""

from __future__ import annotations

import numpy as np

import weft as wp

from .elastic_adjoint import TET_ACC_ROWS, tet_columns, tet_param_grads


class TetTapeSums:
    """The per-tape, per-model state of the tetrahedron adjoint: sums, row-layout element data, recorded steps."""

    __slots__ = ("acc", "idx_t", "launches", "mat_t", "model", "pose_t", "steps")

    def __init__(self, model, launches, count: int):
        dev = model.device
        self.model = model
        self.launches = launches  # the tape's record list when this was made (tape.reset() replaces it)
        self.acc = wp.zeros((TET_ACC_ROWS, count), dtype=float, device=dev)
        self.idx_t = wp.zeros((4, count), dtype=int, device=dev)
        self.pose_t = wp.zeros((9, count), dtype=float, device=dev)
        self.mat_t = wp.zeros((3, count), dtype=float, device=dev)
        self.steps = 0

    def begin_pass(self, indices, pose, materials) -> None:
        """Zero the sums and copy the element data into rows (the first step adjoint of a backward pass)."""
        self.acc.zero_()
        wp.launch(tet_columns, dim=indices.shape[0], inputs=[indices, pose, materials],
                  outputs=[self.idx_t, self.pose_t, self.mat_t], device=self.model.device, record_tape=False)


def tet_tape_sums(model, tape, seg, grad_or_sink) -> tuple[TetTapeSums, int]:
    """The sums of ``seg`` (the tetrahedron segment) on ``tape`` and this step's index among the steps recorded with
    them; the first call for a tape and model records the callback that applies the sums."""
    pose, materials = seg.inputs[0], seg.inputs[2]
    table = tape.__dict__.setdefault("_sim_tet_sums", {})
    key = (id(model), id(seg.indices), id(pose), id(materials))
    sums = table.get(key)
    if sums is None or sums.launches is not tape.launches or sums.model is not model:
        sums = table[key] = TetTapeSums(model, tape.launches, seg.count)

        def apply():
            if pose.grad is None and materials.grad is None:
                return
            wp.launch(tet_param_grads, dim=seg.count,
                      inputs=[pose, sums.acc, grad_or_sink(model, materials), grad_or_sink(model, pose)],
                      device=model.device, record_tape=False)

        tape.record_func(apply, [pose, materials])
    index = sums.steps
    sums.steps += 1
    return sums, index


def corner_major_slots(model, glist, base: int, count: int, corners: int):
    """``glist.slots`` with the slots of the segment at ``base`` (``count`` elements of ``corners`` corners) moved
    from element-major (base + element * corners + corner) to corner-major order (base + corner * count + element),
    the layout ``adj_tetrahedra`` writes; cached per gather list."""
    cache = model.__dict__.setdefault("_corner_major_slots", {})
    hit = cache.get((base, count, corners))
    if hit is not None and hit[0] is glist:
        return hit[1]
    slots = glist.slots.numpy().astype(np.int64)
    rel = slots - base
    inside = (rel >= 0) & (rel < count * corners)
    moved = np.where(inside, base + (rel % corners) * count + rel // corners, slots)
    arr = wp.array(moved.astype(np.int32), dtype=wp.int32, device=model.device)
    cache[(base, count, corners)] = (glist, arr)
    return arr
