"""Time integrators, one module per integrator."""

from .base import Integrator, integrate_bodies, integrate_particles
from .euler import SemiImplicitIntegrator
from .featherstone import FeatherstoneIntegrator
from .vbd import VBDIntegrator
from .xpbd import XPBDIntegrator

__all__ = ["FeatherstoneIntegrator", "Integrator", "SemiImplicitIntegrator", "VBDIntegrator", "XPBDIntegrator", "integrate_bodies", "integrate_particles"]
