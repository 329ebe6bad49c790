# ruff: noqa  (the kernels below are invalid on purpose)
"""Invalid programs: each raises a weft error at the user's file:line(:col), before any C++ is generated.

The offending line of each kernel carries a ``# ERR`` marker; the test finds it in the source, so editing this file
never silently breaks the expected line numbers.  CASES lists (kernel, text at the expected column or None,
fragment of the message).
"""

import inspect
import os
import re

import numpy as np
import pytest

import weft as wp

THIS_FILE = os.path.abspath(__file__)
CXX_TEXT = re.compile(r"weft::|std::|\.cpp\b|\.h:\d|g\+\+|clang|error: expected|template")

# ---------------------------------------------------------------------------------------------------------------
# unsupported syntax


@wp.kernel
def k_list_comprehension(a: wp.array(dtype=float)):
    i = wp.tid()
    s = [a[k] for k in range(3)]  # ERR
    a[i] = s[0]


@wp.kernel
def k_lambda(a: wp.array(dtype=float)):
    i = wp.tid()
    f = lambda v: v + 1.0  # ERR  # noqa: E731
    a[i] = f(a[i])


@wp.kernel
def k_try(a: wp.array(dtype=float)):
    i = wp.tid()
    try:  # ERR
        a[i] = 1.0
    except Exception:
        a[i] = 2.0


@wp.kernel
def k_with(a: wp.array(dtype=float)):
    i = wp.tid()
    with wp.ScopedDevice("cpu"):  # ERR
        a[i] = 1.0


@wp.kernel
def k_class(a: wp.array(dtype=float)):
    i = wp.tid()

    class Local:  # ERR
        pass

    a[i] = 1.0


@wp.kernel
def k_nested_def(a: wp.array(dtype=float)):
    i = wp.tid()

    def helper(x):  # ERR
        return x

    a[i] = helper(1.0)


@wp.kernel
def k_dict(a: wp.array(dtype=float)):
    i = wp.tid()
    d = {0: 1.0}  # ERR
    a[i] = d[0]


@wp.kernel
def k_set(a: wp.array(dtype=float)):
    i = wp.tid()
    s = {1.0, 2.0}  # ERR
    a[i] = 0.0


@wp.kernel
def k_fstring(a: wp.array(dtype=float)):
    i = wp.tid()
    print(f"value {a[i]}")  # ERR


