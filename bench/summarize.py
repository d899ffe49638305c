#!/usr/bin/env python3
"""Summary tables (markdown) from one kbench results file: the ceilings, then GEMM (variant x size), GEMM launch
modes, reductions (variant x type/n) and the integral. Standard library only.

usage: bench/summarize.py RESULTS.json
"""
import json
import sys
from collections import OrderedDict

from kresults import row_error, row_name


def rows(doc):
    for b in doc["benchmarks"]:
        yield row_name(b).split("/"), b, row_error(b)


def cell(b, err, rate):
    if err:
        return "failed" if "validation" in err else err
    text = f"{b[rate]:.4g}"
    if "vs_anchor" in b:
        text += f" ({100 * b['vs_anchor']:.1f}%)"
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


def main(path):
    doc = json.load(open(path))
    ctx = doc["context"]
    print(f"{ctx.get('gpu_name', '?')}, compute capability {ctx.get('gpu_compute_capability', '?')}, "
          f"revision {ctx.get('git_revision', '?')}, {ctx.get('date', '?')}\n")
    ceil = [("device read bandwidth", "ceiling_device_read_bandwidth_gbs", "GB/s"),
            ("elementwise read+write bandwidth", "ceiling_device_bandwidth_gbs", "GB/s"),
            ("FP64 FMA", "ceiling_fp64_fma_tflops", "TFLOP/s"),
            ("host-to-device, pinned", "ceiling_h2d_pinned_gbs", "GB/s"),
            ("host-to-device, pageable", "ceiling_h2d_pageable_gbs", "GB/s"),
            ("host elementwise, 1 thread", "ceiling_host_elementwise_single_thread_gbs", "GB/s"),
            ("host elementwise, OpenMP", "ceiling_host_elementwise_openmp_gbs", "GB/s")]
    if any(k in ctx for _, k, _ in ceil):
        print("| ceiling (measured) | value |\n|---|---:|")
        for label, key, unit in ceil:
            if key in ctx:
                print(f"| {label} | {float(ctx[key]):.4g} {unit} |")
        print()
    gemm, modes, red, integ = OrderedDict(), OrderedDict(), OrderedDict(), OrderedDict()
    gcols, mcols, rcols, icols = [], [], [], []

    def put(grid, cols, row, col, val):
        grid.setdefault(row, {})[col] = val
        if col not in cols:
            cols.append(col)

    for parts, b, err in rows(doc):
        if parts[0] == "gemm" and parts[2] == "device":
            put(gemm, gcols, parts[1], parts[3], cell(b, err, "TFLOP/s"))
        elif parts[0] == "gemm":
            val = "failed" if err else f"{b['real_time']:.4g} ms"
            if not err and "graph_setup_ms" in b:
                val += f" (+{b['graph_setup_ms']:.2g} ms capture)"
            put(modes, mcols, f"{parts[2]} {parts[3]}", parts[1], val)
        elif parts[0] == "host" and parts[1] == "eigen_dgemm":
            put(gemm, gcols, "eigen (host)", parts[2], "failed" if err else f"{b['TFLOP/s']:.3g}")
        elif parts[0] == "reduce" or (parts[0] == "host" and len(parts) == 4):
            put(red, rcols, parts[1] if parts[0] == "reduce" else "host " + parts[1], f"{parts[2]} {parts[3]}",
                cell(b, err, "GB/s"))
        elif parts[0] == "integral":
            val = "failed" if err else f"{b['real_time']:.4g} ms, rel. error {b.get('rel_error', float('nan')):.2g}"
            put(integ, icols, parts[1], f"{parts[2]} {parts[3]}", val)
    print(table("DGEMM, device mode: TFLOP/s (% of cuBLAS)", "variant", gemm, gcols))
    print(table("DGEMM launch modes: median time of the whole sequence", "mode", modes, mcols))
    print(table("Reductions: GB/s (% of CUB)", "variant", red, rcols))
    print(table("Integral: median time and relative error", "variant", integ, icols))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
