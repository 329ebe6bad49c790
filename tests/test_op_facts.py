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


# ---------------------------------------------------------------------------------------------- the frontend
#: names that hold a builtin's, an op's or a callee's name in the frontend
_NAME_VARS = {"name", "opname", "op_name", "fname", "next_name", "builtin"}


def _names_a_callable(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _NAME_VARS
    if isinstance(node, ast.Attribute):
        of_class = isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "type"
        return node.attr in ("name", "__name__", "_wp_kernel_builtin_") and not of_class or _is_op_name(node)
    return False


def _frontend_dispatch_by_name():
    """Comparisons of a builtin's name with a string, and tables keyed by builtin names (a dict display or
    ``dict(...)`` whose keys are strings and whose values are functions or calls building them)."""
    for path in sorted((WEFT / "frontend").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        where = f"{path.relative_to(WEFT.parent)}"
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(_names_a_callable(s) for s in sides) and any(_is_str(s) for s in sides):
                    yield f"{where}:{node.lineno}: compares a name with a string"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("startswith", "endswith") and _names_a_callable(node.func.value):
                yield f"{where}:{node.lineno}: matches a name's prefix or suffix"
            elif isinstance(node, ast.Dict) and len(node.keys) >= 2 and all(_is_str(k) for k in node.keys) \
                    and all(isinstance(v, (ast.Name, ast.Attribute, ast.Call, ast.Lambda)) for v in node.values) \
                    and any(isinstance(v, (ast.Name, ast.Lambda)) and not _is_upper(v) for v in node.values):
                yield f"{where}:{node.lineno}: a table keyed by names"
            elif isinstance(node, ast.DictComp) and isinstance(node.key, ast.Name) and isinstance(node.value, ast.Call) \
                    and any(isinstance(a, ast.Name) and a.id == node.key.id for a in node.value.args):
                yield f"{where}:{node.lineno}: a table of rules built per name"
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.JoinedStr) \
                    and any(isinstance(v, ast.FormattedValue) and _names_a_callable(v.value)
                            for v in node.args[1].values):
                yield f"{where}:{node.lineno}: getattr of a method named after a builtin"


def _is_upper(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id.isupper()


def test_frontend_does_not_dispatch_on_builtin_names():
    """How a call is lowered is a fact on its record (``Op.syntax``, ``ops.forms.LanguageForm``): the frontend keeps
    one rule per ``Form``, never a table keyed by builtin names or an ``if name == "..."``."""
    found = list(_frontend_dispatch_by_name())
    assert not found, "lower by the record's Form (weft/ops/forms.py) instead:\n  " + "\n  ".join(found)


def test_every_call_form_has_one_rule():
    import weft  # noqa: F401 - declares the language forms (types, builtins, mathfuncs)
    from weft.frontend.forms import LANGUAGE_RULES, OP_RULES
    from weft.ops.forms import Form, language_forms

    assert not set(OP_RULES) & set(LANGUAGE_RULES)
    for name in {op.name for op in R.all_ops()}:
        syntaxes = {op.syntax for op in R.overloads(name)}
        assert len(syntaxes) == 1, (name, syntaxes)  # one way to write a call, whatever the overload
        syntax = syntaxes.pop()
        assert syntax.form is Form.OPERANDS or syntax.form in OP_RULES, (name, syntax.form)
        if syntax.iterated_by:
            assert R.syntax(syntax.iterated_by).form is Form.QUERY_NEXT, name
        assert all(p < 6 for p in syntax.updates), name
    for obj, form in language_forms().items():
        assert form.form in LANGUAGE_RULES, (obj, form)
    used = {op.syntax.form for op in R.all_ops()} | {f.form for f in language_forms().values()}
    assert used == set(Form), set(Form) - used  # no form without a callable
    assert Form.OPERANDS not in OP_RULES  # plain calls take the registry path

