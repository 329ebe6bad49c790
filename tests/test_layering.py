"""The layers of weft (docs/architecture.md): every import in weft/ is parsed; an import of a higher layer, or a
function-local import of a weft module in another layer, fails this test unless it is on KNOWN below.

KNOWN records the imports that break the rule today (mostly the runtime's cycles: arrays, launches, the Tape and the
CUDA device code call each other). It may only shrink: an entry that no longer occurs fails the test too, so a fix
removes its line. Function-local imports of optional third-party packages (torch, jax, cuda-bindings, ...) are not
weft modules and are not checked.
"""

from __future__ import annotations

import ast
from pathlib import Path

WEFT = Path(__file__).resolve().parents[1] / "weft"

#: layer of each package / module (the longest matching prefix wins); lower layers may not import higher ones.
#: Modules not named here are in the top layer (the public API and the libraries built on it).
LAYERS = {
    "weft.errors": 0, "weft.config": 0, "weft.__version__": 0, "weft.abi": 0,
    "weft.ir": 1, "weft.toolchain": 1,
    "weft.ops": 2, "weft.types": 2,
    "weft.typing": 3,
    "weft.frontend": 4,
    "weft.autodiff": 5, "weft.backend": 5,
    "weft.pipeline": 7, "weft.speccache": 7,
    "weft.cuda": 8,
    "weft.runtime": 9, "weft.kernel": 9, "weft.hostcall": 9, "weft.builtins": 9, "weft.geometry": 9, "weft.ahead": 9,
    "weft.module": 9,
    "weft.interop": 10, "weft.optim": 10, "weft.types_compat": 10, "weft.diagnostics": 10, "weft.sim": 10,
    "weft.utils": 10, "weft.distributed": 10, "weft._src": 10, "weft.__main__": 10, "weft": 10,
}

#: (importer, imported, "upward" | "local") pairs that break the rule today; may only shrink
KNOWN: set[tuple[str, str, str]] = {
    ("weft", "weft.speccache", "local"),
    ("weft", "weft.toolchain", "local"),
    ("weft", "weft.toolchain.compiler", "local"),
    ("weft.diagnostics", "weft.__version__", "local"),
    ("weft.geometry.marching", "weft", "upward"),  # marching cubes is written as weft kernels (import weft as wp)
    ("weft.geometry.surface_nets", "weft", "upward"),  # surface nets too (weft kernels, built at first use)
    ("weft.interop.dlpack", "weft.cuda", "local"),
    ("weft.kernel", "weft.interop.foreign", "upward"),
    ("weft.runtime.array", "weft.interop", "upward"),
    ("weft.runtime.packing", "weft.interop.foreign", "upward"),
}


def _layer(module: str) -> int:
    """The layer of a module: its longest prefix in LAYERS; a module no entry names (a new top-level module, or an
    attribute imported with ``from . import x``) is in the top layer until LAYERS places it lower."""
    parts = module.split(".")
    for k in range(len(parts), 1, -1):
        key = ".".join(parts[:k])
        if key in LAYERS:
            return LAYERS[key]
    return LAYERS["weft"]


def _modules():
    for path in sorted(WEFT.rglob("*.py")):
        rel = path.relative_to(WEFT.parent).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts.pop()
        yield ".".join(parts), is_pkg, ast.parse(path.read_text(), str(path))


def _imports(module: str, is_pkg: bool, tree: ast.AST):
    local: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            local.update(id(sub) for sub in ast.walk(node) if isinstance(sub, (ast.Import, ast.ImportFrom)))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target] if node.module else [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if name == "weft" or name.startswith("weft."):
                yield name, id(node) in local, node.lineno


def _violations() -> dict[tuple[str, str, str], int]:
    found: dict[tuple[str, str, str], int] = {}
    for module, is_pkg, tree in _modules():
        here = _layer(module)
        for target, is_local, line in _imports(module, is_pkg, tree):
            there = _layer(target)
            if there > here:
                found.setdefault((module, target, "upward"), line)
            elif is_local and there != here:
                found.setdefault((module, target, "local"), line)
    return found


def test_every_compiler_package_has_a_layer():
    for package in ("ir", "ops", "typing", "frontend", "autodiff", "backend", "toolchain", "cuda", "runtime"):
        assert f"weft.{package}" in LAYERS and (WEFT / package).is_dir()


def test_no_new_upward_or_local_cross_layer_imports():
    found = _violations()
    new = sorted(set(found) - KNOWN)
    assert not new, "imports that break the layering (docs/architecture.md):\n" + "\n".join(
        f"  {m} line {found[(m, t, k)]}: {k} import of {t}" for m, t, k in new)


def test_known_exceptions_still_exist():
    gone = sorted(KNOWN - set(_violations()))
    assert not gone, "fixed layering exceptions: remove them from KNOWN in tests/test_layering.py:\n" + "\n".join(
        f"  {e}" for e in gone)


#: modules that may still name a device kind (docs/architecture.md, "add a target"): device enumeration and Warp's
#: is_mempool_supported / sm_count / max_shared_memory_per_block, the CUDA array interface, the CUDA backend's own
#: driver copies, torch's device names and CUDA streams, and torch tensors' own ``is_cpu`` / ``is_cuda``. Everything
#: else asks ``device.impl`` for a fact.
DEVICE_KIND_TESTS = {"weft.runtime.device": 5, "weft.runtime.array": 1, "weft.cuda.memory": 5,
                     "weft.interop.torch": 4, "weft.interop.torch_autograd": 1}


def test_libraries_ask_device_facts_not_kinds():
    found: dict[str, int] = {}
    for module, _, tree in _modules():
        n = sum(1 for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr in ("is_cpu", "is_cuda")
                and isinstance(node.ctx, ast.Load))
        if n:
            found[module] = n
    extra = {m: n for m, n in found.items() if n > DEVICE_KIND_TESTS.get(m, 0)}
    assert not extra, ("ask device.impl (host_memory, synchronous, capture_by_replay, simt, ...) instead of testing "
                       f"is_cpu / is_cuda: {extra}")
