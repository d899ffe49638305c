# Native DGEMM's own error against the spread of the inputs, and the accuracy target ozaki's rule derives from it
# (gemm/07_ozaki/rule.cpp target_ratio, docs/gemm-notes.md step 57). numpy on the host, not part of the build.
# Reuses the statistics and the binned estimate of step 42's simulation (the file beside this one). Usage:
#   python3 this.py native SEED MN K     # FP64 running sums (one rounding a term; one a 4-deep block) against an
#                                        # 80-bit reference: largest error, and rms of error / (tau_i tau_j)
#   python3 this.py target SEED PHIS NS  # the growth, the target and the counts the old and new targets give
# Errors are in units of 2^-52 (|A||B|)_ij (kbench's max_error_eps_ab); estimates and targets in 2^-53, as the rule's.
import importlib.util, math, os, sys
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("s", os.path.join(here, "2026-11-26-ozaki-binned-estimate-simulation.py"))
s = importlib.util.module_from_spec(spec)
spec.loader.exec_module(s)


def native(rng, MN, K):
    for phi in (0.0, 0.5, 1.0):
        A = s.gen(MN, K, phi, rng); Bt = s.gen(MN, K, phi, rng)
        Al, Bl = A.astype(np.longdouble), Bt.astype(np.longdouble)
        ref = np.zeros((MN, MN), np.longdouble); blk = np.zeros((MN, MN), np.longdouble)
        seq = np.zeros((MN, MN)); k4 = np.zeros((MN, MN))
        for k in range(K):
            p = np.outer(Al[:, k], Bl[:, k]); ref += p; blk += p
            seq = seq + np.outer(A[:, k], Bt[:, k])
            if k % 4 == 3:
                k4 = (k4.astype(np.longdouble) + blk).astype(np.float64); blk[:] = 0
        ab = np.abs(A) @ np.abs(Bt).T
        e_seq = np.abs((seq - ref).astype(np.float64)) / (2.0**-52 * ab)
        e_k4 = np.abs((k4 - ref).astype(np.float64)) / (2.0**-52 * ab)
        idx = rng.choice(MN * MN, 4096, replace=False)
        _, _, tA = s.stats(A); _, _, tB = s.stats(Bt)
        tt = np.outer(tA, tB)
        rms = lambda e: np.sqrt(np.mean((e / tt) ** 2))
        print(f"PHI {phi} {MN}x{MN}x{K}: one rounding a term: largest {e_seq.max():.3f}, of 4096 samples "
              f"{e_seq.flat[idx].max():.3f}, rms(e / tau_i tau_j) {rms(e_seq):.3f} | a 4-deep block: largest "
              f"{e_k4.max():.3f}, sampled {e_k4.flat[idx].max():.3f}, rms {rms(e_k4):.3f}")


def level(ns, ss, floor_z=math.sqrt(2 * math.log(2))):
    ss = np.array(ss); ns = np.array(ns, float)
    f = lambda t: (ns * np.exp(-t * t / (2 * ss * ss))).sum() - 1
    lo, hi = 0.0, ss.max() * 40
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return max(hi, floor_z * ss.max())


def target(rng, phis, sizes):
    for phi in phis:
        for n in sizes:
            K = n
            rA, tA = s.chunked_stats(n, K, phi, rng); rB, tB = s.chunked_stats(n, K, phi, rng)
            ra, ta, rb, tb = rA.max(), tA.max(), rB.max(), tB.max()
            BA, BB = s.bins(rA, tA), s.bins(rB, tB)
            g = level([na * nb for na, _, _ in BA for nb, _, _ in BB], [tp * tq for _, _, tp in BA for _, _, tq in BB])
            g = max(1.0, g / level([n * n], [4 / 3]))
            t = 3.0 * min(2.0, math.sqrt(g)) if max(ta, tb) <= 8.0 else 3.0

            def est(m):
                qa, qb = s.split(ra, ta, rb, tb, s.scale_bits(m, K))
                return s.new_est(BA, BB, K, qa, qb, ra, rb)
            print(f"PHI {phi} {n}^3: growth {g:.2f}, tau max {max(ta, tb):.2f}, target {t:.2f}: {s.choose(est)} moduli "
                  f"for 3, {s.choose(est, target=t)} for the target; estimates "
                  f"{[(m, round(float(est(m)), 2)) for m in range(14, 19)]}")


if __name__ == "__main__":
    rng = np.random.default_rng(int(sys.argv[2]))
    if sys.argv[1] == "native":
        native(rng, int(sys.argv[3]), int(sys.argv[4]))
    else:
        target(rng, [float(x) for x in sys.argv[3].split(",")], [int(x) for x in sys.argv[4].split(",")])
