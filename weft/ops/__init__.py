"""Op domains. Importing a domain module registers its ops."""

from __future__ import annotations

import importlib

DOMAINS = ("scalar", "vector", "matrix", "quat", "spatial", "construct", "array", "atomic", "random", "misc", "tile", "geometry", "volume", "mathx", "noise", "texture")


def load_all() -> None:
    for name in DOMAINS:
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
