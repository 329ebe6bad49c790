"""A quadruped (weft/sim/assets/quadruped.urdf, written for weft) standing, or trotting with an open-loop gait, on the
ground: floating-base articulations in reduced coordinates (``FeatherstoneIntegrator``), position-driven joints
(PD drives), rigid foot-ground contacts with friction (``wp.sim.collide``).

    python examples/sim/quadruped.py                      # 4 robots standing, out/quadruped.*
    python examples/sim/quadruped.py --gait trot --frames 300
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

import weft as wp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, run

ASSET = Path(wp.sim.__file__).parent / "assets" / "quadruped.urdf"
LEGS = ("fl", "fr", "hl", "hr")
# standing pose per leg (hip abduction, hip pitch, knee): the feet under the hips
STAND = {"fl": (0.0, 0.5, -1.0), "fr": (0.0, 0.5, -1.0), "hl": (0.0, -0.5, 1.0), "hr": (0.0, -0.5, 1.0)}


class Example:
    """``robots`` quadrupeds in a row at 100 fps x ``substeps``; ``gait`` is "stand" or "trot"."""

    def __init__(self, robots: int = 4, substeps: int = 10, gait: str = "stand", height: float = 0.42):
        art = wp.sim.ModelBuilder()
        wp.sim.parse_urdf(str(ASSET), art, floating=True, ignore_inertial_definitions=False, stiffness=150.0,
                          damping=4.0, armature=0.01, contact_ke=1.0e4, contact_kd=2.0e2, contact_kf=1.0e2,
                          contact_mu=1.0, limit_ke=1.0e3, limit_kd=1.0e1, enable_self_collisions=False)
        names = art.joint_name
        self.pose = np.zeros(12, np.float32)
        for leg in LEGS:
            for k, part in enumerate(("hip_abduct", "hip_pitch", "knee")):
                self.pose[names.index(f"{leg}_{part}") - 1] = STAND[leg][k]
        b = wp.sim.ModelBuilder()
        for i in range(robots):
            b.add_builder(art, xform=wp.transform((0.0, height, 1.0 * i), wp.quat_identity()))
            b.joint_q[-12:] = self.pose.tolist()
            b.joint_act[-12:] = self.pose.tolist()
        self.model = b.finalize("cpu")
        self.model.ground = True
        self.robots, self.substeps, self.gait = robots, substeps, gait
        self.dt = 1.0 / (100 * substeps)
        self.time = 0.0
        self.names = names
        self.integrator = wp.sim.FeatherstoneIntegrator(self.model)
        self.control = self.model.control()
        self.state_0, self.state_1 = self.model.state(), self.model.state()
        wp.sim.eval_fk(self.model, self.state_0.joint_q, self.state_0.joint_qd, None, self.state_0)

    def targets(self, t: float) -> np.ndarray:
        """Joint targets of one robot at time ``t``: the standing pose, plus for the trot a swing of the hip pitch and
        a knee lift on the diagonal pairs (fl, hr) and (fr, hl) in antiphase (2 Hz)."""
        pose = self.pose.copy()
        if self.gait == "trot":
            for leg in LEGS:
                phase = 2.0 * math.pi * 2.0 * t + (0.0 if leg in ("fl", "hr") else math.pi)
                sign = 1.0 if leg[0] == "f" else -1.0
                pose[self.names.index(f"{leg}_hip_pitch") - 1] += 0.25 * math.sin(phase)
                pose[self.names.index(f"{leg}_knee") - 1] -= sign * 0.4 * max(0.0, math.cos(phase))
        return pose

    def step(self) -> None:
        """One frame: the drive targets, then the substeps (contacts, Featherstone)."""
        self.control.joint_act.assign(np.tile(self.targets(self.time), self.robots))
        for _ in range(self.substeps):
            self.state_0.clear_forces()
            wp.sim.collide(self.model, self.state_0)
            self.integrator.simulate(self.model, self.state_0, self.state_1, self.dt, self.control)
            self.state_0, self.state_1 = self.state_1, self.state_0
        self.time += self.substeps * self.dt

    def base_poses(self) -> np.ndarray:
        """The trunks' poses (one row per robot: position, quaternion xyzw)."""
        q = self.state_0.joint_q.numpy().reshape(self.robots, -1)
        return q[:, :7].copy()


def main(argv=None) -> int:
    p = parser(__doc__, frames=200, out="out/quadruped")
    p.add_argument("--robots", type=int, default=4)
    p.add_argument("--substeps", type=int, default=10)
    p.add_argument("--gait", choices=("stand", "trot"), default="stand")
    args = p.parse_args(argv)
    ex = Example(robots=args.robots, substeps=args.substeps, gait=args.gait)
    start = ex.base_poses()
    bounds = ((-1.0, 1.5), (0.0, 1.0), (-0.5, args.robots - 0.5))
    written, ms = run(ex, args, "quadruped", bounds, fps=100)
    end = ex.base_poses()
    ok = bool(np.isfinite(end).all())
    print(f"{args.robots} robots, {args.gait}: trunk height {start[:, 1].mean():.3f} -> {end[:, 1].mean():.3f} m, "
          f"moved {np.linalg.norm(end[:, [0, 2]] - start[:, [0, 2]], axis=1).mean():.3f} m; {ms:.1f} ms per frame")
    print("wrote " + ", ".join(written))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
