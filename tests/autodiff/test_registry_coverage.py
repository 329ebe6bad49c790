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


def _adjoint_rule_ops() -> set:
    """Op records with a derivative rule in an adjoint renderer's table (CPU, CPU tile blocks)."""
    from weft.backend.adjoint import AdjointRenderer
    from weft.backend.tile_adjoint import TileAdjointRenderer

    return set(AdjointRenderer.adjoint_rules.ops()) | set(TileAdjointRenderer.adjoint_rules.ops())


def test_every_differentiable_native_op_has_an_adjoint_rule():
    """A NATIVE op needs weft::adj_<native> in the headers; a SPECIAL op a rule in the adjoint renderer."""
    import pathlib

    headers = "".join(p.read_text() for p in pathlib.Path(registry.__file__).parent.parent.joinpath("native").rglob(
        "*.h"))
    missing = []
    for op in registry.all_ops():
        if op.domain in EXCLUDED_DOMAINS or op.adjoint is Adjoint.NONE:
            continue
        if op.adjoint is Adjoint.SPECIAL:
            if op not in _adjoint_rule_ops():
                missing.append(f"{op.domain}.{op.name} (SPECIAL, no rule in backend/adjoint.py)")
        elif op.native and f"adj_{op.native}(" not in headers:
            missing.append(f"{op.domain}.{op.name} (no weft::adj_{op.native} in weft/native)")
    assert not missing, "differentiable ops without a derivative rule: " + ", ".join(missing)


def test_rule_tables_cover_the_registry():
    """Every SPECIAL-kind op renders on every target (CPU, CUDA, CPU and CUDA tile blocks), every Adjoint.SPECIAL op
    has a derivative rule for its renderers (tile ops: CPU and cooperative blocks), and no table lists an op that
    does not need it: "has an adjoint" is a registry query that the backends honour."""
    from weft.backend import rules
    from weft.backend.adjoint import AdjointRenderer
    from weft.backend.cuda import CudaAdjointRenderer
    from weft.backend.renderer import Renderer
    from weft.backend.tile_adjoint import TileAdjointRenderer
    from weft.backend.tile_cuda import CudaTileAdjointRenderer as cuda_tile_adj
    from weft.backend.tile_cuda import CudaTileRenderer as cuda_tile
    from weft.backend.tiles import TileRenderer
    from weft.ops.registry import OpKind

    missing = []
    for op in registry.all_ops():
        tile = op.domain == "tile"
        fwd = (TileRenderer, cuda_tile) if tile else (Renderer, TileRenderer, cuda_tile)
        adj = (TileAdjointRenderer, cuda_tile_adj) if tile else (AdjointRenderer, CudaAdjointRenderer,
                                                                 TileAdjointRenderer, cuda_tile_adj)
        if op.kind is OpKind.SPECIAL and op.name not in ("adj_value", "adj_accum", "adj_reset", "adj_array",
                                                         "adj_grad_add"):  # only in @wp.func_grad bodies
            missing += [f"{op.domain}.{op.name}: forward on {cls.__name__}" for cls in fwd
                        if rules.lookup(cls, "forward_rules", op) is None]
        if op.adjoint is Adjoint.SPECIAL:
            missing += [f"{op.domain}.{op.name}: adjoint on {cls.__name__}" for cls in adj
                        if rules.lookup(cls, "adjoint_rules", op) is None]
        elif op not in _adjoint_rule_ops():
            continue
        else:
            missing.append(f"{op.domain}.{op.name}: an adjoint rule for an op registered with adjoint={op.adjoint}")
    assert not missing, "\n".join(missing)


def test_op_facts_are_consistent():
    """Facts the IR passes read from the records: only ops with a derivative rule can read no primal values, only
    block-wide (collective) tile ops take scratch memory, in-place positions exist."""
    from weft.ops.registry import InPlace

    for op in registry.all_ops():
        if not op.adjoint_reads_primal:
            assert op.adjoint is Adjoint.SPECIAL, op
        if op.scratch or op.adjoint_scratch:
            assert op.domain == "tile", op
        assert isinstance(op.in_place, InPlace)
    assert InPlace.ACCUMULATOR.positions(5) == {2} and InPlace.ACCUMULATOR.positions(2) == frozenset()
    assert InPlace.FIRST.positions(1) == {0} and InPlace.ALL.positions(3) == {0, 1, 2}
    public = {op.name for op in registry.all_ops() if op.public}
    assert "sin" in public and "tile_fft" in public and not public & {"load", "store", "copy", "lt", "construct"}
