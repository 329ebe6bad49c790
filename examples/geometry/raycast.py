"""Headless ray-cast render of a mesh to PNG: one weft kernel casts a camera ray per pixel (mesh_query_ray) and shades
the hit with its face normal and a shadow ray (mesh_query_ray_anyhit).

    python examples/geometry/raycast.py --out out [--width 320 --height 240]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shapes import sphere, torus

import weft as wp


@wp.kernel
def render(mesh: wp.uint64, cam: wp.vec3, forward: wp.vec3, right: wp.vec3, up: wp.vec3, light: wp.vec3,
           width: int, height: int, image: wp.array2d(dtype=wp.vec3), depth: wp.array2d(dtype=float)):
    i, j = wp.tid()
    sx = (2.0 * (float(j) + 0.5) / float(width) - 1.0) * float(width) / float(height)
    sy = 1.0 - 2.0 * (float(i) + 0.5) / float(height)
    d = wp.normalize(forward + sx * 0.6 * right + sy * 0.6 * up)
    hit = wp.mesh_query_ray(mesh, cam, d, 100.0)
    color = wp.vec3(0.08, 0.09, 0.12) + 0.1 * sy * wp.vec3(0.0, 0.1, 0.3)
    depth[i, j] = -1.0
    if hit.result:
        p = cam + hit.t * d
        n = hit.normal
        if wp.dot(n, d) > 0.0:
            n = -n
        diffuse = wp.max(wp.dot(n, light), 0.0)
        if diffuse > 0.0 and wp.mesh_query_ray_anyhit(mesh, p + 1.0e-3 * n, light, 100.0):
            diffuse = 0.0  # in shadow
        base = wp.vec3(0.9, 0.55, 0.25)
        if hit.face % 2 == 0:
            base = wp.vec3(0.85, 0.5, 0.22)
        color = base * (0.15 + 0.85 * diffuse)
        depth[i, j] = hit.t
    image[i, j] = color


def scene():
    tp, tt = torus(96, 48)
    sp, st = sphere(32, 48, radius=0.35)
    sp = sp + np.array([0.0, 0.0, 0.15], np.float32)
    ground = np.array([[-3, -3, -0.4], [3, -3, -0.4], [3, 3, -0.4], [-3, 3, -0.4]], np.float32)
    gt = np.array([[0, 1, 2], [0, 2, 3]], np.int32)
    pts = np.vstack([tp, sp, ground])
    tris = np.vstack([tt, st + len(tp), gt + len(tp) + len(sp)])
    return pts, tris


def run(width: int = 320, height: int = 240, out: str | None = None) -> dict:
    pts, tris = scene()
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32))
    cam = np.array([0.0, -2.4, 1.2], np.float32)
    forward = -cam / np.linalg.norm(cam)
    right = np.cross(forward, [0, 0, 1])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    light = np.array([0.4, -0.3, 0.85])
    light /= np.linalg.norm(light)
    image = wp.zeros((height, width), dtype=wp.vec3)
    depth = wp.zeros((height, width), dtype=float)
    wp.launch(render, dim=(height, width), inputs=[mesh.id, wp.vec3(*cam), wp.vec3(*forward), wp.vec3(*right),
                                                   wp.vec3(*up), wp.vec3(*light), width, height, image, depth])
    img = np.clip(image.numpy(), 0.0, 1.0)
    if out:
        import imageio.v2 as imageio

        Path(out).mkdir(parents=True, exist_ok=True)
        imageio.imwrite(Path(out) / "raycast.png", (img * 255).astype(np.uint8))
    return {"image": img, "depth": depth.numpy(), "num_tris": len(tris)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--out", default="out")
    args = ap.parse_args()
    r = run(args.width, args.height, args.out)
    print(f"rendered {args.width}x{args.height} ({r['num_tris']} triangles), "
          f"{(r['depth'] > 0).mean():.1%} of the pixels hit the mesh -> {args.out}/raycast.png")


if __name__ == "__main__":
    main()
