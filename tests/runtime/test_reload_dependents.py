"""Reloading a module whose ``@wp.func``s other modules' kernels call: the callers compile again (as in Warp), and
module objects record which modules they reference (``references`` / ``dependents``)."""

import importlib
import sys
import textwrap
import uuid

import numpy as np
import pytest

import weft as wp


@pytest.fixture
def modules(tmp_path, monkeypatch):
    tag = uuid.uuid4().hex[:8]
    names = {"refref": f"w_refref_{tag}", "ref": f"w_ref_{tag}", "dep": f"w_dep_{tag}"}
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(which: str, text: str) -> None:
        (tmp_path / f"{names[which]}.py").write_text(textwrap.dedent(text).format(**names))
        importlib.invalidate_caches()

    write("refref", """
        import weft as wp

        @wp.func
        def more_magic():
            return 1.0
    """)
    write("ref", """
        import weft as wp
        import {refref} as refref

        @wp.func
        def magic():
            return 1.0 * refref.more_magic()
    """)
    write("dep", """
        import weft as wp
        import {ref} as ref
        import {refref} as refref

        @wp.kernel
        def direct(out: wp.array(dtype=float)):
            out[0] = ref.magic()

        @wp.kernel
        def through_local(out: wp.array(dtype=float)):
            f = ref.magic
            out[0] = f()

        @wp.kernel
        def through_tuple(out: wp.array(dtype=float)):
            f, g = ref.magic, refref.more_magic
            out[0] = f() + g()
    """)
    mods = {k: importlib.import_module(v) for k, v in names.items()}
    yield mods, write
    for v in names.values():
        sys.modules.pop(v, None)


def _values(dep) -> list[float]:
    out = []
    for k in (dep.direct, dep.through_local, dep.through_tuple):
        a = wp.zeros(1)
        wp.launch(k, dim=1, inputs=[a])
        out.append(float(a.numpy()[0]))
    return out


def test_reloading_a_called_module_recompiles_its_callers(modules):
    mods, write = modules
    assert _values(mods["dep"]) == [1.0, 1.0, 2.0]
    write("ref", """
        import weft as wp
        import {refref} as refref

        @wp.func
        def magic():
            return 3.0 * refref.more_magic()
    """)
    importlib.reload(mods["ref"])
    assert _values(mods["dep"]) == [3.0, 3.0, 4.0]
    write("refref", """
        import weft as wp

        @wp.func
        def more_magic():
            return 5.0
    """)
    importlib.reload(mods["refref"])  # two modules away from the kernels: they follow too
    np.testing.assert_allclose(_values(mods["dep"]), [15.0, 15.0, 20.0])


def test_module_references_and_dependents(modules):
    mods, _ = modules
    dep = mods["dep"].direct.module
    dep.get_module_hash()
    ref, refref = mods["ref"].magic.module, mods["refref"].more_magic.module
    assert ref in dep.references and refref in dep.references
    assert dep in ref.dependents and dep in refref.dependents
    assert dep not in dep.references


def test_mark_modified_reaches_dependents(modules):
    mods, _ = modules
    _values(mods["dep"])
    k = mods["dep"].direct
    assert k._specs
    mods["ref"].magic.module.mark_modified()
    assert not k._specs  # dropped: lowered again on the next launch
    assert _values(mods["dep"]) == [1.0, 1.0, 2.0]
