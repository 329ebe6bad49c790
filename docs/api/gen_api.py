"""Write the generated pages of the API reference into docs/api/_generated/ (run by conf.py at every build).

- builtins.rst: every public kernel builtin from the op registry (weft/ops/registry.py), grouped by domain, with its
  overload signatures (found by probing the type rules, weft/ops/signatures.py), whether it is differentiable and
  its doc.
- python.rst: every name in ``weft.__all__`` that is not a builtin, grouped by the part of weft it comes from
  (arrays, launches, differentiation, tiles, devices, interop, ...), through autodoc; a name no group claims lands in
  "Other", so a new public name is never left out.
- one page per package imported on first use rather than by ``import weft`` (``wp.sim``, ``weft.distributed``,
  ``wp.sparse``, ``wp.render``: ``SUBPACKAGES``), listing its own ``__all__`` through autodoc. Warp keeps these out
  of its top-level namespace too (``import warp.sim``), so they are not in ``weft.__all__``: ``from weft import *``
  stays cheap.

Usage: python docs/api/gen_api.py [OUTDIR]
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import weft
from weft.builtins import Builtin
from weft.kernel import Kernel
from weft.ops import registry
from weft.ops.signatures import signatures

DOMAINS = {
    "scalar": "Scalar math", "vector": "Vectors", "matrix": "Matrices", "quat": "Quaternions",
    "spatial": "Transforms and spatial vectors", "construct": "Construction and casts", "array": "Arrays",
    "atomic": "Atomics", "random": "Random numbers", "tile": "Tiles", "misc": "Miscellaneous",
    "geometry": "Geometry queries",
}

# (title, module prefixes, intro); the first group whose prefix matches a name's __module__ takes it
PY_GROUPS = (
    ("Kernels and functions", ("weft.kernel", "weft.frontend", "weft.types.struct", "weft.builtins"),
     "Decorators, kernel-language helpers usable from Python, and compilation control."),
    ("Arrays", ("weft.runtime.array", "weft.runtime.indexed", "weft.runtime.copy"), ""),
    ("Launching", ("weft.runtime.launch",), ""),
    ("Tiles", ("weft.runtime.tiles",), "Tile builtins themselves are listed on the builtins page."),
    ("Differentiation", ("weft.autograd", "weft.runtime.tape", "weft.runtime.checkpoint", "weft.runtime.gradcheck",
                         "weft.autodiff"), ""),
    ("Devices, streams, events and graph capture", ("weft.runtime.device", "weft.runtime.sync", "weft.runtime.streams",
                                                 "weft.runtime.capture", "weft.runtime.timing", "weft.cuda",
                                                 "weft.runtime.cuda_api", "weft.runtime.memkind"), ""),
    ("Interop (NumPy, DLPack, PyTorch, JAX)", ("weft.interop",), ""),
    ("Geometry", ("weft.geometry",), ""),
    ("Simulation", ("weft.sim",), ""),
    ("Distributed", ("weft.distributed",), ""),
    ("Errors", ("weft.errors",), "Every error weft raises subclasses :class:`weft.Error`."),
    ("Setup, cache and diagnostics", ("weft",), ""),
)
TYPE_MODULES = ("weft.types", "typing")
# (module, title, intro) of the packages with their own page
SUBPACKAGES = (
    ("weft.sim", "Simulation: wp.sim",
     ("Warp 1.7's ``warp.sim`` API: models, builders, integrators, collisions, importers and renderers "
     "(``import weft as wp`` then ``wp.sim.ModelBuilder()``; guide: ``docs/sim.md``).")),
    ("weft.distributed", "Distributed: weft.distributed",
     ("weft arrays on MPI: decomposition, halo exchange, reductions and the slab FFT (``import weft.distributed``; "
     "guide: ``docs/distributed.md``).")),
    ("weft.sparse", "Sparse matrices: wp.sparse", "Warp's ``warp.sparse`` BSR matrices and their operations."),
    ("weft.render", "Renderers: wp.render", "Warp's ``warp.render`` renderers (USD stages; no OpenGL viewer)."),
)
CLASS_MEMBERS = {"array", "Tape", "Launch", "Kernel", "Device", "Stream", "Event", "HashGrid", "Volume"}


def _heading(text: str, char: str) -> str:
    return f"{text}\n{char * len(text)}\n"


def _indent(text: str, n: int = 3) -> str:
    pad = " " * n
    return "\n".join(pad + line if line.strip() else "" for line in text.splitlines())


def builtins_page() -> str:
    public = sorted(n for n in weft.__all__ if isinstance(getattr(weft, n), Builtin))
    by_domain: dict[str, list[str]] = {}
    for name in public:
        ops = registry.overloads(name)
        by_domain.setdefault(ops[0].domain if ops else "misc", []).append(name)
    out = [_heading("Kernel builtins", "="), "",
           ("Generated from the op registry (``weft/ops/registry.py``) at documentation build time. Signatures are "
           "the argument types each overload's type rule accepts, found by probing it with scalars, vectors, "
           "matrices, quaternions, transforms and arrays: ``Float`` stands for any of float16/float32/float64, "
           "``Int`` for any integer type, ``vec3(Float)`` for ``vec3h``/``vec3f``/``vec3d`` and so on. Builtins "
           "whose form depends on compile-time arguments (tile shapes, dtypes) say so. Every builtin can be "
           "called in kernels and ``@wp.func`` bodies; most also run on the host (``wp.sin(0.5)``)."), ""]
    for domain in sorted(by_domain, key=lambda d: (list(DOMAINS).index(d) if d in DOMAINS else 99, d)):
        out += [_heading(DOMAINS.get(domain, domain.capitalize()), "-"), ""]
        for name in by_domain[domain]:
            out += _builtin_entry(name)
    return "\n".join(out) + "\n"


_DIFF_NOTE = {"yes": "", "no": "    # not differentiable", "unsupported": "    # no derivative rule yet"}
_DIFF_TEXT = {"yes": "yes", "no": "no (contributes no gradient)",
              "unsupported": "not yet (differentiating a kernel that calls it is an error)"}


def _diff(op) -> str:
    if op.adjoint is registry.Adjoint.NONE:
        return "no"
    if op.adjoint.name == "UNSUPPORTED":
        return "unsupported"
    return "yes"


def _builtin_entry(name: str) -> list[str]:
    groups = signatures(name)
    ops = [op for op, _ in groups]
    lines = [f".. _builtin-{name}:", "", _heading(name, "^"), ""]
    seen: set[str] = set()
    sig_lines = []
    for op, sigs in groups:
        for s in sigs:
            if op.domain == "random" and s.result.startswith("tuple(uint32, "):  # the state threaded through SSA
                s = type(s)(s.args, s.result[len("tuple(uint32, "):-1])
            text = s.render(name)
            if text not in seen:
                seen.add(text)
                sig_lines.append(text + _DIFF_NOTE[_diff(op)])
    if sig_lines:
        lines += ["::", ""] + ["   " + s for s in sig_lines] + [""]
    else:
        lines += ["*Signature: takes compile-time arguments (shapes, dtypes, functions); see the description.*", ""]
    diff = {_diff(op) for op in ops}
    lines += ["**Differentiable:** " + (_DIFF_TEXT[diff.pop()] if len(diff) == 1 else "depends on the overload "
                                         "(marked above)"), ""]
    docs = []
    for op in ops:
        if op.doc and op.doc not in docs:
            docs.append(op.doc)
    lines += [_plain(inspect.cleandoc(d)) + "\n" for d in docs] or [getattr(weft, name).__doc__ + "\n"]
    return lines


def _plain(text: str) -> str:
    """An op's doc as reST: ``literals`` stay, the rest is plain text (``|x|``, ``a*b``, ``adj_`` are not markup)."""
    parts = re.split(r"(``.+?``)", text)
    for i in range(0, len(parts), 2):
        part = parts[i].replace("\\", "\\\\").replace("*", "\\*").replace("|", "\\|")
        parts[i] = re.sub(r"(\w)_(?=\W|$)", r"\1\\_", part)
    return "".join(parts)


