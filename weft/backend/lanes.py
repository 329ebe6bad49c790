"""Lane runs of query loops (CPU forward): one candidate stream for a run of threads with equal queries.

Warp-style neighbour kernels map the thread index to the grid's cell-sorted order (``i = wp.hash_grid_point_id(grid,
tid)``), so consecutive threads query from points of one cell and walk the same candidates. A kernel of the form

    prefix (no loops)                       e.g. i = ...; p = pts[i]; q = wp.hash_grid_query(grid, p, r); n = 0
    while <cond_body: pure, reads a hash-grid query>:
        body (pure: no stores, atomics, nested loops, returns; branches only around arithmetic)
    suffix (no loops)                       e.g. out[i] = n

is rendered a second way, ``fwd_lanes(args, b, e)``, for the contiguous 1-D launch: each thread's range runs in *runs*
of up to ``LANES`` consecutive threads whose loop-condition inputs (the query state and the index) are equal. The
prefix runs lane by lane into per-lane arrays; the condition (the query's advance) runs once per candidate for the
whole run; the body runs for all ``LANES`` slots in a fixed-trip loop g++ vectorises (slots past the run hold copies
of its first lane, whose results are dropped); branches in the body become selects (``x = p ? v : x``), so the loop
has no masked stores. Runs shorter than ``LANES_MIN`` loop over their own lanes only; bodies with more than
``MAX_GUARDED`` statements under branches keep the scalar loop (selects run them for every candidate). Each lane sees the same candidates in the same order as the scalar loop, so results are bit for
bit those of ``fwd_body``; a run of one lane is the scalar loop. Debug builds, CUDA, tiles and adjoints render as
before. ``tests/geometry/test_hash_grid_lanes.py`` compares with brute force; golden: ``hash_grid_lanes``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from ..ir.nodes import (
    Assign,
    Break,
    Const,
    Continue,
    CustomCall,
    For,
    Function,
    If,
    Let,
    Return,
    Stmt,
    Var,
    VarKind,
    While,
    walk,
)
from ..ir.roles import Role
from .names import Names

#: slots of a run (16 float lanes: one AVX-512 register, two AVX2 ones); runs are cut at this length
LANES = 16

#: the shortest run walked in all LANES slots (shorter runs loop over their own lanes: the fixed-trip loop would do
#: LANES slots of work for them)
LANES_MIN = 4

#: the most statements the body may run under branches: every slot runs them for every candidate (as selects),
#: which costs more than the branch saves when they are many and rarely taken (Warp's example_dem contact force:
#: 2.6x slower per step; measured with Warp's example_sph, example_dem and example_particle_repulsion)
MAX_GUARDED = 8

#: roles of SPECIAL ops that may run speculatively under a branch of the body (no memory access, no error report)
_SPECULABLE_ROLES = (Role.COPY, Role.EXTRACT, Role.INSERT, Role.GETFIELD)


@dataclass(frozen=True)
class LanePlan:
    prefix: list[Stmt]
    loop: While
    suffix: list[Stmt]
    inputs: tuple[Var, ...]  # read by the loop condition before it defines them: equal across a run's lanes
    uniform: frozenset[int]  # vars the condition defines: one value per run while walking
    scalars: frozenset[int]  # vars defined and used only in the loop body: per-slot scalars of the lane loop
    lanes: tuple[Var, ...]  # every other local: an array of LANES + 1 slots


def _reads(s: Stmt) -> list:
    if isinstance(s, Let):
        return list(s.args)
    if isinstance(s, Assign):
        return [s.src]
    if isinstance(s, If):
        return [s.cond]
    return []


def _defs(s: Stmt) -> list[Var]:
    if isinstance(s, Let):
        return list(s.dsts)
    if isinstance(s, Assign):
        return [s.dst]
    return []


def _vars(ops) -> list[Var]:
    return [o for o in ops if isinstance(o, Var) and o.kind is not VarKind.PARAM]


def _speculable(s: Let) -> bool:
    """Whether a statement may run where its branch is not taken: no side effect, no memory access (no array
    operand, not a load), no error report (the ops that report errors need an extra header: geometry, volumes)."""
    op = s.call.op
    if op.side_effect or op.header or any(isinstance(a.type, T.ArrayType) for a in s.args):
        return False
    return op.role is Role.CALL or op.role in _SPECULABLE_ROLES


def _body_ok(block: list[Stmt], guarded: bool) -> bool:
    for s in block:
        if isinstance(s, Let):
            if s.call.op.side_effect or (guarded and not _speculable(s)):
                return False
        elif isinstance(s, If):
            if not (_body_ok(s.then, True) and _body_ok(s.orelse, True)):
                return False
        elif not isinstance(s, Assign):
            return False
    return True


def _guarded(block: list[Stmt], inside: bool) -> int:
    count = 0
    for s in block:
        if isinstance(s, If):
            count += _guarded(s.then, True) + _guarded(s.orelse, True)
        elif inside and isinstance(s, Let) and s.call.op.role is not Role.COPY:
            count += 1
    return count


def _comparable(t: T.Type) -> bool:
    return (isinstance(t, T.ScalarType)) or (isinstance(t, T.OpaqueType) and t.lanes_equal)


def plan_lanes(fn: Function, debug: bool) -> LanePlan | None:
    """The lane plan of a kernel, or None when it does not have the form above."""
    if debug or fn.tile_dim:
        return None
    loops = [k for k, s in enumerate(fn.body) if isinstance(s, While)]
    if len(loops) != 1:
        return None
    k = loops[0]
    loop = fn.body[k]
    for s in fn.walk():
        if isinstance(s, (For, Return, Break, Continue, CustomCall)) or (isinstance(s, While) and s is not loop):
            return None
    prefix, suffix = fn.body[:k], fn.body[k + 1:]
    if not all(isinstance(s, (Let, Assign)) and not (isinstance(s, Let) and s.call.op.side_effect)
               for s in loop.cond_body):
        return None
    defined: set[int] = set()
    inputs: list[Var] = []
    for s in loop.cond_body:
        for v in _vars(_reads(s)):
            if v.id not in defined and all(v.id != i.id for i in inputs):
                inputs.append(v)
        defined.update(v.id for v in _defs(s))
    # only loops over a query whose state can be compared (the hash grid's): where lanes share candidates
    if not any(isinstance(v.type, T.OpaqueType) for v in inputs) or not all(_comparable(v.type) for v in inputs):
        return None
    if not _body_ok(loop.body, False) or _guarded(loop.body, False) > MAX_GUARDED:
        return None
    uniform = defined | {v.id for v in inputs}
    body_defs = {v.id for s in walk(loop.body) for v in _defs(s)}
    if body_defs & uniform:
        return None
    outside = {v.id for part in (prefix, loop.cond_body, suffix) for s in walk(part) for v in (*_defs(s),
                                                                                              *_vars(_reads(s)))}
    scalars = frozenset(i for i in body_defs if i not in outside)
    seen: set[int] = set()
    lanes: list[Var] = []
    for v in [*fn.locals, *(d for s in walk(fn.body) for d in _defs(s))]:
        if v.id in seen or v.kind is VarKind.PARAM or v.id in scalars:
            continue
        seen.add(v.id)
        lanes.append(v)
    return LanePlan(prefix, loop, suffix, tuple(inputs), frozenset(uniform), scalars, tuple(lanes))


class LaneNames(Names):
    """Names of the lane function: lane arrays indexed by the slot ``l_``, the run's values while it walks."""

    def __init__(self, base: Names, plan: LanePlan):
        super().__init__()
        self._names, self._used = base._names, base._used
        self.plan = plan
        self.lane_ids = {v.id for v in plan.lanes}
        self.walking = False

    def __call__(self, operand) -> str:
        text = super().__call__(operand)
        if isinstance(operand, Const) or operand.kind is VarKind.PARAM:
            return text
        if self.walking and operand.id in self.plan.uniform:
            return "u_" + text
        if operand.id in self.lane_ids:
            return f"{text}[l_]"
        return text

    def raw(self, operand) -> str:
        return Names.__call__(self, operand)


