"""A cart-pole from a URDF (weft/sim/assets/cartpole.urdf) in reduced coordinates (``FeatherstoneIntegrator``),
balanced upright by an LQR controller on the cart's force, designed on the linearised equations of motion; or,
with ``--passive``, left to fall.

    python examples/sim/cartpole.py                # balance from a 0.2 rad tilt, out/cartpole.*
    python examples/sim/cartpole.py --passive
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import weft as wp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, run

ASSET = Path(wp.sim.__file__).parent / "assets" / "cartpole.urdf"
G = 9.80665


def lqr_gain(cart_mass: float, pole_mass: float, com: float, inertia: float) -> np.ndarray:
    """State feedback u = -K (x, theta, xd, thetad) for the cart-pole linearised upright (theta counter-clockwise
    about +z, 0 = up): continuous-time LQR (SciPy's Riccati solver)."""
    from scipy.linalg import solve_continuous_are

    M, m, L, J = cart_mass, pole_mass, com, inertia + pole_mass * com * com
    # [M + m, -m L; -m L, J] [xdd; thdd] = [u; m g L th]  (the pole's centre moves by -L th along x)
    mass = np.array([[M + m, -m * L], [-m * L, J]])
    inv = np.linalg.inv(mass)
    A = np.zeros((4, 4))
    A[0, 2] = A[1, 3] = 1.0
    A[2:, 1] = inv @ np.array([0.0, m * G * L])
    B = np.zeros((4, 1))
    B[2:, 0] = inv @ np.array([1.0, 0.0])
    Q, R = np.diag([10.0, 100.0, 1.0, 1.0]), np.array([[0.1]])
    P = solve_continuous_are(A, B, Q, R)
    return (np.linalg.solve(R, B.T @ P)).reshape(-1)


class Example:
    """The cart-pole at 60 fps; the controller sets the slider's force once per frame."""

    def __init__(self, tilt: float = 0.2, substeps: int = 10, passive: bool = False):
        b = wp.sim.ModelBuilder()
        wp.sim.parse_urdf(str(ASSET), b, ignore_inertial_definitions=False, stiffness=0.0, damping=0.0,
                          armature=0.0, limit_ke=1e4, limit_kd=100.0)
        b.joint_q[1] = tilt
        self.model = b.finalize("cpu")
        self.model.ground = False
        self.integrator = wp.sim.FeatherstoneIntegrator(self.model)
        self.control = self.model.control()
        self.substeps = substeps
        self.dt = 1.0 / (60 * substeps)
        self.passive = passive
        masses = self.model.body_mass.numpy()
        inertia = self.model.body_inertia.numpy()
        self.gain = lqr_gain(float(masses[1]), float(masses[2]), 0.5, float(inertia[2][2, 2]))
        self.state_0 = self.model.state()
        self.state_1 = self.model.state()
        wp.sim.eval_fk(self.model, self.state_0.joint_q, self.state_0.joint_qd, None, self.state_0)

    def step(self) -> None:
        """One frame: the controller's force, then the substeps."""
        q, qd = self.state_0.joint_q.numpy(), self.state_0.joint_qd.numpy()
        force = 0.0 if self.passive else float(-self.gain @ np.array([q[0], q[1], qd[0], qd[1]]))
        self.control.joint_act.assign(np.array([np.clip(force, -100.0, 100.0), 0.0], np.float32))
        for _ in range(self.substeps):
            self.state_0.clear_forces()
            self.integrator.simulate(self.model, self.state_0, self.state_1, self.dt, self.control)
            self.state_0, self.state_1 = self.state_1, self.state_0


def main(argv=None) -> int:
    p = parser(__doc__, frames=180, out="out/cartpole")
    p.add_argument("--tilt", type=float, default=0.2, help="initial pole angle (rad)")
    p.add_argument("--substeps", type=int, default=10)
    p.add_argument("--passive", action="store_true", help="no controller")
    args = p.parse_args(argv)
    example = Example(args.tilt, args.substeps, args.passive)
    written, ms = run(example, args, "cart-pole", bounds=((-2.0, 2.0), (-1.2, 1.4), (-1.0, 1.0)))
    q = example.state_0.joint_q.numpy()
    print(f"cart-pole ({'passive' if args.passive else 'LQR'}): {ms:.2f} ms/frame; cart at {q[0]:.3f} m, pole at "
          f"{q[1]:.3f} rad")
    print("wrote " + ", ".join(written))
    return 0 if np.all(np.isfinite(q)) else 1


if __name__ == "__main__":
    sys.exit(main())
