# The binned error estimate of ozaki's rule (gemm/07_ozaki/rule.cpp, docs/gemm-notes.md step 42), simulated on the
# host with numpy: the rows' statistics as the device computes them (rho, tau per row of A and column of B), the
# unbinned and the binned estimate for each moduli count, and the first-order error of the scaled and rounded
# operands against it. Not part of the build. Usage:
#   python3 this.py stats SEED     # counts the rule would pick, PHI 0, 0.5, 1 at 4096^3, 8192^3, 16384^3
#   python3 this.py errors SEED    # estimate against the actual largest error (all M N elements, and 4096 samples)
# Estimates and errors are in units of 2^-53 (|A||B|)_ij, as the rule's; kbench's max_error_eps_ab is in 2^-52.
import numpy as np, math, sys
MOD=[256,255,253,251,247,241,239,233,229,227,223,217,211,199,197,193,191,181,179,173]
def log2P(n): return sum(math.log2(m) for m in MOD[:n]) - 1e-9
def scale_bits(n,K): return int(min(max(math.floor(log2P(n)-1-math.log2(max(K,1))-1e-9),0),124))
def gen(rows,K,phi,rng):
    x=rng.random((rows,K))-0.5
    if phi>0: x*=np.exp(phi*rng.standard_normal((rows,K)))
    return x
def stats(X):  # rows of X are the dot-product vectors
    K=X.shape[1]; a=np.abs(X); m=a.max(1); s=a.sum(1); ss=(X*X).sum(1)
    _,ex=np.frexp(m); rho=np.ldexp(K/s,ex); tau=np.minimum(np.sqrt(rho),np.sqrt(K*ss)/s)
    return ex,rho,tau
def split(ra,ta,rb,tb,S):
    lean=math.log2((ra*tb)/(rb*ta)); qa=int(round((S+lean)/2)); qa=min(max(qa,max(0,S-62)),min(62,S)); return qa,S-qa
def old_est(ra,ta,rb,tb,M,N,K,qa,qb):
    z=math.sqrt(2*math.log(max(M*N,2)))
    return z*math.hypot(ra*tb*2.0**(53-qa),rb*ta*2.0**(53-qb))/math.sqrt(12*K)+2.0**(53-qa-qb)*ra*rb/4
def bins(rho,tau,w=2):
    b=np.floor(np.log2(rho)*w).astype(int); out=[]
    for v in np.unique(b):
        sel=b==v; out.append((int(sel.sum()),rho[sel].max(),tau[sel].max()))
    return out
def new_est(BA,BB,K,qa,qb,ra,rb,floor_z=math.sqrt(2*math.log(2))):
    ss=[];ns=[]
    for (na,rp,tp) in BA:
        for (nb,rq,tq) in BB:
            ss.append(math.hypot(rp*tq*2.0**(53-qa),rq*tp*2.0**(53-qb))/math.sqrt(12*K)); ns.append(na*nb)
    ss=np.array(ss); ns=np.array(ns,float)
    f=lambda t: (ns*np.exp(-t*t/(2*ss*ss))).sum()-1
    lo,hi=0.0,ss.max()*40
    for _ in range(200):
        mid=(lo+hi)/2
        if f(mid)>0: lo=mid
        else: hi=mid
    t=max(hi,floor_z*ss.max())
    return t+2.0**(53-qa-qb)*ra*rb/4
def choose(est,lo=12,hi=20,target=3.0):
    for n in range(lo,hi+1):
        if est(n)<=target: return n
    return 0


def chunked_stats(rows, K, phi, rng, chunk=1024):
    R = []; T = []
    for r0 in range(0, rows, chunk):
        _, r, t = stats(gen(min(chunk, rows - r0), K, phi, rng)); R.append(r); T.append(t)
    return np.concatenate(R), np.concatenate(T)

def run_stats(rng):
    for phi in (0.0, 0.5, 1.0):
        for n in (4096, 8192, 16384):
            M = N = K = n
            rA, tA = chunked_stats(M, K, phi, rng); rB, tB = chunked_stats(N, K, phi, rng)
            ra, ta, rb, tb = rA.max(), tA.max(), rB.max(), tB.max()
            BA, BB = bins(rA, tA), bins(rB, tB)
            def eo(m):
                qa, qb = split(ra, ta, rb, tb, scale_bits(m, K)); return old_est(ra, ta, rb, tb, M, N, K, qa, qb)
            def en(m):
                qa, qb = split(ra, ta, rb, tb, scale_bits(m, K)); return new_est(BA, BB, K, qa, qb, ra, rb)
            no, nn = choose(eo), choose(en)
            print(f"PHI {phi} {n}^3: unbinned {no} moduli (one fewer: {eo(no - 1):.2f}), "
                  f"binned {nn} (one fewer: {en(nn - 1):.2f}); bins of A {[(c, round(r, 1)) for c, r, t in BA]}")

def run_errors(rng):
    for phi, MN, K, nmod in [(0.0, 2048, 4096, 14), (0.5, 2048, 8192, 15), (1.0, 2048, 8192, 16),
                             (1.0, 1024, 16384, 16), (0.5, 1024, 16384, 15)]:
        A = gen(MN, K, phi, rng); Bt = gen(MN, K, phi, rng)  # rows of Bt: the columns of B
        eA, rA, tA = stats(A); eB, rB, tB = stats(Bt)
        ra, ta, rb, tb = rA.max(), tA.max(), rB.max(), tB.max()
        qa, qb = split(ra, ta, rb, tb, scale_bits(nmod, K))
        As = np.ldexp(np.rint(np.ldexp(A, (qa - eA)[:, None])), (eA - qa)[:, None])
        Bs = np.ldexp(np.rint(np.ldexp(Bt, (qb - eB)[:, None])), (eB - qb)[:, None])
        E = (A - As) @ Bt.T + As @ (Bt - Bs).T  # C - the emulation's C, first and second order
        R = np.abs(E) / ((np.abs(A) @ np.abs(Bt).T) * 2.0**-53)
        sampled = R.ravel()[rng.choice(R.size, 4096, replace=False)].max()
        print(f"PHI {phi}, M = N = {MN}, K = {K}, {nmod} moduli: largest {R.max():.3f} (4096 samples: {sampled:.3f}); "
              f"unbinned estimate {old_est(ra, ta, rb, tb, MN, MN, K, qa, qb):.3f}, "
              f"binned {new_est(bins(rA, tA), bins(rB, tB), K, qa, qb, ra, rb):.3f}")

if __name__ == "__main__":
    rng = np.random.default_rng(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    {"stats": run_stats, "errors": run_errors}[sys.argv[1]](rng)
