"""Source capture: the AST of a user function, with positions mapped back to the user's file."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass, field

from ..errors import CompileError, SourceLoc


@dataclass(slots=True)
class FunctionSource:
    func: object
    file: str
    first_line: int  # line of the ``def`` in the file
    col_offset: int  # indentation removed by dedent
    tree: ast.FunctionDef
    text: str
    lines: list[str] = field(default_factory=list)

    def loc(self, node: ast.AST | None) -> SourceLoc:
        if node is None or not hasattr(node, "lineno"):
            return SourceLoc(self.file, self.first_line, 0, None, self._line(self.first_line), self.func.__name__)
        line = self.first_line + node.lineno - 1
        col = node.col_offset + self.col_offset
        end_col = None
        if getattr(node, "end_lineno", None) == node.lineno and node.end_col_offset is not None:
            end_col = node.end_col_offset + self.col_offset
        return SourceLoc(self.file, line, col, end_col, self._line(line), self.func.__name__)

    def _line(self, line: int) -> str:
        return linecache.getline(self.file, line).rstrip("\n")

    def globals_and_closure(self) -> tuple[dict, dict]:
        fn = self.func
        closure = {}
        if fn.__closure__:
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    closure[name] = cell.cell_contents
                except ValueError:  # cell not yet filled
                    pass
        return fn.__globals__, closure


def capture(func) -> FunctionSource:
    """Parse ``func``'s source. Raises CompileError if the source is unavailable."""
    try:
        lines, first_line = inspect.getsourcelines(func)
        file = inspect.getsourcefile(func) or inspect.getfile(func)
    except (OSError, TypeError) as exc:
        raise CompileError(
            f"cannot read the source of {getattr(func, '__qualname__', func)!r}: {exc}",
            hint="weft compiles kernels from their Python source; define them in a .py file (not a REPL/exec string)",
        ) from None
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    col_offset = _indent(lines[0]) - _indent(text.splitlines()[0]) if text else 0
    module = ast.parse(text)
    tree = module.body[0]
    if not isinstance(tree, ast.FunctionDef):
        raise CompileError(f"{func!r} is not a plain function")
    # the first line is the first decorator; lineno of the def relative to it
    return FunctionSource(func, file, first_line, col_offset, tree, text, lines)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
