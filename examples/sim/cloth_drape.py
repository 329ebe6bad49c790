"""A square cloth draping over a sphere onto the ground, with the VBD or the semi-implicit Euler integrator.

The cloth (``--cells`` x ``--cells`` cells, 1 m, 2 kg, StVK membrane and bending) falls onto a static sphere of radius
0.3 m; contacts come from ``wp.sim.collide`` (sphere) and the ground plane. VBD (the default) needs a particle
colouring (``ModelBuilder.color``); Euler takes 4x the substeps.

    python examples/sim/cloth_drape.py                          # 16 x 16 cells, VBD, out/cloth_drape.*
    python examples/sim/cloth_drape.py --integrator euler --cells 24
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import weft as wp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, run


class Example:
    """Cloth over a sphere: the model, two states and the chosen integrator."""

    def __init__(self, cells: int = 16, integrator: str = "vbd", substeps: int = 10):
        n = cells
        b = wp.sim.ModelBuilder()
        b.add_cloth_grid(pos=wp.vec3(-0.5, 0.9, 0.5), rot=wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -0.5 * np.pi),
                         vel=wp.vec3(0.0, 0.0, 0.0), dim_x=n, dim_y=n, cell_x=1.0 / n, cell_y=1.0 / n,
                         mass=2.0 / (n + 1) ** 2, tri_ke=1.0e3, tri_ka=1.0e3, tri_kd=1.0e-3 if integrator == "vbd"
                         else 1.0, edge_ke=1.0e-3, edge_kd=0.0, particle_radius=0.5 / n)
        b.add_shape_sphere(-1, pos=(0.0, 0.4, 0.0), radius=0.3, ke=1.0e3, kd=1.0, kf=1.0e2, mu=0.5)
        if integrator == "vbd":
            b.color()
        self.model = b.finalize("cpu")
        self.model.soft_contact_ke = 1.0e3
        self.model.soft_contact_kd = 1.0
        self.model.soft_contact_kf = 1.0e2
        self.model.soft_contact_mu = 0.5
        self.model.soft_contact_margin = 1.0 / n
        self.substeps = substeps
        self.dt = 1.0 / (60 * substeps)
        if integrator == "vbd":
            self.integrator = wp.sim.VBDIntegrator(self.model, iterations=5)
        else:
            self.integrator = wp.sim.SemiImplicitIntegrator()
            self.substeps, self.dt = 4 * substeps, 1.0 / (240 * substeps)
        self.state_0 = self.model.state()
        self.state_1 = self.model.state()

    def step(self) -> None:
        """One frame of substeps, colliding against the sphere before each."""
        for _ in range(self.substeps):
            self.state_0.clear_forces()
            wp.sim.collide(self.model, self.state_0)
            self.integrator.simulate(self.model, self.state_0, self.state_1, self.dt)
            self.state_0, self.state_1 = self.state_1, self.state_0


def main(argv=None) -> int:
    p = parser(__doc__, frames=90, out="out/cloth_drape")
    p.add_argument("--cells", type=int, default=16)
    p.add_argument("--integrator", choices=("vbd", "euler"), default="vbd")
    p.add_argument("--substeps", type=int, default=10)
    args = p.parse_args(argv)
    example = Example(args.cells, args.integrator, args.substeps)
    written, ms = run(example, args, "cloth drape", bounds=((-0.8, 0.8), (0.0, 1.0), (-0.8, 0.8)))
    q = example.state_0.particle_q.numpy()
    top = float(np.max(q[:, 1]))
    print(f"{example.model.particle_count} particles, {args.integrator}: {ms:.2f} ms/frame; highest point "
          f"y = {top:.3f} m (the sphere's top is at 0.7 m)")
    print("wrote " + ", ".join(written))
    return 0 if np.all(np.isfinite(q)) else 1


if __name__ == "__main__":
    sys.exit(main())
