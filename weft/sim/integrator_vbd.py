"""warp.sim 1.7's module name of the VBD integrator (``warp.sim.integrator_vbd.VBDIntegrator``)."""

from .integrators.vbd import VBDIntegrator

__all__ = ["VBDIntegrator"]
