"""Stochastic gradient descent with momentum, dampening, weight decay and Nesterov momentum."""

from __future__ import annotations

import functools
from typing import Any

import weft as wp

from ._common import check_gradient, compute_type, scalar_type, scalar_view


@functools.cache
def _sgd_kernel(S, C):
    """The SGD update for parameters stored as scalar type ``S``, with the momentum buffer and arithmetic in ``C``."""

    @wp.kernel
    def sgd_step(g: wp.array(dtype=Any), b: wp.array(dtype=Any), t: wp.array(dtype=wp.int32), lr: Any,
                 weight_decay: Any, momentum: Any, dampening: Any, nesterov: wp.int32, params: wp.array(dtype=Any)):
        i = wp.tid()
        p = C(params[i])
        d = C(g[i])
        if weight_decay != C(0.0):
            d = d + weight_decay * p
        if momentum != C(0.0):
            buf = d
            # The first step seeds the buffer with the gradient (PyTorch's rule); the counter is on the device.
            if t[0] > 0:
                buf = momentum * b[i] + (C(1.0) - dampening) * d
            b[i] = buf
            if nesterov != 0:
                d = d + momentum * buf
            else:
                d = buf
        params[i] = S(p - lr * d)

    return sgd_step


@wp.kernel
def _increment(t: wp.array(dtype=wp.int32)):
    t[0] = t[0] + 1


class SGD:
    """Stochastic gradient descent, with Warp's ``warp.optim.SGD`` interface (PyTorch's update rule).

    With gradient ``g``, parameter ``p`` and momentum buffer ``b`` at step ``t`` (from 0)::

        g = g + weight_decay * p
        b = g                                       if t == 0
        b = momentum * b + (1 - dampening) * g      otherwise       (only when momentum != 0)
        g = g + momentum * b  if nesterov  else  b                  (only when momentum != 0)
        p = p - lr * g

    Parameters may have any shape (1-4 D, contiguous) and dtype float16, float32, float64 or a vector/matrix of
    those. ``step`` only launches kernels (the step count is a device array), so it can be graph-captured.

    Args:
        params: list of weft arrays to optimise (updated in place), or None to call ``set_params`` later.
        lr: learning rate.
        momentum: momentum factor.
        dampening: dampening of the momentum.
        weight_decay: L2 penalty coefficient.
        nesterov: use Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).

    Raises:
        ValueError: for ``nesterov`` without momentum or with dampening.
    """

    def __init__(self, params=None, lr: float = 0.001, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError("SGD: Nesterov momentum needs momentum > 0 and dampening == 0")
        self.lr = lr
        self.momentum = momentum
        self.dampening = dampening
        self.weight_decay = weight_decay
        self.nesterov = nesterov
        self.params = []
        self.b = []
        self.t = None
        self.set_params(params)

    def set_params(self, params) -> None:
        """Set the arrays to optimise and allocate zeroed momentum buffers and step counter."""
        self.params = list(params) if params is not None else []
        self._unset = params is None  # step() before set_params is Warp's RuntimeError
        self._flat = [scalar_view(p, f"SGD parameter {k}") for k, p in enumerate(self.params)]
        self.b = [wp.zeros(f.shape, dtype=compute_type(f.dtype), device=f.device) for f in self._flat]
        device = self.params[0].device if self.params else None
        self.t = wp.zeros(1, dtype=wp.int32, device=device)

    def reset_internal_state(self) -> None:
        """Zero the momentum buffers and the step counter."""
        for buf in self.b:
            buf.zero_()
        self.t.zero_()

    def step(self, grad) -> None:
        """Apply one SGD update: ``grad[k]`` is the gradient of ``params[k]`` (its dtype and shape)."""
        if self._unset:
            raise RuntimeError("SGD parameters must be set before calling step(), got None")
        if len(grad) != len(self.params):
            raise ValueError(f"SGD.step: got {len(grad)} gradients for {len(self.params)} parameters")
        for k, (g, flat) in enumerate(zip(grad, self._flat)):
            check_gradient("SGD", k, g, self.params[k])
            gflat = scalar_view(g, f"SGD gradient {k}")
            if gflat.shape != flat.shape or scalar_type(g.dtype) is not flat.dtype:
                raise ValueError(f"SGD.step: gradient {k} ({g.dtype}, shape {g.shape}) does not match parameter "
                                 f"{k} ({self.params[k].dtype}, shape {self.params[k].shape})")
            self.step_detail(gflat, self.b[k], flat)
        wp.launch(_increment, dim=1, inputs=[self.t], device=self.t.device)

    def step_detail(self, g, b, params) -> None:
        """Update one flat parameter array in place, without advancing the step counter."""
        if params.size == 0:
            return
        C = b.dtype
        wp.launch(_sgd_kernel(params.dtype, C), dim=params.size, device=params.device,
                  inputs=[g, b, self.t, C(self.lr), C(self.weight_decay), C(self.momentum), C(self.dampening),
                          int(self.nesterov)],
                  outputs=[params])
