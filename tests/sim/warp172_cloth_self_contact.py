"""Run warp-lang 1.7.2's ``examples/sim/example_cloth_self_contact.py`` (a 50 x 50 cloth twisted by its two sides,
VBD with self-contact) under weft with ``warp`` aliased to weft, headless, and check it for interpenetration.

The example is loaded from the warp-lang 1.7.2 installation (its file and its ``square_cloth.usd`` asset; nothing is
copied) and stepped with ``stage_path=None``. Every ``--check-every`` frames the cloth is tested in float64 NumPy:
the number of (edge, triangle) pairs sharing no vertex where the edge passes through the triangle (0 means no
interpenetration) and the smallest vertex-triangle distance (against the contact radius, 0.2). The last frame goes to
``<out>.png`` and every ``--render-every``-th frame to ``<out>.gif`` (weft's Matplotlib ``ImageRenderer``).

    python tests/sim/warp172_cloth_self_contact.py --frames 300          # weft, 300 frames (5 s), out/...
    python tests/sim/warp172_cloth_self_contact.py --frames 20 --warp    # also run Warp 1.7.2 (CPU) and compare

Prints one JSON line: frames, CPU seconds per frame (one thread when WEFT_NUM_THREADS=1), the worst crossing count
and the smallest distance over the checked frames, and with ``--warp`` the same for Warp and the largest position
difference at the end.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from cloth_checks import closest_vertex_triangle, edge_triangle_crossings

WARP172 = Path("/opt/warp172/lib/python3.11/site-packages/warp")
EXAMPLE = WARP172 / "examples" / "sim" / "example_cloth_self_contact.py"
ROOT = Path(__file__).resolve().parents[2]


def load_example(alias_weft: bool):
    if alias_weft:
        sys.path.insert(0, str(ROOT))
        sys.path.insert(0, str(ROOT / "tests" / "compat"))
        import warp_shim

        warp_shim.install(str(WARP172 / "tests"))
    spec = importlib.util.spec_from_file_location("example_cloth_self_contact", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def simulate(frames: int, check_every: int, out: str | None, render_every: int, alias_weft: bool,
             keep: list | None = None) -> dict:
    """Step the example ``frames`` frames, checking every ``check_every`` (or, with ``keep``, appending the positions
    there to it for checking later: Warp's environment has no SciPy); returns the numbers."""
    module = load_example(alias_weft)
    import warp as wp

    if not alias_weft:
        wp.config.quiet = True
    with wp.ScopedDevice("cpu"):
        example = module.Example(stage_path=None, num_frames=frames)
        tri = example.model.tri_indices.numpy()
        radius = float(example.model.soft_contact_radius)
        images = None
        if out is not None:
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            images = wp.sim.render.ImageRenderer(example.model, out, camera=(30.0, -50.0))
        worst, closest, cpu = 0, float("inf"), 0.0
        for frame in range(frames):
            t = time.process_time()
            example.step()
            cpu += time.process_time() - t
            last = frame == frames - 1
            if (frame + 1) % check_every == 0 or last:
                q = example.state0.particle_q.numpy()
                if not np.isfinite(q).all():
                    return {"frames": frame + 1, "finite": False}
                if keep is not None:
                    keep.append(q)
                    continue
                worst = max(worst, edge_triangle_crossings(q, tri))
                closest = min(closest, closest_vertex_triangle(q, tri, radius))
            if images is not None and (frame % render_every == 0 or last):
                images.begin_frame(frame / 60.0)
                images.render(example.state0)
                images.end_frame()
        if images is not None:
            images.save()
        return {"frames": frames, "finite": True, "cpu_s_per_frame": cpu / frames, "worst_crossings": worst,
                "closest_vertex_triangle": closest, "contact_radius": radius, "tri": tri,
                "last": example.state0.particle_q.numpy().astype(np.float64)}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=60)
    p.add_argument("--check-every", type=int, default=10)
    p.add_argument("--out", default="out/warp172_cloth_self_contact", help="output stem ('none': no images)")
    p.add_argument("--render-every", type=int, default=5)
    p.add_argument("--warp", action="store_true", help="also run the example under warp-lang 1.7.2 (CPU)")
    p.add_argument("--warp-python", default="/opt/warp172/bin/python")
    p.add_argument("--backend", choices=["weft", "warp"], default="weft", help=argparse.SUPPRESS)
    p.add_argument("--save", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    out = None if args.out == "none" else args.out
    if args.backend == "warp":
        kept: list = []
        result = simulate(args.frames, args.check_every, None, args.render_every, alias_weft=False, keep=kept)
        np.save(args.save, np.array(kept))
        result.pop("tri", None)
        result.pop("last", None)
        print(json.dumps(result))
        return result
    result = simulate(args.frames, args.check_every, out, args.render_every, alias_weft=True)
    if args.warp:
        # Warp's environment has no usd-core: lend it this interpreter's pxr package (the example imports it)
        import tempfile

        import pxr

        with tempfile.TemporaryDirectory() as lend:
            os.symlink(Path(pxr.__file__).resolve().parent, Path(lend) / "pxr")
            save = str(Path(lend) / "positions.npy")
            proc = subprocess.run([args.warp_python, __file__, "--backend", "warp", "--frames", str(args.frames),
                                   "--check-every", str(args.check_every), "--out", "none", "--save", save],
                                  capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": lend})
            warp = json.loads(proc.stdout.strip().splitlines()[-1])
            positions = np.load(save)
        if warp["finite"]:
            tri = np.asarray(result.pop("tri"))
            warp["worst_crossings"] = max(edge_triangle_crossings(q, tri) for q in positions)
            warp["closest_vertex_triangle"] = min(closest_vertex_triangle(q, tri, warp["contact_radius"])
                                                  for q in positions)
            result["max_position_difference"] = float(np.abs(result.pop("last") - positions[-1]).max())
        result["warp"] = warp
    result.pop("tri", None)
    result.pop("last", None)
    print(json.dumps(result))
    return result

if __name__ == "__main__":
    main()
