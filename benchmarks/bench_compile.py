"""Start-up cost of real programs, weft vs Warp: cold compile, warm start, edit-one-kernel, copied script, notebook.

Each measurement is a fresh process running a whole program (interpreter start to exit, through
``_compile_driver.py``), with its own kernel cache:

- ``cold``: empty kernel cache (weft: the cold kernels of a wave compile as one unit, docs/compile.md), weft's
  runtime libraries (the tile FFT passes; ``~/.cache/weft-runtime``, outside the kernel cache) built, as Warp's
  native runtime is;
- ``cold from nothing``: weft only: empty kernel cache and empty runtime library directory (the first tile-FFT
  program on a machine: its run builds the libraries it needs with its kernels). Warp has no such case (its runtime
  ships compiled in its wheel);
- ``cold, unbatched``: as ``cold`` with one compiler run per kernel (weft's ``WEFT_BATCH_COMPILE=0``; weft then
  builds its precompiled header too);
- ``cold + PCH``: weft's cache emptied except for the precompiled header (Warp: no such cache);
- ``warm``: the same script again;
- ``edit one kernel``: one kernel's source changed (a new constant every repeat), everything else cached;
- ``copied script``: the unchanged script from another directory, cache filled by the original;
- ``notebook``: the script run as a notebook cell under a new (ipykernel-style) file name, as after a kernel
  restart, cache filled by the script (the real Jupyter path is tested in tests/toolchain/test_notebook.py).

Programs: ``one`` (the ~60-line kernel of _compile_kernel.py launched once), ``ns2d`` (Warp 1.19's
example_fft_poisson_navier_stokes_2d.py, one step at 512^2: 8 kernels, 3 with tiles), ``perturbation``
(examples/fluids/optimal_perturbation.py at N = 32, 2 steps, one optimisation iteration: forward and adjoint
kernels; weft only when Warp cannot run it). Warp runs through ``--warp-python`` (default /opt/warp119/bin/python).

Python's bytecode cache is on for every measured process (a directory of the run, warmed first), whatever
PYTHONDONTWRITEBYTECODE says: as after an install, neither framework compiles its own Python modules.

Columns: ``wall`` (s, the minimum over ``--repeat`` runs) and ``cpu`` (user + sys of the process and the compiler
processes it waited for, s, minimum). On a shared machine wall time depends on the load (printed); CPU time does
not, and wall time on an idle machine is bounded below by cpu / cores. The ``one`` rows also give the first launch of
the kernel in the new process (after import, ms).

Usage: ``python benchmarks/bench_compile.py [--repeat 3] [--programs one ns2d perturbation] [--no-warp]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DRIVER = HERE / "_compile_driver.py"
WARP_PYTHON = "/opt/warp119/bin/python"
NS2D = "lib/python3.11/site-packages/warp/examples/core/example_fft_poisson_navier_stokes_2d.py"

ONE_TAIL = '''

if __name__ == "__main__":
    import json as _json
    import time as _time

    n = 4096
    rng = np.random.default_rng(0)
    x = wp.array(rng.random((n, 3), dtype=np.float32), dtype=wp.vec3)
    v = wp.zeros(n, dtype=wp.vec3)
    nb = wp.array(rng.integers(0, n, (n, 8)).astype(np.int32), dtype=int)
    mass = wp.array(np.ones(n, dtype=np.float32), dtype=float)
    x_out = wp.zeros(n, dtype=wp.vec3)
    v_out = wp.zeros(n, dtype=wp.vec3)
    energy = wp.zeros(1, dtype=float)
    t0, c0 = _time.perf_counter(), _time.process_time()
    wp.launch(particle_step, dim=n, inputs=[x, v, nb, mass, wp.vec3(0.0, -9.8, 0.0), 0.1, 10.0, 0.5, 0.01, x_out,
                                            v_out, energy])
    wp.synchronize()
    print("BENCH " + _json.dumps({"first_launch_ms": 1000.0 * (_time.perf_counter() - t0),
                                  "first_launch_cpu_ms": 1000.0 * (_time.process_time() - c0)}))
'''

PERTURBATION = '''
import weft as wp
from optimal_perturbation import OptimalPerturbation

if __name__ == "__main__":
    problem = OptimalPerturbation(n=32, steps=2, k0=4.0)
    problem.iterate()  # forward rollout on a Tape, backward through every kernel, Adam step, projection
'''


@dataclass(frozen=True)
class Program:
    name: str
    files: dict  # file name -> text; "main.py" is run
    args: tuple[str, ...]
    edit: tuple[str, str, str]  # (file, old, new with {k}): one kernel's source changed


def programs(warp_python: str) -> dict[str, Program]:
    kernel = (HERE / "_compile_kernel.py").read_text()
    body = kernel[kernel.index("@wp.func"):]
    one = Program("one", {"main.py": "import numpy as np\nimport warp as wp\n\n\n" + body + ONE_TAIL}, (),
                  ("main.py", "if speed > 50.0:", "if speed > {k}.5:"))
    ns2d_path = Path(warp_python).absolute().parent.parent / NS2D
    ns2d_text = ns2d_path.read_text() if ns2d_path.is_file() else ""
    ns2d = Program("ns2d", {"main.py": ns2d_text} if ns2d_text else {},
                   ("--headless", "--num-steps", "1", "--sim-substeps", "1"),
                   ("main.py", "- 4.0 * omega_curr[i, j]", "- 4.0 * omega_curr[i, j] * {k}.0"))
    fluids = REPO / "examples" / "fluids"
    files = {p.name: p.read_text() for p in fluids.glob("*.py")}
    files["main.py"] = PERTURBATION
    pert = Program("perturbation", files, (),
                   ("optimal_perturbation.py", "out[i, j] = a[i, j] + b[i, j]", "out[i, j] = a[i, j] + b[i, j] * {k}.0"))
    return {p.name: p for p in (one, ns2d, pert)}


def _write(prog: Program, directory: Path, edit_k: int | None = None) -> Path:
    directory.mkdir(parents=True)
    for name, text in prog.files.items():
        if edit_k is not None and name == prog.edit[0]:
            assert prog.edit[1] in text, f"{prog.name}: edit target not found"
            text = text.replace(prog.edit[1], prog.edit[2].format(k=edit_k), 1)
        (directory / name).write_text(text)
    return directory / "main.py"


@dataclass
class Result:
    wall: float
    cpu: float
    extra: dict
    error: str = ""


_PYCACHE: Path | None = None  # bytecode cache of the measured processes (see _child_env)


def _child_env(**extra) -> dict:
    """The measured processes' environment: Python's bytecode cache on for both frameworks (in a directory of the
    run, warmed before measuring), as after any install. With PYTHONDONTWRITEBYTECODE set (as on some CI and shared
    machines) weft, run from its source tree, would compile its ~120 modules in every process (about 0.13 CPU s),
    while Warp's installed package ships its bytecode."""
    env = dict(os.environ, PYTHONPATH=str(REPO), **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if _PYCACHE is not None:
        env["PYTHONPYCACHEPREFIX"] = str(_PYCACHE)
    return env


def warm_bytecode(python: str, framework: str) -> None:
    """Import the framework once so the measured runs find its bytecode."""
    subprocess.run([python, "-c", f"import {framework}"], env=_child_env(), check=False, capture_output=True,
                   timeout=600)


def run(framework: str, python: str, mode: str, script: Path, args, cache: Path, **extra_env) -> Result:
    runtime = cache.parent / "runtime"  # weft's runtime library directory: kept when a row empties the cache
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = _child_env(WEFT_CACHE_DIR=str(cache), WARP_CACHE_PATH=str(cache), WEFT_RUNTIME_DIR=str(runtime),
                     **extra_env)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([python, str(DRIVER), framework, mode, str(script), *args], capture_output=True, text=True,
                          env=env, timeout=1800, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    extra = {}
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH "):
            extra.update(json.loads(line[6:]))
    err = "" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["failed"])[-1]
    return Result(wall, cpu, extra, err)


def best(results: list[Result]) -> Result:
    ok = [r for r in results if not r.error]
    if not ok:
        return results[-1]
    extra = {}
    for key in ok[0].extra:
        extra[key] = min(r.extra.get(key, float("inf")) for r in ok)
    return Result(min(r.wall for r in ok), min(r.cpu for r in ok), extra)


def measure(prog: Program, framework: str, python: str, root: Path, repeat: int) -> dict[str, Result]:
    base = root / f"{prog.name}-{framework}"
    cache = base / "cache"
    src = _write(prog, base / "a")
    rows: dict[str, list[Result]] = {k: [] for k in ("cold", "cold from nothing", "cold, unbatched", "cold + PCH",
                                                     "warm", "edit one kernel", "copied script", "notebook")}

    def fresh_cache(keep_pch: bool) -> None:
        pch = base / "pch-saved"
        if cache.exists():
            if keep_pch and (cache / "pch").exists() and not pch.exists():
                shutil.copytree(cache / "pch", pch)
            shutil.rmtree(cache)
        cache.mkdir(mode=0o700)
        if keep_pch and pch.exists():
            shutil.copytree(pch, cache / "pch")

    for edits in range(1, repeat + 1):
        if framework == "weft":  # empty runtime library directory too (it then builds what the program needs)
            shutil.rmtree(base / "runtime", ignore_errors=True)
            fresh_cache(False)
            rows["cold from nothing"].append(run(framework, python, "script", src, prog.args, cache))
        if framework == "weft":  # the same with one compiler run per kernel (docs/compile.md, batches)
            fresh_cache(False)
            rows["cold, unbatched"].append(run(framework, python, "script", src, prog.args, cache,
                                               WEFT_BATCH_COMPILE="0"))
        fresh_cache(False)
        rows["cold"].append(run(framework, python, "script", src, prog.args, cache))
        if framework == "weft":
            _wait_for_pch(python, cache)
            fresh_cache(True)
            rows["cold + PCH"].append(run(framework, python, "script", src, prog.args, cache))
        rows["warm"].append(run(framework, python, "script", src, prog.args, cache))
        # the edited program lives elsewhere: the copied-script row gives the share of the new location (none)
        edited = _write(prog, base / f"edit{edits}", edit_k=100 + edits)
        rows["edit one kernel"].append(run(framework, python, "script", edited, prog.args, cache))
        copy = _write(prog, base / f"copy{edits}" / "deeper")
        rows["copied script"].append(run(framework, python, "script", copy, prog.args, cache))
        rows["notebook"].append(run(framework, python, "notebook", src, prog.args, cache))
    return {k: best(v) for k, v in rows.items() if v}


def _wait_for_pch(python: str, cache: Path) -> None:
    """Build weft's precompiled header in ``cache`` (a cold run starts it in the background)."""
    code = ("from weft.toolchain.build import wait_for_pch; from weft.pipeline import cpu_options; "
            "wait_for_pch(cpu_options(False), 300)")
    env = _child_env(WEFT_CACHE_DIR=str(cache))
    for _ in range(600):
        if any(cache.glob("pch/*/weft.h.gch")):
            return
        subprocess.run([python, "-c", code], env=env, check=False, capture_output=True, timeout=600)
        time.sleep(0.5)


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--programs", nargs="+", default=["one", "ns2d", "perturbation"])
    ap.add_argument("--warp-python", default=WARP_PYTHON)
    ap.add_argument("--no-warp", action="store_true")
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()
    have_warp = not args.no_warp and Path(args.warp_python).exists()
    progs = programs(args.warp_python)
    print(f"machine: {os.cpu_count()} cores; load average before: {load()}; repeat {args.repeat} (minimum shown)")
    out = {}
    root = Path(tempfile.mkdtemp(prefix="weft-bench-compile-"))
    global _PYCACHE
    _PYCACHE = root / "pycache"
    warm_bytecode(sys.executable, "weft")
    if have_warp:
        warm_bytecode(args.warp_python, "warp")
    try:
        for name in args.programs:
            prog = progs[name]
            if not prog.files:
                print(f"{name}: skipped (Warp's example not found)")
                continue
            res = {"weft": measure(prog, "weft", sys.executable, root, args.repeat)}
            if have_warp:
                res["warp"] = measure(prog, "warp", args.warp_python, root, args.repeat)
            out[name] = res
            _print(name, res)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"load average after: {load()}")
    if args.json:
        Path(args.json).write_text(json.dumps({p: {f: {k: vars(r) for k, r in rows.items()} for f, rows in res.items()}
                                               for p, res in out.items()}, indent=1))


