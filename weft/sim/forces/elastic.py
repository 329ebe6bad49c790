"""Elastic element forces: damped springs, membrane FEM triangles, dihedral bending, Neo-Hookean tetrahedra.

Each kernel stores the force on every corner of its element in a scratch array (``f[element * corners + corner]``)
and ``gather.gather_forces`` sums them per particle (no atomics); the formulas are warp.sim 1.7's Euler integrator
models (triangles and tets: Neo-Hookean with rest stability, Smith et al. 2018; bending: Bridson et al. 2003).
"""

from dataclasses import dataclass
from operator import attrgetter

import weft as wp

from ...runtime.tape import OverwriteError, active_tape
from . import elastic_adjoint, tape_params
from .gather import gather_forces, gather_list, launch_gather, scatter_gradients, scratch


@wp.kernel
def eval_springs(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), spring_indices: wp.array(dtype=int),
                 spring_rest_lengths: wp.array(dtype=float), spring_stiffness: wp.array(dtype=float),
                 spring_damping: wp.array(dtype=float), base: int, f: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    i = spring_indices[tid * 2 + 0]
    j = spring_indices[tid * 2 + 1]
    if i == -1 or j == -1:
        f[base + tid * 2 + 0] = wp.vec3()
        f[base + tid * 2 + 1] = wp.vec3()
        return
    ke = spring_stiffness[tid]
    kd = spring_damping[tid]
    rest = spring_rest_lengths[tid]
    xij = x[i] - x[j]
    vij = v[i] - v[j]
    length = wp.length(xij)
    direction = xij / length
    c = length - rest
    dcdt = wp.dot(direction, vij)
    fs = direction * (ke * c + kd * dcdt)
    f[base + tid * 2 + 0] = -fs
    f[base + tid * 2 + 1] = fs


@wp.kernel
def eval_triangles(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), indices: wp.array2d(dtype=int),
                   pose: wp.array(dtype=wp.mat22), activation: wp.array(dtype=float),
                   materials: wp.array2d(dtype=float), base: int, f: wp.array(dtype=wp.vec3)):
    """Membrane FEM triangles without aerodynamic lift and drag (every triangle's coefficients zero, the default):
    without the branch and the ``acos`` of the lift, GCC vectorises the loop over triangles (28.7 -> 14.7 us CPU for
    the seed sphere's 960 surface triangles, one thread)."""
    tid = wp.tid()
    k_mu = materials[tid, 0]
    k_lambda = materials[tid, 1]
    k_damp = materials[tid, 2]
    i = indices[tid, 0]
    j = indices[tid, 1]
    k = indices[tid, 2]
    x0 = x[i]
    v0 = v[i]
    x10 = x[j] - x0
    x20 = x[k] - x0
    v1 = v[j]
    v2 = v[k]
    v10 = v1 - v0
    v20 = v2 - v0
    Dm = pose[tid]
    inv_rest_area = wp.determinant(Dm) * 2.0
    rest_area = 1.0 / inv_rest_area
    # stiffnesses are per unit rest area
    k_mu = k_mu * rest_area
    k_lambda = k_lambda * rest_area
    k_damp = k_damp * rest_area
    # deformation gradient columns F = Xs Dm and its rate
    F1 = x10 * Dm[0, 0] + x20 * Dm[1, 0]
    F2 = x10 * Dm[0, 1] + x20 * Dm[1, 1]
    dFdt1 = v10 * Dm[0, 0] + v20 * Dm[1, 0]
    dFdt2 = v10 * Dm[0, 1] + v20 * Dm[1, 1]
    P1 = F1 * k_mu + dFdt1 * k_damp
    P2 = F2 * k_mu + dFdt2 * k_damp
    f1 = P1 * Dm[0, 0] + P2 * Dm[0, 1]
    f2 = P1 * Dm[1, 0] + P2 * Dm[1, 1]
    alpha = 1.0 + k_mu / k_lambda
    # area preservation and its damping
    n = wp.cross(x10, x20)
    area = wp.length(n) * 0.5
    c = area * inv_rest_area - alpha + activation[tid]
    n = wp.normalize(n)
    dcdq = wp.cross(x20, n) * inv_rest_area * 0.5
    dcdr = wp.cross(n, x10) * inv_rest_area * 0.5
    f_area = k_lambda * c
    dcdt = wp.dot(dcdq, v1) + wp.dot(dcdr, v2) - wp.dot(dcdq + dcdr, v0)
    f_damp = k_damp * dcdt
    f1 = f1 + dcdq * (f_area + f_damp)
    f2 = f2 + dcdr * (f_area + f_damp)
    f0 = f1 + f2
    f[base + tid * 3 + 0] = f0
    f[base + tid * 3 + 1] = -f1
    f[base + tid * 3 + 2] = -f2