def _group_of(name: str, obj) -> str:
    if name in getattr(weft, "_CONSTANT_DOCS", {}):
        return "Constants"
    if isinstance(obj, types.ModuleType):
        return "Modules"
    module = getattr(obj, "__module__", "") or ""
    if isinstance(obj, type) and module.startswith(TYPE_MODULES) or name == "Any":
        return "Types"
    for title, prefixes, _intro in PY_GROUPS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return title
    return "Other"


def python_page() -> str:
    groups: dict[str, list[str]] = {}
    for name in weft.__all__:
        obj = getattr(weft, name)
        if isinstance(obj, Builtin):
            continue
        groups.setdefault(_group_of(name, obj), []).append(name)
    out = [_heading("Python API", "="), "",
           ("Everything in ``weft.__all__`` except the kernel builtins (see :doc:`builtins`), generated from the "
           "package at documentation build time. ``import weft as wp`` and use ``wp.<name>``."), "",
           ".. currentmodule:: weft", ""]
    titles = [t for t, _, _ in PY_GROUPS[:-1]] + ["Types", PY_GROUPS[-1][0], "Constants", "Modules", "Other"]
    intros = {t: intro for t, _, intro in PY_GROUPS}
    for title in titles:
        names = groups.get(title)
        if not names:
            continue
        out += [_heading(title, "-"), ""]
        if intros.get(title):
            out += [intros[title], ""]
        if title == "Types":
            out += _types_table(names)
        elif title == "Constants":
            out += [f"``{n}``  {weft._CONSTANT_DOCS[n]} (``{getattr(weft, n)!r}``)" + "\n" for n in names]
        elif title == "Modules":
            out += _modules(names)
        else:
            for name in names:
                out += _autodoc(name, getattr(weft, name))
    return "\n".join(out) + "\n"


