"""The frame loop shared by the weft.sim examples: a progress bar, Matplotlib frames into a PNG + GIF (headless),
optionally USD (needs usd-core), and the time per frame."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import weft as wp


def parser(doc: str, frames: int, out: str) -> argparse.ArgumentParser:
    """The options every example has (``--frames``, ``--out``, ``--render-every``, ``--usd``, ``--quiet``)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--frames", type=int, default=frames)
    p.add_argument("--out", default=out, help="output stem for the PNG and GIF")
    p.add_argument("--render-every", type=int, default=2, help="render every n-th frame into the GIF")
    p.add_argument("--usd", default=None, help="also write a USD file (needs usd-core)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def run(example, args, name: str, bounds, fps: int = 60) -> tuple[list[str], float]:
    """Step ``example`` (``.model``, ``.state_0``, ``.step()``) for ``args.frames`` frames and render them; returns
    the files written and the simulation time per frame (ms)."""
    from tqdm import tqdm

    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    images = wp.sim.render.ImageRenderer(example.model, args.out, bounds=bounds)
    usd = wp.sim.render.SimRenderer(example.model, args.usd, fps=fps) if args.usd else None
    sim_seconds, t_sim = 0.0, 0.0
    for frame in tqdm(range(args.frames), disable=args.quiet, desc=name, unit="frame"):
        t = time.perf_counter()
        example.step()
        sim_seconds += time.perf_counter() - t
        t_sim += 1.0 / fps
        if frame % args.render_every == 0 or frame == args.frames - 1:
            images.begin_frame(t_sim)
            images.render(example.state_0)
            images.end_frame()
        if usd is not None:
            usd.begin_frame(t_sim)
            usd.render(example.state_0)
            usd.end_frame()
    written = images.save()
    if usd is not None:
        usd.save()
        written.append(args.usd)
    return written, sim_seconds / max(args.frames, 1) * 1e3


def save_loss_plot(losses, path: str, ylabel: str, title: str) -> None:
    """The optimisation examples' loss curve (log scale) as a PNG, headless."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(4.5, 3.2), dpi=100)
    ax.semilogy(losses, marker=".")
    ax.set_xlabel("iteration")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def render_rollout(model, states, dt: float, out: str, bounds, frames: int = 20) -> list[str]:
    """About ``frames`` evenly spaced states of a rollout as PNG + GIF (headless); returns the files written."""
    from weft import sim

    renderer = sim.render.ImageRenderer(model, out, bounds=bounds)
    for k in range(0, len(states), max(1, len(states) // frames)):
        renderer.begin_frame(k * dt)
        renderer.render(states[k])
        renderer.end_frame()
    return renderer.save()
