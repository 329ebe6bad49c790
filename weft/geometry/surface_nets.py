"""``wp.geometry.IsoSurfaceNets``: surface nets on a dense node-sampled field (Warp 1.19's API and semantics).

The surface gets one vertex per sheet in each cell it crosses, at the mean of the sheet's edge crossings; a quad
joins the four vertices around every crossed grid edge that has four cells around it (so a surface leaving the
grid ends open, short of the boundary). Warp follows the uniform path of OpenVDB's volume-to-mesh tool, and so does
weft:

- Corners use OpenVDB's numbering (``_SN_CORNER_OFFSETS``: the y = 0 face, then the y = 1 face) and a corner is
  inside when its value is ``< threshold``; the 12 edges are the columns of the edge-group table.
- A cell's crossed edges fall into *groups* (sheets). The table here is generated, not copied: on a face with two
  diagonal inside corners the inside corners are joined (the face's two segments cut off its outside corners);
  groups are the connected sets of crossed edges, numbered in the order of their first edge. The partition into
  groups is the same as in OpenVDB's table for every one of the 256 cases; the numbering of the groups differs in
  44 cases (OpenVDB's table is hand-ordered), which only changes the order of the vertices within such a cell.
- A cell with exactly one ambiguous face and two or three inside corners (``_SN_AMBIGUOUS_FACE``: faces 1-6 = -z,
  +x, +z, -x, -y, +y) whose neighbour across that face is in the same situation on the shared face uses the table
  row of its complement: both cells then separate the shared face's inside corners.
- Vertices are numbered cell by cell (x slowest, z fastest), by group; vertices of groups whose edges all lie on
  the grid boundary belong to no quad and are left out. Quads come cell by cell, x/y/z edge of the cell's corner 0,
  wound counter-clockwise seen from outside for a signed distance (negative inside); triangles split each quad
  (0, 1, 2), (0, 2, 3).

Three weft kernels (multi-threaded on the CPU, NVRTC-compiled for CUDA): classify cells (corrected case, used-group
mask, vertex and quad counts), place vertices (recorded on the tape: vertices are differentiable w.r.t. the field;
classification and topology are piecewise constant), write faces; the counts are scanned in between.
"""

# no `from __future__ import annotations`: the kernels' annotations are evaluated where they are defined
import enum
import functools

import numpy as np

from ..errors import GeometryError
from .marching import IsoSurfaceBase, _as_field

__all__ = ["FaceTopology", "IsoSurfaceNets"]

# OpenVDB's corner numbering: bit c of a cell's case is corner c
_SN_CORNER_OFFSETS = ((0, 0, 0), (1, 0, 0), (1, 0, 1), (0, 0, 1), (0, 1, 0), (1, 1, 0), (1, 1, 1), (0, 1, 1))
# the 12 cell edges (table columns 1-12) as corner pairs
_SN_EDGE_TO_CORNERS = ((0, 1), (1, 2), (3, 2), (0, 3), (4, 5), (5, 6), (7, 6), (4, 7), (0, 4), (1, 5), (2, 6), (3, 7))
# the six faces (1-based index - 1) as (axis, side); a face's neighbour cell lies one step along axis towards side
_FACE_AXIS_SIDE = ((2, 0), (0, 1), (2, 1), (0, 0), (1, 0), (1, 1))


class FaceTopology(enum.Enum):
    """The faces :class:`IsoSurfaceNets` writes (Warp's ``topology`` strings are the values)."""

    TRIANGLE = "triangle"
    QUAD = "quad"


def _topology(topology) -> FaceTopology:
    if isinstance(topology, FaceTopology):
        return topology
    try:
        return FaceTopology(topology)
    except ValueError:
        raise GeometryError(f"IsoSurfaceNets: argument 'topology' must be 'triangle' or 'quad', got {topology!r}") \
            from None


def _face_cycle(face: int) -> list[int]:
    """The corners of a face (0-based index) in cyclic order."""
    axis, side = _FACE_AXIS_SIDE[face]
    u, v = (a for a in range(3) if a != axis)
    ring = ((0, 0), (1, 0), (1, 1), (0, 1))
    corners = [c for c in range(8) if _SN_CORNER_OFFSETS[c][axis] == side]
    return sorted(corners, key=lambda c: ring.index((_SN_CORNER_OFFSETS[c][u], _SN_CORNER_OFFSETS[c][v])))


