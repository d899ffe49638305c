#!/usr/bin/env python3
"""Installs the suite into a fresh prefix and builds and runs tests/package (an outside project) against it.

usage: check.py CMAKE BUILD_DIR PACKAGE_SOURCE WORK_DIR CXX_COMPILER
Exit 0: installed, built, and the consumer found the variants (`consumer --list`); 1: failed. Running the
variants on a GPU is the test package_runs_variants.
"""
import os
import shutil
import subprocess
import sys


def step(argv):
    print("$ " + " ".join(argv), flush=True)
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    print(r.stdout[-4000:] + r.stderr[-4000:], flush=True)
    return r.returncode


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    cmake, build, source, work, cxx = argv
    shutil.rmtree(work, ignore_errors=True)
    prefix = os.path.join(work, "prefix")
    consumer = os.path.join(work, "build")
    if step([cmake, "--install", build, "--prefix", prefix]) != 0:
        return 1
    for required in ("bin/kbench", "bin/check_cc", "share/cuda_kernel_suite/compare.py",
                     "include/cuda_kernel_suite/gemm/gemm.hpp", "lib/cmake/cuda_kernel_suite/cuda_kernel_suiteConfig.cmake"):
        if not os.path.exists(os.path.join(prefix, required)):
            print(f"FAILED: the install has no {required}")
            return 1
    if step([cmake, "-S", source, "-B", consumer, f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_CXX_COMPILER={cxx}",
             "-DCMAKE_BUILD_TYPE=Release"]) != 0:
        return 1
    if step([cmake, "--build", consumer]) != 0:
        return 1
    # The installed kbench runs from the prefix and finds its Python tools there.
    results = os.path.join(source, "..", "..", "docs", "results", "2026-11-22-h200-sm90-default.json")
    if step([os.path.join(prefix, "bin", "kbench"), "list", "gemm"]) != 0:
        return 1
    if step([os.path.join(prefix, "bin", "kbench"), "compare", results]) != 0:
        return 1
    return 0 if step([os.path.join(consumer, "consumer"), "--list"]) == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
