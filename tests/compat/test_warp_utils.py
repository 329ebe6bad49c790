"""``wp.utils`` and ``wp.types`` helpers against NumPy references."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import weft as wp


def test_array_scan_inclusive_exclusive():
    x = np.random.default_rng(0).integers(-5, 5, 17).astype(np.int32)
    a = wp.array(x)
    out = wp.zeros(17, dtype=wp.int32)
    wp.utils.array_scan(a, out, inclusive=True)
    np.testing.assert_array_equal(out.numpy(), np.cumsum(x))
    wp.utils.array_scan(a, out, inclusive=False)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([[0], np.cumsum(x)[:-1]]))


def test_radix_sort_pairs_stable():
    rng = np.random.default_rng(1)
    k = rng.integers(0, 4, 10).astype(np.int32)
    v = np.arange(10, dtype=np.int32)
    keys = wp.array(np.concatenate([k, np.zeros(10, np.int32)]))
    vals = wp.array(np.concatenate([v, np.zeros(10, np.int32)]))
    wp.utils.radix_sort_pairs(keys, vals, 10)
    order = np.argsort(k, kind="stable")
    np.testing.assert_array_equal(keys.numpy()[:10], k[order])
    np.testing.assert_array_equal(vals.numpy()[:10], v[order])


def test_segmented_sort_pairs():
    k = np.array([3, 1, 2, 9, 8, 7], np.float32)
    keys = wp.array(np.concatenate([k, k]))
    vals = wp.array(np.arange(12, dtype=np.int32))
    wp.utils.segmented_sort_pairs(keys, vals, 6, wp.array(np.array([0, 3], np.int32)))
    np.testing.assert_array_equal(keys.numpy()[:6], [1, 2, 3, 7, 8, 9])
    np.testing.assert_array_equal(vals.numpy()[:6], [1, 2, 0, 5, 4, 3])


def test_runlength_encode():
    x = np.array([1, 1, 2, 2, 2, 5, 1], np.int32)
    rv = wp.zeros(7, dtype=wp.int32)
    rl = wp.zeros(7, dtype=wp.int32)
    assert wp.utils.runlength_encode(wp.array(x), rv, rl) == 4
    np.testing.assert_array_equal(rv.numpy()[:4], [1, 2, 5, 1])
    np.testing.assert_array_equal(rl.numpy()[:4], [2, 3, 1, 1])


def test_array_sum_inner_axis():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5))
    y = rng.standard_normal((4, 5))
    a, b = wp.array(x, dtype=wp.float64), wp.array(y, dtype=wp.float64)
    assert np.isclose(wp.utils.array_sum(a), x.sum())
    assert np.isclose(wp.utils.array_inner(a, b), (x * y).sum())
    np.testing.assert_allclose(wp.utils.array_sum(a, axis=1).numpy(), x.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(wp.utils.array_inner(a, b, axis=0).numpy(), (x * y).sum(axis=0, keepdims=True))
    v = rng.standard_normal((6, 3)).astype(np.float32)
    s = wp.utils.array_sum(wp.array(v, dtype=wp.vec3))
    np.testing.assert_allclose(np.array(s), v.sum(axis=0), rtol=1e-5)
    w = rng.standard_normal((6, 3)).astype(np.float32)
    np.testing.assert_allclose(wp.utils.array_inner(wp.array(v, dtype=wp.vec3), wp.array(w, dtype=wp.vec3)),
                               (v * w).sum(), rtol=1e-5)
    empty = wp.array([], dtype=wp.vec2)  # empty arrays: a zero inner product (as Warp)
    assert wp.utils.array_inner(empty, empty) == 0.0


def test_array_cast():
    x = np.array([1.7, -2.2, 3.0], np.float32)
    out = wp.zeros(3, dtype=wp.int32)
    wp.utils.array_cast(wp.array(x), out)
    np.testing.assert_array_equal(out.numpy(), x.astype(np.int32))


def test_utils_validate_like_warp():
    """Warp's operand checks (and messages) on the array utilities."""
    f32 = wp.zeros(3, dtype=wp.float32)
    with pytest.raises(RuntimeError, match="Unsupported data type: int32"):
        wp.utils.array_sum(wp.zeros(3, dtype=wp.int32))
    with pytest.raises(RuntimeError, match=r"out array should have shape \(1,\)"):
        wp.utils.array_sum(f32, out=wp.zeros(2, dtype=wp.float32))
    with pytest.raises(RuntimeError, match="A and b array data types do not match"):
        wp.utils.array_inner(f32, wp.zeros(3, dtype=wp.float64))
    with pytest.raises(ValueError, match="must have the same shape"):
        wp.utils.array_inner(f32, wp.zeros(4, dtype=wp.float32))
    with pytest.raises(RuntimeError, match="In and out array data types do not match"):
        wp.utils.array_scan(wp.zeros(3, dtype=wp.int32), f32)
    keys = wp.zeros(6, dtype=wp.int32)
    with pytest.raises(RuntimeError, match=r"Invalid radix sort bit range \[0, 33\) for 32-bit keys"):
        wp.utils.radix_sort_pairs(keys, wp.zeros(6, dtype=wp.int32), 3, end_bit=33)
    with pytest.raises(ValueError, match="count must be non-negative"):
        wp.utils.segmented_sort_pairs(keys, keys, -1, wp.zeros(1, dtype=wp.int32))
    with pytest.raises(RuntimeError, match=r"Cast count \(5\) exceeds"):
        wp.utils.array_cast(f32, wp.zeros(10, dtype=wp.int32), count=5)


