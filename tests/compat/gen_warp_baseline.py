#!/usr/bin/env python3
"""Generate ``warp119_cpu_baseline.json``: the outcome of every test of Warp 1.19's own suite on Warp's CPU backend.

The conformance target of weft is relative to the tests that pass on Warp on the CPU, so the runner
(``run_warp_tests.py``) reads this file. Regenerate it with Warp itself (any Python with ``warp-lang==1.19.0``):

    python tests/compat/gen_warp_baseline.py --python /opt/warp119/bin/python            # every in-scope module
    python tests/compat/gen_warp_baseline.py --python /opt/warp119/bin/python tile/      # some modules (merged)
    python tests/compat/gen_warp_baseline.py --from-raw a.json b.json                    # compact saved raw runs

Each module runs in a child process with a timeout (Warp's CPU compiler needs minutes for the large modules); the
results are merged into the existing file, module by module. The file is compact: per module the names of the tests
that passed, failed and skipped (``Class.test_name``), the tests that hit their timeout (``timeout``: unknown on
Warp, neither passed nor failed), and ``complete: false`` for a module that did not finish or had timeouts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = os.path.join(HERE, "warp119_cpu_baseline.json")


def short_name(test_id: str) -> str:
    """``warp.tests.test_x.TestX.test_y_cpu`` -> ``TestX.test_y_cpu``."""
    parts = test_id.split(".")
    return ".".join(parts[-2:])


def compact(raw: dict) -> dict:
    """Raw runner results (``--save``) -> ``{module: {"pass": [...], "fail": [...], "skip": [...], ...}}``."""
    out = {}
    for mod, res in raw.items():
        entry = {"pass": [], "fail": [], "skip": []}
        timed_out = []
        for test_id, t in sorted(res["tests"].items()):
            reason = t.get("reason", "")
            if t["outcome"] == "fail" and reason.startswith(("Timeout", "crashed or timed out")):
                timed_out.append(short_name(test_id))  # unknown on Warp (the loaded machine), not a Warp failure
            else:
                entry[t["outcome"]].append(short_name(test_id))
        if timed_out:
            entry["timeout"] = timed_out
        if not res.get("complete", True) or timed_out:
            entry["complete"] = False
        if res.get("import_error") and not res["tests"]:
            entry["import_error"] = res["import_error"]
        out[mod] = entry
    return out


def load(path: str = BASELINE) -> dict:
    if not os.path.isfile(path):
        return {}
    with open(path) as f:
        return json.load(f)["modules"]


def save(modules: dict, path: str = BASELINE) -> None:
    doc = {"warp": "1.19.0", "device": "cpu",
           "generator": "tests/compat/gen_warp_baseline.py (runs tests/compat/run_warp_tests.py --reference)",
           "modules": dict(sorted(modules.items()))}
    with open(path, "w") as f:
        json.dump(doc, f, indent=0, sort_keys=False)
        f.write("\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("patterns", nargs="*", help="substrings selecting module paths (default: every in-scope module)")
    ap.add_argument("--python", default="/opt/warp119/bin/python", help="a Python with warp-lang 1.19 installed")
    ap.add_argument("--from-raw", nargs="*", default=None, help="compact these raw runner result files instead")
    ap.add_argument("--timeout", type=float, default=300.0, help="per-test timeout in seconds")
    ap.add_argument("--module-timeout", type=float, default=1200.0, help="per-module timeout in seconds")
    ap.add_argument("--out", default=BASELINE, help="baseline file (merged module by module)")
    args = ap.parse_args(argv)
    raws = []
    if args.from_raw is not None:
        for path in args.from_raw:
            with open(path) as f:
                raws.append(json.load(f))
    else:
        fd, raw_path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        os.unlink(raw_path)
        cmd = [sys.executable, os.path.join(HERE, "run_warp_tests.py"), "--reference", args.python, "--save",
               raw_path, "--progress", "--timeout", str(args.timeout), "--module-timeout", str(args.module_timeout),
               *args.patterns]
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
        if os.path.isfile(raw_path):
            with open(raw_path) as f:
                raws.append(json.load(f))
            os.unlink(raw_path)
    modules = load(args.out)
    for raw in raws:
        for mod, entry in compact(raw).items():
            # a complete result replaces an incomplete one, never the other way round
            if entry.get("complete", True) or not modules.get(mod, {}).get("complete", True) or mod not in modules:
                modules[mod] = entry
    save(modules, args.out)
    n_pass = sum(len(m["pass"]) for m in modules.values())
    print(f"{args.out}: {len(modules)} modules, {n_pass} tests passing on Warp's CPU backend")
    return 0


if __name__ == "__main__":
    sys.exit(main())
