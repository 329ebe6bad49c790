"""Ahead-of-time modules: ``wp.compile_aot_module`` and ``wp.load_aot_module``.

``compile_aot_module`` compiles every non-generic kernel of a module (and each ``wp.overload`` of its generic ones)
for CPU devices and / or GPU architectures and writes the binaries to a folder with one manifest per target
(``<module>.cpu.json``, ``<module>.sm_<arch>.json``) naming each kernel specialisation's binary and the cache key of
the source it was built from. ``load_aot_module`` reads a target's manifest and makes those binaries the ones the
kernels launch with, without compiling: CPU libraries enter the kernel cache under their key (a launch then finds
them there), GPU images are loaded into the device's context (``cuda.launch.install_image``). The kernels' Python
definitions are still needed (weft lowers them to check each binary was built from the same code: a kernel changed
since is an error, never a stale binary).
"""

from __future__ import annotations

import json
import os
import shutil
import types as pytypes
import warnings
from pathlib import Path

from .. import config, pipeline
from ..cuda import launch as cuda_launch
from ..kernel import Kernel
from ..module import Module, get_module
from ..pipeline import Direction
from ..toolchain import cache, nvrtc
from . import device as D
from .launch import resolve_block_dim


def _module(module) -> Module:
    if isinstance(module, Module):
        return module
    if isinstance(module, pytypes.ModuleType):
        return get_module(module.__name__)
    if isinstance(module, str):
        return get_module(module)
    raise TypeError(f"module must be a wp.Module, a Python module or a module name, got {type(module).__name__}")


def _module_dir(mod: Module, module_dir) -> Path:
    if module_dir is None:
        return config.cache_dir() / "aot" / mod.name
    return Path(os.fspath(module_dir))


def _type_sets(mod: Module, strip_hash: bool) -> list[tuple[Kernel, tuple]]:
    """(kernel, parameter types) of every specialisation an AOT module holds, with Warp's checks."""
    out, skipped, clashing = [], [], []
    for k in mod.kernels():
        k.annotations()
        if k._fixed_types is not None:
            out.append((k, k._fixed_types))
        elif k._overloads:
            out += [(k, t) for t in k._overloads]
            if strip_hash and len(k._overloads) > 1:
                clashing.append(k.__name__)
        else:
            skipped.append(k.__name__)
    if not out:
        raise RuntimeError("Cannot compile module: No compilable kernels found in the module. The module must contain "
                           "at least one non-generic kernel or a generic kernel with overloads.")
    if skipped:
        warnings.warn("Generic kernels without overloads will be skipped during AOT compilation. Add overloads using "
                      f"wp.overload() to compile them. Kernels without overloads: {', '.join(skipped)}",
                      UserWarning, stacklevel=3)
    if clashing:
        raise RuntimeError("Cannot use strip_hash=True with generic kernels that have multiple overloads: their files "
                           f"would share a name. Kernels: {', '.join(clashing)}")
    return out


def _file_name(kernel: Kernel, key: str, strip_hash: bool, ext: str) -> str:
    return f"{kernel.__name__}.{ext}" if strip_hash else f"{kernel.__name__}-{key[:20]}.{ext}"


def _strip(mod: Module, strip_hash) -> bool:
    if strip_hash is not None:
        mod.options["strip_hash"] = bool(strip_hash)
    return bool(mod.options.get("strip_hash", False))


def _targets(device, arch) -> list:
    """Devices and architectures to build for: ("cpu", None) / ("cuda", arch) pairs."""
    if device is None and arch:
        devices = []
    elif isinstance(device, (list, tuple)):
        devices = [D.get_device(d) for d in device]
    else:
        devices = [D.get_device(device)]
    out = []
    for d in devices:
        out.append(("cuda", d.arch) if d.impl.cuda_driver else ("cpu", None))
    if arch:
        for a in ([arch] if isinstance(arch, (int, str)) else list(arch)):
            out.append(("cuda", int(a)))
    return out


def _manifest_name(mod: Module, target: str, arch, use_ptx: bool) -> str:
    if target == "cpu":
        return f"{mod.name}.cpu.json"
    return f"{mod.name}.{'compute' if use_ptx else 'sm'}_{arch}.json"


