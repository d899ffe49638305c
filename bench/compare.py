#!/usr/bin/env python3
"""Compare kbench result files (different GPUs, architectures or builds).

usage: compare.py A.json B.json ... [--plots DIR]

Prints a markdown table: one row per benchmark row, one column per file (rate, % of its anchor, % of its
ceiling, each measured in that file's own run). With --plots, writes PNG and SVG plots into DIR (created if
missing; an existing file there is refused): TFLOP/s against size per GEMM variant (cuBLAS dashed), and GB/s
against n per reduction type (CUB dashed, the measured read ceiling dotted). The table needs only the standard
library; the plots need matplotlib (Debian: python3-matplotlib). Exit 0, 1 on a write error, 2 on bad input.
"""
import argparse
import os
import sys
from collections import OrderedDict

from kresults import ResultsError, load, run_tool


def describe(row):
    if not row.ok:
        return "failed" if row.status == "failed" else (row.error or row.status)
    text = f"{row.rate:.4g} {row.rate_unit}"
    extra = []
    if row.vs_anchor is not None:
        extra.append(f"{100 * row.vs_anchor:.1f}% anchor")
    if row.of_ceiling is not None:
        extra.append(f"{100 * row.of_ceiling:.1f}% ceiling")
    return text + (" (" + ", ".join(extra) + ")" if extra else "")


def table(files):
    labels = [label for label, _ in files]
    names = OrderedDict()
    for _, results in files:
        for row in results.rows:
            names[row.name] = True
    out = ["| row | " + " | ".join(labels) + " |", "|---" + "|---:" * len(labels) + "|"]
    by_name = [{row.name: row for row in reversed(results.rows)} for _, results in files]  # first of a name wins
    for name in names:
        cells = []
        for rows in by_name:
            row = rows.get(name)
            cells.append(describe(row) if row else "")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def size_value(row):
    """The x axis: n for reductions; (M N K)^(1/3), the side of the cube of equal work, for GEMM; None when the row
    has no size."""
    if None not in (row.M, row.N, row.K):
        return (float(row.M) * row.N * row.K) ** (1.0 / 3.0)
    return float(row.n) if row.n is not None else None


def figures(files):
    """family figure -> series (variant, file label, anchor) -> [(x, rate)]; rows without a size are left out."""
    out = OrderedDict()
    for label, results in files:
        for row in results.rows:
            x = size_value(row)
            if not row.ok or x is None or not x > 0:
                continue
            if row.family == "gemm" and row.mode == "device":
                fig = "gemm_device"
            elif row.family == "reduce":
                fig = "reduce_" + (row.dtype or "unknown")
            else:
                continue
            series = (row.variant or "?", label, row.anchor)
            out.setdefault(fig, OrderedDict()).setdefault(series, []).append((x, row.rate))
    return out


def plain(text):
    """Text from a file (a GPU or variant name) as matplotlib should draw it: a '$' starts no mathtext."""
    return str(text).replace("$", r"\$")


def plots(files, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ResultsError("--plots needs matplotlib, which this Python cannot import "
                           "(Debian/Ubuntu: apt-get install python3-matplotlib; or pip install matplotlib)") from None
    if os.path.exists(outdir) and not os.path.isdir(outdir):
        raise ResultsError(f"--plots {outdir}: exists and is not a folder")
    os.makedirs(outdir, exist_ok=True)
    written = []
    for fig, series in figures(files).items():
        plt.figure(figsize=(12, 5.5))
        plt.gca().set_prop_cycle(color=plt.cm.tab20.colors)
        for (variant, label, anchor), points in series.items():
            points.sort()
            plt.plot([p[0] for p in points], [p[1] for p in points], marker="o", linestyle="--" if anchor else "-",
                     linewidth=2.5 if anchor else 1.2, label=plain(f"{variant}, {label}" if len(files) > 1 else variant))
        if fig.startswith("reduce"):
            for label, results in files:
                ceiling = results.ceiling("device_read_bandwidth_gbs")
                if ceiling:
                    plt.axhline(ceiling, linestyle=":", color="gray", label=plain(f"measured read ceiling, {label}"))
        plt.ylabel("TFLOP/s" if fig.startswith("gemm") else "GB/s")
        plt.xscale("log", base=2)
        plt.xlabel("(M N K)^(1/3), log scale" if fig.startswith("gemm") else "elements, log scale")
        plt.title(plain(fig.replace("_", " ")))
        plt.grid(alpha=0.3)
        plt.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        plt.tight_layout()
        for ext in ("png", "svg"):
            path = os.path.join(outdir, f"{fig}.{ext}")
            plt.savefig(path, dpi=110)
            written.append(path)
        plt.close()
    return written


class Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"{self.prog}: {message} (usage: compare.py A.json [B.json ...] [--plots DIR])", file=sys.stderr)
        sys.exit(2)


def main(argv):
    p = Parser(prog="compare.py", description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", help="kbench results (--out) files")
    p.add_argument("--plots", metavar="DIR", help="write PNG and SVG plots into DIR")
    args = p.parse_args(argv)
    loaded = [load(path) for path in args.files]
    # Two runs of one GPU, build and revision would share a label: tell them apart by file name.
    labels = [r.label() for r in loaded]
    files = [(f"{r.label()} ({os.path.basename(r.path)})" if labels.count(r.label()) > 1 else r.label(), r)
             for r in loaded]
    print(table(files))
    if args.plots:
        for path in plots(files, args.plots):
            print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(main, sys.argv[1:]))
