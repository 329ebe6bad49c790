"""``wp.Tape``: records launches and copies, then runs their adjoints in reverse.

Beyond Warp: every array a recorded launch reads carries a write-version; if a later write changed it before
``backward`` and the launch's backward reads its values (``value_reads.adjoint_value_reads``: arrays only indexed for
their gradients, such as a transpose's input, do not count), the replay would read the wrong values, so
``backward`` raises an error naming both kernels and the array instead of returning a wrong gradient (``tape.allow_overwrite(a)`` opts an array out). Kernels that
update an array in place get a private copy of its old contents for their replay, and stores that overwrite
values written earlier on the tape consume the gradient of the overwritten value.
"""

from __future__ import annotations

import contextlib
import contextvars
import weakref
from dataclasses import dataclass, field

from ..autodiff.value_reads import adjoint_value_reads
from ..errors import Error, warn
from ..ir import types as T
from . import access_check
from .array import defer_zero
from .backends import CopyAdjoint, backend_for
from .struct_access import field_array, struct_arrays_read_by, struct_arrays_written_by

#: the Tape recording now (launches, copies and library calls record themselves on it)
active_tape: contextvars.ContextVar = contextvars.ContextVar("weft_tape", default=None)


class NestedTapeError(Error, RuntimeError):
    """``with wp.Tape()`` while another Tape records (Warp raises a RuntimeError too)."""


@contextlib.contextmanager
def outside_tape():
    """No Tape records inside this block: weft's own private Tapes (a checkpoint segment's recomputation, the JAX and
    PyTorch bridges) run here, so that they never nest in a user's Tape."""
    token = active_tape.set(None)
    try:
        yield
    finally:
        active_tape.reset(token)


def record_copy(dest, src, dest_offset, src_offset, count) -> None:
    """Record ``wp.copy(dest, src, ...)`` on the active Tape, if any."""
    tape = active_tape.get()
    if tape is not None:
        tape._record_copy(dest, src, dest_offset, src_offset, count)


@dataclass(frozen=True)
class LaunchRecord:
    kernel: object
    spec: object
    dims: tuple[int, ...]
    args: tuple
    device: object
    n_inputs: int
    block_dim: int
    versions_after: dict  # param index -> version of the array right after the launch
    snapshots: dict  # param index -> copy of the array taken before the launch
    consume: frozenset  # param indices whose gradients a store consumes
    stream: object = None  # the launch's stream (None: the device's current stream); the backward runs there too
    max_blocks: int = 0  # CUDA block cap of the launch, kept for the backward
    after: dict = field(default_factory=dict)  # param index -> copy taken right after the launch (Spec.replay_reads)
    #: (param index, field path) of arrays held in struct parameters whose gradients a store consumes
    consume_fields: frozenset = frozenset()

    def __getitem__(self, i):
        """Warp's record layout, ``[kernel, dim, max_blocks, inputs, outputs, device, block_dim, metadata]``, for
        programs that inspect ``tape.launches`` by position."""
        n = self.n_inputs
        return [self.kernel, self.dims, self.max_blocks, list(self.args[:n]), list(self.args[n:]), self.device,
                self.block_dim, {}][i]


@dataclass(frozen=True)
class CopyRecord:
    dest: object
    src: object
    dest_offset: int
    src_offset: int
    count: int
    consume: bool
    adjoint: CopyAdjoint = CopyAdjoint.ACCUMULATE


@dataclass(frozen=True)
class FuncRecord:
    backward: object
    arrays: tuple


class ScopeError(Error, RuntimeError):
    """``tape.record_scope_end()`` without an open scope (a RuntimeError, as in Warp)."""


class OverwriteError(Error):
    """An array read by a recorded launch was overwritten before ``tape.backward``."""


