"""Backward launches: the adjoint of a recorded launch, and ``wp.launch(..., adjoint=True)``."""

from __future__ import annotations

import struct

from .. import abi, ahead
from ..errors import LaunchError
from ..ir import types as T
from ..types.layout import ARRAY_DESC, ARRAY_FLAGS_OFFSET, field_offset
from .array import _PENDING, array, flush_pending_zeros, materialize_launch
from .launch import check_errors


def _without_gradients(spec, args, overrides: dict) -> frozenset[int]:
    """Indices of the plain array arguments that have no gradient in this backward launch (tile kernels only: their
    backward may drop replay work for them, see Kernel.adjoint_of). Anything not known to lack one counts as
    having one."""
    if not spec.tile_dim:
        return frozenset()
    out = []
    for i, t in enumerate(spec.types):
        if not isinstance(t, T.ArrayType) or t.kind is not T.ArrayKind.ARRAY:
            continue
        desc = overrides.get(i)
        if desc is not None:
            if ARRAY_DESC.unpack_from(desc)[1] == 0:
                out.append(i)
        elif type(args[i]) is array and args[i]._grad is None:
            out.append(i)
    return frozenset(out)


def _run_bwd(kernel, spec, dims, args, device, overrides: dict, block_dim: int = 256, stream=None,
             max_blocks: int = 0) -> None:
    adj = kernel.adjoint_of(spec, _without_gradients(spec, args, overrides))
    if _PENDING:
        materialize_launch(spec.types, args, True)
    packed = spec.pack(args, overrides)
    device.impl.launch_backward(spec, adj, packed, dims, device, block_dim, stream, max_blocks)
    # debug-mode bounds checks, and the (release) report of a backward launch that ran out of memory for its adds
    check_errors(_ErrorsOf(adj.errors))


class _ErrorsOf:
    """What ``check_errors`` reads of a spec: the address of a module's error state (a class made per backward
    launch with ``type()`` cost 15-40 us of Python on this machine, about half of a small kernel's taped backward)."""

    __slots__ = ("errors",)

    def __init__(self, errors):
        self.errors = errors


def compile_adjoints(records) -> None:
    """Compile, in batches (weft/ahead.py, toolchain/batch.py), the backward modules the adjoint launches of
    ``records`` (a Tape's) will need and that are not compiled yet: one compiler run at the first backward instead
    of one per kernel."""
    ahead.batch_adjoints([(rec.kernel, rec.spec, _without_gradients(rec.spec, rec.args, {})) for rec in records
                          if (rec.spec.adjoint is None or rec.spec.tile_dim) and rec.kernel.custom_adjoint is None])


def run_record_adjoint(rec) -> None:
    custom = rec.kernel.custom_adjoint
    if custom is not None:
        # a hand-written backward may touch any memory, unless it declares that it reaches memory only through weft
        # launches and host accesses (which zero what they touch): it may then also see which gradients are pending
        if not getattr(custom, "zeroes_lazily", False):
            flush_pending_zeros()
        custom(rec)
        return
    overrides = {}
    scratch = []  # keeps the replay buffers alive until the backward launch has run
    for i, a in enumerate(rec.args):
        if hasattr(a, "_desc_flags") and i in rec.snapshots:  # a Fabric array the kernel updates in place
            from .copy import _raw_copy

            buf = rec.snapshots[i]._new_like_layout()
            _raw_copy(buf, rec.snapshots[i])
            scratch.append(buf)
            overrides[i] = buf._desc_flags(abi.ARRAY_FLAG_REPLAY_WRITES)
            continue
        fields = [path for j, path in rec.consume_fields if j == i]
        if fields:  # a struct holding arrays whose gradients the kernel's stores consume
            overrides[i] = _consuming_struct(a, fields)
            continue
        if not hasattr(a, "desc_with"):
            continue
        flags = abi.ARRAY_FLAG_CONSUME_GRAD if i in rec.consume else 0
        snap = rec.after.get(i, rec.snapshots.get(i))  # what only a custom replay reads: as the launch left it
        if snap is not None:
            # the replay writes into its buffer: give it a fresh copy so a second backward starts from the same values
            from .copy import _raw_copy

            buf = snap._new_like_layout()
            _raw_copy(buf, snap)
            scratch.append(buf)
            overrides[i] = a.desc_with(flags=flags | abi.ARRAY_FLAG_REPLAY_WRITES, data_ptr=buf.ptr or 0)
        elif flags:
            overrides[i] = a.desc_with(flags=flags)
    _run_bwd(rec.kernel, rec.spec, rec.dims, list(rec.args), rec.device, overrides, rec.block_dim, rec.stream,
             rec.max_blocks)


def _consuming_struct(value, paths) -> bytes:
    """The packed struct ``value`` with the consume flag set in the descriptors of its arrays at ``paths``."""
    packed = bytearray(value._pack())
    for path in paths:
        at = field_offset(value._ir_, path) + ARRAY_FLAGS_OFFSET
        (flags,) = struct.unpack_from("<i", packed, at)
        struct.pack_into("<i", packed, at, flags | abi.ARRAY_FLAG_CONSUME_GRAD)
    return bytes(packed)


def launch_adjoint(kernel, dims, args, adj_args, device, n_inputs, block_dim: int = 256, stream=None,
                   max_blocks: int = 0) -> None:
    """Warp's explicit form: ``adj_inputs + adj_outputs`` give the adjoint arrays of the array arguments (``None``:
    the array's own ``.grad``)."""
    if len(adj_args) not in (0, len(args)):
        raise LaunchError(f"kernel '{kernel.__name__}': adj_inputs + adj_outputs must have one entry per argument "
                          f"({len(args)}), got {len(adj_args)}")
    types = kernel.infer_types(args)
    spec = kernel.specialize(types, block_dim)
    overrides = {}
    for i, (a, g) in enumerate(zip(args, adj_args or [None] * len(args))):
        if hasattr(a, "desc_with"):
            if g is None:
                continue  # as in Warp: the adjoint goes to the array's own .grad (none if it has none)
            if hasattr(g, "ptr"):
                if g.shape != a.shape:
                    raise LaunchError(f"kernel '{kernel.__name__}': adjoint of argument "
                                      f"'{kernel._param_names[i]}' has shape {g.shape}, expected {a.shape}")
                overrides[i] = a.desc_with(grad_ptr=g.ptr or 0)
    _run_bwd(kernel, spec, dims, args, device, overrides, block_dim, stream, max_blocks)
