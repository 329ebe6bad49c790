"""Differentiable rigid-body trajectory optimisation through contacts: throw a ball so that it bounces off the
ground and ends on a target.

A rigid sphere on a free joint is simulated in reduced coordinates with the ``FeatherstoneIntegrator`` and rigid
ground contacts (``wp.sim.collide``: penalty normal force and Coulomb friction). The loss is the squared distance
between the ball's centre after the rollout (one bounce) and a target point; ``wp.Tape`` differentiates the rollout
(contacts, the mass-matrix solve, the joint integration) with respect to the launch velocity, and Adam
(``weft.optim``) updates it. ``--check`` compares the Tape gradient with central finite differences first.
Headless: writes the loss curve and the final throw (PNG + GIF).

    python examples/sim/ball_bounce.py                        # 40 iterations
    python examples/sim/ball_bounce.py --iters 3 --check      # Tape gradient vs central differences first
    python examples/sim/ball_bounce.py --steps 120 --height 0.25 --iters 2 --quiet   # tiny (the smoke test)
"""

import argparse
import sys
from pathlib import Path

import numpy as np

import weft as wp
from weft import sim

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import render_rollout, save_loss_plot


@wp.kernel
def launch_velocity(v0: wp.array(dtype=wp.vec3), joint_qd: wp.array(dtype=float)):
    # a free joint's velocity: (angular, linear) in the world frame
    for i in range(3):
        joint_qd[3 + i] = v0[0][i]


@wp.kernel
def squared_distance(body_q: wp.array(dtype=wp.transform), target: wp.vec3, loss: wp.array(dtype=float)):
    d = wp.transform_get_translation(body_q[0]) - target
    loss[0] = wp.dot(d, d)


class Bounce:
    """The model, the launch velocity parameter and a differentiable rollout."""

    def __init__(self, steps: int = 300, dt: float = 2e-3, target=(1.0, 0.45, 0.0), v0=(1.0, 1.0, 0.2),
                 height: float = 0.6):
        b = sim.ModelBuilder()
        ball = b.add_body(origin=wp.transform((0.0, 0.0, 0.0), wp.quat_identity()))
        # an elastic bounce (no contact damping): the loss is a smooth function of v0 while the ball bounces once
        # and is in the air at the end (with damped, chattering contacts it is not: the gradient of the discrete
        # rollout is then exact but finite differences of the loss are noise)
        b.add_shape_sphere(ball, radius=0.1, density=500.0, ke=3e4, kd=0.0, kf=10.0, mu=0.2)
        b.set_ground_plane(ke=3e4, kd=0.0, kf=10.0, mu=0.2)
        b.add_joint_free(ball)
        b.joint_q[:7] = [0.0, height, 0.0, 0.0, 0.0, 0.0, 1.0]
        self.model = b.finalize("cpu", requires_grad=True)
        self.steps, self.dt = steps, dt
        self.target = wp.vec3(*target)
        self.v0 = wp.array([v0], dtype=wp.vec3, requires_grad=True)
        self.integrator = sim.FeatherstoneIntegrator(self.model)

    def rollout(self, v0=None):
        """Run the throw from ``v0`` (default: the parameter); returns (loss, states)."""
        m = self.model
        states = [m.state() for _ in range(self.steps + 1)]
        wp.launch(launch_velocity, 1, inputs=[self.v0 if v0 is None else v0], outputs=[states[0].joint_qd])
        sim.eval_fk(m, states[0].joint_q, states[0].joint_qd, None, states[0])
        for k in range(self.steps):
            sim.collide(m, states[k])
            self.integrator.simulate(m, states[k], states[k + 1], self.dt)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(squared_distance, 1, inputs=[states[-1].body_q, self.target], outputs=[loss])
        return loss, states

    def gradient(self):
        """Loss and d loss / d v0 (a copy), and the states."""
        tape = wp.Tape()
        with tape:
            loss, states = self.rollout()
        tape.backward(loss)
        g = self.v0.grad.numpy()[0].copy()
        tape.zero()
        return float(loss.numpy()[0]), g, states

    def finite_difference(self, h: float = 3e-4):
        """Central differences of the loss in each component of ``v0``. The step must be small: contact onset is
        quantised to the time steps, so the loss is a sawtooth in the launch speed (slope = the Tape's gradient
        between jumps; docs/sim.md), and wide differences measure the trend across the jumps instead."""
        v = self.v0.numpy()[0].astype(np.float64)
        fd = np.zeros(3)
        for i in range(3):
            lo, hi = v.copy(), v.copy()
            lo[i] -= h
            hi[i] += h
            f = [float(self.rollout(wp.array([x], dtype=wp.vec3))[0].numpy()[0]) for x in (hi, lo)]
            fd[i] = (f[0] - f[1]) / (2 * h)
        return fd


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iters", type=int, default=40)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--height", type=float, default=0.6, help="launch height of the ball's centre (m)")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--check", action="store_true", help="compare the gradient with finite differences first")
    p.add_argument("--out", default="out/ball_bounce")
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    from tqdm import tqdm

    ex = Bounce(steps=a.steps, height=a.height)
    ok = True
    if a.check:
        _, g, _ = ex.gradient()
        fd = ex.finite_difference()
        ok = bool(np.allclose(g, fd, rtol=2e-2, atol=2e-3 * max(1.0, np.abs(fd).max())))
        print(f"gradient {np.array2string(g, precision=4)}, finite differences {np.array2string(fd, precision=4)}"
              f": {'agree' if ok else 'DIFFER'}")
    opt = wp.optim.Adam([ex.v0], lr=a.lr)
    losses, bounced = [], False
    bar = tqdm(range(a.iters), disable=a.quiet, desc="optimising v0")
    for _ in bar:
        loss, g, states = ex.gradient()
        losses.append(loss)
        opt.step([wp.array([g], dtype=wp.vec3)])
        bar.set_postfix(loss=f"{loss:.4g}")
    final, states = ex.rollout()
    losses.append(float(final.numpy()[0]))
    heights = np.array([s.body_q.numpy()[0, 1] for s in states])
    bounced = bool(heights.min() < 0.1 + 1e-3)  # the ball touched the ground on the way
    save_loss_plot(losses, a.out + "_loss.png", "|x(T) - target|^2 (m^2)", "ball bounce: loss")
    written = render_rollout(ex.model, states, ex.dt, a.out, ((-0.3, 1.6), (0.0, 1.2), (-0.5, 0.5))) + [a.out + "_loss.png"]
    v = ex.v0.numpy()[0]
    print(f"loss {losses[0]:.4g} -> {losses[-1]:.4g} after {a.iters} iterations; v0 = ({v[0]:.3f}, {v[1]:.3f}, "
          f"{v[2]:.3f}) m/s; bounced: {bounced}")
    print("wrote " + ", ".join(written))
    return 0 if ok and np.isfinite(losses[-1]) and losses[-1] <= losses[0] else 1


if __name__ == "__main__":
    sys.exit(main())