def test_types_helpers():
    assert wp.dtype_from_numpy(np.float16) is wp.float16
    assert wp.dtype_to_numpy(wp.uint8) == np.uint8
    assert wp.types.type_is_vector(wp.vec3) and not wp.types.type_is_vector(wp.quat)
    assert wp.types.type_is_quaternion(wp.quatd) and wp.types.type_is_matrix(wp.mat22)
    assert wp.types.type_size(wp.mat33) == 9 and wp.types.type_size_in_bytes(wp.vec3d) == 24
    assert wp.types.strides_from_shape((2, 3), wp.vec3) == (36, 12)
    assert wp.types.is_array(wp.zeros(2)) and not wp.types.is_array(np.zeros(2))
    assert wp.get_module_options()["enable_backward"] is True


def test_tape_scopes():
    tape = wp.Tape()
    tape.record_scope_begin("empty")
    tape.record_scope_end()
    assert tape.scopes == []
    with tape:
        tape.record_scope_begin("step", {"i": 0})
        wp.copy(wp.zeros(2, requires_grad=True), wp.ones(2, requires_grad=True))
        tape.record_scope_end()
    assert [s[1] for s in tape.scopes] == ["step", None]
    import pytest

    with pytest.raises(wp.Error):
        tape.record_scope_end()


def test_host_value_types_like_warp():
    v = wp.vec3(1.0, 2.0, 3.0)
    assert str(v) == "[1.0, 2.0, 3.0]" and repr(v) == "vec3f([1.0, 2.0, 3.0])"
    assert str(wp.mat22(1, 2, 3, 4)) == "[[1.0, 2.0],\n [3.0, 4.0]]"
    assert v + 1 == wp.vec3(2.0, 3.0, 4.0) and 1.0 - v == wp.vec3(0.0, -1.0, -2.0)
    assert type(v[1:]) is wp.vec2f and v[1:] == wp.vec2f(2.0, 3.0)
    assert wp.vec3i(1, 2, 3) + 1 == wp.vec3i(2, 3, 4) and type(wp.vec3i(1, 2, 3) + 1) is wp.vec3i
    np.testing.assert_array_equal(np.array(v), [1.0, 2.0, 3.0])
    v[0:2] = wp.vec2(7.0, 8.0)
    assert v == (7.0, 8.0, 3.0)
    # NumPy scalars combine like Python numbers (wp.float32(2) is a numpy.float32); arrays stay arrays
    q = wp.quat(2.0, 4.0, 6.0, 8.0)
    assert type(wp.float32(2) * q) is wp.quat and wp.float32(24) / q == (12.0, 6.0, 4.0, 3.0)
    assert type(np.float64(1.0) + v) is wp.vec3 and type(wp.float32(2) * wp.mat22(1, 2, 3, 4)) is wp.mat22
    assert type(np.ones(3) * v) is np.ndarray


def test_examples_asset_directory(tmp_path, monkeypatch):
    """wp.examples.get_asset_directory(): the assets of an installed warp-lang (weft ships none), or a clear error."""
    import sys

    examples = tmp_path / "warp" / "examples"
    (examples / "assets").mkdir(parents=True)
    monkeypatch.setenv("WEFT_WARP_EXAMPLES", str(examples))
    assert wp.examples.get_asset_directory() == str(examples / "assets")
    assert wp.examples.get_source_directory() == str(examples)
    monkeypatch.setenv("WEFT_WARP_EXAMPLES", str(tmp_path))
    with pytest.raises(wp.Error, match="WEFT_WARP_EXAMPLES"):
        wp.examples.get_asset_directory()
    monkeypatch.delenv("WEFT_WARP_EXAMPLES")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])  # found on sys.path without importing warp
    assert wp.examples.get_asset_directory() == str(examples / "assets")
    monkeypatch.setattr(sys, "path", [])
    with pytest.raises(wp.Error, match="not installed"):
        wp.examples.get_asset_directory()


