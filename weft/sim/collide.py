"""Collision detection: soft contacts between particles and shapes (signed distance functions of spheres, boxes,
capsules, cylinders, cones, finite planes and triangle meshes through ``wp.Mesh``), used by the Euler integrators' contact forces.

``collide(model, state)`` fills ``model.soft_contact_*``; the ground plane (``model.ground``) is handled by the
integrators directly. Rigid shape-shape contacts belong to the rigid-body part of weft.sim.
"""

import sys
from collections import deque

import weft as wp

from ..runtime.pool import grads_off
from ..runtime.tape import active_tape
from .model import (
    GEO_BOX,
    GEO_CAPSULE,
    GEO_CONE,
    GEO_CYLINDER,
    GEO_MESH,
    GEO_PLANE,
    GEO_SDF,
    GEO_SPHERE,
    PARTICLE_FLAG_ACTIVE,
    ModelShapeGeometry,
    SimError,
)


@wp.func
def sphere_sdf(center: wp.vec3, radius: float, p: wp.vec3):
    """Signed distance from ``p`` to a sphere."""
    return wp.length(p - center) - radius


@wp.func
def sphere_sdf_grad(center: wp.vec3, radius: float, p: wp.vec3):
    """Outward normal of a sphere at ``p``."""
    return wp.normalize(p - center)


@wp.func
def box_sdf(upper: wp.vec3, p: wp.vec3):
    """Signed distance from ``p`` to a box of half extents ``upper``."""
    qx = wp.abs(p[0]) - upper[0]
    qy = wp.abs(p[1]) - upper[1]
    qz = wp.abs(p[2]) - upper[2]
    e = wp.vec3(wp.max(qx, 0.0), wp.max(qy, 0.0), wp.max(qz, 0.0))
    return wp.length(e) + wp.min(wp.max(qx, wp.max(qy, qz)), 0.0)


@wp.func
def box_sdf_grad(upper: wp.vec3, p: wp.vec3):
    """Outward normal of a box at ``p`` (the nearest face's normal inside)."""
    qx = wp.abs(p[0]) - upper[0]
    qy = wp.abs(p[1]) - upper[1]
    qz = wp.abs(p[2]) - upper[2]
    if qx > 0.0 or qy > 0.0 or qz > 0.0:
        x = wp.clamp(p[0], -upper[0], upper[0])
        y = wp.clamp(p[1], -upper[1], upper[1])
        z = wp.clamp(p[2], -upper[2], upper[2])
        return wp.normalize(p - wp.vec3(x, y, z))
    sx = wp.sign(p[0])
    sy = wp.sign(p[1])
    sz = wp.sign(p[2])
    if (qx > qy and qx > qz) or (qy == 0.0 and qz == 0.0):
        return wp.vec3(sx, 0.0, 0.0)
    if (qy > qx and qy > qz) or (qx == 0.0 and qz == 0.0):
        return wp.vec3(0.0, sy, 0.0)
    return wp.vec3(0.0, 0.0, sz)


@wp.func
def capsule_sdf(radius: float, half_height: float, p: wp.vec3):
    """Signed distance from ``p`` to a capsule along Y."""
    if p[1] > half_height:
        return wp.length(wp.vec3(p[0], p[1] - half_height, p[2])) - radius
    if p[1] < -half_height:
        return wp.length(wp.vec3(p[0], p[1] + half_height, p[2])) - radius
    return wp.length(wp.vec3(p[0], 0.0, p[2])) - radius


@wp.func
def capsule_sdf_grad(radius: float, half_height: float, p: wp.vec3):
    """Outward normal of a capsule along Y."""
    if p[1] > half_height:
        return wp.normalize(wp.vec3(p[0], p[1] - half_height, p[2]))
    if p[1] < -half_height:
        return wp.normalize(wp.vec3(p[0], p[1] + half_height, p[2]))
    return wp.normalize(wp.vec3(p[0], 0.0, p[2]))


@wp.func
def cylinder_sdf(radius: float, half_height: float, p: wp.vec3):
    """Signed distance from ``p`` to a cylinder along Y."""
    dx = wp.length(wp.vec3(p[0], 0.0, p[2])) - radius
    dy = wp.abs(p[1]) - half_height
    return wp.min(wp.max(dx, dy), 0.0) + wp.length(wp.vec2(wp.max(dx, 0.0), wp.max(dy, 0.0)))


