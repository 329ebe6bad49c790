"""Which arrays held in struct parameters a kernel specialisation reads and writes (cached on the spec): what
``wp.config.verify_fp`` checks, and which gradients a taped store consumes."""

from __future__ import annotations

from ..ir import types as T
from ..ir.access import struct_arrays_read, struct_arrays_written


def struct_arrays_read_by(spec) -> tuple:
    """(parameter index, field path) of the arrays held in struct parameters that ``spec``'s kernel loads from."""
    found = spec.struct_read
    if found is None:
        found = spec.struct_read = _analyse(spec, struct_arrays_read)
    return found


def struct_arrays_written_by(spec) -> tuple:
    """(parameter index, field path) of the arrays held in struct parameters that ``spec``'s kernel writes."""
    found = spec.struct_written
    if found is None:
        found = spec.struct_written = _analyse(spec, struct_arrays_written)
    return found


def field_array(value, path: tuple):
    """The array at ``path`` (field names) inside the struct instance ``value`` (None if unset)."""
    for name in path:
        value = getattr(value, name, None)
    return value


def _analyse(spec, analysis) -> tuple:
    if not any(isinstance(t, T.StructType) for t in spec.types):
        return ()
    fn = spec.fn if spec.fn is not None else spec._relower()  # a spec restored from its record: lower now
    return analysis(fn)
