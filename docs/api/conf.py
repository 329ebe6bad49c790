"""Sphinx configuration of weft's API reference. Build: python -m sphinx -W -b html docs/api <outdir>.

The builtins and Python API pages are generated from the op registry and ``weft.__all__`` at every build
(docs/api/gen_api.py writes them to docs/api/_generated/, which is not committed)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import gen_api

import weft

gen_api.write(HERE / "_generated")

project = "weft"
release = version = weft.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]
exclude_patterns = ["_build"]
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"undoc-members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
html_theme = "alabaster"
html_static_path: list[str] = []
suppress_warnings: list[str] = []
