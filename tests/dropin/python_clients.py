#!/usr/bin/env python3
"""The drop-in library (libks_dgemm.so) under real Python clients: CuPy and PyTorch float64 matmul on the GPU.

usage: python_clients.py check LIB          results and routes (a test; 77 where neither CuPy nor PyTorch imports)
       python_clients.py speed LIB [N ...]  the same script's matmul of N^3 without and with the library preloaded

check: a child process with LIB preloaded and KS_DGEMM_LOG set runs CuPy's matmul, @, dot, tensordot and batched
matmul on C- and F-ordered arrays and transposed views, and PyTorch's mm, matmul, addmm, bmm and nn.Linear; each
result is checked on sampled elements against a long double dot product with the suite's bound
|C - C_ref| <= 2 (K + 2) eps (|alpha| (|A||B|) + |beta| |C0|) + DBL_MIN; then the log must show calls that reached
the suite's kernels from each framework.
speed: per framework, three rounds of two child processes (without and with the library, in alternating order; the
same warm-up (at least 3 calls and WARMUP_S seconds per size) and repetitions in both, CUDA events around each sample
of about SAMPLE_MS of back-to-back calls, the median per size), the median of the rounds per arm and size, and their
ratio; at 64^3, the host time per call of 20000 calls.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:  # CI's Python: no numpy, so neither CuPy nor PyTorch
    print("python_clients: numpy does not import here; skipped")
    sys.exit(77)

EPS = np.finfo(np.float64).eps


def frameworks():
    out = []
    for name in ("cupy", "torch"):
        try:
            __import__(name)
            out.append(name)
        except Exception:  # noqa: BLE001 (an import that fails for any reason: not available here)
            pass
    return out


def sampled_check(what, a, b, c, alpha=1.0, beta=0.0, c0=None, samples=48, rng=np.random.default_rng(7)):
    """a (m x k), b (k x n), c (m x n) as numpy float64, numpy semantics: c = alpha a b + beta c0."""
    m, k = a.shape
    n = b.shape[1]
    worst = 0.0
    for s in range(samples):
        i, j = (0, 0) if s == 0 else (m - 1, n - 1) if s == 1 else (int(rng.integers(m)), int(rng.integers(n)))
        prod = a[i, :].astype(np.longdouble) * b[:, j].astype(np.longdouble)
        ref = alpha * prod.sum() + (beta * c0[i, j] if beta else 0)
        bound = 2 * (k + 2) * EPS * (abs(alpha) * float(np.abs(prod).sum()) + (abs(beta * c0[i, j]) if beta else 0))
        bound += np.finfo(np.float64).tiny
        err = abs(float(c[i, j]) - float(ref))
        if not err <= bound:
            raise AssertionError(f"{what}: C[{i},{j}] = {c[i, j]!r}, expected {float(ref)!r} (bound {bound:.3g})")
        worst = max(worst, err / bound)
    print(f"  {what:58s} {m}x{n}x{k}: worst {worst:.3f} of the bound")


def cupy_cases():
    import cupy as cp
    rs = cp.random.RandomState(1)
    a = rs.uniform(-1, 1, (2304, 1536))
    b = rs.uniform(-1, 1, (1536, 2560))
    ah, bh = cp.asnumpy(a), cp.asnumpy(b)
    sampled_check("cupy a @ b (C order)", ah, bh, cp.asnumpy(a @ b))
    sampled_check("cupy.matmul (C order)", ah, bh, cp.asnumpy(cp.matmul(a, b)))
    sampled_check("cupy.dot (C order)", ah, bh, cp.asnumpy(cp.dot(a, b)))
    sampled_check("cupy.tensordot axes=1", ah, bh, cp.asnumpy(cp.tensordot(a, b, axes=1)))
    af, bf = cp.asfortranarray(a), cp.asfortranarray(b)
    sampled_check("cupy a @ b (F order)", ah, bh, cp.asnumpy(af @ bf))
    at = cp.ascontiguousarray(a.T)  # 1536 x 2304, C order
    sampled_check("cupy a.T @ b (a transposed view)", cp.asnumpy(at).T, bh, cp.asnumpy(at.T @ b))
    x = rs.uniform(-1, 1, (3, 2304, 1024))
    y = rs.uniform(-1, 1, (3, 1024, 2176))
    z = cp.asnumpy(cp.matmul(x, y))
    xh, yh = cp.asnumpy(x), cp.asnumpy(y)
    for i in range(3):
        sampled_check(f"cupy batched matmul, member {i}", xh[i], yh[i], z[i], samples=16)
    big_a = rs.uniform(-1, 1, (4096, 4096))
    big_b = rs.uniform(-1, 1, (4096, 4096))
    sampled_check("cupy a @ b 4096^3", cp.asnumpy(big_a), cp.asnumpy(big_b), cp.asnumpy(big_a @ big_b), samples=16)
    # Odd sizes: C order makes the call NN with lda 2561 and ldb 1537, which dmma_tma copies to a padded leading
    # dimension before its TMA kernel (docs/gemm-notes.md, step 34).
    odd_a, odd_b = rs.uniform(-1, 1, (2305, 1537)), rs.uniform(-1, 1, (1537, 2561))
    sampled_check("cupy a @ b, odd sizes", cp.asnumpy(odd_a), cp.asnumpy(odd_b), cp.asnumpy(odd_a @ odd_b))
    small = rs.uniform(-1, 1, (64, 64))
    sampled_check("cupy a @ b 64^3", cp.asnumpy(small), cp.asnumpy(small), cp.asnumpy(small @ small))
    # Thin C with a long side and deep K (the skinny kernel's where the rule takes it, docs/gemm-notes.md steps 59-60):
    # C order makes (6 x 6144) @ (6144 x 5120) an NN call of 6 columns (the axpy form), and (5120 x 6144) @ (6144 x 5)
    # and @ (6144 x 2) NN calls of 5 and 2 rows (the dot form and its split form).
    long_a, long_b, few = rs.uniform(-1, 1, (5120, 6144)), rs.uniform(-1, 1, (6144, 5120)), rs.uniform(-1, 1, (6, 6144))
    sampled_check("cupy (6 x K) @ b", cp.asnumpy(few), cp.asnumpy(long_b), cp.asnumpy(few @ long_b))
    for cols in (5, 2):
        narrow = rs.uniform(-1, 1, (6144, cols))
        sampled_check(f"cupy a @ (K x {cols})", cp.asnumpy(long_a), cp.asnumpy(narrow), cp.asnumpy(long_a @ narrow))


def torch_cases():
    import torch
    g = torch.Generator(device="cuda").manual_seed(2)
    def u(*shape):
        return torch.rand(*shape, dtype=torch.float64, device="cuda", generator=g) * 2 - 1
    a, b = u(2304, 1536), u(1536, 2560)
    ah, bh = a.cpu().numpy(), b.cpu().numpy()
    sampled_check("torch.mm", ah, bh, torch.mm(a, b).cpu().numpy())
    sampled_check("torch.matmul", ah, bh, torch.matmul(a, b).cpu().numpy())
    c0 = u(2304, 2560)
    sampled_check("torch.addmm beta 0.5 alpha 2", ah, bh, torch.addmm(c0, a, b, beta=0.5, alpha=2.0).cpu().numpy(),
                  alpha=2.0, beta=0.5, c0=c0.cpu().numpy())
    x, y = u(3, 2304, 1024), u(3, 1024, 2176)
    z = torch.bmm(x, y).cpu().numpy()
    for i in range(3):
        sampled_check(f"torch.bmm, member {i}", x[i].cpu().numpy(), y[i].cpu().numpy(), z[i], samples=16)
    lin = torch.nn.Linear(1536, 2560, bias=False, dtype=torch.float64, device="cuda")
    with torch.no_grad():
        sampled_check("torch.nn.Linear (x W^T)", ah, lin.weight.cpu().numpy().T, lin(a).cpu().numpy())
    at = u(1536, 2304).t()  # a transposed view
    sampled_check("torch.mm, a transposed view", at.cpu().numpy(), bh, torch.mm(at, b).cpu().numpy())
    odd_a, odd_b = u(2305, 1537), u(1537, 2561)  # lda and ldb odd, as in the CuPy case
    sampled_check("torch.mm, odd sizes", odd_a.cpu().numpy(), odd_b.cpu().numpy(), torch.mm(odd_a, odd_b).cpu().numpy())
    big_a, big_b = u(4096, 4096), u(4096, 4096)
    sampled_check("torch.mm 4096^3", big_a.cpu().numpy(), big_b.cpu().numpy(), torch.mm(big_a, big_b).cpu().numpy(),
                  samples=16)
    # Thin C as in the CuPy cases, and x W^T of 4 rows (a TN call of 4 columns: the tiles, or the skinny kernel where
    # no tile would run).
    long_b, long_a = u(6144, 4608), u(4608, 6144)
    for rows in (7, 3):
        few = u(rows, 6144)
        sampled_check(f"torch.mm ({rows} x K) @ b", few.cpu().numpy(), long_b.cpu().numpy(),
                      torch.mm(few, long_b).cpu().numpy())
    narrow = u(6144, 8)
    sampled_check("torch.mm a @ (K x 8)", long_a.cpu().numpy(), narrow.cpu().numpy(),
                  torch.mm(long_a, narrow).cpu().numpy())
    wide = torch.nn.Linear(6144, 4608, bias=False, dtype=torch.float64, device="cuda")
    x4 = u(4, 6144)
    with torch.no_grad():
        sampled_check("torch.nn.Linear, 4 rows (x W^T)", x4.cpu().numpy(), wide.weight.cpu().numpy().T,
                      wide(x4).cpu().numpy())


def child_check(which):
    print(f"{which}:")
    (cupy_cases if which == "cupy" else torch_cases)()


WARMUP_S = 0.5
SAMPLE_MS = 1.0


def timed(which, n, reps):
    """Median ms per float64 matmul of n^3 over `reps` samples, after a warm-up of at least 3 calls and WARMUP_S
    seconds (so that the GPU's clocks have left idle before the first timed call in either arm). CUDA events around
    each sample, a sample being as many back-to-back calls as fill about SAMPLE_MS of the warm-up's time per call
    (one call from that size up): so a short product is timed as a program queueing many sees it, with the host's
    Python path (20-30 us a call, which the library does not change) overlapping the GPU, not inside every sample."""
    import time
    if which == "cupy":
        import cupy as cp
        rs = cp.random.RandomState(3)
        a, b = rs.uniform(-1, 1, (n, n)), rs.uniform(-1, 1, (n, n))
        out = cp.empty((n, n))
        def call():
            cp.matmul(a, b, out=out)
        def event():
            return cp.cuda.Event()
        def elapsed(s, e):
            e.synchronize()
            return cp.cuda.get_elapsed_time(s, e)
        sync = cp.cuda.Device().synchronize
    else:
        import torch
        a = torch.rand(n, n, dtype=torch.float64, device="cuda") * 2 - 1
        b = torch.rand(n, n, dtype=torch.float64, device="cuda") * 2 - 1
        out = torch.empty(n, n, dtype=torch.float64, device="cuda")
        def call():
            torch.mm(a, b, out=out)
        def event():
            return torch.cuda.Event(enable_timing=True)
        def elapsed(s, e):
            e.synchronize()
            return s.elapsed_time(e)
        sync = torch.cuda.synchronize
    start, calls = time.perf_counter(), 0
    while calls < 3 or time.perf_counter() - start < WARMUP_S:
        call()
        sync()
        calls += 1
    batch = max(1, round(SAMPLE_MS * 1e-3 * calls / (time.perf_counter() - start)))
    times = []
    for _ in range(reps):
        s, e = event(), event()
        s.record()
        for _ in range(batch):
            call()
        e.record()
        times.append(elapsed(s, e) / batch)
    return float(np.median(times))


def per_call_us(which, calls=20000):
    """Host time per call of `calls` back-to-back 64^3 matmuls into one output (after a warm-up), with a sync."""
    import time
    if which == "cupy":
        import cupy as cp
        a = cp.ones((64, 64))
        out = cp.empty((64, 64))
        def call():
            cp.matmul(a, a, out=out)
        sync = cp.cuda.Device().synchronize
    else:
        import torch
        a = torch.ones(64, 64, dtype=torch.float64, device="cuda")
        out = torch.empty(64, 64, dtype=torch.float64, device="cuda")
        def call():
            torch.mm(a, a, out=out)
        sync = torch.cuda.synchronize
    for _ in range(200):
        call()
    sync()
    t = time.perf_counter()
    for _ in range(calls):
        call()
    sync()
    return (time.perf_counter() - t) / calls * 1e6


def child_speed(which, sizes):
    out = {}
    for n in sizes:
        out[str(n)] = per_call_us(which) if n == 64 else timed(which, n, 5 if n >= 16384 else 10 if n >= 4096 else 50)
    print(json.dumps(out))


def run_child(args, lib, log=None, policy=None):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.pop("KS_DGEMM", None)
    if lib:
        env["LD_PRELOAD"] = lib
        if log:
            env["KS_DGEMM_LOG"] = log
        if policy:
            env["KS_DGEMM"] = policy
    return subprocess.run([sys.executable, os.path.abspath(__file__)] + args, env=env, capture_output=True, text=True)


def check(lib):
    found = frameworks()
    if not found:
        print("python_clients: neither CuPy nor PyTorch imports here; skipped")
        return 77
    failed = 0
    for which in found:
        with tempfile.NamedTemporaryFile(suffix=".log", delete=False) as f:
            log = f.name
        r = run_child(["child-check", which], lib, log)
        sys.stdout.write(r.stdout)
        lines = open(log).read().splitlines()
        os.unlink(log)
        suite = [line for line in lines if "route=" in line and "route=native" not in line]
        print(f"  log: {len(lines)} calls, {len(suite)} on the suite's kernels; entry points: "
              f"{sorted(set(line.split()[0] for line in lines))}")
        fields = [dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv) for line in lines]
        routes = collections.Counter(f"{f.get('ops', '?')} {f.get('route', '?')}" for f in fields)
        print("  ops and routes: " + ", ".join(f"{k} x{n}" for k, n in sorted(routes.items())))
        if r.returncode != 0:
            print(f"python_clients: {which} FAILED:\n{r.stderr[-3000:]}")
            failed += 1
        elif not suite:
            print(f"python_clients: {which}: no call reached the suite's kernels\n" + "\n".join(lines[:20]))
            failed += 1
    print("python_clients: " + ("all passed" if not failed else f"{failed} FAILED"))
    return 1 if failed else 0


def speed(lib, sizes, rounds=3):
    rows = []
    for which in frameworks():
        arms = {None: [], lib: []}
        for r in range(rounds):
            for arm_lib in ((None, lib) if r % 2 == 0 else (lib, None)):
                out = run_child(["child-speed", which] + [str(n) for n in sizes], arm_lib)
                if out.returncode != 0:
                    print(f"{which}: FAILED\n{out.stderr[-3000:]}")
                    return 1
                arms[arm_lib].append(json.loads(out.stdout.strip().splitlines()[-1]))
        for n in sizes:
            base = float(np.median([a[str(n)] for a in arms[None]]))
            lib_ms = float(np.median([a[str(n)] for a in arms[lib]]))
            what = "host us per call" if n == 64 else "ms (median)"
            rows.append((which, n, what, base, lib_ms, base / lib_ms))
    print(f"| client | size | figure (median of {rounds} rounds) | without | with libks_dgemm | speed-up |\n"
          "|---|---:|---|---:|---:|---:|")
    for which, n, what, base, lib_ms, ratio in rows:
        print(f"| {which} | {n}^3 | {what} | {base:.4g} | {lib_ms:.4g} | {ratio:.3f}x |")
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "child-check":
        child_check(argv[1])
        return 0
    if len(argv) >= 2 and argv[0] == "child-speed":
        child_speed(argv[1], [int(n) for n in argv[2:]])
        return 0
    if len(argv) == 2 and argv[0] == "check":
        return check(os.path.abspath(argv[1]))
    if len(argv) >= 2 and argv[0] == "speed":
        return speed(os.path.abspath(argv[1]), [int(n) for n in argv[2:]] or [64, 1024, 4096, 8192, 16384])
    print(__doc__.strip().splitlines()[2], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
