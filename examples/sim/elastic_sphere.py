"""The seed's scene: an elastic Neo-Hookean sphere dropped onto the ground, simulated with weft.sim.

A voxelised sphere (radius 0.5 m, 10 cells across, 6 tetrahedra per cell: 823 particles, 3,312 tets, density 1000,
k_mu 5e5, k_lambda 2e5) starts 2 cm above the ground moving at (0.3, -1, 0) m/s; SemiImplicitIntegrator at 60 fps x
32 substeps with soft ground contact. The script is headless: it shows a progress bar, prints the time per frame,
renders frames with Matplotlib into a PNG and a GIF, and optionally writes a USD file (needs usd-core).

    python examples/sim/elastic_sphere.py                      # 60 frames of the seed's sphere, out/elastic_sphere.*
    python examples/sim/elastic_sphere.py --cells 4 --frames 5 # a quick look
    python examples/sim/elastic_sphere.py --usd out/sphere.usda

On the CPU, one frame (32 substeps) is recorded once with ``wp.ScopedCapture`` and replayed (``--no-graph`` to launch
every kernel from Python instead).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import weft as wp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenes import ElasticSphere, SceneConfig


class Example:
    """The elastic sphere: model, two states, integrator and a captured frame."""

    def __init__(self, cells: int = 10, config: SceneConfig | None = None, use_graph: bool = True):
        self.config = config or SceneConfig()
        self.model = ElasticSphere(cells=cells).build(wp)
        self.integrator = wp.sim.SemiImplicitIntegrator()
        self.state_0 = self.model.state()
        self.state_1 = self.model.state()
        self.sim_time = 0.0
        self.graph = None
        if use_graph:
            self.simulate()  # compiles everything outside the capture, then start again from the initial state
            self.state_0 = self.model.state()
            self.state_1 = self.model.state()
            with wp.ScopedCapture() as capture:
                self.simulate()
            self.graph = capture.graph

    def simulate(self) -> None:
        """One frame: ``substeps`` integrator steps, ping-ponging the two states (an even count keeps state_0)."""
        for _ in range(self.config.substeps):
            self.state_0.clear_forces()
            self.integrator.simulate(self.model, self.state_0, self.state_1, self.config.dt)
            self.state_0, self.state_1 = self.state_1, self.state_0

    def step(self) -> None:
        """Advance one frame."""
        if self.graph is not None:
            wp.capture_launch(self.graph)
        else:
            self.simulate()
        self.sim_time += 1.0 / self.config.fps


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=10, help="voxels across the sphere (10: the seed's 3,312 tets)")
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--substeps", type=int, default=32)
    parser.add_argument("--out", default="out/elastic_sphere", help="output stem for the PNG and GIF")
    parser.add_argument("--render-every", type=int, default=2, help="render every n-th frame into the GIF")
    parser.add_argument("--usd", default=None, help="also write a USD file (needs usd-core)")
    parser.add_argument("--no-graph", action="store_true", help="launch from Python every substep")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.substeps % 2:
        parser.error("--substeps must be even (the two states ping-pong inside a captured frame)")

    from tqdm import tqdm

    config = SceneConfig(substeps=args.substeps, frames=args.frames)
    t0 = time.perf_counter()
    example = Example(cells=args.cells, config=config, use_graph=not args.no_graph)
    setup = time.perf_counter() - t0
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    images = wp.sim.render.ImageRenderer(example.model, args.out, bounds=((-0.8, 1.2), (0.0, 1.2), (-0.8, 0.8)))
    usd = wp.sim.render.SimRenderer(example.model, args.usd, fps=config.fps) if args.usd else None
    sim_seconds = 0.0
    for frame in tqdm(range(args.frames), disable=args.quiet, desc="elastic sphere", unit="frame"):
        t = time.perf_counter()
        example.step()
        sim_seconds += time.perf_counter() - t
        if frame % args.render_every == 0 or frame == args.frames - 1:
            images.begin_frame(example.sim_time)
            images.render(example.state_0)
            images.end_frame()
        if usd is not None:
            usd.begin_frame(example.sim_time)
            usd.render(example.state_0)
            usd.end_frame()
    written = images.save()
    if usd is not None:
        usd.save()
        written.append(args.usd)
    q = example.state_0.particle_q.numpy()
    print(f"{example.model.particle_count} particles, {example.model.tet_count} tets: setup {setup:.2f} s, "
          f"{sim_seconds / max(args.frames, 1) * 1e3:.2f} ms/frame; lowest point y = {q[:, 1].min():.4f} m")
    print("wrote " + ", ".join(written))
    return 0 if np.all(np.isfinite(q)) else 1


if __name__ == "__main__":
    sys.exit(main())
