"""A stable text form of the IR, for golden tests and ``wp.config.verbose`` dumps."""

from __future__ import annotations

from .nodes import Assign, Break, Const, Continue, For, Function, If, Let, Return, Stmt, Var, While


class _Namer:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def __call__(self, operand) -> str:
        if isinstance(operand, Const):
            return repr(operand.value)
        if operand.id not in self.names:
            base = operand.name or "t"
            self.names[operand.id] = f"%{base}.{len(self.names)}"
        return self.names[operand.id]


def print_function(fn: Function) -> str:
    name = _Namer()
    params = ", ".join(f"{name(p)}: {p.type}" for p in fn.params)
    lines = [f"func {fn.name}({params}) {{"]
    for local in fn.locals:
        lines.append(f"  local {name(local)}: {local.type}")
    _block(fn.body, 1, lines, name)
    lines.append("}")
    return "\n".join(lines)


def _block(block: list[Stmt], depth: int, out: list[str], name: _Namer) -> None:
    pad = "  " * depth
    for s in block:
        if isinstance(s, Let):
            dsts = ", ".join(f"{name(d)}: {d.type}" for d in s.dsts)
            attrs = f" {list(s.call.attrs)}" if s.call.attrs else ""
            args = ", ".join(name(a) for a in s.args)
            out.append(f"{pad}{dsts} = {s.call.name}{attrs}({args})" if dsts else f"{pad}{s.call.name}{attrs}({args})")
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


def _is_var(x) -> bool:
    return isinstance(x, Var)
