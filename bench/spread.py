#!/usr/bin/env python3
"""How much a row's ratio to its anchor moves between runs: for every row present in all the given result files
(separate processes, say), its vs_anchor in each, and their median, min, max, spread ((max - min) / median) and
standard deviation / median.

usage: spread.py [--rows REGEX] [--ratio RATIO] RESULTS.json RESULTS.json ...
--ratio: vs_anchor (default), or, for files of `kbench run --interleave`, vs_anchor_alone (the ratio to the anchor's
own row) or vs_anchor_rounds (the median of the per-round ratios), so that one set of files says whether the
interleaved ratio moves less between processes than the other two.
Reads both result schemas (bench/kresults.py). Exit 0, 2 on bad input, 1 on a write error.
"""
import argparse
import re
import statistics
import sys

from kresults import ResultsError, load, run_tool


class Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"{self.prog}: {message} (usage: spread.py [--rows REGEX] [--ratio RATIO] A.json B.json ...)",
              file=sys.stderr)
        sys.exit(2)


RATIOS = ("vs_anchor", "vs_anchor_alone", "vs_anchor_rounds")


def ratio_of(row, which):
    """The row's ratio to its anchor of the kind asked for; None where the row has none (no anchor, or a file
    written without --interleave for the other two)."""
    return row.vs_anchor if which == "vs_anchor" else row.extra.get(which)


def main(argv):
    p = Parser(prog="spread.py", description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--rows", default=".", help="regular expression over row names")
    p.add_argument("--ratio", default="vs_anchor", choices=RATIOS,
                   help="which ratio to the anchor (default vs_anchor; the others from --interleave files)")
    args = p.parse_args(argv)
    try:
        pattern = re.compile(args.rows)
    except re.error as e:
        raise ResultsError(f"--rows {args.rows!r}: {e}") from None
    runs = [load(f) for f in args.files]
    names = [r.name for r in runs[0].rows if pattern.search(r.name) and not r.anchor]
    print(f"{len(runs)} runs\n\n| row | median {args.ratio} | min | max | spread | sd |\n|---|---:|---:|---:|---:|---:|")
    for name in names:
        ratios = []
        for run in runs:
            row = next((r for r in run.rows if r.name == name), None)
            ratio = None if row is None or not row.ok else ratio_of(row, args.ratio)
            if ratio is None:
                break
            ratios.append(ratio)
        if len(ratios) != len(runs):
            continue
        med = statistics.median(ratios)
        sd = statistics.stdev(ratios) if len(ratios) > 1 else 0.0
        print(f"| {name} | {med:.3f} | {min(ratios):.3f} | {max(ratios):.3f} | {100 * (max(ratios) - min(ratios)) / med:.1f}% "
              f"| {100 * sd / med:.2f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(main, sys.argv[1:]))
