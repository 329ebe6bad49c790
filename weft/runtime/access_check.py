"""``wp.config.verify_autograd_array_access``: Warp's read/write tracking of arrays recorded on a Tape.

With the option on, every launch recorded on a Tape marks the arrays its kernel reads (``array._is_read``, shared
by an array and its views) and warns when it writes an array an earlier recorded launch or copy read: replaying the
earlier launch in ``tape.backward`` would see the new values. A kernel that writes an array parameter after reading
it warns too. ``tape.backward()`` and ``tape.reset()`` clear the flags of the arrays they recorded. Warnings go
through ``warnings`` (``AccessWarning``), so they print to stderr and can be filtered or turned into errors.

This is the diagnostic Warp offers; weft's Tape also raises ``OverwriteError`` in ``backward`` when an overwritten
array is one whose values a recorded adjoint actually reads, whether or not the option is on.
"""

from __future__ import annotations

import inspect
import os
import warnings

from .. import config
from ..errors import warn
from ..ir.access import written_after_read

_SUFFIX = "This may corrupt gradient computation in the backward pass."


class AccessWarning(UserWarning):
    """An array is written after a recorded launch read it (``wp.config.verify_autograd_array_access``)."""


# every overwrite is its own event (as Warp prints each one): shown each time, not once per source line; a filter the
# program adds later (warnings.filterwarnings / simplefilter) still takes precedence
warnings.filterwarnings("always", category=AccessWarning)


def enabled() -> bool:
    return bool(getattr(config, "verify_autograd_array_access", False))


def _user_frame():
    """(file, line, stacklevel for a ``warnings.warn`` in our caller) of the first caller outside weft."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = inspect.currentframe(), 0
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame, level = frame.f_back, level + 1
    if frame is None:
        return None, None, 2
    return frame.f_code.co_filename, frame.f_lineno, level


def _warn(message: str) -> None:
    _, _, level = _user_frame()
    warn(message, AccessWarning, stacklevel=level)


def mark_read(a) -> None:
    a._shared.is_read = True


def mark_write(a, what: str = "") -> None:
    if a._shared.is_read:
        _warn(f"Array {_label(a)}{what} is being written to but has already been read from in a previous launch. "
              f"{_SUFFIX}")


def _label(a) -> str:
    return f"of shape {a.shape} and dtype {getattr(a.dtype, '__name__', a.dtype)}"


def check_launch(tape, kernel, spec, args) -> None:
    """Mark the arrays a recorded launch writes (warning after an earlier read), then those it reads."""
    names = kernel._param_names
    file, line = _source_line(kernel)
    for i in spec.written_after_read if hasattr(spec, "written_after_read") else _written_after_read(spec):
        _warn(f"Array passed to argument {names[i]} in kernel {kernel.__name__} at {file}:{line} is being written to "
              f"after it has been read from within the same kernel. {_SUFFIX}")
    for i in spec.written:
        if hasattr(args[i], "_shared"):
            mark_write(args[i], f" passed to argument {names[i]} in kernel {kernel.__name__} at {file}:{line}")
    for i in spec.read:
        if hasattr(args[i], "_shared"):
            mark_read(args[i])
            tape._read_marked.append(args[i])


def check_copy(tape, dest, src) -> None:
    """``wp.copy(dest, src)`` recorded on a Tape: a write of ``dest``, a read of ``src``."""
    if dest._shared.is_read:
        file, line, _ = _user_frame()
        _warn(f"Array {_label(dest)} is being written to by an array copy at {file}:{line} but has already been read "
              f"from in a previous launch. {_SUFFIX}")
    mark_read(src)
    tape._read_marked.append(src)


def clear(tape) -> None:
    """The reads recorded by ``tape`` are consumed (backward) or forgotten (reset)."""
    for a in tape._read_marked:
        a._shared.is_read = False
    tape._read_marked = []


def _written_after_read(spec) -> tuple[int, ...]:
    found = written_after_read(spec.fn)
    spec.written_after_read = found
    return found


def _source_line(kernel) -> tuple[str, int]:
    func = getattr(kernel, "func", None) or getattr(kernel, "_func", None)
    code = getattr(func, "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code is not None else ("<unknown>", 0)
