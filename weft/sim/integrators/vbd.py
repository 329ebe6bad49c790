"""``VBDIntegrator``: vertex block descent (Chen et al. 2024) for cloth, with warp.sim 1.7.2's API.

A step predicts y = x + dt v + dt^2 (g + f/m), then runs ``iterations`` Gauss-Seidel sweeps over the particle
colours (``model.particle_coloring``, from :meth:`ModelBuilder.color`): every particle of a colour takes one Newton
step on its own block, x += H^-1 f, with f and H the force and 3x3 Hessian of the inertia, membrane, bending,
damping and contact energies around it (weft/sim/forces/vbd.py); velocities are (x - x_start) / dt.
"""

import numpy as np

import weft as wp

from ...runtime.tape import active_tape
from .._compile import prepare
from ..forces import vbd as k
from ..forces import vbd_contact as kc
from ..model import SimError
from .base import Integrator


def _refuse_tape(state_in, state_out, self_contact: bool) -> None:
    """VBD steps are not differentiable: raise while a Tape records a step of states with gradients (also on a Tape
    made with ``check_overwrites=False``, which would otherwise replay the sweeps into wrong gradients)."""
    if active_tape.get() is None:
        return
    if not any(a is not None and a.requires_grad
               for a in (state_in.particle_q, state_in.particle_qd, state_out.particle_q, state_out.particle_qd)):
        return
    what = "VBD with self-contact" if self_contact else "VBD"
    raise SimError(f"VBDIntegrator.simulate: a wp.Tape is recording a step of states with gradients, but {what} is "
                   "not differentiable in weft (every Gauss-Seidel sweep overwrites the positions it reads, and the "
                   "self-contact pairs, step bounds and colour order are discrete choices): its gradients would be "
                   "wrong. Use SemiImplicitIntegrator or XPBDIntegrator for gradients, or step VBD outside the Tape "
                   "(or with states made by model.state(requires_grad=False)).")


def _adjacency(indices: np.ndarray, count: int, device):
    """Per-particle CSR lists of (element, corner) pairs of an index table (``-1`` entries skipped)."""
    idx = np.asarray(indices, dtype=np.int64).reshape(len(indices), -1) if len(indices) else np.zeros((0, 1), np.int64)
    elem, corner = np.nonzero(idx >= 0)
    owner = idx[elem, corner]
    order = np.argsort(owner, kind="stable")
    offsets = np.zeros(count + 1, dtype=np.int32)
    np.cumsum(np.bincount(owner, minlength=count), out=offsets[1:])
    pairs = np.stack([elem[order], corner[order]], axis=1).astype(np.int32).reshape(-1)
    if pairs.size == 0:
        pairs = np.zeros(2, dtype=np.int32)
    return wp.array(offsets, dtype=wp.int32, device=device), wp.array(pairs, dtype=wp.int32, device=device)


