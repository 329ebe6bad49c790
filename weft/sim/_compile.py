"""Compile the kernels a model needs concurrently, once per model, before the first step.

Kernels otherwise compile one by one at their first launch; each is its own compilation unit, so compiling a step's
kernels (and, for a model with gradients, their adjoints) in parallel cuts the cold start by about the number of
cores.
"""

import os
from concurrent.futures import ThreadPoolExecutor

from .. import ahead


def prepare(model, kernels, no_adjoint=()) -> None:
    """Compile ``kernels`` (and, if ``model.requires_grad``, the adjoints of those not in ``no_adjoint``) in parallel,
    skipping those done."""
    done = model.__dict__.setdefault("_prepared_kernels", set())
    todo = [k for k in kernels if k is not None and id(k) not in done]
    if not todo:
        return
    grad = bool(model.requires_grad)
    # this list is what the step needs: the other kernels of these modules (other element kinds, bodies) stay
    # uncompiled instead of compiling ahead (weft/ahead.py)
    ahead.claim_modules({getattr(k.func, "__module__", None) for k in todo} - {None})

    def build(kernel):
        spec = kernel.compile()
        if grad and kernel.enable_backward and kernel not in no_adjoint:
            kernel.adjoint_of(spec)

    workers = max(1, min(len(todo), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(build, todo))
    done.update(id(k) for k in todo)
