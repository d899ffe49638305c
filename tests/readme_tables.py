#!/usr/bin/env python3
"""Checks that the README's generated blocks are what they quote: the variant tables are what
`kbench list <family> --format md` prints, and the measured figures are those of the results file they link.

usage: readme_tables.py KBENCH README.md [--update]

Each block sits between "<!-- kbench list FAMILY --format md -->", "<!-- results gemm-device FILE -->" or
"<!-- results ceilings FILE -->" (FILE relative to the README) and "<!-- end -->". --update rewrites them.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from kresults import load  # noqa: E402


def gemm_device_table(path):
    """TFLOP/s (% of cuBLAS in the same run) of every GEMM variant in device mode, by size."""
    results = load(path)
    rows = [r for r in results.rows if r.ok and r.family == "gemm" and r.mode == "device"]
    sizes = list(dict.fromkeys(r.size() for r in rows))
    variants = list(dict.fromkeys(r.variant for r in rows))
    cell = {(r.variant, r.size()): r for r in rows}
    out = ["| variant | " + " | ".join(sizes) + " |", "|---" + "|---:" * len(sizes) + "|"]
    for v in variants:
        cells = []
        for s in sizes:
            r = cell.get((v, s))
            cells.append(f"{r.rate:.4g} ({100 * r.vs_anchor:.1f}%)" if r and r.vs_anchor is not None else "")
        out.append(f"| {v} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def ceilings_text(path):
    """The ceilings sentence: FP64 FMA, device read, elementwise read+write, pinned host-to-device."""
    c = load(path).context["ceilings"]
    return (f"FP64 FMA rate (DFMA chains, {c['fp64_fma_tflops']:.1f} TFLOP/s in that run; cuBLAS and `dmma` exceed it "
            f"on the FP64 tensor cores), device read bandwidth ({c['device_read_bandwidth_gbs']:.0f} GB/s; the "
            f"ceiling for device-input reductions), the elementwise read+write kernel "
            f"({c['device_bandwidth_gbs']:.0f} GB/s), and host-to-device copies (pinned "
            f"{c['h2d_pinned_gbs']:.1f} GB/s: the ceiling for host-input reductions).\n")


GENERATED = {"gemm-device": gemm_device_table, "ceilings": ceilings_text}


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
    base = os.path.dirname(os.path.abspath(readme))
    for m in reversed(list(re.finditer(r"(<!-- results ([a-z-]+) (\S+) -->\n)(.*?)(<!-- end -->)", text, re.S))):
        kind, file = m.group(2), m.group(3)
        if kind not in GENERATED:
            print(f"{readme}: unknown block '{kind}'")
            status = 1
            continue
        want = GENERATED[kind](os.path.join(base, file))
        if m.group(4) != want:
            if len(argv) == 3:
                text = text[:m.start(4)] + want + text[m.end(4):]
                continue
            print(f"{readme}: the {kind} block differs from {file}:\n--- README\n{m.group(4)}--- {file}\n{want}"
                  "(tests/readme_tables.py KBENCH README.md --update rewrites it)")
            status = 1
    if len(argv) == 3:
        with open(readme, "w") as f:
            f.write(text)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