def test_host_transform_composition_and_keywords():
    """transform * transform composes as Warp's transform_multiply (non-unit quaternions included); p=/q= keywords."""
    t = wp.transform(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)
    # reference: rotate p2 by q1 with Warp's quat_rotate formula, add p1; Hamilton product of the rotations
    p, v, w = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0]), 7.0
    rotated = p * (2 * w * w - 1) + np.cross(v, p) * 2 * w + v * 2 * v.dot(p)
    np.testing.assert_allclose(np.array(t * t)[:3], rotated + p)
    np.testing.assert_allclose(np.array(t * t)[3:], [56.0, 70.0, 84.0, -28.0])
    unit = wp.transform(wp.vec3(1.0, 0.0, 0.0), wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), 0.5 * np.pi))
    np.testing.assert_allclose(np.array(unit * unit)[:3], [1.0, 1.0, 0.0], atol=1e-6)
    assert np.array(wp.transform(p=(1.0, 2.0, 3.0))).tolist() == [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0]
    assert list(wp.transform((1.0, 2.0, 3.0), q=(0.0, 0.0, 0.0, 1.0))) == [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0]
    assert +wp.mat22(1.0, 2.0, 3.0, 4.0) == wp.mat22(1.0, 2.0, 3.0, 4.0)
    with pytest.raises(RuntimeError, match="Couldn't find a function 'mul'"):  # no mixed precision, as in Warp
        wp.mat22f(1.0, 2.0, 3.0, 4.0) * wp.mat22d(1.0, 2.0, 3.0, 4.0)
    assert np.array(t * 2.0).tolist() == [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]


def test_func_decorator_forms():
    import typing

    assert len(typing.get_overloads(wp.func)) == 2

    @wp.func()
    def twice(x: float) -> float:
        return 2.0 * x

    @wp.func(name="weft_test_plus_one", inline=True)
    def plus_one(x: float) -> float:
        return x + 1.0

    assert plus_one.key == "weft_test_plus_one" and twice(3.0) == 6.0 and plus_one(1.0) == 2.0
    with pytest.raises(TypeError, match="inline"):
        wp.func(inline="yes")


def test_device_queries():
    assert not wp.is_mempool_supported("cpu") and not wp.is_mempool_enabled("cpu")
    assert not wp.is_peer_access_supported("cpu", "cpu") and not wp.is_mempool_access_enabled("cpu", "cpu")
    assert wp.is_device_available("cpu") and wp.is_device_available(wp.get_device("cpu"))
    assert not wp.is_device_available("cuda:97")
    assert wp.is_conditional_graph_supported() is False


def test_runlength_encode_operand_checks():
    values = wp.zeros(4, dtype=int)
    with pytest.raises(RuntimeError, match="data types do not match"):
        wp.utils.runlength_encode(values, wp.empty(4, dtype=float), wp.empty(4, dtype=int))
    with pytest.raises(RuntimeError, match="run_lengths array must be of type int32"):
        wp.utils.runlength_encode(values, wp.empty(4, dtype=int), wp.empty(4, dtype=float))
    with pytest.raises(RuntimeError, match="run_count array must be of type int32"):
        wp.utils.runlength_encode(values, wp.empty(4, dtype=int), wp.empty(4, dtype=int), wp.empty(1, dtype=float))


def _valid(edges: np.ndarray, colors: np.ndarray) -> bool:
    return bool(np.all(colors[edges[:, 0]] != colors[edges[:, 1]]))


def test_graph_coloring_assign_balance_groups():
    rng = np.random.default_rng(5)
    n = 200
    e = rng.integers(0, n, (600, 2)).astype(np.int32)
    edges = wp.array(e, dtype=wp.int32)
    colors = wp.empty(n, dtype=wp.int32)
    for algo in (wp.utils.GraphColoringAlgorithm.MCS, wp.utils.GraphColoringAlgorithm.GREEDY):
        k = wp.utils.graph_coloring_assign(edges, colors, algo)
        c = colors.numpy().copy()
        assert _valid(e[e[:, 0] != e[:, 1]], c) and c.max() + 1 == k
        degree = np.bincount(np.concatenate([e[:, 0], e[:, 1]]), minlength=n)
        assert k <= degree.max() + 1  # greedy bound
    before = np.bincount(c, minlength=k)
    ratio = wp.utils.graph_coloring_balance(edges, colors, k, 1.2)
    after = np.bincount(colors.numpy(), minlength=k)
    assert _valid(e[e[:, 0] != e[:, 1]], colors.numpy())
    assert ratio == after.max() / after.min() <= before.max() / before.min()
    groups = wp.utils.graph_coloring_get_groups(colors, k, return_wp_array=False)
    np.testing.assert_array_equal(np.sort(np.concatenate(groups)), np.arange(n))
    # a triangulated strip is chordal: maximum cardinality search colors it with its clique size (3)
    strip = np.array([(i, i + 1) for i in range(9)] + [(i, i + 2) for i in range(8)], dtype=np.int32)
    assert wp.utils.graph_coloring_assign(wp.array(strip, dtype=wp.int32), wp.empty(10, dtype=wp.int32)) == 3


