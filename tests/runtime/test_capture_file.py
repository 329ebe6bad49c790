"""``wp.capture_save`` / ``capture_load`` / ``capture_load_from_bytes`` of CPU captures (weft/runtime/capture_file.py).

A capture of launches, fills and copies is saved, loaded (from the file and from bytes) and replayed without the
arrays of the program that captured it; results are compared with the same steps run eagerly in NumPy.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import weft as wp


@wp.kernel
def _axpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def _scale_vec(v: wp.array(dtype=wp.vec3), s: wp.array(dtype=float)):
    i = wp.tid()
    v[i] = v[i] * s[0]


def test_save_load_replay(tmp_path):
    x = wp.array(np.arange(4, dtype=np.float32), device="cpu")
    y = wp.array(np.ones(4, dtype=np.float32), device="cpu")
    tmp = wp.zeros(5, dtype=float, device="cpu")
    v = wp.array(np.arange(18, dtype=np.float32).reshape(6, 3), dtype=wp.vec3, device="cpu")
    s = wp.array([3.0], dtype=float, device="cpu")
    with wp.ScopedCapture("cpu", apic=True) as cap:
        wp.launch(_axpy, 4, inputs=[2.0, x, y], device="cpu")
        wp.copy(tmp, y, dest_offset=1, src_offset=0, count=3)
        wp.launch(_scale_vec, 3, inputs=[v[::2], s], device="cpu")  # a strided view
        s.fill_(2.0)
    path = str(tmp_path / "step")
    wp.capture_save(cap.graph, path, inputs={"x": x, "s": s}, outputs={"y": y, "tmp": tmp, "v": v})
    assert os.path.isfile(path + ".wrp") and os.listdir(path + "_modules")
    # the program's arrays change after saving: the loaded graph has its own memory, as saved
    y.fill_(100.0)
    g = wp.capture_load(path, device="cpu")
    assert g.is_loaded and isinstance(g, wp.Graph)
    new_x = wp.array(np.array([1, -1, 2, -2], dtype=np.float32), device="cpu")
    g.set_param("x", new_x)
    wp.capture_launch(g)
    wp.capture_launch(g)
    out_y, out_tmp, out_v = wp.zeros(4, dtype=float), wp.zeros(5, dtype=float), wp.zeros(6, dtype=wp.vec3)
    g.get_param("y", out_y)
    g.get_param("tmp", out_tmp)
    g.get_param("v", out_v)
    # the same two steps in NumPy, from the saved state (y = 1, s = 3 before the first step)
    ry = np.ones(4, np.float32)
    rtmp = np.zeros(5, np.float32)
    rv = np.arange(18, dtype=np.float32).reshape(6, 3)
    rs = 3.0
    for _ in range(2):
        ry = 2.0 * np.array([1, -1, 2, -2], np.float32) + ry
        rtmp[1:4] = ry[:3]
        rv[::2] *= rs
        rs = 2.0
    np.testing.assert_allclose(out_y.numpy(), ry)
    np.testing.assert_allclose(out_tmp.numpy(), rtmp)
    np.testing.assert_allclose(out_v.numpy(), rv)
    assert y.numpy()[0] == 100.0  # the program's own arrays are untouched by the loaded graph
    assert g.get_param_ptr("y") != y.ptr
    # from bytes: the same graph
    with open(path + ".wrp", "rb") as f:
        data = f.read()
    mod_dir = tmp_path / "step_modules"
    mods = {p.name: p.read_bytes() for p in mod_dir.iterdir()}
    g2 = wp.capture_load_from_bytes(bytearray(data), mods, device="cpu")
    g2.set_param("x", new_x)
    wp.capture_launch(g2)
    g2.get_param("y", out_y)
    np.testing.assert_allclose(out_y.numpy(), 2.0 * new_x.numpy() + 1.0)


def test_errors(tmp_path):
    a = wp.zeros(3, dtype=float, device="cpu")
    with wp.ScopedCapture("cpu") as cap:
        wp.launch(_axpy, 3, inputs=[1.0, a, a], device="cpu")
    with pytest.raises(RuntimeError, match="apic=True"):
        wp.capture_save(cap.graph, str(tmp_path / "g"))
    with pytest.raises(TypeError, match="wp.Graph"):
        wp.capture_save("graph", str(tmp_path / "g"))
    with wp.ScopedCapture("cpu", apic=True) as cap2:
        wp.capture_if(wp.array([1], dtype=wp.int32), on_true=lambda: None)
    with pytest.raises(RuntimeError, match="capture_if"):
        wp.capture_save(cap2.graph, str(tmp_path / "g"))
    with wp.ScopedCapture("cpu", apic=True) as cap3:
        wp.launch(_axpy, 3, inputs=[1.0, a, a], device="cpu")
    wp.capture_save(cap3.graph, str(tmp_path / "g3"), inputs={"a": a})
    g = wp.capture_load(str(tmp_path / "g3.wrp"))
    with pytest.raises(RuntimeError, match="no parameter 'b'"):
        g.get_param("b", a)
    with pytest.raises(RuntimeError, match="holds 8 bytes"):
        g.set_param("a", wp.zeros(2, dtype=float))
    with pytest.raises(TypeError, match="Warp array"):
        g.set_param("a", np.zeros(3, np.float32))
    with pytest.raises(RuntimeError, match="only supported on loaded"):
        cap3.graph.set_param("a", a)
    with pytest.raises(RuntimeError, match="bad magic"):
        wp.capture_load_from_bytes(b"not a graph file at all", device="cpu")
    with pytest.raises(RuntimeError, match="is not in modules"):
        wp.capture_load_from_bytes((tmp_path / "g3.wrp").read_bytes(), {}, device="cpu")
    with pytest.raises(TypeError, match="mapping"):
        wp.capture_load_from_bytes(b"", [("x", b"")])
    os.remove(next((tmp_path / "g3_modules").iterdir()))
    with pytest.raises(RuntimeError, match="missing"):
        wp.capture_load(str(tmp_path / "g3"))
