#!/usr/bin/env python3
"""Energy per DGEMM, cuBLAS against the drop-in library (dmma_tma), from NVML's total-energy counter.
usage: energy.py LIB N SECONDS ROUNDS   (parent: alternates native / preloaded child processes)"""
import ctypes, json, os, subprocess, sys, time

def nvml():
    lib = ctypes.CDLL("libnvidia-ml.so.1")
    assert lib.nvmlInit_v2() == 0
    h = ctypes.c_void_p()
    assert lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) == 0
    def energy_mj():
        e = ctypes.c_ulonglong()
        assert lib.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(e)) == 0
        return e.value
    def clock():
        c = ctypes.c_uint()
        lib.nvmlDeviceGetClockInfo(h, 1, ctypes.byref(c))  # NVML_CLOCK_SM
        return c.value
    return energy_mj, clock

def child(n, seconds):
    import cupy as cp
    energy_mj, clock = nvml()
    rs = cp.random.RandomState(5)
    a = cp.asfortranarray(rs.uniform(-1, 1, (n, n)))
    b = cp.asfortranarray(rs.uniform(-1, 1, (n, n)))
    c = cp.empty((n, n), order="F")
    t = time.time()
    while time.time() - t < 2.0:  # warm-up into the power cap's regime
        cp.matmul(a, b, out=c)
        cp.cuda.runtime.deviceSynchronize()
    calls = 0
    clocks = []
    s, e = cp.cuda.Event(), cp.cuda.Event()
    e0 = energy_mj(); t0 = time.time(); s.record()
    while time.time() - t0 < seconds:
        for _ in range(4):
            cp.matmul(a, b, out=c)
        calls += 4
        cp.cuda.runtime.deviceSynchronize()
        clocks.append(clock())
    e.record(); e.synchronize()
    e1 = energy_mj()
    ms = cp.cuda.get_elapsed_time(s, e)
    clocks.sort()
    print(json.dumps({"calls": calls, "ms_per_call": ms / calls, "J_per_call": (e1 - e0) / 1000 / calls,
                      "W": (e1 - e0) / ms, "clock_median": clocks[len(clocks) // 2]}))

def main():
    if sys.argv[1] == "child":
        child(int(sys.argv[2]), float(sys.argv[3])); return
    lib, n, seconds, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    res = {"native": [], "dropin": []}
    for r in range(rounds):
        order = ["native", "dropin"] if r % 2 == 0 else ["dropin", "native"]
        for arm in order:
            env = dict(os.environ)
            if arm == "dropin":
                env["LD_PRELOAD"] = lib
                env["KS_DGEMM"] = "dmma_tma"
            out = subprocess.run([sys.executable, __file__, "child", n, seconds], env=env, capture_output=True, text=True)
            if out.returncode:
                print(out.stderr[-2000:]); sys.exit(1)
            d = json.loads(out.stdout.strip().splitlines()[-1]); res[arm].append(d)
            print(f"{n}^3 round {r} {arm:6s} {d['ms_per_call']:.3f} ms  {d['J_per_call']:.3f} J  {d['W']:.0f} W  clock {d['clock_median']} MHz  ({d['calls']} calls)", flush=True)
    med = lambda arm, k: sorted(x[k] for x in res[arm])[len(res[arm]) // 2]
    print(f"{n}^3 median: time dropin/native {med('dropin','ms_per_call')/med('native','ms_per_call'):.4f}, "
          f"energy dropin/native {med('dropin','J_per_call')/med('native','J_per_call'):.4f}, "
          f"W native {med('native','W'):.0f} dropin {med('dropin','W'):.0f}")

main()
