"""``@wp.func_native(snippet, adj_snippet=None, replay_snippet=None)``: a device function written as C++ text.

The decorated Python function gives the signature (typed parameters, an optional typed result); the snippet is the
body of a C++ function with those parameters (``return`` gives the result). Warp programs write snippets against
Warp's C++ API; weft's native types follow the same shapes (``wp::vec_t<3, wp::float32>``, ``wp::mat_t<2, 2, T>``,
``x[i]`` on a 1-D array), and inside a snippet ``wp::`` names weft's namespace. ``adj_snippet`` is the body of the
derivative: it reads the parameters, adds into ``adj_<param>`` (for an array parameter, an array view of its
gradient) and reads ``adj_ret``. Without one the call contributes no gradient, as in Warp. ``replay_snippet``
replaces the snippet where the backward pass re-runs the forward (Warp's rule; default: the snippet itself).

Each native function is one op record (``registry.register_user``, when a kernel first calls it): ``Op.definition`` carries the generated
C++ (the renderers emit the definitions of the ops a module uses after its structs), a CALL (or, with ``wp.ref[T]``
parameters, an OUT_CALL whose extra results are the parameters' final values: references are copy-in / copy-out,
as for ``@wp.func``) with ``Adjoint.NATIVE``, and ``Op.replay_native`` names what the backward replay calls.
"""

from __future__ import annotations

import hashlib

from ..ir import types as T
from ..ops.registry import Adjoint, Op, OpKind, register_user
from ..types.mapping import to_ir
from ..types.reference import Reference
from .func import Func, make_func


class _AddressOf:
    """``wp.address_of(x)``: the address (a uint64) of the storage of ``x`` (a local, an array element, a struct
    field or a component). weft supports it as an argument of a ``wp.func_native`` function: the call passes the
    address of a copy of ``x`` and stores the copy back into ``x``'s place after the call (copy-in / copy-out, as
    for ``wp.ref[T]``)."""

    _wp_address_of_marker_ = True

    def __call__(self, *args, **kwargs):
        raise TypeError("wp.address_of() can only be used in kernel code")

    def __repr__(self) -> str:
        return "wp.address_of"


address_of = _AddressOf()


def is_address_of(obj) -> bool:
    return getattr(obj, "_wp_address_of_marker_", False)


class NativeFunc(Func):
    """A ``@wp.func_native`` function: calls lower to its op record (``op_for``)."""

    def __init__(self, fn, key=None, snippet: str = "", adj_snippet: str | None = None,
                 replay_snippet: str | None = None):
        super().__init__(fn, key=key)
        self.snippet = snippet
        self.adj_snippet = adj_snippet
        self.replay_snippet = replay_snippet
        self._ops: dict[tuple, Op] = {}

    def op_for(self, lw, node, addressed: tuple = ()) -> Op:
        """The op record of this function (built on first use, when the annotations can be evaluated); one per set
        of ``(parameter, pointee type)`` pairs whose arguments are ``wp.address_of(x)``."""
        op = self._ops.get(addressed)
        if op is None:
            op = self._ops[addressed] = _build_op(self, lw, node, dict(addressed))
        return op


def func_native(snippet: str, adj_snippet: str | None = None, replay_snippet: str | None = None):
    """Decorator: a device function whose body is the C++ ``snippet`` (see the module docstring)."""
    if not isinstance(snippet, str):
        raise TypeError(f"wp.func_native: snippet must be a string, got {type(snippet).__name__}")

    def wrap(fn) -> NativeFunc:
        return make_func(fn, cls=NativeFunc, snippet=snippet, adj_snippet=adj_snippet,
                         replay_snippet=replay_snippet)
    return wrap


# ---------------------------------------------------------------------- the op record
def _param_types(f: NativeFunc, lw, node) -> list[tuple[str, T.Type, bool]]:
    out = []
    params = list(f.signature.parameters) if f.signature is not None else []
    anns = f.annotations
    for p in params:
        ann = anns.get(p)
        is_ref = isinstance(ann, Reference)
        try:
            t = to_ir(ann.value_type if is_ref else ann)
        except TypeError:
            raise lw.error(f"parameter '{p}' of native function {f.__name__} needs a weft type annotation, "
                           f"got {ann!r}", node) from None
        if isinstance(t, T.GenericType) or (isinstance(t, T.ArrayType) and t.is_generic):
            raise lw.error(f"parameter '{p}' of native function {f.__name__} has the generic type {t}: a C++ "
                           "snippet needs concrete types", node)
        out.append((p, t, is_ref))
    return out


def _result_type(f: NativeFunc, lw, node) -> T.Type | None:
    ann = f.return_annotation
    if ann is None:
        return None
    try:
        t = to_ir(ann)
    except TypeError:
        raise lw.error(f"native function {f.__name__}: unsupported return type {ann!r}", node) from None
    if isinstance(t, (T.StructType, T.GenericType)):
        raise lw.error(f"native function {f.__name__}: unsupported return type {t} (a snippet returns a scalar, "
                       "vector, matrix, quaternion, transform or array)", node)
    return t