class Tape:
    """Records launches (``with wp.Tape() as tape:``) and computes gradients with ``tape.backward``."""

    def __init__(self, check_overwrites: bool = True):
        self.launches: list = []
        self.loss = None
        self.check_overwrites = check_overwrites
        self._allowed: set[int] = set()
        self._written: dict[int, list[int]] = {}  # identity of an array buffer -> indices of records writing it
        self._arrays: dict[int, object] = {}  # every array seen, by id
        # arrays seen only by a nested Tape inside a recorded callback (wp.checkpoint's recomputed segments), held
        # weakly: zero() and gradients cover them while they live, but the Tape does not keep them alive
        self._weak: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._token = None
        #: (launch index, scope name or None for an end, metadata): groups of launches, as in Warp
        self.scopes: list = []
        self._read_marked: list = []  # arrays whose read flag this tape set (wp.config.verify_autograd_array_access)

    # ------------------------------------------------------------------ recording
    def __enter__(self) -> Tape:
        if self._token is not None:
            raise Error("this Tape is already active")
        if active_tape.get() is not None:
            raise NestedTapeError("entering a Tape while another one is recording: nested Tapes are not supported (as "
                                  "in Warp); record everything on the outer Tape, or use wp.checkpoint for "
                                  "recomputed segments")
        self._token = active_tape.set(self)
        return self

    def __exit__(self, *exc) -> bool:
        active_tape.reset(self._token)
        self._token = None
        return False

    def _before_launch(self, spec, args) -> dict:
        return _copies(spec.snapshot, args)

    def _after_launch(self, spec, args) -> dict:
        """Copies of the arrays only @wp.func_replay bodies read, as the launch left them: the backward replay reads
        what the forward saved there even when a later launch overwrites the array."""
        return _copies(spec.replay_reads, args)

    def _record_launch(self, kernel, spec, dims, args, device, n_inputs, block_dim, snapshots, stream=None,
                       max_blocks=0, after=None) -> None:
        index = len(self.launches)
        versions = {}
        consume = set()
        for i, a in enumerate(args):
            if hasattr(a, "_shared"):
                self._arrays[id(a)] = a
                versions[i] = a._version
            elif _is_struct(a):  # arrays inside struct arguments: zero() and gradients must see them too
                for arr in _struct_arrays(a):
                    self._arrays[id(arr)] = arr
        for i in spec.written:
            a = args[i]
            if not hasattr(a, "_shared"):
                continue
            key = id(a._shared)
            if (self._written.get(key) or i in spec.read) and not getattr(a, "_retain_grad", False):
                consume.add(i)  # (retain_grad: the user keeps the gradient, as Warp's flag does)
            self._written.setdefault(key, []).append(index)
        consume_fields = set()
        for i, path in struct_arrays_written_by(spec):  # arrays held in struct parameters: the same rule
            a = field_array(args[i], path)
            if not hasattr(a, "_shared"):
                continue
            key = id(a._shared)
            if (self._written.get(key) or (i, path) in struct_arrays_read_by(spec)) and \
                    not getattr(a, "_retain_grad", False):
                consume_fields.add((i, path))
            self._written.setdefault(key, []).append(index)
        self.launches.append(LaunchRecord(kernel, spec, tuple(dims), tuple(args), device, n_inputs, block_dim,
                                          versions, snapshots, frozenset(consume), stream, max_blocks, after or {},
                                          frozenset(consume_fields)))
        if access_check.enabled():
            access_check.check_launch(self, kernel, spec, args)

    def _record_copy(self, dest, src, dest_offset, src_offset, count) -> None:
        if access_check.enabled():
            access_check.check_copy(self, dest, src)
        key = id(dest._shared)
        how = _copy_adjoint_kind(dest, src)
        # the copy overwrote dest's window: the gradient of the old values there is zero (as in Warp 1.19; retain_grad
        # keeps it, as Warp's flag does)
        consume = how is CopyAdjoint.ACCUMULATE and not getattr(dest, "_retain_grad", False)
        self._written.setdefault(key, []).append(len(self.launches))
        self._arrays[id(dest)] = dest
        self._arrays[id(src)] = src
        self.launches.append(CopyRecord(dest, src, dest_offset, src_offset, count, consume, how))

    def record_func(self, backward, arrays) -> None:
        """Record a Python callback run during ``backward`` (for work the Tape cannot see, e.g. a solver)."""
        for a in arrays:
            self._arrays[id(a)] = a
        self.launches.append(FuncRecord(backward, tuple(arrays)))

    def record_scope_begin(self, scope_name, metadata=None) -> None:
        """Open a named group of the launches recorded from now on (for inspection; backward ignores scopes)."""
        self.scopes.append((len(self.launches), scope_name, metadata or {}))

    def record_scope_end(self, remove_scope_if_empty: bool = True) -> None:
        """Close the innermost open scope (dropped if it recorded nothing and ``remove_scope_if_empty``)."""
        depth = sum(1 if name is not None else -1 for _, name, _ in self.scopes)
        if depth <= 0:
            raise ScopeError("tape.record_scope_end(): ended tape scope, but scope not present (no scope is open)")
        last = self.scopes[-1]
        if remove_scope_if_empty and last[1] is not None and last[0] == len(self.launches):
            self.scopes.pop()
        else:
            self.scopes.append((len(self.launches), None, None))

    def visualize(self, filename=None, simplify_graph=True, hide_readonly_arrays=False, array_labels=None,
                  choose_longest_node_name=True, ignore_graph_scopes=False, track_inputs=None, track_outputs=None,
                  track_input_names=None, track_output_names=None, graph_direction="LR") -> str:
        """The recorded launches and copies as GraphViz ``dot`` code (written to ``filename`` if given; render with
        ``dot -Tpng tape.dot -o tape.png``): arrays as ellipses (labelled by ``array_labels``, the tracked names,
        else the longest parameter name they were passed as), launches as boxes with edges from what they read to
        what they write, scopes as clusters. ``simplify_graph`` folds a run of identical launches into one node
        ``(repeated Nx)``; ``hide_readonly_arrays`` leaves out arrays nothing writes (tracked ones stay)."""
        from .tape_graph import visualize

        return visualize(self, filename, simplify_graph, hide_readonly_arrays, array_labels,
                         choose_longest_node_name, ignore_graph_scopes, track_inputs, track_outputs,
                         track_input_names, track_output_names, graph_direction)

    def _watch(self, arrays) -> None:
        """Let ``zero()`` and ``gradients`` cover ``arrays`` (held weakly) without recording anything."""
        for a in arrays:
            if id(a) not in self._arrays:
                self._weak[id(a)] = a

    def allow_overwrite(self, *arrays) -> None:
        """Opt arrays out of the overwrite check (you assert their replayed values do not matter)."""
        for a in arrays:
            self._allowed.add(id(a._shared))

    # ------------------------------------------------------------------ backward
    def backward(self, loss=None, grads: dict | None = None) -> None:
        """Propagate from ``loss`` (a one-element array: its gradient is seeded with 1) or from ``grads``
        ({array: gradient values}) back through every recorded launch, accumulating into ``.grad``."""
        if loss is not None:
            if loss.grad is None:
                raise Error("tape.backward(loss): the loss array was not created with requires_grad=True")
            loss.grad.fill_(1.0)
            self.loss = loss
        if grads:
            for a, g in grads.items():
                if a.grad is None:
                    a.grad = g  # as in Warp: the given gradient array becomes the array's .grad
                else:
                    a.grad.assign(g)
        from .backward import compile_adjoints, run_record_adjoint

        # the first backward compiles its modules together (batches), not one per launch (nor per overwrite check)
        compile_adjoints([rec for rec in reversed(self.launches) if isinstance(rec, LaunchRecord)])
        if self.check_overwrites:
            self._check_overwrites()
        for rec in reversed(self.launches):
            if isinstance(rec, LaunchRecord):
                run_record_adjoint(rec)
            elif isinstance(rec, CopyRecord):
                _copy_adjoint(rec)
            else:
                rec.backward()
        access_check.clear(self)  # the recorded reads are consumed

    def _check_overwrites(self) -> None:
        for index, rec in enumerate(self.launches):
            if not isinstance(rec, LaunchRecord):
                continue
            reads = (set(rec.spec.read) | set(rec.spec.snapshot)) & _adjoint_reads(rec)
            for i in sorted(reads):
                a = rec.args[i]
                if not hasattr(a, "_shared") or id(a._shared) in self._allowed:
                    continue
                if i in rec.snapshots or i in rec.after:
                    continue  # replayed from a private copy
                if a._version != rec.versions_after.get(i, a._version):
                    later = [self._describe(j) for j in self._written.get(id(a._shared), []) if j > index]
                    culprit = later[0] if later else "a write outside the tape (fill_, assign, numpy, ...)"
                    name = rec.kernel._param_names[i]
                    raise OverwriteError(
                        f"kernel '{rec.kernel.__name__}' (tape launch #{index}) read array '{name}', which was then "
                        f"overwritten by {culprit}; replaying it in backward would give a wrong gradient. Write the "
                        f"new values to a separate array (or call tape.allow_overwrite(array) if the overwritten "
                        f"values do not influence the gradient).")

    def _describe(self, index: int) -> str:
        rec = self.launches[index]
        if isinstance(rec, LaunchRecord):
            return f"kernel '{rec.kernel.__name__}' (tape launch #{index})"
        return f"wp.copy (tape entry #{index})"

    # ------------------------------------------------------------------ gradients
    @property
    def gradients(self) -> dict:
        """{array: gradient array} for every array on the tape that has a gradient; a struct instance passed to a
        recorded launch looks up a struct of the same type holding its arrays' gradients (Warp's form)."""
        out = _Gradients({a: a.grad for a in self._arrays.values() if getattr(a, "grad", None) is not None})
        for a in list(self._weak.values()):
            if getattr(a, "grad", None) is not None:
                out[a] = a.grad
        return out

    def zero(self) -> None:
        """Zero the gradients of every array the tape has seen (keeps the recorded launches). A CPU gradient whose
        memory only weft addresses is zeroed lazily, on its first touch (runtime/array.py ``defer_zero``): the next
        backward then finds it in cache instead of reading back zeros written at memory bandwidth."""
        for a in [*self._arrays.values(), *self._weak.values()]:
            g = getattr(a, "grad", None)
            if g is not None and not defer_zero(g):
                g.zero_()

    def reset(self) -> None:
        """Forget the recorded launches and zero the gradients. The arrays seen so far stay in ``gradients`` and
        ``zero()`` while they live (as in Warp), held weakly: the Tape does not keep them alive."""
        access_check.clear(self)
        self.zero()
        self.launches = []
        self._written = {}
        for a in self._arrays.values():
            self._weak[id(a)] = a
        self._arrays = {}
        self.scopes = []
        self.loss = None


