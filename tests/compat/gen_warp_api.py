#!/usr/bin/env python3
"""Generate ``warp119_api.json``: Warp 1.19's public names and kernel builtin overloads, from its stubs.

Run once against a warp-lang 1.19 installation (the files are only parsed, never imported)::

    python tests/compat/gen_warp_api.py /opt/warp119/lib/python3.11/site-packages/warp

Public names come from ``warp/__init__.pyi`` and the public submodules (``types``, ``utils``, ``autograd``,
``optim``, ``optim.linear``, ``sparse``, ``render``, ``config``); every ``def`` of ``__init__.pyi`` is recorded
with the annotations of each of its overloads (``test_api_table.py`` compares weft against them).
"""

from __future__ import annotations

import ast
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "warp119_api.json")
SUBMODULES = {
    "warp.types": "types.py", "warp.utils": "utils.py", "warp.autograd": "autograd.py",
    "warp.optim": "optim/__init__.py", "warp.optim.linear": "optim/linear.py", "warp.sparse": "sparse.py",
    "warp.render": "render/__init__.py", "warp.config": "config.py",
}


def _module_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return [ast.literal_eval(e) for e in node.value.elts]
    return None


def _star_source(warp_dir: str, module: str) -> ast.Module | None:
    """The parsed source of ``warp.<...>`` named in a star import (None if not a file of the package)."""
    parts = module.split(".")[1:]
    path = os.path.join(warp_dir, *parts) + ".py"
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return ast.parse(f.read())


def _public_names(tree: ast.Module, warp_dir: str = "", stars: list | None = None) -> list[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.names[0].name == "*" and warp_dir:
            src = _star_source(warp_dir, node.module or "")
            if src is not None:
                exported = _module_all(src) or _public_names(src)
                names.update(exported)
                if stars is not None:
                    stars.append((src, set(exported)))
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname for a in node.names if a.asname and a.asname == a.name)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return sorted(n for n in names if not n.startswith("_"))


def _signature(fn: ast.FunctionDef) -> str:
    args = fn.args
    parts = []
    for a in args.posonlyargs + args.args:
        parts.append(f"{a.arg}: {ast.unparse(a.annotation)}" if a.annotation else a.arg)
    if args.vararg:
        parts.append("*" + args.vararg.arg)
    for a in args.kwonlyargs:
        parts.append(f"{a.arg}: {ast.unparse(a.annotation)}" if a.annotation else a.arg)
    ret = f" -> {ast.unparse(fn.returns)}" if fn.returns else ""
    return f"({', '.join(parts)}){ret}"


def generate(warp_dir: str) -> dict:
    with open(os.path.join(warp_dir, "__init__.pyi")) as f:
        stub = ast.parse(f.read())
    builtins: dict[str, list[str]] = {}
    for node in stub.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            builtins.setdefault(node.name, []).append(_signature(node))
    stars: list = []
    modules = {"warp": _public_names(stub, warp_dir, stars)}
    for src, exported in stars:  # Warp functions re-exported by star imports (warp._src.math: norm_l2 ...)
        for node in src.body:
            if isinstance(node, ast.FunctionDef) and node.name in exported and node.name not in builtins:
                builtins[node.name] = [_signature(node)]
    for mod, rel in SUBMODULES.items():
        path = os.path.join(warp_dir, rel)
        if os.path.isfile(path):
            with open(path) as f:
                modules[mod] = _public_names(ast.parse(f.read()))
    return {"source": "warp-lang 1.19.0 (warp/__init__.pyi and public submodules)", "modules": modules,
            "builtins": builtins}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    data = generate(sys.argv[1])
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{OUT}: {sum(map(len, data['modules'].values()))} names, {len(data['builtins'])} callables, "
          f"{sum(map(len, data['builtins'].values()))} overloads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
