"""Element forces without atomics: element kernels store each corner's force in a per-element scratch array, then
one thread per particle sums the corners that touch it (a CSR list built once per model).

On the CPU a float atomic is a compare-and-swap loop; a tetrahedron needs twelve of them, which made the scattered
Neo-Hookean kernel three times slower than its arithmetic. The gather also makes the sums deterministic.
"""

from dataclasses import dataclass

import numpy as np

import weft as wp

from ...runtime.tape import active_tape


@dataclass(frozen=True)
class GatherList:
    """For each particle, the scratch slots (element * corners + corner) holding its corner forces."""

    offsets: wp.array  # (particle_count + 1,) int32
    slots: wp.array  # (entries,) int32
    owners: wp.array  # (entries,) int32: the particle of each entry
    entries: int


@wp.kernel
def gather_forces(offsets: wp.array(dtype=wp.int32), slots: wp.array(dtype=wp.int32),
                  elem_f: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3)):
    # two partial sums (even and odd entries) halve the chain of dependent adds; each particle is its own thread's,
    # so a plain add (an atomic add cost as much as the sums: seed sphere 30 -> 14 us CPU, one thread)
    i = wp.tid()
    end = offsets[i + 1]
    s0 = wp.vec3()
    s1 = wp.vec3()
    e = offsets[i]
    while e + 1 < end:
        s0 = s0 + elem_f[slots[e]]
        s1 = s1 + elem_f[slots[e + 1]]
        e = e + 2
    if e < end:
        s0 = s0 + elem_f[slots[e]]
    f[i] = f[i] + (s0 + s1)


@wp.kernel(enable_backward=False)
def scatter_gradients(owners: wp.array(dtype=wp.int32), slots: wp.array(dtype=wp.int32),
                      adj_f: wp.array(dtype=wp.vec3), adj_elem_f: wp.array(dtype=wp.vec3)):
    # the adjoint of gather_forces: every scratch slot belongs to exactly one entry, so no atomics. It assigns:
    # the scratch is shared by all steps and only this step's gather feeds the gradient its element kernels read
    e = wp.tid()
    adj_elem_f[slots[e]] = adj_f[owners[e]]


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
                   wp.array(slot_ids[order].astype(np.int32), dtype=wp.int32, device=model.device),
                   wp.array(owners[order].astype(np.int32), dtype=wp.int32, device=model.device), len(order))
    cache[key] = (list(tables), g)
    return g


def scratch(model, state, key: str, size: int):
    """The vec3 scratch array (``size`` slots) for element corner forces, one per model and element set.

    One array serves every step, also on a tape: the backward never reads the forward values of the scratch (the
    gather's adjoint only scatters gradients), and the scatter assigns each step's scratch gradient before that
    step's element kernels read it.
    """
    grad = bool(model.requires_grad or state.particle_q.requires_grad)
    cache = model.__dict__.setdefault("_scratch", {})
    a = cache.get((key, grad))
    # (an array made while wp.checkpoint's forward pass runs has no gradient buffer: make another when one is needed)
    if a is None or len(a) != size or (grad and a.grad is None):
        a = cache[(key, grad)] = wp.zeros(size, dtype=wp.vec3, device=model.device, requires_grad=grad)
    return a


def launch_gather(model, glist: GatherList, elem_f, particle_f) -> None:
    """Add the gathered corner forces ``elem_f`` to ``particle_f``. On a tape its backward is a scatter of
    ``particle_f.grad`` into ``elem_f.grad`` (recorded with ``tape.record_func``): the generic adjoint of the
    per-particle loop would keep a stack of partial sums per thread."""

    tape = active_tape.get()
    wp.launch(gather_forces, dim=model.particle_count, inputs=[glist.offsets, glist.slots, elem_f],
              outputs=[particle_f], device=model.device, record_tape=False)
    if tape is None or elem_f.grad is None or particle_f.grad is None:
        return

    def backward():
        wp.launch(scatter_gradients, dim=glist.entries, inputs=[glist.owners, glist.slots, particle_f.grad],
                  outputs=[elem_f.grad], device=model.device, record_tape=False)

    tape.record_func(backward, [elem_f, particle_f])
