"""Every public name of weft.distributed (and every public method or property of its classes) has a docstring, and
docs/distributed.md mentions every exported name. Needs neither MPI nor mpi4py (they are imported on first use)."""

from __future__ import annotations

import inspect
from pathlib import Path

import weft.distributed as wd

DOC = Path(__file__).resolve().parents[2] / "docs" / "distributed.md"


def test_public_names_have_docstrings():
    missing = []
    for name in wd.__all__:
        obj = getattr(wd, name)
        if not (inspect.getdoc(obj) or "").strip():
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member, value in vars(obj).items():
                if member.startswith("_") or not (callable(value) or isinstance(value, property)):
                    continue
                if not (inspect.getdoc(value) or "").strip():
                    missing.append(f"{name}.{member}")
    assert not missing, f"undocumented: {missing}"


def test_docs_page_covers_every_export():
    text = DOC.read_text()
    assert not [n for n in wd.__all__ if n not in text]
