"""Hand-written adjoints of the spring, membrane-triangle, bending-edge and Neo-Hookean tetrahedron force kernels
of ``elastic``.

The generic adjoint of an element kernel replays its forward and then reverses every operation, storing an adjoint
for each temporary: for the tetrahedron that is about five times the forward's cost. These kernels compute the same
gradients from the element's closed form (a Hessian-vector product for the positions, a linear map for the
velocities, dot products for the material parameters), read the gradient of each corner force straight from
``particle_f.grad`` through the element's indices (the gather's adjoint is a lookup), and store the gradients of
the corner positions and velocities in per-slot scratch arrays that ``gather_adjoints`` sums per particle (no
atomics). Element parameters (materials, activations, rest poses, spring constants) belong to one element each, so
their gradients are plain adds; a parameter without a gradient gets a scratch array of its shape instead (the
kernels stay straight-line code, which g++ compiles several times faster than the same code behind branches).

The tests check every gradient against the generic adjoint of the forward kernels (tests/sim/test_elastic_adjoint.py).
"""

import weft as wp


@wp.func
def _cols(a: wp.vec3, b: wp.vec3, c: wp.vec3):
    return wp.mat33(a[0], b[0], c[0], a[1], b[1], c[1], a[2], b[2], c[2])


@wp.func
def _col(m: wp.mat33, k: int):
    return wp.vec3(m[0, k], m[1, k], m[2, k])


@wp.func
def _cofactor(m: wp.mat33):
    """d det(m) / d m (the cofactor matrix): column k is the cross product of the other two columns."""
    c0 = _col(m, 0)
    c1 = _col(m, 1)
    c2 = _col(m, 2)
    return _cols(wp.cross(c1, c2), wp.cross(c2, c0), wp.cross(c0, c1))


@wp.kernel(enable_backward=False)
def adj_springs(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), adj_f: wp.array(dtype=wp.vec3),
                spring_indices: wp.array(dtype=int), rest_lengths: wp.array(dtype=float),
                stiffness: wp.array(dtype=float), damping: wp.array(dtype=float), base: int,
                rest_grad: wp.array(dtype=float), ke_grad: wp.array(dtype=float), kd_grad: wp.array(dtype=float),
                adj_x: wp.array(dtype=wp.vec3), adj_v: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    i = spring_indices[tid * 2 + 0]
    j = spring_indices[tid * 2 + 1]
    if i == -1 or j == -1:
        return
    ke = stiffness[tid]
    kd = damping[tid]
    rest = rest_lengths[tid]
    xij = x[i] - x[j]
    vij = v[i] - v[j]
    length = wp.length(xij)
    d = xij / length
    c = length - rest
    dcdt = wp.dot(d, vij)
    # forward: fs = d (ke c + kd dcdt); corner forces -fs (i) and fs (j)
    b = adj_f[j] - adj_f[i]
    adj_m = wp.dot(b, d)
    adj_d = b * (ke * c + kd * dcdt) + vij * (kd * adj_m)
    adj_xij = (adj_d - d * wp.dot(d, adj_d)) / length + d * (ke * adj_m)
    adj_vij = d * (kd * adj_m)
    adj_x[base + tid * 2 + 0] = adj_xij
    adj_x[base + tid * 2 + 1] = -adj_xij
    adj_v[base + tid * 2 + 0] = adj_vij
    adj_v[base + tid * 2 + 1] = -adj_vij
    rest_grad[tid] = rest_grad[tid] - adj_m * ke
    ke_grad[tid] = ke_grad[tid] + adj_m * c
    kd_grad[tid] = kd_grad[tid] + adj_m * dcdt


