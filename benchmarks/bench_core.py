"""weft's core CPU benchmarks side by side with NumPy, PyTorch (CPU) and NVIDIA Warp (CPU, when installed).

One run prints one table:

1. cold compile of a ~60-line kernel in a fresh process with an empty kernel cache, and warm load of the same kernel
   in a fresh process with the cache filled (both measured in subprocesses, first launch wall time);
2. launch overhead (microseconds per launch, median): an empty kernel at dim=1, a kernel with 8 array arguments at
   dim=1, and the same through a prepared ``Launch`` object (``wp.launch(..., record_cmd=True).launch()``);
3. saxpy on 2^24 float32 (GB/s counting 12 bytes per element) against ``torch.Tensor.add_(x, alpha=a)`` and NumPy;
4. a 5-point stencil on a 4096x4096 float32 grid (ms) against NumPy slicing, torch slicing and Warp;
5. the same stencil guarded (``if i > 0 and j > 0 and i < n - 1 and j < m - 1:``) over a full-grid launch, in CPU
   time on one thread, with the interior launch's time in the row name (the guard is split off the grid loop).

Usage: ``python benchmarks/bench_core.py [--quick] [--no-warp]``. No timing is asserted anywhere; the last column
lists the targets of issue 2 for a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_util import HERE, interleaved_times, load_kernels, median_time, optional_torch, optional_warp, print_table

COLUMNS = ["weft", "numpy", "torch", "warp"]


# ----------------------------------------------------------------------------------------------------------- compile
def _child_compile(framework: str, cache_dir: str) -> None:
    """Runs in a fresh process: import, define the kernel, time the first launch (compile or cache load)."""
    t_import = time.perf_counter()
    if framework == "weft":
        os.environ["WEFT_CACHE_DIR"] = cache_dir
        import weft as wp
    else:
        wp = optional_warp(cache_dir)
    t_import = time.perf_counter() - t_import
    mod = load_kernels(HERE / "_compile_kernel.py", wp, framework)
    n = 64
    rng = np.random.default_rng(0)
    x = wp.array(rng.standard_normal((n, 3)).astype(np.float32), dtype=wp.vec3)
    v = wp.zeros(n, dtype=wp.vec3)
    nb = wp.array(rng.integers(-1, n, (n, 8)).astype(np.int32), dtype=int)
    mass = wp.array(np.ones(n, np.float32), dtype=float)
    x_out, v_out = wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3)
    energy = wp.zeros(1, dtype=float)
    t0 = time.perf_counter()
    wp.launch(mod.particle_step, dim=n, inputs=[x, v, nb, mass, wp.vec3(0.0, -9.8, 0.0), 1.0, 10.0, 0.1, 0.01],
              outputs=[x_out, v_out, energy], device="cpu")
    wp.synchronize()
    first = time.perf_counter() - t0
    print(json.dumps({"first_launch_s": first, "import_s": t_import, "energy": float(energy.numpy()[0])}))


def _run_child(framework: str, cache_dir: str) -> dict:
    cmd = [sys.executable, __file__, "--child-compile", framework, cache_dir]
    env = dict(os.environ)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"compile child ({framework}) failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _wait_for_pch(cache_dir: str, timeout: float = 120.0) -> bool:
    """weft builds its precompiled header in a detached process after the first compile in a cache."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if list(Path(cache_dir).glob("pch/*/weft.h.gch")):
            return True
        time.sleep(0.1)
    return False


def bench_compile(frameworks: list[str], repeat: int) -> list[dict]:
    """Medians over ``repeat`` fresh cache dirs: cold first launch, cold with weft's PCH built, warm first launch."""
    cold: dict[str, list[float]] = {f: [] for f in frameworks}
    cold_pch: dict[str, list[float]] = {"weft": []}
    warm: dict[str, list[float]] = {f: [] for f in frameworks}
    for _ in range(repeat):
        for f in frameworks:
            with tempfile.TemporaryDirectory(prefix=f"bench-{f}-cache-") as d:
                os.chmod(d, 0o700)
                cold[f].append(_run_child(f, d)["first_launch_s"])
                for _ in range(2):
                    warm[f].append(_run_child(f, d)["first_launch_s"])
                if f == "weft" and _wait_for_pch(d):
                    shutil.rmtree(Path(d) / "cpu")  # the kernels go, the precompiled header stays
                    cold_pch[f].append(_run_child(f, d)["first_launch_s"])

    def med(samples: dict[str, list[float]], scale: float = 1.0) -> dict[str, float]:
        return {f: float(np.median(v)) * scale for f, v in samples.items() if v}
    return [
        {"name": "cold compile, ~60-line kernel", "unit": "s", **med(cold), "target": "<= 0.4 s"},
        {"name": "cold compile, PCH ready", "unit": "s", **med(cold_pch), "target": "<= 0.4 s"},
        {"name": "warm load (fresh process)", "unit": "ms", **med(warm, 1e3), "target": "<= 2 ms"},
    ]


# ----------------------------------------------------------------------------------------------------------- launch
def bench_launch(wp, kw, warp, kwarp, torch, quick: bool) -> list[dict]:
    # many short batches: the median ignores the batches another process interrupted
    number, repeat = (500, 41) if quick else (1000, 201)
    rows = []

    def one(framework, k, mod, arrays):
        if framework is None:
            return None, None, None
        empty = median_time(lambda: framework.launch(mod.empty_kernel, dim=1, inputs=[], device="cpu"),
                            repeat, number)
        eight = median_time(lambda: framework.launch(mod.eight_arrays, dim=1, inputs=arrays, device="cpu"),
                            repeat, number)
        cmd = framework.launch(mod.eight_arrays, dim=1, inputs=arrays, device="cpu", record_cmd=True)
        rec = median_time(cmd.launch, repeat, number)
        return empty * 1e6, eight * 1e6, rec * 1e6

    w_arrays = [wp.zeros(16, dtype=float) for _ in range(8)]
    we, w8, wl = one(wp, None, kw, w_arrays)
    xe = x8 = xl = None
    if warp is not None:
        x_arrays = [warp.zeros(16, dtype=float, device="cpu") for _ in range(8)]
        xe, x8, xl = one(warp, None, kwarp, x_arrays)
    # a 1-element op as the nearest NumPy / torch equivalent of a launch
    na = [np.zeros(1, np.float32) for _ in range(3)]
    np_op = median_time(lambda: np.add(na[0], na[1], out=na[2]), repeat, number) * 1e6
    t_op = None
    if torch is not None:
        ta = [torch.zeros(1) for _ in range(3)]
        t_op = median_time(lambda: torch.add(ta[0], ta[1], out=ta[2]), repeat, number) * 1e6
    rows.append({"name": "launch: empty kernel, dim=1", "unit": "us", "weft": we, "numpy": np_op, "torch": t_op,
                 "warp": xe, "target": ""})
    rows.append({"name": "launch: 8 array args, dim=1", "unit": "us", "weft": w8, "warp": x8, "target": "<= 2 us"})
    rows.append({"name": "launch: Launch object (8 arrays)", "unit": "us", "weft": wl, "warp": xl,
                 "target": "<= 0.7 us"})
    return rows


# ----------------------------------------------------------------------------------------------------------- saxpy
def bench_saxpy(wp, kw, warp, kwarp, torch, quick: bool) -> dict:
    n = 1 << 24
    a = 2.0
    rounds = 7 if quick else 25
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal(n).astype(np.float32)
    y_np = rng.standard_normal(n).astype(np.float32)
    nbytes = 12 * n
    fns = {}

    x, y = wp.array(x_np, dtype=float), wp.array(y_np, dtype=float)
    cmd = wp.launch(kw.saxpy, dim=n, inputs=[a, x, y], record_cmd=True)
    cmd.launch()
    assert np.allclose(y.numpy(), y_np + a * x_np, rtol=1e-5, atol=1e-5), "weft saxpy is wrong"
    fns["weft"] = cmd.launch

    xn, yn, tmp = x_np.copy(), y_np.copy(), np.empty_like(x_np)

    def np_saxpy():
        np.multiply(xn, a, out=tmp)
        np.add(yn, tmp, out=yn)
    fns["numpy"] = np_saxpy

    if torch is not None:
        xt, yt = torch.from_numpy(x_np.copy()), torch.from_numpy(y_np.copy())
        fns["torch"] = lambda: yt.add_(xt, alpha=a)
    if warp is not None:
        xw = warp.array(x_np, dtype=float, device="cpu")
        yw = warp.array(y_np, dtype=float, device="cpu")
        fns["warp"] = lambda: warp.launch(kwarp.saxpy, dim=n, inputs=[a, xw, yw], device="cpu")
    times = interleaved_times(fns, rounds)
    row = {"name": "saxpy 2^24 f32 (12 B/elem)", "unit": "GB/s", "higher_is_better": True, "target": ">= 0.9x torch"}
    row.update({name: nbytes / t / 1e9 for name, t in times.items()})
    return row


# ----------------------------------------------------------------------------------------------------------- stencil
def bench_stencil(wp, kw, warp, kwarp, torch, quick: bool) -> dict:
    n = 4096
    k = 0.1
    rounds = 5 if quick else 15
    u_np = np.random.default_rng(2).standard_normal((n, n)).astype(np.float32)
    ref = u_np.copy()
    c = u_np[1:-1, 1:-1]
    ref[1:-1, 1:-1] = c + k * (u_np[:-2, 1:-1] + u_np[2:, 1:-1] + u_np[1:-1, :-2] + u_np[1:-1, 2:] - 4.0 * c)
    fns = {}

    u, out = wp.array(u_np, dtype=float), wp.array(u_np, dtype=float)
    cmd = wp.launch(kw.stencil5, dim=(n - 2, n - 2), inputs=[k, u, out], record_cmd=True)
    cmd.launch()
    assert np.allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5), "weft stencil is wrong"
    fns["weft"] = cmd.launch

    out_np = u_np.copy()

    def np_stencil():
        c = u_np[1:-1, 1:-1]
        out_np[1:-1, 1:-1] = c + k * (u_np[:-2, 1:-1] + u_np[2:, 1:-1] + u_np[1:-1, :-2] + u_np[1:-1, 2:] - 4.0 * c)
    fns["numpy"] = np_stencil

    if torch is not None:
        ut = torch.from_numpy(u_np)
        ot = ut.clone()

        def torch_stencil():
            c = ut[1:-1, 1:-1]
            ot[1:-1, 1:-1] = c + k * (ut[:-2, 1:-1] + ut[2:, 1:-1] + ut[1:-1, :-2] + ut[1:-1, 2:] - 4.0 * c)
        fns["torch"] = torch_stencil
    if warp is not None:
        uw = warp.array(u_np, dtype=float, device="cpu")
        ow = warp.array(u_np, dtype=float, device="cpu")
        fns["warp"] = lambda: warp.launch(kwarp.stencil5, dim=(n - 2, n - 2), inputs=[k, uw, ow], device="cpu")
    times = interleaved_times(fns, rounds)
    row = {"name": "5-point stencil 4096^2 f32", "unit": "ms", "target": ">= 8x vs warp"}
    row.update({name: t * 1e3 for name, t in times.items()})
    return row


def bench_guarded_stencil(wp, kw, warp, kwarp, quick: bool) -> dict:
    """The stencil written with a guard over a full-grid launch (the usual Warp form) against the interior launch,
    in CPU time on one thread (WEFT_NUM_THREADS=1 and process time: the machine may be loaded)."""
    n = 4096
    k = 0.1
    rounds = 5 if quick else 15
    u_np = np.random.default_rng(2).standard_normal((n, n)).astype(np.float32)
    u, out_g, out_i = (wp.array(u_np, dtype=float) for _ in range(3))
    old = wp.config.num_threads
    wp.config.num_threads = 1  # what WEFT_NUM_THREADS=1 sets
    guarded = wp.launch(kw.stencil5_guarded, dim=(n, n), inputs=[k, n, n, u, out_g], record_cmd=True)
    interior = wp.launch(kw.stencil5, dim=(n - 2, n - 2), inputs=[k, u, out_i], record_cmd=True)
    try:
        guarded.launch()
        interior.launch()
    except BaseException:
        wp.config.num_threads = old
        raise
    assert np.array_equal(out_g.numpy(), out_i.numpy()), "weft guarded stencil is wrong"

    def cpu_time(fn):
        best = float("inf")
        for _ in range(rounds):
            t0 = time.process_time()
            fn()
            best = min(best, time.process_time() - t0)
        return best

    try:
        t_guarded, t_interior = cpu_time(guarded.launch), cpu_time(interior.launch)
    finally:
        wp.config.num_threads = old
    row = {"name": f"guarded stencil 4096^2, 1 thread CPU ms (interior launch {t_interior * 1e3:.1f} ms)",
           "unit": "ms", "target": "<= 1.3x interior", "weft": t_guarded * 1e3}
    if warp is not None:
        uw = warp.array(u_np, dtype=float, device="cpu")
        ow = warp.array(u_np, dtype=float, device="cpu")
        row["warp"] = cpu_time(lambda: warp.launch(kwarp.stencil5_guarded, dim=(n, n), inputs=[k, n, n, uw, ow],
                                                   device="cpu")) * 1e3
    return row


# ----------------------------------------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (about a minute)")
    parser.add_argument("--no-warp", action="store_true", help="skip NVIDIA Warp even if it is installed")
    parser.add_argument("--skip-compile", action="store_true", help="skip the compile-time subprocesses")
    parser.add_argument("--child-compile", nargs=2, metavar=("FRAMEWORK", "CACHE_DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_compile:
        _child_compile(*args.child_compile)
        return
    if args.no_warp:
        os.environ["BENCH_NO_WARP"] = "1"

    import weft as wp

    torch = optional_torch()
    warp_cache = tempfile.mkdtemp(prefix="bench-warp-cache-")
    warp = optional_warp(warp_cache)
    kw = load_kernels(HERE / "_core_kernels.py", wp, "weft")
    kwarp = load_kernels(HERE / "_core_kernels.py", warp, "warp") if warp is not None else None

    print(f"weft {wp.__version__} | numpy {np.__version__} | torch {torch.__version__ if torch else '-'} "
          f"({torch.get_num_threads() if torch else 0} threads) | warp {warp.__version__ if warp else '-'} | "
          f"{os.cpu_count()} CPU cores")
    rows = []
    if not args.skip_compile:
        frameworks = ["weft"] + (["warp"] if warp is not None else [])
        rows += bench_compile(frameworks, repeat=1 if args.quick else 3)
    rows += bench_launch(wp, kw, warp, kwarp, torch, args.quick)
    rows.append(bench_saxpy(wp, kw, warp, kwarp, torch, args.quick))
    rows.append(bench_stencil(wp, kw, warp, kwarp, torch, args.quick))
    rows.append(bench_guarded_stencil(wp, kw, warp, kwarp, args.quick))
    columns = [c for c in COLUMNS if any(r.get(c) is not None for r in rows)]
    print_table("weft core benchmarks (CPU); 'weft vs X' > 1 means weft is faster", rows, columns)


if __name__ == "__main__":
    main()
