"""A ~60-line kernel (funcs, vector math, a dynamic loop, branches) timed for cold compile and warm load.

Loaded like ``_core_kernels.py``: the loader injects ``wp`` (weft or warp).
"""

try:
    wp  # noqa: B018
except NameError:
    import weft as wp


@wp.func
def soft_spring(d: wp.vec3, rest: float, stiffness: float) -> wp.vec3:
    length = wp.length(d)
    if length < 1.0e-6:
        return wp.vec3(0.0, 0.0, 0.0)
    stretch = length - rest
    return d * (stiffness * stretch / length)


@wp.func
def boundary_force(p: wp.vec3, lo: float, hi: float, k: float) -> wp.vec3:
    f = wp.vec3(0.0, 0.0, 0.0)
    for axis in range(3):
        if p[axis] < lo:
            f[axis] = k * (lo - p[axis])
        elif p[axis] > hi:
            f[axis] = k * (hi - p[axis])
    return f


@wp.kernel
def particle_step(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    neighbours: wp.array2d(dtype=int),
    mass: wp.array(dtype=float),
    gravity: wp.vec3,
    rest: float,
    stiffness: float,
    damping: float,
    dt: float,
    x_out: wp.array(dtype=wp.vec3),
    v_out: wp.array(dtype=wp.vec3),
    energy: wp.array(dtype=float),
):
    i = wp.tid()
    xi = x[i]
    vi = v[i]
    f = gravity * mass[i]
    count = neighbours.shape[1]
    for k in range(count):
        j = neighbours[i, k]
        if j < 0 or j == i:
            continue
        d = x[j] - xi
        f = f + soft_spring(d, rest, stiffness)
        rel = v[j] - vi
        f = f + damping * wp.dot(rel, wp.normalize(d)) * wp.normalize(d)
    f = f + boundary_force(xi, -10.0, 10.0, 100.0 * stiffness)
    inv_m = 1.0 / wp.max(mass[i], 1.0e-6)
    v_new = vi + dt * inv_m * f
    speed = wp.length(v_new)
    if speed > 50.0:
        v_new = v_new * (50.0 / speed)
    x_new = xi + dt * v_new
    x_out[i] = x_new
    v_out[i] = v_new
    ke = 0.5 * mass[i] * wp.dot(v_new, v_new)
    pe = mass[i] * wp.abs(gravity[1]) * (x_new[1] + 10.0)
    wp.atomic_add(energy, 0, ke + pe)
