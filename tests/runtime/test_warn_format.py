"""weft's warnings: issued through ``warnings`` (filters, ``pytest.warns``, ``catch_warnings(record=True)`` apply) and
shown, when nothing records them, in Warp's form ``Warp UserWarning: message`` on stderr."""

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import weft as wp
from weft import errors
from weft._src import logger
from weft.errors import warn

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, *flags: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, *flags, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, timeout=120)


SCRIPT = """
    import weft as wp
    from weft._src.logger import log_warning
    log_warning("hello, world!")
    log_warning("hello, world!")
    log_warning("old api", category=DeprecationWarning, once=True)
    log_warning("old api", category=DeprecationWarning, once=True)
    for _ in range(3):
        log_warning("in a loop")
    print("done")
"""


def test_shown_in_warps_form_on_stderr():
    out = _run(SCRIPT, "-W", "default")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "done\n"
    # two call sites print twice; a call site in a loop once (Python's "default" action); a deprecation once
    assert out.stderr == ("Warp UserWarning: hello, world!\nWarp UserWarning: hello, world!\n"
                          "Warp DeprecationWarning: old api\nWarp UserWarning: in a loop\n")


def test_filters_still_apply():
    err = _run(SCRIPT, "-W", "error::UserWarning")
    assert err.returncode != 0 and "UserWarning: hello, world!" in err.stderr and err.stdout == ""
    quiet = _run(SCRIPT, "-W", "ignore")
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == "done\n"


def test_verbose_warnings_add_the_location():
    out = _run("""
        import weft as wp
        wp.config.verbose_warnings = True
        from weft.errors import warn
        warn("located")
    """, "-W", "default")
    assert out.stderr.startswith("Warp UserWarning: located (<string>:5)")


def test_recorded_by_pytest_and_catch_warnings():
    with pytest.warns(UserWarning, match="recorded") as rec:
        warn("recorded")
    assert rec[0].filename == __file__  # the caller's location
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        logger.log_warning("logged")
    assert [str(w.message) for w in log] == ["logged"]
    assert warnings.showwarning is not errors._show_as_warp  # nothing of weft's display is left installed


def test_library_warnings_use_the_same_channel():
    edges = wp.array([(0, 1), (0, 2), (0, 3), (0, 4), (0, 6), (1, 6), (2, 5), (4, 6)], dtype=wp.int32)
    colors = wp.array([0, 1, 1, 1, 1, 2, 2], dtype=wp.int32)
    with pytest.warns(UserWarning, match="0-iteration limit"):
        wp.utils.graph_coloring_balance(edges, colors, color_count=3, target_max_min_ratio=1.1, max_iterations=0)


def test_log_level_silences_log_warning():
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        with wp.ScopedLogLevel(wp.LOG_ERROR):
            logger.log_warning("silenced")
    assert log == []
