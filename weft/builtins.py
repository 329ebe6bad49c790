"""Public builtin handles (``wp.sin``, ``wp.dot``, ``wp.tid`` ...).

Inside kernels the frontend sees the ``_wp_kernel_builtin_`` name and resolves the op in the registry. On the
host a handle runs the op's NumPy implementation where one is registered.
"""

from __future__ import annotations

import builtins as _py

import numpy as np

from .errors import Error
from .frontend.grad_call import grad
from .hostcall import call_on_host, numpy_result
from .ops import registry
from .ops.forms import Form, declare
from .types.composite import matrix, quaternion, transformation, vector
from .types.tiles import HostTile, tile_annotation


class Builtin:
    """A weft builtin function; callable in kernels and (where a host implementation exists) in Python."""

    def __init__(self, name: str):
        self._wp_kernel_builtin_ = name
        self.__name__ = name
        ops = registry.overloads(name)
        self.__doc__ = next((op.doc for op in ops if op.doc), f"weft builtin {name}")

    def __call__(self, *args, **kwargs):
        factory = _HOST_FACTORIES.get(self.__name__)
        if factory is not None:
            return factory(*args, **kwargs)
        if kwargs:
            raise Error(f"wp.{self.__name__}() takes no keyword arguments when called from Python")
        for op in registry.overloads(self.__name__):
            if op.host is not None:
                try:
                    out = op.host(*[np.asarray(a) if not np.isscalar(a) else a for a in args])
                except (TypeError, ValueError):
                    continue
                return numpy_result(args, out)
        return call_on_host(self.__name__, args)

    def __repr__(self) -> str:
        return f"<weft builtin {self.__name__}>"


class TileBuiltin(Builtin):
    """``wp.tile``: the builtin that makes a tile in kernels; subscripted, the tile type (``wp.tile[float, M, N]``)."""

    def __getitem__(self, params):
        return tile_annotation(params)

    def __call__(self, *args, **kwargs):
        if not args and "dtype" in kwargs and set(kwargs) <= {"dtype", "shape", "storage", "layout"}:
            # wp.tile(dtype=, shape=) on the host: a tile description, as Warp's tile instances are
            t = tile_annotation((kwargs["dtype"], *_shape_params(kwargs.get("shape"))))
            return HostTile(t.dtype, t.shape, kwargs.get("storage", t.storage), kwargs.get("layout", "rowmajor"))
        return super().__call__(*args, **kwargs)


def _shape_params(shape) -> tuple:
    if shape is None:
        return ()
    return (int(shape),) if isinstance(shape, int) else tuple(shape)


def _special(name: str, doc: str):
    def fn(*args, **kwargs):
        raise Error(f"wp.{name}() can only be used inside a kernel or func")
    fn.__name__ = name
    fn.__doc__ = doc
    fn._wp_kernel_builtin_ = name
    return fn


tid = _special("tid", "Index of the current thread in the launch grid: ``i = wp.tid()`` or ``i, j = wp.tid()``.")
printf = _special("printf", "C-style formatted print from a kernel.")
def _transform_setter(name: str, first: int, length: int, doc: str):
    def fn(t, v):
        """On the host: changes the transform ``t`` in place (as Warp; in kernels the frontend's form)."""
        a = getattr(t, "_a", None)
        if a is None or a.shape != (7,):
            raise TypeError(f"wp.{name}() expects a transform as its first argument, got {type(t).__name__}")
        vals = np.asarray(v, dtype=a.dtype).reshape(-1)
        if vals.shape != (length,):
            raise TypeError(f"wp.{name}() expects {length} components, got {vals.size}")
        a[first:first + length] = vals
    fn.__name__ = name
    fn.__doc__ = doc
    fn._wp_kernel_builtin_ = name
    return fn


transform_set_translation = _transform_setter("transform_set_translation", 0, 3, "``wp.transform_set_translation(t, "
                                              "p)``: sets the translation of the transform variable ``t``.")
