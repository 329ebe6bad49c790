"""Saving a CPU capture to a file and loading it back: ``wp.capture_save``, ``wp.capture_load``,
``wp.capture_load_from_bytes``.

A graph captured with ``apic=True`` on the CPU is a list of recorded operations (kernel launches, fills, copies). Its
file (``<stem>.wrp``) holds:

- the memory regions the operations touch (each array's whole base allocation, its gradient's too), with their
  contents at save time;
- each operation: a launch as its module, packed argument bytes and grid, every pointer in the argument bytes
  recorded as (region, offset) so it can be moved to the loaded copy of the region; a fill as its target layout and
  element bytes; a copy as both layouts and the element range;
- the names given by ``inputs`` / ``outputs``, each bound to its array's region (``Graph.set_param`` /
  ``get_param`` copy a whole region).

The kernels' C++ modules are written beside it (``<stem>_modules/<key>.cpp``); loading builds them with weft's CPU
toolchain (a kernel-cache hit where this machine built them before) and replays the operations on the loaded regions,
without the Python program that captured them. Format: ``WEFTWRP1``, the length of a JSON header (8 bytes, little
endian), the header, then the regions' bytes.
"""

from __future__ import annotations

import base64
import ctypes
import functools
import hashlib
import json
import os
import struct
from collections.abc import Mapping

import numpy as np

from .. import pipeline
from ..types.dtypes import element_size
from ..types.struct import StructInstance
from . import copy as copy_mod
from . import device as D
from . import launch as launch_mod
from .array import aligned_zeros, array
from .backends import finish_entry
from .capture import Graph
from .indexed import indexedarray
from .threads import launch_threads

MAGIC = b"WEFTWRP1"
_WORD = struct.Struct("<Q")


def _wrp_path(path) -> str:
    path = os.fspath(path)
    return path if path.endswith(".wrp") else path + ".wrp"


# ---------------------------------------------------------------------- saving
class _Regions:
    """The memory regions of a capture: disjoint [start, end) host address ranges, merged when they overlap."""

    def __init__(self):
        self.spans: list[list[int]] = []

    def add_array(self, a) -> None:
        if isinstance(a, indexedarray):
            self.add_array(a.data)
            for idx in a.indices:
                if idx is not None:
                    self.add_array(idx)
            return
        if not isinstance(a, array) or a._annotation:
            return
        root = a
        while getattr(root, "_parent", None) is not None:
            root = root._parent
        for arr in (root, a):
            if arr._ptr:
                lo, hi = _extent(arr)
                self._add(lo, hi)
        if a.grad is not None:
            self.add_array(a.grad)

    def add_value(self, v) -> None:
        if isinstance(v, (array, indexedarray)):
            self.add_array(v)
        elif isinstance(v, StructInstance):
            for name, _ in type(v)._ir_.fields:
                self.add_value(getattr(v, name))

    def _add(self, lo: int, hi: int) -> None:
        for span in self.spans:
            if lo < span[1] and span[0] < hi:
                span[0], span[1] = min(span[0], lo), max(span[1], hi)
                self._merge()
                return
        self.spans.append([lo, hi])

    def _merge(self) -> None:
        self.spans.sort()
        out = []
        for s in self.spans:
            if out and s[0] < out[-1][1]:
                out[-1][1] = max(out[-1][1], s[1])
            else:
                out.append(s)
        self.spans = out

    def find(self, ptr: int):
        for i, (lo, hi) in enumerate(self.spans):
            if lo <= ptr < hi:
                return i, ptr - lo
        return None


def _extent(a) -> tuple[int, int]:
    """The byte range [lo, hi) of an array: its whole capacity for an owner, its elements for a view."""
    if getattr(a, "_parent", None) is None:
        return a._ptr, a._ptr + max(int(a.capacity), 1)
    esize = element_size(a._ir)
    lo = a._ptr + sum(min(0, (n - 1) * s) for n, s in zip(a.shape, a.strides))
    hi = a._ptr + sum(max(0, (n - 1) * s) for n, s in zip(a.shape, a.strides)) + esize
    return lo, hi


def _layout(regions: _Regions, a) -> dict:
    """Where an array's elements are: region, byte offset, shape, strides, element size."""
    found = regions.find(a._ptr)
    if found is None:
        raise RuntimeError("capture_save: an array of the capture has no memory")
    return {"region": found[0], "offset": found[1], "shape": list(a.shape), "strides": list(a.strides),
            "itemsize": element_size(a._ir)}