@wp.kernel(enable_backward=False)
def adj_bending(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), adj_f: wp.array(dtype=wp.vec3),
                indices: wp.array2d(dtype=int), rest: wp.array(dtype=float),
                bending_properties: wp.array2d(dtype=float), base: int, rest_grad: wp.array(dtype=float),
                props_grad: wp.array2d(dtype=float), adj_x: wp.array(dtype=wp.vec3), adj_v: wp.array(dtype=wp.vec3)):
    """The adjoint of ``elastic.eval_bending`` (the dihedral-angle force on the four corners of an interior edge),
    corner gradients stored corner-major (slot ``base + corner * count + edge``). As in the forward, an edge with a
    removed corner or a degenerate face has no force and so no gradient; the sign of the angle and the acos at a flat
    or folded edge (|cos| >= 1) are differentiated as their generic adjoints do (zero)."""
    tid = wp.tid()
    ne = indices.shape[0]
    z = wp.vec3()
    adj_x[base + tid] = z
    adj_x[base + ne + tid] = z
    adj_x[base + 2 * ne + tid] = z
    adj_x[base + 3 * ne + tid] = z
    adj_v[base + tid] = z
    adj_v[base + ne + tid] = z
    adj_v[base + 2 * ne + tid] = z
    adj_v[base + 3 * ne + tid] = z
    i = indices[tid, 0]
    j = indices[tid, 1]
    k = indices[tid, 2]
    l = indices[tid, 3]
    if i == -1 or j == -1 or k == -1 or l == -1:
        return
    ke = bending_properties[tid, 0]
    kd = bending_properties[tid, 1]
    x1 = x[i]
    x2 = x[j]
    x3 = x[k]
    x4 = x[l]
    p = x3 - x1
    q = x4 - x1
    r = x4 - x2
    t = x3 - x2
    n1 = wp.cross(p, q)
    n2 = wp.cross(r, t)
    l1 = wp.length(n1)
    l2 = wp.length(n2)
    if l1 < 1.0e-6 or l2 < 1.0e-6:
        return
    rcp1 = 1.0 / l1
    rcp2 = 1.0 / l2
    cos_theta = wp.dot(n1, n2) * rcp1 * rcp2  # rounded as the forward rounds it (the acos is steep near flat)
    h1 = n1 * rcp1
    h2 = n2 * rcp2
    m1 = h1 * rcp1
    m2 = h2 * rcp2
    e = x4 - x3
    el = wp.length(e)
    eh = e / el
    s = wp.sign(wp.dot(wp.cross(m2, m1), eh))
    angle = wp.acos(cos_theta) * s
    a3 = wp.dot(x1 - x4, eh)
    b3 = wp.dot(x2 - x4, eh)
    a4 = wp.dot(p, eh)
    b4 = wp.dot(t, eh)
    d1 = m1 * el
    d2 = m2 * el
    d3 = m1 * a3 + m2 * b3
    d4 = m1 * a4 + m2 * b4
    v1 = v[i]
    v2 = v[j]
    v3 = v[k]
    v4 = v[l]
    dv = wp.dot(d1, v1) + wp.dot(d2, v2) + wp.dot(d3, v3) + wp.dot(d4, v4)
    fe = ke * (angle - rest[tid])
    ft = -el * (fe + kd * dv)
    # forward outputs: f_c = d_c ft
    g1 = adj_f[i]
    g2 = adj_f[j]
    g3 = adj_f[k]
    g4 = adj_f[l]
    adj_ft = wp.dot(g1, d1) + wp.dot(g2, d2) + wp.dot(g3, d3) + wp.dot(g4, d4)
    adj_fe = -el * adj_ft  # also the gradient of kd dv
    adj_el = -(fe + kd * dv) * adj_ft
    qd = kd * adj_fe
    adj_v[base + tid] = d1 * qd
    adj_v[base + ne + tid] = d2 * qd
    adj_v[base + 2 * ne + tid] = d3 * qd
    adj_v[base + 3 * ne + tid] = d4 * qd
    props_grad[tid, 0] = props_grad[tid, 0] + (angle - rest[tid]) * adj_fe
    props_grad[tid, 1] = props_grad[tid, 1] + dv * adj_fe
    rest_grad[tid] = rest_grad[tid] - ke * adj_fe
    u1 = g1 * ft + v1 * qd
    u2 = g2 * ft + v2 * qd
    u3 = g3 * ft + v3 * qd
    u4 = g4 * ft + v4 * qd
    adj_m1 = u1 * el + u3 * a3 + u4 * a4
    adj_m2 = u2 * el + u3 * b3 + u4 * b4
    adj_el = adj_el + wp.dot(u1, m1) + wp.dot(u2, m2)
    adj_a3 = wp.dot(u3, m1)
    adj_b3 = wp.dot(u3, m2)
    adj_a4 = wp.dot(u4, m1)
    adj_b4 = wp.dot(u4, m2)
    adj_eh = (x1 - x4) * adj_a3 + (x2 - x4) * adj_b3 + p * adj_a4 + t * adj_b4
    adj_e = (adj_eh - eh * wp.dot(eh, adj_eh)) / el + eh * adj_el
    # angle = s acos(cos_theta), cos_theta = h1.h2; m = n / |n|^2
    adj_cos = 0.0
    den = 1.0 - cos_theta * cos_theta
    if den > 0.0:
        adj_cos = -s * ke * adj_fe / wp.sqrt(den)
    adj_n1 = (adj_m1 - h1 * (2.0 * wp.dot(h1, adj_m1))) / (l1 * l1) + (h2 - h1 * cos_theta) * (adj_cos / l1)
    adj_n2 = (adj_m2 - h2 * (2.0 * wp.dot(h2, adj_m2))) / (l2 * l2) + (h1 - h2 * cos_theta) * (adj_cos / l2)
    # n1 = p x q, n2 = r x t
    adj_p = wp.cross(q, adj_n1)
    adj_q = wp.cross(adj_n1, p)
    adj_r = wp.cross(t, adj_n2)
    adj_t = wp.cross(adj_n2, r)
    adj_x1 = eh * (adj_a3 - adj_a4) - adj_p - adj_q
    adj_x2 = eh * (adj_b3 - adj_b4) - adj_r - adj_t
    adj_x3 = eh * (adj_a4 + adj_b4) + adj_p + adj_t - adj_e
    adj_x4 = -eh * (adj_a3 + adj_b3) + adj_q + adj_r + adj_e
    adj_x[base + tid] = adj_x1
    adj_x[base + ne + tid] = adj_x2
    adj_x[base + 2 * ne + tid] = adj_x3
    adj_x[base + 3 * ne + tid] = adj_x4


