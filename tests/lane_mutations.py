#!/usr/bin/env python3
"""Mutation test of the lane count: puts a literal 32 back into each place reduce/warp.hpp derives from the lane
count W, builds tests/test_warp_model.cpp against the mutated copy, and checks that its 64-lane cases fail while
its 32-lane cases still pass (each mutant is the same code at 32 lanes). The unmutated header must pass both.

usage: lane_mutations.py --source-dir DIR --cxx COMPILER [--gtest-include DIRS] --gtest-lib LIB --gtest-main-lib LIB
"""
import argparse
import concurrent.futures
import os
import pathlib
import subprocess
import sys
import tempfile

# (what the mutant does, the text in reduce/warp.hpp, its replacement)
MUTATIONS = [
    ("warp_fold's first shuffle distance", "offset = W / 2;", "offset = 16;"),
    ("block_fold's lane and warp of a thread", "lane = t.tid() % W, warp = t.tid() / W;",
     "lane = t.tid() % 32, warp = t.tid() / 32;"),
    ("block_fold's count of warp partials", "t.block_size() / W", "t.block_size() / 32"),
    ("warp_tail's lanes", "if (tid < W) {", "if (tid < 32) {"),
    ("warp_tail's first distance", "offset = W; offset >= 1", "offset = 32; offset >= 1"),
    ("the complete tree's last block level", "Stride > W", "Stride > 32"),
]


def build(args, header_text, workdir, name):
    """Builds the model test against header_text as reduce/warp.hpp; returns the program's path."""
    include = workdir / name
    (include / "reduce").mkdir(parents=True)
    (include / "reduce" / "warp.hpp").write_text(header_text)
    exe = workdir / (name + ".bin")
    # -O0: the program's run takes as long as at -O1 (its time is the model's threads meeting at barriers), its
    # compile about half as long (5.5 against 10 s on CI's kind of machine, seven compiles a run).
    cmd = [args.cxx, "-std=c++20", "-O0", "-pthread", "-I", str(include), "-I", str(args.source_dir)]
    # The system's own include folder must not be named again (it would come before the C++ library's).
    cmd += [f"-I{d}" for d in args.gtest_include.split(";") if d and d not in ("/usr/include", "/usr/local/include")]
    cmd += [str(args.source_dir / "tests" / "test_warp_model.cpp"), args.gtest_main_lib, args.gtest_lib, "-o", str(exe)]
    subprocess.run(cmd, check=True)
    return exe


def passes(exe, lanes, failed_output=None):
    """Whether the model's cases at `lanes` pass; where they do not, the run's last lines go to failed_output. The run
    stops at the first failing case: a mutant's cases wait out the model's 2-s barrier timeout, and one failure
    decides."""
    r = subprocess.run([str(exe), f"--gtest_filter=*/{lanes}lanes.*", "--gtest_fail_fast"], capture_output=True,
                       text=True)
    if r.returncode != 0 and failed_output is not None:
        failed_output.extend((r.stdout + r.stderr).splitlines()[-20:])
    return r.returncode == 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--source-dir", type=pathlib.Path, required=True)
    p.add_argument("--cxx", required=True)
    p.add_argument("--gtest-include", default="")
    p.add_argument("--gtest-lib", required=True)
    p.add_argument("--gtest-main-lib", required=True)
    args = p.parse_args()
    original = (args.source_dir / "reduce" / "warp.hpp").read_text()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = pathlib.Path(tmp)
        # The seven programs are compiled side by side (the compiles are what takes time); they run one at a time,
        # so that the model's threads never share the cores with another program's.
        headers = {"original": original}
        for i, (what, text, mutant) in enumerate(MUTATIONS):
            count = original.count(text)
            if count != 1:
                failures.append(f"{what}: '{text}' occurs {count} times in reduce/warp.hpp (expected once)")
            else:
                headers[f"mutant{i}"] = original.replace(text, mutant)
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            built = {name: pool.submit(build, args, text, workdir, name) for name, text in headers.items()}
            exes = {name: future.result() for name, future in built.items()}
        output = []
        if not (passes(exes["original"], 32, output) and passes(exes["original"], 64, output)):
            failures.append("the unmutated header fails the model:\n  " + "\n  ".join(output))
        for i, (what, text, mutant) in enumerate(MUTATIONS):
            if f"mutant{i}" not in exes:
                continue
            exe = exes[f"mutant{i}"]
            at32, at64 = passes(exe, 32), passes(exe, 64)
            print(f"{what}: '{mutant}': 32 lanes {'pass' if at32 else 'FAIL'}, 64 lanes {'pass' if at64 else 'FAIL'}")
            if not at32:
                failures.append(f"{what}: the mutant fails at 32 lanes, where it is the same code")
            if at64:
                failures.append(f"{what}: a literal 32 put back goes unnoticed at 64 lanes")
    for f in failures:
        print("lane_mutations:", f, file=sys.stderr)
    print(f"{len(MUTATIONS)} mutants, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
