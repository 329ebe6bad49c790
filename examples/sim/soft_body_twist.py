"""A Neo-Hookean soft bar twisted about its long axis: the left end is held, the right end is turned at a constant
rate by kinematic particles, with the semi-implicit Euler or XPBD integrator.

The bar (``--cells`` x 2 x 2 cells of 5 cm, density 1000, k_mu 1e5, k_lambda 1e5) hangs between its two fixed ends; each substep a
kernel sets the right-end particles' velocities to omega x r so they rotate about the bar's axis, and the tetrahedra
carry the twist along the bar.

    python examples/sim/soft_body_twist.py                  # 10 cells, 1 turn per 2 s, out/soft_body_twist.*
    python examples/sim/soft_body_twist.py --integrator xpbd
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import weft as wp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, run

CELL = 0.05


@wp.kernel
def spin_end(ids: wp.array(dtype=wp.int32), x: wp.array(dtype=wp.vec3), centre: wp.vec3, omega: float,
             v: wp.array(dtype=wp.vec3)):
    # rotation about the x axis through ``centre``: v = omega e_x x r
    i = ids[wp.tid()]
    r = x[i] - centre
    v[i] = wp.vec3(0.0, -omega * r[2], omega * r[1])


class Example:
    """The bar, its two states, the integrator and the indices of the turned end."""

    def __init__(self, cells: int = 10, integrator: str = "euler", substeps: int = 32, turns_per_second=0.5):
        b = wp.sim.ModelBuilder()
        b.add_soft_grid(pos=wp.vec3(0.0, 0.5, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=cells,
                        dim_y=2, dim_z=2, cell_x=CELL, cell_y=CELL, cell_z=CELL, density=1000.0, k_mu=1.0e5,
                        k_lambda=1.0e5, k_damp=0.0, fix_left=True, fix_right=True)
        self.model = b.finalize("cpu")
        self.model.ground = False
        q = self.model.particle_q.numpy()
        right = np.nonzero(np.isclose(q[:, 0], cells * CELL))[0]
        self.right = wp.array(right.astype(np.int32), dtype=wp.int32)
        self.centre = wp.vec3(cells * CELL, 0.5 + CELL, CELL)
        self.omega = 2.0 * np.pi * turns_per_second
        # (warp.sim's XPBD tetrahedra take their compliance from soft_body_relaxation, not from k_mu / k_lambda)
        self.integrator = wp.sim.XPBDIntegrator(iterations=4, soft_body_relaxation=1e-5) if integrator == "xpbd" \
            else wp.sim.SemiImplicitIntegrator()
        self.substeps = substeps
        self.dt = 1.0 / (60 * substeps)
        self.state_0 = self.model.state()
        self.state_1 = self.model.state()

    def step(self) -> None:
        """One frame: turn the right end, integrate."""
        for _ in range(self.substeps):
            self.state_0.clear_forces()
            wp.launch(spin_end, dim=len(self.right), inputs=[self.right, self.state_0.particle_q, self.centre,
                                                             self.omega], outputs=[self.state_0.particle_qd])
            self.integrator.simulate(self.model, self.state_0, self.state_1, self.dt)
            self.state_0, self.state_1 = self.state_1, self.state_0

    def twist_angle(self) -> float:
        """The angle (rad) the right end has turned: from a corner particle's position about the axis."""
        q = self.state_0.particle_q.numpy()[self.right.numpy()]
        c = np.array(self.centre)
        r0 = self.model.particle_q.numpy()[self.right.numpy()] - c
        r = q - c
        k = int(np.argmax(np.linalg.norm(r0[:, 1:], axis=1)))
        return float(np.arctan2(r0[k, 1] * r[k, 2] - r0[k, 2] * r[k, 1], r0[k, 1] * r[k, 1] + r0[k, 2] * r[k, 2]))


def main(argv=None) -> int:
    p = parser(__doc__, frames=60, out="out/soft_body_twist")
    p.add_argument("--cells", type=int, default=10)
    p.add_argument("--integrator", choices=("euler", "xpbd"), default="euler")
    p.add_argument("--substeps", type=int, default=32)
    args = p.parse_args(argv)
    example = Example(args.cells, args.integrator, args.substeps)
    L = args.cells * CELL
    written, ms = run(example, args, "soft body twist", bounds=((-0.1, L + 0.1), (0.3, 0.8), (-0.2, 0.3)))
    q = example.state_0.particle_q.numpy()
    print(f"{example.model.particle_count} particles, {example.model.tet_count} tets, {args.integrator}: {ms:.2f} "
          f"ms/frame; right end turned {np.degrees(example.twist_angle()):.1f} deg")
    print("wrote " + ", ".join(written))
    return 0 if np.all(np.isfinite(q)) else 1


if __name__ == "__main__":
    sys.exit(main())
