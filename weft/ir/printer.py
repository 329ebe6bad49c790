"""A stable text form of the IR, for golden tests and ``wp.config.verbose`` dumps."""

from __future__ import annotations

from .nodes import (
    AdjAssign,
    AdjLet,
    AdjointProgram,
    Assign,
    Break,
    Const,
    Continue,
    CustomCall,
    For,
    Function,
    If,
    Let,
    Pop,
    Push,
    Repeat,
    ReplayLet,
    Return,
    Stmt,
    Var,
    While,
)


class _Namer:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def __call__(self, operand) -> str:
        if isinstance(operand, Const):
            return repr(operand.value)
        if not isinstance(operand, Var):
            return repr(operand)
        if operand.id not in self.names:
            base = operand.name or "t"
            self.names[operand.id] = f"%{base}.{len(self.names)}"
        return self.names[operand.id]


def print_function(fn: Function, name: _Namer | None = None) -> str:
    name = name or _Namer()
    params = ", ".join(f"{name(p)}: {p.type}" for p in fn.params)
    lines = [f"func {fn.name}({params}) {{"]
    for local in fn.locals:
        lines.append(f"  local {name(local)}: {local.type}")
    _block(fn.body, 1, lines, name)
    lines.append("}")
    return "\n".join(lines)


def print_adjoint(prog: AdjointProgram) -> str:
    """The backward program: the primal function it was built from, then its replay and reverse sweep (operands are
    named consistently across the three)."""
    name = _Namer()
    lines = [print_function(prog.fn, name), f"adjoint {prog.fn.name} {{"]
    for local in prog.extra_locals():
        lines.append(f"  local {name(local)}: {local.type}")
    if prog.uses_stack:
        lines.append("  uses loop stack")
    if prog.snapshot_params:
        lines.append(f"  snapshot {', '.join(name(prog.fn.params[i]) for i in prog.snapshot_params)}")
    lines.append("  replay {")
    _block(prog.replay, 2, lines, name)
    lines.append("  }")
    lines.append("  reverse {")
    _block(prog.reverse, 2, lines, name)
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines)


def _let_text(s: Let, name: _Namer) -> str:
    dsts = ", ".join(f"{name(d)}: {d.type}" for d in s.dsts)
    attrs = f" {list(s.call.attrs)}" if s.call.attrs else ""
    args = ", ".join(name(a) for a in s.args)
    return f"{dsts} = {s.call.name}{attrs}({args})" if dsts else f"{s.call.name}{attrs}({args})"


def _block(block: list[Stmt], depth: int, out: list[str], name: _Namer) -> None:
    pad = "  " * depth
    for s in block:
        if isinstance(s, Let):
            out.append(pad + _let_text(s, name))
        elif isinstance(s, ReplayLet):
            out.append(f"{pad}replay {_let_text(s.let, name)}")
        elif isinstance(s, AdjLet):
            out.append(f"{pad}adjoint {_let_text(s.let, name)}")
        elif isinstance(s, AdjAssign):
            out.append(f"{pad}adjoint {name(s.assign.dst)} := {name(s.assign.src)}")
        elif isinstance(s, Push):
            out.append(f"{pad}push({', '.join(name(v) for v in s.values)})")
        elif isinstance(s, Pop):
            out.append(f"{pad}pop({', '.join(name(v) for v in s.vars)})")
        elif isinstance(s, Repeat):
            out.append(f"{pad}repeat {name(s.count)} {{")
            _block(s.body, depth + 1, out, name)
            out.append(f"{pad}}}")
        elif isinstance(s, CustomCall):
            out.append(f"{pad}custom ({', '.join(name(v) for v in s.inputs)}) -> "
                       f"({', '.join(name(v) for v in s.outputs)}) {{")
            _block(s.primal, depth + 1, out, name)
            for label, part in (("replay", s.replay), ("grad", s.grad)):
                if part is not None:
                    out.append(f"{pad}}} {label} {{")
                    _block(part, depth + 1, out, name)
            out.append(f"{pad}}}")
        elif isinstance(s, Assign):
            out.append(f"{pad}{name(s.dst)} := {name(s.src)}")
        elif isinstance(s, If):
            out.append(f"{pad}if {name(s.cond)} {{")
            _block(s.then, depth + 1, out, name)
            if s.orelse:
                out.append(f"{pad}}} else {{")
                _block(s.orelse, depth + 1, out, name)
            out.append(f"{pad}}}")
        elif isinstance(s, For):
            out.append(f"{pad}for {name(s.var)} in range({name(s.start)}, {name(s.stop)}, {name(s.step)}) {{")
            _block(s.body, depth + 1, out, name)
            out.append(f"{pad}}}")
        elif isinstance(s, While):
            out.append(f"{pad}while {{")
            _block(s.cond_body, depth + 1, out, name)
            out.append(f"{pad}}} ({name(s.cond)}) {{")
            _block(s.body, depth + 1, out, name)
            out.append(f"{pad}}}")
        elif isinstance(s, Break):
            out.append(f"{pad}break")
        elif isinstance(s, Continue):
            out.append(f"{pad}continue")
        elif isinstance(s, Return):
            out.append(f"{pad}return")
        else:  # pragma: no cover - verifier catches unknown statements
            out.append(f"{pad}<{type(s).__name__}>")
