"""Gradient checkpointing for long rollouts as one library call: ``wp.checkpoint(step, state, steps)``.

The forward keeps only every ``segment``-th state (default sqrt(steps)); the backward recomputes one segment
at a time from its checkpoint under a private Tape and pulls the gradient back through it. Peak memory is
O(steps / segment + segment) states, O(sqrt(steps)) by default, instead of O(steps) for a full Tape, for one
extra forward pass; the gradients are identical to the full Tape's (the same launches run in the same order).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from ..errors import Error
from ..runtime.array import array, clone
from ..runtime.tape import active_tape


def checkpoint(step: Callable[[list, int], Sequence], state: Sequence[array], steps: int,
               segment: int | None = None) -> list[array]:
    """Run ``state = step(state, t)`` for ``t`` in ``range(steps)`` with O(sqrt(steps)) memory for gradients.

    Args:
        step: ``step(state: list[array], t: int) -> list[array]`` launches kernels reading ``state`` and returns
            the new state arrays. It must not overwrite arrays it received (allocate outputs, e.g. with
            ``wp.zeros_like``); parameters captured by ``step`` get their gradients accumulated as usual.
        state: the initial state arrays (``requires_grad=True`` on those you want gradients for).
        steps: number of steps.
        segment: steps between checkpoints (default: round(sqrt(steps))).

    Returns:
        The final state (new arrays with gradients). Inside ``with wp.Tape() as tape:``, ``tape.backward``
        propagates through the whole rollout into ``state[i].grad`` and the parameters' gradients.

    Raises:
        Error: if ``steps`` is negative or ``step`` returns a different number of arrays than it was given.
    """
    if steps < 0:
        raise Error("checkpoint: steps must be >= 0")
    seg = segment or max(1, int(round(math.sqrt(max(steps, 1)))))
    outer = active_tape.get()
    saved: dict[int, list[array]] = {}
    token = active_tape.set(None)  # the forward is not recorded launch by launch
    try:
        cur = list(state)
        for t in range(steps):
            if t % seg == 0:
                saved[t] = [clone(a, requires_grad=False) for a in cur]
            cur = _call(step, cur, t, len(state))
    finally:
        active_tape.reset(token)
    final = [clone(a, requires_grad=True) for a in cur]
    if outer is not None:
        def backward() -> None:
            from .tape import Tape

            grads = [f.grad for f in final]
            for start in reversed(range(0, steps, seg)):
                end = min(start + seg, steps)
                s0 = [clone(c, requires_grad=True) for c in saved[start]]
                inner = Tape()
                with inner:
                    cur_ = s0
                    for t in range(start, end):
                        cur_ = _call(step, cur_, t, len(state))
                inner.backward(grads={c: g for c, g in zip(cur_, grads) if c.grad is not None})
                grads = [a.grad for a in s0]
                del inner, cur_
            for a, g in zip(state, grads):
                if a.grad is not None and g is not None:
                    _accumulate(a.grad, g)

        outer.record_func(backward, list(state) + final)
    return final


def _call(step, cur: list, t: int, n: int) -> list:
    out = list(step(cur, t))
    if len(out) != n:
        raise Error(f"checkpoint: step returned {len(out)} arrays for a state of {n}")
    return out


def _accumulate(dst: array, src: array) -> None:
    if dst.device.is_cpu and src.device.is_cpu:
        d = dst.numpy()
        d += src.numpy()
        dst._mark_written()
    else:
        from ..cuda import memory

        memory.accumulate(dst, src)
