"""``wp.compile_aot_module`` / ``wp.load_aot_module`` on the CPU and for GPU architectures (NVRTC, no GPU needed).

The kernels live in a module written to a temporary folder. Loading is checked to compile nothing: the kernel cache
is emptied and the compiler replaced by one that fails, then the loaded kernels launch and give NumPy's results.
"""

from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np
import pytest

import weft as wp
from weft.toolchain import build, nvrtc

SOURCE = '''
import weft as wp


@wp.kernel
def saxpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def scale(x: wp.array(dtype=wp.Any), s: float):
    i = wp.tid()
    x[i] = x[i] * type(x[i])(s)


wp.overload(scale, {"x": wp.array(dtype=wp.float64), "s": float})


@wp.kernel
def generic_only(x: wp.array(dtype=wp.Any)):
    pass
'''


def make_module(tmp_path, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _forget_compiled(mod, monkeypatch, tmp_path):
    """An empty kernel cache and no loaded modules, as in a new process; compiling fails."""
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path / "fresh-cache"))
    monkeypatch.setattr(wp.config, "spec_cache", False)
    monkeypatch.setattr(build, "_loaded", {})
    for k in (mod.saxpy, mod.scale):
        k._specs.clear()
        k.__dict__.pop("_launch_fast", None)

    def no_compile(*args, **kwargs):
        raise AssertionError("load_aot_module compiled a kernel")
    monkeypatch.setattr(build, "_compile", no_compile)


def test_cpu_compile_and_load(tmp_path, monkeypatch):
    mod = make_module(tmp_path, "weft_aot_cpu_mod")
    out = tmp_path / "aot"
    with pytest.warns(UserWarning, match="generic_only"):
        paths = wp.compile_aot_module(mod, device="cpu", module_dir=out)
    assert [p.name for p in paths] == ["weft_aot_cpu_mod.cpu.json"]
    manifest = json.loads(paths[0].read_text())
    assert sorted(e["kernel"] for e in manifest["kernels"]) == ["saxpy", "scale"]
    assert all((out / e["file"]).is_file() for e in manifest["kernels"])
    _forget_compiled(mod, monkeypatch, tmp_path)
    wp.load_aot_module(mod, device="cpu", module_dir=out)
    x = wp.array(np.arange(5, dtype=np.float32))
    y = wp.array(np.ones(5, dtype=np.float32))
    wp.launch(mod.saxpy, 5, inputs=[3.0, x, y], device="cpu")
    np.testing.assert_allclose(y.numpy(), 3.0 * np.arange(5) + 1.0)
    z = wp.array(np.arange(4, dtype=np.float64))
    wp.launch(mod.scale, 4, inputs=[z, 0.5], device="cpu")
    np.testing.assert_allclose(z.numpy(), 0.5 * np.arange(4))


def test_load_errors(tmp_path):
    mod = make_module(tmp_path, "weft_aot_err_mod")
    with pytest.raises(FileNotFoundError, match="weft_aot_err_mod.cpu.json"):
        wp.load_aot_module(mod, device="cpu", module_dir=tmp_path / "nothing")
    out = tmp_path / "aot"
    with pytest.warns(UserWarning):
        (manifest_path,) = wp.compile_aot_module("weft_aot_err_mod", module_dir=out, device="cpu")
    manifest = json.loads(manifest_path.read_text())
    manifest["kernels"][0]["key"] = "0" * 40  # built from other code
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(RuntimeError, match="changed since compile_aot_module"):
        wp.load_aot_module(mod, device="cpu", module_dir=out)
    with pytest.raises(TypeError, match="module must be"):
        wp.compile_aot_module(3)
    wp.overload(mod.scale, {"x": wp.array(dtype=wp.float32), "s": float})
    with pytest.raises(RuntimeError, match="strip_hash"), pytest.warns(UserWarning, match="generic_only"):
        wp.compile_aot_module(mod, device="cpu", module_dir=out, strip_hash=True)


@pytest.mark.skipif(not nvrtc.is_available(), reason="NVRTC not installed")
def test_gpu_architectures_without_gpu(tmp_path):
    mod = make_module(tmp_path, "weft_aot_gpu_mod")
    out = tmp_path / "aot"
    with pytest.warns(UserWarning):
        cubin, ptx = (wp.compile_aot_module(mod, arch=[80], module_dir=out),
                      wp.compile_aot_module(mod, arch=80, module_dir=out, use_ptx=True))
    assert cubin[0].name == "weft_aot_gpu_mod.sm_80.json" and ptx[0].name == "weft_aot_gpu_mod.compute_80.json"
    entries = json.loads(ptx[0].read_text())["kernels"]
    text = (out / entries[0]["file"]).read_text()
    assert ".target sm_80" in text and ".entry weft_fwd" in text
    image = (out / json.loads(cubin[0].read_text())["kernels"][0]["file"]).read_bytes()
    assert image[:4] == b"\x7fELF"  # a CUBIN
