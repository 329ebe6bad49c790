"""Plain mistakes are weft errors, never crashes (issue 13, item 4): array annotations as launch arguments, vector
/ matrix component indices out of range (constant: compile error; run time: debug-mode error naming kernel and
index), and debug launches stop soon after the first error."""

import numpy as np
import pytest

import weft as wp

from .child import run_child


@wp.kernel
def ones(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 1.0


@wp.kernel
def read_component(v: wp.array(dtype=wp.vec3), idx: int, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = v[i][idx]


@wp.kernel
def write_component(v: wp.array(dtype=wp.vec3), idx: int):
    i = wp.tid()
    x = v[i]
    x[idx] = 5.0
    v[i] = x


@wp.kernel
def read_matrix(m: wp.array(dtype=wp.mat22), r: int, c: int, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = m[i][r, c]


@wp.kernel
def read_row(m: wp.array(dtype=wp.mat22), r: int, out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    out[i] = m[i][r]


@wp.kernel
def write_matrix(m: wp.array(dtype=wp.mat22), r: int, c: int):
    i = wp.tid()
    x = m[i]
    x[r, c] = 1.0
    m[i] = x


@wp.kernel
def huge_grid(a: wp.array(dtype=float), hits: wp.array(dtype=int)):
    i, j, k, m = wp.tid()
    wp.atomic_add(hits, 0, 1)
    a[i + j + k + m + 10] = 1.0


@wp.kernel
def bad_constant(v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    x = v[i]
    v[i] = wp.vec3(x[3], 0.0, 0.0)


def test_annotation_argument_is_a_launch_error_in_child():
    # used to segfault in release mode (the annotation has no memory)
    out = run_child("""
        import weft as wp

        @wp.kernel
        def ones(a: wp.array(dtype=float)):
            i = wp.tid()
            a[i] = 1.0

        for k in range(2):  # second launch: the fast path after a real launch
            try:
                wp.launch(ones, dim=4, inputs=[wp.array(dtype=float)])
            except wp.LaunchError as e:
                print("LaunchError", "annotation" in str(e) and "'a'" in str(e))
            wp.launch(ones, dim=4, inputs=[wp.zeros(4, dtype=float)])
    """)
    assert out.split() == ["LaunchError", "True"] * 2


def test_annotation_argument_release_and_debug(debug_mode):
    for mode in ("release", "debug"):
        wp.config.mode = mode
        with pytest.raises(wp.LaunchError, match="argument 'a'.*annotation"):
            wp.launch(ones, dim=4, inputs=[wp.array(dtype=float)])


@pytest.mark.parametrize("case", ["read", "write", "matrix", "row", "matrix_write"])
def test_runtime_component_index_debug(debug_mode, case):
    v = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=wp.vec3)
    m = wp.zeros(4, dtype=wp.mat22)
    launch = {
        "read": (read_component, [v, 7, wp.zeros(4, dtype=float)], "index 7 of a vec3f"),
        "write": (write_component, [v, 100000], "index 100000 of a vec3f"),
        "matrix": (read_matrix, [m, 0, 5, wp.zeros(4, dtype=float)], "index 5 of a mat22f"),
        "row": (read_row, [m, -1, wp.zeros(4, dtype=wp.vec2)], "index -1 of a mat22f"),
        "matrix_write": (write_matrix, [m, 2, 0], "index 2 of a mat22f"),
    }[case]
    kernel, args, text = launch
    with pytest.raises(wp.RuntimeError_, match=f"kernel '{kernel.__name__}'.*{text}.* at line \\d+"):
        wp.launch(kernel, dim=4, inputs=args)
    if case == "write":  # a failed write leaves the vector unchanged
        np.testing.assert_array_equal(v.numpy(), np.arange(12).reshape(4, 3))


def test_runtime_component_index_in_range_debug(debug_mode):
    v = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=wp.vec3)
    out = wp.zeros(4, dtype=float)
    wp.launch(read_component, dim=4, inputs=[v, 2, out])
    np.testing.assert_array_equal(out.numpy(), [2, 5, 8, 11])
    wp.launch(write_component, dim=4, inputs=[v, 0])
    np.testing.assert_array_equal(v.numpy()[:, 0], 5.0)


def test_constant_component_index_is_a_compile_error():
    with pytest.raises(wp.CompileError, match="index 3 is out of range for a vec3f") as info:
        wp.launch(bad_constant, dim=1, inputs=[wp.zeros(1, dtype=wp.vec3)])
    assert "x[3]" in info.value.full_text  # the source line (a note under the message)


def test_debug_launch_stops_after_first_error(debug_mode):
    # 2^40 points, every one out of bounds: the launch stops within a few pieces instead of running for hours
    a = wp.zeros(4, dtype=float)
    hits = wp.zeros(1, dtype=int)
    with pytest.raises(wp.RuntimeError_, match="write out of bounds in kernel 'huge_grid'"):
        wp.launch(huge_grid, dim=(1024, 1024, 1024, 1024), inputs=[a, hits])
    assert 0 < hits.numpy()[0] <= 64 * 2**20