def test_graph_coloring_balance_moves_and_errors():
    # one move per iteration into the smallest group: from node 5 (group 2), then node 2 (group 1)
    edges = wp.array([(0, 1), (0, 2), (0, 3), (0, 4), (0, 6), (1, 6), (2, 5), (4, 6)], dtype=wp.int32)
    colors = wp.array([0, 1, 1, 1, 1, 2, 2], dtype=wp.int32)
    assert wp.utils.graph_coloring_balance(edges, colors, 3, 1.1, max_iterations=2) == 1.5
    np.testing.assert_array_equal(colors.numpy(), [0, 1, 2, 1, 1, 0, 2])
    with pytest.raises(RuntimeError, match=r"Node 1 has color 2, but valid colors are in the range \[0, 2\)"):
        wp.utils.graph_coloring_balance(wp.array([[0, 1]], dtype=wp.int32), wp.array([0, 2], dtype=wp.int32), 2, 1.1)
    with pytest.raises(RuntimeError, match=r"Graph edge 0 has endpoints \(0, 2\)"):
        wp.utils.graph_coloring_assign(wp.array([[0, 2]], dtype=wp.int32), wp.empty(2, dtype=wp.int32))
    with pytest.raises(ValueError):
        wp.utils.graph_coloring_balance(edges, colors, 3, 1.1, max_iterations=-1)


def test_device_sm_count_shared_memory_archs():
    cpu = wp.get_device("cpu")
    assert cpu.sm_count == 0 and cpu.max_shared_memory_per_block == 0  # Warp's CPU values
    for d in wp.get_cuda_devices():
        assert d.sm_count > 0 and d.max_shared_memory_per_block >= 48 * 1024
    archs = wp.get_cuda_supported_archs()
    assert isinstance(archs, list) and all(isinstance(a, int) and 50 <= a <= 150 for a in archs)


def test_optimizers_need_parameters_and_reductions_keep_the_axis():
    from weft.optim import SGD, Adam

    for opt in (Adam(), SGD()):
        with pytest.raises(RuntimeError, match="parameters must be set before calling step"):
            opt.step([])
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    assert wp.utils.array_sum(wp.array(x), axis=-1).shape == (2, 3, 1)
    with pytest.raises(IndexError, match=r"axis 3 is out of bounds"):
        wp.utils.array_sum(wp.array(x), axis=3)


def test_host_vector_components_as_attributes():
    v = wp.vec3(1.0, 2.0, 3.0)
    v.y = 5.0
    assert (v.x, v.y, v.z) == (1.0, 5.0, 3.0)
    for name in ("w", "xy", "foo"):
        with pytest.raises(AttributeError, match=rf"'vec3f' object has no attribute '{name}'$"):
            getattr(v, name)
    with pytest.raises(AttributeError, match="no attribute 'xy'$"):
        v.xy = 1.0
    v.tag = "other attributes are ordinary ones"
    assert v.tag.startswith("other") and list(v) == [1.0, 5.0, 3.0]


def test_struct_cannot_derive():
    @wp.struct
    class Parent:
        x: int

    with pytest.raises(RuntimeError, match="Warp structs must be defined as base classes$"):
        @wp.struct
        class Child(Parent):
            y: int


def test_host_vector_remainder_and_integer_wraparound():
    i16 = wp.types.vector(3, wp.int16)
    np.testing.assert_array_equal(np.array(i16(-7, 7, 5) % i16(3, 3, 3)), np.fmod([-7, 7, 5], 3))
    np.testing.assert_allclose(np.array(wp.vec3d(1.5, -2.5, 3.0) % 1.0), np.fmod([1.5, -2.5, 3.0], 1.0))
    u8 = wp.types.vector(3, wp.uint8)
    assert list(u8(1, -2, 3)) == [1, 254, 3]  # C's wraparound, as Warp


