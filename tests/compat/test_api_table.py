"""weft against Warp 1.19's public API table (``warp119_api.json``, made by ``gen_warp_api.py``).

Prints every Warp name and kernel builtin overload weft lacks, so the gap is always visible. Fails only on a
regression: a name or overload missing that is not in ``known_missing_api.txt`` (a list that must only shrink;
entries that weft now has are reported so they can be removed).
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import re

import weft

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "warp119_api.json")
KNOWN = os.path.join(HERE, "known_missing_api.txt")


def _load():
    with open(TABLE) as f:
        return json.load(f)


def _known() -> set[str]:
    with open(KNOWN) as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def _weft_module(name: str):
    obj = weft
    for part in name.split(".")[1:]:
        nxt = getattr(obj, part, None)
        if nxt is None:
            try:
                nxt = importlib.import_module(f"{obj.__name__}.{part}")
            except ImportError:
                return None
        obj = nxt
    return obj


def missing_names(table) -> list[str]:
    """``module:name`` for every public Warp name weft does not have."""
    out = []
    for mod, names in table["modules"].items():
        m = _weft_module(mod)
        out += [f"{mod}:{n}" for n in names if m is None or not hasattr(m, n)]
    return out


_SCALARS = {"Float": "float32", "Scalar": "float32", "Int": "int32", "float": "float32", "int": "int32",
            "bool": "bool"}


def _ir_of(ann: str):
    """A concrete IR type for a stub annotation (None when it is not a plain value type)."""
    from weft.ir import types as T

    ann = ann.strip()
    scalar_names = {s.name: s for s in T.SCALARS} if hasattr(T, "SCALARS") else {}
    name = _SCALARS.get(ann, ann)
    for s in (T.BOOL, T.INT8, T.INT16, T.INT32, T.INT64, T.UINT8, T.UINT16, T.UINT32, T.UINT64, T.FLOAT16,
              T.FLOAT32, T.FLOAT64):
        scalar_names[s.name] = s
    if name in scalar_names:
        return scalar_names[name]
    m = re.fullmatch(r"Vector\[(\w+), (.+)\]", ann)  # Vector[dtype, length]
    if m:
        n = re.fullmatch(r"Literal\[(\d+)\]", m.group(2).strip())
        s = _ir_of(m.group(1))
        return T.VectorType(int(n.group(1)) if n else 3, s) if s is not None else None
    m = re.fullmatch(r"Matrix\[(\w+), (.+), (.+)\]", ann)  # Matrix[dtype, rows, cols]
    if m:
        r = re.fullmatch(r"Literal\[(\d+)\]", m.group(2).strip())
        c = re.fullmatch(r"Literal\[(\d+)\]", m.group(3).strip())
        s = _ir_of(m.group(1))
        if s is None:
            return None
        return T.MatrixType(int(r.group(1)) if r else 3, int(c.group(1)) if c else 3, s)
    m = re.fullmatch(r"Quaternion\[(\w+)\]", ann)
    if m and _ir_of(m.group(1)) is not None:
        return T.VectorType(4, _ir_of(m.group(1)), T.VecFlavor.QUAT)
    m = re.fullmatch(r"Transformation\[(\w+)\]", ann)
    if m and _ir_of(m.group(1)) is not None:
        return T.VectorType(7, _ir_of(m.group(1)), T.VecFlavor.TRANSFORM)
    return None


def _params(sig: str) -> list[str] | None:
    inner = sig[1:sig.rindex(")")] if ")" in sig else ""
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    out = []
    for p in parts:
        if ":" not in p or p.strip().startswith("*"):
            return None
        out.append(p.split(":", 1)[1])
    return out


def _alternatives(ann: str) -> list[str]:
    """The alternatives of a union annotation, split at its top-level ``|``."""
    parts, depth, cur = [], 0, ""
    for ch in ann:
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "|" and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in parts + [cur]]


def builtin_report(table):
    """(missing builtin names, missing overloads, checked overload count) for Warp's kernel builtins."""
    from weft.ops import registry
    from weft.ops.forms import Form

    public = set(dir(weft))
    missing, missing_ovl, checked = [], [], 0
    for name, sigs in table["builtins"].items():
        if name not in public and not registry.has(name):
            missing.append(f"builtin:{name}")
            continue
        if not registry.has(name):
            continue  # lowered by the frontend (constructors, tile ops ...): checked by name only
        for sig in sigs:
            if registry.syntax(name).form is not Form.OPERANDS and sig.endswith("-> None"):
                continue  # an output-variable form (eig3(A, Q, d)): the frontend lowers it to the result form

            params = _params(sig)
            if params is None:
                continue
            # a union annotation (``Matrix[Float, Literal[2], Literal[2]] | Matrix[...]``) is one overload per
            # alternative: every combination must resolve
            alts = [[_ir_of(a) for a in _alternatives(p)] for p in params]
            if not alts or any(t is None for ts in alts for t in ts):
                continue
            checked += 1
            if any(registry.resolve(name, combo) is None for combo in itertools.product(*alts)):
                missing_ovl.append(f"overload:{name}{sig}")
    return missing, missing_ovl, checked


def test_api_table_gap_only_shrinks(capsys):
    table = _load()
    names = missing_names(table)
    b_missing, o_missing, checked = builtin_report(table)
    known = _known()
    total_names = sum(map(len, table["modules"].values()))
    report = [f"Warp 1.19 public names: {total_names - len(names)}/{total_names} present in weft",
              (f"kernel builtins: {len(table['builtins']) - len(b_missing)}/{len(table['builtins'])} present; "
               f"overloads with plain value types: {checked - len(o_missing)}/{checked} resolve")]
    gap = names + b_missing + o_missing
    report += [f"  missing {g}" for g in gap]
    fixed = sorted(known - set(gap))
    report += [f"  now present (remove from known_missing_api.txt): {g}" for g in fixed]
    with capsys.disabled():
        print("\n" + "\n".join(report[:2]))
        if os.environ.get("WEFT_API_GAP_VERBOSE"):
            print("\n".join(report[2:]))
    regressions = sorted(set(gap) - known)
    assert not regressions, "names or overloads weft lost (or new in the table):\n" + "\n".join(regressions)
