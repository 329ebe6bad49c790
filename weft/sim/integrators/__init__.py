"""Time integrators, one module per integrator."""

from .base import Integrator, integrate_bodies, integrate_particles
from .euler import SemiImplicitIntegrator
from .vbd import VBDIntegrator
from .xpbd import XPBDIntegrator

__all__ = ["Integrator", "SemiImplicitIntegrator", "VBDIntegrator", "XPBDIntegrator", "integrate_bodies", "integrate_particles"]