@wp.kernel
def eval_triangles_aero(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), indices: wp.array2d(dtype=int),
                        materials: wp.array2d(dtype=float), base: int, f: wp.array(dtype=wp.vec3)):
    """Aerodynamic drag and lift of the triangles with a non-zero coefficient, added to the corner forces that
    ``eval_triangles`` stored (launched after it, only when some triangle has one)."""
    tid = wp.tid()
    k_drag = materials[tid, 3]
    k_lift = materials[tid, 4]
    if k_drag == 0.0 and k_lift == 0.0:
        return
    i = indices[tid, 0]
    j = indices[tid, 1]
    k = indices[tid, 2]
    x0 = x[i]
    n = wp.cross(x[j] - x0, x[k] - x0)
    area = wp.length(n) * 0.5
    n = wp.normalize(n)
    vmid = (v[i] + v[j] + v[k]) * 0.3333
    vdir = wp.normalize(vmid)
    f_drag = vmid * (k_drag * area * wp.abs(wp.dot(n, vmid)))
    f_lift = n * (k_lift * area * (1.5707963267948966 - wp.acos(wp.dot(n, vdir)))) * wp.dot(vmid, vmid)
    fa = f_drag + f_lift
    wp.atomic_sub(f, base + tid * 3 + 0, fa)
    wp.atomic_sub(f, base + tid * 3 + 1, fa)
    wp.atomic_sub(f, base + tid * 3 + 2, fa)


@wp.kernel
def eval_bending(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), indices: wp.array2d(dtype=int),
                 rest: wp.array(dtype=float), bending_properties: wp.array2d(dtype=float),
                 base: int, f: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    ke = bending_properties[tid, 0]
    kd = bending_properties[tid, 1]
    i = indices[tid, 0]
    j = indices[tid, 1]
    k = indices[tid, 2]
    l = indices[tid, 3]
    f[base + tid * 4 + 0] = wp.vec3()
    f[base + tid * 4 + 1] = wp.vec3()
    f[base + tid * 4 + 2] = wp.vec3()
    f[base + tid * 4 + 3] = wp.vec3()
    if i == -1 or j == -1 or k == -1 or l == -1:
        return
    x1 = x[i]
    x2 = x[j]
    x3 = x[k]
    x4 = x[l]
    n1 = wp.cross(x3 - x1, x4 - x1)
    n2 = wp.cross(x4 - x2, x3 - x2)
    n1_length = wp.length(n1)
    n2_length = wp.length(n2)
    if n1_length < 1.0e-6 or n2_length < 1.0e-6:
        return
    rcp_n1 = 1.0 / n1_length
    rcp_n2 = 1.0 / n2_length
    cos_theta = wp.dot(n1, n2) * rcp_n1 * rcp_n2
    n1 = n1 * rcp_n1 * rcp_n1
    n2 = n2 * rcp_n2 * rcp_n2
    e = x4 - x3
    e_hat = wp.normalize(e)
    e_length = wp.length(e)
    s = wp.sign(wp.dot(wp.cross(n2, n1), e_hat))
    angle = wp.acos(cos_theta) * s
    d1 = n1 * e_length
    d2 = n2 * e_length
    d3 = n1 * wp.dot(x1 - x4, e_hat) + n2 * wp.dot(x2 - x4, e_hat)
    d4 = n1 * wp.dot(x3 - x1, e_hat) + n2 * wp.dot(x3 - x2, e_hat)
    f_elastic = ke * (angle - rest[tid])
    f_damp = kd * (wp.dot(d1, v[i]) + wp.dot(d2, v[j]) + wp.dot(d3, v[k]) + wp.dot(d4, v[l]))
    f_total = -e_length * (f_elastic + f_damp)
    f[base + tid * 4 + 0] = d1 * f_total
    f[base + tid * 4 + 1] = d2 * f_total
    f[base + tid * 4 + 2] = d3 * f_total
    f[base + tid * 4 + 3] = d4 * f_total


