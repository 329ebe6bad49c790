"""``warp._src.jax``: Warp's private JAX module (the names Warp's tests import): ``get_jax_device`` (the JAX
device in effect: ``jax.default_device``'s, else the first local one) and the device mapping, which are weft's."""

from __future__ import annotations

from ...interop.jax import dtype_from_jax, dtype_to_jax, from_jax, to_jax  # noqa: F401
from ...interop.jax_ffi import device_from_jax, device_to_jax  # noqa: F401
from . import ffi  # noqa: F401


def get_jax_device():
    """The JAX device in effect (``jax.default_device``'s, else the first local device)."""
    import jax

    device = jax.config.jax_default_device
    return device if device is not None else jax.local_devices()[0]
