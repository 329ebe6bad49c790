"""Compile ahead: the first cold compile in a module starts its other kernels compiling in the background."""

from __future__ import annotations

import importlib.util
import textwrap

import numpy as np
import pytest

import weft as wp
from weft import ahead

MODULE = """
import weft as wp

@wp.kernel
def first(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + {value}

@wp.kernel
def second(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = a[i] * s

@wp.kernel
def generic(a: wp.array(dtype=wp.Float)):
    i = wp.tid()
    a[i] = a[i] + a.dtype(1.0)

@wp.kernel
def tiled(a: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a, shape=(1, 4), offset=(i, 0))
    wp.tile_store(a, t * 2.0, offset=(i, 0))

@wp.kernel
def broken(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * i
"""


def _load(tmp_path, name: str, value: float):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(MODULE.format(value=value)))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    import sys

    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_siblings_compile_ahead(tmp_path, monkeypatch):
    monkeypatch.setattr(wp.config, "compile_ahead", True)
    monkeypatch.setattr(ahead, "_tile_block_dim", 0)  # no tiled launch yet in this process
    mod = _load(tmp_path, "weft_ahead_module_a", 1.25)  # a value no other test uses: a cold compile
    a = wp.array(np.arange(4, dtype=np.float32), dtype=float)
    wp.launch(mod.first, dim=4, inputs=[a])
    ahead.wait(120)
    assert mod.second._specs, "the sibling kernel was not compiled ahead"
    assert not mod.generic._specs  # generic kernels compile per argument types, at launch
    assert not mod.broken._specs
    # a tile kernel joins for block size 1 (a CPU launch's block size unless wp.config.enable_cpu_blocks, as Warp 1.19;
    # no tiled launch yet in this process)
    assert [spec.tile_dim for spec in mod.tiled._specs.values()] == [1]
    wp.launch(mod.second, dim=4, inputs=[a, 2.0])
    np.testing.assert_allclose(a.numpy(), (np.arange(4) + 1.25) * 2.0)
    # the background failure was silent; the launch reports it at the user's line
    with pytest.raises(wp.CompileError, match="float32, int32"):
        wp.launch(mod.broken, dim=4, inputs=[a])


def test_compile_ahead_can_be_disabled(tmp_path, monkeypatch):
    monkeypatch.setattr(wp.config, "compile_ahead", False)
    mod = _load(tmp_path, "weft_ahead_module_b", 2.75)
    a = wp.zeros(4, dtype=float)
    wp.launch(mod.first, dim=4, inputs=[a])
    ahead.wait(120)
    assert not mod.second._specs