def test_private_context_shims_pack_and_forget_modules():
    # warp._src.context.pack_arg checks a value as a launch does and returns weft's descriptor with Warp's fields;
    # user_modules forgets a module on delete
    from weft._src import context

    @wp.kernel
    def read_plain(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i]

    a = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
    packed = context.pack_arg(read_plain, wp.array[float], "a", a, "cpu")
    assert (packed.data, packed.grad, packed.ndim, tuple(packed.shape)[:1]) == (a.ptr, a.grad.ptr, 1, (3,))
    with pytest.raises(RuntimeError, match="argument 'a'.*1 dimension"):
        context.pack_arg(read_plain, wp.array[float], "a", wp.zeros((2, 2)), "cpu")
    idx = context.pack_arg(read_plain, wp.indexedarray[float], "a", a, "cpu", adjoint=True)
    assert idx.data == a.ptr  # an indexed parameter's adjoint is a plain array
    assert __name__ in context.user_modules
    with pytest.raises(KeyError):
        del context.user_modules["no.such.module.xyz"]
    # a tape's launch records read as Warp's [kernel, dim, max_blocks, inputs, outputs, device, block_dim, metadata]
    with wp.Tape() as tape:
        wp.launch(read_plain, dim=3, inputs=[a])
    rec = tape.launches[0]
    assert rec[0] is read_plain and tuple(rec[1]) == (3,) and rec[3][0] is a and rec[4] == []


def test_array_cast_flattens_mismatched_layouts_and_small_helpers():
    out = wp.empty((2, 2), dtype=float)
    wp.utils.array_cast(wp.array((1, 2, 3, 4), dtype=int), out)  # different ndim: scalar by scalar
    np.testing.assert_array_equal(out.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    flat = wp.zeros(4, dtype=float)
    wp.utils.array_cast(wp.array(((1, 2), (3, 4)), dtype=wp.vec2), flat, count=1)  # one vec2 -> two floats
    np.testing.assert_array_equal(flat.numpy(), [1.0, 2.0, 0.0, 0.0])
    with pytest.raises(RuntimeError, match=r"Cast count \(5\) exceeds the input size \(3\)"):
        wp.utils.array_cast(wp.zeros(3), wp.zeros(10, dtype=wp.int32), count=5)
    with pytest.raises(RuntimeError, match="Array shapes do not match"):
        wp.utils.array_cast(wp.zeros((2, 3)), wp.zeros((3, 2), dtype=wp.float64))
    assert wp.transform_expand((1, 2, 3, 0, 0, 0, 1)) == wp.transformf(p=(1.0, 2.0, 3.0), q=(0.0, 0.0, 0.0, 1.0))
    f, _ = wp.utils.create_warp_function(lambda x: x * 2.0)
    assert re.fullmatch(r"func_[0-9a-f]{16}", f.key) and f(3.0) == 6.0
    # ScopedTimer(detailed=True) prints cProfile's report, then the time; in a fresh interpreter, because in one full
    # suite run the report's separators came out as NUL characters in this worker's captured stdout (not reproduced
    # alone or beside the other print/stdout tests)
    code = "import weft as wp\nwith wp.ScopedTimer('block', detailed=True):\n    pass\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert "function calls in" in proc.stdout and "block took" in proc.stdout, proc.stdout
    adj = wp._src.utils.MeshAdjacency([(0, 3, 1), (0, 2, 3)], 2)
    assert (adj.edges[(0, 3)].o0, adj.edges[(0, 3)].o1, adj.edges[(0, 3)].f1) == (1, 2, 1)


def test_type_predicates_take_types_not_values():
    # wp.types.type_is_* answer for types only (Warp's rule): a value of the type is not a type
    assert wp.types.type_is_vector(wp.vec3) and not wp.types.type_is_vector(wp.vec3(1.0, 2.0, 3.0))
    assert wp.types.type_is_int(wp.int16) and not wp.types.type_is_int(wp.int16(3)) and not wp.types.type_is_int(3)
    assert wp.types.type_is_matrix(wp.mat22) and not wp.types.type_is_value(wp.mat22())
    assert wp.types.type_is_tile(wp.tile) and not wp.types.is_tile(wp.tile)
    t = wp.tile(dtype=wp.float16, shape=(2, 2))  # on the host: a tile description, as Warp's tile instances
    assert wp.types.is_tile(t) and not wp.types.type_is_tile(t) and t.shape == (2, 2)
    f = wp.fixedarray(dtype=int)  # the family without a shape yet
    assert wp.types.is_array(f) and not wp.types.type_is_array(f)
