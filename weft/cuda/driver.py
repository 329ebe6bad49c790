"""CUDA driver: initialisation, device discovery, primary contexts and error checking.

The driver is reached through ``cuda.bindings.driver`` (``pip install 'weft-lang[cuda]'``). Every call returns a
tuple ``(CUresult, *values)``; :func:`check` turns a failure into a :class:`CudaError` that names the call.
Discovery never raises: a machine without the bindings, the driver library or a GPU simply has no CUDA devices,
and :data:`unavailable_reason` says why (for error messages).
"""

from __future__ import annotations

import threading

from .. import config
from ..errors import Error

#: Why no CUDA device was found (empty while devices exist or before discovery).
unavailable_reason: str = ""

_tls = threading.local()  # the Context made current on this thread (saves a driver call per launch)


class CudaError(Error):
    """A CUDA driver call failed."""


#: A stand-in for ``cuda.bindings.driver`` (tests run the runtime's logic against a host-memory fake).
override = None


def api():
    """The ``cuda.bindings.driver`` module (raises ImportError without the CUDA extra)."""
    if override is not None:
        return override
    try:
        from cuda.bindings import driver
    except ImportError:
        from cuda import cuda as driver  # cuda-python < 12.6 layout
    return driver


def check(result, what: str = "CUDA call"):
    """Unpack a cuda-bindings result tuple: the single value, a tuple of values, or None; raise on error."""
    err = result[0]
    if int(err) != 0:
        raise CudaError(f"{what} failed: {error_text(err)}")
    if len(result) == 1:
        return None
    return result[1] if len(result) == 2 else tuple(result[1:])


def error_text(err) -> str:
    drv = api()
    try:
        _, name = drv.cuGetErrorName(err)
        _, text = drv.cuGetErrorString(err)
        return f"{name.decode()} ({text.decode()})"
    except Exception:  # noqa: BLE001 - a failure while describing a failure
        return repr(err)


class Context:
    """One GPU: its device handle, retained primary context, default memory pool and static properties.

    This is ``Device.backend`` for CUDA devices. The primary context (shared with the CUDA runtime, so PyTorch,
    CuPy and JAX see the same allocations) is retained on first use, not at discovery.
    """

    def __init__(self, ordinal: int):
        drv = api()
        attr = drv.CUdevice_attribute
        self.ordinal = ordinal
        self.handle = check(drv.cuDeviceGet(ordinal), "cuDeviceGet")
        self.name = check(drv.cuDeviceGetName(256, self.handle), "cuDeviceGetName").split(b"\0", 1)[0].decode()
        major = self._attr(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        minor = self._attr(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        self.arch = 10 * major + minor
        self.sm_count = self._attr(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        self.total_memory = int(check(drv.cuDeviceTotalMem(self.handle), "cuDeviceTotalMem"))
        self.mempool_supported = bool(self._attr(attr.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED))
        self.uuid = None
        #: allocations use the stream-ordered pool (``wp.set_mempool_enabled``); ordinary ``cuMemAlloc`` when False
        self.mempool_enabled = self.mempool_supported and bool(config.enable_mempools_at_init)
        #: a user allocator (``wp.set_device_allocator``): an object with ``allocate(nbytes) -> int`` and
        #: ``deallocate(ptr, nbytes)``; None: the built-in pool or default allocator
        self.custom_allocator = None
        self._context = None
        self._pool = None
        self._lock = threading.Lock()

    @property
    def max_shared_memory_per_block(self) -> int:
        """Shared memory in bytes one block can use with opt-in (queried when first asked)."""
        return self._attr(api().CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)

    def _attr(self, which) -> int:
        return int(check(api().cuDeviceGetAttribute(which, self.handle), "cuDeviceGetAttribute"))

    @property
    def context(self):
        """The retained primary context (retained on first use)."""
        if self._context is None:
            with self._lock:
                if self._context is None:
                    self._context = check(api().cuDevicePrimaryCtxRetain(self.handle), "cuDevicePrimaryCtxRetain")
        return self._context

    def make_current(self) -> None:
        """Make this GPU's primary context current on the calling thread (a no-op when it already is)."""
        if getattr(_tls, "current", None) is not self:
            check(api().cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
            _tls.current = self

    @property
    def pool(self):
        """The device's default stream-ordered memory pool, set to keep freed memory for reuse (as Warp does)."""
        if self._pool is None and self.mempool_supported:
            drv = api()
            self.make_current()
            pool = check(drv.cuDeviceGetDefaultMemPool(self.handle), "cuDeviceGetDefaultMemPool")
            keep_all = drv.cuuint64_t(0xFFFFFFFFFFFFFFFF)
            check(drv.cuMemPoolSetAttribute(pool, drv.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                            keep_all), "cuMemPoolSetAttribute")
            self._pool = pool
        return self._pool

    def synchronize(self) -> None:
        self.make_current()
        check(api().cuCtxSynchronize(), "cuCtxSynchronize")

    def __repr__(self) -> str:
        return f"<CUDA context cuda:{self.ordinal} {self.name} sm_{self.arch}>"


_initialised: bool | None = None


def initialise() -> bool:
    """``cuInit`` once; False (with :data:`unavailable_reason` set) when there is no usable driver."""
    global _initialised, unavailable_reason
    if _initialised is None:
        if override is None and not _driver_library_present():
            # no driver library: no GPU to find, and importing the bindings (~0.1-0.2 s) would be wasted
            unavailable_reason = ("no NVIDIA driver library (libcuda) on this machine" if _bindings_installed() else
                                  "the CUDA extra is not installed (pip install 'weft-lang[cuda]')")
            _initialised = False
            return False
        try:
            drv = api()
        except ImportError:
            unavailable_reason = "the CUDA extra is not installed (pip install 'weft-lang[cuda]')"
            _initialised = False
            return False
        try:
            check(drv.cuInit(0), "cuInit")
            _initialised = True
        except Exception as exc:  # noqa: BLE001 - no driver library, no GPU, driver too old: all mean "no CUDA"
            unavailable_reason = f"the NVIDIA driver is not usable here ({type(exc).__name__}: {exc})"
            _initialised = False
    return _initialised


def _driver_library_present() -> bool:
    """Whether the NVIDIA driver library can be loaded (a dlopen: well under a millisecond when it is absent)."""
    import ctypes
    import sys

    names = ["nvcuda.dll"] if sys.platform == "win32" else ["libcuda.so.1", "libcuda.so"]
    for name in names:
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return False


def _bindings_installed() -> bool:
    """Whether the CUDA bindings could be imported (looked up, not imported)."""
    import importlib.util

    for name in ("cuda.bindings", "cuda.cuda"):
        try:
            if importlib.util.find_spec(name) is not None:
                return True
        except (ImportError, ValueError):
            continue
    return False


def driver_version() -> int:
    """The driver's CUDA version as 1000 * major + 10 * minor (0 without a driver)."""
    if not initialise():
        return 0
    return int(check(api().cuDriverGetVersion(), "cuDriverGetVersion"))


def discover_contexts() -> list[Context]:
    """A :class:`Context` per GPU, in ordinal order; an empty list when there is no driver or GPU (never raises).
    The runtime wraps each in a ``Device`` (``weft.runtime.device``)."""
    global unavailable_reason
    if not initialise():
        return []
    try:
        count = int(check(api().cuDeviceGetCount(), "cuDeviceGetCount"))
        contexts = [Context(i) for i in range(count)]
    except Exception as exc:  # noqa: BLE001
        unavailable_reason = f"CUDA device query failed ({exc})"
        return []
    if not contexts:
        unavailable_reason = "the NVIDIA driver reports no GPU"
    return contexts