def compile_aot_module(module, device=None, arch=None, module_dir=None, use_ptx=None, strip_hash=None) -> list[Path]:
    """Compile ``module`` ahead of time for ``device`` (a device or a list; default: the current one) and the GPU
    architectures ``arch`` (an int or a list: NVRTC builds them without a GPU), into ``module_dir`` (default:
    ``<kernel cache>/aot/<module>``). Returns each target's manifest path, in target order."""
    mod = _module(module)
    strip = _strip(mod, strip_hash)
    specs = _type_sets(mod, strip)
    out_dir = _module_dir(mod, module_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for target, target_arch in _targets(device, arch):
        entries = []
        ptx = bool(use_ptx)
        for kernel, types in specs:
            spec = kernel.specialize(tuple(types), resolve_block_dim(D.CPU, None))
            if target == "cpu":
                key = pipeline.built_key(spec.source, spec.debug)
                lib = pipeline.load_built(key) or pipeline.build(spec.source, kernel.__name__, spec.debug)
                name = _file_name(kernel, key, strip, "so")
                shutil.copyfile(lib._name, out_dir / name)
            else:
                program = cuda_launch.cuda_program(spec, Direction.FORWARD)
                options = nvrtc.NvrtcOptions(arch=nvrtc.target_arch(target_arch), debug=spec.debug,
                                             output="ptx" if ptx else "cubin")
                key = nvrtc.cuda_key(program.source, options)
                name = _file_name(kernel, key, strip, f"{'compute' if ptx else 'sm'}_{target_arch}."
                                  f"{'ptx' if ptx else 'cubin'}")
                (out_dir / name).write_bytes(nvrtc.build_cuda(program.source, options, kernel.__name__))
            entries.append({"kernel": kernel.__name__, "types": repr(tuple(types)), "key": key, "file": name})
        manifest = out_dir / _manifest_name(mod, target, target_arch, ptx)
        manifest.write_text(json.dumps({"module": mod.name, "target": target, "arch": target_arch,
                                        "ptx": ptx, "kernels": entries}, indent=1))
        paths.append(manifest)
    return paths


def load_aot_module(module, device=None, arch=None, module_dir=None, use_ptx=None, strip_hash=None) -> None:
    """Make the binaries ``compile_aot_module`` wrote the ones ``module``'s kernels launch with on ``device`` (a
    device or a list; default: the current one), without compiling. ``arch``: the GPU architecture whose binaries
    to load (default: the device's). Raises FileNotFoundError when the folder holds no binaries for a device, and
    RuntimeError when a kernel changed since they were compiled."""
    mod = _module(module)
    _strip(mod, strip_hash)
    in_dir = _module_dir(mod, module_dir)
    devices = [D.get_device(d) for d in device] if isinstance(device, (list, tuple)) else [D.get_device(device)]
    kernels = {k.__name__: k for k in mod.kernels()}
    for dev in devices:
        gpu = dev.impl.cuda_driver
        flags = (True, False) if gpu and use_ptx is None else (bool(use_ptx),)
        tried, manifest = [], None
        for ptx in flags:
            p = in_dir / _manifest_name(mod, "cuda" if gpu else "cpu", arch or dev.arch, ptx)
            tried.append(str(p))
            if p.is_file():
                manifest = json.loads(p.read_text())
                break
        if manifest is None:
            raise FileNotFoundError(f"Binary file not found. Tried: {', '.join(tried)}")
        for entry in manifest["kernels"]:
            kernel = kernels.get(entry["kernel"])
            if kernel is None:
                raise RuntimeError(f"load_aot_module: module '{mod.name}' has no kernel '{entry['kernel']}' (the "
                                   "module changed since compile_aot_module)")
            _load_entry(kernel, entry, in_dir, dev, gpu, manifest)


def _types_of(kernel: Kernel, text: str) -> tuple:
    kernel.annotations()
    candidates = [kernel._fixed_types] if kernel._fixed_types is not None else list(kernel._overloads)
    for t in candidates:
        if repr(tuple(t)) == text:
            return tuple(t)
    raise RuntimeError(f"load_aot_module: kernel '{kernel.__name__}' has no specialisation {text} any more")


def _changed(kernel: Kernel) -> RuntimeError:
    return RuntimeError(f"load_aot_module: kernel '{kernel.__name__}' changed since compile_aot_module (its code no "
                        "longer matches the compiled binary); compile the module again")


def _load_entry(kernel: Kernel, entry: dict, in_dir: Path, dev, gpu: bool, manifest: dict) -> None:
    types = _types_of(kernel, entry["types"])
    block_dim = resolve_block_dim(D.CPU, None)
    path = in_dir / entry["file"]
    if not path.is_file():
        raise FileNotFoundError(f"Binary file not found. Tried: {path}")
    if not gpu:
        debug = kernel.debug_mode()
        spec = kernel._lower(types, debug, block_dim)  # lowering and rendering only: nothing is compiled
        key = pipeline.built_key(spec.source, debug)
        if key != entry["key"]:
            raise _changed(kernel)
        if cache.lookup("cpu", key, "so") is None:
            def copy_into(tmp):
                target = Path(tmp) / entry["file"]
                shutil.copyfile(path, target)
                return target
            cache.publish("cpu", key, "so", copy_into, keep={"cpp": spec.source})
        kernel.specialize(types, block_dim)  # loads the binary from the cache
        return
    spec = kernel.specialize(types, block_dim)
    program = cuda_launch.cuda_program(spec, Direction.FORWARD)
    ptx = manifest["ptx"]
    options = nvrtc.NvrtcOptions(arch=nvrtc.target_arch(manifest["arch"]), debug=spec.debug,
                                 output="ptx" if ptx else "cubin")
    if nvrtc.cuda_key(program.source, options) != entry["key"]:
        raise _changed(kernel)
    cuda_launch.install_image(program.source, kernel.__name__, spec.debug, program.entry, dev, path.read_bytes())

