"""``wp.static(expr)`` evaluated once, when the kernel or function is declared, as in Warp.

Warp evaluates a static expression when its ``@wp.kernel`` / ``@wp.func`` decorator runs, if the expression reads
only values known then (globals, closure variables, builtins: not the function's own parameters or locals), and
compiles the value it got: a global changed after the declaration does not change the kernel, a side-effecting
expression runs once, and an alias of ``wp.static`` rebound later still means ``wp.static`` at that call. Expressions
that read locals (a loop index in an unrolled loop), or whose evaluation fails, are evaluated when the kernel is
compiled instead (where a failure is reported at its line).

The values are kept per Python function, keyed by the call's position in its source; the lowering takes them from
here (``lookup``), and a warm start compares them through ``weft.frontend.deps`` (kind ``"declared"``).
"""

from __future__ import annotations

import ast
import builtins
import weakref

from ..errors import CompileError

MISSING = object()

#: Python function -> {position of the wp.static call in its parsed source (_pos): value}
_DECLARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: Python function -> {position: the expression's source text} (kernel.adj.resolved_static_expressions)
_TEXTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _is_static(obj) -> bool:
    return getattr(obj, "_wp_kernel_builtin_", None) == "static"


def _namespace(fn) -> tuple[dict, dict]:
    closure = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:  # an empty cell (a name assigned later in the enclosing function)
            pass
    return fn.__globals__, closure


def _may_call_static(fn, globals_: dict, closure: dict) -> bool:
    """A cheap test on the code object: ``wp.static`` / ``static`` by attribute or name, or a name bound to it."""
    code = fn.__code__
    if "static" in code.co_names:
        return True
    return any(_is_static(closure.get(n, globals_.get(n))) for n in (*code.co_names, *code.co_freevars))


def _resolve(node: ast.AST, globals_: dict, closure: dict):
    if isinstance(node, ast.Name):
        if node.id in closure:
            return closure[node.id]
        if node.id in globals_:
            return globals_[node.id]
        return getattr(builtins, node.id, MISSING)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, globals_, closure)
        return MISSING if base is MISSING else getattr(base, node.attr, MISSING)
    return MISSING


def declare(fn, source) -> None:
    """Evaluate the ``wp.static`` expressions of ``fn`` that need no local value (``source()``: its parsed source)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    globals_, closure = _namespace(fn)
    if not _may_call_static(fn, globals_, closure):
        return
    try:
        src = source()
    except CompileError:  # no source: the kernel cannot be compiled either; the error comes then
        return
    local_names = set(code.co_varnames) | set(code.co_cellvars)
    env = {**globals_, **closure}
    values, texts = {}, {}

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            try:
                is_static = _is_static(_resolve(node.func, globals_, closure))
            except Exception:  # noqa: BLE001 - a property raising while resolving the callee: not a static call
                is_static = False
            if is_static:
                expr = node.args[0]
                if not any(isinstance(n, ast.Name) and n.id in local_names for n in ast.walk(expr)):
                    body = ast.Expression(body=expr)
                    ast.fix_missing_locations(body)
                    try:
                        value = eval(compile(body, src.file, "eval"), env)  # the user's own expression
                    except Exception:  # noqa: BLE001 - evaluated again when compiling, where the error is reported
                        value = MISSING
                    if value is not MISSING:
                        values[_pos(node)] = value
                        texts[_pos(node)] = ast.unparse(expr)
                    return  # statics nested in it were evaluated with it
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in src.tree.body:
        visit(stmt)
    if values:
        _DECLARED[fn] = values
        _TEXTS[fn] = texts


def lookup(fn, node: ast.AST):
    """The value declared for the ``wp.static`` call ``node`` of ``fn``, or MISSING."""
    values = _DECLARED.get(fn)
    if not values:
        return MISSING
    return values.get(_pos(node), MISSING)


def _pos(node: ast.AST) -> tuple:
    """Where a call is in its function's source: start and end (``wp.static(f)(x)`` starts where its callee does)."""
    return tuple(getattr(node, a, None) for a in ("lineno", "col_offset", "end_lineno", "end_col_offset"))


def key_of(node: ast.AST) -> str:
    return ":".join(str(p) for p in _pos(node))


def declared_value(fn, key: str):
    """A declared value by ``key_of`` (for a warm start's check), or MISSING."""
    pos = tuple(None if p == "None" else int(p) for p in key.split(":"))
    return (_DECLARED.get(fn) or {}).get(pos, MISSING)


def resolved_expressions(fn) -> dict:
    """{expression text: value} of ``fn``'s statics evaluated at declaration (Warp's
    ``adj.resolved_static_expressions``)."""
    values, texts = _DECLARED.get(fn) or {}, _TEXTS.get(fn) or {}
    return {texts[k]: v for k, v in values.items()}