@wp.kernel(enable_backward=False)
def adj_triangles(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), adj_f: wp.array(dtype=wp.vec3),
                  idx_t: wp.array2d(dtype=int), pose_t: wp.array2d(dtype=float), activation: wp.array(dtype=float),
                  mat_t: wp.array2d(dtype=float), base: int, act_grad: wp.array(dtype=float),
                  acc: wp.array2d(dtype=float), adj_x: wp.array(dtype=wp.vec3), adj_v: wp.array(dtype=wp.vec3)):
    """The adjoint of ``elastic.eval_triangles`` without lift and drag (both coefficients zero), in the memory layout
    of ``adj_tetrahedra``: element data in rows (``tri_columns``), corner gradients corner-major, the rest-pose and
    material gradients summed in the rows of ``acc`` (g00, g01, g10, g11, mu, lambda, damping) and added once by
    ``tri_param_grads``."""
    tid = wp.tid()
    nt = idx_t.shape[1]
    mu = mat_t[0, tid]
    lam = mat_t[1, tid]
    damp = mat_t[2, tid]
    i = idx_t[0, tid]
    j = idx_t[1, tid]
    k = idx_t[2, tid]
    x0 = x[i]
    v0 = v[i]
    x10 = x[j] - x0
    x20 = x[k] - x0
    v1 = v[j]
    v2 = v[k]
    v10 = v1 - v0
    v20 = v2 - v0
    Dm = wp.mat22(pose_t[0, tid], pose_t[1, tid], pose_t[2, tid], pose_t[3, tid])
    ira = wp.determinant(Dm) * 2.0
    area0 = 1.0 / ira
    kmu = mu * area0
    klam = lam * area0
    kd = damp * area0
    F1 = x10 * Dm[0, 0] + x20 * Dm[1, 0]
    F2 = x10 * Dm[0, 1] + x20 * Dm[1, 1]
    dF1 = v10 * Dm[0, 0] + v20 * Dm[1, 0]
    dF2 = v10 * Dm[0, 1] + v20 * Dm[1, 1]
    P1 = F1 * kmu + dF1 * kd
    P2 = F2 * kmu + dF2 * kd
    alpha = 1.0 + kmu / klam
    n = wp.cross(x10, x20)
    n_len = wp.length(n)
    area = n_len * 0.5
    c = area * ira - alpha + activation[tid]
    nh = n / n_len
    h = ira * 0.5
    cq = wp.cross(x20, nh)
    cr = wp.cross(nh, x10)
    dcdq = cq * h
    dcdr = cr * h
    dcdt = wp.dot(dcdq, v10) + wp.dot(dcdr, v20)
    s = klam * c + kd * dcdt
    # forward outputs: f0 = f1 + f2, -f1, -f2 with f1 = P Dm^T col 0 + dcdq s, f2 = col 1 + dcdr s
    a0 = adj_f[i]
    b1 = a0 - adj_f[j]
    b2 = a0 - adj_f[k]
    adj_s = wp.dot(b1, dcdq) + wp.dot(b2, dcdr)
    adj_dcdq = b1 * s + v10 * (kd * adj_s)
    adj_dcdr = b2 * s + v20 * (kd * adj_s)
    adj_v10 = dcdq * (kd * adj_s)
    adj_v20 = dcdr * (kd * adj_s)
    adj_kd = adj_s * dcdt
    adj_c = klam * adj_s
    adj_klam = c * adj_s
    # c = |n| / 2 * ira - alpha + act; dcdq = (x20 x nh) h, dcdr = (nh x x10) h
    adj_x20 = wp.cross(nh, adj_dcdq) * h
    adj_x10 = wp.cross(adj_dcdr, nh) * h
    adj_nh = (wp.cross(adj_dcdq, x20) + wp.cross(x10, adj_dcdr)) * h
    adj_ira = (wp.dot(adj_dcdq, cq) + wp.dot(adj_dcdr, cr)) * 0.5 + adj_c * area
    adj_n = (adj_nh - nh * wp.dot(nh, adj_nh)) / n_len + nh * (adj_c * ira * 0.5)
    adj_x10 = adj_x10 + wp.cross(x20, adj_n)
    adj_x20 = adj_x20 + wp.cross(adj_n, x10)
    # f1 = P1 Dm00 + P2 Dm01, f2 = P1 Dm10 + P2 Dm11
    adj_P1 = b1 * Dm[0, 0] + b2 * Dm[1, 0]
    adj_P2 = b1 * Dm[0, 1] + b2 * Dm[1, 1]
    adj_kmu = wp.dot(F1, adj_P1) + wp.dot(F2, adj_P2)
    adj_kd = adj_kd + wp.dot(dF1, adj_P1) + wp.dot(dF2, adj_P2)
    adj_F1 = adj_P1 * kmu
    adj_F2 = adj_P2 * kmu
    adj_dF1 = adj_P1 * kd
    adj_dF2 = adj_P2 * kd
    adj_x10 = adj_x10 + adj_F1 * Dm[0, 0] + adj_F2 * Dm[0, 1]
    adj_x20 = adj_x20 + adj_F1 * Dm[1, 0] + adj_F2 * Dm[1, 1]
    adj_v10 = adj_v10 + adj_dF1 * Dm[0, 0] + adj_dF2 * Dm[0, 1]
    adj_v20 = adj_v20 + adj_dF1 * Dm[1, 0] + adj_dF2 * Dm[1, 1]
    adj_x[base + tid] = -(adj_x10 + adj_x20)
    adj_x[base + nt + tid] = adj_x10
    adj_x[base + 2 * nt + tid] = adj_x20
    adj_v[base + tid] = -(adj_v10 + adj_v20)
    adj_v[base + nt + tid] = adj_v10
    adj_v[base + 2 * nt + tid] = adj_v20
    # alpha = 1 + kmu / klam
    adj_alpha = -adj_c
    adj_kmu = adj_kmu + adj_alpha / klam
    adj_klam = adj_klam - adj_alpha * kmu / (klam * klam)
    act_grad[tid] = act_grad[tid] + adj_c
    acc[4, tid] = acc[4, tid] + adj_kmu * area0
    acc[5, tid] = acc[5, tid] + adj_klam * area0
    acc[6, tid] = acc[6, tid] + adj_kd * area0
    adj_area0 = adj_kmu * mu + adj_klam * lam + adj_kd * damp
    adj_det = (adj_ira - adj_area0 * area0 * area0) * 2.0
    g00 = wp.dot(b1, P1) + wp.dot(x10, adj_F1) + wp.dot(v10, adj_dF1) + adj_det * Dm[1, 1]
    g01 = wp.dot(b1, P2) + wp.dot(x10, adj_F2) + wp.dot(v10, adj_dF2) - adj_det * Dm[1, 0]
    g10 = wp.dot(b2, P1) + wp.dot(x20, adj_F1) + wp.dot(v20, adj_dF1) - adj_det * Dm[0, 1]
    g11 = wp.dot(b2, P2) + wp.dot(x20, adj_F2) + wp.dot(v20, adj_dF2) + adj_det * Dm[0, 0]
    acc[0, tid] = acc[0, tid] + g00
    acc[1, tid] = acc[1, tid] + g01
    acc[2, tid] = acc[2, tid] + g10
    acc[3, tid] = acc[3, tid] + g11


