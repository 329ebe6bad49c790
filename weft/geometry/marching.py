"""``wp.MarchingCubes``: isosurface extraction from a dense 3-D field.

weft extracts the surface by marching tetrahedra: each cell is split into six tetrahedra around its main diagonal
(the same split in every cell, so neighbouring cells agree on their shared faces and the surface is closed where the
field is), and each tetrahedron crossing the threshold contributes one or two triangles. Vertices are shared per grid
edge and placed by linear interpolation. The triangles are oriented so their normals point towards increasing field
values (outwards for a signed distance that is negative inside). Compared with Warp's marching-cubes tables this gives
about twice as many triangles and no ambiguous cases. The extraction is vectorised NumPy on the host.
"""

from __future__ import annotations

import numpy as np

from ..errors import GeometryError

# cell corners: bit 0 = +x, bit 1 = +y, bit 2 = +z; six tetrahedra around the diagonal 0 -> 7
_CORNERS = np.array([[(c >> 0) & 1, (c >> 1) & 1, (c >> 2) & 1] for c in range(8)])
_TETS = np.array([[0, 1, 3, 7], [0, 3, 2, 7], [0, 2, 6, 7], [0, 6, 4, 7], [0, 4, 5, 7], [0, 5, 1, 7]])


def _case_table():
    """For each inside-mask (4 bits) the triangles as triples of tetrahedron edges (pairs of local vertices)."""
    table = {}
    for code in range(16):
        inside = [v for v in range(4) if code >> v & 1]
        outside = [v for v in range(4) if not code >> v & 1]
        if len(inside) in (0, 4):
            table[code] = []
        elif len(inside) in (1, 3):
            lone, others = (inside[0], outside) if len(inside) == 1 else (outside[0], inside)
            table[code] = [[(lone, o) for o in others]]
        else:
            (a, b), (c, d) = inside, outside
            table[code] = [[(a, c), (a, d), (b, d)], [(a, c), (b, d), (b, c)]]
    return table


_TABLE = _case_table()


class MarchingCubes:
    """Isosurface of a node-sampled field on an ``nx x ny x nz`` grid.

    Args:
        nx, ny, nz: number of grid nodes along each axis (>= 2).
        max_verts, max_tris: accepted for Warp compatibility (weft sizes its outputs to the surface).
        lower, upper: world positions of node (0, 0, 0) and node (nx-1, ny-1, nz-1); default: node index units.

    After :meth:`surface`, ``verts`` (array of vec3) and ``indices`` (flat int32 array, 3 per triangle) hold the mesh.
    """

    def __init__(self, nx: int, ny: int, nz: int, max_verts: int = 0, max_tris: int = 0, device=None, lower=None,
                 upper=None, domain_bounds_lower_corner=None, domain_bounds_upper_corner=None):
        self.device = device
        self.max_verts, self.max_tris = max_verts, max_tris
        self.resize(nx, ny, nz, max_verts, max_tris)
        self.lower = lower if lower is not None else domain_bounds_lower_corner
        self.upper = upper if upper is not None else domain_bounds_upper_corner
        self.verts = None
        self.indices = None

    def resize(self, nx: int, ny: int, nz: int, max_verts: int = 0, max_tris: int = 0) -> None:
        """Change the grid size."""
        for name, value in (("nx", nx), ("ny", ny), ("nz", nz)):
            if not isinstance(value, (int, np.integer)) or int(value) < 2:
                raise GeometryError(f"MarchingCubes: argument '{name}' must be an integer >= 2, got {value!r}")
        self.nx, self.ny, self.nz = int(nx), int(ny), int(nz)

    def surface(self, field, threshold: float) -> None:
        """Extract the isosurface ``field == threshold`` into ``verts`` and ``indices``."""
        from ..runtime.array import array

        f = field.numpy() if hasattr(field, "numpy") else np.asarray(field)
        if f.shape != (self.nx, self.ny, self.nz):
            raise GeometryError(f"MarchingCubes.surface: argument 'field' has shape {f.shape}, the grid is "
                                f"{(self.nx, self.ny, self.nz)}")
        if not np.isfinite(f).all():
            raise GeometryError("MarchingCubes.surface: argument 'field' holds NaN or infinite values")
        verts, tris = extract(f.astype(np.float64), float(threshold))
        lo = np.zeros(3) if self.lower is None else np.asarray(self.lower, np.float64)
        hi = (np.array([self.nx, self.ny, self.nz]) - 1.0) if self.upper is None else np.asarray(self.upper, np.float64)
        scale = (hi - lo) / (np.array([self.nx, self.ny, self.nz]) - 1.0)
        verts = lo + verts * scale
        from ..types.aliases import NAMED_TYPES

        self.verts = array(verts.astype(np.float32).reshape(-1, 3), dtype=NAMED_TYPES["vec3"])
        self.indices = array(tris.astype(np.int32).reshape(-1), dtype=np.int32)


