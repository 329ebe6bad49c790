"""weft/abi.py holds the values the Python side shares with the C++ headers; this test reads the headers and fails
when the two disagree (a changed header value must change abi.py, and the other way round)."""

from __future__ import annotations

import re
from pathlib import Path

from weft import abi

NATIVE = Path(abi.__file__).parent / "native"


def _read(name: str) -> str:
    return (NATIVE / name).read_text()


def _one(pattern: str, text: str) -> int:
    found = re.findall(pattern, text)
    assert len(found) == 1, (pattern, found)
    return int(found[0])


def test_constants_match_the_headers():
    assert _one(r"char message\[(\d+)\];", _read("error.h")) == abi.ERROR_MESSAGE_BYTES
    assert _one(r"constexpr int32 kGradPlain = (\d+);", _read("atomic.h")) == abi.ARRAY_FLAG_GRAD_PLAIN
    assert _one(r"constexpr int32 kDeferLanes = (\d+);", _read("launch.h")) == abi.DEFER_LANES
    for name, value in (("Done", abi.ENTRY_DONE), ("NeedsStrided", abi.ENTRY_NEEDS_STRIDED),
                        ("GridUnfit", abi.ENTRY_GRID_UNFIT)):
        assert _one(rf"constexpr int32 kEntry{name} = (\d+);", _read("launch.h")) == value


def test_error_codes_match_the_headers():
    comment = re.search(r"int32 code;\s*//(.*)", _read("error.h")).group(1)
    codes = {text.strip(): int(code) for code, text in re.findall(r"(\d+):\s*([^,]+)", comment)}
    assert codes == {"none": abi.ERROR_NONE, "out of bounds": abi.ERROR_BOUNDS, "assert": abi.ERROR_ASSERT,
                     "expect failed": abi.ERROR_EXPECT}
    for header, code in (("array.h", abi.ERROR_BOUNDS), ("construct.h", abi.ERROR_EXPECT),
                         ("stack.h", abi.ERROR_OUT_OF_MEMORY)):
        used = {int(c) for c in re.findall(r"report_error\((\d+),", _read(header))}
        assert used == {code}, (header, used)
    assert {int(c) for c in re.findall(r"report_error\((\d+),", _read("atomic.h"))} == {abi.ERROR_OUT_OF_MEMORY}


def test_array_flags_match_the_headers():
    atomic = _read("atomic.h")
    # the replay functions store / update only through a descriptor the backward launch marked as a private copy
    replay = re.findall(r"replay_\w+\([^)]*\)[^{]*\{[^}]*?a\.flags & (\d+)", atomic)
    assert replay and {int(f) for f in replay} == {abi.ARRAY_FLAG_REPLAY_WRITES}
    consume = {int(f) for f in re.findall(r"a\.flags & (\d+)\) != 0", _read("tile.h") + _read("tile_cuda.h"))}
    consume |= {int(f) for f in re.findall(r"if \(a\.flags & (\d+)\) \*g = T\(\);", atomic)}
    assert consume == {abi.ARRAY_FLAG_CONSUME_GRAD}
    assert len({abi.ARRAY_FLAG_REPLAY_WRITES, abi.ARRAY_FLAG_CONSUME_GRAD, abi.ARRAY_FLAG_GRAD_PLAIN}) == 3


def test_grid_layout_matches_the_header():
    grid = re.search(r"struct Grid \{(.*?)\};", _read("launch.h"), re.DOTALL).group(1)
    fields = re.findall(r"(int64|int32) (\w+)(?:\[(\d+)\])?;", grid)
    assert fields == [("int64", "dim", "4"), ("int32", "ndim", "")]
    assert abi.GRID.size == 4 * 8 + 4 + 4  # padded to the struct's 8-byte alignment
    assert abi.ERROR_HEAD.size == 8


def test_error_report():
    assert abi.error_report(abi.ERROR_NONE, 0, "") is None
    assert abi.error_report(abi.ERROR_EXPECT, 1, "x") is None
    assert abi.error_report(abi.ERROR_ASSERT, 1, "a > 0") == "assertion failed: a > 0"
    assert abi.error_report(abi.ERROR_BOUNDS, 3, "read") == "error: read (and 2 more)"
