"""atomic_and / atomic_or / atomic_xor under contention against NumPy's bitwise reductions (8-, 32- and 64-bit
integers, integer vectors), and the old value they return."""

import numpy as np

import weft as wp

SLOTS = 4


@wp.kernel
def bitwise_k(v32: wp.array(dtype=wp.int32), v8: wp.array(dtype=wp.uint8), v64: wp.array(dtype=wp.int64),
              vv: wp.array(dtype=wp.vec3ui), a32: wp.array2d(dtype=wp.int32), a8: wp.array2d(dtype=wp.uint8),
              a64: wp.array2d(dtype=wp.int64), av: wp.array2d(dtype=wp.vec3ui), old: wp.array(dtype=wp.int32)):
    i = wp.tid()
    s = i % 4
    old[i] = wp.atomic_and(a32, 0, s, v32[i])
    wp.atomic_or(a32, 1, s, v32[i])
    wp.atomic_xor(a32, 2, s, v32[i])
    wp.atomic_and(a8, 0, s, v8[i])
    wp.atomic_or(a8, 1, s, v8[i])
    wp.atomic_xor(a8, 2, s, v8[i])
    wp.atomic_and(a64, 0, s, v64[i])
    wp.atomic_or(a64, 1, s, v64[i])
    wp.atomic_xor(a64, 2, s, v64[i])
    wp.atomic_and(av, 0, s, vv[i])
    wp.atomic_or(av, 1, s, vv[i])
    wp.atomic_xor(av, 2, s, vv[i])


def test_bitwise_atomics_match_numpy_reductions():
    n = 4096
    rng = np.random.default_rng(3)
    v32 = rng.integers(-(2 ** 31), 2 ** 31, n).astype(np.int32) | np.int32(0x0F0F0F0F)  # keep some AND bits set
    v8 = (rng.integers(0, 256, n) | 0x81).astype(np.uint8)
    v64 = rng.integers(-(2 ** 63), 2 ** 63, n, dtype=np.int64) | np.int64(0x0101010101010101)
    vv = (rng.integers(0, 2 ** 32, (n, 3), dtype=np.uint64) | 0x10001).astype(np.uint32)
    ones = {np.int32: -1, np.uint8: 255, np.int64: -1, np.uint32: 0xFFFFFFFF}

    def acc(dtype, extra=()):
        a = np.zeros((3, SLOTS, *extra), dtype)
        a[0] = ones[dtype]  # the identity of AND
        return a

    arrays = [wp.array(acc(np.int32), dtype=wp.int32), wp.array(acc(np.uint8), dtype=wp.uint8),
              wp.array(acc(np.int64), dtype=wp.int64), wp.array(acc(np.uint32, (3,)), dtype=wp.vec3ui)]
    old = wp.zeros(n, dtype=wp.int32)
    wp.launch(bitwise_k, dim=n, inputs=[wp.array(v32, dtype=wp.int32), wp.array(v8, dtype=wp.uint8),
                                        wp.array(v64, dtype=wp.int64), wp.array(vv, dtype=wp.vec3ui), *arrays, old])
    slot = np.arange(n) % SLOTS
    for out, v in zip(arrays, (v32, v8, v64, vv)):
        got = out.numpy()
        for s in range(SLOTS):
            part = v[slot == s]
            np.testing.assert_array_equal(got[0, s], np.bitwise_and.reduce(part, axis=0))
            np.testing.assert_array_equal(got[1, s], np.bitwise_or.reduce(part, axis=0))
            np.testing.assert_array_equal(got[2, s], np.bitwise_xor.reduce(part, axis=0))
    # each returned old value is the AND of the values applied before it: a superset of the final bits, and the
    # first thread of each slot (in any order) saw the identity
    final = arrays[0].numpy()[0]
    o = old.numpy()
    assert np.all((o & final[slot]) == final[slot])
    assert np.sum(o == -1) >= 1
