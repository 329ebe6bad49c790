"""Errors at the user's line (issue 13, item 8): wp.tid() unpacked into too many names, a captured Python list,
an annotated local whose value has another type. (A launch of lower rank than wp.tid() unpacks: test_grid.py.)"""

import pytest

import weft as wp

TABLE = [1.0, 2.0, 3.0]
CONSTS = (1.0, 2.0, 3.0)
MAPPING = {"a": 1.0}


@wp.kernel
def five_indices(a: wp.array(dtype=float)):
    i, j, k, m, n = wp.tid()
    a[0] = float(i + j + k + m + n)


@wp.kernel
def reads_list(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = TABLE[1]


@wp.kernel
def reads_dict(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = MAPPING["a"]


@wp.kernel
def reads_tuple(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = CONSTS[1]


@wp.kernel
def annotated_int_as_float(a: wp.array(dtype=float), n: int):
    i = wp.tid()
    x: float = n + 1
    a[i] = x


@wp.kernel
def annotated_float_as_int(a: wp.array(dtype=float), v: float):
    i = wp.tid()
    x: int = v * 2.0
    a[i] = float(x)


@wp.kernel
def annotated_vec_literal(a: wp.array(dtype=float)):
    i = wp.tid()
    x: wp.vec3 = 1.0
    a[i] = x[0]


@wp.kernel
def annotated_ok(a: wp.array(dtype=float), n: int):
    i = wp.tid()
    x: float = 0
    y: float = float(n)
    z: wp.vec3 = wp.vec3(1.0, 2.0, 3.0)
    a[i] = x + y + z[2]


def _compile_error(kernel, args, dim=1):
    with pytest.raises(wp.CompileError) as info:
        wp.launch(kernel, dim=dim, inputs=args)
    return info.value.full_text  # the message line, the source excerpt (a note under it), the hint


def test_tid_with_too_many_names():
    msg = _compile_error(five_indices, [wp.zeros(1, dtype=float)], dim=(1, 1, 1, 1))
    assert "unpacked into 5 values" in msg and "i, j, k, m, n = wp.tid()" in msg
    assert "test_user_line_errors.py" in msg


@pytest.mark.parametrize("kernel,kind,text", [(reads_list, "list", "TABLE[1]"), (reads_dict, "dict", "MAPPING")])
def test_captured_mutable_container(kernel, kind, text):
    msg = _compile_error(kernel, [wp.zeros(3, dtype=float)])
    assert f"reads the Python {kind}" in msg and text in msg


def test_captured_tuple_still_works():
    a = wp.zeros(3, dtype=float)
    wp.launch(reads_tuple, dim=3, inputs=[a])
    assert (a.numpy() == 2.0).all()


@pytest.mark.parametrize("kernel,args,line,text", [
    (annotated_int_as_float, [2], "x: float = n + 1", "annotated as float32 but its value is int32"),
    (annotated_float_as_int, [2.7], "x: int = v * 2.0", "annotated as int32 but its value is float32"),
    (annotated_vec_literal, [], "x: wp.vec3 = 1.0", "annotated as vec3f but its value is the literal 1.0"),
])
def test_annotated_local_mismatch_at_its_line(kernel, args, line, text):
    msg = _compile_error(kernel, [wp.zeros(1, dtype=float), *args])
    assert text in msg and line in msg


def test_annotated_local_ok():
    a = wp.zeros(2, dtype=float)
    wp.launch(annotated_ok, dim=2, inputs=[a, 4])
    assert (a.numpy() == 7.0).all()
