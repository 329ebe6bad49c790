"""Random streams, samplers, Poisson counts and Perlin / periodic / curl noise against float64 NumPy references.

The references re-derive each value from the PCG hash in NumPy (uint32 arithmetic), so they check the exact
stream (the same as Warp's for a seed) and the interpolation formulas; gradients are checked by the FD table
(tests/autodiff/op_table.py, domain "noise").
"""

import numpy as np

import weft as wp

M32 = np.uint64(0xFFFFFFFF)


# ------------------------------------------------------------------------------------------------ NumPy reference
def pcg(state):
    s = (np.asarray(state, np.uint64) * np.uint64(747796405) + np.uint64(2891336453)) & M32
    w = (((s >> ((s >> np.uint64(28)) + np.uint64(4))) ^ s) * np.uint64(277803737)) & M32
    return (w >> np.uint64(22)) ^ w


def rand_init(seed, offset=None):
    seed = np.asarray(seed, np.int64).astype(np.uint64) & M32
    return pcg(seed if offset is None else (seed + pcg(np.asarray(offset, np.int64).astype(np.uint64) & M32)) & M32)


class Stream:
    """A per-thread state array advanced like the kernels' (each draw replaces the state by its hash)."""

    def __init__(self, state):
        self.s = np.asarray(state, np.uint64)

    def bits(self):
        self.s = pcg(self.s)
        return self.s

    def randf(self):
        return (self.bits() >> np.uint64(8)).astype(np.float64) / 16777216.0


def fade(t):
    return t ** 3 * (t * (t * 6 - 15) + 10)


def corner_gradient(state, corner):
    """corner: (n, N) int64 lattice coordinates -> (n, N) gradient (float64 from the float32 draws)."""
    primes = np.array([73856093, 19349663, 53471161, 10000019], np.uint64)
    n_dim = corner.shape[1]
    c = corner.astype(np.int64).astype(np.uint64) & M32
    h = (c[:, -1] * primes[n_dim - 1] + np.uint64(state)) & M32
    for a in range(n_dim - 1):
        h ^= (c[:, a] * primes[a]) & M32
    st = Stream(h)
    if n_dim == 1:
        return (2.0 * st.randf() - 1.0)[:, None]
    g = np.stack([st.randf() - 0.5 for _ in range(n_dim)], 1)
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def perlin(state, p, period=None):
    p = np.atleast_2d(np.asarray(p, np.float64))
    n_dim = p.shape[1]
    base = np.floor(p)
    d = p - base
    lo = base.astype(np.int64)
    hi = lo + 1
    if period is not None:
        per = np.asarray(period)
        lo, hi = np.mod(lo, per), np.mod(hi, per)
    vals = {}
    for c in range(1 << n_dim):
        bits = np.array([(c >> a) & 1 for a in range(n_dim)])
        corner = np.where(bits, hi, lo)
        vals[c] = np.sum(corner_gradient(state, corner) * (d - bits), axis=1)
    for k in range(n_dim):
        s = fade(d[:, k])
        vals = {c: vals[c] + (vals[c + (1 << k)] - vals[c]) * s for c in vals if not (c >> k) & 1}
    return vals[0]


# ------------------------------------------------------------------------------------------------ random streams
@wp.kernel
def stream_k(seed: int, i_out: wp.array2d(dtype=int), u_out: wp.array2d(dtype=wp.uint32),
             f_out: wp.array2d(dtype=float), v2: wp.array2d(dtype=wp.vec2), v3: wp.array2d(dtype=wp.vec3),
             cdf: wp.array(dtype=float)):
    t = wp.tid()
    state = wp.rand_init(seed, t)
    i_out[t, 0] = wp.randi(state)
    i_out[t, 1] = wp.randi(state, -7, 9)
    u_out[t, 0] = wp.randu(state)
    u_out[t, 1] = wp.randu(state, wp.uint32(3), wp.uint32(40))
    f_out[t, 0] = wp.randf(state)
    f_out[t, 1] = wp.randf(state, -2.0, 5.0)
    f_out[t, 2] = wp.randn(state)
    i_out[t, 2] = wp.sample_cdf(state, cdf)
    v2[t, 0] = wp.sample_triangle(state)
    v2[t, 1] = wp.sample_unit_ring(state)
    v2[t, 2] = wp.sample_unit_disk(state)
    v2[t, 3] = wp.sample_unit_square(state)
    v3[t, 0] = wp.sample_unit_sphere_surface(state)
    v3[t, 1] = wp.sample_unit_sphere(state)
    v3[t, 2] = wp.sample_unit_hemisphere_surface(state)
    v3[t, 3] = wp.sample_unit_hemisphere(state)
    v3[t, 4] = wp.sample_unit_cube(state)
    u_out[t, 2] = wp.poisson(state, 3.5)
    u_out[t, 3] = wp.poisson(state, 42.0)


