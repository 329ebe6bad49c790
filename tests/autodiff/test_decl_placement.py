"""Declarations at first use in backward bodies (weft/autodiff/decls.py): where the plan puts each local and adjoint
slot, and gradients of the patterns where the placement matters (an adjoint written on one side of a branch only,
adjoints accumulated across the iterations of static and dynamic loops, a variable used only inside a branch, a
wp.grad helper whose result adjoint is seeded before the sweep) against float64 central differences."""

import numpy as np

import weft as wp
from weft import autograd
from weft.autodiff.decls import named_vars, plan_declarations
from weft.ir.nodes import AdjLet, For, If, Let, Repeat, While, walk

f64 = wp.float64
TOL = {"eps": 1e-6, "atol": 1e-6, "rtol": 1e-5, "show_summary": False}


def arr(values):
    return wp.array(np.asarray(values, dtype=np.float64), dtype=f64, requires_grad=True)


def zeros(n):
    return wp.zeros(n, dtype=f64, requires_grad=True)


def check(kernel, dim, inputs, outputs):
    assert autograd.gradcheck(kernel, dim=dim, inputs=inputs, outputs=outputs, **TOL)


# ---------------------------------------------------------------------------------------------- kernels
@wp.kernel
def one_sided(x: wp.array(dtype=f64), y: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    a = x[i] * y[i]
    r = wp.sin(x[i])
    if x[i] > 0.0:
        b = wp.cos(a) * y[i]  # a's adjoint is written only when this branch ran
        r = r + b * b
    out[i] = r + a


@wp.kernel
def branch_local(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    r = v
    if v < 0.5:
        w = wp.exp(v)  # w and its adjoint are named only inside this branch (replay and reverse)
        r = w * v
    else:
        r = v * v * v
    out[i] = r


@wp.kernel
def static_accumulate(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    s = f64(0.0)
    for k in range(4):  # unrolled: v's adjoint collects four contributions in straight-line code
        s = s + wp.sin(v * f64(k + 1))
    out[i] = s * v


@wp.kernel
def dynamic_accumulate(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    c = wp.cos(v)  # defined once before the loop, its adjoint accumulated in every reversed iteration
    s = f64(0.0)
    for k in range(n):
        t = v * f64(k) + c
        if t > 1.0:
            s = s + t * c
        else:
            s = s * f64(0.5) + wp.sin(t)
    out[i] = s


@wp.kernel
def dynamic_while(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    s = v
    k = 0
    while k < 3:
        s = s * v + f64(0.25)
        k = k + 1
    out[i] = s


@wp.func
def poly(a: f64, b: f64):
    c = a * b
    if a > 0.0:
        c = c + a * a
    return c


@wp.kernel
def grad_helper(x: wp.array(dtype=f64), y: wp.array(dtype=f64), da: wp.array(dtype=f64), db: wp.array(dtype=f64)):
    i = wp.tid()
    a, b = wp.grad(poly)(x[i], y[i])  # the helper's backward body: result adjoint seeded before the sweep
    da[i] = a
    db[i] = b


# ---------------------------------------------------------------------------------------------- gradients
def test_one_sided_branch_adjoint():
    x = arr([0.7, -0.4, 1.3, -1.1, 0.2])
    y = arr([0.3, 1.2, -0.8, 0.5, -1.5])
    check(one_sided, 5, [x, y], [zeros(5)])


def test_variable_local_to_a_branch():
    check(branch_local, 4, [arr([0.1, 0.3, 0.9, 1.4])], [zeros(4)])


def test_static_loop_accumulates():
    check(static_accumulate, 3, [arr([0.2, -0.7, 1.1])], [zeros(3)])


def test_dynamic_loop_accumulates():
    x = arr([0.15, 0.45, -0.3, 0.8])
    check(dynamic_accumulate, 4, [x, 5], [zeros(4)])


def test_dynamic_while_loop():
    check(dynamic_while, 3, [arr([0.6, -0.9, 1.2])], [zeros(3)])


def test_grad_helper_seeded_result():
    xv = np.array([0.4, -0.6, 1.1, 2.0])
    yv = np.array([0.9, 0.2, -0.7, 0.3])
    da, db = wp.zeros(4, dtype=f64), wp.zeros(4, dtype=f64)
    wp.launch(grad_helper, dim=4, inputs=[arr(xv), arr(yv)], outputs=[da, db])

    def poly_np(a, b):
        return a * b + np.where(a > 0, a * a, 0.0)

    h = 1e-6  # central differences of the func itself (no sample near the kink at a = 0)
    np.testing.assert_allclose(da.numpy(), (poly_np(xv + h, yv) - poly_np(xv - h, yv)) / (2 * h), rtol=1e-7)
    np.testing.assert_allclose(db.numpy(), (poly_np(xv, yv + h) - poly_np(xv, yv - h)) / (2 * h), rtol=1e-7)


def test_repeated_backward_accumulates_like_one():
    # two backward launches add twice the gradient: nothing is left over in slots declared mid-body
    x = arr([0.7, -0.4, 1.3])
    y = arr([0.3, 1.2, -0.8])
    out = zeros(3)
    tape = wp.Tape()
    with tape:
        wp.launch(one_sided, dim=3, inputs=[x, y], outputs=[out])
    tape.backward(grads={out: wp.array(np.ones(3), dtype=f64)})
    once = x.grad.numpy().copy()
    tape.backward(grads={out: wp.array(np.ones(3), dtype=f64)})
    np.testing.assert_allclose(x.grad.numpy(), 2 * once, rtol=1e-12)
    xv, yv = x.numpy(), y.numpy()
    a = xv * yv
    b = np.cos(a) * yv
    # d/dx of sin(x) + [x > 0] (cos(x y) y)^2 + x y
    expect = np.cos(xv) + yv + np.where(xv > 0, 2 * b * (-np.sin(a) * yv * yv), 0.0)
    np.testing.assert_allclose(once, expect, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------------- the plan
def _program(kernel, args):
    from weft import pipeline

    spec = kernel._lower(kernel.infer_types(args), False, None)
    return pipeline.differentiate(spec.fn)


def _once(prog) -> set[int]:
    once = set()

    def visit(block):
        for x in block:
            if isinstance(x, AdjLet):
                once.add(id(x.let))
            elif isinstance(x, If):
                visit(x.then)
                visit(x.orelse)

    visit(prog.reverse)
    return once


def _lists(prog):
    """id -> (statement list, whether a loop holds it), for every statement list of the program."""
    out = {id(prog.replay): (prog.replay, False), id(prog.reverse): (prog.reverse, False)}

    def visit(block, looped):
        for s in block:
            kids = []
            if isinstance(s, If):
                kids = [(s.then, looped), (s.orelse, looped)]
            elif isinstance(s, For):
                kids = [(s.body, True)]
            elif isinstance(s, While):
                kids = [(s.cond_body, True), (s.body, True)]
            elif isinstance(s, Repeat):
                kids = [(s.body, True)]
            for b, lp in kids:
                out[id(b)] = (b, lp)
                visit(b, lp)

    visit(prog.replay, False)
    visit(prog.reverse, False)
    return out


def _rendered_order(prog):
    """(statement, path, in the reverse sweep) of every statement in the order the body renders them; the path is the
    (statement list, index) of each statement holding it, from the top. Statements may be shared between lists (a
    dynamic loop's reverse re-runs its body's Lets): positions, not identities, say where a naming is."""
    order = []

    def visit(block, path, rev):
        for k, s in enumerate(block):
            here = path + ((id(block), k),)
            order.append((s, here, rev))
            kids = []
            if isinstance(s, If):
                kids = [s.then, s.orelse]
            elif isinstance(s, For):
                kids = [s.body]
            elif isinstance(s, While):
                kids = [s.cond_body, s.body]
            elif isinstance(s, Repeat):
                kids = [s.body]
            for kid in kids:
                visit(kid, here, rev)

    visit(prog.replay, (), False)
    visit(prog.reverse, (), True)
    return order


CASES = [
    (one_sided, [arr([1.0]), arr([1.0]), zeros(1)]),
    (branch_local, [arr([1.0]), zeros(1)]),
    (static_accumulate, [arr([1.0]), zeros(1)]),
    (dynamic_accumulate, [arr([1.0]), 3, zeros(1)]),
    (dynamic_while, [arr([1.0]), zeros(1)]),
]


def test_plan_declares_once_run_lists_only_and_before_every_naming():
    for kernel, args in CASES:
        prog = _program(kernel, args)
        plan = plan_declarations(prog.replay, prog.reverse, set(), _once(prog))
        lists = _lists(prog)
        order = _rendered_order(prog)
        placed = 0
        for table, adjoint in ((plan.at, False), (plan.adjoints_at, True)):
            for (lid, k), vs in table.items():
                block, looped = lists[lid]
                assert not looped, kernel.key
                pos = next(n for n, (_, path, _) in enumerate(order) if path[-1] == (lid, k))
                for v in vs:
                    placed += 1
                    for n, (s, path, rev) in enumerate(order):
                        if not any(x is v for x in named_vars(s)) or (adjoint and not rev):
                            continue
                        # every naming is at or after the declaration point, inside its list (the top level is one
                        # list: the replay, then the reverse sweep)
                        assert n >= pos, (kernel.key, v)
                        inside = any(L == lid and j >= k for L, j in path)
                        assert inside or (block is prog.replay and rev), (kernel.key, v)
        assert placed, kernel.key


def test_branch_local_variable_is_declared_inside_the_branch():
    prog = _program(branch_local, [arr([1.0]), zeros(1)])
    plan = plan_declarations(prog.replay, prog.reverse, set(), _once(prog))
    branches = {id(s.then) for s in walk(prog.replay + prog.reverse) if isinstance(s, If)}
    branches |= {id(s.orelse) for s in walk(prog.replay + prog.reverse) if isinstance(s, If)}
    inner = {v.id for (lid, _), vs in plan.adjoints_at.items() if lid in branches for v in vs}
    # the exp(v) value is named in the replay's branch and in the reverse sweep's: its adjoint slot, named only in the
    # reverse sweep's branch, is declared there
    exp_defs = [s.dsts[0].id for s in walk(prog.replay) if isinstance(s, Let) and s.call.op.name == "exp"]
    assert exp_defs and set(exp_defs) <= inner


def test_dead_resets_only_outside_loops():
    prog = _program(dynamic_accumulate, [arr([1.0]), 3, zeros(1)])
    plan = plan_declarations(prog.replay, prog.reverse, set(), _once(prog))
    in_loops = {id(s.let) for r in walk(prog.reverse) if isinstance(r, Repeat) for s in walk(r.body)
                if isinstance(s, AdjLet)}
    assert plan.dead_resets and not plan.dead_resets & in_loops