@wp.func
def cylinder_sdf_grad(radius: float, half_height: float, p: wp.vec3):
    """Outward normal of a cylinder along Y."""
    dx = wp.length(wp.vec3(p[0], 0.0, p[2])) - radius
    dy = wp.abs(p[1]) - half_height
    if dx > dy:
        return wp.normalize(wp.vec3(p[0], 0.0, p[2]))
    return wp.vec3(0.0, wp.sign(p[1]), 0.0)


@wp.func
def cone_sdf(radius: float, half_height: float, p: wp.vec3):
    """Signed distance (approximate, as warp.sim's) from ``p`` to a cone along Y."""
    dx = wp.length(wp.vec3(p[0], 0.0, p[2])) - radius * (p[1] + half_height) / (2.0 * half_height)
    dy = wp.abs(p[1]) - half_height
    return wp.min(wp.max(dx, dy), 0.0) + wp.length(wp.vec2(wp.max(dx, 0.0), wp.max(dy, 0.0)))


@wp.func
def cone_sdf_grad(radius: float, half_height: float, p: wp.vec3):
    """Normal of :func:`cone_sdf`."""
    dx = wp.length(wp.vec3(p[0], 0.0, p[2])) - radius * (p[1] + half_height) / (2.0 * half_height)
    dy = wp.abs(p[1]) - half_height
    if dy < 0.0 or dx == 0.0:
        return wp.vec3(0.0, wp.sign(p[1]), 0.0)
    return wp.normalize(wp.vec3(p[0], 0.0, p[2])) + wp.vec3(0.0, radius / (2.0 * half_height), 0.0)


@wp.func
def plane_sdf(width: float, length: float, p: wp.vec3):
    """Signed distance to the XZ plane, or to the finite quad of half extents ``width`` x ``length``."""
    if width > 0.0 and length > 0.0:
        d = wp.max(wp.abs(p[0]) - width, wp.abs(p[2]) - length)
        return wp.max(d, wp.abs(p[1]))
    return p[1]


@wp.func
def mesh_sdf(mesh: wp.uint64, p: wp.vec3, max_dist: float):
    """Signed distance from ``p`` to a closed mesh (negative inside, by the winding-number sign of
    ``mesh_query_point_sign_normal``); ``max_dist`` when no face lies within ``max_dist``."""
    face = int(0)  # noqa: UP018, RUF046
    fu = float(0.0)  # noqa: UP018
    fv = float(0.0)  # noqa: UP018
    sign = float(0.0)  # noqa: UP018
    if wp.mesh_query_point_sign_normal(mesh, p, max_dist, sign, face, fu, fv):
        return wp.length(p - wp.mesh_eval_position(mesh, face, fu, fv)) * sign
    return max_dist


@wp.func
def counter_increment(counter: wp.array(dtype=int), counter_index: int, tids: wp.array(dtype=int), tid: int):
    """Take the next slot of ``counter`` and remember it for thread ``tid`` (so the adjoint replay reuses it)."""
    count = wp.atomic_add(counter, counter_index, 1)
    tids[tid] = count
    return count


@wp.func_replay(counter_increment)
def replay_counter_increment(counter: wp.array(dtype=int), counter_index: int, tids: wp.array(dtype=int), tid: int):
    return tids[tid]


@wp.func
def _shape_sdf(geo_type: int, scale: wp.vec3, x: wp.vec3):
    d = float(1.0e6)  # noqa: UP018 - a mutable float local, as in Warp
    n = wp.vec3()
    if geo_type == GEO_SPHERE:
        d = sphere_sdf(wp.vec3(), scale[0], x)
        n = sphere_sdf_grad(wp.vec3(), scale[0], x)
    elif geo_type == GEO_BOX:
        d = box_sdf(scale, x)
        n = box_sdf_grad(scale, x)
    elif geo_type == GEO_CAPSULE:
        d = capsule_sdf(scale[0], scale[1], x)
        n = capsule_sdf_grad(scale[0], scale[1], x)
    elif geo_type == GEO_CYLINDER:
        d = cylinder_sdf(scale[0], scale[1], x)
        n = cylinder_sdf_grad(scale[0], scale[1], x)
    elif geo_type == GEO_CONE:
        d = cone_sdf(scale[0], scale[1], x)
        n = cone_sdf_grad(scale[0], scale[1], x)
    elif geo_type == GEO_PLANE:
        d = plane_sdf(scale[0], scale[1], x)
        n = wp.vec3(0.0, 1.0, 0.0)
    return d, n


