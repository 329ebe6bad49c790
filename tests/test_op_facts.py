"""Per-op knowledge lives on the op record (docs/architecture.md): the IR analyses, autodiff, the renderers and the tile
passes (all in ir/, autodiff/, backend/) ask an ``Op`` for its facts (``role``, ``adjoint_linear``, ``constant_factor``, ``side_effect``...), never
compare its name with a string. This test parses those packages and fails on a comparison of an op or call name
(``x.call.name == "store"``, ``op.name in (...)``, ``call.name.startswith("atomic_")``), and checks the facts the
analyses rely on against what each op does."""

from __future__ import annotations

import ast
from pathlib import Path

from weft.ir.roles import OVERWRITES_ARRAY, READS_ARRAY, WRITES_ARRAY, Role
from weft.ops import registry as R

WEFT = Path(__file__).resolve().parents[1] / "weft"
ANALYSES = ("ir", "autodiff", "backend")


def _is_op_name(node: ast.AST) -> bool:
    """``<...>.call.name``, ``<...>.op.name`` or ``op.name`` (the name of an op record or IR call)."""
    if not (isinstance(node, ast.Attribute) and node.attr == "name"):
        return False
    base = node.value
    if isinstance(base, ast.Attribute):
        return base.attr in ("call", "op")
    return isinstance(base, ast.Name) and base.id in ("op", "call", "opr")


def _is_str(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.Set, ast.List)):
        return bool(node.elts) and all(_is_str(e) for e in node.elts)
    return False


def _name_comparisons():
    for package in ANALYSES:
        for path in sorted((WEFT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Compare):
                    sides = [node.left, *node.comparators]
                    if any(_is_op_name(s) for s in sides) and any(_is_str(s) for s in sides):
                        yield f"{path.relative_to(WEFT.parent)}:{node.lineno}"
                elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                      and node.func.attr in ("startswith", "endswith") and _is_op_name(node.func.value)):
                    yield f"{path.relative_to(WEFT.parent)}:{node.lineno}"


def test_analyses_do_not_compare_op_names():
    found = list(_name_comparisons())
    assert not found, "compare an op fact (Op.role, ...) instead of its name:\n  " + "\n  ".join(found)


def test_array_roles_match_what_the_ops_do():
    for op in R.all_ops():
        if op.role in WRITES_ARRAY:
            assert op.side_effect, op  # writes are effects: never merged, never dropped
        if op.role in READS_ARRAY or op.role is Role.VIEW:
            assert not op.side_effect, op
        if op.role in OVERWRITES_ARRAY:
            assert op.adjoint_linear, op  # a store's adjoint moves the gradient of the stored value only
    roles = {op.role for op in R.all_ops()}
    assert roles == set(Role), set(Role) - roles  # every role names at least one op


def test_linear_ops_read_no_operand_values():
    """``adjoint_linear`` lets the Tape ignore overwrites of an op's operands: only ops whose derivative is constant
    may claim it (sums, negation, component routing, copies, array element access, add/sub atomics)."""
    linear = {(op.name, op.domain) for op in R.all_ops() if op.adjoint_linear}
    assert ("add", "scalar") in linear and ("mul", "scalar") not in linear and ("atomic_max", "atomic") not in linear
    for op in R.all_ops():
        if op.adjoint_linear:
            assert op.constant_factor is R.Factor.NONE, op