def _build_op(f: NativeFunc, lw, node, addressed: dict) -> Op:
    params = _param_types(f, lw, node)
    ret = _result_type(f, lw, node)
    text = repr((f.key, f.snippet, f.adj_snippet, f.replay_snippet, [(p, t.ctype, r) for p, t, r in params],
                 ret.ctype if ret is not None else None, sorted((p, t.ctype) for p, t in addressed.items())))
    cname = f"native_{_cident(f.__name__)}_{hashlib.sha256(text.encode()).hexdigest()[:12]}"
    refs = [p for p, _, r in params if r]
    if addressed:
        return _build_addressed_op(f, cname, params, ret, addressed)
    results = ([ret] if ret is not None else []) + [t for _, t, r in params if r]
    want = tuple(t for _, t, _ in params)

    def rule(types, attrs, want=want, results=tuple(results)):
        if tuple(types) != want:
            return None
        return results if len(results) != 1 else results[0]

    definition = _definition(f, cname, params, ret)
    replay = f"{cname}_replay" if f.replay_snippet is not None else cname
    op = Op(cname, rule, native=cname, kind=OpKind.OUT_CALL if refs else OpKind.CALL,
            adjoint=Adjoint.NATIVE if f.adj_snippet is not None else (Adjoint.UNSUPPORTED if refs else Adjoint.NONE),
            side_effect=True, domain="native", public=False, definition=definition, replay_native=replay,
            doc=f"wp.func_native {f.key}")
    return register_user(op)


def _build_addressed_op(f: NativeFunc, cname: str, params, ret, addressed: dict) -> Op:
    """The op of a call passing ``wp.address_of(x)`` for the parameters in ``addressed``: the operand is ``x``'s value
    (of the pointee type), the function works on a copy whose address the snippet receives, and the copy's final
    value is an extra result (after the result and the references' final values). It contributes no gradient
    (differentiating is an error when the function has an ``adj_snippet``, which would need the pointer)."""
    typed = [(p, addressed.get(p, t), r) for p, t, r in params]
    outs = ([ret] if ret is not None else []) + [t for p, t, r in typed if r or p in addressed]
    want = tuple(t for _, t, _ in typed)

    def rule(types, attrs, want=want, results=tuple(outs)):
        return (results if len(results) != 1 else results[0]) if tuple(types) == want else None

    body_params = ", ".join(f"{t.ctype}{'&' if r else ''} {p}" for p, t, r in params)
    ins = [f"{t.ctype} {p}{'_in_' if (r or p in addressed) else ''}" for p, t, r in typed]
    out_decls = ([f"{ret.ctype}& ret_"] if ret is not None else []) + \
        [f"{t.ctype}& {p}_out_" for p, t, r in typed if r or p in addressed]
    copies = " ".join(f"{p}_out_ = {p}_in_;" for p, t, r in typed if r or p in addressed)
    args = ", ".join(f"(uint64_t)(&{p}_out_)" if p in addressed else f"{p}_out_" if r else p for p, _, r in params)
    text = (f"namespace weft {{\nWEFT_FN {ret.ctype if ret is not None else 'void'} {cname}_body({body_params}) {{\n"
            f"    namespace wp = weft;\n{f.snippet}\n}}\n"
            f"WEFT_FN void {cname}({', '.join(ins + out_decls)}) {{ {copies} "
            f"{'ret_ = ' if ret is not None else ''}{cname}_body({args}); }}\n}}  // namespace weft")
    # as a native call without adj_snippet, the call contributes no gradient; an adj_snippet cannot be honoured here
    adjoint = Adjoint.NONE if f.adj_snippet is None else Adjoint.UNSUPPORTED
    op = Op(cname, rule, native=cname, kind=OpKind.OUT_CALL, adjoint=adjoint, side_effect=True,
            domain="native", public=False, definition=text, replay_native=cname, doc=f"wp.func_native {f.key}")
    return register_user(op)