@wp.kernel(enable_backward=False)
def tri_columns(indices: wp.array2d(dtype=int), pose: wp.array(dtype=wp.mat22), materials: wp.array2d(dtype=float),
                idx_t: wp.array2d(dtype=int), pose_t: wp.array2d(dtype=float), mat_t: wp.array2d(dtype=float)):
    """The triangles' indices, rest poses and first three materials one row per component (``adj_triangles``)."""
    t = wp.tid()
    idx_t[0, t] = indices[t, 0]
    idx_t[1, t] = indices[t, 1]
    idx_t[2, t] = indices[t, 2]
    Dm = pose[t]
    pose_t[0, t] = Dm[0, 0]
    pose_t[1, t] = Dm[0, 1]
    pose_t[2, t] = Dm[1, 0]
    pose_t[3, t] = Dm[1, 1]
    mat_t[0, t] = materials[t, 0]
    mat_t[1, t] = materials[t, 1]
    mat_t[2, t] = materials[t, 2]


#: rows of the per-triangle accumulator of ``adj_triangles``: the rest pose's four gradients, three materials'
TRI_ACC_ROWS = 7


@wp.kernel(enable_backward=False)
def tri_param_grads(pose: wp.array(dtype=wp.mat22), acc: wp.array2d(dtype=float), mat_grad: wp.array2d(dtype=float),
                    pose_grad: wp.array(dtype=wp.mat22)):
    """Add the rest-pose and material gradients summed in ``acc`` by ``adj_triangles``."""
    t = wp.tid()
    mat_grad[t, 0] = mat_grad[t, 0] + acc[4, t]
    mat_grad[t, 1] = mat_grad[t, 1] + acc[5, t]
    mat_grad[t, 2] = mat_grad[t, 2] + acc[6, t]
    pose_grad[t] = pose_grad[t] + wp.mat22(acc[0, t], acc[1, t], acc[2, t], acc[3, t])


