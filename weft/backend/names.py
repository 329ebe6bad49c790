"""Stable C identifiers for IR variables (per function, in order of first use) and C++ literals."""

from __future__ import annotations

import math
import re

from ..ir import types as T
from ..ir.nodes import Const, VarKind

_IDENT = re.compile(r"[^0-9A-Za-z_]")


class Names:
    def __init__(self) -> None:
        self._names: dict[int, str] = {}
        self._used: set[str] = set()

    def __call__(self, operand) -> str:
        if isinstance(operand, Const):
            return literal(operand.value, operand.type)
        if operand.kind is VarKind.PARAM:
            return f"args.{operand.name}"
        name = self._names.get(operand.id)
        if name is None:
            base = _IDENT.sub("_", operand.name) or "t"
            name = f"{base}_{len(self._names)}"
            self._names[operand.id] = name
        return name

    def adj(self, operand) -> str:
        if isinstance(operand, Const):
            return "adj_const_" + ("d" if operand.type == T.FLOAT64 else "x")
        if operand.kind is VarKind.PARAM:
            return f"adj.{operand.name}"
        return "adj_" + self(operand)


def literal(value, t: T.Type) -> str:
    if isinstance(t, T.ScalarType):
        if t.is_bool:
            return "true" if value else "false"
        if t.is_float:
            v = float(value)
            if math.isnan(v):
                text = "NAN"
            elif math.isinf(v):
                text = "INFINITY" if v > 0 else "-INFINITY"
            else:
                text = repr(v)
                if "e" not in text and "." not in text:
                    text += ".0"
            if t.bits == 32:
                return f"{text}f" if text[-1].isdigit() else f"float({text})"
            if t.bits == 16:
                return f"{t.ctype}({text}f)" if text[-1].isdigit() else f"{t.ctype}(float({text}))"
            return f"double({text})" if not text[-1].isdigit() else text
        v = int(value)
        if t.bits < 32:
            return f"{t.ctype}({v})"
        if t == T.INT32 and v == -(2**31):
            return "(-2147483647 - 1)"
        if t.bits == 64:  # int64_t is `long` on LP64 hosts but `long long` in CUDA: a literal of the exact type
            text = "(-9223372036854775807ll - 1)" if v == -(2**63) else f"{v}{'ll' if t.kind == 'i' else 'ull'}"
            return f"{t.ctype}({text})"
        return f"{v}u" if t.kind == "u" else str(v)
    raise ValueError(f"no literal form for {t}")
