"""Granular particles poured into an open box: particle-particle contacts through ``wp.HashGrid``, the box walls as
static box shapes (soft contacts from ``wp.sim.collide``) and the ground, with the semi-implicit Euler or XPBD
integrator.

    python examples/sim/granular_box.py                     # 8^3 particles, Euler, out/granular_box.*
    python examples/sim/granular_box.py --n 12 --integrator xpbd
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import weft as wp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, run

RADIUS = 0.025
HALF = 0.25  # the box's inner half width


class Example:
    """Particles above a box of four static walls; the hash grid is rebuilt every substep."""

    def __init__(self, n: int = 8, integrator: str = "euler", substeps: int = 20):
        b = wp.sim.ModelBuilder()
        b.add_particle_grid(pos=wp.vec3(-n * RADIUS, 0.15, -n * RADIUS), rot=wp.quat_identity(),
                            vel=wp.vec3(0.0, 0.0, 0.0), dim_x=n, dim_y=n, dim_z=n, cell_x=2.1 * RADIUS,
                            cell_y=2.1 * RADIUS, cell_z=2.1 * RADIUS, mass=0.01, jitter=0.1 * RADIUS,
                            radius_mean=RADIUS)
        wall = {"ke": 1.0e3, "kd": 1.0, "kf": 10.0, "mu": 0.3}
        for sx, sz in ((1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)):
            pos = (sx * (HALF + 0.02), 0.3, sz * (HALF + 0.02))
            hx, hz = (0.02, HALF + 0.04) if sx else (HALF + 0.04, 0.02)
            b.add_shape_box(-1, pos=pos, hx=hx, hy=0.3, hz=hz, **wall)
        self.model = b.finalize("cpu")
        m = self.model
        m.particle_ke, m.particle_kd, m.particle_kf, m.particle_mu = 1.0e3, 1.0, 10.0, 0.3
        m.soft_contact_ke, m.soft_contact_kd, m.soft_contact_kf, m.soft_contact_mu = 1.0e3, 1.0, 10.0, 0.3
        m.soft_contact_margin = 2.0 * RADIUS
        self.grid = m.particle_grid
        self.integrator = wp.sim.XPBDIntegrator(iterations=4) if integrator == "xpbd" else \
            wp.sim.SemiImplicitIntegrator()
        self.substeps = substeps
        self.dt = 1.0 / (60 * substeps)
        self.state_0 = m.state()
        self.state_1 = m.state()

    def step(self) -> None:
        """One frame: rebuild the grid, collide, integrate, each substep."""
        for _ in range(self.substeps):
            self.state_0.clear_forces()
            self.grid.build(self.state_0.particle_q, 2.0 * self.model.particle_max_radius)
            wp.sim.collide(self.model, self.state_0)
            self.integrator.simulate(self.model, self.state_0, self.state_1, self.dt)
            self.state_0, self.state_1 = self.state_1, self.state_0


def main(argv=None) -> int:
    p = parser(__doc__, frames=90, out="out/granular_box")
    p.add_argument("--n", type=int, default=8, help="particles per side")
    p.add_argument("--integrator", choices=("euler", "xpbd"), default="euler")
    p.add_argument("--substeps", type=int, default=20)
    args = p.parse_args(argv)
    example = Example(args.n, args.integrator, args.substeps)
    written, ms = run(example, args, "granular box", bounds=((-0.35, 0.35), (0.0, 0.65), (-0.35, 0.35)))
    q = example.state_0.particle_q.numpy()
    inside = np.all(np.abs(q[:, [0, 2]]) < HALF + RADIUS, axis=1)
    print(f"{example.model.particle_count} particles, {args.integrator}: {ms:.2f} ms/frame; "
          f"{inside.sum()} inside the box, highest at y = {q[:, 1].max():.3f} m")
    print("wrote " + ", ".join(written))
    return 0 if np.all(np.isfinite(q)) else 1


if __name__ == "__main__":
    sys.exit(main())
