"""Errors weft raises. Every error users see subclasses :class:`Error`."""

from __future__ import annotations

import linecache
import sys
import warnings
from dataclasses import dataclass

from . import config


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A span in the user's Python source (1-based line, 0-based column as in :mod:`ast`)."""

    file: str
    line: int
    col: int
    end_col: int | None = None
    text: str = ""  # the source line, without its newline
    func: str = ""

    def render(self) -> str:
        head = f'  File "{self.file}", line {self.line}, col {self.col + 1}'
        if self.func:
            head += f", in {self.func}"
        if not self.text:
            return head
        stripped = self.text.lstrip()
        indent = len(self.text) - len(stripped)
        start = max(self.col - indent, 0)
        end = self.end_col - indent if self.end_col and self.end_col > self.col else start + 1
        caret = " " * (4 + start) + "^" * max(end - start, 1)
        return f"{head}\n    {stripped}\n{caret}"


class Error(Exception):
    """Base class of all weft errors."""


class CompileError(Error, RuntimeError):
    """A kernel or func cannot be compiled; carries the user's source location. Also a ``RuntimeError``, as Warp's
    code-generation errors are, so ``except RuntimeError`` in Warp programs catches it."""

    def __init__(self, message: str, loc: SourceLoc | None = None, hint: str = "", chain: tuple[SourceLoc, ...] = ()):
        self.message = message
        self.loc = loc
        self.hint = hint
        self.chain = chain
        head, *rest = self._parts()
        if _NOTES:
            # str(e) is the one line "file:line:col: error: message" (so Warp programs matching the message, also
            # with a trailing `$`, see it); the source excerpt, the call chain and the hint are notes, printed under
            # it in every traceback (and in full_text)
            super().__init__(head)
            for part in rest:
                self.add_note(part)
        else:  # Python 3.10: no notes, the whole report is the message
            super().__init__("\n".join((head, *rest)))

    def __str__(self) -> str:  # the message also where a builtin base (KeyError) would quote it
        return self.args[0] if self.args else ""

    @property
    def full_text(self) -> str:
        """The whole report: the message line, the source excerpt with a caret, the call chain and the hint."""
        return "\n".join(self._parts())

    def _parts(self) -> list[str]:
        parts = []
        if self.loc is not None:
            parts.append(f"{self.loc.file}:{self.loc.line}:{self.loc.col + 1}: error: {self.message}")
            parts.append(self.loc.render())
        else:
            parts.append(f"error: {self.message}")
        for callee in self.chain:
            parts.append("  called from / inside:\n" + callee.render())
        if self.hint:
            parts.append(f"  hint: {self.hint}")
        return parts

    def _format(self) -> str:
        return self.full_text


_NOTES = hasattr(BaseException, "add_note")


class TypeError_(CompileError):
    """A type error in kernel code (named with a trailing underscore to avoid shadowing the builtin)."""


class KernelTypeError(CompileError, TypeError):
    """A type error in kernel code that Warp raises as ``TypeError`` (element-wise tile arithmetic on composite
    elements), so ``except TypeError`` in Warp programs catches it."""


class KernelValueError(CompileError, ValueError):
    """An invalid compile-time value in kernel code that Warp raises as ``ValueError`` (a tile rank or axis out of
    range), so ``except ValueError`` in Warp programs catches it."""


class KernelAttributeError(CompileError, AttributeError):
    """Kernel code names an attribute a Python module does not have (``wp.nonexistent_func()``): an AttributeError,
    as Warp raises."""


class KernelNameError(CompileError, KeyError):
    """Kernel code reads a name defined nowhere: a KeyError, as Warp raises for an undefined symbol."""


class KernelIndexError(CompileError, IndexError):
    """A constant index out of range in kernel code (Warp's ``WarpCodegenIndexError``)."""


class DeterminismError(Error, RuntimeError):
    """Warp's ``WarpDeterminismError`` (deterministic execution was asked for and cannot be given), for programs that
    catch it. weft's deterministic mode (``wp.config.deterministic``) runs each CPU launch on one thread in index
    order, which every kernel allows, so no CPU launch raises it."""


class UnionAnnotationError(CompileError, RuntimeError):
    """A kernel or func parameter annotated with a Union (``a: X | Y``): a RuntimeError, as Warp raises."""


class LaunchError(Error, RuntimeError):
    """A launch was given arguments that do not match the kernel signature (also a ``RuntimeError``, as Warp raises
    for launch arguments)."""


class LaunchValueError(LaunchError, ValueError):
    """A launch argument that cannot be converted to its parameter's type at all (``None`` for a vector): also a
    ``ValueError``, as Warp raises."""


class StructFieldError(Error, TypeError):
    """A value assigned to a ``@wp.struct`` field does not fit the field's type (also a ``TypeError``)."""


class StructDefinitionError(Error, RuntimeError):
    """A ``@wp.struct`` class that cannot be a struct (one deriving from another class): a RuntimeError, as Warp."""


