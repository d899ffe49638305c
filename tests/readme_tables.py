#!/usr/bin/env python3
"""Checks that the README's variant tables are what `kbench list <family> --format md` prints.

usage: readme_tables.py KBENCH README.md [--update]

Each table sits between "<!-- kbench list FAMILY --format md -->" and "<!-- end -->". --update rewrites them.
"""
import re
import subprocess
import sys


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--update"):
        sys.exit(__doc__)
    kbench, readme = argv[0], argv[1]
    with open(readme) as f:
        text = f.read()
    status = 0
    for family in ("gemm", "reduce"):
        want = subprocess.run([kbench, "list", family, "--format", "md"], check=True, capture_output=True,
                              text=True).stdout
        pattern = re.compile(r"(<!-- kbench list %s --format md -->\n)(.*?)(<!-- end -->)" % family, re.S)
        m = pattern.search(text)
        if not m:
            print(f"{readme}: no '<!-- kbench list {family} --format md -->' ... '<!-- end -->' block")
            status = 1
            continue
        if m.group(2) != want:
            if len(argv) == 3:
                text = text[:m.start(2)] + want + text[m.end(2):]
                continue
            print(f"{readme}: the {family} table differs from `kbench list {family} --format md`:\n--- README\n"
                  f"{m.group(2)}--- kbench\n{want}(tests/readme_tables.py KBENCH README.md --update rewrites it)")
            status = 1
    if len(argv) == 3:
        with open(readme, "w") as f:
            f.write(text)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