def _describe(item, regions: _Regions, modules: dict) -> dict:
    """One recorded operation as data (raises for operations a file cannot hold)."""
    func = getattr(item, "func", None)
    if func is launch_mod._run:
        spec, packed, dims, _dev, args, _block_dim = item.args
        for v in args:
            regions.add_value(v)
        source = spec.source
        key = hashlib.sha256(source.encode() + (b"debug" if spec.debug else b"")).hexdigest()[:20]
        modules[f"{key}.cpp"] = source
        return {"op": "launch", "kernel": spec.kernel.__name__, "module": f"{key}.cpp", "debug": bool(spec.debug),
                "dims": list(dims), "packed": base64.b64encode(packed).decode()}
    if getattr(func, "__name__", "") == "_fill_host" and isinstance(getattr(func, "__self__", None), array):
        arr = func.__self__
        regions.add_array(arr)
        return {"op": "fill", "target": arr, "pattern": base64.b64encode(arr._element_bytes(item.args[0])).decode()}
    if func is copy_mod.copy:
        dest, src, dest_offset, src_offset, count, _stream = item.args
        for a, what in ((dest, "destination"), (src, "source")):
            if type(a) is not array:
                raise RuntimeError(f"capture_save: a copy whose {what} is a {type(a).__name__} cannot be saved (weft "
                                   "saves copies between plain arrays)")
        if element_size(dest._ir) != element_size(src._ir):
            raise RuntimeError("capture_save: a copy between arrays of different element sizes cannot be saved")
        regions.add_array(dest)
        regions.add_array(src)
        return {"op": "copy", "dest": dest, "src": src, "dest_offset": int(dest_offset),
                "src_offset": int(src_offset), "count": int(count or src.size)}
    raise RuntimeError("capture_save: the capture holds an operation weft cannot save (a host callback, "
                       "wp.capture_if / wp.capture_while, or a copy involving indexed or Fabric arrays); "
                       "saved captures hold kernel launches, fills and copies between arrays")


def _relocations(packed: bytes, regions: _Regions) -> list[list[int]]:
    """(byte offset, region, offset in region) of every 8-byte-aligned word of ``packed`` that points into a
    region: array descriptors' data and gradient pointers, indexed arrays' index pointers, struct-held arrays."""
    out = []
    for off in range(0, len(packed) - 7, 8):
        (word,) = _WORD.unpack_from(packed, off)
        if word:
            found = regions.find(word)
            if found is not None:
                out.append([off, found[0], found[1]])
    return out


