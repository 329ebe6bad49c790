"""Runs one program for bench_compile.py, as a script or as a notebook cell, under weft or Warp.

``python _compile_driver.py {weft|warp} {script|notebook} PROGRAM [ARGS...]``

Both names are importable in either case (``import warp`` under weft, ``import weft`` under Warp), so Warp's own
examples and weft's examples run unchanged. ``notebook`` runs the program the way IPython runs a cell: its source
is registered in ``linecache`` under a file name of the form ipykernel gives a cell (a new temp directory per kernel
process, so every restart sees new file names) and executed in ``__main__``.
"""

from __future__ import annotations

import hashlib
import linecache
import os
import runpy
import sys
import tempfile


def main() -> None:
    framework, mode, program, *args = sys.argv[1:]
    if framework == "weft":
        import weft as wp

        sys.modules["warp"] = wp
    else:
        import warp as wp

        wp.config.quiet = True
        sys.modules["weft"] = wp
    sys.argv = [program, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    if mode == "script":
        runpy.run_path(program, run_name="__main__")
    else:
        with open(program, encoding="utf-8") as f:
            text = f.read()
        cell_dir = tempfile.mkdtemp(prefix="ipykernel_")
        name = os.path.join(cell_dir, f"{int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)}.py")
        linecache.cache[name] = (len(text), None, text.splitlines(keepends=True), name)
        main_module = sys.modules["__main__"]
        # dont_inherit: not this file's `from __future__ import annotations` (IPython does not pass its own either)
        exec(compile(text, name, "exec", dont_inherit=True), main_module.__dict__)  # noqa: S102
    wp.synchronize()


if __name__ == "__main__":
    main()
