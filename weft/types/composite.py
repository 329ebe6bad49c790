"""Host-side vector, matrix, quaternion and transform classes, created on demand and cached by shape/dtype.

Instances are small NumPy-backed values with the operators kernels use, so the same expression means the
same thing on the host and in a kernel (``m * v`` is a matrix-vector product, ``q * q`` a quaternion product).
"""

from __future__ import annotations

import ctypes
import numbers
import operator
from typing import Any

import numpy as np

from .. import config
from ..ir import types as T
from ..ops.forms import Form, declare
from . import scalars as S

_SWIZZLE = {"x": 0, "y": 1, "z": 2, "w": 3}
_NATIVE_NP = (np.float32, np.int32, np.bool_)  # components Warp's host vectors return as Python numbers


def _scalar_cls(dtype) -> type:
    from .mapping import scalar_class

    return scalar_class(dtype)


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NumPy scalars meet value types as Python numbers do (``np.float32(2) * q`` is a quaternion, as in Warp); every
    other ufunc call computes on the plain component arrays (``ndarray * v`` stays an ndarray)."""
    reflected = _REFLECTED.get(ufunc)
    if method == "__call__" and not kwargs and reflected is not None and len(inputs) == 2 \
            and inputs[1] is self and isinstance(inputs[0], np.generic):
        return getattr(self, reflected)(inputs[0])
    if method == "__call__" and not kwargs and reflected is not None and len(inputs) == 2 \
            and inputs[0] is self and isinstance(inputs[1], np.generic):
        return getattr(self, "__" + reflected[3:])(inputs[1])
    plain = [x._a if isinstance(x, (VectorBase, MatrixBase)) else x for x in inputs]
    return getattr(ufunc, method)(*plain, **kwargs)


_REFLECTED = {np.multiply: "__rmul__", np.true_divide: "__rtruediv__", np.add: "__radd__",
              np.subtract: "__rsub__"}


def _wrapped_array(v, np_type):
    """Components for a slice of a vector of ``np_type`` (integers wrap around, see ``_wrapped``)."""
    if np.issubdtype(np_type, np.integer):
        return np.array(v).astype(np_type)
    return np.asarray(v, dtype=np_type)


def _wrapped(v, np_type):
    """A component value for a vector of ``np_type``: integers wrap around as C integers do (``-1`` stored into a
    uint8 component is 255, as in Warp)."""
    if np.issubdtype(np_type, np.integer) and isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return np.array(v).astype(np_type)
    return v


def _storage_np(scls) -> type:
    """The NumPy scalar type storing components of scalar class ``scls`` (bfloat16: ml_dtypes' when installed, else
    float32)."""
    np_type = scls._np_
    if isinstance(np_type, type):
        return np_type
    bf16 = scls._ir_.np_dtype.type
    return np.float32 if bf16 is np.uint16 else bf16


def _is_sequence(x) -> bool:
    return isinstance(x, (list, tuple, np.ndarray, VectorBase))


def _is_component(x) -> bool:
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, np.void)


def _check_component(cls, v) -> None:
    """A value assigned to one component must be a number (Warp's TypeError and wording otherwise)."""
    if not _is_component(v):
        raise TypeError(f"Expected to assign a `{cls._wp_scalar_type_.__name__}` value but got "
                        f"`{type(v).__name__}` instead")


def _check_components(cls, values, n: int) -> None:
    """A sequence assigned to ``n`` components (a slice, a matrix row): numbers, ``n`` of them (or one number for
    all)."""
    if _is_component(values):
        return
    if isinstance(values, (VectorBase, np.ndarray)):
        seq = list(np.asarray(values).reshape(-1))
    elif isinstance(values, (list, tuple)):
        seq = list(values)
    else:
        seq = None
    if seq is None or not all(_is_component(x) for x in seq):
        bad = values if seq is None else next(x for x in seq if not _is_component(x))
        raise TypeError(f"Expected to assign a slice from a sequence of `{cls._wp_scalar_type_.__name__}` values but "
                        f"got `{type(bad).__name__}` instead")
    if len(seq) != n:
        raise ValueError(f"Can only assign sequence of same size: {n} component(s) take {len(seq)} value(s)")


def _note(err: BaseException, text: str) -> None:
    """Attach ``text`` to ``err`` as a note (shown under the message in tracebacks; Python 3.11+)."""
    if hasattr(err, "add_note"):
        err.add_note(text)


def _from_ptr(cls, ptr):
    """The value stored at host address ``ptr`` (a copy)."""
    import ctypes

    if not ptr:
        raise RuntimeError(f"NULL pointer exception: {cls.__name__}.from_ptr(0)")
    n = int(np.prod(getattr(cls, "_shape_", (cls._length_,))))
    dt = np.dtype(cls._np_)
    raw = (ctypes.c_char * (n * dt.itemsize)).from_address(int(ptr))
    return cls._wrap(np.frombuffer(raw, dtype=dt, count=n).copy())


class VectorBase:
    """Base of all ``wp.vector`` classes."""

    __slots__ = ("__dict__", "_a")  # __dict__: other attributes may be set, as on Warp's vectors
    _ir_: T.VectorType
    _length_: int = 0
    _wp_scalar_type_: type = S.float32
    _wp_generic_type_str_ = "vec_t"
    _np_: type = np.float32

    def __init__(self, *args):
        n = self._length_
        if len(args) == 0:
            self._a = np.zeros(n, dtype=self._np_)
        elif len(args) == 1:
            (a,) = args
            if isinstance(a, (numbers.Number, np.generic)):
                self._a = np.full(n, a, dtype=self._np_)
            else:
                arr = np.asarray(a._a if isinstance(a, (VectorBase, MatrixBase)) else a, dtype=self._np_).reshape(-1)
                if arr.size != n:
                    raise ValueError(f"Invalid number of arguments in vector constructor, expected {n} elements, "
                                     f"got {arr.size}")
                self._a = arr.copy()
        elif len(args) == n:
            if np.issubdtype(self._np_, np.integer) and all(isinstance(x, (int, np.integer)) for x in args):
                self._a = np.array([int(x) for x in args]).astype(self._np_)  # integers wrap around, as in C/Warp
            else:
                self._a = np.array([float(x) if self._np_ in (np.float16, np.float32, np.float64) else x
                                    for x in args], dtype=self._np_)
        else:
            raise ValueError(f"Invalid number of arguments in vector constructor, expected {n} elements, "
                             f"got {len(args)}")

    @classmethod
    def _wrap(cls, arr):
        out = cls.__new__(cls)
        out._a = np.asarray(arr, dtype=cls._np_).reshape(cls._length_)
        return out

    # sequence protocol
    def __len__(self) -> int:
        return self._length_

    def __iter__(self):
        return iter(self._a.tolist())

    from_ptr = classmethod(_from_ptr)

    def __getitem__(self, i):
        if not isinstance(i, (int, np.integer, slice)):
            raise KeyError(f"Invalid key {i!r}, expected int or slice")
        r = self._a[i]
        if isinstance(r, np.ndarray):  # a slice is a vector of the sliced length, as in Warp
            return vector(len(r), self._wp_scalar_type_)._wrap(r.copy())
        return r.item() if config.legacy_scalar_return_types else r

    def __setitem__(self, i, v) -> None:
        if isinstance(i, slice):
            _check_components(type(self), v, len(range(*i.indices(self._length_))))
            self._a[i] = _wrapped_array(v._a if isinstance(v, VectorBase) else v, self._np_)
        elif isinstance(i, (int, np.integer)):
            _check_component(type(self), v)
            self._a[i] = _wrapped(v, self._np_)
        else:
            raise KeyError(f"Invalid key {i!r}, expected int or slice")

    def __getattr__(self, name: str):
        idx = _SWIZZLE.get(name)  # one component (x, y, z, w), as Warp; v.xy is an error there too
        if idx is not None and idx < self._length_:
            return self._a[idx]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        idx = _SWIZZLE.get(name)
        if idx is not None and idx < self._length_:
            self._a[idx] = _wrapped(value, self._np_)
        elif 0 < len(name) <= 4 and all(ch in _SWIZZLE for ch in name):  # v.xy = ..., v2.z = ...: Warp's error
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        else:
            object.__setattr__(self, name, value)

    def __array__(self, dtype=None, copy=None):
        return self._a.astype(dtype) if dtype is not None else self._a.copy()

    def __repr__(self) -> str:
        # Warp's form: float32 / int32 / bool components as Python numbers, others with their type (float64(1.0))
        items = self._a.tolist()
        if self._np_ not in _NATIVE_NP:
            name = self._wp_scalar_type_.__name__
            return f"{type(self).__name__}([{', '.join(f'{name}({x!r})' for x in items)}])"
        return f"{type(self).__name__}({items!r})"

    def __str__(self) -> str:
        return str(self._a.tolist())

    def __eq__(self, other) -> bool:
        try:
            return bool(np.array_equal(self._a, np.asarray(other, dtype=self._np_).reshape(-1)))
        except (TypeError, ValueError):
            return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None
    __array_ufunc__ = _array_ufunc

    # arithmetic: component-wise, with scalars broadcast
    def _other(self, other):
        if isinstance(other, VectorBase):
            if other._length_ != self._length_:
                raise TypeError(f"cannot combine {type(self).__name__} with {type(other).__name__}")
            return other._a
        if isinstance(other, (numbers.Number, np.generic)):
            return other
        return NotImplemented

    # Python numbers broadcast over the components (vec3f(1, 2, 3) + 1 -> vec3f(2, 3, 4)), in the vector's dtype
    def __add__(self, o):
        o = self._other(o)
        return NotImplemented if o is NotImplemented else self._wrap(self._a + self._np_(o) if np.ndim(o) == 0
                                                                     else self._a + o)

    def __radd__(self, o):
        return self.__add__(o)

    def __sub__(self, o):
        o = self._other(o)
        return NotImplemented if o is NotImplemented else self._wrap(self._a - self._np_(o) if np.ndim(o) == 0
                                                                     else self._a - o)

    def __rsub__(self, o):
        o = self._other(o)
        return NotImplemented if o is NotImplemented else self._wrap(self._np_(o) - self._a if np.ndim(o) == 0
                                                                     else o - self._a)

    def __mod__(self, o):  # C's remainder (the sign of the dividend), as kernels compute it
        o = self._other(o)
        return NotImplemented if o is NotImplemented else self._wrap(np.fmod(self._a, self._np_(o) if np.ndim(o) == 0
                                                                              else o))

    def __neg__(self):
        return self._wrap(-self._a)

    def __pos__(self):
        return self._wrap(self._a.copy())

    def __mul__(self, o):
        if isinstance(o, (numbers.Number, np.generic)):
            return self._wrap(self._a * o)
        return NotImplemented

    def __rmul__(self, o):
        if isinstance(o, (numbers.Number, np.generic)):
            return self._wrap(o * self._a)
        return NotImplemented

    def __truediv__(self, o):
        if isinstance(o, (numbers.Number, np.generic)):
            return self._wrap(self._a / o)
        if isinstance(o, VectorBase):
            return self._wrap(self._a / o._a)
        return NotImplemented

    def __rtruediv__(self, o):
        if isinstance(o, (numbers.Number, np.generic)):
            return self._wrap(o / self._a)
        return NotImplemented

    def __matmul__(self, o):
        if isinstance(o, MatrixBase):
            return o.__rmatmul__(self)
        return NotImplemented


class MatrixBase:
    """Base of all ``wp.matrix`` classes. Constructed from rows*cols scalars, from row vectors, or from nested lists."""

    __slots__ = ("__dict__", "_a")  # __dict__: other attributes may be set, as on Warp's matrices
    _ir_: T.MatrixType
    _shape_: tuple[int, int] = (0, 0)
    _length_: int = 0
    _wp_scalar_type_: type = S.float32
    _wp_generic_type_str_ = "mat_t"
    _np_: type = np.float32

    def __init__(self, *args):
        r, c = self._shape_
        if len(args) == 0:
            self._a = np.zeros((r, c), dtype=self._np_)
        elif len(args) == 1:
            (a,) = args
            if isinstance(a, (numbers.Number, np.generic)):
                self._a = np.full((r, c), a, dtype=self._np_)
            else:
                arr = np.asarray(a._a if isinstance(a, MatrixBase) else a, dtype=self._np_)
                if arr.size != r * c:
                    raise ValueError(f"Invalid number of arguments in matrix constructor, expected {r * c} elements, "
                                     f"got {arr.size}")
                self._a = arr.reshape(r, c).copy()
        elif len(args) == r and all(isinstance(x, (VectorBase, list, tuple, np.ndarray)) for x in args):
            rows = [np.asarray(x, dtype=self._np_).reshape(-1) for x in args]
            for x, row in zip(args, rows):
                if row.size != c:
                    raise TypeError(f"Invalid argument in matrix constructor, expected row of length {c}, got {x}")
            self._a = np.array(rows, dtype=self._np_)
        elif len(args) == r * c:
            self._a = np.array(args, dtype=self._np_).reshape(r, c)
        else:
            raise ValueError(f"Invalid number of arguments in matrix constructor, expected {r * c} elements, "
                             f"got {len(args)}")

    @classmethod
    def _wrap(cls, arr):
        out = cls.__new__(cls)
        out._a = np.asarray(arr, dtype=cls._np_).reshape(cls._shape_)
        return out

    def _row_cls(self):
        return vector(self._shape_[1], self._wp_scalar_type_)

    def __len__(self) -> int:
        return self._shape_[0]

    def __iter__(self):
        row = self._row_cls()
        return (row._wrap(self._a[i]) for i in range(self._shape_[0]))

    from_ptr = classmethod(_from_ptr)

    @staticmethod
    def _check_key(key) -> bool:
        """True for an element key ``(i, j)``, False for a row key; Warp's KeyError for anything else."""
        if isinstance(key, tuple):
            if len(key) != 2:
                raise KeyError(f"Invalid key, expected one or two indices, got {len(key)}")
            return True
        if not isinstance(key, (int, np.integer, slice)):
            raise KeyError(f"Invalid key {key!r}, expected int or pair of ints")
        return False

    def __getitem__(self, key):
        self._check_key(key)  # Warp's KeyError for a key that is neither an index, a slice nor a pair
        r = self._a[key]
        if isinstance(r, np.ndarray):  # rows, a row/column piece, or a block: a vector or matrix, as in Warp
            if r.ndim == 1:
                return vector(len(r), self._wp_scalar_type_)._wrap(r.copy())
            shape = (0, 0) if 0 in r.shape else r.shape  # a zero extent zeroes both, as Warp
            return matrix(shape, self._wp_scalar_type_)._wrap(r.reshape(shape).copy())
        return r.item() if config.legacy_scalar_return_types else r

    def __setitem__(self, key, value) -> None:
        if self._check_key(key):
            if all(isinstance(k, (int, np.integer)) for k in key):
                _check_component(type(self), value)
        elif isinstance(key, (int, np.integer)) and not _is_component(value):
            _check_components(type(self), value, self._shape_[1])
        self._a[key] = np.asarray(value, dtype=self._np_)

    def __array__(self, dtype=None, copy=None):
        return self._a.astype(dtype) if dtype is not None else self._a.copy()

    def __repr__(self) -> str:
        rows = ", ".join("[" + ", ".join(repr(x) for x in row) + "]" for row in self._a.tolist())
        return f"{type(self).__name__}({rows})"

    def __str__(self) -> str:
        return "[" + ",\n ".join(str(row) for row in self._a.tolist()) + "]"

    def __eq__(self, other) -> bool:
        try:
            return bool(np.array_equal(self._a, np.asarray(other, dtype=self._np_).reshape(self._shape_)))
        except (TypeError, ValueError):
            return NotImplemented

    __hash__ = None
    __array_ufunc__ = _array_ufunc

    def __add__(self, o):
        if isinstance(o, MatrixBase) and o._shape_ == self._shape_:
            return self._wrap(self._a + o._a)
        return NotImplemented

    def __sub__(self, o):
        if isinstance(o, MatrixBase) and o._shape_ == self._shape_:
            return self._wrap(self._a - o._a)
        return NotImplemented

    def __neg__(self):
        return self._wrap(-self._a)

    def __pos__(self):
        return self._wrap(self._a.copy())

    def __mul__(self, o):
        if isinstance(o, (numbers.Number, np.generic)):
            return self._wrap(self._a * o)
        return self.__matmul__(o)

    def __rmul__(self, o):
        if isinstance(o, (numbers.Number, np.generic)):
            return self._wrap(o * self._a)
        if isinstance(o, VectorBase):
            return self.__rmatmul__(o)
        return NotImplemented

    def __truediv__(self, o):
        if isinstance(o, (numbers.Number, np.generic)):
            return self._wrap(self._a / o)
        return NotImplemented

    def __rtruediv__(self, o):
        # Warp divides the scalar by every component
        if isinstance(o, (numbers.Number, np.generic)):
            return self._wrap(o / self._a)
        return NotImplemented

    def __rmatmul__(self, o):
        """``v @ m`` / ``v * m``: the row vector ``v`` times the matrix (``m``'s transpose applied to ``v``)."""
        if not isinstance(o, VectorBase):
            return NotImplemented
        if o._np_ is not self._np_:
            raise RuntimeError(f"Couldn't find a function 'mul' compatible with the arguments "
                               f"'{type(o).__name__}, {type(self).__name__}'")  # Warp's: no mixed precision
        if o._length_ != self._shape_[0]:
            raise ValueError(f"a vector of length {o._length_} cannot multiply a {self._shape_} matrix from the left")
        return vector(self._shape_[1], self._wp_scalar_type_)._wrap(o._a @ self._a)

    def _row_index(self, i: int, n: int, what: str) -> int:
        i = operator.index(i)
        if not -n <= i < n:
            err = IndexError(f"Invalid {what} index")  # Warp's message (matched exactly); the detail in a note
            _note(err, f"{what} index {i} is out of range for a {self._shape_[0]}x{self._shape_[1]} matrix")
            raise err
        return i

    def get_row(self, r):
        """Row ``r`` (negative counts from the end) as a new vector."""
        return vector(self._shape_[1], self._wp_scalar_type_)._wrap(self._a[self._row_index(r, self._shape_[0],
                                                                                            "row")].copy())

    def get_col(self, c):
        """Column ``c`` (negative counts from the end) as a new vector."""
        return vector(self._shape_[0], self._wp_scalar_type_)._wrap(self._a[:, self._row_index(c, self._shape_[1],
                                                                                               "column")].copy())

    def set_row(self, r, v) -> None:
        """Set row ``r`` in place to a scalar (every element) or a sequence of one value per column."""
        self._a[self._row_index(r, self._shape_[0], "row"), :] = self._fill_values(v, self._shape_[1], "row")

    def set_col(self, c, v) -> None:
        """Set column ``c`` in place to a scalar (every element) or a sequence of one value per row."""
        self._a[:, self._row_index(c, self._shape_[1], "column")] = self._fill_values(v, self._shape_[0], "column")

    def _fill_values(self, v, n: int, what: str):
        vals = np.asarray(v._a if isinstance(v, VectorBase) else v, dtype=self._np_)
        if vals.ndim == 0:
            return vals
        if vals.shape != (n,):
            raise ValueError(f"a {what} of this matrix takes {n} values, got {vals.size}")
        return vals

    def __matmul__(self, o):
        if isinstance(o, (MatrixBase, VectorBase)) and o._np_ is not self._np_:
            raise RuntimeError(f"Couldn't find a function 'mul' compatible with the arguments "
                               f"'{type(self).__name__}, {type(o).__name__}'")  # Warp's: no mixed precision
        if isinstance(o, MatrixBase):
            return matrix((self._shape_[0], o._shape_[1]), self._wp_scalar_type_)._wrap(self._a @ o._a)
        if isinstance(o, VectorBase):
            return vector(self._shape_[0], self._wp_scalar_type_)._wrap(self._a @ o._a)
        return NotImplemented


class QuatBase(VectorBase):
    """Quaternion (x, y, z, w) with the Hamilton product."""

    __slots__ = ()
    _wp_generic_type_str_ = "quat_t"

    def __init__(self, *args):
        if len(args) == 0:
            super().__init__(0, 0, 0, 1)
        else:
            super().__init__(*args)

    def __mul__(self, o):
        if isinstance(o, QuatBase):
            x1, y1, z1, w1 = self._a.tolist()
            x2, y2, z2, w2 = o._a.tolist()
            return self._wrap([
                w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
                w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            ])
        return super().__mul__(o)


class TransformBase(VectorBase):
    """Rigid transform: translation ``p`` (vec3) and rotation ``q`` (quat), 7 components."""

    __slots__ = ()
    _wp_generic_type_str_ = "transform_t"

    def __init__(self, *args, p=None, q=None, **unexpected):
        for name in unexpected:  # Warp's message (Python's would name this method)
            raise TypeError(f"got an unexpected keyword argument '{name}'")
        if (p is not None or q is not None) and len(args) > 2:
            raise TypeError(f"multiple values for argument '{'q' if q is not None else 'p'}'")
        if p is not None or q is not None:  # transform(p=..., q=...): a part given neither way is the identity's
            rest = list(args)
            if p is None:
                p = rest.pop(0) if rest else (0, 0, 0)
            if q is None:
                q = rest.pop(0) if rest else (0, 0, 0, 1)
            args = (p, q, *rest)
        if len(args) == 1 and _is_sequence(args[0]) and np.size(getattr(args[0], "_a", args[0])) == 3:
            args = (args[0], (0, 0, 0, 1))  # transform(p): the rotation is the identity
        if len(args) == 0:
            super().__init__(0, 0, 0, 0, 0, 0, 1)
        elif len(args) == 1 and not _is_sequence(args[0]) and not _is_component(args[0]):
            raise TypeError(f"Invalid argument in transformation constructor: expected a scalar value, got "
                            f"{type(args[0]).__name__}")
        elif len(args) == 2:
            for name, part, n in (("p", args[0], 3), ("q", args[1], 4)):
                if not _is_sequence(part):
                    raise TypeError(f"Invalid argument '{name}' in transformation constructor: expected a sequence, "
                                    f"got {type(part).__name__}")
            p, q = args
            super().__init__(np.concatenate([np.asarray(getattr(p, "_a", p), dtype=self._np_).reshape(3),
                                             np.asarray(getattr(q, "_a", q), dtype=self._np_).reshape(4)]))
        else:
            super().__init__(*args)

    @property
    def p(self):
        """The translation (assign ``t.p = v`` to set it)."""
        return vector(3, self._wp_scalar_type_)._wrap(self._a[:3])

    @p.setter
    def p(self, value) -> None:
        self._a[:3] = np.asarray(getattr(value, "_a", value), dtype=self._np_).reshape(3)

    @property
    def q(self):
        """The rotation quaternion (assign ``t.q = r`` to set it)."""
        return quaternion(self._wp_scalar_type_)._wrap(self._a[3:])

    @q.setter
    def q(self, value) -> None:
        self._a[3:] = np.asarray(getattr(value, "_a", value), dtype=self._np_).reshape(4)

    def __mul__(self, o):
        # transform * transform composes them as Warp's transform_multiply does: (q1 p2 q1^-1 + p1, q1 q2), with the
        # rotation written for any quaternion (Warp's quat_rotate), so non-unit quaternions give Warp's numbers
        if isinstance(o, TransformBase):
            p1, q1, p2 = self._a[:3], self._a[3:], o._a[:3]
            v, w = q1[:3], q1[3]
            rotated = p2 * (2.0 * w * w - 1.0) + np.cross(v, p2) * (2.0 * w) + v * (2.0 * np.dot(v, p2))
            q = self.q * o.q
            return self._wrap(np.concatenate([rotated + p1, q._a]))
        return super().__mul__(o)


_CACHE: dict[tuple, type] = {}


def _component_ctype(scls) -> type:
    """The ctypes type of one component (Warp's composite classes are ctypes arrays of it: ``ctypes.sizeof(
    wp.vec3._type_)`` is 4); half types as their 16 bits."""
    return getattr(scls, "_type_", None) or ctypes.c_uint16


def vector(length: Any, dtype: Any = S.float32) -> type:
    """The vector class of ``length`` components of scalar ``dtype`` (``Any`` for a generic annotation)."""
    from typing import Any as _Any

    if length is _Any or dtype is _Any or dtype in (S.Scalar, S.Float, S.Int):
        return _generic_vector(length, dtype)
    scls = _scalar_cls(dtype)
    key = ("vec", int(length), scls)
    if key not in _CACHE:
        ir = T.VectorType(int(length), scls._ir_)
        name = str(ir)
        _CACHE[key] = type(name, (VectorBase,), {
            "__slots__": (), "_ir_": ir, "_length_": int(length), "_wp_scalar_type_": scls, "_np_": _storage_np(scls),
            "_shape_": (int(length),), "_type_": _component_ctype(scls),
            "__doc__": f"A {int(length)}-component vector of {scls._ir_} (``{name}(x, y, ...)``, ``{name}()`` is zero).",
        })
    return _CACHE[key]


def matrix(shape: Any, dtype: Any = S.float32) -> type:
    """The matrix class of ``shape=(rows, cols)`` of scalar ``dtype``."""
    from typing import Any as _Any

    if shape is _Any or _Any in tuple(shape) or dtype is _Any or dtype in (S.Scalar, S.Float, S.Int):
        return _generic_matrix(shape, dtype)
    if len(tuple(shape)) != 2:
        n = len(tuple(shape))
        raise ValueError(f"Matrix shape must have exactly two dimensions, got {n} dimension{'s' if n != 1 else ''} in "
                         f"shape {tuple(shape)}")
    scls = _scalar_cls(dtype)
    r, c = (int(shape[0]), int(shape[1]))
    key = ("mat", r, c, scls)
    if key not in _CACHE:
        ir = T.MatrixType(r, c, scls._ir_)
        _CACHE[key] = type(str(ir), (MatrixBase,), {
            "__slots__": (), "_ir_": ir, "_shape_": (r, c), "_length_": r * c, "_wp_scalar_type_": scls,
            "_np_": _storage_np(scls), "_type_": _component_ctype(scls),
            "__doc__": f"A {r}x{c} matrix of {scls._ir_}, row-major (from {r * c} scalars, {r} row vectors, or zero).",
        })
    return _CACHE[key]


def matrix_from_rows(*rows: Any):
    """The matrix whose rows are the given vectors (all of one vector type)."""
    return _matrix_from_vectors(rows, transpose=False)


def matrix_from_cols(*cols: Any):
    """The matrix whose columns are the given vectors (all of one vector type)."""
    return _matrix_from_vectors(cols, transpose=True)


def _matrix_from_vectors(vecs, transpose: bool):
    if not vecs or len({type(v) for v in vecs}) != 1 or not isinstance(vecs[0], VectorBase):
        raise TypeError("matrix_from_rows/cols take one or more vectors of one type")
    n = len(vecs[0])
    shape = (n, len(vecs)) if transpose else (len(vecs), n)
    comps = [vecs[c][r] for r in range(n) for c in range(len(vecs))] if transpose else [x for v in vecs for x in v]
    return matrix(shape, type(vecs[0])._wp_scalar_type_)(*comps)


def quaternion(dtype: Any = S.float32) -> type:
    """The quaternion type with scalar ``dtype`` (``wp.quaternion(dtype=wp.float64)`` is ``wp.quatd``)."""
    scls = _scalar_cls(dtype)
    key = ("quat", scls)
    if key not in _CACHE:
        ir = T.VectorType(4, scls._ir_, T.VecFlavor.QUAT)
        _CACHE[key] = type(str(ir), (QuatBase,), {
            "__slots__": (), "_ir_": ir, "_length_": 4, "_wp_scalar_type_": scls, "_np_": _storage_np(scls), "_shape_": (4,),
            "_type_": _component_ctype(scls),
            "__doc__": f"A quaternion of {scls._ir_}, stored (x, y, z, w) with w the real part.",
        })
    return _CACHE[key]


def transformation(dtype: Any = S.float32) -> type:
    """The rigid transform type (position, rotation quaternion) with scalar ``dtype``."""
    scls = _scalar_cls(dtype)
    key = ("transform", scls)
    if key not in _CACHE:
        ir = T.VectorType(7, scls._ir_, T.VecFlavor.TRANSFORM)
        _CACHE[key] = type(str(ir), (TransformBase,), {
            "__slots__": (), "_ir_": ir, "_length_": 7, "_wp_scalar_type_": scls, "_np_": _storage_np(scls), "_shape_": (7,),
            "_type_": _component_ctype(scls),
            "__doc__": f"A rigid transform of {scls._ir_}: position vec3 p and rotation quaternion q (p, q).",
        })
    return _CACHE[key]


class GenericAnnotation:
    """An annotation matching a family of types (``wp.vector(length=Any, dtype=Any)``)."""

    def __init__(self, ir: T.GenericType, name: str):
        self._ir_ = ir
        self._name = name

    def __repr__(self) -> str:
        return self._name


def _generic_scalar(dtype) -> T.ScalarType | None:
    from typing import Any as _Any

    if dtype is _Any or dtype in (S.Scalar, S.Float, S.Int):
        return None
    return _scalar_cls(dtype)._ir_


def _generic_vector(length, dtype) -> GenericAnnotation:
    from typing import Any as _Any

    n = 0 if length is _Any else int(length)
    template = T.VectorType(n, _generic_scalar(dtype))
    return GenericAnnotation(T.GenericType(T.GenericKind.ANY, template), f"vector(length={length}, dtype={dtype})")


def _generic_matrix(shape, dtype) -> GenericAnnotation:
    from typing import Any as _Any

    r, c = (0, 0) if shape is _Any else (0 if shape[0] is _Any else int(shape[0]), 0 if shape[1] is _Any else
                                         int(shape[1]))
    template = T.MatrixType(r, c, _generic_scalar(dtype))
    return GenericAnnotation(T.GenericType(T.GenericKind.ANY, template), f"matrix(shape={shape}, dtype={dtype})")


def class_for(ir: T.Type) -> type:
    """The host class for an IR value type."""
    if isinstance(ir, T.ScalarType):
        return S.BY_IR[ir]
    if isinstance(ir, T.VectorType):
        scls = S.BY_IR[ir.scalar]
        if ir.flavor is T.VecFlavor.QUAT:
            return quaternion(scls)
        if ir.flavor is T.VecFlavor.TRANSFORM:
            return transformation(scls)
        return vector(ir.length, scls)
    if isinstance(ir, T.MatrixType):
        return matrix((ir.rows, ir.cols), S.BY_IR[ir.scalar])
    if isinstance(ir, T.StructType):
        return ir.pyclass
    raise TypeError(f"no host class for {ir}")


# the factories as kernel code calls them (weft/frontend/forms.py lowers each form)
declare(vector, "vector", Form.VECTOR)
declare(matrix, "matrix", Form.MATRIX)
declare(quaternion, "quaternion", Form.FLAVORED_VECTOR, (4, T.VecFlavor.QUAT))
declare(transformation, "transformation", Form.FLAVORED_VECTOR, (7, T.VecFlavor.TRANSFORM))
declare(matrix_from_rows, "matrix_from_rows", Form.MATRIX_FROM_VECTORS, False)
declare(matrix_from_cols, "matrix_from_cols", Form.MATRIX_FROM_VECTORS, True)
