"""Problem sizes of the ``slow`` tests, from ``WEFT_TEST_SIZE``:

- unset or ``small`` (the README's test command and CI): the small size, so the whole suite stays within ~15 min on
  two cores while every slow case still runs;
- ``full``: the full size (before a release, or on a bigger machine);
- an integer: that size (tests with a single size parameter).

Usage in a test module (tests/ is on sys.path through the root conftest): ``from sizes import size, sizes``.
"""

from __future__ import annotations

import os


def _setting() -> str:
    return os.environ.get("WEFT_TEST_SIZE", "small").strip().lower() or "small"


def size(small: int, full: int) -> int:
    value = _setting()
    if value == "small":
        return small
    if value == "full":
        return full
    return int(value)


def sizes(small: list[int], full: list[int]) -> list[int]:
    """Parameter lists: the small list, the full list, or ``[N]`` for an integer setting."""
    value = _setting()
    if value == "small":
        return list(small)
    if value == "full":
        return list(full)
    return [int(value)]
