"""The simulation model, its time-varying state and control inputs, shape records and constants.

Layout and conventions follow warp.sim 1.7: +Y up, transforms as (p, q) with q = (x, y, z, w), spatial vectors as
(angular, linear), the ground plane as the last shape. Arrays live on the model's device; builder lists are turned
into arrays by :meth:`weft.sim.ModelBuilder.finalize`.
"""

from __future__ import annotations

import numpy as np

import weft as wp

from ..errors import Error

PARTICLE_FLAG_ACTIVE = wp.constant(wp.uint32(1 << 0))

# shape geometry types
GEO_SPHERE = wp.constant(0)
GEO_BOX = wp.constant(1)
GEO_CAPSULE = wp.constant(2)
GEO_CYLINDER = wp.constant(3)
GEO_CONE = wp.constant(4)
GEO_MESH = wp.constant(5)
GEO_SDF = wp.constant(6)
GEO_PLANE = wp.constant(7)
GEO_NONE = wp.constant(8)

# joint types (the joint layer itself comes with the rigid-body part)
JOINT_PRISMATIC = wp.constant(0)
JOINT_REVOLUTE = wp.constant(1)
JOINT_BALL = wp.constant(2)
JOINT_FIXED = wp.constant(3)
JOINT_FREE = wp.constant(4)
JOINT_COMPOUND = wp.constant(5)
JOINT_UNIVERSAL = wp.constant(6)
JOINT_DISTANCE = wp.constant(7)
JOINT_D6 = wp.constant(8)

JOINT_MODE_FORCE = wp.constant(0)
JOINT_MODE_TARGET_POSITION = wp.constant(1)
JOINT_MODE_TARGET_VELOCITY = wp.constant(2)


class SimError(Error):
    """A model, state or builder input that weft.sim cannot simulate (names the argument)."""


def flag_to_int(flag) -> int:
    """Convert a particle flag (``wp.uint32`` or int) to a Python int."""
    return int(flag)


@wp.struct
class ModelShapeMaterials:
    """Contact material of every shape: stiffness ke, damping kd, friction stiffness kf, adhesion distance ka,
    friction coefficient mu and restitution (arrays of length shape_count)."""

    ke: wp.array(dtype=float)
    kd: wp.array(dtype=float)
    kf: wp.array(dtype=float)
    ka: wp.array(dtype=float)
    mu: wp.array(dtype=float)
    restitution: wp.array(dtype=float)


@wp.struct
class ModelShapeGeometry:
    """Geometry of every shape: type (GEO_*), solidity, thickness, source id (mesh) and scale."""

    type: wp.array(dtype=wp.int32)
    is_solid: wp.array(dtype=wp.uint8)
    thickness: wp.array(dtype=float)
    source: wp.array(dtype=wp.uint64)
    scale: wp.array(dtype=wp.vec3)


class Mesh:
    """A triangle mesh used as a collision shape (``add_shape_mesh``) with its mass properties at density 1.

    Args:
        vertices: (n, 3) vertex positions.
        indices: flat list of triangle vertex indices, 3 per face.
        compute_inertia: compute mass, centre of mass and inertia (valid for closed meshes).
        is_solid: solid (True) or hollow surface (False) for the inertia computation.
    """

    def __init__(self, vertices, indices, compute_inertia=True, is_solid=True):
        from .inertia import compute_mesh_inertia

        self.vertices = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
        self.indices = np.asarray(indices, dtype=np.int32).flatten()
        if self.indices.size % 3:
            raise SimError(f"Mesh: 'indices' has {self.indices.size} entries, not a multiple of 3")
        self.is_solid = is_solid
        self.has_inertia = compute_inertia
        self.mesh = None
        if compute_inertia:
            self.mass, self.com, self.I, _ = compute_mesh_inertia(1.0, self.vertices, self.indices, is_solid=is_solid)
        else:
            self.I = wp.mat33(np.eye(3))
            self.mass = 1.0
            self.com = wp.vec3()

    def finalize(self, device=None):
        """Build the device-side ``wp.Mesh`` and return its id."""
        pos = wp.array(self.vertices.astype(np.float32), dtype=wp.vec3, device=device)
        vel = wp.zeros_like(pos)
        idx = wp.array(self.indices, dtype=wp.int32, device=device)
        self.mesh = wp.Mesh(points=pos, velocities=vel, indices=idx)
        return self.mesh.id

    def __hash__(self):
        return hash((self.vertices.tobytes(), self.indices.tobytes(), self.is_solid))


