"""``wp.svd2``: the 2x2 SVD against float64 NumPy (singular values, orthogonality, reconstruction, the rotation /
signed-sigma convention) and its adjoint against central differences."""

from __future__ import annotations

import numpy as np

import weft as wp

WU = np.array([[0.3, -1.1], [0.7, 0.2]])
WS = np.array([1.3, -0.4])
WV = np.array([[-0.6, 0.5], [0.9, 1.7]])


@wp.kernel
def svd2_loss(A: wp.array(dtype=wp.mat22d), U: wp.array(dtype=wp.mat22d), s: wp.array(dtype=wp.vec2d),
              V: wp.array(dtype=wp.mat22d), wu: wp.mat22d, ws: wp.vec2d, wv: wp.mat22d, loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    u, sigma, v = wp.svd2(A[i])
    U[i] = u
    s[i] = sigma
    V[i] = v
    wp.atomic_add(loss, 0, wp.ddot(wu, u) + wp.dot(ws, sigma) + wp.ddot(wv, v))


def _run(a_np, requires_grad=False):
    n = len(a_np)
    A = wp.array(a_np, dtype=wp.mat22d, requires_grad=requires_grad)
    U, V = wp.zeros(n, dtype=wp.mat22d), wp.zeros(n, dtype=wp.mat22d)
    s = wp.zeros(n, dtype=wp.vec2d)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=requires_grad)
    tape = wp.Tape()
    with tape:
        wp.launch(svd2_loss, dim=n, inputs=[A, U, s, V, wp.mat22d(*WU.ravel()), wp.vec2d(*WS),
                                             wp.mat22d(*WV.ravel()), loss])
    return A, U.numpy(), s.numpy(), V.numpy(), loss, tape


def test_svd2_against_numpy_and_finite_differences():
    rng = np.random.default_rng(11)
    a_np = np.concatenate([rng.normal(size=(6, 2, 2)), [np.zeros((2, 2)), np.eye(2), [[1.0, 1.0], [-1.0, -1.0]],
                                                        [[3.0, 0.0], [4.0, 5.0]]]])
    _, U, s, V, _, _ = _run(a_np)
    eye = np.broadcast_to(np.eye(2), U.shape)
    np.testing.assert_allclose(U @ U.transpose(0, 2, 1), eye, atol=1e-12)
    np.testing.assert_allclose(V @ V.transpose(0, 2, 1), eye, atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(U), 1.0, atol=1e-12)  # rotations; sigma[1] carries det(A)'s sign
    np.testing.assert_allclose(np.linalg.det(V), 1.0, atol=1e-12)
    np.testing.assert_allclose(U @ (s[..., None] * V.transpose(0, 2, 1)), a_np, atol=1e-12)
    np.testing.assert_allclose(np.abs(s), np.linalg.svd(a_np, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose(s[:, 0] * s[:, 1], np.linalg.det(a_np), atol=1e-12)
    # adjoint of a weighted sum of U, sigma and V at matrices with distinct singular values, against central differences
    a0 = rng.normal(size=(4, 2, 2)) + np.array([[2.0, 0.0], [0.0, 0.5]])
    A, _, _, _, loss, tape = _run(a0, requires_grad=True)
    tape.backward(loss)
    grad = A.grad.numpy()
    h = 1e-6
    for k in range(4):
        for i in range(2):
            for j in range(2):
                plus, minus = a0.copy(), a0.copy()
                plus[k, i, j] += h
                minus[k, i, j] -= h
                fd = (_run(plus)[4].numpy()[0] - _run(minus)[4].numpy()[0]) / (2 * h)
                np.testing.assert_allclose(grad[k, i, j], fd, rtol=1e-4, atol=1e-5)
