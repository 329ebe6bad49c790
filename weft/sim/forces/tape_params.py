"""Element-parameter gradients summed over a taped rollout and applied once, for the hand-written tetrahedron and
triangle adjoints.

An element's material and rest-pose gradients are linear in a few per-element sums (``elastic_adjoint.
adj_tetrahedra``, ``adj_triangles``): every step adds to one accumulator per tape, model and element kind, laid out
one row per sum (contiguous vector stores, where a strided ``mat33`` gradient is a scatter on the CPU), and one
callback turns the sums into the ``*_materials.grad`` and ``*_poses.grad`` at the end of the backward pass. That callback is recorded on the tape
just before the first step that uses the accumulator, so ``tape.backward`` (which runs the records in reverse) runs it
after every step's adjoint. The step whose adjoint runs first in a backward pass (the last one recorded) zeroes the
sums and re-reads the element data into its row layout (so arrays edited between backward passes are honoured, also
through NumPy views), which keeps repeated or interrupted backward passes correct.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import weft as wp

from . import elastic_adjoint as ea


def _tri_pose_grad(p, acc, g) -> None:
    """NumPy ``tri_param_grads``: add the rest-pose gradient of the sums ``acc`` (rows 0-3) to ``g`` (n, 4)."""
    g += acc[0:4].T


def _tet_pose_grad(p, acc, g) -> None:
    """NumPy ``tet_param_grads``: add sum(S) Dm + cof(Dm) sum(adj_det) to ``g`` (n, 9), from the rest poses in rows
    ``p`` (9, n; p[3 i + j] = Dm[i, j]), S symmetric from rows 0-5 of ``acc``, adj_det row 6 (row-wise arithmetic on
    contiguous rows: batched 3 x 3 products and np.cross took 1.6 ms for the sphere's 3,312 tetrahedra)."""
    s = ((acc[0], acc[3], acc[4]), (acc[3], acc[1], acc[5]), (acc[4], acc[5], acc[2]))
    col = [(p[k], p[3 + k], p[6 + k]) for k in range(3)]  # the columns of Dm
    for k in range(3):
        u, v = col[(k + 1) % 3], col[(k + 2) % 3]
        cof = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
        for i in range(3):
            g[:, 3 * i + k] += s[i][0] * p[k] + s[i][1] * p[3 + k] + s[i][2] * p[6 + k] + cof[i] * acc[6]


@dataclass(frozen=True)
class ElementLayout:
    """How one element kind's hand-written adjoint reads its data and sums its parameter gradients.

    On a CUDA device two small kernels copy the element data into rows and turn the sums into gradients; on the CPU
    (arrays in host memory) NumPy does both (once per backward pass: a few microseconds, and a cold backward
    compiles two kernels fewer)."""

    corners: int
    pose_rows: int  # components of a rest pose
    acc_rows: int  # per-element sums of the adjoint
    columns: object  # kernel: (indices, poses, materials) -> the same in rows
    apply: object  # kernel: (poses, sums, material gradient, rest-pose gradient), adds the sums' gradients
    pose_grad: object  # NumPy (pose rows, sums, gradient (n, pose_rows)): adds the rest-pose gradient on the CPU
    mat_rows: int  # the first row of the three material sums


LAYOUTS = {"tet": ElementLayout(4, 9, ea.TET_ACC_ROWS, ea.tet_columns, ea.tet_param_grads, _tet_pose_grad, 7),
           "tri": ElementLayout(3, 4, ea.TRI_ACC_ROWS, ea.tri_columns, ea.tri_param_grads, _tri_pose_grad, 4)}


def uses_kernels(device) -> bool:
    """Whether the row copies and gradient sums run as kernels on ``device`` (NumPy does them in host memory)."""
    return not device.impl.host_memory


class TapeSums:
    """The per-tape, per-model state of an element adjoint: sums, row-layout element data, recorded steps."""

    __slots__ = ("acc", "idx_t", "launches", "layout", "mat_t", "model", "pose_t", "steps")

    def __init__(self, model, launches, layout: ElementLayout, count: int):
        dev = model.device
        self.model = model
        self.layout = layout
        self.launches = launches  # the tape's record list when this was made (tape.reset() replaces it)
        # not zeroed here: every backward pass starts with begin_pass, which zeroes the sums and fills the rows
        self.acc = wp.empty((layout.acc_rows, count), dtype=float, device=dev)
        self.idx_t = wp.empty((layout.corners, count), dtype=int, device=dev)
        self.pose_t = wp.empty((layout.pose_rows, count), dtype=float, device=dev)
        self.mat_t = wp.empty((3, count), dtype=float, device=dev)
        self.steps = 0

    def next_step(self) -> int:
        """The index of a step recorded with these sums among those recorded so far (the backward pass's first step
        adjoint, the last index, starts the pass: ``begin_pass``)."""
        self.steps += 1
        return self.steps - 1

    def begin_pass(self, indices, pose, materials) -> None:
        """Zero the sums and copy the element data into rows (the first step adjoint of a backward pass)."""
        self.acc.zero_()
        if uses_kernels(self.model.device):
            wp.launch(self.layout.columns, dim=indices.shape[0], inputs=[indices, pose, materials],
                      outputs=[self.idx_t, self.pose_t, self.mat_t], device=self.model.device, record_tape=False)
            return
        n = indices.shape[0]
        self.idx_t.numpy()[...] = indices.numpy().reshape(n, -1)[:, :self.layout.corners].T
        self.pose_t.numpy()[...] = pose.numpy().reshape(n, self.layout.pose_rows).T
        self.mat_t.numpy()[...] = materials.numpy()[:, :3].T
        for a in (self.idx_t, self.pose_t, self.mat_t):
            a._mark_written()

    def apply(self, pose, materials, grad_or_sink) -> None:
        """Add the material and rest-pose gradients of the sums to ``materials.grad`` and ``pose.grad``
        (``grad_or_sink``: a gradient, or scratch for one the kernel writes and nothing reads)."""
        if uses_kernels(self.model.device):
            wp.launch(self.layout.apply, dim=pose.shape[0],
                      inputs=[pose, self.acc, grad_or_sink(self.model, materials), grad_or_sink(self.model, pose)],
                      device=self.model.device, record_tape=False)
            return
        acc = self.acc.numpy()
        if materials.grad is not None:
            m = self.layout.mat_rows
            materials.grad.numpy()[:, :3] += acc[m:m + 3].T
            materials.grad._mark_written()
        if pose.grad is not None:  # (pose_t holds this backward pass's rest poses in rows: begin_pass)
            self.layout.pose_grad(self.pose_t.numpy(), acc, pose.grad.numpy().reshape(-1, self.layout.pose_rows))
            pose.grad._mark_written()


def tape_sums(model, tape, seg, grad_or_sink) -> TapeSums:
    """The sums of ``seg`` (a tetrahedron or triangle segment) on ``tape``; the first call for a tape, model and
    segment records the callback that applies the sums. Each step using them takes its index with ``next_step``."""
    pose, materials = seg.inputs[0], seg.inputs[2]
    table = tape.__dict__.setdefault("_sim_element_sums", {})
    key = (seg.key, id(model), id(seg.indices), id(pose), id(materials))
    sums = table.get(key)
    if sums is None or sums.launches is not tape.launches or sums.model is not model:
        sums = table[key] = TapeSums(model, tape.launches, LAYOUTS[seg.key], seg.count)

        def apply():
            if pose.grad is None and materials.grad is None:
                return
            sums.apply(pose, materials, grad_or_sink)

        tape.record_func(apply, [pose, materials])
    return sums


def record_on_tape(tape, backward, arrays, constant) -> None:
    """``tape.record_func(backward, arrays + constant)``, passing the ``constant`` arrays (model arrays every step
    reads alike) only the first time on this tape's record list: the tape keeps each array it was given until
    ``reset``, so once is enough for ``zero()`` and ``gradients`` (the arrays of the records are read nowhere else)."""
    seen = tape.__dict__.get("_sim_constant_arrays")
    if seen is None or seen[0] is not tape.launches:
        seen = tape.__dict__["_sim_constant_arrays"] = (tape.launches, set())
    key = tuple(map(id, constant))
    if key in seen[1]:
        tape.record_func(backward, arrays)
        return
    seen[1].add(key)  # (the tape holds these arrays from now on, so their ids stay theirs)
    tape.record_func(backward, [*arrays, *constant])


def corner_major_slots(model, glist, segments):
    """``glist.slots`` with the slots of each segment ``(base, count, corners)`` moved from element-major
    (base + element * corners + corner) to corner-major order (base + corner * count + element), the layout the
    row-layout adjoints write; cached per gather list and segments."""
    cache = model.__dict__.setdefault("_corner_major_slots", {})
    key = tuple(segments)
    hit = cache.get(key)
    if hit is not None and hit[0] is glist:
        return hit[1]
    slots = glist.slots.numpy().astype(np.int64)
    moved = slots.copy()
    for base, count, corners in segments:
        rel = slots - base
        inside = (rel >= 0) & (rel < count * corners)
        moved = np.where(inside, base + (rel % corners) * count + rel // corners, moved)
    arr = wp.array(moved.astype(np.int32), dtype=wp.int32, device=model.device)
    cache[key] = (glist, arr)
    return arr
