#!/usr/bin/env python3
"""Runs a program and checks its exit code exactly, and optionally what it printed.

usage: expect_exit.py CODE [--stdout REGEX] [--stderr REGEX] [--one-line] [--env NAME=VALUE ...] -- PROGRAM ARGS...

--one-line: the program explained itself in one line on stderr (a second line "Run with --help for usage." is
allowed), and no Python traceback. The program runs from its argument vector, never through a shell.
"""
import argparse
import os
import re
import subprocess
import sys


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    p = argparse.ArgumentParser()
    p.add_argument("code", type=int)
    p.add_argument("--stdout")
    p.add_argument("--stderr")
    p.add_argument("--one-line", action="store_true")
    p.add_argument("--env", action="append", default=[])
    args = p.parse_args(argv[:cut])
    cmd = argv[cut + 1:]
    env = dict(os.environ)
    for kv in args.env:
        k, _, v = kv.partition("=")
        env[k] = v
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace", env=env,
                       timeout=300)
    problems = []
    if r.returncode != args.code:
        problems.append(f"exit code {r.returncode}, want {args.code}")
    if args.stdout and not re.search(args.stdout, r.stdout, re.S):
        problems.append(f"stdout does not match {args.stdout!r}")
    if args.stderr and not re.search(args.stderr, r.stderr, re.S):
        problems.append(f"stderr does not match {args.stderr!r}")
    if args.one_line:
        lines = [l for l in r.stderr.splitlines() if l.strip() and l != "Run with --help for usage."]
        if len(lines) != 1 or "Traceback" in r.stderr:
            problems.append(f"want one line on stderr, got {len(lines)}")
    print(f"$ {' '.join(cmd)}\nexit {r.returncode}\n--- stdout\n{r.stdout[-2000:]}--- stderr\n{r.stderr[-2000:]}")
    if problems:
        print("FAILED: " + "; ".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
