"""Make ``import warp`` (and ``import warp.<sub>``) resolve to weft, and ``warp.tests`` to Warp's test files.

Used by the conformance runner (``run_warp_tests.py``): Warp's unit tests are imported from a ``warp-lang``
installation, which serves only as the source of the test files; every ``warp`` name they use is weft's.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types


class _AliasLoader(importlib.abc.Loader):
    """Loader that hands back an already imported weft module under its ``warp.*`` name."""

    def __init__(self, module):
        self._module = module

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        return None


class _WarpAliasFinder(importlib.abc.MetaPathFinder):
    """``warp.X.Y`` -> ``weft.X.Y`` for every name outside ``warp.tests`` (which Warp's files provide)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("warp.") or fullname.startswith("warp.tests"):
            return None
        rest = fullname[len("warp."):]
        module = _resolve_weft(rest)
        if module is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), is_package=hasattr(module, "__path__"))


class _KeepFunctions(types.ModuleType):
    """A weft package whose function shares its name with a submodule (``weft.sim.collide``): importing the
    submodule under its ``warp.*`` alias must not replace the function with the module. In Warp the submodule is
    imported with the package, so a later ``import warp.sim.collide`` finds it in ``sys.modules`` and leaves the
    package's attribute alone; the alias is a new name to Python, which would set the attribute again."""

    def __setattr__(self, name, value):
        old = self.__dict__.get(name)
        if isinstance(value, types.ModuleType) and callable(old) and not isinstance(old, types.ModuleType):
            return
        super().__setattr__(name, value)


def _resolve_weft(rest: str):
    import weft

    obj = weft
    for part in rest.split("."):
        nxt = getattr(obj, part, None)
        if isinstance(nxt, types.ModuleType):
            obj = nxt
            continue
        if nxt is not None and callable(nxt) and type(obj) is types.ModuleType:
            obj.__class__ = _KeepFunctions
        try:
            obj = importlib.import_module(f"{obj.__name__}.{part}")
        except ImportError:
            return None
    return obj


FEM_OUT_OF_SCOPE = "warp.fem is not part of weft (Warp's finite-element toolkit is out of scope: docs/warp_compat.md)"


class _FemUnavailable:
    """Stand-in for any ``warp.fem`` name: usable in annotations and as a decorator, raises when actually used."""

    def __init__(self, name: str, wrapped=None):
        self._name = name
        self._wrapped = wrapped

    def __call__(self, *args, **kwargs):
        # a bare decorator (`@fem.integrand`) or a decorator factory (`@fem.integrand(...)`) wraps the function so
        # the module imports; calling what it returns (or any other use) raises
        if self._wrapped is None and len(args) == 1 and not kwargs and isinstance(args[0], (types.FunctionType, type)):
            return _FemUnavailable(f"{self._name}({getattr(args[0], '__name__', '?')})", wrapped=args[0])
        raise NotImplementedError(f"{FEM_OUT_OF_SCOPE}: {self._name} called")

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _FemUnavailable(f"{self._name}.{attr}")

    def __repr__(self):
        return f"<unavailable {self._name}>"


def _fem_module() -> types.ModuleType:
    """A ``warp.fem`` whose every name is an ``_FemUnavailable`` (so Warp test modules that use it import)."""
    mod = types.ModuleType("warp.fem", FEM_OUT_OF_SCOPE)

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _FemUnavailable(f"warp.fem.{name}")

    mod.__getattr__ = __getattr__
    # Plain data types that Warp's fem module exports and that other test modules nest in their own structs
    # (test_struct's "struct from another module" cases): the same fields as fem's, no fem functionality.
    import weft

    mod.Coords = weft.vec3
    mod.ElementIndex = int
    mod.QuadraturePointIndex = int
    mod.DofIndex = weft.vec2i
    mod.NULL_ELEMENT_INDEX = weft.constant(-1)
    mod.NULL_QP_INDEX = weft.constant(-1)
    mod.NULL_DOF_INDEX = weft.constant(weft.vec2i(-1, -1))

    fields = {"element_index": int, "element_coords": weft.vec3, "qp_index": int, "qp_weight": float,
              "test_dof": weft.vec2i, "trial_dof": weft.vec2i}
    defaults = {"qp_index": -1, "qp_weight": 0.0, "test_dof": weft.vec2i(-1, -1), "trial_dof": weft.vec2i(-1, -1)}
    Sample = type("Sample", (), {"__annotations__": fields, "__module__": __name__, **defaults})
    mod.Sample = weft.struct(Sample)
    return mod


def install(tests_dir: str) -> None:
    """Alias ``warp`` to weft and ``warp.tests`` to ``tests_dir`` (the ``warp/tests`` folder of warp-lang)."""
    import weft

    sys.modules["warp"] = weft
    pkg = types.ModuleType("warp.tests")
    pkg.__path__ = [tests_dir]
    pkg.__file__ = os.path.join(tests_dir, "__init__.py")
    pkg.__package__ = "warp.tests"
    sys.modules["warp.tests"] = pkg
    weft.tests = pkg  # `import warp.tests.x as m` reads the attribute
    # Warp's tests read meshes through wp.examples.get_asset_directory(): the assets of the warp-lang installation
    # the test files come from (weft ships none)
    examples = os.path.join(os.path.dirname(os.path.abspath(tests_dir)), "examples")
    if os.path.isdir(os.path.join(examples, "assets")):
        os.environ.setdefault("WEFT_WARP_EXAMPLES", examples)
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import warp_unittest_utils

    sys.modules["warp.tests.unittest_utils"] = warp_unittest_utils
    pkg.unittest_utils = warp_unittest_utils
    if not hasattr(weft, "fem"):
        fem = _fem_module()
        sys.modules["warp.fem"] = fem
        # `import warp.fem as fem` reads the name from the package, whose __name__ is "weft"
        sys.modules["weft.fem"] = fem
    sys.meta_path.insert(0, _WarpAliasFinder())
