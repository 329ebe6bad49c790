"""Train a PyTorch network through a differentiable weft simulation.

A small MLP (torch) maps a target point on the ground to the launch velocity of a projectile; a weft kernel
integrates the flight with gravity and quadratic air drag (60 semi-implicit Euler steps, one launch each, all
recorded on a tape). The landing error is the loss; its gradient flows from torch through the weft simulation
back into the network's weights, with no hand-written glue: ``weft.interop.torch.function`` makes the
simulation a differentiable torch op.

    python examples/interop/torch_training.py           # 300 iterations, 256 targets
    python examples/interop/torch_training.py --small   # a few seconds (the smoke test)
"""

from __future__ import annotations

import os

# weft and torch each run an OpenMP thread pool; with the default (active) waiting, the idle pool of one spins on
# the cores the other needs, which makes this loop of many small launches ~10x slower on a 2-core machine.
# Passive waiting must be chosen before either library starts its pool, so before the imports.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import time

import torch

import weft as wp
from weft.interop.torch import function


@wp.kernel
def flight_step(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), drag: float, dt: float,
                x_out: wp.array(dtype=wp.vec3), v_out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    vel = v[i]
    accel = wp.vec3(0.0, -9.81, 0.0) - drag * wp.length(vel) * vel
    v_new = vel + accel * dt
    x_out[i] = x[i] + v_new * dt
    v_out[i] = v_new


@function
def simulate(v0: wp.array(dtype=wp.vec3), steps: int = 60, drag: float = 0.05, dt: float = 1.0 / 60.0):
    """Positions after ``steps`` steps of every projectile launched from the origin with velocity ``v0``."""
    n = v0.shape[0]
    x = wp.zeros(n, dtype=wp.vec3, requires_grad=True)
    v = v0
    for _ in range(steps):  # fresh arrays per step: the tape replays each step with its own inputs
        x_next = wp.zeros(n, dtype=wp.vec3, requires_grad=True)
        v_next = wp.zeros(n, dtype=wp.vec3, requires_grad=True)
        wp.launch(flight_step, n, inputs=[x, v, drag, dt], outputs=[x_next, v_next])
        x, v = x_next, v_next
    return x


class LaunchPolicy(torch.nn.Module):
    """Target (x, z) on the ground -> launch velocity (vx, vy, vz)."""

    def __init__(self, hidden: int = 64):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(2, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, hidden),
                                       torch.nn.Tanh(), torch.nn.Linear(hidden, 3))

    def forward(self, targets: torch.Tensor) -> torch.Tensor:
        return self.net(targets) + torch.tensor([0.0, 5.0, 0.0])  # start from a lob


def train(iterations: int, batch: int, steps: int, seed: int = 0) -> tuple[float, float]:
    torch.manual_seed(seed)
    policy = LaunchPolicy()
    opt = torch.optim.Adam(policy.parameters(), lr=3e-3)
    flight_time = steps / 60.0
    first = last = float("nan")
    start = time.perf_counter()
    for it in range(iterations):
        targets = torch.rand(batch, 2) * 4.0 + 1.0  # x, z in [1, 5] metres
        v0 = policy(targets)
        landing = simulate(v0, steps=steps)  # (batch, 3) tensor, differentiable w.r.t. v0
        goal = torch.stack([targets[:, 0], torch.zeros(batch), targets[:, 1]], dim=1)
        loss = ((landing - goal) ** 2).sum(dim=1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if it == 0:
            first = loss.item()
        last = loss.item()
        if it % max(iterations // 10, 1) == 0 or it == iterations - 1:
            print(f"iter {it:4d}  loss {last:10.5f}  ({time.perf_counter() - start:5.1f} s)")
    print(f"flight time {flight_time:.2f} s, loss {first:.4f} -> {last:.4f}")
    return first, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a few iterations on a small batch (smoke test)")
    parser.add_argument("--iterations", type=int, default=None)
    args = parser.parse_args()
    iterations = args.iterations or (40 if args.small else 300)
    batch = 32 if args.small else 256
    first, last = train(iterations, batch, steps=60)
    if not last < first:
        raise SystemExit("training did not reduce the loss")


if __name__ == "__main__":
    main()
