#!/usr/bin/env python3
"""kbench resources runs cuobjdump from an argument vector, never through a shell:
- a stand-in cuobjdump in a folder whose name holds spaces and quotes runs, and its dump is read;
- a stand-in whose file name is a shell command (`cuobjdump;touch pwned`) runs as itself, creating nothing;
- a --cuobjdump value with a command smuggled in is refused (exit 2) and runs nothing.

usage: resources_no_shell.py KBENCH WORK_DIR
"""
import os
import shutil
import stat
import subprocess
import sys

DUMP = """
Fatbin elf code:
================
arch = sm_90
identifier = /src/gemm/99_stand_in.cu

Resource usage:
 Function _ZN2ks4gemm15stand_in_kernelENS0_8GemmArgsE:
  REG:42 STACK:0 SHARED:1024 LOCAL:0 CONSTANT[0]:432 TEXTURE:0 SURFACE:0 SAMPLER:0
"""


def stand_in(folder, name):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "dump.txt"), "w") as f:
        f.write(DUMP)
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write('#!/bin/sh\ncat "$(dirname "$0")/dump.txt"\n')
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def run(argv, cwd):
    r = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    print(f"$ {argv}\nexit {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    kbench, work = argv[0], os.path.abspath(argv[1])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = []
    quoted = stand_in(os.path.join(work, "dir with 'single' \"double\" quotes and spaces"), "cuobjdump")
    r = run([kbench, "resources", "--cuobjdump", quoted], work)
    if r.returncode != 0 or "stand_in_kernel(GemmArgs) | 42 | 1024 | 0 | 0 |" not in r.stdout:
        failures.append("the stand-in cuobjdump under a path with spaces and quotes was not run and read")
    command_named = stand_in(os.path.join(work, "plain"), "cuobjdump;touch pwned_by_name")
    r = run([kbench, "resources", "--cuobjdump", command_named], work)
    if r.returncode != 0 or os.path.exists(os.path.join(work, "pwned_by_name")) or os.path.exists(
            os.path.join(work, "plain", "pwned_by_name")):
        failures.append("a cuobjdump whose name is a shell command did not run as itself")
    smuggled = f"x'; touch {work}/pwned; echo '"
    r = run([kbench, "resources", "--cuobjdump", smuggled], work)
    if r.returncode != 2 or os.path.exists(os.path.join(work, "pwned")):
        failures.append("a --cuobjdump value with a command in it was not refused, or ran the command")
    for f in failures:
        print("FAILED: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
