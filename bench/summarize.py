#!/usr/bin/env python3
"""Summary tables (markdown) from one kbench results file: the ceilings, then GEMM (variant x size), GEMM launch
modes, reductions (variant x type/n) and the integral. Standard library only.

usage: summarize.py RESULTS.json
"""
import sys
from collections import OrderedDict

from kresults import load, run_tool

CEILINGS = [("device read bandwidth", "device_read_bandwidth_gbs", "GB/s"),
            ("elementwise read+write bandwidth", "device_bandwidth_gbs", "GB/s"),
            ("FP64 FMA", "fp64_fma_tflops", "TFLOP/s"),
            ("INT8 GEMM (cuBLAS, 8192^3)", "int8_gemm_tops", "TOPS"),
            ("empty kernel per launch, graph batches", "graph_launch_us", "us"),
            ("host-to-device, pinned", "h2d_pinned_gbs", "GB/s"),
            ("host-to-device, pageable", "h2d_pageable_gbs", "GB/s"),
            ("host elementwise, 1 thread", "host_elementwise_single_thread_gbs", "GB/s"),
            ("host elementwise, OpenMP", "host_elementwise_openmp_gbs", "GB/s")]


def cell(row):
    if not row.ok:
        return "failed" if row.status == "failed" else (row.error or row.status)
    text = f"{row.rate:.4g}"
    if row.vs_anchor is not None:
        text += f" ({100 * row.vs_anchor:.1f}%)"
    return text


def table(title, header, grid, cols):
    if not grid:
        return ""
    if len(cols) > 8 and len(grid) < len(cols):  # wide: one row per column instead
        flipped = OrderedDict((c, {r: grid[r].get(c, "") for r in grid}) for c in cols)
        header, grid, cols = "", flipped, list(next(iter(flipped.values())).keys())
    out = [f"**{title}**", "", "| " + " | ".join([header] + cols) + " |", "|---" + "|---:" * len(cols) + "|"]
    for key, vals in grid.items():
        out.append("| " + " | ".join([key] + [vals.get(c, "") for c in cols]) + " |")
    return "\n".join(out) + "\n"


def main(argv):
    if argv in (["--help"], ["-h"]):
        print(__doc__.strip())
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.strip().splitlines()[-1] + " (--help: what it prints)", file=sys.stderr)
        return 2
    results = load(argv[0])
    ctx = results.context
    print(f"{ctx.get('gpu_name', '?')}, compute capability {ctx.get('gpu_compute_capability', '?')}, "
          f"revision {ctx.get('git_revision', '?')}, {ctx.get('date', '?')}\n")
    ceilings = [(label, results.ceiling(key), unit) for label, key, unit in CEILINGS if results.ceiling(key)]
    if ceilings:
        print("| ceiling (measured) | value |\n|---|---:|")
        for label, value, unit in ceilings:
            print(f"| {label} | {value:.4g} {unit} |")
        print()
    grids = {name: (OrderedDict(), []) for name in ("gemm", "modes", "reduce", "integral")}

    def put(which, row_key, col, val):
        grid, cols = grids[which]
        grid.setdefault(row_key, {})[col] = val
        if col not in cols:
            cols.append(col)

    for row in results.rows:
        size = row.size()
        if row.family == "gemm" and row.mode == "device":
            put("gemm", row.variant, size, cell(row))
        elif row.family == "gemm":
            val = f"{row.median_ms:.4g} ms" if row.ok else "failed"
            if row.ok and "graph_setup_ms" in row.extra:
                val += f" (+{row.extra['graph_setup_ms']:.2g} ms capture)"
            put("modes", f"{row.mode} {size}", row.variant, val)
        elif row.family == "host" and row.M is not None:
            put("gemm", "eigen (host)", size, f"{row.rate:.3g}" if row.ok else "failed")
        elif row.family in ("reduce", "host"):
            key = row.variant if row.family == "reduce" else "host " + row.variant
            put("reduce", key, f"{row.dtype} {size}", cell(row))
        elif row.family == "integral":
            val = f"{row.median_ms:.4g} ms, rel. error {row.extra.get('rel_error', float('nan')):.2g}" if row.ok else "failed"
            put("integral", row.variant, f"{row.dtype} {size}", val)
    print(table("DGEMM, device mode: TFLOP/s (% of cuBLAS)", "variant", *grids["gemm"]))
    print(table("DGEMM launch modes: median time of the whole sequence", "mode", *grids["modes"]))
    print(table("Reductions: GB/s (% of CUB)", "variant", *grids["reduce"]))
    print(table("Integral: median time and relative error", "variant", *grids["integral"]))
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(main, sys.argv[1:]))
