"""Inverse kinematics of many robot arms at once, by gradient descent through ``wp.sim.eval_fk``.

``--arms`` copies of a 7-joint arm (revolute joints about alternating axes, one prismatic joint), each with its own
random reachable target for its tip. One launch of ``eval_fk`` poses every arm; a kernel measures each tip's squared
distance to its target; ``wp.Tape`` gives the gradient with respect to all joint angles at once and
``wp.optim.Adam`` updates them. The script is headless: it shows a progress bar, prints the final errors and writes
a plot of the loss and of the arms before and after (PNG) to ``--out``.

    python examples/sim/inverse_kinematics.py                    # 256 arms, 200 iterations, out/inverse_kinematics.png
    python examples/sim/inverse_kinematics.py --arms 16 --iters 30
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import weft as wp

LINK = 0.3  # link length (m)


def build_arm(builder, base_x: float) -> int:
    """Append one arm standing at (base_x, 0, 0); returns the index of its tip body."""
    builder.add_articulation()
    axes = [(0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]
    parent = -1
    for k, axis in enumerate(axes):
        body = builder.add_body(m=1.0, I_m=np.eye(3) * 0.01)
        parent_xform = wp.transform((base_x, 0.0, 0.0) if parent < 0 else (0.0, LINK, 0.0), wp.quat_identity())
        builder.add_joint_revolute(parent, body, parent_xform=parent_xform, axis=axis, name=f"joint{k}")
        parent = body
    tip = builder.add_body(m=0.5, I_m=np.eye(3) * 0.01)
    builder.add_joint_prismatic(parent, tip, parent_xform=wp.transform((0.0, LINK, 0.0), wp.quat_identity()),
                                axis=(0.0, 1.0, 0.0), limit_lower=0.0, limit_upper=0.2, name="slide")
    return tip


@wp.kernel
def tip_error(body_q: wp.array(dtype=wp.transform), tips: wp.array(dtype=int), targets: wp.array(dtype=wp.vec3),
              errors: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = wp.transform_get_translation(body_q[tips[i]]) - targets[i]
    e = wp.dot(d, d)
    errors[i] = e
    wp.atomic_add(loss, 0, e)


class Example:
    """A batch of arms, their targets and the optimiser."""

    def __init__(self, arms: int = 256, lr: float = 0.05, seed: int = 0):
        builder = wp.sim.ModelBuilder()
        tips = [build_arm(builder, 1.5 * k) for k in range(arms)]
        self.model = builder.finalize("cpu", requires_grad=True)
        self.state = self.model.state(requires_grad=True)
        self.tips = wp.array(tips, dtype=int)
        rng = np.random.default_rng(seed)
        # targets: tips of the same arms at random joint angles, so every target is reachable
        q_goal = rng.uniform(-1.2, 1.2, self.model.joint_coord_count).astype(np.float32)
        q_goal[self.model.joint_q_start.numpy()[6:-1:7]] = rng.uniform(0.0, 0.2, arms)
        self.state_goal = self.model.state()
        wp.sim.eval_fk(self.model, wp.array(q_goal, dtype=float), self.model.joint_qd, None, self.state_goal)
        self.targets = wp.array(self.state_goal.body_q.numpy()[tips, :3], dtype=wp.vec3)
        self.q = wp.array(np.zeros(self.model.joint_coord_count, dtype=np.float32) + 0.1, dtype=float,
                          requires_grad=True)
        self.errors = wp.zeros(arms, dtype=float)
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)
        self.optimizer = wp.optim.Adam([self.q], lr=lr)

    def forward(self):
        self.loss.zero_()
        wp.sim.eval_fk(self.model, self.q, self.model.joint_qd, None, self.state)
        wp.launch(tip_error, dim=len(self.tips), inputs=[self.state.body_q, self.tips, self.targets],
                  outputs=[self.errors, self.loss])

    def step(self) -> float:
        """One gradient step on every arm's joint angles; returns the summed squared tip error before it."""
        tape = wp.Tape()
        with tape:
            self.forward()
        tape.backward(self.loss)
        self.optimizer.step([self.q.grad])
        tape.zero()
        return float(self.loss.numpy()[0])

    def tip_distances(self) -> np.ndarray:
        self.forward()
        return np.sqrt(self.errors.numpy())


def _plot(path: Path, losses, example: Example, q0: np.ndarray) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
    ax0.semilogy(losses)
    ax0.set_xlabel("iteration")
    ax0.set_ylabel("sum of squared tip errors (m^2)")
    ax0.set_title(f"{len(example.tips)} arms, gradient descent through eval_fk")
    n_show = min(4, len(example.tips))
    bodies_per_arm = example.model.body_count // len(example.tips)
    for label, q, style in (("start", q0, ":"), ("solved", example.q.numpy(), "-")):
        wp.sim.eval_fk(example.model, wp.array(q, dtype=float), example.model.joint_qd, None, example.state)
        pos = example.state.body_q.numpy()[:, :3]
        for a in range(n_show):
            chain = pos[a * bodies_per_arm:(a + 1) * bodies_per_arm]
            base = np.array([[1.5 * a, 0.0, 0.0]])
            pts = np.vstack([base, chain])
            ax1.plot(pts[:, 0], pts[:, 1], style, marker="o", ms=3, color=f"C{a}",
                     label=label if a == 0 else None)
    tg = example.targets.numpy()[:n_show]
    ax1.scatter(tg[:, 0], tg[:, 1], marker="x", color="k", label="targets", zorder=5)
    ax1.set_aspect("equal")
    ax1.set_title("first arms (x-y projection)")
    ax1.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", type=int, default=256)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--out", type=Path, default=Path("out"))
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args(argv)

    example = Example(arms=args.arms, lr=args.lr)
    q0 = example.q.numpy().copy()
    start = example.tip_distances()
    losses = []
    try:
        from tqdm import trange
    except ImportError:  # tqdm is an optional extra
        trange = range
    for _ in trange(args.iters, desc="IK"):
        losses.append(example.step())
    final = example.tip_distances()
    print(f"{args.arms} arms: mean tip error {start.mean():.4f} m -> {final.mean():.5f} m "
          f"(max {final.max():.5f} m) after {args.iters} iterations")
    if not args.no_plot:
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / "inverse_kinematics.png"
        _plot(path, losses, example, q0)
        print(f"wrote {path}")
    return {"start": start, "final": final, "losses": losses}


if __name__ == "__main__":
    main()
