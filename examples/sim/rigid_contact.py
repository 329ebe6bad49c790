"""Boxes, spheres and capsules dropped onto the ground and onto each other: maximal-coordinate rigid bodies in the
semi-implicit Euler integrator, rigid contacts (shape-shape and shape-ground, with friction) from ``wp.sim.collide``.

    python examples/sim/rigid_contact.py              # 3 x 3 columns of 3 bodies, out/rigid_contact.*
    python examples/sim/rigid_contact.py --n 5
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import weft as wp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, run
from scenes import build_rigid_pile


class Example:
    """The scene of ``scenes.build_rigid_pile``, stepped at 60 fps."""

    def __init__(self, n: int = 3, substeps: int = 20):
        self.model = build_rigid_pile(wp, n)
        self.integrator = wp.sim.SemiImplicitIntegrator()
        self.substeps = substeps
        self.dt = 1.0 / (60 * substeps)
        self.state_0 = self.model.state()
        self.state_1 = self.model.state()

    def step(self) -> None:
        """One frame: collide and integrate every substep."""
        for _ in range(self.substeps):
            self.state_0.clear_forces()
            wp.sim.collide(self.model, self.state_0)
            self.integrator.simulate(self.model, self.state_0, self.state_1, self.dt)
            self.state_0, self.state_1 = self.state_1, self.state_0


def main(argv=None) -> int:
    p = parser(__doc__, frames=120, out="out/rigid_contact")
    p.add_argument("--n", type=int, default=3, help="columns per side")
    p.add_argument("--substeps", type=int, default=20)
    args = p.parse_args(argv)
    example = Example(args.n, args.substeps)
    half = 0.3 * args.n + 0.3
    written, ms = run(example, args, "rigid contact", bounds=((-half, half), (0.0, 1.6), (-half, half)))
    q = example.state_0.body_q.numpy()
    print(f"{example.model.body_count} bodies: {ms:.2f} ms/frame; {int(example.model.rigid_contact_count.numpy()[0])}"
          f" contacts, lowest body at y = {q[:, 1].min():.3f} m, highest at {q[:, 1].max():.3f} m")
    print("wrote " + ", ".join(written))
    return 0 if np.all(np.isfinite(q)) and q[:, 1].min() > 0.0 else 1


if __name__ == "__main__":
    sys.exit(main())