@wp.func
def _cols(a: wp.vec3, b: wp.vec3, c: wp.vec3):
    return wp.mat33(a[0], b[0], c[0], a[1], b[1], c[1], a[2], b[2], c[2])


@wp.kernel
def eval_tetrahedra(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), indices: wp.array2d(dtype=int),
                    pose: wp.array(dtype=wp.mat33), activation: wp.array(dtype=float),
                    materials: wp.array2d(dtype=float), base: int, f: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    i = indices[tid, 0]
    j = indices[tid, 1]
    k = indices[tid, 2]
    l = indices[tid, 3]
    act = activation[tid]
    k_mu = materials[tid, 0]
    k_lambda = materials[tid, 1]
    k_damp = materials[tid, 2]
    x0 = x[i]
    v0 = v[i]
    x10 = x[j] - x0
    x20 = x[k] - x0
    x30 = x[l] - x0
    v1 = v[j]
    v2 = v[k]
    v3 = v[l]
    Dm = pose[tid]
    inv_rest_volume = wp.determinant(Dm) * 6.0
    rest_volume = 1.0 / inv_rest_volume
    alpha = 1.0 + k_mu / k_lambda - k_mu / (4.0 * k_lambda)
    k_mu = k_mu * rest_volume
    k_lambda = k_lambda * rest_volume
    k_damp = k_damp * rest_volume
    F = _cols(x10, x20, x30) * Dm
    dFdt = _cols(v1 - v0, v2 - v0, v3 - v0) * Dm
    # deviatoric part, Ic = tr(F^T F)
    Ic = wp.ddot(F, F)
    P = F * k_mu * (1.0 - 1.0 / (Ic + 1.0)) + dFdt * k_damp
    H = P * wp.transpose(Dm)
    f1 = wp.vec3(H[0, 0], H[1, 0], H[2, 0])
    f2 = wp.vec3(H[0, 1], H[1, 1], H[2, 1])
    f3 = wp.vec3(H[0, 2], H[1, 2], H[2, 2])
    # hydrostatic part: J = det F and its gradient with respect to the three edge vectors
    J = wp.determinant(F)
    s = inv_rest_volume / 6.0
    dJdx1 = wp.cross(x20, x30) * s
    dJdx2 = wp.cross(x30, x10) * s
    dJdx3 = wp.cross(x10, x20) * s
    f_volume = (J - alpha + act) * k_lambda
    f_damp = (wp.dot(dJdx1, v1) + wp.dot(dJdx2, v2) + wp.dot(dJdx3, v3)) * k_damp
    f_total = f_volume + f_damp
    f1 = f1 + dJdx1 * f_total
    f2 = f2 + dJdx2 * f_total
    f3 = f3 + dJdx3 * f_total
    f0 = -(f1 + f2 + f3)
    f[base + tid * 4 + 0] = -f0
    f[base + tid * 4 + 1] = -f1
    f[base + tid * 4 + 2] = -f2
    f[base + tid * 4 + 3] = -f3


@dataclass(frozen=True)
class _Segment:
    kernel: object
    key: str
    count: int
    corners: int
    indices: object
    inputs: tuple


# the model arrays the segments hold: a segment list is rebuilt when any of them is replaced
_MODEL_INPUTS = ("spring_indices", "spring_rest_length", "spring_stiffness", "spring_damping", "tri_indices",
                 "tri_poses", "tri_materials", "edge_indices", "edge_rest_angle", "edge_bending_properties",
                 "tet_indices", "tet_poses", "tet_materials")
_model_inputs = attrgetter(*_MODEL_INPUTS)