def _adjoint_reads(rec: LaunchRecord) -> set[int]:
    """Parameter indices whose values the launch's backward reads (all its reads if that cannot be decided)."""
    if rec.kernel.custom_adjoint is not None:
        return set(range(len(rec.args)))  # a hand-written backward: every argument may be read
    try:
        grads = frozenset(i for i, a in enumerate(rec.args) if getattr(a, "grad", None) is not None or _is_struct(a))
        prog = rec.kernel.adjoint_program(rec.spec)  # the IR only: compiles nothing
        # the analysis walks the whole adjoint program (~10 ms of Python for a 100-line kernel): once per program and
        # set of parameters with gradients, not once per recorded launch
        key = (id(prog), grads)
        hit = _READS_CACHE.get(key)
        if hit is None or hit[0] is not prog:
            hit = _READS_CACHE[key] = (prog, adjoint_value_reads(prog, set(grads)))
        return set(hit[1])
    except Error:
        return set(range(len(rec.args)))


_READS_CACHE: dict = {}


class _Gradients(dict):
    """``tape.gradients``: arrays map to their gradients; a struct instance whose arrays are on the tape maps to a new
    struct of its type holding their gradients (nested structs alike)."""

    def __missing__(self, key):
        if _is_struct(key):
            arrays = _struct_arrays(key)
            if arrays and all(a in self for a in arrays):
                return _gradient_struct(key)
        raise KeyError(key)


