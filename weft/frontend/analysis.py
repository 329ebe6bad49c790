"""Pre-passes over a function's AST: which names need mutable storage, which statements may return."""

from __future__ import annotations

import ast

from ..ops import registry
from ..ops.forms import declared, language_form


def binding_analysis(tree: ast.FunctionDef, ref_positions=None) -> tuple[set[str], set[str]]:
    """(mutable names, names only ever targeted through ``x[...] =`` / ``x.f =``).

    The second set matters for arrays: storing into ``a[i]`` does not rebind ``a``. ``ref_positions(call)`` gives
    the argument positions a call passes by reference (``wp.ref[T]`` parameters of the callee): like the arguments
    of in-place builtins, they are rebound by the call.
    """
    direct: set[str] = set()
    component: set[str] = set()
    counts: dict[str, int] = {}
    nested: set[str] = set()

    def targets(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Name):
            direct.add(node.id)
            return [node.id]
        if isinstance(node, (ast.Tuple, ast.List)):
            return [n for elt in node.elts for n in targets(elt)]
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            # component / field assignment rebinds the base name
            base = node
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                component.add(base.id)
                return [base.id]
            return []
        return []

    def visit(stmts: list[ast.stmt], depth: int) -> None:
        for s in stmts:
            names: list[str] = []
            if isinstance(s, ast.Assign):
                for t in s.targets:
                    names += targets(t)
            elif isinstance(s, (ast.AugAssign, ast.AnnAssign)):
                names += targets(s.target)
                if isinstance(s, ast.AugAssign):
                    names += targets(s.target)  # read-modify-write counts as a second binding
            elif isinstance(s, ast.For):
                names += targets(s.target)
                visit(s.body, depth + 1)
                visit(s.orelse, depth + 1)
                for n in targets(s.target):
                    nested.add(n)
            elif isinstance(s, ast.While):
                # ``while wp.hash_grid_query_next(q, i)``: the test runs every iteration, so what it updates in place
                # is rebound inside the loop
                for call in ast.walk(s.test):
                    if isinstance(call, ast.Call):
                        for n in _in_place_targets(call, targets, ref_positions):
                            counts[n] = counts.get(n, 0) + 1
                            nested.add(n)
                visit(s.body, depth + 1)
                visit(s.orelse, depth + 1)
            elif isinstance(s, ast.If):
                visit(s.body, depth + 1)
                visit(s.orelse, depth + 1)
            elif isinstance(s, ast.With):
                visit(s.body, depth)
            elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and depth > 0:
                names += _in_place_targets(s.value, targets, ref_positions)  # at top level the rebinding stays SSA
            if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.Expr)) and depth > 0:
                # in-place calls inside expressions (``ok = wp.mesh_query_aabb_next(q, i)`` in a loop)
                expr = s.test if isinstance(s, ast.If) else s.value
                for call in ast.walk(expr) if expr is not None else ():
                    if isinstance(call, ast.Call) and not (isinstance(s, ast.Expr) and call is s.value):
                        names += _in_place_targets(call, targets, ref_positions)
            for n in names:
                counts[n] = counts.get(n, 0) + 1
                if depth > 0:
                    nested.add(n)

    visit(tree.body, 0)
    nested |= _view_parents_updated_in_loops(tree, ref_positions)
    # a name bound directly once, at the top level, and otherwise only stored through (``buf = wp.zeros(...)``
    # then ``buf[k] = ...``) is never rebound when its value is an array: stores go through it
    direct_once = {n for n in direct if n in component and _direct_top_level_once(tree.body, n)}
    return {n for n, c in counts.items() if c > 1} | nested, (component - direct) | direct_once