def _segments(model, control, kinds) -> list:
    table = {
        "spring": lambda: _Segment(eval_springs, "spring", model.spring_count, 2, model.spring_indices,
                                   (model.spring_rest_length, model.spring_stiffness, model.spring_damping)),
        "tri": lambda: _Segment(eval_triangles, "tri", model.tri_count, 3, model.tri_indices,
                                (model.tri_poses, control.tri_activations, model.tri_materials)),
        "edge": lambda: _Segment(eval_bending, "edge", model.edge_count, 4, model.edge_indices,
                                 (model.edge_rest_angle, model.edge_bending_properties)),
        "tet": lambda: _Segment(eval_tetrahedra, "tet", model.tet_count, 4, model.tet_indices,
                                (model.tet_poses, control.tet_activations, model.tet_materials)),
    }
    counts = {"spring": model.spring_count, "tri": model.tri_count, "edge": model.edge_count,
              "tet": model.tet_count}
    return [table[k]() for k in kinds if counts[k]]


def eval_elastic_forces(model, state, control, particle_f, kinds=("spring", "tri", "edge", "tet")) -> None:
    """Add the forces of the given element kinds to ``particle_f``: one kernel per kind writes corner forces into
    one scratch array, one gather sums them per particle. On a tape, springs, triangles (without lift and drag),
    bending edges and tetrahedra are differentiated by the hand-written adjoints of ``elastic_adjoint`` (one recorded
    callback per call); triangles with lift or drag by the generic adjoints of their kernels."""
    # the segments of the last (control, kinds) seen, kept on the model (rebuilding them costs a few us per step)
    ident = (kinds, id(getattr(control, "tri_activations", None)), id(getattr(control, "tet_activations", None)),
             *map(id, _model_inputs(model)))
    last = model.__dict__.get("_elastic_segments")
    if last is None or last[0] != ident:
        segs = _segments(model, control, kinds)
        key = "+".join(sg.key for sg in segs)
        last = model.__dict__["_elastic_segments"] = (ident, segs, key, sum(sg.count * sg.corners for sg in segs),
                                                      control)
    _, segs, key, total, _ = last
    if not segs:
        return
    elem_f = scratch(model, state, key, total)
    glist = gather_list(model, key, [sg.indices for sg in segs], [sg.corners for sg in segs])
    tape = active_tape.get()
    if tape is None or elem_f.grad is None or particle_f.grad is None:
        base = 0
        for sg in segs:
            wp.launch(sg.kernel, dim=sg.count,
                      inputs=[state.particle_q, state.particle_qd, sg.indices, *sg.inputs, base], outputs=[elem_f],
                      device=model.device)
            if sg.key == "tri":  # lift and drag (a quick pass where every coefficient is zero)
                _launch_aero(model, state, sg, base, elem_f)
            base += sg.count * sg.corners
        launch_gather(model, glist, elem_f, particle_f)
        return
    hand = []
    base = 0
    for sg in segs:
        own = _has_hand_adjoint(model, sg)
        wp.launch(sg.kernel, dim=sg.count, inputs=[state.particle_q, state.particle_qd, sg.indices, *sg.inputs, base],
                  outputs=[elem_f], device=model.device, record_tape=not own)
        if sg.key == "tri" and not own:  # lift or drag: their kernel is differentiated by its generic adjoint
            _launch_aero(model, state, sg, base, elem_f)
        if own:
            hand.append((sg, base))
        base += sg.count * sg.corners
    wp.launch(gather_forces, dim=model.particle_count, inputs=[glist.offsets, glist.slots, elem_f],
              outputs=[particle_f], device=model.device, record_tape=False)
    _record_adjoint(model, tape, state, segs, hand, glist, elem_f, particle_f, total)


def _tri_aero(model, sg) -> bool:
    """Whether any triangle of ``sg`` has a lift or drag coefficient (checked again whenever the material array is
    written through weft: a launch, ``assign``, ``fill_``; not when it is changed through a NumPy view)."""
    mats = sg.inputs[2]
    hit = model.__dict__.get("_tri_aero")
    if hit is None or hit[0] is not mats or hit[1] != mats._version:
        m = mats.numpy()
        hit = model.__dict__["_tri_aero"] = (mats, mats._version, bool(m.size and m[:, 3:5].any()))
    return hit[2]


def model_has_aero(model) -> bool:
    """Whether any triangle of ``model`` has a lift or drag coefficient now."""
    mats = model.tri_materials
    return bool(mats is not None and model.tri_count and mats.numpy()[:, 3:5].any())


