#!/usr/bin/env python3
"""Without a GPU, a program that needs one exits 1 with one line saying so (skipped where a GPU is visible).

usage: no_gpu.py PROGRAM [ARGS...]
"""
import shutil
import subprocess
import sys


def main(argv):
    smi = shutil.which("nvidia-smi")
    if smi and subprocess.run([smi, "-L"], capture_output=True).returncode == 0:
        print("SKIP: a GPU is visible here")
        return 0
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    print(f"exit {r.returncode}; stderr: {r.stderr}")
    return 0 if r.returncode == 1 and len(lines) == 1 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