transform_set_rotation = _transform_setter("transform_set_rotation", 3, 4, "``wp.transform_set_rotation(t, q)``: "
                                           "sets the rotation of the transform variable ``t``.")
where = _special("where", "``wp.where(cond, value_if_true, value_if_false)``: one of two values (both are evaluated); "
                          "differentiable.")
declare(transform_set_translation, "transform_set_translation", Form.TRANSFORM_SET, "p")
declare(transform_set_rotation, "transform_set_rotation", Form.TRANSFORM_SET, "q")
declare(where, "where", Form.WHERE)
select = declare(_special("select", "``wp.select(cond, value_if_false, value_if_true)``: Warp's deprecated form of "
                                   "``wp.where`` with the values the other way round (a ``DeprecationWarning`` when "
                                   "compiled)."), "select", Form.WHERE, "false_first")
cast = declare(_special("cast", "``wp.cast(a, dtype)``: the bytes of ``a`` reinterpreted as ``dtype``, a value type "
                               "of the same size (scalar, vector, matrix or struct); not differentiable."),
               "cast", Form.BIT_CAST)
unot = declare(_special("unot", "``wp.unot(a)``: logical not of a boolean or integer (True for zero)."), "unot",
               Form.UNOT)

# tile builtins the frontend writes with other tile ops (weft/frontend/tiles.py)
tile_empty = declare(_special("tile_empty", "``tile_empty(shape, dtype=float, storage='register')``: a tile whose "
                              "contents are undefined until written (weft fills it with zeros)."),
                     "tile_empty", Form.TILE_EMPTY, "tile_zeros")
tile_astype = declare(_special("tile_astype", "``tile_astype(t, dtype)``: the tile converted element-wise to a scalar "
                               "type (differentiable between floating-point types)."), "tile_astype", Form.TILE_ASTYPE)
tile_dot = declare(_special("tile_dot", "``tile_dot(a, b)``: the sum of the element-wise products (``dot`` for "
                            "vectors, ``ddot`` for matrices) as a one-element tile."), "tile_dot", Form.TILE_DOT)
class TileStackAnnotation:
    """What ``wp.tile_stack(capacity, dtype)`` returns outside a kernel (Warp writes it as a parameter annotation);
    weft's tile stacks live in straight-line kernel code only, so a @wp.func taking one does not compile."""

    def __init__(self, capacity, dtype):
        self.capacity, self.dtype = capacity, dtype

    def __repr__(self) -> str:
        return f"tile_stack(capacity={self.capacity!r}, dtype={getattr(self.dtype, '__name__', self.dtype)})"


def tile_stack(capacity, dtype):
    """``tile_stack(capacity, dtype)``: an empty block-wide stack of at most capacity elements (in kernels;
    weft/frontend/tile_stack.py)."""
    return TileStackAnnotation(capacity, dtype)


tile_stack._wp_kernel_builtin_ = "tile_stack"
declare(tile_stack, "tile_stack", Form.TILE_STACK, "create")
tile_stack_push = declare(_special("tile_stack_push", "``tile_stack_push(s, value, has_value)``: push one value per "
                                   "contributing lane; returns its slot or -1."), "tile_stack_push", Form.TILE_STACK,
                          "push")
tile_stack_pop = declare(_special("tile_stack_pop", "``value, slot = tile_stack_pop(s)``: pop up to one value per lane "
                                  "(slot -1 when none is left)."), "tile_stack_pop", Form.TILE_STACK, "pop")
tile_stack_clear = declare(_special("tile_stack_clear", "``tile_stack_clear(s)``: empty the stack."),
                           "tile_stack_clear", Form.TILE_STACK, "clear")
tile_stack_count = declare(_special("tile_stack_count", "``tile_stack_count(s)``: the number of elements."),
                           "tile_stack_count", Form.TILE_STACK, "count")
tile_scatter_add = declare(_special("tile_scatter_add", "``tile_scatter_add(a, i, ..., value, has_value, atomic=True)``: "
                                    "each lane with has_value adds its value to element (i, ...) of a, in place."),
                           "tile_scatter_add", Form.TILE_STACK, "scatter_add", updates=(0,))
