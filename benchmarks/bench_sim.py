"""weft.sim vs warp.sim 1.7.2 on the CPU: the seed's elastic sphere, a cloth drape, a granular box and a rigid pile.

For each scene and framework: ms per frame of the forward simulation (wall and process CPU time), the forward +
backward time of a taped rollout over ``--grad-frames`` frames relative to the same forward (each the fastest of
``ROLLOUT_REPEATS`` rollouts), the peak resident memory
of the taped rollout relative to the forward, and the cold compile time of the forward (and of the forward +
backward) kernels with an empty kernel cache. Every measurement runs in its own subprocess; Warp runs from its own
environment (``--warp-python``, default /opt/warp172/bin/python), the same scene code (examples/sim/scenes.py).

    python benchmarks/bench_sim.py                 # all scenes, both frameworks
    python benchmarks/bench_sim.py --quick         # fewer frames
    python benchmarks/bench_sim.py --scenes sphere --frameworks weft
    python benchmarks/bench_sim.py --scenes arms   # FK + Jacobian of 4,096 7-DoF arms, with Pinocchio
    python benchmarks/bench_sim.py --scenes sphere --ratio 9   # fwd+bwd / fwd only: 9 alternating pairs, one process
    python benchmarks/bench_sim.py --scenes arms rigid --alternate 5   # weft / Warp processes alternating 5 times
    python benchmarks/bench_sim.py --scenes arms rigid --alternate 5 --threads 2   # weft on 2 threads (wall too)

The machine's load changes wall-clock numbers: compare the CPU-time columns for A/B decisions.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SCENES = ("sphere", "cloth", "granular", "rigid", "quadruped", "arms")
ARM = ROOT / "weft" / "sim" / "assets" / "arm7.urdf"
ARMS = 4096
#: rollouts per fwd_mem / grad measurement: the times reported are the fastest
ROLLOUT_REPEATS = 3


# ------------------------------------------------------------------------------------------------ worker side
def _import(framework: str):
    if framework == "warp":
        import warp as wp
        import warp.sim

        wp.config.quiet = True
        wp.init()
    else:
        sys.path.insert(0, str(ROOT))
        import weft as wp
    sys.path.insert(0, str(ROOT / "examples" / "sim"))
    return wp


def _build(wp, scene: str, requires_grad: bool):
    import scenes

    if scene == "sphere":
        return scenes.ElasticSphere().build(wp, requires_grad=requires_grad), scenes.SceneConfig()
    if scene == "cloth":
        return scenes.build_cloth_drape(wp, requires_grad=requires_grad), scenes.SceneConfig(substeps=16)
    if scene == "quadruped":
        return scenes.build_quadruped(wp, n_envs=8), scenes.SceneConfig(fps=100, substeps=10)
    if scene == "rigid":
        return scenes.build_rigid_pile(wp, n=3, requires_grad=requires_grad), scenes.SceneConfig(substeps=20)
    return scenes.build_granular(wp, n=10), scenes.SceneConfig(substeps=16)


class _Runner:
    def __init__(self, wp, scene, requires_grad):
        self.wp = wp
        self.scene = scene
        self.model, self.cfg = _build(wp, scene, requires_grad)
        if scene == "quadruped":
            # reduced coordinates; the bodies start from forward kinematics of the joint pose
            self.integ = wp.sim.FeatherstoneIntegrator(self.model)
            s = self.model.state()
            wp.sim.eval_fk(self.model, self.model.joint_q, self.model.joint_qd, None, s)
            self.model.body_q.assign(s.body_q)
        else:
            self.integ = wp.sim.SemiImplicitIntegrator()
        self.collide = self.model.shape_count > 1
        self.granular = scene == "granular"

    def substep(self, s_in, s_out):
        if self.collide:
            self.wp.sim.collide(self.model, s_in)
        self.integ.simulate(self.model, s_in, s_out, self.cfg.dt)

    def frame(self, states):
        s0, s1 = states
        if self.granular:
            self.model.particle_grid.build(s0.particle_q, 2.0 * self.model.particle_max_radius)
        for _ in range(self.cfg.substeps):
            s0.clear_forces()
            self.substep(s0, s1)
            s0, s1 = s1, s0
        return [s0, s1]


def _rss_mb() -> float:
    """Current resident memory (the states and the tape are alive when it is read)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _arms_worker(wp, framework: str, n: int, repeats: int = 5) -> dict:
    """Forward kinematics of ``n`` copies of the 7-DoF arm (one articulation each) and the 3 x 7 Jacobian of every
    tool tip position (three backward passes of a taped FK: the arms are independent)."""
    arm = wp.sim.ModelBuilder()
    wp.sim.parse_urdf(str(ARM), arm)
    b = wp.sim.ModelBuilder()
    for i in range(n):
        b.add_builder(arm, xform=wp.transform((float(i % 64), 0.0, float(i // 64)), wp.quat_identity()))
    model = b.finalize("cpu", requires_grad=True)
    nb = arm.body_count if hasattr(arm, "body_count") else len(arm.body_q)
    tool = nb - 1

    @wp.kernel
    def tips(body_q: wp.array(dtype=wp.transform), nb: int, tool: int, out: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        out[i] = wp.transform_point(body_q[i * nb + tool], wp.vec3(0.0, 0.0, 0.1))

    rng = np.random.default_rng(0)
    q = wp.array(rng.uniform(-1.0, 1.0, model.joint_coord_count).astype(np.float32), dtype=float,
                 requires_grad=True)
    qd = wp.zeros(model.joint_dof_count, dtype=float, requires_grad=True)
    state = model.state()
    out = wp.zeros(n, dtype=wp.vec3, requires_grad=True)
    wp.sim.eval_fk(model, q, qd, None, state)  # warm up
    wp.synchronize()
    t, c = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        wp.sim.eval_fk(model, q, qd, None, state)
    wp.synchronize()
    res = {"framework": framework, "scene": "arms", "mode": "fk", "arms": n,
           "fk_ms": (time.perf_counter() - t) / repeats * 1e3, "fk_cpu_ms": (time.process_time() - c) / repeats * 1e3}
    seeds = [wp.array(np.tile(np.eye(3, dtype=np.float32)[k], (n, 1)), dtype=wp.vec3) for k in range(3)]

    def jacobian():
        tape = wp.Tape()
        with tape:
            wp.sim.eval_fk(model, q, qd, None, state)
            wp.launch(tips, dim=n, inputs=[state.body_q, nb, tool], outputs=[out])
        rows = []
        for k in range(3):
            tape.backward(grads={out: seeds[k]})
            rows.append(q.grad.numpy().copy())
            tape.zero()
        return rows

    jacobian()  # warm up (adjoint compile)
    t, c = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        jacobian()
    res["fk_jac_ms"] = (time.perf_counter() - t) / repeats * 1e3
    res["fk_jac_cpu_ms"] = (time.process_time() - c) / repeats * 1e3
    if hasattr(wp.sim, "eval_point_jacobian"):  # weft's analytic point Jacobian (no tape)
        bodies = wp.array(np.arange(n, dtype=np.int32) * nb + tool, dtype=int)
        points = wp.array(np.tile(np.array([0.0, 0.0, 0.1], dtype=np.float32), (n, 1)), dtype=wp.vec3)
        J = wp.sim.eval_point_jacobian(model, state, bodies, points)  # warm up
        t, c = time.perf_counter(), time.process_time()
        for _ in range(repeats):
            wp.sim.eval_fk(model, q, qd, None, state)
            wp.sim.eval_point_jacobian(model, state, bodies, points, J)
        wp.synchronize()
        res["fk_ajac_ms"] = (time.perf_counter() - t) / repeats * 1e3
        res["fk_ajac_cpu_ms"] = (time.process_time() - c) / repeats * 1e3
        tape_rows = np.stack(jacobian())  # (3, coords): the tape rows, all arms
        first = J.numpy()[:, :, :7]
        coords = np.stack([tape_rows[k].reshape(n, -1)[:, :7] for k in range(3)], axis=1)
        res["ajac_vs_tape_max_abs"] = float(np.abs(first - coords).max())
    return res


def _pinocchio_arms(n: int) -> dict:
    """Pinocchio's forward kinematics and frame Jacobian of the same arm, one configuration at a time."""
    import pinocchio as pin

    model = pin.buildModelFromUrdf(str(ARM))
    data = model.createData()
    frame = model.getFrameId("tool")
    qs = np.random.default_rng(0).uniform(-1.0, 1.0, (n, model.nq))
    c = time.process_time()
    for q in qs:
        pin.forwardKinematics(model, data, q)
        pin.updateFramePlacement(model, data, frame)
    fk = (time.process_time() - c) * 1e3
    c = time.process_time()
    for q in qs:
        pin.computeFrameJacobian(model, data, q, frame, pin.LOCAL_WORLD_ALIGNED)
    jac = (time.process_time() - c) * 1e3
    return {"framework": "pinocchio", "scene": "arms", "mode": "fk", "arms": n, "fk_cpu_ms": fk,
            "fk_jac_cpu_ms": fk + jac}


def _cpu_with_children() -> float:
    """User + system CPU seconds of this process and of its finished child processes (the C++ compilers)."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def worker(framework: str, scene: str, mode: str, frames: int, grad_frames: int) -> dict:
    t_import = time.perf_counter()
    wp = _import(framework)
    if scene == "arms":
        return _arms_worker(wp, framework, frames)
    grad = mode in ("grad", "cold_grad", "ratio")
    r = _Runner(wp, scene, grad)
    out = {"framework": framework, "scene": scene, "mode": mode, "particles": r.model.particle_count,
           "tets": r.model.tet_count, "tris": r.model.tri_count}
    if mode.startswith("cold"):
        t0, c0 = time.perf_counter(), _cpu_with_children()
        if grad:
            _taped(wp, r, 1, substeps=2)
        else:
            r.frame([r.model.state(), r.model.state()])
        out["first_s"] = time.perf_counter() - t0
        first_cpu = _cpu_with_children() - c0
        # the same again, now compiled: the compile time is the difference
        t1, c1 = time.perf_counter(), _cpu_with_children()
        if grad:
            _taped(wp, r, 1, substeps=2)
        else:
            r.frame([r.model.state(), r.model.state()])
        out["warm_s"] = time.perf_counter() - t1
        out["compile_s"] = out["first_s"] - out["warm_s"]
        # CPU time (this process and the compilers it ran, all threads): what the compile costs on a loaded machine
        out["compile_cpu_s"] = first_cpu - (_cpu_with_children() - c1)
        out["import_s"] = t0 - t_import
        return out
    states = r.frame([r.model.state(), r.model.state()])  # warm up (compiles)
    if mode == "forward":
        t, c = time.perf_counter(), time.process_time()
        for _ in range(frames):
            states = r.frame(states)
        out["ms_per_frame"] = (time.perf_counter() - t) / frames * 1e3
        out["cpu_ms_per_frame"] = (time.process_time() - c) / frames * 1e3
        return out
    if mode == "ratio":  # forward (no gradients) and taped forward + backward alternating in this process
        return _ratio_pairs(wp, framework, scene, r, frames, grad_frames)
    if mode == "graph":
        with wp.ScopedCapture() as capture:
            states = r.frame(states)
        t, c = time.perf_counter(), time.process_time()
        for _ in range(frames):
            wp.capture_launch(capture.graph)
        out["ms_per_frame"] = (time.perf_counter() - t) / frames * 1e3
        out["cpu_ms_per_frame"] = (time.process_time() - c) / frames * 1e3
        return out
    # grad / fwd_mem: a rollout of grad_frames frames, each substep into a new state
    if mode == "grad":
        _taped(wp, r, 1, substeps=2)  # compiles the adjoints
    import gc

    gc.collect()
    rss0 = _rss_mb()
    res = _taped(wp, r, grad_frames, record=(mode == "grad"), rss=True)
    out["rss_mb"] = res.pop("peak_rss_mb") - rss0
    # times: the fastest of ROLLOUT_REPEATS rollouts (one rollout's CPU time swings by 2x on a loaded machine);
    # the memory: the first's
    for _ in range(ROLLOUT_REPEATS - 1):
        gc.collect()
        again = _taped(wp, r, grad_frames, record=(mode == "grad"))
        res = {k: min(v, again[k]) if k.endswith("_s") else v for k, v in res.items()}
    out.update(res)
    out["repeats"] = ROLLOUT_REPEATS
    return out


def _ratio_pairs(wp, framework, scene, r_grad, pairs, grad_frames) -> dict:
    """``pairs`` alternating rollouts of ``grad_frames`` frames: untaped on a model without gradients, then taped
    forward + backward on one with them; process CPU time of each (one process, so both see the same load)."""
    import gc

    r_fwd = _Runner(wp, scene, False)
    r_fwd.frame([r_fwd.model.state(), r_fwd.model.state()])  # compiles
    _taped(wp, r_grad, 1, substeps=2)
    fwd, fb = [], []
    for _ in range(pairs):
        gc.collect()
        fwd.append(_taped(wp, r_fwd, grad_frames, record=False)["fwd_cpu_s"])
        gc.collect()
        fb.append(_taped(wp, r_grad, grad_frames)["fwd_bwd_cpu_s"])
    ratios = sorted(b / f for f, b in zip(fwd, fb))
    return {"framework": framework, "scene": scene, "mode": "ratio", "pairs": pairs, "fwd_cpu_ms": [round(x * 1e3, 2) for x in fwd],
            "fwd_bwd_cpu_ms": [round(x * 1e3, 2) for x in fb], "ratio_median": ratios[len(ratios) // 2],
            "ratio_min": ratios[0], "ratio_max": ratios[-1], "ratio_of_fastest": min(fb) / min(fwd)}


def _taped(wp, r, frames, substeps=None, record=True, rss=False) -> dict:
    n = (substeps or r.cfg.substeps) * frames
    states = [r.model.state() for _ in range(n + 1)]
    height = _height_kernel(wp)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    t, c = time.perf_counter(), time.process_time()
    if record:
        tape = wp.Tape()
        with tape:
            for k in range(n):
                r.substep(states[k], states[k + 1])
            wp.launch(height, r.model.particle_count, inputs=[states[-1].particle_q], outputs=[loss])
        t_fwd = time.perf_counter() - t
        peak = _rss_mb() if rss else 0.0
        tape.backward(loss)
        out = {"fwd_taped_s": t_fwd, "fwd_bwd_s": time.perf_counter() - t, "fwd_bwd_cpu_s": time.process_time() - c,
               "substeps": n}
        out["peak_rss_mb"] = max(peak, _rss_mb()) if rss else 0.0
        return out
    for k in range(n):
        r.substep(states[k], states[k + 1])
    return {"fwd_s": time.perf_counter() - t, "fwd_cpu_s": time.process_time() - c, "substeps": n,
            "peak_rss_mb": _rss_mb() if rss else 0.0}


_HEIGHT = {}


def _height_kernel(wp):
    """loss = sum of the particles' heights (defined once per process)."""
    if "k" not in _HEIGHT:
        @wp.kernel
        def height(q: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
            i = wp.tid()
            wp.atomic_add(loss, 0, q[i][1])

        _HEIGHT["k"] = height
    return _HEIGHT["k"]


# ------------------------------------------------------------------------------------------------ driver side
def _run(python: str, framework: str, scene: str, mode: str, frames: int, grad_frames: int, threads=None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if threads:
        env["WEFT_NUM_THREADS"] = str(threads)
    with tempfile.TemporaryDirectory() as cache:
        os.chmod(cache, 0o700)
        if mode.startswith("cold"):
            env["WEFT_CACHE_DIR"] = cache
            env["WARP_CACHE_PATH"] = cache
        cmd = [python, __file__, "--worker", framework, scene, mode, str(frames), str(grad_frames)]
        proc = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, timeout=3600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode or not lines:
        return {"error": (proc.stderr or proc.stdout)[-600:]}
    return json.loads(lines[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenes", nargs="+", default=list(SCENES), choices=SCENES)
    p.add_argument("--frameworks", nargs="+", default=["weft", "warp"], choices=["weft", "warp"])
    p.add_argument("--frames", type=int, default=20)
    p.add_argument("--grad-frames", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="5 frames, 1 gradient frame")
    p.add_argument("--warp-python", default="/opt/warp172/bin/python")
    p.add_argument("--no-cold", action="store_true", help="skip the cold-compile measurements")
    p.add_argument("--ratio", type=int, default=0, metavar="PAIRS",
                   help="only (taped forward + backward) / forward: PAIRS alternating runs in one process per scene")
    p.add_argument("--alternate", type=int, default=0, metavar="ROUNDS",
                   help="only the forward rows (and the arms' rows): ROUNDS rounds of weft and Warp processes "
                        "alternating, each round's weft/Warp CPU-time ratio, the minimum and median per framework")
    p.add_argument("--threads", type=int, default=0, help="WEFT_NUM_THREADS for weft's processes (--alternate)")
    p.add_argument("--json", default=None, help="also write the raw results here")
    p.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker:
        fw, scene, mode, frames, gf = a.worker
        print(json.dumps(worker(fw, scene, mode, int(frames), int(gf))))
        return 0
    if a.ratio:
        for scene in [s for s in a.scenes if s not in ("arms", "quadruped")]:
            for fw in fws_of(a):
                res = _run(sys.executable if fw == "weft" else a.warp_python, fw, scene, "ratio", a.ratio,
                           a.grad_frames)
                print(json.dumps(res), flush=True)
        return 0
    if a.quick:
        a.frames, a.grad_frames = 5, 1
    if a.alternate:
        return _alternate(a)
    fws = fws_of(a)
    results = []
    if "arms" in a.scenes:
        _arms_rows(a, fws)
    for scene in [s for s in a.scenes if s != "arms"]:
        for fw in fws:
            py = sys.executable if fw == "weft" else a.warp_python
            modes = ["forward", "fwd_mem", "grad"] + ([] if a.no_cold else ["cold", "cold_grad"])
            if fw == "weft":
                modes.insert(1, "graph")
            if scene == "quadruped":  # weft's FeatherstoneIntegrator has no adjoint yet
                modes = ["forward"] + ([] if a.no_cold else ["cold"])
            row = {"scene": scene, "framework": fw}
            for mode in modes:
                res = _run(py, fw, scene, mode, a.frames, a.grad_frames)
                row[mode] = res
                if "error" in res:
                    print(f"[{scene} {fw} {mode}] failed: {res['error']}", file=sys.stderr)
                else:
                    print(json.dumps(res), flush=True)
            results.append(row)
    _print(results)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0


def fws_of(a) -> list:
    return [f for f in a.frameworks if f == "weft" or Path(a.warp_python).exists()]


def _arms_rows(a, fws) -> None:
    """FK and FK + tip Jacobian of 4,096 arms: weft, warp.sim 1.7.2 (its own process) and Pinocchio (one
    configuration at a time, C++), CPU milliseconds for all arms."""
    rows = []
    for fw in fws:
        py = sys.executable if fw == "weft" else a.warp_python
        res = _run(py, fw, "arms", "fk", ARMS, 0)
        if "error" in res:
            print(f"[arms {fw}] failed: {res['error']}", file=sys.stderr)
            continue
        rows.append(res)
    try:
        rows.append(_pinocchio_arms(ARMS))
    except ImportError:
        print("[arms pinocchio] not installed (pip install pin)", file=sys.stderr)
    print(f"\n{ARMS} x 7-DoF arm (arm7.urdf): CPU ms for all arms (wall in brackets)")
    print(f"{'framework':10s} {'FK':>16s} {'FK + Jacobian':>18s} {'analytic':>16s}   (tape: 3 backward passes; "
          "analytic: weft's eval_point_jacobian, Pinocchio's computeFrameJacobian)")
    for r in rows:
        fk = f"{r['fk_cpu_ms']:.2f}" + (f" ({r['fk_ms']:.2f})" if "fk_ms" in r else "")
        jac = f"{r['fk_jac_cpu_ms']:.2f}" + (f" ({r['fk_jac_ms']:.2f})" if "fk_jac_ms" in r else "")
        if r["framework"] == "pinocchio":
            jac, ajac = "-", jac
        else:
            ajac = f"{r['fk_ajac_cpu_ms']:.2f} ({r['fk_ajac_ms']:.2f})" if "fk_ajac_cpu_ms" in r else "-"
        print(f"{r['framework']:10s} {fk:>16s} {jac:>18s} {ajac:>16s}")
        if "ajac_vs_tape_max_abs" in r:
            print(f"{'':10s} analytic vs tape Jacobian: max |difference| {r['ajac_vs_tape_max_abs']:.1e}")


def _alternate(a) -> int:
    """``a.alternate`` rounds of one weft and one Warp process per scene (forward rows; the arms' FK, tape and
    analytic Jacobian rows): alternating processes see the same load, so each round's ratio is the comparison."""
    fws = fws_of(a)
    for scene in a.scenes:
        mode = "fk" if scene == "arms" else "forward"
        keys = ["fk_cpu_ms", "fk_ms", "fk_jac_cpu_ms", "fk_jac_ms", "fk_ajac_cpu_ms", "fk_ajac_ms"] if scene == "arms" \
            else ["cpu_ms_per_frame", "ms_per_frame"]
        got = {fw: {k: [] for k in keys} for fw in fws}
        ratios = {k: [] for k in keys}
        for _ in range(a.alternate):
            row = {}
            for fw in fws:
                py = sys.executable if fw == "weft" else a.warp_python
                res = _run(py, fw, scene, mode, ARMS if scene == "arms" else a.frames, 0,
                           threads=a.threads if fw == "weft" else None)
                if "error" in res:
                    print(f"[{scene} {fw}] failed: {res['error']}", file=sys.stderr)
                    continue
                row[fw] = res
                for k in keys:
                    if k in res:
                        got[fw][k].append(res[k])
            if "weft" in row and "warp" in row:
                for k in keys:
                    if k in row["weft"] and k in row["warp"]:
                        ratios[k].append(row["warp"][k] / row["weft"][k])
        threads = f"weft on {a.threads} thread(s)" if a.threads else "weft threads as WEFT_NUM_THREADS"
        print(f"\n{scene}: {a.alternate} alternating rounds ({threads}); ms: min / median per framework; "
              f"Warp/weft per round")
        for k in keys:
            line = f"  {k:16s}"
            for fw in fws:
                v = sorted(got[fw][k])
                if v:
                    line += f" {fw} {v[0]:7.2f} / {v[len(v) // 2]:7.2f}"
            r = sorted(ratios[k])
            if r:
                line += "   Warp/weft " + " ".join(f"{x:.1f}" for x in ratios[k]) + f" (min {r[0]:.1f})"
            print(line, flush=True)
    if "arms" in a.scenes:
        try:
            pin = [_pinocchio_arms(ARMS) for _ in range(3)]
            print(f"  pinocchio FK {min(p['fk_cpu_ms'] for p in pin):.2f}, FK + computeFrameJacobian "
                  f"{min(p['fk_jac_cpu_ms'] for p in pin):.2f} CPU ms (minimum of 3)")
        except ImportError:
            pass
    return 0


def _g(d, k, fmt="{:.2f}"):
    v = d.get(k) if isinstance(d, dict) else None
    return fmt.format(v) if isinstance(v, (int, float)) else "-"


def _print(results) -> None:
    print(f"\n{'scene':9s} {'framework':9s} {'ms/frame':>9s} {'cpu ms':>8s} {'graph ms':>9s} {'fwd+bwd/fwd':>12s} "
          f"{'(cpu)':>6s} {'mem tape/fwd':>13s} {'cold fwd s':>11s} {'(cpu)':>6s} {'cold f+b s':>11s} {'(cpu)':>6s}")
    for row in results:
        fwd, mem, grad = row.get("forward", {}), row.get("fwd_mem", {}), row.get("grad", {})
        ratio = grad.get("fwd_bwd_s", 0) / mem["fwd_s"] if mem.get("fwd_s") and grad.get("fwd_bwd_s") else None
        mratio = grad.get("rss_mb", 0) / mem["rss_mb"] if mem.get("rss_mb") and grad.get("rss_mb") else None
        cratio = grad["fwd_bwd_cpu_s"] / mem["fwd_cpu_s"] if mem.get("fwd_cpu_s") and grad.get("fwd_bwd_cpu_s") else None
        print(f"{row['scene']:9s} {row['framework']:9s} {_g(fwd, 'ms_per_frame'):>9s} "
              f"{_g(fwd, 'cpu_ms_per_frame'):>8s} {_g(row.get('graph', {}), 'ms_per_frame'):>9s} "
              f"{(f'{ratio:.2f}' if ratio else '-'):>12s} {(f'{cratio:.2f}' if cratio else '-'):>6s} "
              f"{(f'{mratio:.2f}' if mratio else '-'):>13s} "
              f"{_g(row.get('cold', {}), 'compile_s'):>11s} {_g(row.get('cold', {}), 'compile_cpu_s'):>6s} "
              f"{_g(row.get('cold_grad', {}), 'compile_s'):>11s} {_g(row.get('cold_grad', {}), 'compile_cpu_s'):>6s}")
    for row in results:
        grad, mem = row.get("grad", {}), row.get("fwd_mem", {})
        if mem.get("rss_mb") is not None:
            print(f"  {row['scene']} {row['framework']}: forward rollout peak RSS +{mem['rss_mb']:.0f} MB, taped "
                  f"+{grad.get('rss_mb', float('nan')):.0f} MB over {mem.get('substeps')} substeps")


if __name__ == "__main__":
    sys.exit(main())
