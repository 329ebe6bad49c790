"""Rendering of ``wp.grad(f)(args...)`` (``frontend/grad_call.py``): the adjoint of ``f`` as a helper function.

Each :class:`~weft.ir.nodes.GradSub` of a module becomes one function, rendered by the adjoint renderer of the
module's target from ``f``'s own backward program (replay, result adjoints seeded to one, reverse sweep): it takes
the argument values in a small struct (the body reads parameters as ``args.<name>``, as a kernel body does) and
returns the adjoints of the arguments through references. The ``grad_call`` op zeroes its results and calls it.
"""

from __future__ import annotations

from ..autodiff.reverse import build_adjoint
from ..ir import types as T
from ..ir.nodes import Const, GradSub
from . import rules
from .adjoint import AdjointRenderer
from .names import literal
from .renderer import Emitter, Renderer

_GRAD_CALL = rules.ops("grad_call")[0]


class GradHelperRenderer(AdjointRenderer):
    """The adjoint of a ``wp.grad`` target as a callable helper (mixed with the module's target hooks)."""

    def __init__(self, sub: GradSub, options) -> None:
        super().__init__(build_adjoint(sub.fn), options)
        self.sub = sub

    def seed_adjoints(self) -> None:
        for r in self.sub.result:
            if isinstance(r, Const):
                continue  # a constant result: no gradient flows
            scalar = r.type if isinstance(r.type, T.ScalarType) else r.type.scalar
            one = literal(1.0, scalar)
            value = one if isinstance(r.type, T.ScalarType) else f"{r.type.ctype}({one})"
            self.out(f"{self.adj(r)} += {value};")

    def pinned_adjoints(self) -> set[int]:
        return {r.id for r in self.sub.result if not isinstance(r, Const)}

    def declare_adjoint_scratch(self, decls: Emitter) -> None:
        for name, t in self.dummies:  # the parameters' adjoints are the helper's reference parameters
            decls(f"{t.ctype} {name} = {{}};")

    def bwd_signature(self, deferred: bool, name: str) -> str:
        outs = "".join(f", {p.type.ctype}& adj_arg_{p.name}" for p in self.fn.params)
        return f"template <bool C>\n{self.body_qualifiers} void {self.sub.name}(const {self.sub.name}_args& args{outs})"

    def render_helper(self) -> str:
        fields = "".join(f" {p.type.ctype} {p.name};" for p in self.fn.params)
        return f"struct {self.sub.name}_args {{{fields} }};\n" + self.render_bwd_body()


_HELPERS: dict[type, type] = {}


def _helper_class(renderer: Renderer) -> type:
    """The helper renderer with the target hooks of ``renderer`` (the class nearest in its MRO that sets them)."""
    outer = type(renderer)
    cls = _HELPERS.get(outer)
    if cls is None:
        target = next(k for k in outer.__mro__ if "body_qualifiers" in k.__dict__)
        cls = GradHelperRenderer if issubclass(GradHelperRenderer, target) else \
            type(f"GradHelper{target.__name__}", (target, GradHelperRenderer), {})
        _HELPERS[outer] = cls
    return cls


def define_helper(renderer: Renderer, sub: GradSub) -> str:
    return _helper_class(renderer)(sub, renderer.opts).render_helper()


def render_grad_call(renderer: Renderer, s, args) -> None:
    sub = s.call.attrs[0]
    outs = [renderer.names(d) for d in s.dsts]
    for d, o in zip(s.dsts, outs):
        renderer.out(renderer.zero_line(d.type, o))
    renderer.out(f"{sub.name}<C>({sub.name}_args{{{', '.join(args)}}}, {', '.join(outs)});")


Renderer.definition_rules.add(_GRAD_CALL, define_helper)
Renderer.forward_rules.add(_GRAD_CALL, render_grad_call)