def render_lanes(r, plan: LanePlan) -> str:
    """``fwd_lanes<C>(args, b, e)``: threads [b, e) of a 1-D launch in lane runs (see the module docstring). ``r`` is
    the forward renderer (its statement rendering is reused with lane names)."""
    saved_names, saved_out = r.names, r.out
    names = LaneNames(saved_names, plan)
    r.names, r.out, r._last_line = names, type(saved_out)(), None
    out = r.out
    raw = names.raw
    w = LANES
    out(f"constexpr int32_t W_ = {w};")
    for v in plan.lanes:
        out(f"{r.decl_type(v.type)} {raw(v)}[W_ + 1] = {{}};")
    for i in sorted(plan.uniform):
        v = next(x for x in plan.lanes if x.id == i)
        out(f"{r.decl_type(v.type)} u_{raw(v)} = {{}};")

    def lane_code(stmts: list[Stmt]) -> None:
        out.depth += 1
        out("const int32_t i0 = int32_t(flat), i1 = 0, i2 = 0, i3 = 0;")
        out("(void)i0; (void)i1; (void)i2; (void)i3;")
        r._last_line = None
        r.block(stmts)
        out.depth -= 1
        r._last_line = None

    out("auto prefix_ = [&](int32_t l_, int64_t flat) {")
    # a slot starts as fwd_body's locals do (value-initialised), not with the values of the lane it held before
    out("    " + " ".join(f"{raw(v)}[l_] = {{}};" for v in plan.lanes))
    lane_code(plan.prefix)
    out("};")
    out("auto suffix_ = [&](int32_t l_, int64_t flat) {")
    lane_code(plan.suffix)
    out("};")
    copy = " ".join(f"{raw(v)}[d_] = {raw(v)}[s_];" for v in plan.lanes)
    out(f"auto copy_ = [&](int32_t d_, int32_t s_) {{ {copy} }};")
    same = " && ".join(f"weft::lanes_equal({raw(v)}[a_], {raw(v)}[0])" for v in plan.inputs)
    out(f"auto same_ = [&](int32_t a_) {{ return {same}; }};")
    out("bool pend_ = false;")
    out("for (int64_t t_ = b; t_ < e;) {")
    out.depth += 1
    out("if (!pend_) prefix_(0, t_);")
    out("int32_t m_ = 1;")
    out("pend_ = false;")
    out("while (m_ < W_ && t_ + m_ < e) {")
    out("    prefix_(m_, t_ + m_);")
    out("    if (!same_(m_)) { pend_ = true; break; }")
    out("    ++m_;")
    out("}")
    out("if (pend_) copy_(W_, m_);  // the next run's first lane waits in the spare slot")
    for v in plan.inputs:
        out(f"u_{raw(v)} = {raw(v)}[0];")
    out(f"if (m_ >= {LANES_MIN}) {{")
    out.depth += 1
    out("for (int32_t k_ = m_; k_ < W_; ++k_) copy_(k_, 0);  // slots past the run: copies of its first lane")
    _walk(r, plan, "W_")
    out.depth -= 1
    out("} else {  // a short run: its lanes only")
    out.depth += 1
    _walk(r, plan, "m_")
    out.depth -= 1
    out("}")
    names.walking = False
    back = " ".join(f"{raw(v)}[l_] = u_{raw(v)};" for v in plan.lanes if v.id in plan.uniform)
    out(f"for (int32_t l_ = 0; l_ < m_; ++l_) {{ {back} suffix_(l_, t_ + l_); }}")
    out("if (pend_) copy_(0, W_);")
    out("t_ += m_;")
    out.depth -= 1
    out("}")
    lines = out.lines
    r.names, r.out, r._last_line = saved_names, saved_out, None
    sig = f"template <bool C>\n{r.body_qualifiers} void fwd_lanes(const Args& args, int64_t b, int64_t e)"
    return sig + " {\n" + "\n".join(lines) + "\n}"