class State:
    """Time-varying state of a :class:`Model`: particle and body positions, velocities and forces, joint
    coordinates. Create one with :meth:`Model.state`."""

    def __init__(self):
        self.particle_q = None
        self.particle_qd = None
        self.particle_f = None
        self.body_q = None
        self.body_qd = None
        self.body_f = None
        self.joint_q = None
        self.joint_qd = None

    def clear_forces(self) -> None:
        """Set all particle and body forces to zero."""
        if self.particle_count:
            self.particle_f.zero_()
        if self.body_count:
            self.body_f.zero_()

    @property
    def requires_grad(self) -> bool:
        """Whether the state arrays carry gradients."""
        if self.particle_q is not None:
            return self.particle_q.requires_grad
        if self.body_q is not None:
            return self.body_q.requires_grad
        return False

    @property
    def body_count(self) -> int:
        """Number of rigid bodies in the state."""
        return 0 if self.body_q is None else len(self.body_q)

    @property
    def particle_count(self) -> int:
        """Number of particles in the state."""
        return 0 if self.particle_q is None else len(self.particle_q)

    @property
    def joint_coord_count(self) -> int:
        """Number of joint position coordinates."""
        return 0 if self.joint_q is None else len(self.joint_q)

    @property
    def joint_dof_count(self) -> int:
        """Number of joint velocity coordinates."""
        return 0 if self.joint_qd is None else len(self.joint_qd)


class Control:
    """Time-varying control inputs of a :class:`Model`: joint actions, triangle, tetrahedron and muscle
    activations. Create one with :meth:`Model.control`."""

    def __init__(self, model=None):
        self.joint_act = None
        self.tri_activations = None
        self.tet_activations = None
        self.muscle_activations = None

    def clear(self) -> None:
        """Set every control input to zero."""
        for a in (self.joint_act, self.tri_activations, self.tet_activations, self.muscle_activations):
            if a is not None:
                a.zero_()

    def reset(self) -> None:
        """Deprecated alias of :meth:`clear`."""
        self.clear()