@wp.func
def _particle_shape_geometry(px: wp.vec3, radius: float, X_wb: wp.transform, X_bs: wp.transform,
                             geo: ModelShapeGeometry, shape_index: int, margin: float):
    """A particle at ``px`` (world) against shape ``shape_index`` on the body at ``X_wb``: the particle in shape
    space, its signed distance, the shape-space normal and the shape's velocity there (mesh shapes; zero otherwise).
    One function for the contact search and for the taped contact geometry, so both use the same arithmetic."""
    X_ws = wp.transform_multiply(X_wb, X_bs)
    x_local = wp.transform_point(wp.transform_inverse(X_ws), px)
    geo_type = geo.type[shape_index]
    geo_scale = geo.scale[shape_index]
    d, n = _shape_sdf(geo_type, geo_scale, x_local)
    v = wp.vec3()
    if geo_type == GEO_MESH:
        mesh = geo.source[shape_index]
        face_index = int(0)  # noqa: UP018, RUF046 - mutable locals the query writes, as in Warp
        face_u = float(0.0)  # noqa: UP018
        face_v = float(0.0)  # noqa: UP018
        sign = float(0.0)  # noqa: UP018
        min_scale = wp.min(wp.min(geo_scale[0], geo_scale[1]), geo_scale[2])
        if wp.mesh_query_point_sign_normal(mesh, wp.cw_div(x_local, geo_scale), margin + radius / min_scale, sign,
                                           face_index, face_u, face_v):
            shape_p = wp.cw_mul(wp.mesh_eval_position(mesh, face_index, face_u, face_v), geo_scale)
            shape_v = wp.cw_mul(wp.mesh_eval_velocity(mesh, face_index, face_u, face_v), geo_scale)
            delta = x_local - shape_p
            d = wp.length(delta) * sign
            n = wp.normalize(delta) * sign
            v = shape_v
    return x_local, d, n, v, X_ws