def capture_save(graph, path, inputs: dict | None = None, outputs: dict | None = None,
                 source_fallback: bool = False) -> None:
    """Write a graph captured with ``apic=True`` to ``<path>.wrp`` and its kernels' modules to
    ``<path>_modules/``; ``inputs`` / ``outputs`` name arrays whose regions ``set_param`` / ``get_param`` of the
    loaded graph copy. weft saves the modules' C++ source (built when loaded), so ``source_fallback`` changes
    nothing."""
    if not isinstance(graph, Graph):
        raise TypeError(f"capture_save: graph must be a wp.Graph, got {type(graph).__name__}")
    if not graph.apic:
        raise RuntimeError("Graph was not captured with apic=True. Pass apic=True to capture_begin() or "
                           "ScopedCapture().")
    if not graph.device.impl.capture_by_replay:
        raise RuntimeError(f"capture_save: weft saves CPU captures; the graph was captured on {graph.device}, whose "
                           "graphs are native CUDA graphs weft cannot write to a file")
    if getattr(graph, "_loaded", None) is not None:
        raise RuntimeError("capture_save: the graph was loaded from a file; save the original capture instead")
    regions = _Regions()
    params: dict[str, object] = {}
    for group, what in ((inputs, "inputs"), (outputs, "outputs")):
        for name, arr in (group or {}).items():
            if not isinstance(name, str) or type(arr) is not array:
                raise TypeError(f"capture_save: {what} must map names to wp.array objects, got {name!r}: "
                                f"{type(arr).__name__}")
            if arr.device != graph.device:
                raise ValueError(f"capture_save: {what}['{name}'] is on {arr.device}, the graph on {graph.device}")
            regions.add_array(arr)
            params[name] = arr
    modules: dict[str, str] = {}
    ops = [_describe(item, regions, modules) for item in graph.launches]
    # regions are final only now (operations may have merged them): resolve layouts and pointers against them
    for op in ops:
        if op["op"] == "launch":
            op["relocations"] = _relocations(base64.b64decode(op["packed"]), regions)
        elif op["op"] == "fill":
            op["target"] = _layout(regions, op["target"])
        else:
            op["dest"], op["src"] = _layout(regions, op["dest"]), _layout(regions, op["src"])
    blobs, offset, region_meta = [], 0, []
    for lo, hi in regions.spans:
        data = ctypes.string_at(lo, hi - lo)
        region_meta.append({"size": hi - lo, "offset": offset})
        blobs.append(data)
        offset += len(data)
    param_meta = {}
    for name, arr in params.items():
        root = arr
        while getattr(root, "_parent", None) is not None:
            root = root._parent
        region, off = regions.find(root._ptr)
        param_meta[name] = {"region": region, "offset": off, "size": int(root.capacity)}
    header = json.dumps({"format": 1, "device": "cpu", "regions": region_meta, "params": param_meta,
                         "modules": sorted(modules), "ops": ops}).encode()
    wrp = _wrp_path(path)
    mod_dir = wrp[:-4] + "_modules"
    os.makedirs(os.path.dirname(os.path.abspath(wrp)), exist_ok=True)
    os.makedirs(mod_dir, exist_ok=True)
    for filename, source in modules.items():
        with open(os.path.join(mod_dir, filename), "w") as f:
            f.write(source)
    with open(wrp, "wb") as f:
        f.write(MAGIC + struct.pack("<Q", len(header)) + header)
        for data in blobs:
            f.write(data)


# ---------------------------------------------------------------------- loading
class _LoadedState:
    """The memory and parameters of a loaded graph (kept alive by the graph)."""

    def __init__(self, regions: list[np.ndarray], params: dict):
        self.regions = regions
        self.params = params  # name -> (region, offset, size)

    def window(self, name: str) -> np.ndarray:
        if name not in self.params:
            raise RuntimeError(f"the loaded graph has no parameter '{name}' (it has: {', '.join(self.params) or 'none'})")
        region, off, size = self.params[name]
        return self.regions[region][off:off + size]


def _view(regions: list[np.ndarray], lay: dict) -> np.ndarray:
    buf = regions[lay["region"]]
    return np.ndarray(tuple(lay["shape"]), dtype=np.dtype(f"V{lay['itemsize']}"), buffer=buf, offset=lay["offset"],
                      strides=tuple(lay["strides"]))


@functools.cache
def _entry(source: str, name: str, debug: bool):
    lib = pipeline.build(source, name, debug)
    fwd = lib._FuncPtr(("weft_fwd", lib))
    fwd.restype = ctypes.c_int32
    size = lib.weft_args_size
    size.restype = ctypes.c_int32
    return fwd, int(size())


def _launch_op(op: dict, source: str, regions: list[np.ndarray]):
    packed = bytearray(base64.b64decode(op["packed"]))
    for off, region, delta in op["relocations"]:
        _WORD.pack_into(packed, off, regions[region].ctypes.data + delta)
    packed = bytes(packed)
    name, debug = op["kernel"], op["debug"]
    fwd, size = _entry(source, name, debug)
    if size != len(packed):
        raise RuntimeError(f"capture_load: the module of kernel '{name}' takes {size} argument bytes, the file holds "
                           f"{len(packed)}")
    dims = tuple(op["dims"])
    dims_b = launch_mod._DIMS[len(dims)].pack(*dims)

    def run() -> None:
        nthreads = launch_threads()
        status = fwd(packed, dims_b, len(dims), nthreads)
        if status:
            finish_entry(status, lambda: _strided(source, name, debug), name, packed, dims_b, len(dims), nthreads)
    return run


def _strided(source: str, name: str, debug: bool):
    lib = pipeline.build(source, name + "_strided", debug, strided=True)
    fn = lib._FuncPtr(("weft_fwd", lib))
    fn.restype = ctypes.c_int32
    return fn


