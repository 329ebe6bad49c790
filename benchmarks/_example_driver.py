"""Times one of Warp's own examples for bench_warp_examples.py, under weft or under Warp.

``python _example_driver.py {weft|warp} EXAMPLE.py METHOD MIN_SECONDS MAX_STEPS [wall|cpu]``

The example file is imported as a module (its ``__main__`` block does not run), its ``Example`` class is built with
the arguments a headless run would give (no USD stage, no window), ``METHOD`` (``step`` or ``render``) is called once
to compile and warm up, then repeatedly until ``MIN_SECONDS`` of wall time (``cpu``: of process CPU time, the same amount of work whatever
the machine's load) or ``MAX_STEPS`` calls. Under weft, ``warp``
is aliased to weft so the example runs unchanged. Prints one JSON line: construct/first-call seconds and the wall and
process-CPU seconds per call. Anything the example prints goes to stderr.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import os
import sys
import time


def _import_example(path: str):
    name = "bench_example_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _headless_kwargs(cls) -> dict:
    wanted = {"stage_path": None, "headless": True, "verbose": False}
    params = inspect.signature(cls.__init__).parameters
    return {k: v for k, v in wanted.items() if k in params}


def main() -> None:
    framework, path, method, min_seconds, max_steps = sys.argv[1:6]
    min_seconds, max_steps = float(min_seconds), int(max_steps)
    clock = time.process_time if sys.argv[6:] == ["cpu"] else time.perf_counter
    if framework == "weft":
        # Warp's examples find their assets with warp.examples.get_asset_directory(): point weft at the wheel's
        os.environ.setdefault("WEFT_WARP_EXAMPLES", os.path.dirname(os.path.dirname(os.path.abspath(path))))
        import weft as wp

        sys.modules["warp"] = wp
    else:
        import warp as wp

        wp.config.quiet = True
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    with contextlib.redirect_stdout(sys.stderr), wp.ScopedDevice("cpu"):
        t0 = time.perf_counter()
        module = _import_example(path)
        example = module.Example(**_headless_kwargs(module.Example))
        call = getattr(example, method)
        call()
        wp.synchronize()
        first = time.perf_counter() - t0
        steps = 0
        c0, w0, s0 = time.process_time(), time.perf_counter(), clock()
        while steps < max_steps and (steps == 0 or clock() - s0 < min_seconds):
            call()
            wp.synchronize()
            steps += 1
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    print(json.dumps({"first_s": first, "steps": steps, "wall_s": wall / steps, "cpu_s": cpu / steps}))


if __name__ == "__main__":
    main()