def _run_stream(n, cdf):
    outs = [wp.zeros((n, 3), dtype=int), wp.zeros((n, 4), dtype=wp.uint32), wp.zeros((n, 3), dtype=float),
            wp.zeros((n, 4), dtype=wp.vec2), wp.zeros((n, 5), dtype=wp.vec3)]
    wp.launch(stream_k, dim=n, inputs=[1234, *outs, wp.array(cdf, dtype=float)])
    return [o.numpy() for o in outs]


def test_streams_match_the_pcg_reference_exactly():
    n = 64
    cdf = np.cumsum(np.arange(1, 9, dtype=np.float64)) / 36.0
    i_out, u_out, f_out, v2, v3 = _run_stream(n, cdf)
    st = Stream(rand_init(1234, np.arange(n)))
    np.testing.assert_array_equal(i_out[:, 0], st.bits().astype(np.uint32).view(np.int32))
    np.testing.assert_array_equal(i_out[:, 1], (st.bits() % np.uint64(16)).astype(np.int64) - 7)
    np.testing.assert_array_equal(u_out[:, 0], st.bits())
    np.testing.assert_array_equal(u_out[:, 1], st.bits() % np.uint64(37) + np.uint64(3))
    np.testing.assert_array_equal(f_out[:, 0], st.randf().astype(np.float32))
    np.testing.assert_allclose(f_out[:, 1], 7.0 * st.randf() - 2.0, rtol=1e-6, atol=1e-6)
    r, a = st.randf() + 5.96e-8, st.randf()
    np.testing.assert_allclose(f_out[:, 2], np.sqrt(-2 * np.log(r)) * np.cos(2 * np.pi * a), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(i_out[:, 2], np.searchsorted(cdf.astype(np.float32), st.randf(), side="left"))
    s = np.sqrt(st.randf())
    np.testing.assert_allclose(v2[:, 0], np.stack([1 - s, st.randf() * s], 1), atol=1e-6)
    a = 2 * np.pi * st.randf()
    np.testing.assert_allclose(v2[:, 1], np.stack([np.cos(a), np.sin(a)], 1), atol=1e-5)
    r = np.sqrt(st.randf())
    a = 2 * np.pi * st.randf()
    np.testing.assert_allclose(v2[:, 2], np.stack([r * np.cos(a), r * np.sin(a)], 1), atol=1e-5)
    np.testing.assert_allclose(v2[:, 3], np.stack([st.randf() - 0.5, st.randf() - 0.5], 1), atol=1e-7)

    def direction(z):
        a = 2 * np.pi * st.randf()
        rho = np.sqrt(1 - z * z)
        return np.stack([rho * np.cos(a), rho * np.sin(a), z], 1)

    np.testing.assert_allclose(v3[:, 0], direction(1 - 2 * st.randf()), atol=1e-5)
    d = direction(1 - 2 * st.randf())
    np.testing.assert_allclose(v3[:, 1], d * np.cbrt(st.randf())[:, None], atol=1e-5)
    np.testing.assert_allclose(v3[:, 2], direction(1 - st.randf()), atol=1e-5)
    d = direction(1 - st.randf())
    np.testing.assert_allclose(v3[:, 3], d * np.cbrt(st.randf())[:, None], atol=1e-5)
    np.testing.assert_allclose(v3[:, 4], np.stack([st.randf() - 0.5 for _ in range(3)], 1), atol=1e-7)


@wp.kernel
def stream_in_loop(n: int, out: wp.array(dtype=int)):
    state = wp.rand_init(7)
    for k in range(n):  # a dynamic loop: the state advances every iteration
        out[k] = wp.randi(state)


def test_state_advances_in_dynamic_loops():
    out = wp.zeros(5, dtype=int)
    wp.launch(stream_in_loop, dim=1, inputs=[5, out])
    st = Stream(rand_init(7))
    np.testing.assert_array_equal(out.numpy(), [st.bits().astype(np.uint32).view(np.int32) for _ in range(5)])


def test_sampler_domains_and_distributions():
    n = 20_000
    cdf = np.cumsum(np.arange(1, 9, dtype=np.float64)) / 36.0
    i_out, u_out, _, v2, v3 = _run_stream(n, cdf)
    # sample_cdf draws index k with probability cdf[k] - cdf[k-1]
    freq = np.bincount(i_out[:, 2], minlength=8) / n
    np.testing.assert_allclose(freq, np.diff(cdf, prepend=0.0), atol=0.01)
    tri = v2[:, 0]
    assert tri.min() >= 0 and (tri.sum(1) <= 1 + 1e-6).all()
    np.testing.assert_allclose(tri.mean(0), [1 / 3, 1 / 3], atol=0.01)  # the centroid
    np.testing.assert_allclose(np.linalg.norm(v2[:, 1], axis=1), 1.0, atol=1e-6)
    disk_r = np.linalg.norm(v2[:, 2], axis=1)
    assert disk_r.max() <= 1 + 1e-6 and abs(np.mean(disk_r < 0.5) - 0.25) < 0.015  # area fraction
    sph = v3[:, 0]
    np.testing.assert_allclose(np.linalg.norm(sph, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(sph.mean(0), 0.0, atol=0.02)
    np.testing.assert_allclose(np.mean(sph ** 2, 0), 1 / 3, atol=0.01)
    ball_r = np.linalg.norm(v3[:, 1], axis=1)
    assert ball_r.max() <= 1 + 1e-6 and abs(np.mean(ball_r < 0.5) - 0.125) < 0.01  # volume fraction
    assert (v3[:, 2][:, 2] >= 0).all() and (v3[:, 3][:, 2] >= 0).all()
    np.testing.assert_allclose(v3[:, 2][:, 2].mean(), 0.5, atol=0.01)  # z uniform on the hemisphere surface
    assert np.abs(v3[:, 4]).max() <= 0.5
    for col, lam in ((2, 3.5), (3, 42.0)):
        k = u_out[:, col].astype(np.float64)
        assert abs(k.mean() - lam) < 4 * np.sqrt(lam / n) and abs(k.var() / lam - 1) < 0.05
        # P(K = 0) and P(K = round(lam)) against the pmf
        for kk in (0, int(lam)):
            p = np.exp(-lam + kk * np.log(lam) - sum(np.log(np.arange(1, kk + 1))))
            assert abs(np.mean(k == kk) - p) < 5 * np.sqrt(p / n) + 1e-4


@wp.kernel
def poisson_edge_k(states: wp.array(dtype=wp.uint32), lam: float, out: wp.array(dtype=wp.uint32)):
    t = wp.tid()
    out[t] = wp.poisson(states[t], lam)


def test_poisson_rejects_negative_candidates_and_zero_rate():
    # states whose first rejection proposal at lam = 10 is negative (a uniform draw of 0 -> u = -0.5)
    st = np.array([962669792, 1029222154, 1536123189, 5], np.uint32)
    out = wp.zeros(4, dtype=wp.uint32)
    wp.launch(poisson_edge_k, dim=4, inputs=[wp.array(st, dtype=wp.uint32), 10.0, out])
    assert ((out.numpy() > 0) & (out.numpy() < 100)).all()
    wp.launch(poisson_edge_k, dim=4, inputs=[wp.array(st, dtype=wp.uint32), 0.0, out])
    assert (out.numpy() == 0).all()


# ------------------------------------------------------------------------------------------------ noise
@wp.kernel
def noise_k(seed: int, p4: wp.array(dtype=wp.vec4), out: wp.array2d(dtype=float), c2: wp.array(dtype=wp.vec2),
            c3: wp.array(dtype=wp.vec3), c4: wp.array(dtype=wp.vec3)):
    t = wp.tid()
    state = wp.rand_init(seed)
    p = p4[t]
    q2 = wp.vec2(p[0], p[1])
    q3 = wp.vec3(p[0], p[1], p[2])
    out[t, 0] = wp.noise(state, p[0])
    out[t, 1] = wp.noise(state, q2)
    out[t, 2] = wp.noise(state, q3)
    out[t, 3] = wp.noise(state, p)
    out[t, 4] = wp.pnoise(state, p[0], 3)
    out[t, 5] = wp.pnoise(state, q2, 4, 5)
    out[t, 6] = wp.pnoise(state, q3, 2, 3, 4)
    out[t, 7] = wp.pnoise(state, p, 5, 4, 3, 2)
    # pnoise repeats with its periods
    out[t, 8] = wp.pnoise(state, q3 + wp.vec3(2.0, 6.0, 4.0), 2, 3, 4)
    c2[t] = wp.curlnoise(state, q2)
    c3[t] = wp.curlnoise(state, q3, wp.uint32(2), 2.0, 0.5)
    c4[t] = wp.curlnoise(state, p, octaves=wp.uint32(2), gain=0.25)


def test_noise_matches_the_numpy_reference():
    n = 40
    rng = np.random.default_rng(5)
    p = rng.uniform(-7.9, 7.9, size=(n, 4)).astype(np.float32)
    out = wp.zeros((n, 9), dtype=float)
    c2, c3, c4 = wp.zeros(n, dtype=wp.vec2), wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3)
    wp.launch(noise_k, dim=n, inputs=[17, wp.array(p, dtype=wp.vec4), out, c2, c3, c4])
    o = out.numpy()
    state = int(rand_init(17))
    pd = p.astype(np.float64)
    for col, dims in enumerate((1, 2, 3, 4)):
        np.testing.assert_allclose(o[:, col], perlin(state, pd[:, :dims]), atol=2e-6)
    for col, period in ((4, (3,)), (5, (4, 5)), (6, (2, 3, 4)), (7, (5, 4, 3, 2))):
        np.testing.assert_allclose(o[:, col], perlin(state, pd[:, :len(period)], period), atol=2e-6)
    np.testing.assert_allclose(o[:, 8], o[:, 6], atol=1e-5)
    assert np.abs(o[:, :4]).max() < 1.0 and o[:, :4].std() > 0.05

    # curl noise: the 2-D field is the rotated gradient of the noise; every field is divergence-free
    h = 1e-4

    def grad(f, x):
        return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.shape[1])], 1)

    g = grad(lambda x: perlin(state, x), pd[:, :2])
    np.testing.assert_allclose(c2.numpy(), np.stack([-g[:, 1], g[:, 0]], 1), atol=2e-4)

    def curl3(x, octaves, lac, gain, dims):
        """The 3-D curl of three noise fields per octave, the field states derived as in the kernels."""
        s, total = state, np.zeros((len(x), 3))
        for i in range(octaves):
            pt = x * lac ** i
            s1 = s
            s2 = int(rand_init(s1, 10019689))
            s3 = int(rand_init(s2, 13112221))
            g1, g2, g3 = (grad(lambda y, ss=ss: perlin(ss, y), pt) for ss in (s1, s2, s3))
            total += gain ** i * np.stack([g3[:, 1] - g2[:, 2], g1[:, 2] - g3[:, 0], g2[:, 0] - g1[:, 1]], 1)
            s = s3
        return total

    np.testing.assert_allclose(c3.numpy(), curl3(pd[:, :3], 2, 2.0, 0.5, 3), atol=5e-4)
    np.testing.assert_allclose(c4.numpy(), curl3(pd, 2, 2.0, 0.25, 4), atol=5e-4)


def test_curlnoise_keywords_and_errors():
    import pytest

    @wp.kernel
    def bad(out: wp.array(dtype=wp.vec2)):
        out[0] = wp.curlnoise(wp.rand_init(1), wp.vec2(0.5, 0.5), wiggle=2.0)

    with pytest.raises(wp.Error, match="wiggle"):
        wp.launch(bad, dim=1, inputs=[wp.zeros(1, dtype=wp.vec2)])
