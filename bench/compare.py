#!/usr/bin/env python3
"""Compare kbench result files (different GPUs, architectures or builds).

usage: bench/compare.py A.json B.json ... [--plots DIR]

Prints a markdown table: one row per benchmark row, one column per file (rate, % of its anchor, % of its
ceiling, each measured in that file's own run). With --plots, writes PNG and SVG plots to DIR: TFLOP/s against
size per GEMM variant (cuBLAS dashed), and GB/s against n per reduction type (CUB dashed, the measured read
ceiling dotted). The table needs only the standard library; plots need matplotlib, and without it the script
says so and still prints the table.
"""
import argparse
import json
import os
import sys
from collections import OrderedDict

from kresults import row_error, row_name

RATES = ("TFLOP/s", "GB/s", "Gpoints/s")


def load(path):
    with open(path) as f:
        doc = json.load(f)
    ctx = doc.get("context", {})
    label = "{} [{}] {}".format(ctx.get("gpu_name", "?"), ctx.get("cuda_architectures", "?"),
                                ctx.get("git_revision", "?"))
    rows = OrderedDict()
    for b in doc.get("benchmarks", []):
        rows[row_name(b)] = b
    return label, ctx, rows


def describe(b):
    err = row_error(b)
    if err:
        return "failed" if "validation" in err else err
    rate = next((r for r in RATES if r in b), None)
    if rate is None:
        return f"{b['real_time']:.4g} ms"
    text = f"{b[rate]:.4g} {rate}"
    extra = []
    if "vs_anchor" in b:
        extra.append(f"{100 * b['vs_anchor']:.1f}% anchor")
    if "of_ceiling" in b:
        extra.append(f"{100 * b['of_ceiling']:.1f}% ceiling")
    return text + (" (" + ", ".join(extra) + ")" if extra else "")


def table(files):
    labels = [label for label, _, _ in files]
    seen = OrderedDict()
    for _, _, rows in files:
        for name in rows:
            seen[name] = True
    out = ["| row | " + " | ".join(labels) + " |", "|---" + "|---:" * len(labels) + "|"]
    for name in seen:
        cells = [describe(rows[name]) if name in rows else "" for _, _, rows in files]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def size_value(text):
    """'n=1048576' -> 1048576; 'MxNxK' -> (M*N*K)^(1/3), the side of the cube of equal work."""
    dims = [int(d) for d in text.split("=")[-1].split("x")]
    if len(dims) == 3:
        return (dims[0] * dims[1] * dims[2]) ** (1.0 / 3.0)
    return float(dims[0])


def plots(files, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(plots skipped: matplotlib is not installed)", file=sys.stderr)
        return []
    os.makedirs(outdir, exist_ok=True)
    written = []
    # family -> group -> series (variant, file label) -> [(size, rate)]
    figures = OrderedDict()
    for label, ctx, rows in files:
        for name, b in rows.items():
            parts = name.split("/")
            if row_error(b):
                continue
            if parts[0] == "gemm" and parts[2] == "device" and "TFLOP/s" in b:
                fig, series, size, rate = "gemm_device", (parts[1], label), parts[3], b["TFLOP/s"]
            elif parts[0] == "reduce" and "GB/s" in b:
                fig, series, size, rate = "reduce_" + parts[2], (parts[1], label), parts[3], b["GB/s"]
            else:
                continue
            figures.setdefault(fig, OrderedDict()).setdefault(series, []).append((size, rate))
            if fig.startswith("reduce") and "ceiling_device_read_bandwidth_gbs" in ctx:
                figures[fig].setdefault(("read ceiling", label), [])
    for fig, series in figures.items():
        plt.figure(figsize=(12, 5.5))
        plt.gca().set_prop_cycle(color=plt.cm.tab20.colors)
        for (variant, label), points in series.items():
            if variant == "read ceiling":
                ctx = next(c for l, c, _ in files if l == label)
                plt.axhline(float(ctx["ceiling_device_read_bandwidth_gbs"]), linestyle=":", color="gray",
                            label=f"measured read ceiling, {label}")
                continue
            points.sort(key=lambda p: size_value(p[0]))
            anchor = variant in ("cublas", "cub")
            plt.plot([size_value(p[0]) for p in points], [p[1] for p in points], marker="o",
                     linestyle="--" if anchor else "-", linewidth=2.5 if anchor else 1.2,
                     label=f"{variant}, {label}" if len(files) > 1 else variant)
        unit = "TFLOP/s" if fig.startswith("gemm") else "GB/s"
        plt.ylabel(unit)
        plt.xscale("log", base=2)
        plt.xlabel("(M N K)^(1/3), log scale" if fig.startswith("gemm") else "elements, log scale")
        plt.title(fig.replace("_", " "))
        plt.grid(alpha=0.3)
        plt.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        plt.tight_layout()
        for ext in ("png", "svg"):
            path = os.path.join(outdir, f"{fig}.{ext}")
            plt.savefig(path, dpi=110)
            written.append(path)
        plt.close()
    return written


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", help="kbench results (--out) files")
    p.add_argument("--plots", metavar="DIR", help="write PNG and SVG plots into DIR")
    args = p.parse_args(argv)
    files = []
    for path in args.files:
        try:
            files.append(load(path))
        except (OSError, ValueError, KeyError) as e:
            print(f"compare: cannot read {path}: {e}", file=sys.stderr)
            return 2
    # Two runs of one GPU, build and revision would share a label: tell them apart by file name.
    labels = [label for label, _, _ in files]
    files = [(f"{label} ({os.path.basename(path)})" if labels.count(label) > 1 else label, ctx, rows)
             for (label, ctx, rows), path in zip(files, args.files)]
    print(table(files))
    if args.plots:
        for path in plots(files, args.plots):
            print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
