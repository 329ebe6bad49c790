"""Time integrators, one module per integrator."""

from .base import Integrator, integrate_bodies, integrate_particles
from .euler import SemiImplicitIntegrator
from .xpbd import XPBDIntegrator

__all__ = ["Integrator", "SemiImplicitIntegrator", "XPBDIntegrator", "integrate_bodies", "integrate_particles"]
