#!/usr/bin/env python3
"""The drop-in libraries' linkage, as a program that loads them sees it (binutils' nm and readelf).

usage: symbols.py LIBKS_DGEMM LIBKS_DGEMM_BACKEND

libks_dgemm.so defines exactly cuBLAS's eight DGEMM entry points and needs neither cuBLAS, the CUDA runtime nor
libstdc++; libks_dgemm_backend.so defines exactly its four C functions and needs no libstdc++ (its C++ runtime is
private), so loading either into a program binds no C++ symbol to the program's. Sanitizer builds, which keep the
shared C++ runtime, are not checked (exit 77).
"""
import subprocess
import sys


def defined(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    return sorted(line.split()[-1] for line in out.splitlines() if line.split()[1:2] and line.split()[1] in "TDBRVWiu")


def needed(lib):
    out = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True, check=True).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    lib, backend = argv
    if any("asan" in n or "ubsan" in n for n in needed(lib) + needed(backend)):
        print("symbols: a sanitizer build (shared C++ runtime); skipped")
        return 77
    entry = sorted(f"{name}{suffix}" for name in ("cublasDgemm_v2", "cublasDgemmStridedBatched", "cublasGemmEx",
                                                   "cublasGemmStridedBatchedEx") for suffix in ("", "_64"))
    expect = {
        lib: (entry, ("libcublas", "libcublasLt", "libcudart", "libstdc++")),
        backend: (sorted(f"ks_dgemm_backend_{f}" for f in ("capturing", "facts", "known", "run")), ("libstdc++",)),
    }
    failed = 0
    for path, (symbols, banned) in expect.items():
        got = defined(path)
        if got != symbols:
            print(f"FAIL {path} defines {got[:12]}{' ...' if len(got) > 12 else ''}, expected exactly {symbols}")
            failed += 1
        bad = [n for n in needed(path) if n.startswith(tuple(b + ".so" for b in banned))]
        if bad:
            print(f"FAIL {path} needs {bad}")
            failed += 1
        print(f"{path}: {len(got)} symbols defined, needs {needed(path)}")
    print("symbols: " + ("all as expected" if not failed else f"{failed} FAILED"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