@wp.kernel
def create_soft_contacts(particle_x: wp.array(dtype=wp.vec3), particle_radius: wp.array(dtype=float),
                         particle_flags: wp.array(dtype=wp.uint32), body_X_wb: wp.array(dtype=wp.transform),
                         shape_X_bs: wp.array(dtype=wp.transform), shape_body: wp.array(dtype=int),
                         geo: ModelShapeGeometry, margin: float, soft_contact_max: int, shape_count: int,
                         soft_contact_count: wp.array(dtype=int), soft_contact_particle: wp.array(dtype=int),
                         soft_contact_shape: wp.array(dtype=int), soft_contact_body_pos: wp.array(dtype=wp.vec3),
                         soft_contact_body_vel: wp.array(dtype=wp.vec3), soft_contact_normal: wp.array(dtype=wp.vec3),
                         soft_contact_tids: wp.array(dtype=int)):
    tid = wp.tid()
    particle_index = tid // shape_count
    shape_index = tid % shape_count
    if (particle_flags[particle_index] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
        return
    rigid_index = shape_body[shape_index]
    px = particle_x[particle_index]
    radius = particle_radius[particle_index]
    X_wb = wp.transform_identity()
    if rigid_index >= 0:
        X_wb = body_X_wb[rigid_index]
    X_bs = shape_X_bs[shape_index]
    x_local, d, n, v, X_ws = _particle_shape_geometry(px, radius, X_wb, X_bs, geo, shape_index, margin)
    if d < margin + radius:
        index = counter_increment(soft_contact_count, 0, soft_contact_tids, tid)
        if index < soft_contact_max:
            soft_contact_shape[index] = shape_index
            soft_contact_body_pos[index] = wp.transform_point(X_bs, x_local - n * d)
            soft_contact_body_vel[index] = wp.transform_vector(X_bs, v)
            soft_contact_particle[index] = particle_index
            soft_contact_normal[index] = wp.transform_vector(X_ws, n)


@wp.kernel
def soft_contact_geometry(particle_x: wp.array(dtype=wp.vec3), particle_radius: wp.array(dtype=float),
                          body_X_wb: wp.array(dtype=wp.transform), shape_X_bs: wp.array(dtype=wp.transform),
                          shape_body: wp.array(dtype=int), geo: ModelShapeGeometry, margin: float,
                          soft_contact_max: int, soft_contact_count: wp.array(dtype=int),
                          soft_contact_particle: wp.array(dtype=int), soft_contact_shape: wp.array(dtype=int),
                          soft_contact_body_pos: wp.array(dtype=wp.vec3), soft_contact_body_vel: wp.array(dtype=wp.vec3),
                          soft_contact_normal: wp.array(dtype=wp.vec3)):
    """The contact point, velocity and normal of every contact ``create_soft_contacts`` found, from the particle and
    shape of its slot (the same arithmetic): on a Tape this kernel is the differentiated one, so the backward runs
    over the contacts only, with no contact counter to replay."""
    c = wp.tid()
    if c >= wp.min(soft_contact_count[0], soft_contact_max):
        return
    particle_index = soft_contact_particle[c]
    shape_index = soft_contact_shape[c]
    rigid_index = shape_body[shape_index]
    px = particle_x[particle_index]
    radius = particle_radius[particle_index]
    X_wb = wp.transform_identity()
    if rigid_index >= 0:
        X_wb = body_X_wb[rigid_index]
    X_bs = shape_X_bs[shape_index]
    x_local, d, n, v, X_ws = _particle_shape_geometry(px, radius, X_wb, X_bs, geo, shape_index, margin)
    soft_contact_body_pos[c] = wp.transform_point(X_bs, x_local - n * d)
    soft_contact_body_vel[c] = wp.transform_vector(X_bs, v)
    soft_contact_normal[c] = wp.transform_vector(X_ws, n)


_UNSUPPORTED = {int(GEO_SDF): "SDF (wp.Volume shapes)"}

#: the model's soft-contact arrays that collide() fills
_CONTACT_ARRAYS = ("soft_contact_body_pos", "soft_contact_body_vel", "soft_contact_normal", "soft_contact_count",
                   "soft_contact_particle", "soft_contact_shape", "soft_contact_tids")
#: the contact arrays with gradients (the first: ``_fresh_contact_arrays`` looks at its gradient)
_CONTACT_GRADS = ("soft_contact_body_pos", "soft_contact_body_vel", "soft_contact_normal")
#: the most contact array sets a model keeps for reuse
_POOL_MAX = 16


def _refcounts(objects: tuple) -> list:
    """References to each of ``objects`` (compared with those of an object only a tuple holds, measured the same way)."""
    return [sys.getrefcount(o) for o in objects]


def _fresh_contact_arrays(model) -> None:
    """Give the model soft-contact arrays that nothing else holds (a Tape's records of earlier steps keep theirs): the
    oldest set of the model's pool if only the pool references it any more (its gradients and count zeroed), else
    new arrays. Making seven arrays (three with gradients) cost ~150 us of Python per collide call."""
    pool = model.__dict__.get("_soft_contact_pool")
    if pool is None:
        pool = model.__dict__["_soft_contact_pool"] = deque()
    current = tuple(getattr(model, name) for name in _CONTACT_ARRAYS)
    if all(a is not None for a in current) and (not pool or pool[-1][0] is not current[0]):
        pool.append(current)
    # a set only the pool's tuple references (a tape record, a user's variable or the model keep it in use), with
    # gradient buffers exactly if new arrays get them (none inside wp.checkpoint's forward pass)
    grads = not grads_off.get()
    if (len(pool) > 1 and (pool[0][0].grad is not None) == grads
            and max(_refcounts(pool[0])) <= _refcounts((object(),))[0]):
        arrays = pool.popleft()
        for name, a in zip(_CONTACT_ARRAYS, arrays):
            setattr(model, name, a)
            if a.grad is not None:
                a.grad.zero_()
        model.soft_contact_count.zero_()
        return
    if len(pool) > _POOL_MAX:  # the oldest sets are in use (a long taped rollout): stop tracking them
        pool.popleft()
    for name in _CONTACT_ARRAYS:
        a = getattr(model, name)
        if name in _CONTACT_GRADS:
            setattr(model, name, wp.empty_like(a, requires_grad=True))
        else:
            setattr(model, name, wp.zeros_like(a) if name == "soft_contact_count" else wp.empty_like(a))


def collide(model, state, edge_sdf_iter: int = 10, iterate_mesh_vertices: bool = True, requires_grad=None) -> None:
    """Find soft contacts between the particles of ``state`` and the model's shapes (all but the ground plane,
    which the integrators handle) within ``model.soft_contact_margin`` plus the particle radius.

    With gradients (``requires_grad``, default the model's) the contact arrays are allocated afresh on each call,
    so a ``wp.Tape`` over many steps keeps each step's contacts.
    """
    if requires_grad is None:
        requires_grad = model.requires_grad
    model.check_state(state, "state")
    from .integrators.euler import prepare_euler

    if model.body_count:
        from .rigid_collide import collide_rigid, has_rigid_contacts

        if has_rigid_contacts(model):
            prepare_euler(model)
        collide_rigid(model, state, edge_sdf_iter, requires_grad)
    if not (model.particle_count and model.shape_count > 1):
        return
    types = getattr(model, "_shape_types_host", None)
    if types is None:
        types = model._shape_types_host = model.shape_geo.type.numpy()[:-1].tolist()
    for t in set(types):
        if t in _UNSUPPORTED:
            raise SimError(f"collide: particle contacts with {_UNSUPPORTED[t]} shapes are not supported yet")
    if state.body_q is None:
        body_q = getattr(model, "_empty_body_q", None)
        if body_q is None:
            body_q = model._empty_body_q = wp.zeros(0, dtype=wp.transform, device=model.device)
    else:
        body_q = state.body_q
    prepare_euler(model)
    if requires_grad:
        # with gradients asked for explicitly: the arrays being replaced may have none (wp.checkpoint's forward
        # pass allocates without gradients), and the contact forces' adjoint flows back through these
        _fresh_contact_arrays(model)
    else:
        model.soft_contact_count.zero_()
    # on a Tape the search is not recorded: soft_contact_geometry recomputes the found contacts' points and normals
    # recorded, and its adjoint is the contacts' backward (the search's generic adjoint replayed every particle-shape
    # pair and the contact counter: cloth drape 190 -> ... us per substep)
    taped = active_tape.get() is not None
    wp.launch(create_soft_contacts, dim=model.particle_count * (model.shape_count - 1),
              inputs=[state.particle_q, model.particle_radius, model.particle_flags, body_q, model.shape_transform,
                      model.shape_body, model.shape_geo, model.soft_contact_margin, model.soft_contact_max,
                      model.shape_count - 1],
              outputs=[model.soft_contact_count, model.soft_contact_particle, model.soft_contact_shape,
                       model.soft_contact_body_pos, model.soft_contact_body_vel, model.soft_contact_normal,
                       model.soft_contact_tids], device=model.device, record_tape=not taped)
    if taped:
        wp.launch(soft_contact_geometry, dim=model.soft_contact_max,
                  inputs=[state.particle_q, model.particle_radius, body_q, model.shape_transform, model.shape_body,
                          model.shape_geo, model.soft_contact_margin, model.soft_contact_max, model.soft_contact_count,
                          model.soft_contact_particle, model.soft_contact_shape],
                  outputs=[model.soft_contact_body_pos, model.soft_contact_body_vel, model.soft_contact_normal],
                  device=model.device)


# warp.sim 1.7.2 keeps its triangle-mesh self-proximity queries in this module (weft: trimesh_collision.py)
from .trimesh_collision import (
    EDGE_COLLISION_BUFFER_OVERFLOW_INDEX,  # noqa: F401
    TRI_COLLISION_BUFFER_OVERFLOW_INDEX,  # noqa: F401
    TRI_CONTACT_FEATURE_EDGE_AB,  # noqa: F401
    TRI_CONTACT_FEATURE_EDGE_AC,  # noqa: F401
    TRI_CONTACT_FEATURE_EDGE_BC,  # noqa: F401
    TRI_CONTACT_FEATURE_FACE_INTERIOR,  # noqa: F401
    TRI_CONTACT_FEATURE_VERTEX_A,  # noqa: F401
    TRI_CONTACT_FEATURE_VERTEX_B,  # noqa: F401
    TRI_CONTACT_FEATURE_VERTEX_C,  # noqa: F401
    TRI_TRI_COLLISION_BUFFER_OVERFLOW_INDEX,  # noqa: F401
    VERTEX_COLLISION_BUFFER_OVERFLOW_INDEX,  # noqa: F401
    TriMeshCollisionDetector,  # noqa: F401
    TriMeshCollisionInfo,  # noqa: F401
    compute_edge_aabbs,  # noqa: F401
    compute_tri_aabb,  # noqa: F401
    compute_tri_aabbs,  # noqa: F401
    edge_colliding_edges_detection_kernel,  # noqa: F401
    get_edge_colliding_edges,  # noqa: F401
    get_edge_colliding_edges_count,  # noqa: F401
    get_triangle_colliding_vertices,  # noqa: F401
    get_triangle_colliding_vertices_count,  # noqa: F401
    get_vertex_colliding_triangles,  # noqa: F401
    get_vertex_colliding_triangles_count,  # noqa: F401
    init_triangle_collision_data_kernel,  # noqa: F401
    tri_is_neighbor,  # noqa: F401
    triangle_closest_point,  # noqa: F401
    triangle_triangle_collision_detection_kernel,  # noqa: F401
    vertex_adjacent_to_triangle,  # noqa: F401
    vertex_triangle_collision_detection_kernel,  # noqa: F401
)
