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
        return self.func.__globals__, closure_of(self.func)


def closure_of(fn) -> dict:
    """The filled closure cells of ``fn``, by name."""
    closure = {}
    if getattr(fn, "__closure__", None):
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # cell not yet filled
                pass
    return closure


def evaluate_annotation(fn, text: str):
    """A string annotation of ``fn`` (``from __future__ import annotations``) evaluated as Python would have: in the
    function's globals, with its closure variables visible (``data: foo.Data`` where ``foo`` is captured). Raises
    what the evaluation raises."""
    return eval(text, fn.__globals__, closure_of(fn))  # the user's own annotation text


def capture(func) -> FunctionSource:
    """Parse ``func``'s source. Raises CompileError if the source is unavailable."""
    fast = _capture_from_code(func)
    if fast is not None:
        return fast
    try:
        lines, first_line = inspect.getsourcelines(func)
        file = inspect.getsourcefile(func) or inspect.getfile(func)
    except (OSError, TypeError) as exc:
        raise CompileError(
            f"cannot read the source of {getattr(func, '__qualname__', func)!r}: {exc}",
            hint="weft compiles kernels from their Python source; define them in a .py file (not a REPL/exec string)",
        ) from None
    return _parse(func, file, lines, first_line)


def remember_source(func) -> None:
    """Read ``func``'s file into the line cache now, when it is declared (as Warp reads the source then): a kernel of
    a file that is deleted or rewritten before the kernel is first compiled still compiles the code it was declared
    with. Cheap: one ``stat`` per declaration, the file read once."""
    code = getattr(func, "__code__", None)
    file = getattr(code, "co_filename", "")
    if not file or file.startswith("<"):
        return
    linecache.checkcache(file)
    linecache.getlines(file)


def _capture_from_code(func) -> FunctionSource | None:
    """Source lines located through the code object's positions: avoids ``inspect``'s tokenizer (a large part
    of a warm start). Returns None when that is not possible (the caller falls back to ``inspect``)."""
    code = getattr(func, "__code__", None)
    if code is None or not hasattr(code, "co_positions"):
        return None
    file = code.co_filename
    all_lines = linecache.getlines(file)
    if not all_lines:
        return None
    first = code.co_firstlineno
    last = first
    for pos in code.co_positions():
        end = pos[1]
        if end is not None and end > last:
            last = end
    lines = all_lines[first - 1:last]
    if not lines:
        return None
    try:
        return _parse(func, file, lines, first)
    except (SyntaxError, IndexError):
        return None


def _parse(func, file: str, lines: list[str], first_line: int) -> FunctionSource:
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    col_offset = _indent(lines[0]) - _indent(text.splitlines()[0]) if text else 0
    module = ast.parse(text)
    tree = module.body[0]
    if not isinstance(tree, ast.FunctionDef) or tree.name != func.__name__:
        raise SyntaxError("not the function")
    return FunctionSource(func, file, first_line, col_offset, tree, text, lines)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
