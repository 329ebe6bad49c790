"""``wp.launch`` and ``wp.Launch``: argument checking, packing and the native call."""

from __future__ import annotations

import ctypes
import struct

import numpy as np

from .. import config
from ..errors import LaunchError, RuntimeError_
from . import device as D
from .sync import active_capture
from .tape import active_tape

_DIMS = {n: struct.Struct(f"<{n}q") for n in range(1, 5)}


def normalize_dim(dim) -> tuple[int, ...]:
    if isinstance(dim, (int, np.integer)):
        dims = (int(dim),)
    else:
        try:
            dims = tuple(int(d) for d in dim)
        except TypeError:
            raise LaunchError(f"dim must be an int or a tuple of 1-4 ints, got {dim!r}") from None
    if not 1 <= len(dims) <= 4:
        raise LaunchError(f"dim must have 1 to 4 dimensions, got {dims}")
    if any(d < 0 for d in dims):
        raise LaunchError(f"dim must not be negative, got {dims}")
    return dims


def _threads() -> int:
    return 1 if config.deterministic else config.num_threads


def launch(kernel, dim, inputs=(), outputs=(), adj_inputs=(), adj_outputs=(), device=None, stream=None,
           adjoint=False, record_tape=True, record_cmd=False, max_blocks=0, block_dim=256):
    """Launch ``kernel`` over the grid ``dim`` with ``inputs + outputs`` as its arguments."""
    from ..kernel import Kernel

    if not isinstance(kernel, Kernel):
        raise LaunchError(f"wp.launch expects a @wp.kernel, got {type(kernel).__name__}")
    args = list(inputs) + list(outputs)
    names = kernel._param_names
    if len(args) != len(names):
        raise LaunchError(f"kernel '{kernel.__name__}' takes {len(names)} arguments ({', '.join(names)}), "
                          f"got {len(args)}")
    dev = D.get_device(device) if device is not None else _infer_device(args)
    dims = normalize_dim(dim)
    if adjoint:
        from ..autodiff.launch import launch_adjoint

        return launch_adjoint(kernel, dims, args, list(adj_inputs) + list(adj_outputs), dev, len(inputs))
    types = kernel.infer_types(args)
    spec = kernel.specialize(types)
    _check_devices(kernel, spec, args, dev)
    if spec.tid_arity > 1 and spec.tid_arity != len(dims):
        raise LaunchError(f"kernel '{kernel.__name__}' unpacks wp.tid() into {spec.tid_arity} indices but was "
                          f"launched with a {len(dims)}-D dim {dims}")
    packed = spec.pack(args)
    if record_cmd:
        return Launch(kernel, spec, dims, args, dev, packed)
    from .sync import active_capture

    tape = active_tape.get() if record_tape else None
    snapshots = tape._before_launch(spec, args) if tape is not None and spec.snapshot else {}
    graph = active_capture()
    if graph is not None and graph.device == dev and dev.is_cpu:
        graph.launches.append(lambda: _run(spec, packed, dims, dev, args, block_dim))
    else:
        _run(spec, packed, dims, dev, args, block_dim)
    if tape is not None:
        tape._record_launch(kernel, spec, dims, args, dev, len(inputs), block_dim, snapshots)
    return None


def _run(spec, packed: bytes, dims: tuple[int, ...], dev, args, block_dim=256) -> None:
    if dev.is_cpu:
        spec.fwd(packed, _DIMS[len(dims)].pack(*dims), len(dims), _threads())
    else:
        from ..cuda import launch as cuda_launch

        cuda_launch.run_forward(spec, packed, dims, dev, block_dim)
    for i in spec.written:
        a = args[i]
        if hasattr(a, "_mark_written"):
            a._mark_written()
    if spec.debug:
        check_errors(spec)
    if config.verify_fp:
        verify_fp(spec, args)


class _ErrorState(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int32), ("count", ctypes.c_int32), ("message", ctypes.c_char * 480)]


def check_errors(spec) -> None:
    if not spec.errors:
        return
    state = _ErrorState.from_address(spec.errors)
    if state.code:
        code, count, msg = state.code, state.count, state.message.decode(errors="replace")
        state.code = 0
        state.count = 0
        state.message = b""
        more = f" (and {count - 1} more)" if count > 1 else ""
        if code == 3:
            return  # expect_* failures are printed by the kernel, as in Warp
        kind = "assertion failed" if code == 2 else "error"
        raise RuntimeError_(f"{kind}: {msg}{more}")


def verify_fp(spec, args) -> None:
    for i in spec.written:
        a = args[i]
        if not hasattr(a, "numpy"):
            continue
        data = a.numpy()
        if data.dtype.kind == "f" and not np.isfinite(data).all():
            bad = np.argwhere(~np.isfinite(data))[0]
            raise RuntimeError_(f"kernel '{spec.kernel.__name__}' wrote a non-finite value into argument "
                                f"'{spec.kernel._param_names[i]}' at index {tuple(int(x) for x in bad)} "
                                "(wp.config.verify_fp is set)")


def _infer_device(args):
    for a in args:
        dev = getattr(a, "device", None)
        if isinstance(dev, D.Device):
            return dev
    return D.get_device(None)


def _check_devices(kernel, spec, args, dev) -> None:
    for name, a in zip(kernel._param_names, args):
        adev = getattr(a, "device", None)
        if isinstance(adev, D.Device) and adev != dev:
            raise LaunchError(f"kernel '{kernel.__name__}' argument '{name}' is on device '{adev}' but the launch "
                              f"is on '{dev}'; copy it with a.to('{dev}') or launch on '{adev}'")


class Launch:
    """A prepared launch: arguments packed once, relaunched cheaply with ``launch()``."""

    def __init__(self, kernel, spec, dims, args, device, packed: bytes):
        self.kernel = kernel
        self.spec = spec
        self.dim = dims
        self.args = list(args)
        self.device = device
        self._packed = packed
        self._dims = _DIMS[len(dims)].pack(*dims)
        self._ndim = len(dims)

    def set_dim(self, dim) -> None:
        self.dim = normalize_dim(dim)
        self._dims = _DIMS[len(self.dim)].pack(*self.dim)
        self._ndim = len(self.dim)

    def set_param_at_index(self, index: int, value) -> None:
        self.args[index] = value
        self._packed = self.spec.pack(self.args)

    def set_param_by_name(self, name: str, value) -> None:
        self.set_param_at_index(self.kernel._param_names.index(name), value)

    def set_params(self, values) -> None:
        self.args = list(values)
        self._packed = self.spec.pack(self.args)

    def launch(self, stream=None) -> None:
        spec = self.spec
        if self.device.is_cpu and not spec.debug and not config.verify_fp:
            spec.fwd(self._packed, self._dims, self._ndim, _threads())
            for i in spec.written:
                self.args[i]._mark_written()
            return
        _run(spec, self._packed, self.dim, self.device, self.args)