def _launch_aero(model, state, sg, base, elem_f) -> None:
    wp.launch(eval_triangles_aero, dim=sg.count,
              inputs=[state.particle_q, state.particle_qd, sg.indices, sg.inputs[2], base], outputs=[elem_f],
              device=model.device)


def _has_hand_adjoint(model, sg) -> bool:
    """Whether ``sg`` is differentiated by a hand-written adjoint (triangles only without lift and drag)."""
    if sg.key != "tri":
        return sg.key in _HAND_ADJOINTS
    return not _tri_aero(model, sg)


_HAND_ADJOINTS = {"spring": elastic_adjoint.adj_springs, "tri": elastic_adjoint.adj_triangles,
                  "edge": elastic_adjoint.adj_bending, "tet": elastic_adjoint.adj_tetrahedra}

#: the kinds whose hand-written adjoints store their corner gradients corner-major (base + corner * count + element)
_CORNER_MAJOR = ("tri", "edge", "tet")


def _no_grad(model, a):
    """``a.grad``, or a zero-length array of its dtype and rank (gather_adjoints skips those)."""
    if a.grad is not None:
        return a.grad
    cache = model.__dict__.setdefault("_empty_grads", {})
    key = (a.dtype, a.ndim)
    if key not in cache:
        cache[key] = wp.zeros((0,) * a.ndim if a.ndim > 1 else 0, dtype=a.dtype, device=model.device)
    return cache[key]


def grad_or_sink(model, a):
    """``a.grad``, or a scratch array of ``a``'s shape that the adjoint kernels write and nothing reads."""
    if a.grad is not None:
        return a.grad
    cache = model.__dict__.setdefault("_grad_sinks", {})
    key = (a.dtype, a.shape)
    if key not in cache:
        cache[key] = wp.zeros(a.shape, dtype=a.dtype, device=model.device)
    return cache[key]


class _TapePlan:
    """What every taped call with one element set records alike on one tape (its record list): the kinds with
    hand-written adjoints and their bases, the parameter sums of the row-layout kinds (tape_params) and the gather
    slots in corner-major order. Made at the first such call on the tape and kept in the tape's ``__dict__``:
    rebuilding it each step (two sum lookups, the slot cache, a dict) was a few microseconds of every taped step."""

    __slots__ = ("generic", "glist", "hand_keys", "inputs", "launches", "rows", "segs", "slots")

    def __init__(self, model, tape, segs, hand, glist):
        self.launches, self.segs, self.glist = tape.launches, segs, glist
        self.hand_keys = tuple((sg.key, base) for sg, base in hand)
        self.generic = len(hand) < len(segs)
        self.inputs = tuple(a for sg, _ in hand for a in sg.inputs)  # the element data every step reads
        # tetrahedra and triangles: element data in rows, corner gradients corner-major, parameter gradients summed
        # per tape (tape_params); the gather of the corner gradients reads their slots in that order
        self.rows = {sg.key: tape_params.tape_sums(model, tape, sg, grad_or_sink)
                     for sg, base in hand if sg.key in tape_params.LAYOUTS}
        moved = [(base, sg.count, sg.corners) for sg, base in hand if sg.key in _CORNER_MAJOR]
        self.slots = tape_params.corner_major_slots(model, glist, moved) if moved else glist.slots


def _tape_plan(model, tape, segs, hand, glist) -> _TapePlan:
    plans = tape.__dict__.setdefault("_sim_elastic_plans", {})
    key = (id(model), id(segs))
    plan = plans.get(key)
    if plan is None or plan.launches is not tape.launches or plan.segs is not segs or plan.glist is not glist \
            or plan.hand_keys != tuple((sg.key, base) for sg, base in hand):
        plan = plans[key] = _TapePlan(model, tape, segs, hand, glist)
    return plan


