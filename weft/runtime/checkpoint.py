"""Gradient checkpointing for long rollouts as one library call: ``wp.checkpoint(step, state, steps)``.

The forward keeps only every ``segment``-th state (default sqrt(steps)); the backward recomputes one segment
at a time from its checkpoint under a private Tape and pulls the gradient back through it. Peak memory is
O(steps / segment + segment) states, O(sqrt(steps)) by default, instead of O(steps) for a full Tape, for one
extra forward pass; the gradients are identical to the full Tape's (the same launches run in the same order).

What keeps the cost at one extra forward pass (docs/autodiff.md, "Checkpointing"):

- the forward pass records nothing and takes the fast launch path, and the arrays the step creates there get no
  gradient buffers (``requires_grad=True`` is ignored while it runs: nothing reads or writes a gradient there);
- the step's outputs, allocated afresh every step and again in every recomputed segment, come from a pool of host
  buffers (``runtime/pool.py``) that lives with the step's owner: buffers of arrays that died are handed out
  again, zeroed, so the rollout does not map, fault in and unmap fresh pages every step (that churn, not the
  recomputation, made a checkpointed iteration 2.5-5x slower than a full Tape's);
- the arrays a segment's Tape saw are registered, weakly, with the outer Tape, so ``tape.zero()`` resets the
  gradients of the parameters the step captured, as with a full Tape.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Sequence

from ..errors import Error
from .array import array, clone
from .backends import backend_for
from .pool import HostPool, grads_off
from .tape import active_tape, outside_tape


def checkpoint(step: Callable[[list, int], Sequence], state: Sequence[array], steps: int,
               segment: int | None = None) -> list[array]:
    """Run ``state = step(state, t)`` for ``t`` in ``range(steps)`` with O(sqrt(steps)) memory for gradients.

    Args:
        step: ``step(state: list[array], t: int) -> list[array]`` launches kernels reading ``state`` and returns
            the new state arrays. It must not overwrite arrays it received (allocate outputs, e.g. with
            ``wp.zeros_like``); parameters captured by ``step`` get their gradients accumulated as usual. In the
            forward pass the arrays it creates have no ``.grad`` (only the recomputed segments need gradients), so
            it must not rely on one.
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
    seg = segment or max(1, round(math.sqrt(max(steps, 1))))
    outer = active_tape.get()
    n = len(state)
    # The step allocates its outputs every step, in the forward pass and again when the backward pass recomputes a
    # segment; a pool recycles the buffers of the arrays that died (runtime/pool.py): no page faults.
    pool = _pool_for(step)
    saved: dict[int, list[array]] = {}
    token = active_tape.set(None)  # the forward is not recorded launch by launch ...
    try:
        no_grads = grads_off.set(True)  # ... so its arrays need no gradient buffers either
        try:
            with pool:
                cur = list(state)
                for t in range(steps):
                    if t % seg == 0:
                        saved[t] = [clone(a, requires_grad=False) for a in cur]
                    cur = _call(step, cur, t, n)
        finally:
            grads_off.reset(no_grads)
        final = [clone(a, requires_grad=True) for a in cur]  # (not recorded: backward() below is their adjoint)
        del cur
    finally:
        active_tape.reset(token)
    if outer is None:
        return final

    outer_ref = weakref.ref(outer)  # (the Tape holds this closure: no reference cycle)

    def backward() -> None:
        with pool:
            _backward(step, saved, [f.grad for f in final], state, steps, seg, outer_ref())

    outer.record_func(backward, list(state) + final)
    return final


# One pool per owner of the step function (the object of a bound method, else the function itself), kept while the
# owner lives: the next call (the next optimisation iteration) reuses the buffers, as a full-Tape solver reuses the
# arrays it preallocated. Its idle buffers never exceed the most one call had in use at once.
_pools: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _pool_for(step) -> HostPool:
    owner = getattr(step, "__self__", step)
    try:
        pool = _pools.get(owner)
        if pool is None:
            pool = _pools[owner] = HostPool()
    except TypeError:  # not weakly referenceable or not hashable: a pool for this call only
        pool = HostPool()
    return pool


def _backward(step, saved: dict, grads: list, state: Sequence[array], steps: int, seg: int, outer) -> None:
    """Pull ``grads`` (of the final state) back to ``state``: recompute each segment under a Tape, last first."""
    from .tape import Tape

    n = len(state)
    for start in reversed(range(0, steps, seg)):
        end = min(start + seg, steps)
        s0 = [clone(c, requires_grad=True) for c in saved[start]]
        inner = Tape()
        with outside_tape(), inner:  # (a backward may run while the user's Tape is still recording)
            cur = s0
            for t in range(start, end):
                cur = _call(step, cur, t, n)
        inner.backward(grads={c: g for c, g in zip(cur, grads) if c.grad is not None})
        grads = [a.grad for a in s0]
        # the parameters the step captured got gradients through this inner Tape only: outer.zero() must reset them
        # as a full Tape would (held weakly: the segment's own arrays still die here)
        if outer is not None:
            outer._watch(inner._arrays.values())
        del inner, cur, s0  # this segment's arrays die here, and their buffers serve the next segment
    for a, g in zip(state, grads):
        if a.grad is not None and g is not None:
            _accumulate(a.grad, g)


def _call(step, cur: list, t: int, n: int) -> list:
    out = list(step(cur, t))
    if len(out) != n:
        raise Error(f"checkpoint: step returned {len(out)} arrays for a state of {n}")
    return out


def _accumulate(dst: array, src: array) -> None:
    backend_for(dst.device, src.device).accumulate(dst, src)