def _gradient_struct(value):
    out = type(value)()
    for name, _ in value._ir_.fields:
        v = getattr(value, name, None)
        if hasattr(v, "_shared") and v.grad is not None:
            setattr(out, name, v.grad)
        elif _is_struct(v):
            setattr(out, name, _gradient_struct(v))
    return out


def _is_struct(value) -> bool:
    return hasattr(getattr(value, "_ir_", None), "fields")


def _struct_arrays(value) -> list:
    """The arrays held in the fields of a struct instance (nested structs included)."""
    out = []
    for name, _ in value._ir_.fields:
        v = getattr(value, name, None)
        if hasattr(v, "_shared"):
            out.append(v)
        elif _is_struct(v):
            out += _struct_arrays(v)
    return out


def _copy_adjoint(rec: CopyRecord) -> None:
    dest, src = rec.dest, rec.src
    if dest.grad is None or src.grad is None:
        return
    if rec.adjoint is CopyAdjoint.OVERLAP:
        warn("the gradient of an overlapping copy (wp.copy between overlapping parts of one array) cannot "
             "yet be fully tracked: the destination's gradient is copied to the source as it is",
             UserWarning, stacklevel=4)
    backend_for(dest.device, src.device).copy_adjoint(rec)


def _copy_adjoint_kind(dest, src) -> CopyAdjoint:
    if dest.dtype != src.dtype or _struct_or_bool(getattr(dest, "_ir", None)):
        return CopyAdjoint.OVERWRITE
    if dest.device == src.device and _extents_overlap(dest, src):
        return CopyAdjoint.OVERLAP
    return CopyAdjoint.ACCUMULATE


def _struct_or_bool(dtype) -> bool:
    """Element types without addition (the IR type of an array's dtype)."""
    if isinstance(dtype, T.StructType):
        return True
    scalar = dtype if isinstance(dtype, T.ScalarType) else getattr(dtype, "scalar", None)
    return scalar is not None and scalar.is_bool


def _extents_overlap(a, b) -> bool:
    """Whether the byte ranges two arrays span (first to last element) intersect (conservative for strided views)."""
    def extent(x):
        if not x.size or not x.ptr:
            return 0, 0
        lo = x.ptr + sum(min(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
        hi = x.ptr + sum(max(0, (n - 1) * s) for n, s in zip(x.shape, x.strides)) + (x.capacity // x.size)
        return lo, hi
    (alo, ahi), (blo, bhi) = extent(a), extent(b)
    return alo < bhi and blo < ahi


def _copies(indices, args) -> dict:
    """Private copies of the array arguments at ``indices`` (param index -> copy)."""
    out = {}
    for i in indices:
        a = args[i]
        if hasattr(a, "_new_like_layout"):
            copy_ = a._new_like_layout()
            if copy_ is None:
                continue  # nothing to copy into (a Fabric array of arrays)
            from .copy import _raw_copy

            _raw_copy(copy_, a)
            out[i] = copy_
    return out
