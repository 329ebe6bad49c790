"""Tile adjoint slots left unzeroed because their first contribution stores (``Op.adjoint_store``: tile_transpose,
tile_fft / tile_ifft, tile_map; ``weft::fresh`` in the CPU tile body, autodiff/decls.py): gradients against float64
central differences where the store is the only contribution, where later contributions add to it, and where a
tile passed twice to one call must not take the store form; and the rendered body's declarations."""

from __future__ import annotations

from tiles.test_grad import arr, fd_check

import weft as wp
from weft import pipeline
from weft.pipeline import Direction, Target

F64 = wp.float64
C64 = wp.vec2d
N, R = 8, 4


@wp.func
def copy_c(z: C64):
    return z


@wp.func
def scale_c(z: C64, s: F64):
    return z * s


@wp.func
def prod(x: F64, y: F64):
    return x * y + wp.sin(x)


@wp.kernel
def column_chain(s: wp.array2d(dtype=C64), k: wp.array2d(dtype=F64), out: wp.array2d(dtype=C64)):
    # the shape of the fluids example's column solve: every adjoint slot but the stored one is written first in full
    i, _ = wp.tid()
    cols = wp.tile_load(s, shape=(N, R), offset=(0, i * R))
    t = wp.tile_map(copy_c, wp.tile_transpose(cols))
    wp.tile_fft(t)
    kk = wp.tile_load(k, shape=(R, N), offset=(i * R, 0))
    u = wp.tile_map(scale_c, t, kk)
    wp.tile_ifft(u)
    wp.tile_store(out, wp.tile_transpose(u), offset=(0, i * R))


@wp.kernel
def stored_then_added(a: wp.array2d(dtype=F64), u_out: wp.array2d(dtype=F64), v_out: wp.array2d(dtype=F64)):
    # t's first contribution (in the reverse sweep) is the transpose's store; the map, which names t twice, adds
    t = wp.tile_load(a, shape=(R, R))
    u = wp.tile_map(prod, t, t)
    v = wp.tile_transpose(t)
    wp.tile_store(u_out, u)
    wp.tile_store(v_out, v)


@wp.kernel
def mapped_then_added(a: wp.array2d(dtype=F64), b: wp.array2d(dtype=F64), u_out: wp.array2d(dtype=F64),
                      v_out: wp.array2d(dtype=F64)):
    # reverse order: the transpose of v names t first (a store), then the map over (t, tb) adds to it
    t = wp.tile_load(a, shape=(R, R))
    tb = wp.tile_load(b, shape=(R, R))
    v = wp.tile_transpose(t)
    u = wp.tile_map(prod, t, tb)
    wp.tile_store(u_out, u)
    wp.tile_store(v_out, wp.tile_map(prod, v, v))


@wp.kernel
def shifted_store(a: wp.array2d(dtype=F64), out: wp.array2d(dtype=F64)):
    # tile_store's store form: rows past the array's end (block i = 1) and a partial last column (block j = 1, the
    # element-wise path) leave zeros in u's slot, which the map's adjoint then reads everywhere
    i, j = wp.tid()
    t = wp.tile_load(a, shape=(R, R), offset=(i * R, j * R))
    u = wp.tile_map(prod, t, t)
    wp.tile_store(out, u, offset=(i * R + 2, j * R + 1))


def test_edge_store_gradient():
    fd_check(shifted_store, {"a": arr((2 * R, 2 * R), 11)}, {"out": arr((2 * R, 2 * R), 12)}, dim=[2, 2])


def test_column_chain_gradient():
    fd_check(column_chain, {"s": arr((N, N), 1, C64), "k": arr((N, N), 2)}, {"out": arr((N, N), 3, C64)},
             dim=[N // R, 1])


def test_store_then_adds_gradient():
    fd_check(stored_then_added, {"a": arr((R, R), 4)}, {"u_out": arr((R, R), 5), "v_out": arr((R, R), 6)}, dim=[1, 1])


def test_map_store_then_adds_gradient():
    fd_check(mapped_then_added, {"a": arr((R, R), 7), "b": arr((R, R), 8)},
             {"u_out": arr((R, R), 9), "v_out": arr((R, R), 10)}, dim=[1, 1])


def _adjoint_cpp(kernel, args) -> str:
    spec = kernel._lower(kernel.infer_types(args), False, 16)
    prog = pipeline.differentiate(spec.fn)
    return pipeline.render_module(prog, "k", False, Target.CPU, Direction.ADJOINT).source


def test_rendered_declarations():
    src = _adjoint_cpp(stored_then_added, [arr((R, R), 0), arr((R, R), 0), arr((R, R), 0)])
    body = src[src.index("void bwd_body("):]
    # the map over (t, t) adds twice: no store form there; the transpose's store comes first in the sweep
    assert "weft::adj_tile_transpose(weft::fresh(" in body
    # the three slots are written first in full: t's by the transpose, u's and v's by tile_store's adjoint
    assert body.count("weft::fresh(") == 3 and "weft::adj_tile_store(args.u_out, weft::fresh(" in body
    fresh = [ln.split()[-1].rstrip(";") for ln in body.splitlines() if ln.strip().startswith("weft::tile_t")
             and ln.rstrip().endswith(";") and "=" not in ln]
    adjoints = [name for name in fresh if name.startswith("adj_")]
    assert adjoints and all(f"weft::fresh({name})" in body for name in adjoints)
    # the primal tiles without zero fill are those the replay defines first with a full write (Op.writes_result):
    # t (tile_load); u and v, left out of the replay, are not written there
    primal = [name for name in fresh if not name.startswith("adj_")]
    assert primal == ["t_0"] and "weft::tile_load(t_0, args.a" in body
    cuda = pipeline.render_module(pipeline.differentiate(
        stored_then_added._lower(stored_then_added.infer_types([arr((R, R), 0)] * 3), False, 16).fn),
        "k", False, Target.CUDA, Direction.ADJOINT).source
    assert "weft::fresh(" not in cuda  # the cooperative CUDA natives have no store forms
