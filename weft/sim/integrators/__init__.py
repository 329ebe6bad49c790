"""Time integrators, one module per integrator."""

from .base import Integrator, integrate_bodies, integrate_particles
from .euler import SemiImplicitIntegrator

__all__ = ["Integrator", "SemiImplicitIntegrator", "integrate_bodies", "integrate_particles"]
