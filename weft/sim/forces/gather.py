"""Element forces without atomics: element kernels store each corner's force in a per-element scratch array, then
one thread per particle sums the corners that touch it (a CSR list built once per model).

On the CPU a float atomic is a compare-and-swap loop; a tetrahedron needs twelve of them, which made the scattered
Neo-Hookean kernel three times slower than its arithmetic. The gather also makes the sums deterministic.
"""

from dataclasses import dataclass

import numpy as np

import weft as wp


@dataclass(frozen=True)
class GatherList:
    """For each particle, the scratch slots (element * corners + corner) holding its corner forces."""

    offsets: wp.array  # (particle_count + 1,) int32
    slots: wp.array  # (entries,) int32
    entries: int


@wp.kernel
def gather_forces(offsets: wp.array(dtype=wp.int32), slots: wp.array(dtype=wp.int32),
                  elem_f: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    start = offsets[i]
    end = offsets[i + 1]
    if start == end:
        return
    s = wp.vec3()
    for e in range(start, end):
        s = s + elem_f[slots[e]]
    wp.atomic_add(f, i, s)


def gather_list(model, key: str, tables, corners) -> GatherList:
    """The (cached) gather list of element index tables laid out one after the other in the scratch array
    (``tables``: index arrays, flat or (n, corners); ``corners``: corners per element of each table)."""
    cache = model.__dict__.setdefault("_gather_lists", {})
    hit = cache.get(key)
    if hit is not None and len(hit[0]) == len(tables) and all(a is b for a, b in zip(hit[0], tables)):
        return hit[1]
    idx = np.concatenate([t.numpy().reshape(-1).astype(np.int64) for t in tables])
    n = model.particle_count
    valid = idx >= 0
    slot_ids = np.nonzero(valid)[0]
    owners = idx[valid]
    order = np.argsort(owners, kind="stable")
    counts = np.bincount(owners, minlength=n)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    g = GatherList(wp.array(offsets, dtype=wp.int32, device=model.device),
                   wp.array(slot_ids[order].astype(np.int32), dtype=wp.int32, device=model.device), len(order))
    cache[key] = (list(tables), g)
    return g


def scratch(model, state, key: str, size: int):
    """A vec3 scratch array of ``size`` for element corner forces. Reused between calls, except when gradients are
    recorded: each recorded step then gets its own (the tape's backward reads every step's values)."""
    if model.requires_grad or state.particle_q.requires_grad:
        return wp.zeros(size, dtype=wp.vec3, device=model.device, requires_grad=True)
    cache = model.__dict__.setdefault("_scratch", {})
    a = cache.get(key)
    if a is None or len(a) != size:
        a = cache[key] = wp.zeros(size, dtype=wp.vec3, device=model.device)
    return a


def launch_gather(model, glist: GatherList, elem_f, particle_f) -> None:
    """Add the gathered corner forces ``elem_f`` to ``particle_f``."""
    wp.launch(gather_forces, dim=model.particle_count, inputs=[glist.offsets, glist.slots, elem_f],
              outputs=[particle_f], device=model.device)