class StructFieldValueError(Error, ValueError):
    """A struct cannot be copied as asked (``s.to(device)`` of a struct holding a Fabric array on another device)."""


class CopyError(Error, RuntimeError):
    """Invalid arguments to ``wp.copy`` (offsets, count, dtypes, shapes): a RuntimeError, as Warp raises."""


class HostCallError(Error, RuntimeError):
    """A builtin called from Python with arguments none of its overloads takes (a RuntimeError, as Warp raises)."""


class ReshapeError(Error, ValueError, RuntimeError):
    """An array reshaped to a shape of another size: a ValueError (as NumPy) that is also the RuntimeError Warp
    raises."""


class ViewDtypeError(Error, TypeError, ValueError):
    """``a.view(dtype)`` with a dtype of another element size: the TypeError Warp raises (also a ValueError)."""


class ToolchainError(Error):
    """The native toolchain is missing or failed (the latter is a weft bug)."""


class CacheError(Error):
    """The kernel cache directory is unsafe or unusable."""


class RuntimeError_(Error):
    """A kernel reported an error while running (debug-mode bounds check, NaN check)."""


class BackwardDisabledError(Error, ValueError):
    """An adjoint Jacobian asked of a kernel whose ``enable_backward`` option (its own or its module's) is False."""


class DeviceError(Error, RuntimeError):
    """A device was requested that does not exist or cannot be used (a RuntimeError, as Warp raises)."""


class GeometryError(Error, ValueError):
    """Bad input to a geometry object (Mesh, Bvh, HashGrid, MarchingCubes): names the argument and what is wrong."""


class NanoVDBError(GeometryError, RuntimeError):
    """NanoVDB data that weft cannot read: not NanoVDB, malformed (offsets or sizes outside the buffer), or a grid
    type weft does not read (a RuntimeError, as Warp raises)."""


class GeometryTypeError(GeometryError, TypeError):
    """A geometry argument of the wrong type (a dtype the object does not take, points of another precision)."""


class GeometryLimitError(GeometryError, RuntimeError):
    """A geometry request weft does not support (a hash grid of more than 2**30 cells, a grouped cuBQL BVH)."""


class FabricError(Error, ValueError):
    """An invalid Fabric array interface or Fabric array argument (a ValueError, as Warp raises)."""


class FabricUnsupportedError(Error, RuntimeError):
    """A Fabric attribute or operation weft does not support (a RuntimeError, as Warp raises): unusable or text
    attributes, unknown base types, filling a jagged Fabric array of arrays."""


def _show_as_warp(message, category, filename, lineno, file=None, line=None) -> None:
    """Warp's display of its warnings: ``Warp UserWarning: message`` on the current ``sys.stderr`` (with the source
    location when ``wp.config.verbose_warnings`` is set)."""
    text = f"Warp {category.__name__}: {message}"
    if config.verbose_warnings:
        text += f" ({filename}:{lineno})"
        line = line if line is not None else linecache.getline(filename, lineno)
        if line and line.strip():
            text += f"\n  {line.strip()}"
    (file or sys.stderr).write(text + "\n")


def _default_display() -> bool:
    """Whether a shown warning would go to Python's own display (nothing records warnings: no
    ``catch_warnings(record=True)``, ``pytest.warns`` or ``logging.captureWarnings``, no custom ``showwarning``)."""
    orig = getattr(warnings, "_showwarning_orig", None)
    impl = getattr(warnings, "_showwarnmsg_impl", None)
    return orig is not None and warnings.showwarning is orig and getattr(impl, "__module__", None) == "warnings"


#: the logger ``wp.set_logger`` installed (weft/logger.py), or None for weft's own output (warnings through
#: :mod:`warnings`, debug messages on stdout)
active_logger = None


def log_debug(message: str) -> None:
    """One of weft's debug-level messages (compiles, cache loads; callers check ``config.debug_messages()``): to the
    installed logger's ``debug``, else stdout."""
    if active_logger is not None:
        active_logger.debug(message)
    else:
        print(message)


def warn(message: str, category: type[Warning] = UserWarning, stacklevel: int = 1) -> None:
    """weft's warnings: issued through :mod:`warnings`, so filters apply as usual (``"error"``, ``"ignore"``, once per
    location by default; ``pytest.warns`` and ``catch_warnings(record=True)`` record them). Shown, when nothing records
    them, in Warp's form ``Warp UserWarning: message`` on stderr. ``stacklevel`` counts from the caller of ``warn``.
    With a logger installed (``wp.set_logger``) the warning goes to its ``warning`` method instead."""
    if active_logger is not None:
        active_logger.warning(message, category, stacklevel=stacklevel + 1)
        return
    if not _default_display():
        warnings.warn(message, category, stacklevel=stacklevel + 1)
        return
    previous = warnings.showwarning
    warnings.showwarning = _show_as_warp
    try:
        warnings.warn(message, category, stacklevel=stacklevel + 1)
    finally:
        if warnings.showwarning is _show_as_warp:
            warnings.showwarning = previous
