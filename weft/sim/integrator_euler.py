"""warp.sim 1.7's module name of the semi-implicit Euler integrator and its force kernels
(``warp.sim.integrator_euler.SemiImplicitIntegrator``, ``eval_triangles_contact``, ...)."""

from .forces.self_contact import eval_triangles_contact
from .integrators.euler import SemiImplicitIntegrator, compute_forces

__all__ = ["SemiImplicitIntegrator", "compute_forces", "eval_triangles_contact"]
