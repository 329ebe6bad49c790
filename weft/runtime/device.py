"""Devices: the CPU always; CUDA devices when the optional CUDA backend finds a driver and GPUs."""

from __future__ import annotations

import contextvars
import enum
import os
from dataclasses import dataclass, field

from ..cuda import driver, manage
from ..errors import DeviceError
from ..toolchain import nvrtc
from .backends import CpuBackend, DeviceBackend


class DeviceKind(enum.Enum):
    """The kinds of device weft runs on; each has a backend class implementing ``runtime.backends.DeviceBackend``."""

    CPU = "cpu"
    CUDA = "cuda"


@dataclass(eq=False)
class Device:
    alias: str  # "cpu", "cuda:0", ...
    name: str
    ordinal: int = -1
    backend: object = None  # the CUDA context object for GPUs
    kind: DeviceKind = DeviceKind.CPU
    #: what the runtime asks of the device (memory, launches, streams, events, capture): runtime/backends.py
    impl: DeviceBackend = field(default_factory=CpuBackend)

    @property
    def is_cpu(self) -> bool:
        return self.kind is DeviceKind.CPU

    @property
    def is_cuda(self) -> bool:
        return self.kind is DeviceKind.CUDA

    def __str__(self) -> str:
        return self.alias

    def __repr__(self) -> str:
        return f'Device("{self.alias}")'

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = get_device(other)
            except DeviceError:
                return False
        return isinstance(other, Device) and other.alias == self.alias

    def __hash__(self) -> int:
        return hash(self.alias)

    # Warp compatibility
    @property
    def context(self):
        """Warp's device context: None for the CPU, the CUDA context object of a GPU."""
        return self.backend

    @property
    def is_mempool_supported(self) -> bool:
        """Whether the GPU has a stream-ordered memory pool (never the CPU)."""
        return bool(self.impl.cuda_driver and self.backend.mempool_supported)

    # Warp's device facts for memory management (weft/runtime/cuda_api.py acts on them)
    @property
    def is_mempool_enabled(self) -> bool:
        """Whether the device's arrays come from its memory pool now (``wp.set_mempool_enabled``)."""
        return bool(self.is_mempool_supported and self.backend.mempool_enabled)

    @property
    def is_ipc_supported(self) -> bool:
        """Whether allocations and events can be shared with other processes (Linux GPUs; never the CPU)."""
        return bool(self.impl.cuda_driver and manage.ipc_supported(self.backend))

    @property
    def is_managed_memory_supported(self) -> bool:
        """Whether the GPU supports CUDA managed memory (``wp.CudaManagedAllocator``; never the CPU)."""
        return bool(self.impl.cuda_driver and manage.managed_supported(self.backend))

    @property
    def is_uva(self) -> bool:
        """Whether the GPU shares one virtual address space with the host (every GPU weft drives; not the CPU)."""
        return bool(self.impl.cuda_driver)

    @property
    def total_memory(self) -> int:
        """The device's memory in bytes: the GPU's; the host's with ``psutil`` installed, else 0 (as Warp)."""
        if self.impl.cuda_driver:
            return int(self.backend.total_memory)
        return _host_memory()[0]

    @property
    def free_memory(self) -> int:
        """Memory in bytes the device has free now (``cuMemGetInfo``; the host's with ``psutil``, else 0)."""
        if self.impl.cuda_driver:
            return manage.free_memory(self.backend)
        return _host_memory()[1]

    @property
    def arch(self) -> int:
        return getattr(self.backend, "arch", 0)

    @property
    def sm_count(self) -> int:
        """Streaming multiprocessors of a GPU (0 for the CPU, as Warp reports)."""
        return int(getattr(self.backend, "sm_count", 0)) if self.is_cuda else 0

    @property
    def max_shared_memory_per_block(self) -> int:
        """Shared memory in bytes a block of a kernel can use on a GPU (with opt-in; 0 for the CPU, as Warp)."""
        return int(self.backend.max_shared_memory_per_block) if self.is_cuda else 0


def _host_memory() -> tuple[int, int]:
    """(total, available) host memory from ``psutil`` when it is installed, else (0, 0) as Warp reports."""
    try:
        import psutil
    except ImportError:
        return 0, 0
    vm = psutil.virtual_memory()
    return int(vm.total), int(vm.available)


CPU = Device("cpu", _cpu_name := (os.uname().machine if hasattr(os, "uname") else "cpu"))
_devices: dict[str, Device] = {"cpu": CPU}
_cuda_probed = False
_current: contextvars.ContextVar[Device | None] = contextvars.ContextVar("weft_device", default=None)


def _probe_cuda() -> None:
    global _cuda_probed
    if _cuda_probed:
        return
    _cuda_probed = True
    contexts = driver.discover_contexts()  # empty without the driver, a GPU or the cuda extra (never raises)
    if not contexts:
        return
    from .cuda_backend import wrap_contexts  # the CUDA backend is loaded only when there is a GPU to drive

    for dev in wrap_contexts(contexts, Device, DeviceKind.CUDA):
        _devices[dev.alias] = dev


def get_devices() -> list[Device]:
    """Every device weft can use: the CPU, then each CUDA device found."""
    _probe_cuda()
    return list(_devices.values())