@wp.kernel(enable_backward=False)
def tet_columns(indices: wp.array2d(dtype=int), pose: wp.array(dtype=wp.mat33), materials: wp.array2d(dtype=float),
                idx_t: wp.array2d(dtype=int), pose_t: wp.array2d(dtype=float), mat_t: wp.array2d(dtype=float)):
    """The tetrahedra's indices, rest poses and materials one row per component (``adj_tetrahedra`` reads them with
    contiguous vector loads instead of gathers)."""
    t = wp.tid()
    idx_t[0, t] = indices[t, 0]
    idx_t[1, t] = indices[t, 1]
    idx_t[2, t] = indices[t, 2]
    idx_t[3, t] = indices[t, 3]
    Dm = pose[t]
    pose_t[0, t] = Dm[0, 0]
    pose_t[1, t] = Dm[0, 1]
    pose_t[2, t] = Dm[0, 2]
    pose_t[3, t] = Dm[1, 0]
    pose_t[4, t] = Dm[1, 1]
    pose_t[5, t] = Dm[1, 2]
    pose_t[6, t] = Dm[2, 0]
    pose_t[7, t] = Dm[2, 1]
    pose_t[8, t] = Dm[2, 2]
    mat_t[0, t] = materials[t, 0]
    mat_t[1, t] = materials[t, 1]
    mat_t[2, t] = materials[t, 2]


