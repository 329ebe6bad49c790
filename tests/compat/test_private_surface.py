"""``weft._src``: Warp's private module paths map to weft's real objects, and Warp-only internals raise."""

import warnings

import pytest

import weft as wp
from weft._src import codegen, context, deterministic, logger, types, utils
from weft._src._unsupported import PrivateAPIError


def test_types_are_wefts_own():
    assert types.scalar_base is wp.types.Scalar and types.float_base is wp.types.Float
    assert issubclass(wp.float16, types.float_base) and issubclass(wp.uint8, types.int_base)
    assert not issubclass(wp.float32, types.int_base)
    assert types.matrix is wp.types.matrix and types.array is wp.array
    assert types.float_types == wp.types.float_types and wp.int64 in types.int_types
    assert wp.handle is wp.uint64 and wp.types.handle is wp.uint64
    assert codegen.WarpCodegenError is wp.CompileError
    assert utils.array_scan is wp.utils.array_scan and utils.check_p2p() is False


def test_context_queries():
    assert context.type_str(list[int]) == "list[int]"
    assert context.type_str(tuple[int, ...]) == "tuple[int, ...]"
    assert context.type_str(tuple[float, wp.vec3f]) == "tuple[float, vec3f]"
    assert context.runtime.core.wp_is_mathdx_enabled() is False
    assert context.runtime.is_cuda_enabled == wp.is_cuda_available()
    v = context.runtime.driver_version
    assert v is None or (isinstance(v, tuple) and v[0] >= 10)
    assert "add" in context.builtin_functions and "sin" in context.builtin_functions
    with pytest.raises(AttributeError, match="native library entry point"):
        context.runtime.core.wp_cuda_graph_alloc_query  # noqa: B018
    assert deterministic.DETERMINISTIC_RUN_TO_RUN is wp.DeterministicMode.RUN_TO_RUN


def test_internals_raise():
    with pytest.raises(PrivateAPIError, match="ModuleBuilder"):
        context.ModuleBuilder(None)
    with pytest.raises(wp.Error, match="code generator"):
        codegen.codegen_func_forward(None)


def test_check_array_shape():
    """warp._src.types.check_array_shape is wp.array's own shape validator."""
    types.check_array_shape((2**31 - 1, 4))
    with pytest.raises(ValueError, match="signed 32-bit integer"):
        types.check_array_shape((2**31,))
    with pytest.raises(ValueError, match="non-negative"):
        types.check_array_shape((3, -1))


def test_log_warning_once():
    logger._warnings_seen.clear()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        logger.log_warning("a", DeprecationWarning, once=True)
        logger.log_warning("a", DeprecationWarning, once=True)
        logger.log_warning("b", once=True)
        logger.log_warning("c")
        logger.log_warning("c")
    assert [(str(w.message), w.category) for w in seen] == [
        ("a", DeprecationWarning), ("b", UserWarning), ("c", UserWarning), ("c", UserWarning)]
    logger._warnings_seen.clear()


def test_scalar_ctypes():
    # Warp's scalar classes carry their ctypes type (its tests build values as ``dtype._type_(x).value``)
    assert wp.int16._type_(-3).value == -3 and wp.uint8._type_(300).value == 44
    assert wp.float32._type_(1.5).value == 1.5 and wp.float16._type_ is __import__("ctypes").c_uint16
    assert types.scalar_base._type_ is None
