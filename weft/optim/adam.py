"""Adam (Kingma & Ba) over weft arrays of any shape and floating-point dtype, with a graph-capturable step."""

from __future__ import annotations

import functools
from typing import Any

import weft as wp

from ._common import check_gradient, compute_type, scalar_type, scalar_view


@functools.cache
def _adam_kernel(S, C):
    """The Adam update for parameters stored as scalar type ``S`` and moments and arithmetic in ``C``.

    Arguments are generic (``Any``) and specialised at launch; the conversions between ``S`` and ``C`` are
    closed over because weft kernel code cannot yet name the type of a generic value (no ``type(x)``).
    """

    @wp.kernel
    def adam_step(g: wp.array(dtype=Any), m: wp.array(dtype=Any), v: wp.array(dtype=Any), t: wp.array(dtype=wp.int32),
                  lr: Any, beta1: Any, beta2: Any, eps: Any, params: wp.array(dtype=Any)):
        i = wp.tid()
        gi = C(g[i])
        mi = beta1 * m[i] + (C(1.0) - beta1) * gi
        vi = beta2 * v[i] + (C(1.0) - beta2) * gi * gi
        m[i] = mi
        v[i] = vi
        # The step counter lives in device memory so that a captured graph advances it on every replay.
        step = C(t[0] + 1)
        m_hat = mi / (C(1.0) - wp.pow(beta1, step))
        v_hat = vi / (C(1.0) - wp.pow(beta2, step))
        params[i] = S(C(params[i]) - lr * m_hat / (wp.sqrt(v_hat) + eps))

    return adam_step


@wp.kernel
def _increment(t: wp.array(dtype=wp.int32)):
    t[0] = t[0] + 1


class Adam:
    """Adaptive Moment Estimation, with Warp's ``warp.optim.Adam`` interface.

    Parameters may have any shape (1-4 D, contiguous) and dtype float16, float32, float64 or a vector/matrix of
    those (updated component-wise). Moments are kept in float32 for float16 parameters (float64 for float64),
    which avoids the underflow of ``v`` that float16 moments suffer.

    ``step`` only launches kernels: the step count used for bias correction is a 1-element device array, so a
    step recorded with ``wp.ScopedCapture`` and replayed with ``wp.capture_launch`` behaves like eager steps.
    Hyperparameters (``lr``, ``betas``, ``eps``) are read when a step is launched or captured.

    Args:
        params: list of weft arrays to optimise (updated in place), or None to call ``set_params`` later.
        lr: learning rate.
        betas: decay rates ``(beta1, beta2)`` of the first and second moment averages.
        eps: added to the denominator for numerical stability.
    """

    def __init__(self, params=None, lr: float = 0.001, betas=(0.9, 0.999), eps: float = 1e-8):
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.params = []
        self.m = []
        self.v = []
        self.t = None
        self.set_params(params)

    def set_params(self, params) -> None:
        """Set the arrays to optimise: moment buffers that match a parameter (same position, shape and dtype) are kept,
        the others start at zero; the step counter carries on (as Warp)."""
        self.params = list(params) if params is not None else []
        self._unset = params is None  # step() before set_params is Warp's RuntimeError
        self._flat = [scalar_view(p, f"Adam parameter {k}") for k, p in enumerate(self.params)]
        # as Warp: moment buffers of the same position, shape and dtype are kept (moved to the parameter's device),
        # so calling set_params again with the same parameters keeps the optimiser's state; others start at zero
        self.m = [_moment(getattr(self, "m", []), k, f) for k, f in enumerate(self._flat)]
        self.v = [_moment(getattr(self, "v", []), k, f) for k, f in enumerate(self._flat)]
        device = self.params[0].device if self.params else None
        if self.t is None:
            self.t = wp.zeros(1, dtype=wp.int32, device=device)
        elif device is not None and self.t.device != device:
            self.t = self.t.to(device)

    def reset_internal_state(self) -> None:
        """Zero the moment buffers and the step counter."""
        for buf in self.m + self.v:
            buf.zero_()
        self.t.zero_()

    def step(self, grad) -> None:
        """Apply one Adam update: ``grad[k]`` is the gradient of ``params[k]`` (its dtype and shape)."""
        if self._unset:
            raise RuntimeError("Adam parameters must be set before calling step(), got None")
        if len(grad) != len(self.params):
            raise ValueError(f"Adam.step: got {len(grad)} gradients for {len(self.params)} parameters")
        for k, (g, flat) in enumerate(zip(grad, self._flat)):
            check_gradient("Adam", k, g, self.params[k])
            gflat = scalar_view(g, f"Adam gradient {k}")
            if gflat.shape != flat.shape or scalar_type(g.dtype) is not flat.dtype:
                raise ValueError(f"Adam.step: gradient {k} ({g.dtype}, shape {g.shape}) does not match parameter "
                                 f"{k} ({self.params[k].dtype}, shape {self.params[k].shape})")
            self.step_detail(gflat, self.m[k], self.v[k], flat)
        wp.launch(_increment, dim=1, inputs=[self.t], device=self.t.device)

    def step_detail(self, g, m, v, params) -> None:
        """Update one flat parameter array in place, without advancing the step counter."""
        if params.size == 0:
            return
        C = m.dtype
        kernel = _adam_kernel(params.dtype, C)
        wp.launch(kernel, dim=params.size, device=params.device,
                  inputs=[g, m, v, self.t, C(self.lr), C(self.beta1), C(self.beta2), C(self.eps)],
                  outputs=[params])


def _moment(old: list, k: int, flat):
    """Moment buffer ``k`` for the flat parameter view ``flat``: the previous one when it matches, else zeros."""
    dtype = compute_type(flat.dtype)
    prev = old[k] if k < len(old) else None
    if prev is None or prev.shape != flat.shape or prev.dtype is not dtype:
        return wp.zeros(flat.shape, dtype=dtype, device=flat.device)
    return prev if prev.device == flat.device else prev.to(flat.device)