def _edge_of(a: int, b: int) -> int:
    return next(e for e, pair in enumerate(_SN_EDGE_TO_CORNERS) if set(pair) == {a, b})


def _ambiguous_faces(case: int) -> list[int]:
    """The faces (0-based) whose corners alternate inside/outside around the face."""
    out = []
    for face in range(6):
        bits = [(case >> c) & 1 for c in _face_cycle(face)]
        if bits[0] == bits[2] and bits[1] == bits[3] and bits[0] != bits[1]:
            out.append(face)
    return out


def _group_row(case: int) -> list[int]:
    """[number of groups, group of edge 0, ..., group of edge 11] (0 = edge not crossed)."""
    inside = [(case >> c) & 1 for c in range(8)]
    crossed = [inside[a] != inside[b] for a, b in _SN_EDGE_TO_CORNERS]
    parent = list(range(12))

    def root(e: int) -> int:
        while parent[e] != e:
            e = parent[e]
        return e

    for face in range(6):
        cyc = _face_cycle(face)
        ring = [_edge_of(cyc[k], cyc[(k + 1) % 4]) for k in range(4)]
        cut = [e for e in ring if crossed[e]]
        if len(cut) == 2:
            parent[root(cut[0])] = root(cut[1])
        elif len(cut) == 4:  # ambiguous face: cut off each outside corner, joining the inside ones
            for k in range(4):
                if not inside[cyc[k]]:
                    parent[root(ring[k - 1])] = root(ring[k])
    label: dict[int, int] = {}
    row = [0] * 12
    for e in range(12):
        if crossed[e]:
            row[e] = label.setdefault(root(e), len(label) + 1)
    return [len(label), *row]