def in_place_params(tree: ast.FunctionDef) -> tuple[str, ...]:
    """Parameters the body changes in place (``t += x``, ``t[i] = v``, ``wp.tile_assign(t, ...)``) and never rebinds
    (``t = ...``): for a tile argument these changes reach the caller, as Warp passes tiles by reference."""
    params = [a.arg for a in tree.args.args]
    rebound: set[str] = set()
    changed: set[str] = set()

    def root(node):
        while isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def name_of(node):
        return [node.id] if isinstance(node, ast.Name) else []

    for s in ast.walk(tree):
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            for t in (s.targets if isinstance(s, ast.Assign) else [s.target]):
                for elt in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                    if isinstance(elt, ast.Name):
                        rebound.add(elt.id)
                    elif root(elt) is not None:
                        changed.add(root(elt))
        elif isinstance(s, ast.AugAssign):
            if root(s.target) is not None:
                changed.add(root(s.target))
        elif isinstance(s, (ast.For, ast.comprehension)):
            rebound.update(name_of(s.target))
        elif isinstance(s, ast.Call):
            changed.update(_in_place_targets(s, name_of))
    return tuple(p for p in params if p in changed and p not in rebound)


def _in_place_targets(call: ast.Call, targets, ref_positions=None) -> list[str]:
    """The names a call of a builtin that updates arguments in place (``wp.tile_fft(a)``, the op's
    ``Syntax.updates``) or of a func taking ``wp.ref[T]`` parameters rebinds, like an assignment."""
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else None)
    out: list[str] = []
    form = language_form(declared(name)) if name is not None else None
    updates = registry.syntax(name).updates + (form.updates if form is not None else ()) if name is not None else ()
    if ref_positions is not None:
        updates = updates + ref_positions(call)
    for pos in updates:
        if pos < len(call.args):
            out += targets(call.args[pos])
    return out


def _view_parents_updated_in_loops(tree: ast.FunctionDef, ref_positions=None) -> set[str]:
    """Local names ``p`` of ``v = p[...]`` inside a loop whose ``v`` the same loop updates with an in-place builtin
    (``wp.tile_assign(v, ...)``) or an element store (``v[j] = ...``): when ``p`` is a tile, ``v`` is a view of it
    and the update is written back into ``p`` (frontend.tile_alias), which rebinds ``p`` inside the loop."""
    params = {a.arg for a in tree.args.args}
    out: set[str] = set()
    for loop in ast.walk(tree):
        if not isinstance(loop, (ast.For, ast.While)):
            continue
        views = {}
        updated: set[str] = set()
        for s in ast.walk(loop):
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and \
                    isinstance(s.value, ast.Subscript) and isinstance(s.value.value, ast.Name):
                views[s.targets[0].id] = s.value.value.id
            elif isinstance(s, ast.Assign):
                updated |= {t.value.id for t in s.targets if isinstance(t, ast.Subscript)
                            and isinstance(t.value, ast.Name)}
            elif isinstance(s, ast.Call):
                updated |= set(_in_place_targets(s, lambda n: [n.id] if isinstance(n, ast.Name) else [],
                                                 ref_positions))
        out |= {p for v, p in views.items() if v in updated and p not in params}
    return out


def _direct_top_level_once(body: list[ast.stmt], name: str) -> bool:
    top = sum(1 for s in body if isinstance(s, ast.Assign) and len(s.targets) == 1
              and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name)
    everywhere = 0
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == name) or \
                (isinstance(node, ast.arg) and node.arg == name):
            everywhere += 1
    return top == 1 and everywhere == 1


def contains(node: ast.AST, kinds: tuple[type, ...], stop: tuple[type, ...] = ()) -> bool:
    """Whether ``node`` contains a node of ``kinds`` (not looking inside nodes of ``stop``)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, kinds):
            return True
        if isinstance(child, (stop, ast.FunctionDef, ast.Lambda)):
            continue
        if contains(child, kinds, stop):
            return True
    return False


def may_return(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Return) or contains(stmt, (ast.Return,))


def loop_has_break_or_continue(loop: ast.For | ast.While) -> bool:
    """Break/continue belonging to this loop (not to loops nested in it)."""
    def scan(stmts) -> bool:
        for s in stmts:
            if isinstance(s, (ast.Break, ast.Continue)):
                return True
            if isinstance(s, (ast.For, ast.While)):
                continue
            if isinstance(s, ast.If) and (scan(s.body) or scan(s.orelse)):
                return True
        return False

    return scan(loop.body)


def only_tail_return(tree: ast.FunctionDef) -> bool:
    """True when the only return is the last top-level statement (the common, cheap case)."""
    body = tree.body
    for s in body[:-1]:
        if may_return(s):
            return False
    last = body[-1] if body else None
    return last is None or isinstance(last, ast.Return) or not may_return(last)
