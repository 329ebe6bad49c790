"""quat_from_matrix on matrices that are not exactly rotations: Warp's branch choice and a normalised result
(float64 NumPy reference of that definition), and its gradient against central differences."""

import numpy as np

import weft as wp

# a rotation, a slightly sheared one, a branch-2 rotation, and a matrix with a negative determinant (Warp's test set)
MATS = np.array([
    [1.0, 0.0, 0.0, 0.0, 0.5, 0.866, 0.0, -0.866, 0.5],
    [0.866, 0.0, 0.25, -0.433, 0.5, 0.75, -0.25, -0.866, 0.433],
    [0.866, -0.433, 0.25, 0.0, 0.5, 0.866, -0.5, -0.75, 0.433],
    [-1.2, -1.6, -2.3, 0.25, -0.6, -0.33, 3.2, -1.0, -2.2],
]).reshape(-1, 3, 3)


def reference(m):
    """Shepperd's method with Warp's branch choice, normalised (float64)."""
    tr = np.trace(m)
    if tr >= 0:
        s = np.sqrt(tr + 1.0)
        q = [(m[2, 1] - m[1, 2]) * 0.5 / s, (m[0, 2] - m[2, 0]) * 0.5 / s, (m[1, 0] - m[0, 1]) * 0.5 / s, 0.5 * s]
    else:
        d = 1 if m[1, 1] > m[0, 0] else 0
        d = 2 if m[2, 2] > m[d, d] else d
        i, j, k = d, (d + 1) % 3, (d + 2) % 3
        s = np.sqrt(m[i, i] - m[j, j] - m[k, k] + 1.0)
        q = [0.0] * 4
        q[i], q[j], q[k] = 0.5 * s, (m[i, j] + m[j, i]) * 0.5 / s, (m[k, i] + m[i, k]) * 0.5 / s
        q[3] = (m[k, j] - m[j, k]) * 0.5 / s
    q = np.array(q)
    return q / np.linalg.norm(q)


@wp.kernel
def from_matrix(m: wp.array(dtype=wp.mat33d), w: wp.array(dtype=wp.quatd), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    q = wp.quat_from_matrix(m[i])
    wp.atomic_add(out, 0, wp.dot(q, w[i]))


def test_quat_from_matrix_matches_warp_definition_and_fd():
    rng = np.random.default_rng(11)
    w = rng.standard_normal((len(MATS), 4))
    m = wp.array(MATS, dtype=wp.mat33d, requires_grad=True)
    out = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(from_matrix, dim=len(MATS), inputs=[m, wp.array(w, dtype=wp.quatd)], outputs=[out])
    want = sum(reference(a) @ b for a, b in zip(MATS, w))
    np.testing.assert_allclose(out.numpy()[0], want, rtol=1e-12)
    tape.backward(out)
    h = 1e-6
    fd = np.zeros_like(MATS)
    for idx in np.ndindex(MATS.shape):
        p, n = MATS.copy(), MATS.copy()
        p[idx] += h
        n[idx] -= h
        fd[idx] = (reference(p[idx[0]]) @ w[idx[0]] - reference(n[idx[0]]) @ w[idx[0]]) / (2 * h)
    np.testing.assert_allclose(m.grad.numpy(), fd, rtol=1e-6, atol=1e-8)


@wp.kernel
def to_matrix(q: wp.array(dtype=wp.quatd), m: wp.array(dtype=wp.mat33d), cols: wp.array(dtype=wp.mat33d)):
    i = wp.tid()
    m[i] = wp.quat_to_matrix(q[i])
    cols[i] = wp.matrix_from_cols(wp.quat_rotate(q[i], wp.vec3d(1.0, 0.0, 0.0)),
                                  wp.quat_rotate(q[i], wp.vec3d(0.0, 1.0, 0.0)),
                                  wp.quat_rotate(q[i], wp.vec3d(0.0, 0.0, 1.0)))


def test_quat_to_matrix_is_quat_rotate_of_the_axes_off_the_unit_sphere():
    qn = np.random.default_rng(2).standard_normal((3, 4)) * 1.3  # not unit
    q = wp.array(qn, dtype=wp.quatd, requires_grad=True)
    m = wp.zeros(3, dtype=wp.mat33d, requires_grad=True)
    cols = wp.zeros(3, dtype=wp.mat33d, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(to_matrix, dim=3, inputs=[q], outputs=[m, cols])
    u, w = qn[:, :3], qn[:, 3]
    cross = np.array([[[0, -z, y], [z, 0, -x], [-y, x, 0]] for x, y, z in u])
    want = (2 * w**2 - 1)[:, None, None] * np.eye(3) + 2 * w[:, None, None] * cross + 2 * np.einsum("ni,nj->nij", u, u)
    np.testing.assert_allclose(m.numpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cols.numpy(), want, rtol=1e-12, atol=1e-12)
    seed = np.random.default_rng(4).standard_normal((3, 3, 3))
    tape.backward(grads={m: wp.array(seed, dtype=wp.mat33d)})
    g_matrix = q.grad.numpy().copy()
    tape.zero()
    tape.backward(grads={cols: wp.array(seed, dtype=wp.mat33d)})
    np.testing.assert_allclose(g_matrix, q.grad.numpy(), rtol=1e-10, atol=1e-12)


@wp.kernel
def axis_angle_pair(q: wp.array(dtype=wp.quatd), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    axis, angle = wp.quat_to_axis_angle(q[i])
    v = wp.vec3d(q[i][0], q[i][1], q[i][2])
    angle_formula = wp.float64(2.0) * wp.atan2(wp.length(v), wp.abs(q[i][3]))  # abs' is 0 at 0
    wp.atomic_add(out, 0, angle + axis[1])
    wp.atomic_add(out, 1, angle_formula)


def test_quat_to_axis_angle_gradient_at_w_zero_matches_the_abs_convention():
    qn = np.array([(1.0, 0.0, 0.0, 0.0), (0.0, 0.6, 0.8, 0.0), (0.3, -0.4, 0.5, -0.7)])
    q = wp.array(qn, dtype=wp.quatd, requires_grad=True)
    out = wp.zeros(2, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(axis_angle_pair, dim=3, inputs=[q], outputs=[out])
    tape.backward(grads={out: wp.array([1.0, 0.0], dtype=wp.float64)})
    g_builtin = q.grad.numpy().copy()
    tape.zero()
    tape.backward(grads={out: wp.array([0.0, 1.0], dtype=wp.float64)})
    g_formula = q.grad.numpy()
    # the angle parts agree everywhere (w = 0 included); the axis part adds d(axis_y)/dq off w = 0 only in x, y, z
    np.testing.assert_allclose(g_builtin[:, 3], g_formula[:, 3], atol=1e-12)
    assert g_builtin[0, 3] == 0.0 and g_builtin[1, 3] == 0.0
