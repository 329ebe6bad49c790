"""Gradients of mesh query outputs w.r.t. the query point and ray, against central finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp

from .meshes import uv_sphere


@wp.kernel
def closest_loss(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec3),
                 loss: wp.array(dtype=float)):
    i = wp.tid()
    r = wp.mesh_query_point(mesh, qs[i], 1.0e6)
    if r.result:
        c = wp.mesh_eval_position(mesh, r.face, r.u, r.v)
        # signed distance plus a linear functional of the closest point
        sd = r.sign * wp.length(qs[i] - c)
        wp.atomic_add(loss, 0, sd + wp.dot(w[i], c))


@wp.kernel
def ray_loss(mesh: wp.uint64, o: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec3),
             loss: wp.array(dtype=float)):
    i = wp.tid()
    r = wp.mesh_query_ray(mesh, o[i], d[i], 1.0e6)
    if r.result:
        c = wp.mesh_eval_position(mesh, r.face, r.u, r.v)
        wp.atomic_add(loss, 0, 0.5 * r.t + wp.dot(w[i], c))


def _grad_and_fd(kernel, mesh, inputs, wrt, w, eps=1e-3):
    """Tape gradient of the summed loss w.r.t. inputs[wrt], and its central-difference estimate (float64 sums)."""
    arrays = [wp.array(x, dtype=wp.vec3, requires_grad=(k == wrt)) for k, x in enumerate(inputs)]
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=len(inputs[0]), inputs=[mesh.id, *arrays, wp.array(w, dtype=wp.vec3), loss])
    tape.backward(loss)
    grad = arrays[wrt].grad.numpy().copy()

    def f(x):
        vals = [wp.array(v, dtype=wp.vec3) for v in inputs]
        vals[wrt] = wp.array(x, dtype=wp.vec3)
        out = wp.zeros(1, dtype=float)
        wp.launch(kernel, dim=len(inputs[0]), inputs=[mesh.id, *vals, wp.array(w, dtype=wp.vec3), out])
        return float(out.numpy()[0])

    base = inputs[wrt].astype(np.float32)
    fd = np.zeros_like(base, dtype=np.float64)
    for i in range(base.shape[0]):
        for k in range(3):
            xp, xm = base.copy(), base.copy()
            xp[i, k] += eps
            xm[i, k] -= eps
            fd[i, k] = (f(xp) - f(xm)) / (2 * eps)
    return grad, fd


def test_closest_point_gradient_inside_and_outside():
    pts, tris = uv_sphere(10, 12, radius=1.0)
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32))
    rng = np.random.default_rng(0)
    dirs = rng.normal(size=(8, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    radii = np.array([0.5, 0.7, 1.3, 1.6, 0.6, 1.4, 0.8, 1.2])[:, None]  # both sides of the surface
    q = (dirs * radii).astype(np.float32)
    w = rng.normal(size=(8, 3)).astype(np.float32)
    grad, fd = _grad_and_fd(closest_loss, mesh, [q], 0, w)
    # points whose closest feature is an edge or vertex region boundary are rare; the FD step stays in one region
    np.testing.assert_allclose(grad, fd, rtol=2e-2, atol=2e-2)
    # the signed distance alone: its gradient is the outward normal on both sides (the sign flips with the side
    # exactly as the direction to the closest point does)
    grad_sd, fd_sd = _grad_and_fd(closest_loss, mesh, [q], 0, np.zeros_like(w))
    np.testing.assert_allclose(grad_sd, fd_sd, rtol=2e-2, atol=2e-2)
    assert (np.einsum("ij,ij->i", grad_sd, dirs) > 0.9).all()


@pytest.mark.parametrize("wrt", [0, 1])
def test_ray_gradient(wrt):
    pts, tris = uv_sphere(10, 12, radius=1.0)
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32))
    rng = np.random.default_rng(1)
    o = (rng.normal(size=(6, 3)) * 0.2 + np.array([0.0, 0.0, -3.0])).astype(np.float32)
    d = (np.array([0.0, 0.0, 1.0]) + rng.normal(size=(6, 3)) * 0.1).astype(np.float32)
    w = rng.normal(size=(6, 3)).astype(np.float32)
    grad, fd = _grad_and_fd(ray_loss, mesh, [o, d], wrt, w)
    np.testing.assert_allclose(grad, fd, rtol=2e-2, atol=2e-2)


def _mesh_point_grad_and_fd(kernel, pts, tris, inputs, w, verts, eps=1e-3):
    """Gradient w.r.t. the mesh points (points.grad after tape.backward) and central differences on `verts`."""
    points = wp.array(pts, dtype=wp.vec3, requires_grad=True)
    mesh = wp.Mesh(points, wp.array(tris.reshape(-1), dtype=wp.int32))
    arrays = [wp.array(x, dtype=wp.vec3) for x in inputs]
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=len(inputs[0]), inputs=[mesh.id, *arrays, wp.array(w, dtype=wp.vec3), loss])
    tape.backward(loss)
    grad = points.grad.numpy()[verts].copy()

    def f(x):
        m = wp.Mesh(wp.array(x, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32))
        out = wp.zeros(1, dtype=float)
        wp.launch(kernel, dim=len(inputs[0]), inputs=[m.id, *arrays, wp.array(w, dtype=wp.vec3), out])
        return float(out.numpy()[0])

    fd = np.zeros((len(verts), 3))
    for n, i in enumerate(verts):
        for k in range(3):
            xp, xm = pts.copy(), pts.copy()
            xp[i, k] += eps
            xm[i, k] -= eps
            fd[n, k] = (f(xp) - f(xm)) / (2 * eps)
    return grad, fd


def test_gradient_wrt_mesh_points_closest_point_both_sides():
    # queries on both sides of the surface: the signed distance's gradient w.r.t. the vertices flips with the side
    # exactly as the sign does (a wrong sign would show as an opposite-signed FD mismatch)
    pts, tris = uv_sphere(6, 8, radius=1.0)
    rng = np.random.default_rng(3)
    dirs = rng.normal(size=(6, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    q = (dirs * np.array([0.6, 1.4, 0.7, 1.3, 0.8, 1.2])[:, None]).astype(np.float32)
    w = rng.normal(size=(6, 3)).astype(np.float32)
    verts = np.arange(len(pts))
    grad, fd = _mesh_point_grad_and_fd(closest_loss, pts, tris, [q], w, verts)
    assert np.abs(fd).max() > 0.05  # the chosen vertices matter to the loss
    np.testing.assert_allclose(grad, fd, rtol=3e-2, atol=3e-2)


@wp.kernel
def get_point_loss(mesh: wp.uint64, slots: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec3),
                   loss: wp.array(dtype=float)):
    i = wp.tid()
    p = wp.mesh_get_point(mesh, i)  # the point mesh.indices[i] refers to
    wp.atomic_add(loss, 0, wp.dot(w[i], p) + wp.dot(p, p) + slots[i][0] * 0.0)


def test_gradient_wrt_mesh_points_get_point():
    pts, tris = uv_sphere(4, 6, radius=1.0)
    rng = np.random.default_rng(5)
    n = 12  # index slots 0..11: some vertices are referenced twice, some not at all
    w = rng.normal(size=(n, 3)).astype(np.float32)
    verts = np.arange(len(pts))
    grad, fd = _mesh_point_grad_and_fd(get_point_loss, pts, tris, [np.zeros((n, 3), np.float32)], w, verts)
    exact = np.zeros((len(pts), 3))
    for i, v in enumerate(tris.reshape(-1)[:n]):
        exact[v] += w[i] + 2.0 * pts[v]
    np.testing.assert_allclose(grad, exact, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fd, exact, rtol=2e-2, atol=2e-2)


def test_gradient_wrt_mesh_points_ray():
    pts, tris = uv_sphere(6, 8, radius=1.0)
    rng = np.random.default_rng(4)
    o = (rng.normal(size=(6, 3)) * 0.2 + np.array([0.0, 0.0, -3.0])).astype(np.float32)
    d = (np.array([0.0, 0.0, 1.0]) + rng.normal(size=(6, 3)) * 0.1).astype(np.float32)
    w = rng.normal(size=(6, 3)).astype(np.float32)
    verts = np.arange(len(pts))
    grad, fd = _mesh_point_grad_and_fd(ray_loss, pts, tris, [o, d], w, verts)
    assert np.abs(fd).max() > 0.05
    np.testing.assert_allclose(grad, fd, rtol=3e-2, atol=3e-2)


@wp.kernel
def eval_loss(mesh: wp.uint64, faces: wp.array(dtype=wp.int32), uv: wp.array(dtype=wp.vec3),
              w: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    x = wp.mesh_eval_position(mesh, faces[i], uv[i][0], uv[i][1])
    v = wp.mesh_eval_velocity(mesh, faces[i], uv[i][0], uv[i][1]) + wp.mesh_get_velocity(mesh, i)
    wp.atomic_add(loss, 0, wp.dot(w[i], x) + wp.dot(v, v))


def test_replaced_grads_and_velocity_gradient():
    # points.grad / velocities.grad replaced after the mesh was built: the backward pass adds into the new buffers;
    # the loss is linear in the points and quadratic in the velocities, so the exact gradient is known in closed form
    pts, tris = uv_sphere(4, 6, radius=1.0)
    rng = np.random.default_rng(6)
    vel = rng.normal(size=pts.shape).astype(np.float32)
    n = 5
    faces = np.arange(n, dtype=np.int32) * 3
    uv = np.concatenate([rng.uniform(0.1, 0.4, size=(n, 2)), np.zeros((n, 1))], axis=1).astype(np.float32)
    w = rng.normal(size=(n, 3)).astype(np.float32)
    points = wp.array(pts, dtype=wp.vec3)
    velocities = wp.array(vel, dtype=wp.vec3)
    mesh = wp.Mesh(points, wp.array(tris.reshape(-1), dtype=wp.int32), velocities=velocities)
    points.requires_grad = True  # both turned on after creation, then points.grad replaced by a new buffer
    velocities.requires_grad = True
    old_grad = points.grad
    points.grad = wp.zeros(len(pts), dtype=wp.vec3)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(eval_loss, dim=n, inputs=[mesh.id, wp.array(faces), wp.array(uv, dtype=wp.vec3),
                                            wp.array(w, dtype=wp.vec3), loss])
    tape.backward(loss)
    tri = tris.reshape(-1, 3)
    gp, gv = np.zeros(pts.shape), np.zeros(pts.shape)
    for i in range(n):
        t = tri[faces[i]]
        bary = (uv[i, 0], uv[i, 1], 1.0 - uv[i, 0] - uv[i, 1])
        v = sum(b * vel[k].astype(np.float64) for b, k in zip(bary, t)) + vel[tris.reshape(-1)[i]]
        for b, k in zip(bary, t):
            gp[k] += b * w[i]
            gv[k] += 2.0 * b * v
        gv[tris.reshape(-1)[i]] += 2.0 * v
    np.testing.assert_allclose(points.grad.numpy(), gp, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(velocities.grad.numpy(), gv, rtol=1e-4, atol=1e-4)
    assert not old_grad.numpy().any()  # nothing went to the replaced buffer
