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


PROVIDER = wp.Module("weft_test_provider")
CONSUMER = wp.Module("weft_test_consumer")


@wp.func(module=PROVIDER)
def add_one(x: float):
    return x + 1.0


@wp.func(module=CONSUMER)
def apply_default(g: wp.Function = add_one, x: float = 2.0):
    return g(x)


@wp.func(module=CONSUMER)
def apply_explicit(g: wp.Function, x: float):
    return g(x)


@wp.kernel(module=CONSUMER)
def consumer_default(out: wp.array(dtype=float)):
    out[0] = apply_default()


@wp.kernel(module=CONSUMER)
def consumer_local(out: wp.array(dtype=float)):
    f = add_one
    out[1] = apply_explicit(f, 5.0)


def test_module_objects_are_one_per_name():
    assert wp.Module("weft_test_provider") is PROVIDER
    assert add_one.module is PROVIDER and apply_default.module is CONSUMER
    assert consumer_default.module is CONSUMER


def test_function_targets_from_module_scope_defaults_and_locals_register_dependents():
    out = wp.zeros(2)
    wp.launch(consumer_default, dim=1, inputs=[out])
    wp.launch(consumer_local, dim=1, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [3.0, 6.0])
    assert PROVIDER in CONSUMER.references and CONSUMER in PROVIDER.dependents
    assert CONSUMER.hashers  # loaded by the launches
    PROVIDER.unload()
    for dep in PROVIDER.dependents:
        dep.unload()
    assert not CONSUMER.hashers and not consumer_default._specs
    wp.launch(consumer_default, dim=1, inputs=[out])  # loads again
    assert CONSUMER.hashers and out.numpy()[0] == 3.0


def test_kernels_without_a_module_name_record_references():
    # wp.map makes its kernels outside any module; their module object must still work
    @wp.func
    def cube(x: float):
        return x * x * x

    np.testing.assert_array_equal(wp.map(cube, wp.array([1.0, 2.0])).numpy(), [1.0, 8.0])