def known_devices() -> list[Device]:
    """The devices found so far, without probing for CUDA (the CPU only, until a CUDA device is asked for)."""
    return list(_devices.values())


def get_cuda_devices() -> list[Device]:
    """The CUDA devices found (empty without the NVIDIA driver, a GPU or the ``cuda`` extra)."""
    return [d for d in get_devices() if d.is_cuda]


def get_cuda_supported_archs() -> list[int]:
    """The GPU architectures (``86`` for sm_86 ...) NVRTC can compile for: empty without NVRTC (the ``cuda`` extra).
    Needs no GPU."""
    return [int(a) for a in nvrtc.supported_archs()] if nvrtc.is_available() else []


def is_cuda_available() -> bool:
    """Whether at least one CUDA device can be used."""
    return bool(get_cuda_devices())


def is_device_available(device) -> bool:
    """Whether ``device`` (a Device or an alias such as ``"cuda:1"``) is one of the devices found."""
    try:
        return get_device(device) in get_devices()
    except Exception:  # noqa: BLE001 - any unresolvable alias is simply not available
        return False


def is_conditional_graph_supported() -> bool:
    """Whether captured graphs can hold conditional nodes (Warp's ``capture_if`` / ``capture_while``): weft's
    graphs are plain launch sequences, so never."""
    return False


def get_cuda_device_count() -> int:
    """The number of CUDA devices found."""
    return len(get_cuda_devices())


#: extra names of CUDA devices (wp.map_cuda_device)
_aliases: dict[str, Device] = {}


def map_cuda_device(alias: str, context=None) -> Device:
    """Give the CUDA device of ``context`` (default: the current device's, when it is a CUDA device) the extra name
    ``alias``; ``wp.get_device(alias)`` and ``device=alias`` then name it. weft drives the primary context of each
    GPU: a context weft did not create is refused.

    Raises:
        RuntimeError: no CUDA device with that context, or ``alias`` already names another device.
    """
    if context is None:
        current = get_device()
        if current not in get_cuda_devices():
            raise DeviceError(f"Unable to determine CUDA context for device alias '{alias}'")
        context = current.context
    found = next((d for d in get_cuda_devices() if d.context is context or d.context == context), None)
    if found is None:
        raise DeviceError(f"wp.map_cuda_device('{alias}'): the context is not one of weft's CUDA devices (weft drives "
                          "the primary context of each GPU)")
    taken = _aliases.get(alias) or _devices.get(alias)
    if taken is not None and taken is not found:
        raise DeviceError(f"Device alias '{alias}' already exists")
    if alias not in _devices:
        _aliases[alias] = found
    return found


def unmap_cuda_device(alias: str) -> None:
    """Remove a name given by :func:`map_cuda_device`.

    Raises:
        RuntimeError: ``alias`` is not such a name.
    """
    if alias not in _aliases:
        raise DeviceError(f"Invalid CUDA device alias '{alias}'")
    del _aliases[alias]


def get_device(ident=None) -> Device:
    """Resolve ``None`` (the current default), ``"cpu"``, ``"cuda"``, ``"cuda:N"``, a name given by
    ``wp.map_cuda_device``, or a Device."""
    if isinstance(ident, Device):
        return ident
    if ident is None:
        cur = _current.get()
        if cur is not None:
            return cur
        return _default_device()
    if not isinstance(ident, str):
        raise DeviceError(f"invalid device {ident!r}; expected 'cpu', 'cuda' or 'cuda:N'")
    if ident == "cpu":
        return CPU
    if ident in _aliases:
        return _aliases[ident]
    if ident.startswith("cuda"):
        _probe_cuda()
        cudas = [d for d in _devices.values() if d.is_cuda]
        if not cudas:
            raise DeviceError(
                f"device '{ident}' was requested but no CUDA device is available (no NVIDIA driver/GPU found, or "
                "the CUDA extra is not installed: pip install 'weft-lang[cuda]'). Use device='cpu'.")
        if ident == "cuda":
            return cudas[0]
        if ident in _devices:
            return _devices[ident]
        raise DeviceError(f"device '{ident}' does not exist; available: {', '.join(d.alias for d in cudas)}")
    raise DeviceError(f"unknown device '{ident}'; expected 'cpu', 'cuda' or 'cuda:N'")


_default_alias: str | None = None


def _default_device() -> Device:
    if _default_alias is not None:
        return get_device(_default_alias)
    return get_preferred_device()


def set_device(ident) -> None:
    """Make ``ident`` (``"cpu"``, ``"cuda"``, ``"cuda:N"`` or a Device) the default device."""
    global _default_alias
    _default_alias = get_device(ident).alias


def get_preferred_device() -> Device:
    """The first CUDA device if there is one, else the CPU."""
    cudas = get_cuda_devices()
    return cudas[0] if cudas else CPU


class ScopedDevice:
    """``with wp.ScopedDevice("cpu"):`` makes a device the default inside the block."""

    def __init__(self, device):
        self.device = get_device(device)
        self._token = None

    def __enter__(self):
        self._token = _current.set(self.device)
        return self.device

    def __exit__(self, *exc):
        _current.reset(self._token)
        return False