def extract(f: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(vertices in node-index units, triangles) of the isosurface of node values ``f`` (float64)."""
    nx, ny, nz = f.shape
    i, j, k = np.meshgrid(np.arange(nx - 1), np.arange(ny - 1), np.arange(nz - 1), indexing="ij")
    base = np.stack([i.ravel(), j.ravel(), k.ravel()], 1)  # (cells, 3)
    node_ids = lambda p: (p[..., 0] * ny + p[..., 1]) * nz + p[..., 2]
    corner_pos = base[:, None, :] + _CORNERS[None]  # (cells, 8, 3)
    corner_ids = node_ids(corner_pos)  # (cells, 8)
    flat = f.ravel()
    tet_ids = corner_ids[:, _TETS].reshape(-1, 4)  # (cells * 6, 4)
    inside = flat[tet_ids] < threshold
    codes = (inside * np.array([1, 2, 4, 8])).sum(1)
    edges_a, edges_b, owner = [], [], []
    for code, tris in _TABLE.items():
        if not tris:
            continue
        sel = np.nonzero(codes == code)[0]
        if sel.size == 0:
            continue
        for tri in tris:
            for (a, b) in tri:
                edges_a.append(tet_ids[sel, a])
                edges_b.append(tet_ids[sel, b])
            owner.append(sel)
    if not owner:
        return np.zeros((0, 3)), np.zeros((0, 3), np.int64)
    # edges come in triples per triangle: regroup as (triangles, 3)
    ea = np.concatenate([np.stack(edges_a[3 * t:3 * t + 3], 1) for t in range(len(owner))])
    eb = np.concatenate([np.stack(edges_b[3 * t:3 * t + 3], 1) for t in range(len(owner))])
    lo_id, hi_id = np.minimum(ea, eb), np.maximum(ea, eb)
    n_nodes = nx * ny * nz
    keys = lo_id.astype(np.int64) * n_nodes + hi_id
    unique, tris = np.unique(keys.ravel(), return_inverse=True)
    tris = tris.reshape(-1, 3)
    a, b = unique // n_nodes, unique % n_nodes
    fa, fb = flat[a], flat[b]
    t = np.clip((threshold - fa) / np.where(fb != fa, fb - fa, 1.0), 0.0, 1.0)
    pos = lambda n: np.stack(np.unravel_index(n, f.shape), 1).astype(np.float64)
    verts = pos(a) + t[:, None] * (pos(b) - pos(a))
    # orient every triangle towards increasing field: compare its normal with (outside - inside) of its edges
    p0, p1, p2 = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    normal = np.cross(p1 - p0, p2 - p0)
    # along each crossing edge the field rises from the inside end to the outside end
    e_in = np.where(flat[lo_id] < threshold, lo_id, hi_id)
    e_out = np.where(flat[lo_id] < threshold, hi_id, lo_id)
    rise = (pos(e_out.ravel()) - pos(e_in.ravel())).reshape(-1, 3, 3).sum(1)
    flip = np.einsum("ij,ij->i", normal, rise) < 0
    tris[flip] = tris[flip][:, [0, 2, 1]]
    return verts, tris
