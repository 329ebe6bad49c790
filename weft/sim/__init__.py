"""weft.sim: particles, cloth, soft bodies and rigid shapes with warp.sim 1.7's API (reached as ``wp.sim``)."""

from .builder import ModelBuilder
from .collide import collide
from .inertia import transform_inertia
from .integrators import Integrator, SemiImplicitIntegrator, integrate_bodies, integrate_particles
from .model import (
                    GEO_BOX,
                    GEO_CAPSULE,
                    GEO_CONE,
                    GEO_CYLINDER,
                    GEO_MESH,
                    GEO_NONE,
                    GEO_PLANE,
                    GEO_SDF,
                    GEO_SPHERE,
                    JOINT_BALL,
                    JOINT_COMPOUND,
                    JOINT_D6,
                    JOINT_DISTANCE,
                    JOINT_FIXED,
                    JOINT_FREE,
                    JOINT_MODE_FORCE,
                    JOINT_MODE_TARGET_POSITION,
                    JOINT_MODE_TARGET_VELOCITY,
                    JOINT_PRISMATIC,
                    JOINT_REVOLUTE,
                    JOINT_UNIVERSAL,
                    PARTICLE_FLAG_ACTIVE,
                    Control,
                    Mesh,
                    Model,
                    ModelShapeGeometry,
                    ModelShapeMaterials,
                    SimError,
                    State,
)
from .utils import load_mesh, quat_from_euler, quat_to_euler, velocity_at_point

__all__ = [
    "GEO_BOX", "GEO_CAPSULE", "GEO_CONE", "GEO_CYLINDER", "GEO_MESH", "GEO_NONE", "GEO_PLANE", "GEO_SDF", "GEO_SPHERE",
    "JOINT_BALL", "JOINT_COMPOUND", "JOINT_D6", "JOINT_DISTANCE", "JOINT_FIXED", "JOINT_FREE", "JOINT_MODE_FORCE",
    "JOINT_MODE_TARGET_POSITION", "JOINT_MODE_TARGET_VELOCITY", "JOINT_PRISMATIC", "JOINT_REVOLUTE", "JOINT_UNIVERSAL",
    "PARTICLE_FLAG_ACTIVE", "Control", "Integrator", "Mesh", "Model", "ModelBuilder", "ModelShapeGeometry",
    "ModelShapeMaterials", "SemiImplicitIntegrator", "SimError", "State", "collide", "integrate_bodies",
    "integrate_particles", "load_mesh", "quat_from_euler", "quat_to_euler", "transform_inertia", "velocity_at_point",
]
