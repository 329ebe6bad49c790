"""warp.sim 1.7's module name of the XPBD integrator (``warp.sim.integrator_xpbd.XPBDIntegrator``)."""

from .integrators.xpbd import XPBDIntegrator

__all__ = ["XPBDIntegrator"]