def _record_adjoint(model, tape, state, segs, hand, glist, elem_f, particle_f, total) -> None:
    x, v = state.particle_q, state.particle_qd
    versions = (x._version, v._version)
    # the particle step that wrote this state, when it was the last thing recorded: its adjoint runs right after this
    # one, in the same pass over the particles as the gather (particle_adjoint._StepAdjoint.fuse_gather)
    made_by = getattr(tape.launches[-1], "backward", None) if tape.launches else None
    if getattr(made_by, "xn", None) is not x or getattr(made_by, "vn", None) is not v \
            or not hasattr(made_by, "fuse_gather"):
        made_by = None
    plan = _tape_plan(model, tape, segs, hand, glist)
    generic, slots = plan.generic, plan.slots
    rows = {k: (sums, sums.next_step()) for k, sums in plan.rows.items()}

    def backward():
        if (x._version, v._version) != versions:
            name = "particle_q" if x._version != versions[0] else "particle_qd"
            raise OverwriteError(f"the elastic forces of a simulate() step read state.{name}, which was then "
                                 "overwritten; replaying them in backward would give a wrong gradient. Simulate into a "
                                 "new State each step while a Tape records (or use wp.checkpoint).")
        if generic:  # the element kernels with generic adjoints read their corner-force gradients from elem_f.grad
            wp.launch(scatter_gradients, dim=glist.entries, inputs=[glist.owners, glist.slots, particle_f.grad],
                      outputs=[elem_f.grad], device=model.device, record_tape=False)
        adj_x, adj_v = _adjoint_scratch(model, total)
        if generic:  # the slots no hand-written adjoint writes must hold zeros
            adj_x.zero_()
            adj_v.zero_()
        for sg, base in hand:
            if sg.key in rows:  # material and rest-pose gradients: summed over the steps (tape_params)
                sums, step = rows[sg.key]
                pose, act, mats = sg.inputs
                if step == sums.steps - 1:  # the first step adjoint of this backward pass
                    sums.begin_pass(sg.indices, pose, mats)
                wp.launch(_HAND_ADJOINTS[sg.key], dim=sg.count,
                          inputs=[x, v, particle_f.grad, sums.idx_t, sums.pose_t, act, sums.mat_t, base,
                                  grad_or_sink(model, act), sums.acc], outputs=[adj_x, adj_v], device=model.device,
                          record_tape=False)
                continue
            grads = [grad_or_sink(model, a) for a in sg.inputs]
            wp.launch(_HAND_ADJOINTS[sg.key], dim=sg.count,
                      inputs=[x, v, particle_f.grad, sg.indices, *sg.inputs, base, *grads],
                      outputs=[adj_x, adj_v], device=model.device, record_tape=False)
        if made_by is not None and made_by.fuse_gather(glist.offsets, slots, adj_x, adj_v):
            return
        if x.grad is not None or v.grad is not None:
            wp.launch(elastic_adjoint.gather_adjoints, dim=model.particle_count,
                      inputs=[glist.offsets, slots, adj_x, adj_v, _no_grad(model, x), _no_grad(model, v)],
                      device=model.device, record_tape=False)

    tape_params.record_on_tape(tape, backward, [elem_f, particle_f, x, v], plan.inputs)


def _adjoint_scratch(model, size: int):
    """Per-slot position and velocity gradients of the hand-written adjoints (slots of other kernels stay zero)."""
    cache = model.__dict__.setdefault("_adjoint_scratch", {})
    hit = cache.get(size)
    if hit is None:
        hit = cache[size] = (wp.zeros(size, dtype=wp.vec3, device=model.device),
                             wp.zeros(size, dtype=wp.vec3, device=model.device))
    return hit


def eval_spring_forces(model, state, particle_f) -> None:
    """Add the forces of all springs to ``particle_f``."""
    eval_elastic_forces(model, state, None, particle_f, ("spring",))


def eval_triangle_forces(model, state, control, particle_f) -> None:
    """Add the membrane, area, damping, lift and drag forces of all FEM triangles to ``particle_f``."""
    eval_elastic_forces(model, state, control, particle_f, ("tri",))


def eval_bending_forces(model, state, particle_f) -> None:
    """Add the bending forces of all interior edges to ``particle_f``."""
    eval_elastic_forces(model, state, None, particle_f, ("edge",))


def eval_tetrahedral_forces(model, state, control, particle_f) -> None:
    """Add the Neo-Hookean forces of all tetrahedra to ``particle_f``."""
    eval_elastic_forces(model, state, control, particle_f, ("tet",))
