"""wp.set_logger / get_logger / ScopedLogger: weft's warnings and debug messages go to an installed logger."""

import warnings

import pytest

import weft as wp
from weft import errors


class Recorder:
    def __init__(self):
        self.seen = []

    def debug(self, message):
        self.seen.append(("debug", message))

    def info(self, message):
        self.seen.append(("info", message))

    def warning(self, message, category=None, stacklevel=1):
        self.seen.append(("warning", message, category))

    def error(self, message):
        self.seen.append(("error", message))


def test_default_logger_routes_through_warnings():
    assert isinstance(wp.get_logger(), wp.Logger)
    with pytest.warns(UserWarning, match="plain"):
        errors.warn("plain")
    with pytest.warns(DeprecationWarning, match="old"):
        wp.get_logger().warning("old", DeprecationWarning)


def test_installed_logger_receives_warnings_and_debug_messages(tmp_path, monkeypatch):
    rec = Recorder()
    with wp.ScopedLogger(rec):
        assert wp.get_logger() is rec
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            errors.warn("to the logger", RuntimeWarning)
        assert caught == []
        monkeypatch.setattr(wp.config, "verbose", True)
        monkeypatch.setenv("WEFT_CACHE_DIR", str(tmp_path))

        @wp.kernel(module="unique")
        def k(a: wp.array(dtype=float)):
            a[wp.tid()] = 1.0

        wp.launch(k, dim=1, inputs=[wp.zeros(1)])
    assert ("warning", "to the logger", RuntimeWarning) in rec.seen
    assert any(kind == "debug" and msg.startswith("weft: ") for kind, msg, *_ in rec.seen)
    assert wp.get_logger() is not rec  # restored
    wp.set_logger(rec)
    try:
        assert wp.get_logger() is rec
    finally:
        wp.set_logger(None)
    assert not isinstance(wp.get_logger(), Recorder)


def test_bad_logger_is_refused():
    class NoError:
        debug = info = warning = print
        error = None

    with pytest.raises(TypeError, match="lacks error"):
        wp.set_logger(NoError())
    with pytest.raises(TypeError, match="ScopedLogger"):
        wp.ScopedLogger(object())
