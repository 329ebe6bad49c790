"""wp.Volume sampling throughput: trilinear samples with their gradient, and voxel lookups, at random points of a
sparse float volume (64^3 dense block of leaves plus scattered tiles), in millions per second of process CPU time.

    python benchmarks/bench_volume.py                                  # weft
    python benchmarks/bench_volume.py --warp-python /opt/warp119/bin/python   # and NVIDIA Warp in that interpreter

Run with WEFT_NUM_THREADS=1 (Warp's CPU backend is single-threaded) for a per-core comparison.
"""

from __future__ import annotations

import argparse
import importlib
import resource
import subprocess
import sys

import numpy as np


def run(framework: str, n: int, repeat: int) -> None:
    wp = importlib.import_module(framework)
    if framework == "warp":
        wp.config.quiet = True
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(64, 64, 64)).astype(np.float32)
    vol = wp.Volume.load_from_numpy(dense, min_world=(0.0, 0.0, 0.0), voxel_size=1.0, bg_value=0.0)

    @wp.kernel
    def sample(vid: wp.uint64, p: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
        t = wp.tid()
        g = wp.vec3()
        out[t] = wp.volume_sample_grad_f(vid, p[t], wp.Volume.LINEAR, g) + g[0]

    @wp.kernel
    def lookup(vid: wp.uint64, p: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
        t = wp.tid()
        q = p[t]
        out[t] = wp.volume_lookup_f(vid, int(q[0]), int(q[1]), int(q[2]))

    pts = wp.array(rng.uniform(-4.0, 68.0, size=(n, 3)).astype(np.float32), dtype=wp.vec3)
    out = wp.zeros(n, dtype=float)
    for name, kernel in (("trilinear sample + gradient", sample), ("voxel lookup", lookup)):
        wp.launch(kernel, dim=n, inputs=[vol.id, pts, out])
        wp.synchronize()
        best = float("inf")
        for _ in range(repeat):
            r0 = resource.getrusage(resource.RUSAGE_SELF)
            wp.launch(kernel, dim=n, inputs=[vol.id, pts, out])
            wp.synchronize()
            r1 = resource.getrusage(resource.RUSAGE_SELF)
            best = min(best, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime))
        print(f"{framework:5s} {name:28s} {n / max(best, 1e-9) / 1e6:8.1f} M/CPU-s  (checksum {out.numpy().sum():.3f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--framework", default="weft", choices=("weft", "warp"))
    ap.add_argument("--warp-python", default="", help="also run NVIDIA Warp with this Python (warp-lang installed)")
    args = ap.parse_args()
    run(args.framework, args.n, args.repeat)
    if args.warp_python:
        subprocess.run([args.warp_python, __file__, "--framework", "warp", "--n", str(args.n), "--repeat",
                        str(args.repeat)], check=True)


if __name__ == "__main__":
    sys.exit(main())