tile_scatter_masked = declare(_special("tile_scatter_masked", "``tile_scatter_masked(a, i, ..., value, has_value)``: "
                                       "each lane with has_value writes its value into element (i, ...) of a, in "
                                       "place."), "tile_scatter_masked", Form.TILE_STACK, "scatter_masked",
                              updates=(0,))
tile_axpy = declare(_special("tile_axpy", "``tile_axpy(alpha, src, dest)``: ``dest += alpha * src`` in place."),
                    "tile_axpy", Form.TILE_AXPY, updates=(2,))


def _in_place_of(name: str, op: str, target: int):
    """``name(...)``: the tile op ``op`` with its result written over the tile variable passed as argument ``target``
    (Warp's in-place forms; weft's are differentiable like the op)."""
    return declare(_special(name, f"``{name}(...)``: ``{op}(...)`` written over its argument {target} in place."),
                   name, Form.TILE_IN_PLACE_OF, op, updates=(target,))


tile_cholesky_inplace = _in_place_of("tile_cholesky_inplace", "tile_cholesky", 0)
tile_cholesky_solve_inplace = _in_place_of("tile_cholesky_solve_inplace", "tile_cholesky_solve", 1)
tile_lower_solve_inplace = _in_place_of("tile_lower_solve_inplace", "tile_lower_solve", 1)
tile_upper_solve_inplace = _in_place_of("tile_upper_solve_inplace", "tile_upper_solve", 1)


def print(value) -> None:  # Warp's name (shadows the builtin in this module only)
    """``wp.print(value)``: print one value and a newline (inside kernels as Python's ``print`` there; on the host
    Python's ``print``)."""
    _py.print(value)


declare(print, "print", Form.PRINT)


def static(expr):
    """Evaluate ``expr`` at compile time (inside kernels); on the host it returns ``expr`` unchanged."""
    return expr


static._wp_kernel_builtin_ = "static"
declare(static, "static", Form.STATIC)
declare(grad, "grad", Form.GRAD)


def expect_eq(a, b):
    """In kernels: print a failure when ``a != b``. On the host: assert."""
    if not np.array_equal(np.asarray(a), np.asarray(b)):
        raise AssertionError(f"expect_eq failed: {a!r} != {b!r}")


expect_eq._wp_kernel_builtin_ = "expect_eq"


def expect_neq(a, b):
    """In kernels: print a failure when ``a == b``. On the host: assert."""
    if np.array_equal(np.asarray(a), np.asarray(b)):
        raise AssertionError(f"expect_neq failed: {a!r} == {b!r}")


expect_neq._wp_kernel_builtin_ = "expect_neq"


def expect_near(a, b, tolerance=1e-6):
    """In kernels: print a failure when ``|a - b| > tolerance`` (per component). On the host: assert."""
    if not np.all(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)) <= tolerance):
        raise AssertionError(f"expect_near failed: {a!r} vs {b!r}")


expect_near._wp_kernel_builtin_ = "expect_near"

def _host_identity(n: int, dtype=float):
    return matrix(shape=(n, n), dtype=dtype)(*np.eye(n).ravel())


def _host_quat_identity(dtype=float):
    return quaternion(dtype=dtype)(0.0, 0.0, 0.0, 1.0)


def _host_transform_identity(dtype=float):
    return transformation(dtype=dtype)(vector(3, dtype)(0.0, 0.0, 0.0), _host_quat_identity(dtype))


# builtins whose result type comes from keyword arguments (n=, dtype=) rather than from argument values
_HOST_FACTORIES = {
    "identity": _host_identity, "quat_identity": _host_quat_identity, "transform_identity": _host_transform_identity,
}


def public_builtins() -> dict[str, Builtin]:
    names = {op.name for op in registry.all_ops() if op.public}
    return {name: (TileBuiltin if name == "tile" else Builtin)(name) for name in sorted(names)}
