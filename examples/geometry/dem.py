"""DEM granular flow with the hash grid (Warp's example_dem style): particles poured into a box collide through
spring-dashpot contacts found by wp.hash_grid_query; frames are written as PNGs.

    python examples/geometry/dem.py --out out [--particles 4096 --frames 60]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))
import weft as wp


@wp.func
def contact_force(n: wp.vec3, v: wp.vec3, c: float, k_n: float, k_d: float, k_f: float, k_mu: float):
    """Normal spring-dashpot plus Coulomb-limited tangential damping for penetration c < 0 along normal n."""
    vn = wp.dot(n, v)
    vt = v - n * vn
    fn = n * c * k_n
    fd = n * wp.min(vn, 0.0) * k_d
    ft = wp.vec3(0.0)
    vs = wp.length(vt)
    if vs > 0.0:
        ft = vt / vs * wp.min(k_f * vs, k_mu * wp.length(fn))
    return -fn - fd - ft


@wp.kernel
def forces(grid: wp.uint64, x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3),
           radius: float, k_n: float, k_d: float, k_f: float, k_mu: float, box: float,
           contacts: wp.array(dtype=wp.int32)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    xi = x[i]
    vi = v[i]
    total = wp.vec3(0.0)
    n_contacts = int(0)  # noqa: UP018, RUF046 - an int32 kernel variable
    for j in wp.hash_grid_query(grid, xi, radius * 2.0):
        if j != i:
            d = xi - x[j]
            dist = wp.length(d)
            c = dist - 2.0 * radius
            if c < 0.0 and dist > 0.0:
                n = d / dist
                total = total + contact_force(n, vi - v[j], c, k_n, k_d, k_f, k_mu)
                n_contacts += 1
    # walls and floor of the box [-box, box] x [-box, box] x [0, inf)
    for axis in range(3):
        e = wp.vec3(0.0)
        e[axis] = 1.0
        lo = xi[axis] - radius + wp.where(axis == 2, 0.0, box)
        if lo < 0.0:  # the normal points from the wall to the particle
            total = total + contact_force(e, vi, lo, k_n, k_d, k_f, k_mu)
        if axis < 2:
            hi = box - xi[axis] - radius
            if hi < 0.0:
                total = total + contact_force(-e, vi, hi, k_n, k_d, k_f, k_mu)
    f[i] = total
    contacts[i] = n_contacts


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3), gravity: wp.vec3,
              dt: float, inv_mass: float):
    i = wp.tid()
    v_new = v[i] + (f[i] * inv_mass + gravity) * dt
    v[i] = v_new
    x[i] = x[i] + v_new * dt


class DEM:
    """Particles of one radius in a box, advanced with symplectic Euler substeps."""

    def __init__(self, n: int = 4096, radius: float = 0.02, seed: int = 0):
        rng = np.random.default_rng(seed)
        side = int(np.ceil(n ** (1 / 3)))
        g = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)[:n]
        pos = (g - side / 2) * (2.2 * radius) + np.array([0.0, 0.0, side * 1.2 * radius + 0.3])
        pos += rng.normal(scale=0.1 * radius, size=pos.shape)
        self.radius = radius
        self.box = side * 1.4 * radius
        self.x = wp.array(pos.astype(np.float32), dtype=wp.vec3)
        self.v = wp.zeros(n, dtype=wp.vec3)
        self.f = wp.zeros(n, dtype=wp.vec3)
        self.contacts = wp.zeros(n, dtype=wp.int32)
        dim = max(8, int(2 * self.box / (2 * radius)))
        self.grid = wp.HashGrid(dim, dim, dim)
        self.params = {"k_n": 1.0e4, "k_d": 200.0, "k_f": 50.0, "k_mu": 0.5}
        self.dt = 1.0 / 60.0 / 40
        self.mass = 4.0 / 3.0 * np.pi * radius**3 * 1000.0

    def step(self, substeps: int = 40) -> None:
        n = len(self.x)
        for _ in range(substeps):
            self.grid.build(self.x, 2.0 * self.radius)
            p = self.params
            wp.launch(forces, dim=n, inputs=[self.grid.id, self.x, self.v, self.f, self.radius, p["k_n"] * self.radius,
                                             p["k_d"] * self.mass, p["k_f"] * self.mass, p["k_mu"], self.box,
                                             self.contacts])
            wp.launch(integrate, dim=n, inputs=[self.x, self.v, self.f, wp.vec3(0.0, 0.0, -9.8), self.dt,
                                                1.0 / self.mass])


def render(x: np.ndarray, box: float, size: int = 256) -> np.ndarray:
    """A side view (x-z) of the particles, shaded by depth (y)."""
    img = np.full((size, size, 3), 20, np.uint8)
    scale = size / (2.6 * box)
    u = ((x[:, 0] + 1.3 * box) * scale).astype(int)
    w = (size - 1 - (x[:, 2] + 0.1 * box) * scale).astype(int)
    shade = np.clip(0.5 + 0.5 * x[:, 1] / box, 0, 1)
    order = np.argsort(-x[:, 1])
    for k in order:
        if 0 <= u[k] < size - 1 and 0 <= w[k] < size - 1:
            c = (np.array([240, 170, 60]) * (0.4 + 0.6 * shade[k])).astype(np.uint8)
            img[w[k]:w[k] + 2, u[k]:u[k] + 2] = c
    return img


def run(particles: int = 4096, frames: int = 60, out: str | None = None) -> DEM:
    sim = DEM(particles)
    for frame in range(frames):
        sim.step()
        if out and (frame % 10 == 0 or frame == frames - 1):
            import imageio.v2 as imageio

            Path(out).mkdir(parents=True, exist_ok=True)
            imageio.imwrite(Path(out) / f"dem_{frame:04d}.png", render(sim.x.numpy(), sim.box))
    return sim


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--particles", type=int, default=4096)
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--out", default="out")
    args = ap.parse_args()
    sim = run(args.particles, args.frames, args.out)
    x = sim.x.numpy()
    print(f"{args.particles} particles after {args.frames} frames: mean height {x[:, 2].mean():.3f}, "
          f"mean contacts {sim.contacts.numpy().mean():.2f} -> {args.out}/dem_*.png")


if __name__ == "__main__":
    main()
