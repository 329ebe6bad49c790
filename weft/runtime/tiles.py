"""``wp.launch_tiled``: launch a grid of blocks, each of ``block_dim`` cooperating lanes."""

from __future__ import annotations

from ..errors import LaunchError
from ..ir import types as T
from ..ir.nodes import Assign, For, If, Let, Var
from . import device as D
from .launch import _infer_device, launch, normalize_dim, resolve_block_dim


def launch_tiled(kernel, dim, inputs=(), outputs=(), adj_inputs=(), adj_outputs=(), device=None, stream=None,
                 adjoint=False, record_tape=True, record_cmd=False, block_dim=None, **kwargs):
    """Launch ``kernel`` over ``dim`` blocks of ``block_dim`` lanes each.

    As in Warp, this is ``wp.launch(kernel, [*dim, block_dim], ..., block_dim=block_dim)``: inside the kernel
    ``i, j = wp.tid()`` gives the block coordinates and ``i, j, lane = wp.tid()`` also the lane. On the CPU a
    block runs on one thread, its lanes in lock-step around the collective tile operations, so results are the
    same as on a GPU with the same ``block_dim`` (with ``wp.config.enable_cpu_blocks``; else one lane per block).

    Args:
        kernel: a ``@wp.kernel``.
        dim: the number of blocks along each launch dimension (an int or a tuple of 1-3 ints).
        inputs, outputs: kernel arguments, as for ``wp.launch``.
        block_dim: lanes per block (compile-time for the kernel: each value compiles once). As in Warp 1.19, on the
            CPU it is 1 unless ``wp.config.enable_cpu_blocks`` is True (then at most 1024); omitted: 1 on the CPU,
            256 on a GPU.

    Raises:
        LaunchError: bad dimensions or arguments.
    """
    dims = normalize_dim(dim)
    if len(dims) > 3:
        raise LaunchError(f"launch_tiled dim has at most 3 dimensions (the lane index is the 4th), got {dims}")
    dev = D.get_device(device) if device is not None else _infer_device(list(inputs) + list(outputs))
    block_dim = resolve_block_dim(dev, block_dim)
    return launch(kernel, (*dims, block_dim), inputs=inputs, outputs=outputs, adj_inputs=adj_inputs,
                  adj_outputs=adj_outputs, device=device, stream=stream, adjoint=adjoint, record_tape=record_tape,
                  record_cmd=record_cmd, block_dim=block_dim, **kwargs)


def check_tiled_launch(kernel, spec, dims: tuple[int, ...]) -> None:
    """Launch-time checks for a kernel that uses tiles (called by ``wp.launch``)."""
    # a launch size that is not a multiple of block_dim ends with a partial block: its lanes past the launch size
    # run no lane code (the tile operations still act on whole tiles), as on a GPU
    if spec.tid_arity > len(dims):
        raise LaunchError(f"kernel '{kernel.__name__}' unpacks wp.tid() into {spec.tid_arity} indices but was "
                          f"launched with a {len(dims)}-D grid {dims}")


# ---------------------------------------------------------------------- lanes that cannot be told apart
#: tile ops whose result is the same whichever lanes of a block run them, given lane-independent operands
_LANE_FREE_TILE_OPS = frozenset({"tile_load", "extract", "copy"})
_LANE_INVARIANT: dict[int, tuple] = {}  # id(fn) -> (fn, verdict)


def lanes_invariant(fn) -> bool:
    """True when running a CPU block with all its lanes gives exactly what one-lane blocks (Warp 1.19's CPU rule
    without ``enable_cpu_blocks``) give: the only tile ops are loads whose operands do not depend on the thread
    (``wp.tid()`` and what is computed from it, also through control flow), reads of their elements and copies,
    none under a branch or a thread-dependent loop, and nothing leaves a loop or the kernel early. Then every lane
    sees the same tiles either way, so ``wp.launch(..., block_dim=64)`` of such a kernel (Warp's tile n-body)
    runs its lanes together, in SIMD, instead of one block per thread."""
    hit = _LANE_INVARIANT.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    verdict = _lanes_invariant(fn)
    _LANE_INVARIANT[id(fn)] = (fn, verdict)
    return verdict


def _lanes_invariant(fn) -> bool:
    tainted: set[int] = set()

    def dep(x) -> bool:
        return isinstance(x, Var) and x.id in tainted

    def tiles(xs) -> bool:
        return any(isinstance(getattr(x, "type", None), T.TileType) for x in xs)

    def taint(vs) -> bool:
        new = [v.id for v in vs if isinstance(v, Var) and v.id not in tainted]
        tainted.update(new)
        return bool(new)

    def visit(stmts, branch: bool, thread_ctl: bool) -> bool | None:
        """None: not invariant; else whether the taint set grew."""
        grew = False
        for s in stmts:
            if isinstance(s, Let):
                name = s.call.op.name
                if name == "block_dim":  # the block size itself differs
                    return None
                if tiles(s.args) or tiles(s.dsts):
                    if name not in _LANE_FREE_TILE_OPS or branch:
                        return None
                    if name == "tile_load" and any(dep(a) for a in s.args):
                        return None
                if thread_ctl or name == "tid" or any(dep(a) for a in s.args):
                    grew |= taint(s.dsts)
            elif isinstance(s, Assign):
                if thread_ctl or dep(s.src):
                    grew |= taint([s.dst])
            elif isinstance(s, For):
                thread = thread_ctl or dep(s.start) or dep(s.stop) or dep(s.step)
                if thread:
                    grew |= taint([s.var])
                inner = visit(s.body, branch or thread, thread)
                if inner is None:
                    return None
                grew |= inner
            elif isinstance(s, If):
                thread = thread_ctl or dep(s.cond)
                for body in (s.then, s.orelse):
                    inner = visit(body, True, thread)
                    if inner is None:
                        return None
                    grew |= inner
            else:  # while loops, early exits, custom-gradient calls, ...: not analysed
                return None
        return grew

    while True:  # to a fixed point: loops carry values back to earlier statements
        grew = visit(fn.body, False, False)
        if grew is None:
            return False
        if not grew:
            return True