class Model:
    """The non-time-varying description of a simulation: particles, elements, bodies, shapes, joints, contact
    parameters. Build one with :meth:`weft.sim.ModelBuilder.finalize`; attribute names follow warp.sim."""

    def __init__(self, device=None):
        self.requires_grad = False
        self.num_envs = 0
        self.device = wp.get_device(device)
        self.shape_materials = ModelShapeMaterials()
        self.shape_geo = ModelShapeGeometry()
        self._particle_grid = None
        self._particle_grid_lazy = False  # finalize: the grid is made on first access (see particle_grid)
        self.particle_max_radius = 0.0
        self.particle_max_velocity = 1e5
        self.particle_ke = 1.0e3
        self.particle_kd = 1.0e2
        self.particle_kf = 1.0e2
        self.particle_mu = 0.5
        self.particle_cohesion = 0.0
        self.particle_adhesion = 0.0
        self.particle_coloring = []
        self.joint_attach_ke = 1.0e3
        self.joint_attach_kd = 1.0e2
        self.soft_contact_radius = 0.2
        self.soft_contact_margin = 0.2
        self.soft_contact_ke = 1.0e3
        self.soft_contact_kd = 10.0
        self.soft_contact_kf = 1.0e3
        self.soft_contact_mu = 0.5
        self.soft_contact_restitution = 0.0
        self.soft_contact_count = None
        self.soft_contact_particle = None
        self.soft_contact_shape = None
        self.soft_contact_body_pos = None
        self.soft_contact_body_vel = None
        self.soft_contact_normal = None
        self.soft_contact_tids = None
        self.rigid_contact_max = 0
        self.rigid_contact_max_limited = 0
        self.rigid_mesh_contact_max = 0
        self.rigid_contact_count = None
        self.shape_contact_pair_count = 0
        self.shape_ground_contact_pair_count = 0
        self.ground = True
        self.ground_plane = None
        self.enable_tri_collisions = False
        self.up_vector = np.array((0.0, 1.0, 0.0))
        self.up_axis = 1
        self.gravity = np.array((0.0, -9.80665, 0.0))
        for name in ("particle_count", "body_count", "shape_count", "joint_count", "joint_axis_count", "tri_count",
                     "tet_count", "edge_count", "spring_count", "muscle_count", "articulation_count",
                     "joint_dof_count", "joint_coord_count", "articulation_max_joints"):
            setattr(self, name, 0)

    def state(self, requires_grad=None) -> State:
        """A new :class:`State` holding copies of the model's initial particle, body and joint configuration.

        Args:
            requires_grad: give the state arrays gradients (default: the model's ``requires_grad``).
        """
        s = State()
        rg = self.requires_grad if requires_grad is None else requires_grad
        if self.particle_count:
            s.particle_q = wp.clone(self.particle_q, requires_grad=rg)
            s.particle_qd = wp.clone(self.particle_qd, requires_grad=rg)
            s.particle_f = wp.zeros_like(self.particle_qd, requires_grad=rg)
        if self.body_count:
            s.body_q = wp.clone(self.body_q, requires_grad=rg)
            s.body_qd = wp.clone(self.body_qd, requires_grad=rg)
            s.body_f = wp.zeros_like(self.body_qd, requires_grad=rg)
        if self.joint_count:
            s.joint_q = wp.clone(self.joint_q, requires_grad=rg)
            s.joint_qd = wp.clone(self.joint_qd, requires_grad=rg)
        return s

    @property
    def particle_grid(self):
        """The ``wp.HashGrid`` (128^3 cells) for particle-particle contacts, as in warp.sim. Made on first access:
        the first HashGrid of a process compiles weft's geometry library (about 3 CPU s with an empty kernel cache),
        which scenes without particle contacts never need."""
        if self._particle_grid is None and self._particle_grid_lazy:
            self._particle_grid = wp.HashGrid(128, 128, 128, device=self.device)
            self._particle_grid_lazy = False
        return self._particle_grid

    @particle_grid.setter
    def particle_grid(self, grid) -> None:
        self._particle_grid = grid
        self._particle_grid_lazy = False

    def built_particle_grid(self):
        """``particle_grid`` if it exists and has been built over points (None otherwise); never makes one."""
        grid = self._particle_grid
        return grid if grid is not None and grid.reserved else None

    def control(self, requires_grad=None, clone_variables=True) -> Control:
        """A new :class:`Control` initialised from the model's control inputs.

        Args:
            requires_grad: give the control arrays gradients (default: the model's ``requires_grad``).
            clone_variables: copy the model's arrays (True) or share them (False).
        """
        c = Control()
        rg = self.requires_grad if requires_grad is None else requires_grad
        pairs = (("joint_act", "joint_act", self.joint_count), ("tri_activations", "tri_activations", self.tri_count),
                 ("tet_activations", "tet_activations", self.tet_count),
                 ("muscle_activations", "muscle_activations", self.muscle_count))
        for cname, mname, count in pairs:
            src = getattr(self, mname, None)
            if clone_variables:
                if count:
                    setattr(c, cname, wp.clone(src, requires_grad=rg))
            else:
                setattr(c, cname, src)
        return c

    def allocate_soft_contacts(self, count, requires_grad=False):
        """Allocate the soft-contact buffers (particle vs shape) for at most ``count`` contacts."""
        dev = self.device
        self.soft_contact_count = wp.zeros(1, dtype=wp.int32, device=dev)
        self.soft_contact_particle = wp.zeros(count, dtype=int, device=dev)
        self.soft_contact_shape = wp.zeros(count, dtype=int, device=dev)
        self.soft_contact_body_pos = wp.zeros(count, dtype=wp.vec3, device=dev, requires_grad=requires_grad)
        self.soft_contact_body_vel = wp.zeros(count, dtype=wp.vec3, device=dev, requires_grad=requires_grad)
        self.soft_contact_normal = wp.zeros(count, dtype=wp.vec3, device=dev, requires_grad=requires_grad)
        self.soft_contact_tids = wp.zeros(max(self.particle_count * (self.shape_count - 1), 1), dtype=int, device=dev)

    @property
    def soft_contact_max(self) -> int:
        """Maximum number of soft contacts that can be registered."""
        return 0 if self.soft_contact_particle is None else len(self.soft_contact_particle)

    def check_state(self, state: State, name: str = "state") -> None:
        """Raise :class:`SimError` if ``state`` does not belong to this model (counts or device differ)."""
        if not isinstance(state, State):
            raise SimError(f"'{name}' must be a weft.sim.State, got {type(state).__name__}")
        if state.particle_count != self.particle_count:
            raise SimError(f"'{name}' has {state.particle_count} particles but the model has {self.particle_count}"
                           " (a state of another model?)")
        if state.body_count != self.body_count:
            raise SimError(f"'{name}' has {state.body_count} bodies but the model has {self.body_count}")
        for attr in ("particle_q", "body_q"):
            arr = getattr(state, attr)
            if arr is not None and arr.device is not self.device and str(arr.device) != str(self.device):
                raise SimError(f"'{name}.{attr}' is on device {arr.device} but the model is on {self.device}")
