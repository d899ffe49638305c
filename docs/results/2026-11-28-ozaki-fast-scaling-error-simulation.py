"""ozaki's rounding error under norm scaling, simulated on the host, against the rule's estimate (gemm-notes.md, step 67).

Operands as kbench's exp:PHI ((u - 0.5) exp(PHI g); PHI 0: uniform in [-1, 1)). Each row of A (column of B) is
scaled as the device does it (its norm exponent: the smallest power of two at or above its root mean square times
1 + 2^-20, kept within 8 of its largest magnitude's), rounded to qa (qb) bits, and the error of the exact product
of the rounded operands is formed directly, E = dA B + A dB + dA dB (dA, dB exact in FP64), in row blocks. Printed:
the rule's estimate in 2^-53 units (predicted_ratio, rule.cpp: the binned level over half-octave bins of rho), the
target growth (target_ratio: the level over tau_p tau_q against uniform data's), and the largest |E| / (2^-52
(|A||B|)_ij) over all of C and over 20,000 sampled elements (kbench's units). The CRT recombination and C's final
rounding are exact or negligible at these counts and are not simulated.

usage: python3 this.py M N K PHI SEED MODULI[,MODULI...]   (16384^3 takes about 8 minutes a count on two cores)
"""
import math
import sys

import numpy as np

MODULI = [256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197, 193, 191, 181, 179, 173]


def scale_bits(n, K):
    log2_p = sum(math.log2(m) for m in MODULI[:n]) - 1e-9
    return int(min(max(math.floor(log2_p - 1 - math.log2(K) - 1e-9), 0), 124))


def operand(rng, rows, cols, phi):
    u = rng.random((rows, cols))
    return 2 * u - 1 if phi == 0 else (u - 0.5) * np.exp(phi * rng.standard_normal((rows, cols)))


def row_stats(X):
    """Each row's norm exponent, rho at it and tau, as the device's statistics define them."""
    ab = np.abs(X)
    mean, rms = ab.mean(1), np.sqrt((X * X).mean(1))
    emax = np.frexp(ab.max(1))[1]                      # 2^emax: the smallest power of two above the largest
    e = np.clip(np.frexp(rms * (1 + 2**-20))[1], emax - 8, emax)
    return e, 2.0**e / mean, rms / mean


def rho_bin(rho):
    f, ex = np.frexp(rho)
    return np.clip(2 * (ex - 1) + (f >= 0.70710678118654752), 0, 39)


def level(pairs):
    """The t with sum_p n_p exp(-t^2 / (2 v_p)) = 1 over (n_p, v_p), at least sqrt(2 ln 2 max v) (rule.cpp)."""
    log_n = np.array([math.log(n) for n, _ in pairs])
    a = np.array([1 / (2 * v) for _, v in pairs])
    v_max = max(v for _, v in pairs)
    floor = 2 * math.log(2) * v_max
    u = max(floor, max((math.log(len(pairs)) + log_n) / a))
    for _ in range(50):
        x = log_n - u * a
        top = x.max()
        w = np.exp(x - top)
        nxt = u + (top + math.log(w.sum())) * w.sum() / (a * w).sum()
        done = abs(nxt - u) <= 1e-6 * u
        u = nxt
        if done:
            break
    return math.sqrt(max(u, floor))


def main():
    M, N, K = (int(x) for x in sys.argv[1:4])
    phi, seed = float(sys.argv[4]), int(sys.argv[5])
    counts = [int(x) for x in sys.argv[6].split(",")]
    rng = np.random.default_rng(seed)
    A, B = operand(rng, M, K, phi), operand(rng, K, N, phi)
    ea, rho_a, tau_a = row_stats(A)
    eb, rho_b, tau_b = row_stats(B.T)

    def bins(rho, tau):
        b = rho_bin(rho)
        return [(int(np.sum(b == x)), rho[b == x].max(), tau[b == x].max()) for x in np.unique(b)]

    bins_a, bins_b = bins(rho_a, tau_a), bins(rho_b, tau_b)
    z = math.sqrt(2 * math.log(M * N))
    native = level([(ca * cb, (ta * tb) ** 2) for ca, _, ta in bins_a for cb, _, tb in bins_b])
    growth = max(1.0, native / (z * 4 / 3))
    print(f"{M}x{N}x{K} PHI {phi} seed {seed}: bins of A (rows, rho, tau) "
          f"{[(c, round(float(r), 2), round(float(t), 2)) for c, r, t in bins_a]}, growth {growth:.3f} "
          f"(target: 3 x min(4, growth) = {3 * min(4, growth):.2f}; step 57's 3 x min(2, sqrt) = "
          f"{3 * min(2, math.sqrt(growth)):.2f})", flush=True)
    Ra, Ta, Rb, Tb = rho_a.max(), tau_a.max(), rho_b.max(), tau_b.max()
    abs_b = np.abs(B)
    eps = 2.0**-52
    sampled = np.sort(np.random.default_rng(7).integers(0, M * N, 20000))
    for n in counts:
        S = scale_bits(n, K)
        qa = int(round((S + math.log2((Ra * Tb) / (Rb * Ta))) / 2))
        qa = min(max(qa, max(S - 54, 21)), min(S - 21, 54))
        qb = S - qa
        ka, kb = 2.0 ** (53 - qa) / math.sqrt(12 * K), 2.0 ** (53 - qb) / math.sqrt(12 * K)
        binned = level([(ca * cb, (ra * tb * ka) ** 2 + (rb * ta * kb) ** 2)
                        for ca, ra, ta in bins_a for cb, rb, tb in bins_b])
        estimate = min(z * math.hypot(Ra * Tb * ka, Rb * Ta * kb), binned) + 2.0 ** (53 - qa - qb) * Ra * Rb / 4
        sb = 2.0 ** (qb - eb)
        dB = np.rint(B * sb[None, :]) / sb[None, :] - B
        largest = largest_sampled = 0.0
        block = 2048
        for r0 in range(0, M, block):
            Ab = A[r0:r0 + block]
            sa = 2.0 ** (qa - ea[r0:r0 + block])
            dAb = np.rint(Ab * sa[:, None]) / sa[:, None] - Ab
            E = dAb @ B
            E += Ab @ dB
            E += dAb @ dB
            R = np.abs(E) / (eps * (np.abs(Ab) @ abs_b))
            largest = max(largest, R.max())
            lo, hi = r0 * N, min(r0 + block, M) * N
            here = sampled[(sampled >= lo) & (sampled < hi)] - lo
            if here.size:
                largest_sampled = max(largest_sampled, R.flat[here].max())
        print(f"  {n} moduli (qa {qa}, qb {qb}): estimate {estimate:.3f} x 2^-53; largest over C {largest:.3f}, "
              f"over 20,000 sampled {largest_sampled:.3f} x 2^-52 (|A||B|)_ij", flush=True)


if __name__ == "__main__":
    main()
