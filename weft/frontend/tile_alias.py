"""Tile views that write through to their parent: ``row = b[i]`` followed by an in-place change of ``row``
(``wp.tile_assign(row, x)``, ``row += x``, ``row[j] = v``, a func that changes it) also changes the selected part
of ``b``, as Warp's subscript views alias their parent.

weft's tiles are values, so a subscript binds a copy; this module remembers, per function frame, which variable was
bound to which subscript of which tile variable (index expressions evaluated once, when the view is made), and
every later in-place update of the view is written back into the parent with a slice assignment (differentiable).
A plain rebinding of the view's name (``row = something``) ends the alias. Not covered: changes made to the parent
after the view was taken do not show in the view (Warp's view would see them).
"""

from __future__ import annotations

import ast

from ..ir import types as T
from ..ir.nodes import Var


def prepare(lw, node: ast.Assign):
    """For ``name = parent[index]`` with ``parent`` a tile variable: (name, the subscript to read, the pinned store
    target for write-backs); None otherwise."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return None
    src = node.value
    if not isinstance(src, ast.Subscript) or not isinstance(src.value, ast.Name):
        return None
    parent = lw.frame.env.get(src.value.id)
    if not isinstance(parent, Var) or not isinstance(parent.type, T.TileType):
        return None
    parts = src.slice.elts if isinstance(src.slice, ast.Tuple) else [src.slice]
    pinned = []
    for p in parts:
        if isinstance(p, (ast.Constant, ast.Slice)):
            pinned.append(p)  # slice bounds are compile-time constants
            continue
        lw._pinned += 1
        hidden = f"view.{lw._pinned}"  # no Python name contains '.'
        lw.frame.env[hidden] = lw.operand(lw.visit(p), p)
        pinned.append(ast.copy_location(ast.Name(id=hidden, ctx=ast.Load()), p))
    sl = ast.copy_location(ast.Tuple(elts=pinned, ctx=ast.Load()), src.slice) if isinstance(src.slice, ast.Tuple) \
        else pinned[0]
    load = ast.copy_location(ast.Subscript(value=src.value, slice=sl, ctx=ast.Load()), src)
    store = ast.copy_location(ast.Subscript(value=ast.Name(id=src.value.id, ctx=ast.Load()), slice=sl,
                                            ctx=ast.Store()), src)
    return node.targets[0].id, load, store


def forget(lw, node: ast.Assign) -> None:
    """A plain assignment to a name ends any view it held."""
    for t in node.targets:
        if isinstance(t, ast.Name):
            lw.frame.tile_aliases.pop(t.id, None)


def remember(lw, view, value) -> None:
    name, _load, store = view
    if isinstance(value, Var) and isinstance(value.type, T.TileType):
        lw.frame.tile_aliases[name] = store


def write_back(lw, name: str, value) -> None:
    """After ``name`` was updated in place: the parent's selected part takes the new value."""
    store = lw.frame.tile_aliases.get(name)
    if store is not None:
        lw.store(store, value)