def _print(name: str, res: dict) -> None:
    frameworks = list(res)
    head = f"{name:<14} {'case':<16}" + "".join(f" | {f + ' wall':>10} {f + ' cpu':>9}" for f in frameworks)
    print(head)
    print("-" * len(head))
    for case in res["weft"]:
        line = f"{'':<14} {case:<16}"
        for f in frameworks:
            r = res[f].get(case)
            if r is None:
                line += f" | {'n/a':>10} {'':>9}"
            elif r.error:
                line += f" | {'failed':>10} {'':>9}"
            else:
                line += f" | {r.wall:>10.2f} {r.cpu:>9.2f}"
        print(line)
        launch = [f"{f}: {res[f][case].extra['first_launch_ms']:.1f} ms "
                  f"({res[f][case].extra.get('first_launch_cpu_ms', float('nan')):.1f} ms CPU)" for f in frameworks
                  if case in res[f] and "first_launch_ms" in res[f][case].extra]
        if launch and case in ("warm", "copied script", "notebook"):
            print(f"{'':<31}first launch after import: " + ", ".join(launch))
    for f in frameworks:
        for case, r in res[f].items():
            if r.error:
                print(f"  {f} {case} failed: {_short(r.error)}")
    print()


def _short(text: str) -> str:
    return re.sub(r"\s+", " ", text)[:200]


if __name__ == "__main__":
    main()
