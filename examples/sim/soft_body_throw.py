"""Differentiable simulation: find the launch velocity that throws a soft cube onto a target on the ground.

A Neo-Hookean cube (weft.sim soft grid) is launched with one initial velocity shared by all its particles and
simulated with the SemiImplicitIntegrator and soft ground contact. The loss is the squared distance between the
cube's centre of mass after the rollout and a target point; ``wp.Tape`` differentiates the whole rollout (contacts
included) with respect to the launch velocity, and Adam (``weft.optim``) updates it. Headless: prints the loss,
writes the loss curve and the final throw as PNGs (and a GIF of the final throw).

    python examples/sim/soft_body_throw.py                     # 40 iterations
    python examples/sim/soft_body_throw.py --iters 5 --steps 60
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
def set_velocity(v0: wp.array(dtype=wp.vec3), qd: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    qd[i] = v0[0]


@wp.kernel
def com_distance(q: wp.array(dtype=wp.vec3), target: wp.vec3, inv_n: float, com: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    wp.atomic_add(com, 0, q[i] * inv_n)


@wp.kernel
def squared_distance(com: wp.array(dtype=wp.vec3), target: wp.vec3, loss: wp.array(dtype=float)):
    d = com[0] - target
    loss[0] = wp.dot(d, d)


class Throw:
    """The model, the launch velocity parameter and a differentiable rollout."""

    def __init__(self, steps: int = 120, dt: float = 2e-3, target=(0.8, 0.1, 0.0)):
        b = sim.ModelBuilder()
        b.add_soft_grid(pos=wp.vec3(0.0, 0.3, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=2,
                        dim_y=2, dim_z=2, cell_x=0.1, cell_y=0.1, cell_z=0.1, density=100.0, k_mu=2e3, k_lambda=2e3,
                        k_damp=1.0)
        self.model = b.finalize("cpu", requires_grad=True)
        self.model.soft_contact_ke, self.model.soft_contact_kd = 2e3, 5.0
        self.model.soft_contact_kf, self.model.soft_contact_mu = 50.0, 0.5
        self.steps, self.dt = steps, dt
        self.target = wp.vec3(*target)
        self.v0 = wp.array([[0.5, 1.0, 0.0]], dtype=wp.vec3, requires_grad=True)
        self.integrator = sim.SemiImplicitIntegrator()

    def rollout(self):
        """Run the throw from ``v0``; returns (loss, states)."""
        m = self.model
        states = [m.state() for _ in range(self.steps + 1)]
        wp.launch(set_velocity, m.particle_count, inputs=[self.v0], outputs=[states[0].particle_qd])
        for k in range(self.steps):
            self.integrator.simulate(m, states[k], states[k + 1], self.dt)
        com = wp.zeros(1, dtype=wp.vec3, requires_grad=True)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(com_distance, m.particle_count, inputs=[states[-1].particle_q, self.target,
                                                          1.0 / m.particle_count], outputs=[com])
        wp.launch(squared_distance, 1, inputs=[com, self.target], outputs=[loss])
        return loss, states

    def gradient(self):
        """Loss and d loss / d v0 (a copy)."""
        tape = wp.Tape()
        with tape:
            loss, states = self.rollout()
        tape.backward(loss)
        g = self.v0.grad.numpy().copy()
        tape.zero()
        return float(loss.numpy()[0]), g, states


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iters", type=int, default=40)
    p.add_argument("--steps", type=int, default=120)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--out", default="out/soft_body_throw")
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    from tqdm import tqdm

    throw = Throw(steps=a.steps)
    opt = wp.optim.Adam([throw.v0], lr=a.lr)
    losses = []
    states = None
    bar = tqdm(range(a.iters), disable=a.quiet, desc="optimising v0")
    for _ in bar:
        loss, g, states = throw.gradient()
        losses.append(loss)
        opt.step([wp.array(g, dtype=wp.vec3)])
        bar.set_postfix(loss=f"{loss:.4g}")
    final, states = throw.rollout()
    losses.append(float(final.numpy()[0]))
    save_loss_plot(losses, a.out + "_loss.png", "|com - target|^2 (m^2)", "soft-body throw: loss")
    written = render_rollout(throw.model, states, throw.dt, a.out, ((-0.3, 1.2), (0.0, 1.0), (-0.5, 0.5))) + [
        a.out + "_loss.png"]
    v = throw.v0.numpy()[0]
    print(f"loss {losses[0]:.4g} -> {losses[-1]:.4g} after {a.iters} iterations; v0 = ({v[0]:.3f}, {v[1]:.3f}, "
          f"{v[2]:.3f}) m/s")
    print("wrote " + ", ".join(written))
    return 0 if np.isfinite(losses[-1]) and losses[-1] <= losses[0] else 1


if __name__ == "__main__":
    sys.exit(main())
