"""float16 eig3 / svd3 (forward and adjoint) compile and agree with NumPy float64 to half precision; an all-zero
input gives finite gradients."""

import numpy as np

import weft as wp

_m33h = wp.types.matrix((3, 3), wp.float16)
_v3h = wp.types.vector(3, wp.float16)


@wp.kernel
def _half_decomp(a: wp.array(dtype=_m33h), evals: wp.array(dtype=_v3h), svals: wp.array(dtype=_v3h),
                 loss: wp.array(dtype=wp.float16)):
    i = wp.tid()
    _q, d = wp.eig3(a[i])
    U = _m33h()
    s = _v3h()
    V = _m33h()
    wp.svd3(a[i], U, s, V)
    evals[i] = d
    svals[i] = s
    wp.atomic_add(loss, 0, wp.dot(d, d) + s[0] + s[1] + s[2])


def test_half_eig3_svd3_vs_numpy_and_zero_input_gradient():
    rng = np.random.default_rng(3)
    b = rng.uniform(-1.0, 1.0, (3, 3))
    sym = b + b.T
    mats = np.stack([sym, np.zeros((3, 3))])
    a = wp.array(mats.astype(np.float16), dtype=_m33h, requires_grad=True)
    evals, svals = wp.zeros(2, dtype=_v3h, requires_grad=True), wp.zeros(2, dtype=_v3h, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float16, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_half_decomp, dim=2, inputs=[a, evals, svals, loss])
    tape.backward(loss=loss)
    a16 = mats[0].astype(np.float16).astype(np.float64)
    np.testing.assert_allclose(np.sort(evals.numpy()[0].astype(np.float64)), np.linalg.eigvalsh(a16), atol=2e-2)
    np.testing.assert_allclose(np.sort(svals.numpy()[0].astype(np.float64))[::-1],
                               np.linalg.svd(a16, compute_uv=False), atol=2e-2)
    assert not evals.numpy()[1].any() and not svals.numpy()[1].any()
    grad = a.grad.numpy().astype(np.float64)
    assert np.isfinite(grad).all()
    # d/dA sum(eigenvalues^2) = 2 A for a symmetric A (float64 reference), plus the singular values' U V^T
    u, _, vt = np.linalg.svd(a16)
    np.testing.assert_allclose(grad[0], 2.0 * a16 + u @ vt, atol=5e-2)