def _mesh_edges(tri: np.ndarray):
    """The unique edges (i < j) of a triangle table, and per triangle corner k the id of edge (k, k+1) where this
    triangle is the first to hold it, else -1 (each edge is then reached through one triangle)."""
    pairs = np.sort(tri[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    edges, first, inverse = np.unique(pairs, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    owned = np.where(first[inverse] == np.arange(len(pairs)), inverse, -1)
    return edges.astype(np.int32), owned.reshape(-1, 3).astype(np.int32)


class VBDIntegrator(Integrator):
    """Vertex block descent for cloth (triangles with StVK membranes, bending edges, ground and shape contacts).

    The constructor takes the model it will simulate (it precomputes the per-particle element lists), which must
    have a particle colouring (``ModelBuilder.color()`` or ``set_coloring()`` before ``finalize``).

    Args:
        model: the model this integrator simulates.
        iterations: Gauss-Seidel sweeps per step.
        handle_self_contact: cloth self-contact: vertex-triangle pairs closer than ``model.soft_contact_margin`` are
            found once per step (through a ``wp.Mesh`` of the cloth) and repel with the penalty energy
            ``soft_contact_ke (soft_contact_radius - d)^2 / 2`` in every sweep; every vertex moves at most
            ``penetration_free_conservative_bound_relaxation`` times its bound per step (the smallest distance of a
            vertex-triangle or edge-edge pair it belongs to, or ``soft_contact_margin``), so fast cloth cannot step
            through cloth.
        penetration_free_conservative_bound_relaxation: the fraction of the bound a vertex may move per step (below
            0.5: two approaching primitives cannot both close the gap).
        vertex_collision_buffer_pre_alloc: the most triangles kept per vertex for self-contact.
        triangle_collision_buffer_pre_alloc: the most vertex-triangle pairs kept per triangle corner.
        friction_epsilon: velocity (m/s) below which contact friction is smoothed (IPC's mollifier).
        body_particle_contact_buffer_pre_alloc: the most shape contacts used per particle.
    """

    def __init__(self, model, iterations: int = 10, handle_self_contact: bool = False,
                 penetration_free_conservative_bound_relaxation: float = 0.42, friction_epsilon: float = 1e-2,
                 body_particle_contact_buffer_pre_alloc: int = 4, vertex_collision_buffer_pre_alloc: int = 32,
                 edge_collision_buffer_pre_alloc: int = 64, triangle_collision_buffer_pre_alloc: int = 32,
                 edge_edge_parallel_epsilon: float = 1e-5):
        if not model.particle_coloring:
            raise SimError("VBDIntegrator: 'model.particle_coloring' is empty: call ModelBuilder.color() or "
                           "ModelBuilder.set_coloring() before ModelBuilder.finalize()")
        self.model = model
        self.device = model.device
        self.iterations = iterations
        self.handle_self_contact = handle_self_contact
        self.conservative_bound_relaxation = penetration_free_conservative_bound_relaxation
        self.friction_epsilon = friction_epsilon
        self.body_particle_contact_buffer_pre_alloc = body_particle_contact_buffer_pre_alloc
        n = model.particle_count
        dev = model.device
        tri = model.tri_indices.numpy() if model.tri_count else np.zeros((0, 3), np.int64)
        edge = model.edge_indices.numpy() if model.edge_count else np.zeros((0, 4), np.int64)
        self._tri_offsets, self._tri_adj = _adjacency(tri, n, dev)
        self._edge_offsets, self._edge_adj = _adjacency(edge, n, dev)
        self.inertia = wp.zeros(n, dtype=wp.vec3, device=dev)
        self._x_new = wp.zeros(n, dtype=wp.vec3, device=dev)
        self._contact_counts = wp.zeros(n, dtype=wp.int32, device=dev)
        self._contact_ids = wp.zeros(max(1, n * body_particle_contact_buffer_pre_alloc), dtype=wp.int32, device=dev)
        self.vertex_collision_buffer_pre_alloc = vertex_collision_buffer_pre_alloc
        self.triangle_collision_buffer_pre_alloc = triangle_collision_buffer_pre_alloc
        self.edge_collision_buffer_pre_alloc = edge_collision_buffer_pre_alloc
        self.edge_edge_parallel_epsilon = edge_edge_parallel_epsilon
        if handle_self_contact:
            if not model.tri_count:
                raise SimError("VBDIntegrator: 'handle_self_contact=True' needs triangles in the model")
            if model.soft_contact_margin < model.soft_contact_radius:
                raise SimError(f"VBDIntegrator: 'model.soft_contact_margin' ({model.soft_contact_margin}) must be at "
                               f"least 'model.soft_contact_radius' ({model.soft_contact_radius}), else contacts are "
                               "missed (1.5-2x is advisable)")
            self._bound = wp.zeros(n, dtype=float, device=dev)
            edges, tri_edges = _mesh_edges(tri.reshape(-1, 3))
            self._edges = wp.array(edges, dtype=int, device=dev)
            self._tri_edges = wp.array(tri_edges, dtype=int, device=dev)
            self._vertex_edge_offsets, self._vertex_edge_adj = _adjacency(edges, n, dev)
            self._ee_count = wp.zeros(len(edges), dtype=wp.int32, device=dev)
            self._ee_ids = wp.zeros(max(1, len(edges) * edge_collision_buffer_pre_alloc), dtype=wp.int32, device=dev)
            self._mesh_points = wp.clone(model.particle_q, requires_grad=False)
            self._mesh = wp.Mesh(points=self._mesh_points, indices=wp.array(tri.reshape(-1).astype(np.int32),
                                                                             dtype=wp.int32, device=dev))
        self._vt_count = wp.zeros(n if handle_self_contact else 1, dtype=wp.int32, device=dev)
        self._vt_tri = wp.zeros(max(1, n * vertex_collision_buffer_pre_alloc) if handle_self_contact else 1,
                                dtype=wp.int32, device=dev)
        self._corner_count = wp.zeros(n if handle_self_contact else 1, dtype=wp.int32, device=dev)
        self._corner_ids = wp.zeros(max(1, n * triangle_collision_buffer_pre_alloc) if handle_self_contact else 1,
                                    dtype=wp.int32, device=dev)
        self._tables = {name: getattr(model, name) if getattr(model, name) is not None and len(getattr(model, name))
                        else wp.zeros(1, dtype=dtype, device=dev)
                        for name, dtype in (("tri_poses", wp.mat22), ("tri_areas", float),
                                            ("edge_rest_angle", float), ("edge_rest_length", float))}
        self._tables["tri_indices"] = model.tri_indices if model.tri_count else wp.zeros((1, 3), dtype=int, device=dev)
        self._tables["tri_materials"] = (model.tri_materials if model.tri_count
                                         else wp.zeros((1, 5), dtype=float, device=dev))
        self._tables["edge_indices"] = (model.edge_indices if model.edge_count
                                        else wp.zeros((1, 4), dtype=int, device=dev))
        self._tables["edge_bending_properties"] = (model.edge_bending_properties if model.edge_count
                                                   else wp.zeros((1, 2), dtype=float, device=dev))

    def simulate(self, model, state_in, state_out, dt: float, control=None):
        """Advance ``model`` by ``dt`` from ``state_in`` to ``state_out`` (``state_in`` is not modified)."""
        if model is not self.model:
            raise SimError("VBDIntegrator.simulate: 'model' must be the model the integrator was made for")
        self._check(model, state_in, state_out, dt)
        _refuse_tape(state_in, state_out, self.handle_self_contact)
        from ..collide import create_soft_contacts
        from ..forces.contacts import _dummy_body_q, _dummy_body_qd

        kernels = [k.vbd_forward_step, k.vbd_copy_color, k.vbd_update_velocity]
        has_shapes = model.shape_count > 1 and model.soft_contact_count is not None
        if has_shapes:
            kernels += [k.vbd_bin_contacts, create_soft_contacts]
        if self.handle_self_contact:
            kernels += [kc.vbd_detect_vertex_triangle, kc.vbd_detect_edge_edge, kc.vbd_solve_color_self_contact,
                        k.vbd_copy_color_bounded, k.vbd_bound_all]
        else:
            kernels.append(k.vbd_solve_color)
        prepare(model, kernels)
        dev = model.device
        n = model.particle_count
        if n == 0:
            return state_out
        self._contact_counts.zero_()
        if has_shapes:
            from ..forces.contacts import _contact_dim

            wp.launch(k.vbd_bin_contacts, dim=_contact_dim(model),
                      inputs=[model.soft_contact_count, model.soft_contact_particle, model.soft_contact_max,
                              self.body_particle_contact_buffer_pre_alloc],
                      outputs=[self._contact_counts, self._contact_ids], device=dev)
        if self.handle_self_contact:
            self._detect_self_contacts(model, state_in)
        x = state_out.particle_q
        wp.launch(k.vbd_forward_step, dim=n,
                  inputs=[state_in.particle_q, state_in.particle_qd, model.particle_inv_mass, state_in.particle_f,
                          model.particle_flags, wp.vec3(*model.gravity), dt], outputs=[self.inertia, x], device=dev)
        if self.handle_self_contact:
            wp.launch(k.vbd_bound_all, dim=n, inputs=[state_in.particle_q, self._bound,
                                                      self.conservative_bound_relaxation], outputs=[x], device=dev)
        body_q = state_in.body_q if state_in.body_q is not None else _dummy_body_q(model)
        body_qd = state_in.body_qd if state_in.body_qd is not None else _dummy_body_qd(model)
        t = self._tables
        contact = (model.soft_contact_shape, model.soft_contact_body_pos, model.soft_contact_body_vel,
                   model.soft_contact_normal)
        if not has_shapes:
            empty_i = wp.zeros(1, dtype=int, device=dev)
            empty_v = wp.zeros(1, dtype=wp.vec3, device=dev)
            contact = (empty_i, empty_v, empty_v, empty_v)
        for _ in range(self.iterations):
            for ids in model.particle_coloring:
                if len(ids) == 0:
                    continue
                inputs = [dt, ids, state_in.particle_q, x, model.particle_mass, self.inertia, model.particle_flags,
                          t["tri_indices"], t["tri_poses"], t["tri_materials"], t["tri_areas"], t["edge_indices"],
                          t["edge_rest_angle"], t["edge_rest_length"], t["edge_bending_properties"], self._tri_offsets,
                          self._tri_adj, self._edge_offsets, self._edge_adj, model.soft_contact_ke,
                          model.soft_contact_mu, self.friction_epsilon, model.particle_radius,
                          self.body_particle_contact_buffer_pre_alloc, self._contact_counts, self._contact_ids,
                          model.shape_materials, model.shape_body, body_q, body_qd, model.body_com, *contact,
                          bool(model.ground), model.ground_plane]
                if self.handle_self_contact:
                    wp.launch(kc.vbd_solve_color_self_contact, dim=len(ids),
                              inputs=[*inputs, self._edges, model.soft_contact_radius,
                                      self.edge_edge_parallel_epsilon, self.vertex_collision_buffer_pre_alloc,
                                      self.triangle_collision_buffer_pre_alloc, self.edge_collision_buffer_pre_alloc,
                                      self._vt_count, self._vt_tri, self._corner_count, self._corner_ids,
                                      self._vertex_edge_offsets, self._vertex_edge_adj, self._ee_count, self._ee_ids],
                              outputs=[self._x_new], device=dev)
                else:
                    wp.launch(k.vbd_solve_color, dim=len(ids), inputs=inputs, outputs=[self._x_new], device=dev)
                if self.handle_self_contact:
                    wp.launch(k.vbd_copy_color_bounded, dim=len(ids),
                              inputs=[ids, self._x_new, state_in.particle_q, self._bound,
                                      self.conservative_bound_relaxation], outputs=[x], device=dev)
                else:
                    wp.launch(k.vbd_copy_color, dim=len(ids), inputs=[ids, self._x_new], outputs=[x], device=dev)
        wp.launch(k.vbd_update_velocity, dim=n, inputs=[state_in.particle_q, x, dt], outputs=[state_out.particle_qd],
                  device=dev)
        return state_out

    def _detect_self_contacts(self, model, state) -> None:
        """Vertex-triangle pairs within ``soft_contact_margin`` at the start of the step."""
        wp.copy(self._mesh_points, state.particle_q)
        self._mesh.refit()
        self._corner_count.zero_()
        self._bound.fill_(model.soft_contact_margin)
        wp.launch(kc.vbd_detect_vertex_triangle, dim=model.particle_count,
                  inputs=[self._mesh.id, state.particle_q, model.tri_indices, model.soft_contact_margin,
                          self.vertex_collision_buffer_pre_alloc, self.triangle_collision_buffer_pre_alloc],
                  outputs=[self._vt_count, self._vt_tri, self._corner_count, self._corner_ids, self._bound],
                  device=model.device)
        wp.launch(kc.vbd_detect_edge_edge, dim=len(self._edges),
                  inputs=[self._mesh.id, state.particle_q, self._edges, self._tri_edges, model.soft_contact_margin,
                          self.edge_edge_parallel_epsilon, self.edge_collision_buffer_pre_alloc],
                  outputs=[self._ee_count, self._ee_ids, self._bound], device=model.device)
