"""The op table covers the registry: every op with a derivative rule (adjoint != NONE) has an entry with at least
one case, and the table lists nothing that is not a differentiable op."""

from weft.ops import registry
from weft.ops.registry import Adjoint

from .op_table import COVERED, EXCLUDED_DOMAINS, TABLE


def _differentiable_ops() -> set[tuple[str, str]]:
    return {(op.domain, op.name) for op in registry.all_ops()
            if op.adjoint is not Adjoint.NONE and op.domain not in EXCLUDED_DOMAINS}


def test_every_differentiable_op_is_in_the_table():
    missing = sorted(_differentiable_ops() - COVERED)
    assert not missing, (
        "differentiable ops without an entry in tests/autodiff/op_table.py (add a case with its input domain and "
        "tolerance, or register the op with adjoint=Adjoint.NONE if it has no gradient): "
        + ", ".join(f"{d}.{n}" for d, n in missing))


def test_table_lists_only_differentiable_ops():
    stale = sorted(COVERED - _differentiable_ops())
    assert not stale, "op table entries that are not differentiable ops of the registry: " + ", ".join(
        f"{d}.{n}" for d, n in stale)


def test_every_entry_has_a_case():
    assert all(e.cases for e in TABLE)
    keys = [(e.domain, e.name) for e in TABLE]
    assert len(keys) == len(set(keys)), "an op is listed twice"


def test_exclusions_stay_small():
    # only the tile domain (checked by the tiles engineer's own table) may be left out
    assert EXCLUDED_DOMAINS <= {"tile"}


def test_every_differentiable_native_op_has_an_adjoint_rule():
    """A NATIVE op needs weft::adj_<native> in the headers; a SPECIAL op a rule in the adjoint renderer."""
    import pathlib

    from weft.backend.adjoint import has_adjoint_rule

    headers = "".join(p.read_text() for p in pathlib.Path(registry.__file__).parent.parent.joinpath("native").glob(
        "*.h"))
    missing = []
    for op in registry.all_ops():
        if op.domain in EXCLUDED_DOMAINS or op.adjoint is Adjoint.NONE:
            continue
        if op.adjoint is Adjoint.SPECIAL:
            if not has_adjoint_rule(op.name):
                missing.append(f"{op.domain}.{op.name} (SPECIAL, no rule in backend/adjoint.py)")
        elif op.native and f"adj_{op.native}(" not in headers and op.name not in ("cast", "construct"):
            missing.append(f"{op.domain}.{op.name} (no weft::adj_{op.native} in weft/native)")
    assert not missing, "differentiable ops without a derivative rule: " + ", ".join(missing)
