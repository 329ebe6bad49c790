"""Geometry side by side: BVH build, closest-point queries, ray casts, hash-grid neighbours.

weft (this process) vs NVIDIA Warp on the CPU (``/opt/warp119/bin/python`` or $BENCH_WARP_PYTHON, a subprocess running
this script with --framework warp), Embree through trimesh/embreex (ray casts) and scipy's cKDTree (neighbours).

    python benchmarks/bench_geometry.py [--n 1000000] [--repeat 3] [--threads 2]

Rows: build of a mesh BVH of n triangles, n closest-point queries, n ray casts, hash-grid build + neighbour count of
n points (about 30 neighbours each). Times are wall-clock medians, or with --cpu-time medians of the process CPU time
(all threads: on a loaded machine run with WEFT_NUM_THREADS=1 OMP_NUM_THREADS=1 for a one-thread A/B against Warp's
single-threaded CPU backend; Embree's and cKDTree's worker threads are summed). --threads K adds a second table:
weft's rows again in a subprocess with K threads (WEFT_NUM_THREADS = OMP_NUM_THREADS = K, passive OpenMP waits), next
to the same Warp numbers. --critical-path times that K-thread table by the largest CPU time of any one of weft's
threads per call (an estimate of the wall time on K idle cores, which wall-clock timing cannot give on a loaded
machine; the other rows as with --cpu-time).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _bench_util import load_kernels, median_time, print_table

WARP_PYTHON = os.environ.get("BENCH_WARP_PYTHON", "/opt/warp119/bin/python")


def cpu_median_time(fn, repeat: int) -> float:
    """Median over ``repeat`` calls of the process CPU seconds (user + system, all threads) per call of ``fn``."""
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        samples.append(time.process_time() - t0)
    return sorted(samples)[len(samples) // 2]


def _thread_cpu() -> dict[int, float]:
    """CPU seconds of each thread of this process (Linux: each thread's own CPU clock, by its task id)."""
    out = {}
    for name in os.listdir("/proc/self/task"):
        tid = int(name)
        try:
            out[tid] = time.clock_gettime((~tid << 3) | 6)  # the per-thread scheduler clock of task tid
        except OSError:  # the thread ended
            pass
    return out


def critical_median_time(fn, repeat: int) -> float:
    """Median over ``repeat`` calls of the largest CPU time any one thread spent in a call of ``fn``: the wall time
    the call would take on idle cores (a lower bound: waits and the spread of work are not counted), measurable
    on a loaded machine where wall-clock time is not. One thread: its CPU time."""
    fn()
    samples = []
    for _ in range(repeat):
        before = _thread_cpu()
        fn()
        after = _thread_cpu()
        samples.append(max(after[t] - before.get(t, 0.0) for t in after))
    return sorted(samples)[len(samples) // 2]


def run_framework(wp, tag: str, n: int, repeat: int) -> dict:
    k = load_kernels(HERE / "_geometry_kernels.py", wp, tag)
    closest_point, ray_cast, neighbours = k.define()
    pts, idx = k.sphere_mesh(n)
    queries, origins, dirs, particles, radius = k.workload(n)
    points = wp.array(pts, dtype=wp.vec3, device="cpu")
    indices = wp.array(idx, dtype=wp.int32, device="cpu")
    out = {}
    meshes = []

    def build():
        meshes.append(wp.Mesh(points=points, indices=indices))

    out["build"] = median_time(build, repeat)
    mesh = meshes[-1]
    q = wp.array(queries, dtype=wp.vec3, device="cpu")
    face = wp.zeros(n, dtype=wp.int32, device="cpu")
    out["closest"] = median_time(lambda: wp.launch(closest_point, dim=n, inputs=[mesh.id, q, face], device="cpu"),
                                 repeat) / n
    o = wp.array(origins, dtype=wp.vec3, device="cpu")
    d = wp.array(dirs, dtype=wp.vec3, device="cpu")
    t = wp.zeros(n, dtype=float, device="cpu")
    out["rays"] = median_time(lambda: wp.launch(ray_cast, dim=n, inputs=[mesh.id, o, d, t], device="cpu"), repeat)
    p = wp.array(particles, dtype=wp.vec3, device="cpu")
    count = wp.zeros(n, dtype=wp.int32, device="cpu")
    dim = max(1, round(1.0 / radius))
    grid = wp.HashGrid(dim, dim, dim, device="cpu")

    def neighbour_pass():
        grid.build(p, radius)
        wp.launch(neighbours, dim=n, inputs=[grid.id, p, radius, count], device="cpu")

    out["neighbours"] = median_time(neighbour_pass, repeat)
    out["checks"] = {"faces": int((face.numpy() >= 0).sum()), "hits": int((t.numpy() > 0).sum()),
                     "mean_neighbours": float(count.numpy().mean())}
    return out


def run_others(n: int, repeat: int) -> dict:
    from _geometry_kernels import sphere_mesh, workload

    out: dict = {}
    pts, idx = sphere_mesh(n)
    _, origins, dirs, particles, radius = workload(n)
    try:
        from scipy.spatial import cKDTree

        def kd():
            tree = cKDTree(particles)
            return tree.query_ball_point(particles, radius, workers=-1, return_length=True)

        out["kdtree"] = median_time(kd, repeat)
    except ImportError:
        pass
    try:
        import trimesh

        if trimesh.ray.has_embree:
            mesh = trimesh.Trimesh(pts, idx.reshape(-1, 3), process=False)
            intersector = trimesh.ray.ray_pyembree.RayMeshIntersector(mesh)
            out["embree"] = median_time(lambda: intersector.intersects_first(origins, dirs), repeat)
    except ImportError:
        pass
    return out


def run_weft_threads(n: int, repeat: int, threads: int) -> dict | None:
    """weft's rows in a subprocess with ``threads`` threads (the thread count is fixed when weft starts)."""
    env = dict(os.environ, WEFT_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY="passive")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--framework", "weft-json", "--n", str(n), "--repeat",
           str(repeat)]
    if median_time is cpu_median_time:
        cmd.append("--cpu-time")
    if median_time is critical_median_time:
        cmd.append("--critical-path")
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, env=env)
    if res.returncode != 0:
        print(f"weft run with {threads} threads failed:", res.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def table_rows(n: int, weft_res: dict, w: dict, others: dict) -> list[dict]:
    return [
        {"name": f"mesh BVH build, {n} tris", "unit": "ms", "weft": weft_res["build"] * 1e3,
         "warp": w.get("build", 0) * 1e3 or None, "target": ">= 4x Warp"},
        {"name": f"closest point, {n} queries", "unit": "kq/s", "higher_is_better": True,
         "weft": 1e-3 / weft_res["closest"], "warp": (1e-3 / w["closest"]) if w else None, "target": ">= 4x Warp"},
        {"name": f"ray casts, {n} rays", "unit": "krays/s", "higher_is_better": True,
         "weft": n * 1e-3 / weft_res["rays"], "warp": (n * 1e-3 / w["rays"]) if w else None,
         "embree": (n * 1e-3 / others["embree"]) if "embree" in others else None,
         "target": ">= 4x Warp, >= 0.5x Embree"},
        {"name": f"hash grid build + neighbours, {n} pts", "unit": "ms", "weft": weft_res["neighbours"] * 1e3,
         "warp": w.get("neighbours", 0) * 1e3 or None,
         "kdtree": others["kdtree"] * 1e3 if "kdtree" in others else None, "target": ">= 4x Warp, > cKDTree"},
    ]


def run_warp(n: int, repeat: int) -> dict | None:
    if os.environ.get("BENCH_NO_WARP") or not Path(WARP_PYTHON).exists():
        return None
    cmd = [WARP_PYTHON, str(Path(__file__).resolve()), "--framework", "warp", "--n", str(n), "--repeat", str(repeat)]
    if median_time is cpu_median_time:
        cmd.append("--cpu-time")
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if res.returncode != 0:
        print("warp run failed:", res.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--framework", choices=["weft", "warp", "weft-json"], default="weft")
    ap.add_argument("--threads", type=int, default=0, help="also run weft's rows with this many threads")
    ap.add_argument("--cpu-time", action="store_true", help="time by process CPU seconds instead of wall clock")
    ap.add_argument("--critical-path", action="store_true",
                    help="time by the largest CPU time of any one thread (Linux; with --threads: weft's estimated "
                         "wall time on idle cores); other processes are timed by process CPU seconds")
    args = ap.parse_args()
    global median_time
    if args.critical_path and args.framework == "weft-json":
        median_time = critical_median_time
    elif args.cpu_time or args.critical_path:
        median_time = cpu_median_time
    if args.framework == "warp":
        import warp

        warp.config.quiet = True
        warp.init()
        print(json.dumps(run_framework(warp, "warp", args.n, args.repeat)))
        return
    sys.path.insert(0, str(HERE.parent))
    import weft

    if args.framework == "weft-json":
        print(json.dumps(run_framework(weft, "weft", args.n, args.repeat)))
        return

    t0 = time.perf_counter()
    weft_res = run_framework(weft, "weft", args.n, args.repeat)
    warp_res = run_warp(args.n, args.repeat)
    others = run_others(args.n, args.repeat)
    n = args.n
    w = warp_res or {}
    rows = table_rows(n, weft_res, w, others)
    print_table(f"geometry (CPU, {os.cpu_count()} cores; weft checks {weft_res['checks']})", rows,
                ["weft", "warp", "embree", "kdtree"])
    if args.threads:
        if args.critical_path:
            median_time = critical_median_time  # the subprocess times the largest per-thread CPU time
        res_k = run_weft_threads(n, args.repeat, args.threads)
        if res_k is not None:
            how = " (largest per-thread CPU time)" if args.critical_path else ""
            print_table(f"weft with {args.threads} threads{how} (same Warp / Embree / cKDTree numbers)",
                        table_rows(n, res_k, w, others), ["weft", "warp", "embree", "kdtree"])
    if w and w.get("checks") != weft_res["checks"]:
        print(f"note: Warp's result checks differ: {w.get('checks')}")
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