def _fill_op(op: dict, regions: list[np.ndarray]):
    view = _view(regions, op["target"])
    value = np.frombuffer(base64.b64decode(op["pattern"]), dtype=view.dtype)[0]

    def run() -> None:
        view[...] = value
    return run


def _copy_op(op: dict, regions: list[np.ndarray]):
    dest, src = _view(regions, op["dest"]), _view(regions, op["src"])
    d_idx = np.unravel_index(np.arange(op["dest_offset"], op["dest_offset"] + op["count"]), dest.shape)
    s_idx = np.unravel_index(np.arange(op["src_offset"], op["src_offset"] + op["count"]), src.shape)

    def run() -> None:
        dest[d_idx] = src[s_idx].copy()
    return run


def _load(data: memoryview, read_module, device) -> Graph:
    dev = D.get_device(device)
    if not dev.impl.capture_by_replay:
        raise RuntimeError(f"capture_load: the file holds a CPU graph; load it on the CPU, not {dev}")
    if bytes(data[:8]) != MAGIC or len(data) < 16:
        raise RuntimeError("capture_load: not a weft capture file (bad magic)")
    (hlen,) = struct.unpack_from("<Q", data, 8)
    try:
        meta = json.loads(bytes(data[16:16 + hlen]))
    except ValueError as exc:
        raise RuntimeError(f"capture_load: the file's header is malformed ({exc})") from None
    base = 16 + hlen
    regions = []
    for r in meta["regions"]:
        if base + r["offset"] + r["size"] > len(data):
            raise RuntimeError("capture_load: the file is truncated (a memory region is missing)")
        buf = aligned_zeros((r["size"],), np.uint8)
        buf[...] = np.frombuffer(data, dtype=np.uint8, count=r["size"], offset=base + r["offset"])
        regions.append(buf)
    sources = {name: read_module(name) for name in meta["modules"]}
    graph = Graph(dev)
    graph.apic = True
    for op in meta["ops"]:
        if op["op"] == "launch":
            graph.launches.append(_launch_op(op, sources[op["module"]], regions))
        elif op["op"] == "fill":
            graph.launches.append(_fill_op(op, regions))
        elif op["op"] == "copy":
            graph.launches.append(_copy_op(op, regions))
        else:
            raise RuntimeError(f"capture_load: unknown operation {op['op']!r} in the file")
    params = {n: (p["region"], p["offset"], p["size"]) for n, p in meta["params"].items()}
    graph._loaded = _LoadedState(regions, params)
    return graph


def capture_load(path, device=None) -> Graph:
    """Load a graph written by :func:`capture_save` (its ``<stem>_modules/`` folder beside it) onto the CPU; replay it
    with ``wp.capture_launch``."""
    wrp = _wrp_path(path)
    with open(wrp, "rb") as f:
        data = f.read()
    mod_dir = wrp[:-4] + "_modules"

    def read_module(name: str) -> str:
        p = os.path.join(mod_dir, name)
        if not os.path.isfile(p):
            raise RuntimeError(f"capture_load: module '{name}' is missing from {mod_dir}")
        with open(p) as f:
            return f.read()
    return _load(memoryview(data), read_module, device)


def _bytes_view(data, what: str) -> memoryview:
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError(f"{what} must be a bytes-like object, got {type(data).__name__}") from None
    if not view.c_contiguous:
        raise ValueError(f"{what} must be a C-contiguous buffer")
    return view.cast("B")


def capture_load_from_bytes(data, modules: Mapping | None = None, device=None) -> Graph:
    """:func:`capture_load` from memory: ``data`` is the ``.wrp`` file's contents, ``modules`` maps each file name of
    its ``<stem>_modules/`` folder to that file's contents (may be omitted when the graph launches no kernels)."""
    if modules is None:
        modules = {}
    elif not isinstance(modules, Mapping):
        raise TypeError(f"modules must be a mapping from filename to bytes, got {type(modules).__name__}")
    views = {}
    for name, contents in modules.items():
        if not isinstance(name, str):
            raise TypeError(f"Module names must be strings, got {type(name).__name__}")
        views[name] = _bytes_view(contents, f"Module '{name}'")
    view = _bytes_view(data, "data")

    def read_module(name: str) -> str:
        if name not in views:
            raise RuntimeError(f"capture_load_from_bytes: module '{name}' is not in modules")
        return bytes(views[name]).decode()
    return _load(view, read_module, device)
