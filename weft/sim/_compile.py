"""Compile the kernels a model needs concurrently, once per model, before the first step.

Kernels otherwise compile one by one at their first launch. Compiling a step's kernels (and, for a model with
gradients, their adjoints) together lets the cold ones share compiler runs (batches, weft/ahead.py) and load in
parallel.
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

    # the cold kernels compile in batches (weft/ahead.py: one compiler run instead of one per kernel), then each is
    # loaded, several at once (compiling alone what a batch left out); the same for the adjoints
    ahead.batch_kernels(todo)
    workers = max(1, min(len(todo), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        specs = list(pool.map(lambda k: k.compile(), todo))
        if grad:
            adj = [(k, spec, frozenset()) for k, spec in zip(todo, specs)
                   if k.enable_backward and k not in no_adjoint]
            ahead.batch_adjoints(adj)
            list(pool.map(lambda item: item[0].adjoint_of(item[1]), adj))
    done.update(id(k) for k in todo)
