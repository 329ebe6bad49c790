"""Aliases for programs that reach into Warp's private module paths: ``warp._src.types`` is ``wp.types`` here.

Only the type tables and helpers that Warp also exports publicly are provided; Warp's runtime, codegen and
context internals have no weft equivalent.
"""

from .. import types_compat as types  # noqa: F401
from .. import utils  # noqa: F401
