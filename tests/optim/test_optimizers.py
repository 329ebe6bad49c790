"""SGD and Adam against NumPy implementations of the same update rules; graph capture; a Tape-driven descent."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
from weft.optim import SGD, Adam

RNG_SEED = 1234
TOL = {wp.float16: 2e-2, wp.float32: 1e-5, wp.float64: 1e-12}
NP = {wp.float16: np.float16, wp.float32: np.float32, wp.float64: np.float64}


# ------------------------------------------------------------------------------------------- NumPy references
class SGDRef:
    def __init__(self, p, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.p = p.astype(np.float64)
        self.b = np.zeros_like(self.p)
        self.lr, self.momentum, self.dampening, self.wd, self.nesterov = lr, momentum, dampening, weight_decay, nesterov
        self.t = 0

    def step(self, g):
        d = g.astype(np.float64) + self.wd * self.p
        if self.momentum != 0.0:
            self.b = d.copy() if self.t == 0 else self.momentum * self.b + (1.0 - self.dampening) * d
            d = d + self.momentum * self.b if self.nesterov else self.b
        self.p = self.p - self.lr * d
        self.t += 1


class AdamRef:
    def __init__(self, p, lr, betas=(0.9, 0.999), eps=1e-8):
        self.p = p.astype(np.float64)
        self.m = np.zeros_like(self.p)
        self.v = np.zeros_like(self.p)
        self.lr, (self.b1, self.b2), self.eps = lr, betas, eps
        self.t = 0

    def step(self, g):
        g = g.astype(np.float64)
        self.t += 1
        self.m = self.b1 * self.m + (1 - self.b1) * g
        self.v = self.b2 * self.v + (1 - self.b2) * g * g
        m_hat = self.m / (1 - self.b1**self.t)
        v_hat = self.v / (1 - self.b2**self.t)
        self.p = self.p - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def _data(shape, dtype, steps):
    rng = np.random.default_rng(RNG_SEED)
    p0 = rng.standard_normal(shape).astype(NP[dtype])
    grads = [rng.standard_normal(shape).astype(NP[dtype]) for _ in range(steps)]
    return p0, grads


SGD_VARIANTS = {
    "plain": {},
    "momentum": {"momentum": 0.9},
    "dampening": {"momentum": 0.8, "dampening": 0.3},
    "nesterov": {"momentum": 0.9, "nesterov": True},
    "weight_decay": {"momentum": 0.5, "weight_decay": 0.1},
}


@pytest.mark.parametrize("dtype", [wp.float32, wp.float64])
@pytest.mark.parametrize("shape", [(37,), (5, 7)])
@pytest.mark.parametrize("variant", sorted(SGD_VARIANTS))
def test_sgd_matches_numpy(dtype, shape, variant):
    kwargs = SGD_VARIANTS[variant]
    p0, grads = _data(shape, dtype, 6)
    p = wp.array(p0, dtype=dtype)
    opt = SGD([p], lr=0.05, **kwargs)
    ref = SGDRef(p0, 0.05, **kwargs)
    for g in grads:
        opt.step([wp.array(g, dtype=dtype)])
        ref.step(g)
    np.testing.assert_allclose(p.numpy(), ref.p, rtol=TOL[dtype], atol=TOL[dtype])
    assert opt.t.numpy()[0] == len(grads)


@pytest.mark.parametrize("dtype", [wp.float32, wp.float64])
@pytest.mark.parametrize("shape", [(37,), (5, 7), (2, 3, 4)])
def test_adam_matches_numpy(dtype, shape):
    p0, grads = _data(shape, dtype, 8)
    p = wp.array(p0, dtype=dtype)
    opt = Adam([p], lr=0.01, betas=(0.8, 0.99), eps=1e-6)
    ref = AdamRef(p0, 0.01, betas=(0.8, 0.99), eps=1e-6)
    for g in grads:
        opt.step([wp.array(g, dtype=dtype)])
        ref.step(g)
    np.testing.assert_allclose(p.numpy(), ref.p, rtol=TOL[dtype], atol=TOL[dtype])


def test_adam_float16_moments_in_float32():
    p0, grads = _data((64,), wp.float16, 5)
    p = wp.array(p0, dtype=wp.float16)
    opt = Adam([p], lr=0.01)
    assert opt.m[0].dtype is wp.float32 and opt.v[0].dtype is wp.float32
    ref = AdamRef(p0, 0.01)
    for g in grads:
        opt.step([wp.array(g, dtype=wp.float16)])
        ref.step(g)
    assert p.dtype is wp.float16
    np.testing.assert_allclose(p.numpy().astype(np.float64), ref.p, atol=TOL[wp.float16])


@pytest.mark.parametrize("opt_cls", [SGD, Adam])
@pytest.mark.parametrize("vec", [wp.vec3, wp.vec2d, wp.mat22])
def test_vector_dtypes_update_componentwise(opt_cls, vec):
    scalar = wp.types.type_scalar_type(vec)
    shape = (10, 2, 2) if wp.types.type_is_matrix(vec) else (10, wp.types.type_length(vec))
    p0, grads = _data(shape, scalar, 4)
    p = wp.array(p0, dtype=vec)
    kwargs = {"lr": 0.05, "momentum": 0.9} if opt_cls is SGD else {"lr": 0.05}
    opt = opt_cls([p], **kwargs)
    ref = (SGDRef if opt_cls is SGD else AdamRef)(p0, **kwargs)
    for g in grads:
        opt.step([wp.array(g, dtype=vec)])
        ref.step(g)
    np.testing.assert_allclose(p.numpy(), ref.p, rtol=TOL[scalar], atol=TOL[scalar])


def test_several_params_and_flattened_grads():
    # The seed program's pattern: params given as flattened views, gradients as flattened grad views.
    a = wp.array(np.ones((4, 4)), dtype=wp.float32, requires_grad=True)
    c = wp.array(np.ones(3), dtype=wp.float64, requires_grad=True)
    a.grad.fill_(2.0)
    c.grad.fill_(-1.0)
    opt = Adam([a.flatten(), c], lr=0.1)
    opt.step([a.grad.flatten(), c.grad])
    np.testing.assert_allclose(a.numpy(), np.full((4, 4), 0.9), rtol=1e-6)
    np.testing.assert_allclose(c.numpy(), np.full(3, 1.1), rtol=1e-8)  # eps shifts it by ~1e-9
    # a gradient of another shape (even of the same size) raises, as in Warp
    with pytest.raises(ValueError, match=r"Adam gradient shape must match parameter shape \(16,\), got \(4, 4\)"):
        opt.step([a.grad, c.grad])


def test_reset_internal_state_restarts_bias_correction():
    p = wp.array(np.zeros(5), dtype=wp.float64)
    g = wp.array(np.ones(5), dtype=wp.float64)
    opt = Adam([p], lr=0.1, eps=0.0)
    for _ in range(3):
        opt.step([g])
    opt.reset_internal_state()
    assert opt.t.numpy()[0] == 0
    assert not opt.m[0].numpy().any() and not opt.v[0].numpy().any()
    before = p.numpy().copy()
    opt.step([g])  # first step after a reset moves by exactly lr (bias-corrected m/sqrt(v) = 1)
    np.testing.assert_allclose(before - p.numpy(), 0.1, rtol=1e-12)


def test_adam_set_params_again_keeps_matching_state():
    p = wp.zeros(4, dtype=wp.float16)
    q = wp.zeros(3, dtype=wp.vec3)
    g = [wp.ones(4, dtype=wp.float16), wp.ones(3, dtype=wp.vec3)]
    opt = Adam([p, q], lr=0.1)
    opt.step(g)
    m, v, t = opt.m[0], opt.v[1], opt.t.numpy()[0]
    opt.set_params([p, q])  # the same parameters: the moments and step counter carry on (as Warp)
    assert opt.m[0] is m and opt.v[1] is v and opt.t.numpy()[0] == t
    np.testing.assert_allclose(m.numpy(), 0.1, rtol=1e-6)  # (1 - beta1) * g, float32 moments
    opt.set_params([wp.zeros(5, dtype=wp.float16), q])  # another shape: zeroed, the matching one kept
    assert not opt.m[0].numpy().any() and opt.v[1] is v


def test_mismatched_gradients_raise():
    p = wp.zeros(4, dtype=wp.float32)
    opt = SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="gradients for 1 parameters"):
        opt.step([])
    with pytest.raises(ValueError, match="shape must match"):
        opt.step([wp.zeros(5, dtype=wp.float32)])
    with pytest.raises(TypeError, match="SGD gradient dtype must match parameter dtype float32, got float64"):
        opt.step([wp.zeros(4, dtype=wp.float64)])
    with pytest.raises(TypeError, match="floating-point"):
        SGD([wp.zeros(4, dtype=wp.int32)])
    with pytest.raises(ValueError, match="contiguous"):
        SGD([wp.zeros((4, 4), dtype=wp.float32).transpose()])
    with pytest.raises(ValueError, match="Nesterov"):
        SGD([p], momentum=0.0, nesterov=True)


@pytest.mark.parametrize("opt_cls", [SGD, Adam])
def test_captured_step_replays_like_eager_steps(opt_cls):
    p0, grads = _data((33,), wp.float32, 1)
    kwargs = {"lr": 0.05, "momentum": 0.9, "nesterov": True} if opt_cls is SGD else {"lr": 0.05}
    g = wp.array(grads[0], dtype=wp.float32)

    eager = wp.array(p0, dtype=wp.float32)
    opt_e = opt_cls([eager], **kwargs)
    for _ in range(5):
        opt_e.step([g])

    captured = wp.array(p0, dtype=wp.float32)
    opt_c = opt_cls([captured], **kwargs)
    opt_c.step([g])  # one eager step first: the replayed steps must see t > 0
    with wp.ScopedCapture() as capture:
        opt_c.step([g])
    for _ in range(4):
        wp.capture_launch(capture.graph)
    # On the CPU capture records without running; on CUDA too: either way 1 eager + 4 replays = 5 steps.
    np.testing.assert_allclose(captured.numpy(), eager.numpy(), rtol=1e-6, atol=1e-7)
    assert opt_c.t.numpy()[0] == opt_e.t.numpy()[0] == 5


# ------------------------------------------------------------------------------------------- Tape-driven descent
@wp.kernel
def _quadratic_loss(x: wp.array(dtype=wp.float32), target: wp.array(dtype=wp.float32),
                    weight: wp.array(dtype=wp.float32), loss: wp.array(dtype=wp.float32)):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, weight[i] * d * d)


@pytest.mark.parametrize("opt_cls,kwargs,steps", [(Adam, {"lr": 0.1}, 300),
                                                  (SGD, {"lr": 0.05, "momentum": 0.9}, 200)])
def test_minimise_quadratic_with_tape(opt_cls, kwargs, steps):
    n = 16
    rng = np.random.default_rng(7)
    target = wp.array(rng.standard_normal(n), dtype=wp.float32)
    weight = wp.array(rng.uniform(0.5, 2.0, n), dtype=wp.float32)
    x = wp.zeros(n, dtype=wp.float32, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    opt = opt_cls([x], **kwargs)
    first = None
    for _ in range(steps):
        loss.zero_()
        with wp.Tape() as tape:
            wp.launch(_quadratic_loss, dim=n, inputs=[x, target, weight], outputs=[loss])
        tape.backward(loss)
        if first is None:
            first = float(loss.numpy()[0])
            # d loss / d x = 2 w (x - target)
            np.testing.assert_allclose(x.grad.numpy(), 2 * weight.numpy() * (x.numpy() - target.numpy()), rtol=1e-5)
        opt.step([x.grad])
        tape.zero()
    assert float(loss.numpy()[0]) < 1e-3 * first
    np.testing.assert_allclose(x.numpy(), target.numpy(), atol=1e-2)


# ------------------------------------------------------------------------------------------- other devices
CUDA_DEVICES = [str(d) for d in wp.get_cuda_devices()] if wp.is_cuda_available() else []


@pytest.mark.skipif(not CUDA_DEVICES, reason="no CUDA device")
@pytest.mark.parametrize("device", CUDA_DEVICES)
@pytest.mark.parametrize("opt_cls", [SGD, Adam])
def test_cuda_matches_cpu_eager_and_captured(device, opt_cls):
    p0, grads = _data((1000,), wp.float32, 1)
    kwargs = {"lr": 0.05, "momentum": 0.9} if opt_cls is SGD else {"lr": 0.05}
    results = []
    for dev, capture in (("cpu", False), (device, False), (device, True)):
        p = wp.array(p0, dtype=wp.float32, device=dev)
        g = wp.array(grads[0], dtype=wp.float32, device=dev)
        opt = opt_cls([p], **kwargs)
        if capture:
            with wp.ScopedCapture(device=dev) as cap:
                opt.step([g])
            for _ in range(4):
                wp.capture_launch(cap.graph)
        else:
            for _ in range(4):
                opt.step([g])
        results.append(p.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[2], results[0], rtol=1e-5, atol=1e-6)