def _walk(r, plan: LanePlan, slots: str) -> None:
    """The run's walk: the condition once per candidate, the body for slots 0 .. ``slots`` - 1."""
    out, names = r.out, r.names
    names.walking = True
    loop = plan.loop
    r._last_line = None
    r.comment(loop.loc)
    out("while (true) {")
    out.depth += 1
    r.block(loop.cond_body)
    out(f"if (!{names(loop.cond)}) break;")
    out(f"for (int32_t l_ = 0; l_ < {slots}; ++l_) {{")
    out.depth += 1
    for v in _body_vars(loop.body):
        if v.id in plan.scalars:
            out(f"{r.decl_type(v.type)} {names.raw(v)} = {{}};")
    _select_block(r, loop.body, None, [0])
    out.depth -= 1
    out("}")
    out.depth -= 1
    out("}")
    names.walking = False


def _body_vars(block: list[Stmt]) -> list[Var]:
    seen: set[int] = set()
    out = []
    for s in walk(block):
        for v in _defs(s):
            if v.id not in seen:
                seen.add(v.id)
                out.append(v)
    return out


def _select_block(r, block: list[Stmt], pred: str | None, counter: list[int]) -> None:
    """The loop body for one slot: branches become predicates, assignments under them selects."""
    n = r.names
    for s in block:
        if isinstance(s, Let):
            r.stmt(s)
        elif isinstance(s, Assign):
            r.comment(s.loc)
            if pred is None:
                r.stmt(s)
            else:
                d = n(s.dst)
                r.out(f"{d} = {pred} ? {s.dst.type.ctype}({n(s.src)}) : {d};")
        elif isinstance(s, If):
            r.comment(s.loc)
            k = counter[0]
            counter[0] += 1
            c = n(s.cond)
            then, other = f"p{k}_", f"q{k}_"
            r.out(f"const bool {then} = {'' if pred is None else pred + ' && '}{c};")
            if s.orelse:
                r.out(f"const bool {other} = {'' if pred is None else pred + ' && '}!{c};")
            _select_block(r, s.then, then, counter)
            if s.orelse:
                _select_block(r, s.orelse, other, counter)