def _autodoc(name: str, obj) -> list[str]:
    if isinstance(obj, type):
        opts = ["   :members:"] if name in CLASS_MEMBERS else []
        if issubclass(obj, BaseException):
            opts = []
        return [f".. autoclass:: weft.{name}", *opts, ""]
    if callable(obj) and (inspect.isfunction(obj) or inspect.isbuiltin(obj)):
        return [f".. autofunction:: weft.{name}", ""]
    # an object that is neither (e.g. wp.adjoint): its class's doc
    doc = inspect.getdoc(obj) or ""
    return [f".. py:data:: {name}", "", _indent(doc), ""]


def _types_table(names: list[str]) -> list[str]:
    rows = []
    for name in names:
        obj = getattr(weft, name)
        ir = getattr(obj, "_ir_", None)
        doc = (inspect.getdoc(obj) or "").split("\n\n")[0].replace("\n", " ")
        rows.append((f"``{name}``", f"``{ir}``" if ir is not None else "", doc))
    out = [("Scalar, vector, matrix, quaternion and transform types, usable as kernel annotations, array dtypes and "
           "host values (``wp.vec3(1, 2, 3)``); ``wp.vector``/``wp.matrix``/``wp.quaternion``/``wp.transformation`` "
           "make the types of other sizes and scalars."), "",
           ".. list-table::", "   :header-rows: 1", "   :widths: 20 15 65", "",
           "   * - name", "     - IR type", "     - description"]
    for a, b, c in rows:
        out += [f"   * - {a}", f"     - {b}", f"     - {c}"]
    return out + [""]


def _modules(names: list[str]) -> list[str]:
    target = {"autograd": "weft.autograd", "optim": "weft.optim", "config": "weft.config", "types": "weft.types_compat"}
    out = []
    for name in names:
        mod = target.get(name, getattr(weft, name).__name__)
        out += [_heading(f"wp.{name}", "^"), ""]
        if name == "types":
            out += [("The type classes under the module path Warp programs use (``wp.types.vector``, "
                    "``wp.types.array`` ...): the same objects as in the Types table above."), ""]
            continue
        out += [f".. automodule:: {mod}", "   :members:", ""]
    return out


def subpackage_page(module_name: str, title: str, intro: str) -> str:
    """A package's ``__all__``: classes (with members), functions, then other values (constants, enums)."""
    import importlib

    module = importlib.import_module(module_name)
    out = [_heading(title, "="), "", intro, "", f".. currentmodule:: {module_name}", ""]
    classes, functions, kernels, values = [], [], [], []
    for name in module.__all__:
        obj = getattr(module, name)
        if isinstance(obj, type):
            classes.append(name)
        elif inspect.isfunction(obj) or inspect.isbuiltin(obj):
            functions.append(name)
        elif isinstance(obj, Kernel):
            kernels.append(name)
        else:
            values.append(name)
    for heading, names in (("Classes", classes), ("Functions", functions)):
        if names:
            out += [_heading(heading, "-"), ""]
            for name in names:
                obj = getattr(module, name)
                if heading == "Functions":
                    out += [f".. autofunction:: {module_name}.{name}", ""]
                elif issubclass(obj, BaseException):
                    out += [f".. autoclass:: {module_name}.{name}", ""]
                elif dataclasses.is_dataclass(obj):  # fields: documented by the class doc (napoleon Attributes)
                    fields = ", ".join(f.name for f in dataclasses.fields(obj))
                    out += [f".. autoclass:: {module_name}.{name}", "   :members:", f"   :exclude-members: {fields}", ""]
                else:
                    out += [f".. autoclass:: {module_name}.{name}", "   :members:", ""]
    if kernels:
        out += [_heading("Kernels", "-"), "", "``@wp.kernel`` functions, launched with ``wp.launch``.", ""]
        for name in kernels:
            params = ", ".join(inspect.signature(getattr(module, name).func).parameters)
            out += [f".. py:function:: {name}({params})", f"   :module: {module_name}", "",
                    _indent(inspect.cleandoc(getattr(module, name).__doc__ or "")), ""]
    if values:
        out += [_heading("Constants", "-"), "", ".. list-table::", "   :header-rows: 1", "   :widths: 40 60", "",
                "   * - name", "     - value"]
        for name in values:
            out += [f"   * - ``{name}``", f"     - ``{getattr(module, name)!r}``"]
        out += [""]
    return "\n".join(out) + "\n"


def subpackage_file(module_name: str) -> str:
    return module_name.replace(".", "_") + ".rst"


def write(outdir: Path) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    pages = [("builtins.rst", builtins_page()), ("python.rst", python_page())]
    pages += [(subpackage_file(m), subpackage_page(m, t, i)) for m, t, i in SUBPACKAGES]
    for fname, text in pages:
        path = outdir / fname
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "_generated"):
        print(p)