@functools.cache
def _tables() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(edge-group table: 256 rows of 13, ambiguous face per case: 0 or 1-6), generated on first use."""
    groups = tuple(v for case in range(256) for v in _group_row(case))
    ambiguous = []
    for case in range(256):
        faces = _ambiguous_faces(case)
        ambiguous.append(faces[0] + 1 if len(faces) == 1 and case.bit_count() in (2, 3) else 0)
    return groups, tuple(ambiguous)


def __getattr__(name: str):
    # the tables are built on first access (not at `import weft`)
    if name == "_SN_EDGE_GROUP_TABLE":
        return _tables()[0]
    if name == "_SN_AMBIGUOUS_FACE":
        return _tables()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _edge_geometry() -> np.ndarray:
    """Per edge: (corner 0 x, y, z, corner 1 x, y, z, axis, 0) - the lower corner first."""
    rows = []
    for a, b in _SN_EDGE_TO_CORNERS:
        pa, pb = np.array(_SN_CORNER_OFFSETS[a]), np.array(_SN_CORNER_OFFSETS[b])
        rows.append([*pa, *pb, int(np.argmax(np.abs(pb - pa))), 0])
    return np.array(rows, np.int32)


@functools.cache
def _table_arrays():
    import weft as wp

    groups, ambiguous = _tables()
    face = np.zeros((6, 4), np.int32)  # neighbour offset (x, y, z) and the 1-based index of the opposite face
    for f, (axis, side) in enumerate(_FACE_AXIS_SIDE):
        face[f, axis] = 1 if side else -1
        face[f, 3] = next(g for g, (ax, sd) in enumerate(_FACE_AXIS_SIDE) if ax == axis and sd != side) + 1
    return (wp.array(np.asarray(groups, np.int32), dtype=wp.int32),
            wp.array(np.asarray(ambiguous, np.int32), dtype=wp.int32),
            wp.array(face, dtype=wp.vec4i),
            wp.array(_edge_geometry().ravel(), dtype=wp.int32))


@functools.cache
def _kernels():
    import weft as wp

    @wp.func
    def _case(field: wp.array3d(dtype=float), threshold: float, i: int, j: int, k: int):
        # OpenVDB's corner order: (0,0,0) (1,0,0) (1,0,1) (0,0,1), then the same at y + 1
        case = int(0)  # noqa: UP018, RUF046 - a dynamic kernel variable
        for c in range(8):
            dx = wp.where(c == 1 or c == 2 or c == 5 or c == 6, 1, 0)
            dz = wp.where(c == 2 or c == 3 or c == 6 or c == 7, 1, 0)
            dy = wp.where(c >= 4, 1, 0)
            if field[i + dx, j + dy, k + dz] < threshold:
                case = case | (1 << c)
        return case

    @wp.kernel
    def classify(field: wp.array3d(dtype=float), threshold: float, groups: wp.array(dtype=wp.int32),
                 ambiguous: wp.array(dtype=wp.int32), faces: wp.array(dtype=wp.vec4i),
                 edges: wp.array(dtype=wp.int32), cases: wp.array(dtype=wp.int32), masks: wp.array(dtype=wp.int32),
                 nverts: wp.array(dtype=wp.int32), nquads: wp.array(dtype=wp.int32)):
        i, j, k = wp.tid()
        nx, ny, nz = field.shape[0], field.shape[1], field.shape[2]
        cell = (i * (ny - 1) + j) * (nz - 1) + k
        case = _case(field, threshold, i, j, k)
        if case == 0 or case == 255:
            cases[cell] = 0
            masks[cell] = 0
            nverts[cell] = 0
            nquads[cell] = 0
            return
        inside = case & 1
        quads = int(0)  # noqa: UP018, RUF046
        if inside != ((case >> 1) & 1) and j > 0 and k > 0:
            quads += 1
        if inside != ((case >> 4) & 1) and i > 0 and k > 0:
            quads += 1
        if inside != ((case >> 3) & 1) and i > 0 and j > 0:
            quads += 1
        face = ambiguous[case]
        if face != 0:
            f = faces[face - 1]
            ni = i + f[0]
            nj = j + f[1]
            nk = k + f[2]
            inside_grid = ni >= 0 and nj >= 0 and nk >= 0 and ni < nx - 1 and nj < ny - 1 and nk < nz - 1
            if inside_grid and ambiguous[_case(field, threshold, ni, nj, nk)] == f[3]:
                case = (~case) & 255
        mask = int(0)  # noqa: UP018, RUF046
        for e in range(12):
            g = groups[case * 13 + 1 + e]
            if g != 0:
                # the grid edge is stitched when all four cells around it exist
                axis = edges[e * 8 + 6]
                p = wp.vec3i(i + edges[e * 8 + 0], j + edges[e * 8 + 1], k + edges[e * 8 + 2])
                n = wp.vec3i(nx, ny, nz)
                ok = True
                for a in range(3):
                    if a != axis and (p[a] < 1 or p[a] > n[a] - 2):
                        ok = False
                if ok:
                    mask = mask | (1 << (g - 1))
        cases[cell] = case
        masks[cell] = mask
        nverts[cell] = wp.bit_count(mask)
        nquads[cell] = quads

    @wp.kernel
    def place(field: wp.array3d(dtype=float), threshold: float, groups: wp.array(dtype=wp.int32),
              edges: wp.array(dtype=wp.int32), cases: wp.array(dtype=wp.int32), masks: wp.array(dtype=wp.int32),
              vbase: wp.array(dtype=wp.int32), lower: wp.vec3, delta: wp.vec3, verts: wp.array(dtype=wp.vec3)):
        i, j, k = wp.tid()
        ny, nz = field.shape[1], field.shape[2]
        cell = (i * (ny - 1) + j) * (nz - 1) + k
        mask = masks[cell]
        if mask == 0:
            return
        case = cases[cell]
        out = vbase[cell]
        origin = wp.vec3(float(i), float(j), float(k))
        for g in range(1, 5):
            if (mask >> (g - 1)) & 1 != 0:
                acc = wp.vec3(0.0, 0.0, 0.0)
                count = float(0.0)  # noqa: UP018 - a dynamic kernel variable
                for e in range(12):
                    if groups[case * 13 + 1 + e] == g:
                        a = wp.vec3(float(edges[e * 8 + 0]), float(edges[e * 8 + 1]), float(edges[e * 8 + 2]))
                        b = wp.vec3(float(edges[e * 8 + 3]), float(edges[e * 8 + 4]), float(edges[e * 8 + 5]))
                        v0 = field[i + edges[e * 8 + 0], j + edges[e * 8 + 1], k + edges[e * 8 + 2]]
                        v1 = field[i + edges[e * 8 + 3], j + edges[e * 8 + 4], k + edges[e * 8 + 5]]
                        t = (threshold - v0) / (v1 - v0)
                        acc = acc + a + t * (b - a)
                        count = count + 1.0
                verts[out] = lower + wp.cw_mul(origin + acc / count, delta)
                out = out + 1

    @wp.func
    def _vertex(groups: wp.array(dtype=wp.int32), cases: wp.array(dtype=wp.int32), masks: wp.array(dtype=wp.int32),
                vbase: wp.array(dtype=wp.int32), cell: int, column: int):
        g = groups[cases[cell] * 13 + column]
        return vbase[cell] + wp.bit_count(masks[cell] & ((1 << (g - 1)) - 1))

    @wp.func
    def _emit(indices: wp.array(dtype=wp.int32), quad: int, as_quads: int, flip: bool, a: int, b: int, c: int,
              d: int):
        if flip:  # the reversed cycle d, c, b, a
            t = a
            a = d
            d = t
            t = b
            b = c
            c = t
        if as_quads != 0:
            indices[4 * quad + 0] = a
            indices[4 * quad + 1] = b
            indices[4 * quad + 2] = c
            indices[4 * quad + 3] = d
        else:
            indices[6 * quad + 0] = a
            indices[6 * quad + 1] = b
            indices[6 * quad + 2] = c
            indices[6 * quad + 3] = a
            indices[6 * quad + 4] = c
            indices[6 * quad + 5] = d

    @wp.kernel
    def write_faces(field: wp.array3d(dtype=float), threshold: float, groups: wp.array(dtype=wp.int32),
                    cases: wp.array(dtype=wp.int32), masks: wp.array(dtype=wp.int32),
                    vbase: wp.array(dtype=wp.int32), qbase: wp.array(dtype=wp.int32), as_quads: int,
                    indices: wp.array(dtype=wp.int32)):
        i, j, k = wp.tid()
        ny, nz = field.shape[1], field.shape[2]
        sy = nz - 1
        sx = (ny - 1) * sy
        cell = i * sx + j * sy + k
        if cases[cell] == 0:
            return
        below0 = field[i, j, k] < threshold
        q = qbase[cell]
        if below0 != (field[i + 1, j, k] < threshold) and j > 0 and k > 0:
            _emit(indices, q, as_quads, not below0,
                  _vertex(groups, cases, masks, vbase, cell, 1),
                  _vertex(groups, cases, masks, vbase, cell - sy, 5),
                  _vertex(groups, cases, masks, vbase, cell - sy - 1, 7),
                  _vertex(groups, cases, masks, vbase, cell - 1, 3))
            q += 1
        if below0 != (field[i, j + 1, k] < threshold) and i > 0 and k > 0:
            _emit(indices, q, as_quads, not below0,
                  _vertex(groups, cases, masks, vbase, cell, 9),
                  _vertex(groups, cases, masks, vbase, cell - 1, 12),
                  _vertex(groups, cases, masks, vbase, cell - sx - 1, 11),
                  _vertex(groups, cases, masks, vbase, cell - sx, 10))
            q += 1
        if below0 != (field[i, j, k + 1] < threshold) and i > 0 and j > 0:
            _emit(indices, q, as_quads, below0,
                  _vertex(groups, cases, masks, vbase, cell, 4),
                  _vertex(groups, cases, masks, vbase, cell - sy, 8),
                  _vertex(groups, cases, masks, vbase, cell - sx - sy, 6),
                  _vertex(groups, cases, masks, vbase, cell - sx, 2))

    return classify, place, write_faces


def _exclusive_scan(counts: np.ndarray) -> tuple[np.ndarray, int]:
    offsets = np.zeros(counts.shape[0], np.int32)
    np.cumsum(counts[:-1], out=offsets[1:])
    return offsets, int(counts.sum())


def _extract(field, threshold: float, lower, upper, topology: FaceTopology):
    import weft as wp

    classify, place, write_faces = _kernels()
    groups, ambiguous, faces, edges = _table_arrays()
    nx, ny, nz = field.shape
    lo = np.zeros(3) if lower is None else np.asarray(tuple(lower), np.float32)
    hi = np.array([nx - 1, ny - 1, nz - 1], np.float32) if upper is None else np.asarray(tuple(upper), np.float32)
    delta = (hi - lo) / np.array([nx - 1, ny - 1, nz - 1], np.float32)
    thr = float(np.float32(threshold))
    cells = (nx - 1, ny - 1, nz - 1)
    n = cells[0] * cells[1] * cells[2]
    cases, masks, nverts, nquads = (wp.empty(n, dtype=wp.int32) for _ in range(4))
    wp.launch(classify, dim=cells, inputs=[field, thr, groups, ambiguous, faces, edges],
              outputs=[cases, masks, nverts, nquads], record_tape=False)
    vbase, n_verts = _exclusive_scan(nverts.numpy())
    qbase, n_quads = _exclusive_scan(nquads.numpy())
    grad = bool(getattr(field, "requires_grad", False))
    verts = wp.zeros(n_verts, dtype=wp.vec3, requires_grad=grad)
    per_face = 4 if topology is FaceTopology.QUAD else 6
    indices = wp.zeros(per_face * n_quads, dtype=wp.int32)
    if n_verts:
        vbase_a = wp.array(vbase, dtype=wp.int32)
        wp.launch(place, dim=cells, inputs=[field, thr, groups, edges, cases, masks, vbase_a, wp.vec3(*lo),
                                            wp.vec3(*delta)], outputs=[verts])
        if n_quads:
            wp.launch(write_faces, dim=cells,
                      inputs=[field, thr, groups, cases, masks, vbase_a, wp.array(qbase, dtype=wp.int32),
                              int(topology is FaceTopology.QUAD)], outputs=[indices], record_tape=False)
    return verts, indices


class IsoSurfaceNets(IsoSurfaceBase):
    """Surface nets on a node-sampled field (see the module description).

    Args:
        nx, ny, nz: number of grid nodes along each axis (a field needs >= 2 on each to hold a cell).
        lower, upper: world positions of node (0, 0, 0) and node (nx-1, ny-1, nz-1); default: node index units.
        topology: ``"triangle"`` (3 indices per face, the default) or ``"quad"`` (4), or a :class:`FaceTopology`.

    The vertices are differentiable w.r.t. the field: inside a ``wp.Tape`` the vertex kernel is recorded.
    """

    def __init__(self, nx: int, ny: int, nz: int, *, lower=None, upper=None, topology="triangle", device=None):
        self._topology = _topology(topology)
        super().__init__(nx, ny, nz, device=device, lower=lower, upper=upper)

    @property
    def topology(self) -> str:
        """The faces :meth:`surface` writes: ``"triangle"`` or ``"quad"``."""
        return self._topology.value

    @topology.setter
    def topology(self, value) -> None:
        self._topology = _topology(value)

    def surface(self, field, threshold: float) -> None:
        """Extract the isosurface ``field == threshold`` into ``verts`` and ``indices``."""
        field = _as_field(field, "IsoSurfaceNets.surface")
        if tuple(field.shape) != (self.nx, self.ny, self.nz):
            raise GeometryError(f"IsoSurfaceNets.surface: argument 'field' has shape {tuple(field.shape)}, the grid "
                                f"is {(self.nx, self.ny, self.nz)}")
        self.verts, self.indices = _extract(field, threshold, self.lower, self.upper, self._topology)

    @classmethod
    def extract(cls, field, threshold: float = 0.0, *, lower=None, upper=None, topology="triangle"):
        """The isosurface of ``field`` as ``(verts, indices)`` arrays (the functional form of :meth:`surface`)."""
        field = _as_field(field, "IsoSurfaceNets.extract")
        return _extract(field, threshold, lower, upper, _topology(topology))
