"""``wp.launch_tiled``: launch a grid of blocks, each of ``block_dim`` cooperating lanes."""

from __future__ import annotations

from ..errors import LaunchError
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
