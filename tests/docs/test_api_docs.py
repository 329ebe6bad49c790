"""Every public name (``weft.__all__``) and every public kernel builtin (the op registry) has a doc string, and the
API reference generator (docs/api/gen_api.py) puts each of them on a page. CI also builds the reference with Sphinx,
warnings as errors (.ci/run)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import types
from pathlib import Path

import weft
from weft.builtins import Builtin
from weft.ops import registry

ROOT = Path(__file__).resolve().parents[2]


def _gen_api():
    spec = importlib.util.spec_from_file_location("gen_api", ROOT / "docs" / "api" / "gen_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _doc(name: str, obj) -> str:
    """The doc string that documents ``weft.<name>`` (empty if none)."""
    if name in weft._CONSTANT_DOCS:
        return weft._CONSTANT_DOCS[name]
    if isinstance(obj, Builtin):
        return next((op.doc for op in registry.overloads(name) if op.doc), "")
    if isinstance(obj, type):
        return obj.__dict__.get("__doc__") or ""  # its own, not a base class's
    if isinstance(obj, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType)) or callable(obj):
        return obj.__doc__ or ""
    return inspect.getdoc(obj) or ""  # an instance (wp.adjoint): its class documents it


def test_all_lists_the_public_names():
    public = {n for n, v in vars(weft).items() if not n.startswith("_") and n != "annotations"
              and not isinstance(v, types.ModuleType)}
    missing = sorted(public - set(weft.__all__))
    assert not missing, f"public names missing from weft.__all__ (defined after it in weft/__init__.py?): {missing}"
    unknown = sorted(n for n in weft.__all__ if not hasattr(weft, n))
    assert not unknown, f"weft.__all__ names that do not exist: {unknown}"
    assert {"config", "optim", "autograd", "types"} <= set(weft.__all__)


def test_every_public_name_has_a_docstring():
    undocumented = sorted(n for n in weft.__all__ if not _doc(n, getattr(weft, n)).strip())
    assert not undocumented, f"{len(undocumented)} public names in weft.__all__ have no doc string: {undocumented}"


def test_every_public_op_has_a_docstring():
    public = sorted({op.name for op in registry.all_ops() if op.public})
    undocumented = [n for n in public if not any(op.doc.strip() for op in registry.overloads(n))]
    assert not undocumented, f"{len(undocumented)} registered public ops have no doc on any overload: {undocumented}"
    # and each is reachable as wp.<name>
    assert [n for n in public if not isinstance(getattr(weft, n, None), Builtin)] == []


def test_reference_pages_cover_every_name(tmp_path):
    gen = _gen_api()
    gen.write(tmp_path)
    builtins_rst, python_rst = ((tmp_path / name).read_text() for name in ("builtins.rst", "python.rst"))
    builtins = [n for n in weft.__all__ if isinstance(getattr(weft, n), Builtin)]
    absent = [n for n in builtins if f".. _builtin-{n}:" not in builtins_rst]
    assert not absent, f"builtins missing from the generated builtins page: {absent}"
    others = [n for n in weft.__all__ if n not in builtins]
    absent = [n for n in others if f"weft.{n}" not in python_rst and f"``{n}``" not in python_rst
              and f"wp.{n}" not in python_rst and f":: {n}" not in python_rst]
    assert not absent, f"names missing from the generated Python API page: {absent}"
    assert "sin(Float) -> Float" in builtins_rst
    assert "dot(vec3(Float), vec3(Float)) -> Float" in builtins_rst
    assert "floor(Float) -> Float    # not differentiable" in builtins_rst


def test_subpackages_document_every_name_on_their_page(tmp_path):
    """wp.sim, weft.distributed, wp.sparse and wp.render (imported on first use, so not in weft.__all__, as in Warp)
    each get a generated page listing their own __all__, every name with a doc string."""
    gen = _gen_api()
    gen.write(tmp_path)
    for module_name, _, _ in gen.SUBPACKAGES:
        module = importlib.import_module(module_name)
        page = (tmp_path / gen.subpackage_file(module_name)).read_text()
        absent = [n for n in module.__all__ if f"{module_name}.{n}" not in page and f"``{n}``" not in page
                  and f":: {n}(" not in page]
        assert not absent, f"{module_name}: names missing from its generated page: {absent}"
        undocumented = [n for n in module.__all__ if _is_documentable(getattr(module, n))
                        and not _doc(n, getattr(module, n)).strip()]
        assert not undocumented, f"{module_name}: public names without a doc string: {undocumented}"
    index = (ROOT / "docs" / "api" / "index.rst").read_text()
    assert all(f"_generated/{gen.subpackage_file(m)[:-4]}" in index for m, _, _ in gen.SUBPACKAGES)


def _is_documentable(obj) -> bool:
    """Classes, functions and kernels carry doc strings; constants (ints, enums members) are listed by value."""
    return isinstance(obj, type) or callable(obj)