#: rows of the per-tetrahedron accumulator of ``adj_tetrahedra``: the symmetric S (6), the gradient of det(Dm), the
#: gradients of the three material parameters
TET_ACC_ROWS = 10


@wp.kernel(enable_backward=False)
def adj_tetrahedra(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), adj_f: wp.array(dtype=wp.vec3),
                   idx_t: wp.array2d(dtype=int), pose_t: wp.array2d(dtype=float), activation: wp.array(dtype=float),
                   mat_t: wp.array2d(dtype=float), base: int, act_grad: wp.array(dtype=float),
                   acc: wp.array2d(dtype=float), adj_x: wp.array(dtype=wp.vec3), adj_v: wp.array(dtype=wp.vec3)):
    """The adjoint of ``elastic.eval_tetrahedra``, written with G = Dm Dm^T: with F = Ds Dm, every product the forward
    forms with F (F:F, P Dm^T) is one with Ds G, and cof(F) Dm^T = det(Dm) cof(Ds).

    Memory layout decides its speed on the CPU (the loop over tetrahedra vectorises; strided loads and stores become
    gathers and scatters): the element data comes in one row per component (``tet_columns``), the corner gradients go
    out corner-major (slot ``base + corner * count + tet``), and the material and rest-pose gradients are not formed
    here: each step adds a few per-tetrahedron sums to ``acc`` (rows: S, a symmetric 3x3 with the rest pose's
    gradient S Dm + cof(Dm) adj_det, adj_det, the three materials' gradients), and ``tet_param_grads`` turns their sum
    over the rollout into the gradients once (seed sphere: 124 -> 74 us CPU per substep, one thread)."""
    tid = wp.tid()
    nt = idx_t.shape[1]
    i = idx_t[0, tid]
    j = idx_t[1, tid]
    k = idx_t[2, tid]
    l = idx_t[3, tid]
    mu = mat_t[0, tid]
    lam = mat_t[1, tid]
    damp = mat_t[2, tid]
    x0 = x[i]
    v0 = v[i]
    e1 = x[j] - x0
    e2 = x[k] - x0
    e3 = x[l] - x0
    v1 = v[j]
    v2 = v[k]
    v3 = v[l]
    Dm = wp.mat33(pose_t[0, tid], pose_t[1, tid], pose_t[2, tid], pose_t[3, tid], pose_t[4, tid], pose_t[5, tid],
                  pose_t[6, tid], pose_t[7, tid], pose_t[8, tid])
    d = wp.determinant(Dm)
    vol = 1.0 / (6.0 * d)
    alpha = 1.0 + mu / lam - mu / (4.0 * lam)
    kmu = mu * vol
    klam = lam * vol
    kd = damp * vol
    G = Dm * wp.transpose(Dm)
    Ds = _cols(e1, e2, e3)
    w1 = v1 - v0
    w2 = v2 - v0
    w3 = v3 - v0
    Dv = _cols(w1, w2, w3)
    DsG = Ds * G
    r = 1.0 / (wp.ddot(DsG, Ds) + 1.0)  # F:F = (Ds G):Ds
    g = 1.0 - r
    c1 = wp.cross(e2, e3)
    c2 = wp.cross(e3, e1)
    c3 = wp.cross(e1, e2)
    det_s = wp.dot(e1, c1)
    J = det_s * d  # det(F) = det(Ds) det(Dm)
    dJ1 = c1 * d
    dJ2 = c2 * d
    dJ3 = c3 * d
    dv = wp.dot(dJ1, v1) + wp.dot(dJ2, v2) + wp.dot(dJ3, v3)
    core = J - alpha + activation[tid]
    ft = core * klam + dv * kd
    # forward outputs: f1 + f2 + f3, -f1, -f2, -f3 with f_k = (P Dm^T) col k + dJ_k ft, P = kmu g F + kd Fd
    a0 = adj_f[i]
    b1 = a0 - adj_f[j]
    b2 = a0 - adj_f[k]
    b3 = a0 - adj_f[l]
    adj_ft = wp.dot(b1, dJ1) + wp.dot(b2, dJ2) + wp.dot(b3, dJ3)
    kda = kd * adj_ft
    u1 = b1 * ft + v1 * kda
    u2 = b2 * ft + v2 * kda
    u3 = b3 * ft + v3 * kda
    adj_J = klam * adj_ft
    adj_klam = core * adj_ft
    B = _cols(b1, b2, b3)
    BG = B * G
    FP = wp.ddot(DsG, B)  # F:(B Dm)
    adj_kmu = g * FP
    adj_kd = dv * adj_ft + wp.ddot(Dv, BG)  # Fd:(B Dm) = Dv:(B G)
    a = 2.0 * kmu * FP * r * r  # the gradient through g(F:F)
    cg = kmu * g
    adj_Ds = BG * cg + DsG * a
    # dJ1 = (e2 x e3) d, dJ2 = (e3 x e1) d, dJ3 = (e1 x e2) d; dJ/de_k = dJ_k
    adj_e1 = (wp.cross(u2, e3) + wp.cross(e2, u3)) * d + _col(adj_Ds, 0) + dJ1 * adj_J
    adj_e2 = (wp.cross(e3, u1) + wp.cross(u3, e1)) * d + _col(adj_Ds, 1) + dJ2 * adj_J
    adj_e3 = (wp.cross(u1, e2) + wp.cross(e1, u2)) * d + _col(adj_Ds, 2) + dJ3 * adj_J
    adj_w1 = _col(BG, 0) * kd
    adj_w2 = _col(BG, 1) * kd
    adj_w3 = _col(BG, 2) * kd
    adj_x[base + tid] = -(adj_e1 + adj_e2 + adj_e3)
    adj_x[base + nt + tid] = adj_e1
    adj_x[base + 2 * nt + tid] = adj_e2
    adj_x[base + 3 * nt + tid] = adj_e3
    adj_v[base + tid] = -(adj_w1 + adj_w2 + adj_w3)
    adj_v[base + nt + tid] = adj_w1 + dJ1 * kda
    adj_v[base + 2 * nt + tid] = adj_w2 + dJ2 * kda
    adj_v[base + 3 * nt + tid] = adj_w3 + dJ3 * kda
    # alpha = 1 + mu / lam - mu / (4 lam)
    adj_alpha = -adj_J
    act_grad[tid] = act_grad[tid] + adj_J
    acc[7, tid] = acc[7, tid] + adj_kmu * vol + adj_alpha * 0.75 / lam
    acc[8, tid] = acc[8, tid] + adj_klam * vol - adj_alpha * 0.75 * mu / (lam * lam)
    acc[9, tid] = acc[9, tid] + adj_kd * vol
    # the rest poses: with adj_F the gradient of F = Ds Dm, B^T P + Ds^T adj_F + Dv^T adj_Fd = S Dm + adj_J det(Ds)
    # cof(Dm) with S = sym(B^T Ds) cg + sym(B^T Dv) kd + Ds^T Ds a, sym(X) = X + X^T; entry (m, n) of S is
    # b_m.p_n + b_n.p_m + a e_m.e_n with p_n = cg e_n + kd w_n
    p1 = e1 * cg + w1 * kd
    p2 = e2 * cg + w2 * kd
    p3 = e3 * cg + w3 * kd
    acc[0, tid] = acc[0, tid] + 2.0 * wp.dot(b1, p1) + a * wp.dot(e1, e1)
    acc[1, tid] = acc[1, tid] + 2.0 * wp.dot(b2, p2) + a * wp.dot(e2, e2)
    acc[2, tid] = acc[2, tid] + 2.0 * wp.dot(b3, p3) + a * wp.dot(e3, e3)
    acc[3, tid] = acc[3, tid] + wp.dot(b1, p2) + wp.dot(b2, p1) + a * wp.dot(e1, e2)
    acc[4, tid] = acc[4, tid] + wp.dot(b1, p3) + wp.dot(b3, p1) + a * wp.dot(e1, e3)
    acc[5, tid] = acc[5, tid] + wp.dot(b2, p3) + wp.dot(b3, p2) + a * wp.dot(e2, e3)
    adj_vol = g * FP * mu + core * adj_ft * lam + adj_kd * damp
    u_c = wp.dot(u1, c1) + wp.dot(u2, c2) + wp.dot(u3, c3)
    acc[6, tid] = acc[6, tid] + u_c - adj_vol * vol / d + adj_J * det_s