def _cident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def _definition(f: NativeFunc, cname: str, params, ret: T.Type | None) -> str:
    """The C++ of the forward, replay and adjoint functions (inside namespace weft, after the module's structs)."""
    rtype = ret.ctype if ret is not None else "void"
    refs = [(p, t) for p, t, r in params if r]
    body_params = ", ".join(f"{t.ctype}{'&' if r else ''} {p}" for p, t, r in params)
    lines = ["namespace weft {"]

    def body(name: str, snippet: str) -> None:
        lines.append(f"WEFT_FN {rtype} {name}_body({body_params}) {{\n    namespace wp = weft;\n{snippet}\n}}")

    def entry(name: str) -> None:
        if not refs:
            call_args = ", ".join(p for p, _, _ in params)
            lines.append(f"WEFT_FN {rtype} {name}({body_params}) {{ "
                         f"{'return ' if ret is not None else ''}{name}_body({call_args}); }}")
            return
        # references: copy-in / copy-out (the results after the result hold the parameters' final values)
        ins = ", ".join(f"{t.ctype} {p}{'_in_' if r else ''}" for p, t, r in params)
        outs = ([f"{rtype}& ret_"] if ret is not None else []) + [f"{t.ctype}& {p}_out_" for p, t in refs]
        copies = " ".join(f"{p}_out_ = {p}_in_;" for p, _ in refs)
        call_args = ", ".join(f"{p}_out_" if r else p for p, _, r in params)
        lines.append(f"WEFT_FN void {name}({', '.join([ins] + outs if ins else outs)}) {{ {copies} "
                     f"{'ret_ = ' if ret is not None else ''}{name}_body({call_args}); }}")

    body(cname, f.snippet)
    entry(cname)
    if f.replay_snippet is not None:
        body(f"{cname}_replay", f.replay_snippet)
        entry(f"{cname}_replay")
    if f.adj_snippet is not None:
        lines.append(_adjoint(f, cname, params, ret))
    lines.append("}  // namespace weft")
    return "\n".join(lines)


def _adjoint(f: NativeFunc, cname: str, params, ret: T.Type | None) -> str:
    """``adj_<cname>`` in weft's convention (operands, [results of an OUT_CALL,] adjoints of the operands, adjoints
    of the results), running the adjoint snippet with Warp's names: the parameters, ``adj_<param>`` and
    ``adj_ret``. An array parameter's adjoint is a view of its gradient; a reference's adjoint is the adjoint of
    its final value, and what the snippet leaves in it flows to the value passed in."""
    refs = [(p, t) for p, t, r in params if r]
    snippet_params = [f"{t.ctype}{'&' if r else ''} {p}" for p, t, r in params]
    snippet_params += [f"{t.ctype}& adj_{p}" for p, t, _ in params]
    if ret is not None:
        snippet_params.append(f"{ret.ctype} adj_ret")
    head = f"WEFT_FN void {cname}_adj_body({', '.join(snippet_params)}) {{\n    namespace wp = weft;\n"
    out = [head + f"{f.adj_snippet}\n}}"]
    sig = [f"{t.ctype} {p}{'_in_' if r else ''}" for p, t, r in params]
    if refs:
        sig += ([f"{ret.ctype} ret_"] if ret is not None else []) + [f"{t.ctype} {p}_out_" for p, t in refs]
    sig += [f"{t.ctype}& adj_{p}_arg_" for p, t, _ in params]
    if ret is not None:
        sig.append(f"{ret.ctype}& adj_ret_")
    sig += [f"{t.ctype}& adj_{p}_out_" for p, t in refs]
    pre, post = [], []
    for p, t, r in params:
        if r:
            pre.append(f"{t.ctype} {p} = {p}_in_;")
            pre.append(f"{t.ctype} adj_{p} = adj_{p}_out_;")
            post.append(f"adj_{p}_arg_ += adj_{p};")
        elif isinstance(t, T.ArrayType):
            pre.append(f"{t.ctype} adj_{p} = {p}; adj_{p}.data = {p}.grad; adj_{p}.grad = nullptr;")
    local = {p for p, t, r in params if r or isinstance(t, T.ArrayType)}
    call = ", ".join([p for p, _, _ in params] + [f"adj_{p}" if p in local else f"adj_{p}_arg_" for p, _, _ in params]
                     + (["adj_ret_"] if ret is not None else []))
    out.append(f"WEFT_FN void adj_{cname}({', '.join(sig)}) {{ {' '.join(pre)} {cname}_adj_body({call}); "
               f"{' '.join(post)} }}")
    return "\n".join(out)


def lower_native_call(lw, f: NativeFunc, bound: dict, node, addressed: dict | None = None):
    """A call of a native function: the op, then (for references and ``wp.address_of`` arguments, whose values
    ``addressed`` maps to their parameters) the final values stored back into the arguments' places by the caller
    (``frontend/calls.py``). Returns (result or None, {param: final value})."""
    addressed = addressed or {}
    key = tuple(sorted((p, v.type) for p, v in addressed.items()))
    op = f.op_for(lw, node, key)
    operands = [lw.operand(addressed.get(p, v), node) for p, v in bound.items()]
    got = lw.op(op.name, operands, node=node)
    got = list(got) if isinstance(got, tuple) else ([] if got is None else [got])
    ret = got.pop(0) if f.return_annotation is not None else None
    written = [p for p in bound if p in f.ref_params or p in addressed]
    return ret, dict(zip(written, got))

