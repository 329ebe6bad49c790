"""wp.Volume: sparse storage, lookups, CLOSEST / LINEAR sampling and gradients against a float64 NumPy reference on a
random sparse volume, index sampling with gradients into voxel data (checked against the interpolation weights and
central differences), transforms, NanoVDB round trips and errors. Gradients w.r.t. the sample point are also in the
op table (tests/autodiff/op_table_volume.py)."""

# no `from __future__ import annotations`: kernel annotations are evaluated where defined
import os
import tempfile

import numpy as np
import pytest

import weft as wp

TILES = np.array([[0, 0, 0], [8, 0, 0], [0, 8, 0], [-8, -8, 0], [16, 8, 8]], np.int32)


@wp.kernel
def k_store(vid: wp.uint64, ijk: wp.array2d(dtype=wp.int32), vals: wp.array(dtype=float)):
    t = wp.tid()
    wp.volume_store(vid, ijk[t, 0], ijk[t, 1], ijk[t, 2], vals[t])


@wp.kernel
def k_probe(vid: wp.uint64, p: wp.array(dtype=wp.vec3), out: wp.array2d(dtype=float), grad: wp.array(dtype=wp.vec3),
            index: wp.array(dtype=wp.int32)):
    t = wp.tid()
    q = p[t]
    g = wp.vec3()
    out[t, 0] = wp.volume_sample_grad(vid, q, wp.Volume.LINEAR, g, dtype=float)
    grad[t] = g
    out[t, 1] = wp.volume_sample_f(vid, q, wp.Volume.CLOSEST)
    out[t, 2] = wp.volume_lookup(vid, int(wp.floor(q[0])), int(wp.floor(q[1])), int(wp.floor(q[2])), dtype=float)
    index[t] = wp.volume_lookup_index(vid, int(wp.floor(q[0])), int(wp.floor(q[1])), int(wp.floor(q[2])))


@wp.kernel
def k_index(vid: wp.uint64, p: wp.array(dtype=wp.vec3), data: wp.array(dtype=float), bg: wp.array(dtype=float),
            out: wp.array(dtype=float)):
    t = wp.tid()
    g = wp.vec3()
    v = wp.volume_sample_grad_index(vid, p[t], wp.Volume.LINEAR, data, bg[0], g)
    out[t] = v + 0.5 * g[0] - 0.25 * g[2] + wp.volume_sample_index(vid, p[t], wp.Volume.CLOSEST, data, bg[0])


def _reference(values: dict, bg: float, p: np.ndarray):
    """float64 trilinear value and gradient, and the closest voxel's value."""
    def at(i, j, k):
        return values.get((int(i), int(j), int(k)), bg)

    lo = np.floor(p)
    f = p - lo
    val, grad = 0.0, np.zeros(3)
    for c in range(8):
        bits = np.array([(c >> 2) & 1, (c >> 1) & 1, c & 1])
        w1 = np.where(bits == 1, f, 1.0 - f)
        s = np.where(bits == 1, 1.0, -1.0)
        v = at(*(lo + bits))
        val += np.prod(w1) * v
        for d in range(3):
            grad[d] += s[d] * np.prod(np.delete(w1, d)) * v
    closest = at(*np.where(p >= 0, np.floor(p + 0.5), -np.floor(-p + 0.5)))
    return val, grad, closest, at(*lo)


@pytest.fixture(scope="module")
def sparse():
    """A float volume of five scattered tiles holding random values (background 0.75)."""
    rng = np.random.default_rng(3)
    vol = wp.Volume.allocate_by_tiles(wp.array(TILES, dtype=wp.int32), voxel_size=0.5, bg_value=0.75,
                                      translation=(1.0, -2.0, 0.5))
    ijk = vol.get_voxels().numpy()
    vals = rng.normal(size=len(ijk)).astype(np.float32)
    wp.launch(k_store, dim=len(ijk), inputs=[vol.id, wp.array(ijk, dtype=wp.int32), wp.array(vals)])
    return vol, {tuple(map(int, c)): float(v) for c, v in zip(ijk, vals)}, ijk


def test_topology(sparse):
    vol, _, ijk = sparse
    assert vol.get_tile_count() == len(TILES) and vol.get_voxel_count() == 512 * len(TILES) == len(ijk)
    tiles = vol.get_tiles().numpy()
    assert sorted(map(tuple, tiles)) == sorted(map(tuple, TILES))
    assert len(np.unique(ijk, axis=0)) == len(ijk)
    assert vol.dtype is wp.float32 and not vol.is_index
    np.testing.assert_allclose(vol.get_voxel_size(), [0.5, 0.5, 0.5])
    info = vol.get_grid_info()
    assert info.type_str == "float" and info.grid_count == 1
    np.testing.assert_allclose(np.array(info.translation), [1.0, -2.0, 0.5])