@wp.kernel
def k_star_args(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.min(*i)  # ERR


G_COUNTER = 0


@wp.kernel
def k_global(a: wp.array(dtype=float)):
    global G_COUNTER  # ERR
    i = wp.tid()
    a[i] = 1.0


@wp.kernel
def k_del(a: wp.array(dtype=float)):
    i = wp.tid()
    x = 1.0
    del x  # ERR
    a[i] = 0.0


@wp.kernel
def k_yield(a: wp.array(dtype=float)):
    i = wp.tid()
    yield a[i]  # ERR


@wp.kernel
def k_slice(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    s = a[1:3:0]  # ERR
    b[i] = s[0]


@wp.kernel
def k_walrus(a: wp.array(dtype=float)):
    i = wp.tid()
    if (x := a[i]) > 0.0:  # ERR
        a[i] = x


@wp.kernel
def k_import(a: wp.array(dtype=float)):
    import math  # ERR

    i = wp.tid()
    a[i] = math.pi


@wp.kernel
def k_string(a: wp.array(dtype=float)):
    i = wp.tid()
    s = "text"
    a[i] = s  # ERR


@wp.kernel
def k_for_else(a: wp.array(dtype=float)):
    i = wp.tid()
    for k in range(3):  # ERR
        a[i] = float(k)
    else:
        a[i] = 0.0


@wp.kernel
def k_iterate_array(a: wp.array(dtype=float)):
    i = wp.tid()
    for x in a:  # ERR
        a[i] = x


@wp.kernel
def k_is(a: wp.array(dtype=float)):
    i = wp.tid()
    if a[i] is None:  # ERR
        a[i] = 0.0


# ---------------------------------------------------------------------------------------------------------------
# type errors


@wp.kernel
def k_float_times_int(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * i  # ERR


@wp.kernel
def k_int32_plus_int64(a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int64)):
    i = wp.tid()
    b[i] = a[i] + b[i]  # ERR


@wp.func
def takes_float(x: float):
    return x * 2.0


@wp.kernel
def k_wrong_func_arg(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = takes_float(i)  # ERR


@wp.kernel
def k_vec_times_vec(a: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a[i] = a[i] * a[i]  # ERR


@wp.kernel
def k_mat_times_wrong_vec(a: wp.array(dtype=wp.mat33), b: wp.array(dtype=wp.vec4)):
    i = wp.tid()
    b[i] = a[i] * b[i]  # ERR


@wp.kernel
def k_return_value(a: wp.array(dtype=float)):
    i = wp.tid()
    return a[i]  # ERR


@wp.func
def mixed_returns(x: float):
    if x > 0.0:
        return x
    return int(x)  # ERR


@wp.kernel
def k_mixed_returns(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = mixed_returns(a[i])


@wp.kernel
def k_retype_variable(a: wp.array(dtype=float)):
    i = wp.tid()
    x = 1.0
    if i > 0:
        x = i  # ERR  (straight-line code may rebind a name to another type; a branch or loop may not)
    a[i] = x


@wp.kernel
def k_float_index(a: wp.array(dtype=float)):
    i = wp.tid()
    x = 1.5
    a[x] = 0.0  # ERR


@wp.kernel
def k_too_many_indices(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i, i] = 0.0  # ERR


@wp.kernel
def k_bad_attribute(a: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a[i] = wp.vec3(a[i].q, 0.0, 0.0)  # ERR


@wp.kernel
def k_unknown_name(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = undefined_name_xyz + 1.0  # ERR  # noqa: F821


@wp.kernel
def k_unknown_builtin(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.no_such_builtin(a[i])  # ERR


@wp.kernel
def k_callee_kernel(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 1.0


@wp.kernel
def k_call_kernel(a: wp.array(dtype=float)):
    i = wp.tid()
    k_callee_kernel(a)  # ERR


@wp.func
def recursive(n: int):
    if n <= 0:
        return 0
    return recursive(n - 1) + 1  # ERR


@wp.kernel
def k_recursion(a: wp.array(dtype=int)):
    i = wp.tid()
    a[i] = recursive(i)


@wp.kernel
def k_range_float(a: wp.array(dtype=float)):
    i = wp.tid()
    for k in range(2.5):  # ERR
        a[i] = 1.0


@wp.kernel
def k_tid_inconsistent(a: wp.array2d(dtype=float)):
    i = wp.tid()
    j, k = wp.tid()  # ERR
    a[j, k] = float(i)


@wp.kernel
def k_builtin_arity(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.sin(a[i], a[i])  # ERR


@wp.kernel
def k_store_float_into_int(a: wp.array(dtype=int), b: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = b[i]  # ERR


@wp.kernel
def k_vec_ctor_arity(a: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a[i] = wp.vec3(1.0, 2.0)  # ERR


@wp.kernel
def k_if_vector(a: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    if a[i]:  # ERR
        a[i] = wp.vec3()


@wp.kernel
def k_bitwise_float(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] & a[i]  # ERR


@wp.kernel
def k_missing_annotation(a: wp.array(dtype=float), n):  # ERR
    i = wp.tid()
    a[i] = float(n)


@wp.kernel
def k_tuple_unpack_count(a: wp.array(dtype=float)):
    i = wp.tid()
    x, y = 1.0, 2.0, 3.0  # ERR
    a[i] = x + y


@wp.kernel
def k_func_missing_arg(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = takes_float()  # ERR


@wp.kernel
def k_ternary_mismatch(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] if i > 2 else i  # ERR


CASES = [
    # (kernel, text at the reported column or None, message fragment (lower case))
    (k_list_comprehension, "[a[k]", "comprehension"),
    (k_lambda, "lambda", "lambda"),
    (k_try, "try", "try"),
    (k_with, "with", "with"),
    (k_class, "class", "class"),
    (k_nested_def, "def", "def"),
    (k_dict, "{0", "dict"),
    (k_set, "{1.0", "set"),
    (k_fstring, 'f"', "f-string"),
    (k_star_args, "*i", "starred expressions are only supported"),
    (k_global, "global", "global"),
    (k_del, "del", "del"),
    (k_yield, "yield", "yield"),
    (k_slice, "0]", "step cannot be zero"),
    (k_walrus, "x :=", ":="),
    (k_import, "import", "import"),
    (k_string, "a[i] = s", "str"),
    (k_for_else, "for", "else"),
    (k_iterate_array, "a:", "range"),
    (k_is, "a[i] is None", "is"),
    (k_float_times_int, "a[i] * i", "float32"),
    (k_int32_plus_int64, "a[i] + b[i]", "int64"),
    (k_wrong_func_arg, "takes_float(i)", "takes_float"),
    (k_vec_times_vec, "a[i] * a[i]", "vec"),
    (k_mat_times_wrong_vec, "a[i] * b[i]", "mat"),
    (k_return_value, "return", "return"),
    (k_retype_variable, "x = i", "x"),
    (k_float_index, "x]", "index"),
    (k_too_many_indices, "a[i, i]", "ind"),
    (k_bad_attribute, "a[i].q", "q"),
    (k_unknown_name, "undefined_name_xyz", "undefined_name_xyz"),
    (k_unknown_builtin, "wp.no_such_builtin", "no_such_builtin"),
    (k_call_kernel, "k_callee_kernel(a)", "kernel"),
    (k_range_float, "range(2.5)", "range"),
    (k_tid_inconsistent, "wp.tid()", "tid"),
    (k_builtin_arity, "wp.sin(a[i], a[i])", "sin"),
    (k_store_float_into_int, "a[i] = b[i]", "float32"),
    (k_vec_ctor_arity, "wp.vec3(1.0, 2.0)", "vec3"),
    (k_if_vector, "a[i]:", "vec"),
    (k_bitwise_float, "a[i] & a[i]", "float32"),
    (k_missing_annotation, "n)", "annotation"),
    (k_tuple_unpack_count, "x, y", "unpack"),
    (k_func_missing_arg, "takes_float()", "takes_float"),
    (k_ternary_mismatch, "a[i] if", "int32"),
]

FUNC_CASES = [
    # errors inside a @wp.func: (kernel, func, text in the func line, call-site text in the kernel, fragment)
    (k_mixed_returns, mixed_returns, "return int(x)", "mixed_returns(a[i])", "return"),
    (k_recursion, recursive, "recursive(n - 1)", "recursive(i)", "recurs"),
]


def _marked_line(fn, marker="# ERR"):
    lines, first = inspect.getsourcelines(fn)
    hits = [k for k, text in enumerate(lines) if marker in text]
    assert len(hits) == 1, f"{fn.__name__} needs exactly one {marker} marker"
    return first + hits[0], lines[hits[0]]


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line and "def " not in line:
            return first + k, line
    raise AssertionError(f"{text!r} not found in {fn.__name__}")


def _compile_error(kernel):
    with pytest.raises(wp.CompileError) as info:
        kernel.compile()
    return info.value


def _check_no_cxx(err):
    text = err.full_text if isinstance(err, wp.CompileError) else str(err)
    assert not CXX_TEXT.search(text), f"C++ text leaked into a user error:\n{text}"


@pytest.mark.parametrize("kernel,col_text,fragment", CASES, ids=[c[0].__name__ for c in CASES])
def test_compile_error_location(kernel, col_text, fragment):
    err = _compile_error(kernel)
    line, text = _marked_line(kernel.func)
    assert err.loc is not None, str(err)
    assert os.path.abspath(err.loc.file) == THIS_FILE
    assert err.loc.line == line, f"reported line {err.loc.line}, expected {line}:\n{err}"
    if col_text is not None:
        assert err.loc.col == text.index(col_text), f"reported col {err.loc.col}, expected {text.index(col_text)}:\n{err}"
    message = err.full_text  # str(err) is the first line; the excerpt, chain and hint are notes under it
    assert fragment.lower() in message.lower(), message
    assert f"{os.path.basename(THIS_FILE)}:{line}:" in str(err)  # file:line:col in the message line
    assert "^" in message  # caret under the span
    if hasattr(err, "__notes__"):
        assert "\n" not in str(err) and "^" in "\n".join(err.__notes__)  # printed under the message
    _check_no_cxx(err)


def test_enough_invalid_programs():
    assert len(CASES) + len(FUNC_CASES) >= 35


@pytest.mark.parametrize("kernel,func,func_text,call_text,fragment", FUNC_CASES,
                         ids=[c[0].__name__ for c in FUNC_CASES])
def test_error_inside_func_points_at_func_and_call_site(kernel, func, func_text, call_text, fragment):
    err = _compile_error(kernel)
    line, text = _line_of(func.func if hasattr(func, "func") else func, func_text)
    assert os.path.abspath(err.loc.file) == THIS_FILE
    assert err.loc.line == line, str(err)
    assert err.loc.col == text.index(func_text), str(err)
    assert fragment in err.full_text.lower()
    call_line, _ = _line_of(kernel.func, call_text)
    assert any(c.line == call_line and os.path.abspath(c.file) == THIS_FILE for c in err.chain), str(err)
    assert f"{os.path.basename(THIS_FILE)}\", line {call_line}" in err.full_text  # the call site is printed
    _check_no_cxx(err)


@wp.func
def deep_bad(x: float):
    return x & x  # the error


@wp.func
def deep_middle(x: float):
    return deep_bad(x) + 1.0


@wp.kernel
def k_deep(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = deep_middle(a[i])


def test_error_two_funcs_deep_chains_every_call_site():
    err = _compile_error(k_deep)
    assert err.loc.line == _line_of(deep_bad.func, "x & x")[0]
    chain_lines = {c.line for c in err.chain}
    assert _line_of(deep_middle.func, "deep_bad(x)")[0] in chain_lines
    assert _line_of(k_deep.func, "deep_middle(a[i])")[0] in chain_lines
    _check_no_cxx(err)


def test_error_is_raised_before_any_cxx(monkeypatch):
    from weft import pipeline

    def boom(*args, **kwargs):
        raise AssertionError("C++ must not be rendered for an invalid program")

    monkeypatch.setattr(pipeline, "render_module", boom)
    monkeypatch.setattr(pipeline, "build", boom)
    err = _compile_error(k_vec_times_vec)
    assert err.loc.line == _marked_line(k_vec_times_vec.func)[0]


def test_error_has_a_hint_for_float_times_int():
    err = _compile_error(k_float_times_int)
    assert err.hint, str(err)
    assert "float" in err.hint.lower() or "cast" in err.hint.lower()


# ---------------------------------------------------------------------------------------------------------------
# launch errors


@wp.kernel
def k_launch_target(n: int, a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = float(n)


@wp.kernel
def k_launch_2d(a: wp.array2d(dtype=float)):
    i, j = wp.tid()
    a[i, j] = 1.0


def _launch_error(kernel, dim, inputs):
    with pytest.raises(wp.LaunchError) as info:
        wp.launch(kernel, dim=dim, inputs=inputs)
    message = str(info.value)
    assert kernel.__name__ in message, message
    _check_no_cxx(info.value)
    return message


def test_launch_wrong_arg_count():
    msg = _launch_error(k_launch_target, 4, [1])
    assert "2" in msg and "1" in msg


def test_launch_wrong_dtype():
    msg = _launch_error(k_launch_target, 4, [1, wp.zeros(4, dtype=wp.float64)])
    assert "'a'" in msg and "float32" in msg and "float64" in msg


def test_launch_wrong_ndim():
    msg = _launch_error(k_launch_target, 4, [1, wp.zeros((2, 2), dtype=float)])
    assert "'a'" in msg and ("ndim" in msg or "2" in msg)


def test_launch_float_for_int():
    msg = _launch_error(k_launch_target, 4, [1.5, wp.zeros(4, dtype=float)])
    assert "'n'" in msg


def test_launch_numpy_array_for_weft_array_dtype_mismatch():
    msg = _launch_error(k_launch_target, 4, [1, np.zeros(4, dtype=np.int64)])
    assert "'a'" in msg


def test_launch_tid_arity_vs_dim():
    msg = _launch_error(k_launch_2d, 4, [wp.zeros((4, 4), dtype=float)])
    assert "2" in msg and "1" in msg


def test_launch_bad_dim():
    with pytest.raises(wp.LaunchError):
        wp.launch(k_launch_target, dim=(1, 2, 3, 4, 5), inputs=[1, wp.zeros(4, dtype=float)])
    with pytest.raises(wp.LaunchError):
        wp.launch(k_launch_target, dim=-1, inputs=[1, wp.zeros(4, dtype=float)])


def test_calling_a_kernel_on_the_host():
    with pytest.raises(wp.LaunchError):
        k_launch_target(1, wp.zeros(4, dtype=float))


def test_launch_of_a_non_kernel():
    with pytest.raises(wp.LaunchError):
        wp.launch(takes_float, dim=1, inputs=[1.0])


def test_valid_launch_after_errors_still_works():
    a = wp.zeros(4, dtype=float)
    wp.launch(k_launch_target, dim=4, inputs=[7, a])
    np.testing.assert_array_equal(a.numpy(), 7.0)


@wp.kernel
def k_missing_wp_function():
    x = wp.nonexistent_func_xyz()  # ERR


@wp.kernel
def k_missing_wp_namespace():
    x = wp.foo_xyz.bar.tid()  # ERR


def test_unresolved_names_raise_warps_exception_types():
    # Warp raises KeyError for an undefined symbol, AttributeError for a missing module attribute and RuntimeError
    # for other code-generation errors; weft's CompileErrors are those too, keeping their source locations
    err = _compile_error(k_unknown_name)
    assert isinstance(err, KeyError) and isinstance(err, RuntimeError)
    assert "Referencing undefined symbol: undefined_name_xyz" in str(err) and not str(err).startswith("'")  # no repr
    err = _compile_error(k_missing_wp_function)
    assert isinstance(err, AttributeError) and "Could not find function wp.nonexistent_func_xyz" in str(err)
    assert err.loc.line == _marked_line(k_missing_wp_function.func)[0]
    err = _compile_error(k_missing_wp_namespace)
    assert isinstance(err, AttributeError) and "`foo_xyz` is not an attribute of wp" in str(err)


@wp.kernel
def k_vec_copy_length():
    v = wp.vec3(wp.vec2(1.0, 2.0))  # ERR


@wp.kernel
def k_mat_fill_type(x: wp.float64):
    m = wp.mat22(x)  # ERR


@wp.kernel
def k_mat_value_count():
    m = wp.mat22(1.0, 2.0, 3.0)  # ERR


@wp.kernel
def k_vector_length_copy():
    v = wp.vector(wp.vec2(1.0, 2.0), length=3)  # ERR


@pytest.mark.parametrize("kernel,reason", [
    (k_vec_copy_length, "incompatible vector of length 3 given when copy constructing a vector of length 2"),
    (k_vector_length_copy, "incompatible vector of length 3 given when copy constructing a vector of length 2"),
    (k_mat_fill_type, "the value used to fill this matrix is expected to be of the type `float32`"),
    (k_mat_value_count, r"incompatible number of values given \(3\) when constructing a matrix of shape \(2, 2\)"),
])
def test_constructor_errors_end_with_warps_reason(kernel, reason):
    # Warp's reason ends the message line (its tests anchor it with `$`); the source excerpt is a note under it
    err = _compile_error(kernel)
    assert isinstance(err, RuntimeError) and re.search(reason + "$", str(err)), str(err)
    assert err.loc.line == _marked_line(kernel.func)[0] and "^" in err.full_text
