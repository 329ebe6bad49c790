"""Which array parameters a kernel reads and writes: used by launches (write versions), the Tape (overwrite
checks, snapshots of arrays updated in place) and the adjoint program."""

from __future__ import annotations

from . import types as T
from .nodes import Function, Let, Var, walk
from .roles import READS_ARRAY, WRITES_ARRAY, Role


def array_access(fn: Function) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Indices of array parameters written (store/atomic) and read (load) by the kernel, through views."""
    origin: dict[int, int] = {p.id: i for i, p in enumerate(fn.params) if isinstance(p.type, T.ArrayType)}
    written, read = set(), set()
    for s in walk(fn.body):
        if not isinstance(s, Let) or not s.args:
            continue
        role = s.call.op.role
        arr = s.args[0]
        if not isinstance(arr, Var) or arr.id not in origin:
            continue
        if role is Role.VIEW:
            origin[s.dsts[0].id] = origin[arr.id]
        elif role in READS_ARRAY:
            read.add(origin[arr.id])
        elif role in WRITES_ARRAY:
            written.add(origin[arr.id])
    return tuple(sorted(written)), tuple(sorted(read))


def written_after_read(fn: Function) -> tuple[int, ...]:
    """Indices of array parameters the kernel stores into (in program order) after it loaded from them, through
    views: ``a[i] = a[i] * 2.0`` (``wp.config.verify_autograd_array_access`` warns about them)."""
    origin: dict[int, int] = {p.id: i for i, p in enumerate(fn.params) if isinstance(p.type, T.ArrayType)}
    loaded, found = set(), set()
    for s in walk(fn.body):
        if not isinstance(s, Let) or not s.args:
            continue
        arr = s.args[0]
        if not isinstance(arr, Var) or arr.id not in origin:
            continue
        role = s.call.op.role
        if role is Role.VIEW:
            origin[s.dsts[0].id] = origin[arr.id]
        elif role in READS_ARRAY:
            loaded.add(origin[arr.id])
        elif role is Role.STORE and origin[arr.id] in loaded:
            found.add(origin[arr.id])
    return tuple(sorted(found))


def snapshot_params(fn: Function) -> tuple[int, ...]:
    """Array parameters the kernel both reads and writes, or whose atomic results it uses: the backward
    replay must see the values they had before the launch, so the Tape keeps a copy."""
    written, read_ = array_access(fn)
    used: set[int] = set()
    for s in walk(fn.body):
        # every operand position: call arguments, assignment sources (``slot = wp.atomic_add(...)`` goes through a
        # mutable local), branch conditions and loop bounds
        operands = list(getattr(s, "args", ()))
        operands += [getattr(s, name, None) for name in ("src", "cond", "start", "stop", "step")]
        for a in operands:
            if isinstance(a, Var):
                used.add(a.id)
    origin = {p.id: i for i, p in enumerate(fn.params)}
    atomic_results = set()
    for s in walk(fn.body):
        if isinstance(s, Let) and s.call.op.role is Role.ATOMIC and s.dsts and s.dsts[0].id in used:
            arr = s.args[0]
            if isinstance(arr, Var) and arr.id in origin:
                atomic_results.add(origin[arr.id])
    return tuple(sorted((set(written) & set(read_)) | atomic_results))


def rewritten_arrays(fn: Function) -> frozenset[int]:
    """Ids of the array variables (parameters and their views) of array parameters a thread may write more than once: a store plus any other store or atomic into the
    same array (through views), or a store inside a loop. The adjoint of each of their stores consumes the gradient
    it reads, so the gradient of an element reaches only the last value written there."""
    from .nodes import For, While

    origin: dict[int, int] = {p.id: p.id for p in fn.params if isinstance(p.type, T.ArrayType)}
    writes: dict[int, int] = {}
    stores: set[int] = set()

    def visit(block, in_loop: bool) -> None:
        for s in block:
            if isinstance(s, (For, While)):
                visit(getattr(s, "cond_body", []), True)
                visit(s.body, True)
                continue
            for sub in ("then", "orelse", "primal"):
                if hasattr(s, sub):
                    visit(getattr(s, sub), in_loop)
            if not isinstance(s, Let) or not s.args or not isinstance(s.args[0], Var) or s.args[0].id not in origin:
                continue
            root = origin[s.args[0].id]
            role = s.call.op.role
            if role is Role.VIEW:
                origin[s.dsts[0].id] = root
            elif role is Role.STORE:
                stores.add(root)
                writes[root] = writes.get(root, 0) + (2 if in_loop else 1)
            elif role is Role.ATOMIC:
                writes[root] = writes.get(root, 0) + 1

    visit(fn.body, False)
    roots = {i for i in stores if writes.get(i, 0) >= 2}
    return frozenset(v for v, root in origin.items() if root in roots)


def struct_arrays_written(fn: Function) -> tuple[tuple[int, tuple[str, ...]], ...]:
    """Arrays held in struct parameters that the kernel writes, as (parameter index, field path) pairs: what
    ``wp.config.verify_fp`` checks besides the array parameters."""
    return _struct_arrays(fn, WRITES_ARRAY)


def struct_arrays_read(fn: Function) -> tuple[tuple[int, tuple[str, ...]], ...]:
    """Arrays held in struct parameters whose elements the kernel loads, as (parameter index, field path) pairs."""
    return _struct_arrays(fn, READS_ARRAY)


def _struct_arrays(fn: Function, roles) -> tuple[tuple[int, tuple[str, ...]], ...]:
    from .nodes import Assign

    origin: dict[int, tuple[int, tuple[str, ...]]] = {
        p.id: (i, ()) for i, p in enumerate(fn.params) if isinstance(p.type, T.StructType)}
    written = set()
    for s in walk(fn.body):
        if isinstance(s, Assign):
            if isinstance(s.src, Var) and s.src.id in origin:
                origin[s.dst.id] = origin[s.src.id]
            continue
        if not isinstance(s, Let) or not s.args or not isinstance(s.args[0], Var) or s.args[0].id not in origin:
            continue
        src = origin[s.args[0].id]
        role = s.call.op.role
        if role is Role.GETFIELD and s.dsts:
            origin[s.dsts[0].id] = (src[0], (*src[1], s.call.attrs[0]))
        elif role in (Role.VIEW, Role.COPY) and s.dsts:
            origin[s.dsts[0].id] = src
        elif src[1] and role in roles:
            written.add(src)
    return tuple(sorted(written))


def replay_read_params(fn: Function) -> tuple[int, ...]:
    """Array parameters that ``@wp.func_replay`` bodies read and nothing else in the kernel reads, through views:
    the replay reads what the forward left there (Warp's pattern: the slot an atomic handed out, saved per thread),
    so a recorded launch keeps a copy taken right after it (a later launch may overwrite the array)."""
    from .nodes import CustomCall

    origin: dict[int, int] = {p.id: i for i, p in enumerate(fn.params) if isinstance(p.type, T.ArrayType)}
    for s in walk(fn.body):
        if isinstance(s, Let) and s.args and s.call.op.role is Role.VIEW and isinstance(s.args[0], Var) \
                and s.args[0].id in origin:
            origin[s.dsts[0].id] = origin[s.args[0].id]

    def loads(stmts) -> set[int]:
        return {origin[s.args[0].id] for s in stmts if isinstance(s, Let) and s.args and isinstance(s.args[0], Var)
                and s.args[0].id in origin and s.call.op.role in READS_ARRAY}

    in_replays: set[int] = set()
    replay_stmts: set[int] = set()
    for s in walk(fn.body):
        if isinstance(s, CustomCall) and s.replay:
            inner = list(walk(s.replay))
            in_replays |= loads(inner)
            replay_stmts |= {id(x) for x in inner}
    if not in_replays:
        return ()
    elsewhere = loads(s for s in walk(fn.body) if id(s) not in replay_stmts)
    return tuple(sorted(in_replays - elsewhere))
