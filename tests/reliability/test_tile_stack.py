"""CPU tiles are locals on the running thread's stack: a block whose tiles do not fit raises a weft error naming the
kernel instead of overflowing the stack (which killed the process with SIGSEGV before)."""

from __future__ import annotations

from .child import run_child


def test_tiles_larger_than_the_thread_stack_raise_and_fitting_ones_run():
    out = run_child("""
        import threading
        import numpy as np
        import weft as wp

        N = 1 << 16  # 256 KiB per float32 tile (over the 256 KiB the check starts at)

        @wp.kernel
        def big_tiles(a: wp.array(dtype=float), out: wp.array(dtype=float)):
            t = wp.tile_load(a, shape=N)
            wp.tile_store(out, wp.tile_sum(wp.tile_map(wp.sin, t)))

        a = wp.array(np.linspace(0.0, 1.0, N, dtype=np.float32))
        out = wp.zeros(1, dtype=float)
        results = {}

        def run(label):
            try:
                wp.launch_tiled(big_tiles, dim=1, inputs=[a, out], block_dim=1)
                results[label] = float(out.numpy()[0])
            except wp.Error as e:
                results[label] = e

        for label, stack in (("roomy", 16 << 20), ("small", 256 << 10)):
            threading.stack_size(stack)
            th = threading.Thread(target=run, args=(label,))
            th.start()
            th.join()
        expected = np.sin(np.linspace(0.0, 1.0, N, dtype=np.float64)).sum()
        assert abs(results["roomy"] - expected) <= 1e-4 * expected, (results["roomy"], expected)
        err = results["small"]
        assert isinstance(err, wp.Error), err
        assert "big_tiles" in str(err) and "stack" in str(err), str(err)
        print("ok")
    """)
    assert out.strip().endswith("ok")