def test_sampling_matches_float64_reference(sparse):
    vol, values, ijk = sparse
    rng = np.random.default_rng(5)
    # points inside tiles, across tile borders, at exact voxels and halfway cases, and far outside
    pts = np.concatenate([rng.uniform(-9.0, 24.0, size=(200, 3)), ijk[rng.integers(0, len(ijk), 20)] + 0.5,
                          ijk[rng.integers(0, len(ijk), 20)].astype(float), [[1e6, 0.0, 0.0], [-3.5, 7.25, 100.0]]])
    pts = pts.astype(np.float32)
    out = wp.zeros((len(pts), 3), dtype=float)
    grad = wp.zeros(len(pts), dtype=wp.vec3)
    index = wp.zeros(len(pts), dtype=wp.int32)
    wp.launch(k_probe, dim=len(pts), inputs=[vol.id, wp.array(pts, dtype=wp.vec3), out, grad, index])
    order = {tuple(map(int, c)): n for n, c in enumerate(ijk)}
    for n, p in enumerate(pts.astype(np.float64)):
        val, g, closest, lookup = _reference(values, 0.75, p)
        np.testing.assert_allclose(out.numpy()[n], [val, closest, lookup], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(grad.numpy()[n], g, rtol=1e-5, atol=1e-5)
        assert index.numpy()[n] == order.get(tuple(np.floor(p).astype(int)), -1)


def test_index_sampling_gradients():
    """Gradients into the voxel data and the background equal the interpolation weights (values enter linearly) and
    central differences of the loss; the background collects the weights of inactive corners."""
    rng = np.random.default_rng(11)
    voxels = np.unique(rng.integers(-3, 4, size=(120, 3)), axis=0).astype(np.int32)
    vol = wp.Volume.allocate_by_voxels(wp.array(voxels, dtype=wp.int32), voxel_size=1.0)
    assert vol.is_index and vol.dtype is None and vol.get_voxel_count() == len(voxels)
    order = vol.get_voxels().numpy()
    data_np = rng.normal(size=len(order))
    pts = (rng.uniform(-3.0, 3.0, size=(16, 3)) + 0.01).astype(np.float32)
    data = wp.array(data_np, dtype=float, requires_grad=True)
    bg = wp.array([0.3], dtype=float, requires_grad=True)
    p = wp.array(pts, dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(len(pts), dtype=float, requires_grad=True)

    def loss(d, b):
        o = wp.zeros(len(pts), dtype=float)
        wp.launch(k_index, dim=len(pts), inputs=[vol.id, p, wp.array(d, dtype=float), wp.array([b], dtype=float), o])
        return float(np.sum(o.numpy().astype(np.float64)))

    tape = wp.Tape()
    with tape:
        wp.launch(k_index, dim=len(pts), inputs=[vol.id, p, data, bg, out])
    tape.backward(grads={out: wp.array(np.ones(len(pts)), dtype=float)})
    gd, gb = data.grad.numpy(), bg.grad.numpy()[0]
    # the loss is linear in (data, bg): its value is grad . (data, bg)
    np.testing.assert_allclose(loss(data_np, 0.3), gd @ data_np + gb * 0.3, rtol=1e-4)
    h = 1e-2
    for k in rng.choice(np.nonzero(gd)[0], size=min(6, np.count_nonzero(gd)), replace=False):
        e = np.zeros_like(data_np)
        e[k] = h
        assert abs((loss(data_np + e, 0.3) - loss(data_np - e, 0.3)) / (2 * h) - gd[k]) < 2e-3
    assert abs((loss(data_np, 0.3 + h) - loss(data_np, 0.3 - h)) / (2 * h) - gb) < 2e-3


def test_transforms_and_vec_volume():
    """load_from_numpy (vec3f) with an anisotropic voxel size: world <-> index maps, lookups of the dense values."""
    rng = np.random.default_rng(2)
    dense = rng.normal(size=(5, 6, 3, 3)).astype(np.float32)
    vol = wp.Volume.load_from_numpy(dense, min_world=(1.0, 2.0, -1.0), voxel_size=(0.5, 2.0, 1.0),
                                    bg_value=(9.0, 8.0, 7.0))
    assert vol.dtype is wp.vec3f

    @wp.kernel
    def k(vid: wp.uint64, ijk: wp.array(dtype=wp.vec3i), out: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec3),
          back: wp.array(dtype=wp.vec3)):
        t = wp.tid()
        c = ijk[t]
        out[t] = wp.volume_lookup_v(vid, c[0], c[1], c[2])
        w[t] = wp.volume_index_to_world(vid, wp.vec3(float(c[0]), float(c[1]), float(c[2])))
        back[t] = wp.volume_world_to_index(vid, w[t]) + wp.volume_world_to_index_dir(
            vid, wp.volume_index_to_world_dir(vid, wp.vec3(1.0, 0.0, 0.0)))

    ijk = np.array([[0, 0, 0], [4, 5, 2], [1, 3, 1], [7, 7, 7]], np.int32)
    out, w, back = (wp.zeros(len(ijk), dtype=wp.vec3) for _ in range(3))
    wp.launch(k, dim=len(ijk), inputs=[vol.id, wp.array(ijk, dtype=wp.vec3i), out, w, back])
    expect = [dense[0, 0, 0], dense[4, 5, 2], dense[1, 3, 1], [9.0, 8.0, 7.0]]  # (7,7,7): a padding voxel
    np.testing.assert_allclose(out.numpy(), expect)
    np.testing.assert_allclose(w.numpy(), np.array([1.0, 2.0, -1.0]) + ijk * [0.5, 2.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(back.numpy(), ijk + [1.0, 0.0, 0.0], atol=1e-5)


def test_nanovdb_round_trip(sparse):
    """save_to_nvdb / load_from_nvdb (uncompressed and zip) and array(): the same voxels, values, background and
    transform."""
    vol = sparse[0]
    buf = vol.array()
    assert buf.dtype == wp.uint8
    again = wp.Volume(buf)
    np.testing.assert_array_equal(again.get_voxels().numpy(), vol.get_voxels().numpy())
    for codec in ("none", "zip"):
        fd, path = tempfile.mkstemp(suffix=".nvdb")
        os.close(fd)
        try:
            vol.save_to_nvdb(path, codec=codec)
            loaded = wp.Volume.load_from_nvdb(path)
        finally:
            os.remove(path)
        assert loaded.get_grid_info().type_str == "float"
        np.testing.assert_array_equal(loaded.get_tiles().numpy()[np.lexsort(loaded.get_tiles().numpy().T)],
                                      vol.get_tiles().numpy()[np.lexsort(vol.get_tiles().numpy().T)])
        pts = np.array([[0.5, 1.25, 3.5], [-5.0, -4.5, 2.0], [100.0, 0.0, 0.0]], np.float32)
        a, b = (wp.zeros((3, 3), dtype=float) for _ in range(2))
        g = wp.zeros(3, dtype=wp.vec3)
        i = wp.zeros(3, dtype=wp.int32)
        wp.launch(k_probe, dim=3, inputs=[vol.id, wp.array(pts, dtype=wp.vec3), a, g, i])
        wp.launch(k_probe, dim=3, inputs=[loaded.id, wp.array(pts, dtype=wp.vec3), b, g, i])
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_allclose(np.array(loaded.get_grid_info().translation), [1.0, -2.0, 0.5])


def test_nanovdb_structure_checks(sparse):
    """Corrupted grid buffers are rejected before anything is read; well-formed grids weft does not read are reported
    as unsupported."""
    import struct

    grid = bytearray(sparse[0].array().numpy().tobytes())
    wp.Volume(wp.array(np.frombuffer(bytes(grid), np.uint8), dtype=wp.uint8))  # the intact grid loads
    tree = 672
    root = tree + struct.unpack_from("<Q", grid, tree + 24)[0]
    cases = {"root child inside a node": (root + 64 + 8, "<q", struct.unpack_from("<q", grid, root + 72)[0] + 32),
             "grid size past the buffer": (32, "<Q", len(grid) + 64),
             "leaf level past the tree": (tree + 32, "<I", 1 << 20),
             "blind metadata outside": (640, "<q", -5)}
    for at, fmt, value in cases.values():  # keys: what each corruption is
        bad = bytearray(grid)
        struct.pack_into(fmt, bad, at, value)
        with pytest.raises(RuntimeError, match="Invalid NanoVDB grid structure"):
            wp.Volume(wp.array(np.frombuffer(bytes(bad), np.uint8), dtype=wp.uint8))
    depth_first = bytearray(grid)
    struct.pack_into("<I", depth_first, 20, struct.unpack_from("<I", grid, 20)[0] & ~32)
    with pytest.raises(RuntimeError, match="Unsupported NanoVDB tree layout"):
        wp.Volume(wp.array(np.frombuffer(bytes(depth_first), np.uint8), dtype=wp.uint8))


def test_nanovdb_tiles(sparse):
    """Constant tiles of NanoVDB's internal nodes (regions without leaves holding a value other than the
    background) read as their value, in lookups and trilinear samples."""
    import struct

    from weft.geometry.nanovdb import node_sizes

    grid = bytearray(sparse[0].array().numpy().tobytes())
    sizes = node_sizes(1)
    tree = 672
    _, lower_off, upper_off, _ = struct.unpack_from("<4Q", grid, tree)
    _, n_lower, n_upper = struct.unpack_from("<3I", grid, tree + 32)

    def node_at(off, n, size, edge):  # the node whose (active) bounding box starts in [0, edge)^3
        return next(tree + off + k * size for k in range(n)
                    if all(0 <= c < edge for c in struct.unpack_from("<3i", grid, tree + off + k * size)))

    lower = node_at(lower_off, n_lower, sizes.lower_size, 128)
    struct.pack_into("<f", grid, lower + sizes.lower_table + ((8 << 8) | (8 << 4) | 8) * sizes.table_entry, 42.0)
    upper = node_at(upper_off, n_upper, sizes.upper_size, 4096)
    struct.pack_into("<f", grid, upper + sizes.upper_table + (10 << 10) * sizes.table_entry, 7.0)
    vol = wp.Volume(wp.array(np.frombuffer(bytes(grid), np.uint8), dtype=wp.uint8))
    pts = np.array([[64.0, 71.0, 66.0], [1285.0, 3.0, 100.0], [63.5, 64.0, 64.0], [72.0, 64.0, 64.0]], np.float32)
    out, g, i = wp.zeros((4, 3), dtype=float), wp.zeros(4, dtype=wp.vec3), wp.zeros(4, dtype=wp.int32)
    wp.launch(k_probe, dim=4, inputs=[vol.id, wp.array(pts, dtype=wp.vec3), out, g, i])
    np.testing.assert_allclose(out.numpy()[:, 2], [42.0, 7.0, 0.75, 0.75])  # lookups (floor of the point)
    np.testing.assert_allclose(out.numpy()[2, 0], (42.0 + 0.75) / 2)  # LINEAR across the tile's face
    assert (i.numpy() == -1).all()  # tiles hold no indexable voxels


def test_errors():
    with pytest.raises(ValueError, match="voxel_size"):
        wp.Volume.allocate(min=[0, 0, 0], max=[1, 1, 1], voxel_size=-1.0)
    with pytest.raises(TypeError, match="bg_value"):
        wp.Volume.allocate(min=[0, 0, 0], max=[1, 1, 1], voxel_size=1.0, bg_value="x")
    with pytest.raises(RuntimeError, match="NanoVDB signature"):
        wp.Volume.load_from_nvdb(b"not a nanovdb file")
    pts = wp.zeros(1, dtype=wp.vec3)
    out, g, i = wp.zeros((1, 3), dtype=float), wp.zeros(1, dtype=wp.vec3), wp.zeros(1, dtype=wp.int32)
    ivol = wp.Volume.allocate(min=[0, 0, 0], max=[1, 1, 1], voxel_size=1.0, bg_value=3)
    with pytest.raises(wp.Error, match="dtype is not the volume's value type"):
        wp.launch(k_probe, dim=1, inputs=[ivol.id, pts, out, g, i])
    dead = wp.Volume.allocate(min=[0, 0, 0], max=[1, 1, 1], voxel_size=1.0)
    ident = dead.id
    dead.destroy()
    with pytest.raises(wp.Error, match="not a live Volume"):
        wp.launch(k_probe, dim=1, inputs=[ident, pts, out, g, i])
    with pytest.raises(wp.Error, match="destroyed"):
        dead.get_voxels()

    mat34f = wp.types.matrix(shape=(3, 4), dtype=wp.float32)

    @wp.kernel
    def transposed(vid: wp.uint64, out: wp.array(dtype=wp.vec4f)):
        g = mat34f()
        out[0] = wp.volume_sample_grad(vid, wp.vec3(), wp.Volume.LINEAR, g, dtype=wp.vec4f)

    with pytest.raises(wp.Error, match="Incompatible gradient type, expected mat43f, got mat34f"):  # before any C++
        wp.launch(transposed, dim=1, inputs=[ident, wp.zeros(1, dtype=wp.vec4f)])
