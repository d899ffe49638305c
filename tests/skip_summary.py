#!/usr/bin/env python3
"""Why tests were skipped: reads the JUnit file ctest wrote (--output-junit) and prints one line per reason with
how many tests gave it, so that `./dev.sh test` says what this machine (no GPU, no cuobjdump, ...) could not
check.

usage: skip_summary.py JUNIT.xml
"""
import sys
import xml.etree.ElementTree as ET
from collections import Counter


def reason(output):
    """The reason a skipped test printed: GoogleTest's message after "file:line: Skipped", a script's "SKIP: ..."
    or "not created: ..." line, else its last line."""
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    for i, line in enumerate(lines):
        if line.endswith(": Skipped") and i + 1 < len(lines):
            return lines[i + 1]
        if line.startswith(("SKIP:", "not created:")):
            return line
    return lines[-1] if lines else "no reason printed"


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        root = ET.parse(argv[0]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"skip_summary: cannot read {argv[0]}: {e}", file=sys.stderr)
        return 1
    counts = Counter()
    for case in root.iter("testcase"):
        if case.find("skipped") is not None:
            counts[reason(case.findtext("system-out") or "")] += 1
    for why, n in counts.most_common():
        print(f"skipped: {n} test{'s' if n != 1 else ''}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
