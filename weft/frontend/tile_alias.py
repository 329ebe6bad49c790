"""Tile views that write through to their parent: ``row = b[i]`` followed by an in-place change of ``row``
(``wp.tile_assign(row, x)``, ``row += x``, ``row[j] = v``, a func that changes it) also changes the selected part
of ``b``, as Warp's subscript views alias their parent.

weft's tiles are values, so a subscript binds a copy; this module remembers, per function frame, which variable was
bound to which subscript of which tile variable (index expressions evaluated once, when the view is made), and
every later in-place update of the view is written back into the parent with a slice assignment (differentiable).
A plain rebinding of the view's name (``row = something``) ends the alias. Not covered: changes made to the parent
after the view was taken do not show in the view (Warp's view would see them).

``view = wp.tile_broadcast(parent, shape)`` is a view too: each element of ``parent`` backs all the view elements
broadcast from it, so an in-place change of the view adds every view element's change into its source element (as
Warp's atomic updates of a broadcast tile do: ``tile_axpy`` / ``+=`` into a broadcast bias), and the view then reads
the updated source again.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..ir import types as T
from ..ir.nodes import Var
from ..ops import registry
from ..ops.forms import Form


@dataclass
class BroadcastView:
    """A name bound to ``wp.tile_broadcast(parent, shape)``: the parent's name and the view's value when the two last
    agreed."""

    parent: str
    view: Var


def _broadcast_parent(lw, src) -> str | None:
    """The name of the tile variable ``src`` (a ``wp.tile_broadcast(name, shape)`` call) broadcasts, or None."""
    if not isinstance(src, ast.Call):
        return None
    builtin = getattr(lw.eval_static_or_none(src.func), "_wp_kernel_builtin_", None)
    if not isinstance(builtin, str) or registry.syntax(builtin).form is not Form.TILE_BROADCAST:
        return None
    arg = src.args[0] if src.args else next((k.value for k in src.keywords if k.arg == "a"), None)
    if not isinstance(arg, ast.Name):
        return None
    parent = lw.frame.env.get(arg.id)
    return arg.id if isinstance(parent, Var) and isinstance(parent.type, T.TileType) else None


def prepare(lw, node: ast.Assign):
    """For ``name = parent[index]`` with ``parent`` a tile variable: (name, the subscript to read, the pinned store
    target for write-backs); None otherwise."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return None
    src = node.value
    parent_name = _broadcast_parent(lw, src)
    if parent_name is not None:
        return node.targets[0].id, src, parent_name
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
        lw.frame.tile_aliases[name] = BroadcastView(store, value) if isinstance(store, str) else store


def write_back(lw, name: str, value) -> None:
    """After ``name`` was updated in place: the parent's selected part takes the new value."""
    store = lw.frame.tile_aliases.get(name)
    if isinstance(store, BroadcastView):
        _write_back_broadcast(lw, name, store, value)
    elif store is not None:
        lw.store(store, value)


def _write_back_broadcast(lw, name: str, bv: BroadcastView, value) -> None:
    """The source takes the sum of the changes of the view elements it backs; the view is its broadcast again."""
    parent = lw.frame.env.get(bv.parent)
    if not (isinstance(parent, Var) and isinstance(parent.type, T.TileType) and isinstance(value, Var)
            and value.type == bv.view.type):
        lw.frame.tile_aliases.pop(name, None)  # the source was rebound to something else: no view any more
        return
    ps, vs = parent.type.shape, value.type.shape
    delta = lw.op("sub", [value, bv.view])
    lead = len(vs) - len(ps)
    for axis in reversed(range(len(vs))):  # sum over the leading axes and those the source has as 1
        if axis < lead or (ps[axis - lead] == 1 and vs[axis] != 1):
            delta = lw.op("tile_sum", [delta], attrs=(axis,))
    if delta.type.shape != ps:
        delta = lw.op("tile_reshape", [delta], attrs=(parent.type,))
    source = lw.op("add", [parent, delta])
    node = ast.Name(id=bv.parent, ctx=ast.Store())
    lw.store(node, source)
    bv.view = lw.op("tile_broadcast", [source], attrs=(value.type,))
    lw.bind(name, bv.view, node)