@wp.kernel(enable_backward=False)
def tet_param_grads(pose: wp.array(dtype=wp.mat33), acc: wp.array2d(dtype=float), mat_grad: wp.array2d(dtype=float),
                    pose_grad: wp.array(dtype=wp.mat33)):
    """Add the material and rest-pose gradients summed in ``acc`` by ``adj_tetrahedra`` (the rest pose's gradient is
    linear in the sums: sum(S) Dm + cof(Dm) sum(adj_det))."""
    t = wp.tid()
    mat_grad[t, 0] = mat_grad[t, 0] + acc[7, t]
    mat_grad[t, 1] = mat_grad[t, 1] + acc[8, t]
    mat_grad[t, 2] = mat_grad[t, 2] + acc[9, t]
    s01 = acc[3, t]
    s02 = acc[4, t]
    s12 = acc[5, t]
    S = wp.mat33(acc[0, t], s01, s02, s01, acc[1, t], s12, s02, s12, acc[2, t])
    Dm = pose[t]
    pose_grad[t] = pose_grad[t] + S * Dm + _cofactor(Dm) * acc[6, t]


@wp.func
def corner_adjoint_sums(offsets: wp.array(dtype=wp.int32), slots: wp.array(dtype=wp.int32),
                        adj_x: wp.array(dtype=wp.vec3), adj_v: wp.array(dtype=wp.vec3), i: int):
    """The position and velocity gradients of particle ``i``'s element corners (slots ``offsets[i]`` to
    ``offsets[i + 1]``), even and odd entries summed apart (two independent chains, as ``gather.gather_forces``)."""
    end = offsets[i + 1]
    sx0 = wp.vec3()
    sv0 = wp.vec3()
    sx1 = wp.vec3()
    sv1 = wp.vec3()
    e = offsets[i]
    while e + 1 < end:
        s0 = slots[e]
        s1 = slots[e + 1]
        sx0 = sx0 + adj_x[s0]
        sv0 = sv0 + adj_v[s0]
        sx1 = sx1 + adj_x[s1]
        sv1 = sv1 + adj_v[s1]
        e = e + 2
    if e < end:
        s0 = slots[e]
        sx0 = sx0 + adj_x[s0]
        sv0 = sv0 + adj_v[s0]
    return sx0 + sx1, sv0 + sv1


@wp.kernel(enable_backward=False)
def gather_adjoints(offsets: wp.array(dtype=wp.int32), slots: wp.array(dtype=wp.int32),
                    adj_x: wp.array(dtype=wp.vec3), adj_v: wp.array(dtype=wp.vec3),
                    x_grad: wp.array(dtype=wp.vec3), v_grad: wp.array(dtype=wp.vec3)):
    """Add the per-slot position and velocity gradients of every particle's element corners to its gradients (even
    and odd entries summed apart, as ``gather.gather_forces``: seed sphere 46 -> 21 us CPU, one thread)."""
    i = wp.tid()
    sx, sv = corner_adjoint_sums(offsets, slots, adj_x, adj_v, i)
    if x_grad.shape[0] > 0:
        x_grad[i] = x_grad[i] + sx
    if v_grad.shape[0] > 0:
        v_grad[i] = v_grad[i] + sv
