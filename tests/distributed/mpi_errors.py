"""Run under mpirun with one mode: bad input across ranks (every rank must raise) or a failing rank."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from mpi4py import MPI

import weft as wp
import weft.distributed as wd

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
mode = sys.argv[1]


def report(fn):
    try:
        fn()
    except wd.DistributedError as exc:
        print(f"rank {rank} raised: {exc}", flush=True)
    else:
        print(f"rank {rank} did not raise", flush=True)


if mode == "shapes":
    report(lambda: wd.decompose((8 + rank, 8), comm))
elif mode == "halo":
    dec = wd.decompose((4, 6), comm, dims=(comm.size, 1))
    report(lambda: wd.HaloExchange(dec, halo=3, dtype=float))
elif mode == "local-shape":
    dec = wd.decompose((8, 6), comm, dims=(comm.size, 1))
    a = wp.zeros((dec.local_shape[0] + 2 + rank, 8), dtype=float)
    report(lambda: wd.halo_exchange(a, dec, halo=1))
elif mode == "fft":
    report(lambda: wd.SlabFFT2D((2 * comm.size + 1, 8), comm))
elif mode in ("dies", "stalls"):
    dec = wd.decompose((8, 8), comm, dims=(comm.size, 1))
    a = dec.zeros(halo=1)
    wd.halo_exchange(a, dec, halo=1)  # a first exchange works
    if rank == 1:
        if mode == "dies":
            os._exit(3)
        time.sleep(600)
    wd.halo_exchange(a, dec, halo=1)  # rank 0: the neighbour is gone
    print(f"rank {rank} finished the exchange", flush=True)
