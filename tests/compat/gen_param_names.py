"""Regenerate ``weft/ops/param_names.py``: the parameter names of Warp 1.19's kernel builtins, read from the
``def`` signatures of warp-lang's ``warp/__init__.pyi`` (only names weft's registry has as ops).

    python tests/compat/gen_param_names.py /opt/warp119/lib/python3.11/site-packages/warp/__init__.pyi
"""

from __future__ import annotations

import ast
import os
import pprint
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "weft", "ops", "param_names.py")

HEADER = '''"""Parameter names of the kernel builtins, as Warp 1.19 names them (one tuple per distinct signature), so that
kernel code may pass a builtin's arguments by keyword (``wp.pow(x, y=2.0)``). Generated from warp-lang 1.19's type
stubs by ``tests/compat/gen_param_names.py``; do not edit by hand."""

'''


def main(stub: str) -> None:
    sys.path.insert(0, os.path.join(HERE, "..", ".."))
    from weft.ops import registry

    ops = {op.name for op in registry.all_ops()}
    names: dict[str, list[tuple[str, ...]]] = {}
    with open(stub) as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ops:
            a = node.args
            params = tuple(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs))
            if params and params not in names.setdefault(node.name, []):
                names[node.name].append(params)
    table = {k: tuple(v) for k, v in sorted(names.items()) if v}
    with open(OUT, "w") as f:
        f.write(HEADER + "PARAM_NAMES: dict[str, tuple[tuple[str, ...], ...]] = " +
                pprint.pformat(table, width=116, compact=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
