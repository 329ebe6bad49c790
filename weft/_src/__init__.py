"""Warp's private module paths (``warp._src.*``), for programs and tests that reach into them.

Policy (docs/warp_compat.md, "Warp's private surface"): each submodule holds exactly the names Warp's own tests
import from it. A name maps to weft's real object when weft has the same thing (type tables, scalar base classes,
the builtin table, device and capture functions, the array and error classes). A name that exists only in Warp's
implementation (its C++ code generator, module builder and hasher, LTO cache, native-library entry points) is
provided as a function that raises :class:`~weft._src._unsupported.PrivateAPIError` naming what it was, so a
module that merely imports it still loads and only the tests that use it fail, with that reason. Nothing here
returns a made-up result.
"""

from . import autograd, build, codegen, context, deterministic, dlpack, geometry, jax, logger, optim, types, utils  # noqa: F401
