#!/usr/bin/env python3
"""Checks that the README's generated blocks are what they quote: the variant tables are what
`kbench list <family> --format md` prints, and the measured figures are those of the results files they link.

usage: readme_tables.py KBENCH README.md [--update]

Each block sits between "<!-- kbench list FAMILY --format md -->" or "<!-- results KIND FILE... -->" (FILEs relative
to the README) and "<!-- end -->". KIND: gemm-device or ceilings (one file); shapes-classes or shapes-rows (one
`--suite shapes` run per GPU, in the table's column order); ozaki (one run per GPU and input distribution).
--update rewrites them.
"""
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from kresults import load  # noqa: E402


def one(paths):
    if len(paths) != 1:
        raise SystemExit(f"this block quotes one results file, not {len(paths)}")
    return paths[0]


def gemm_device_table(paths):
    """TFLOP/s (% of cuBLAS in the same run) of every GEMM variant in device mode, by size."""
    results = load(one(paths))
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


def ceilings_text(paths):
    """The ceilings sentence: FP64 FMA, device read, elementwise read+write, pinned host-to-device."""
    c = load(one(paths)).context["ceilings"]
    return (f"FP64 FMA rate (DFMA chains, {c['fp64_fma_tflops']:.1f} TFLOP/s in that run; cuBLAS and `dmma` exceed it "
            f"on the FP64 tensor cores), device read bandwidth ({c['device_read_bandwidth_gbs']:.0f} GB/s; the "
            f"ceiling for device-input reductions), the elementwise read+write kernel "
            f"({c['device_bandwidth_gbs']:.0f} GB/s), and host-to-device copies (pinned "
            f"{c['h2d_pinned_gbs']:.1f} GB/s: the ceiling for host-input reductions).\n")


def run_name(results):
    """A run's column head: the GPU and the revision (seven hex digits)."""
    return f"{results.context['gpu_name']} ({results.context['git_revision'][:7]})"


def shape_text(r):
    return f"{r.M}^3" if r.M == r.N == r.K else f"{r.M} x {r.N} x {r.K}"


def variant_rows(results, variant):
    return [r for r in results.rows if r.ok and r.variant == variant and r.vs_anchor is not None]


# The sweep's classes (bench/kbench/plan.cpp, kShapeSuite) as the README names them.
SHAPE_CLASSES = {"square": "square (1024^3 to 8192^3)", "rank-k": "rank-k update (K 32 to 512)",
                 "small C, deep K": "small C, deep K (K 16k to 256k)", "few rows": "few rows (8 to 128)",
                 "few columns": "few columns (8 to 128)", "matrix-vector": "matrix-vector (1 row or column)"}


def shapes_classes_table(paths):
    """Per shape class and over all rows of `dmma_tma` in each sweep: the geometric mean of its ratio to cuBLAS and
    its lowest cell; a column per run."""
    runs = [load(p) for p in paths]
    per_run = []
    for results in runs:
        classes = {}
        for r in variant_rows(results, "dmma_tma"):
            classes.setdefault(r.labels.get("shape_class", "?"), []).append(r)
        per_run.append(classes)
    names = list(dict.fromkeys(c for classes in per_run for c in classes))

    def gmean(rows):
        return math.exp(sum(math.log(r.vs_anchor) for r in rows) / len(rows))

    out = ["| class | sizes | " + " | ".join(run_name(r) for r in runs) + " |", "|---|---:" + "|---" * len(runs) + "|"]
    for i, name in enumerate(names):
        cells = []
        for classes in per_run:
            rows = classes.get(name)
            if not rows:
                cells.append("not measured")
                continue
            low = min(rows, key=lambda r: r.vs_anchor)
            lowest = "lowest " if i == 0 else ""
            cells.append(f"{gmean(rows):.3f}, {lowest}{100 * low.vs_anchor:.1f}% ({shape_text(low)})")
        sizes = max(len(classes.get(name, [])) for classes in per_run)
        out.append(f"| {SHAPE_CLASSES.get(name, name)} | {sizes} | " + " | ".join(cells) + " |")
    cells = []
    for classes in per_run:
        rows = [r for rs in classes.values() for r in rs]
        below = sum(1 for r in rows if r.vs_anchor < 1)
        cells.append(f"**{gmean(rows):.3f}** ({below} cells below 100%)")
    total = max(sum(len(rs) for rs in classes.values()) for classes in per_run)
    out.append(f"| all {total} | {total} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def what_ran(r):
    """dmma_tma's path as a table cell: the tile and its schedule, or the skinny kernel's form."""
    path = r.labels.get("dmma_tma_path", "")
    if path.startswith("tma "):
        copies = " after copying the operands it cannot describe" in path
        tile = re.sub(r" after copying the operands.*| \(score.*", "", path[4:])
        swapped = re.search(r"; (.*) in its place \(dmma::tma_store_swap\)", path)  # the rule's TMA-store tile
        tile = swapped.group(1) if swapped else tile
        return tile + "; " + r.labels.get("dmma_tma_schedule", "") + ("; A and B copied first" if copies else "")
    if path.startswith("skinny "):
        return "skinny kernel, " + re.sub(r" \(C of at most.*|, 1 pass| \(S x L\)", "", path[7:])
    return path


def shapes_rows_table(paths):
    """Every size of the sweeps: cuBLAS's time (the samples taken in turn with `dmma_tma`'s, where the run
    interleaved them) and `dmma_tma`'s ratio in each run, and what `dmma_tma` ran in the last."""
    runs = [load(p) for p in paths]
    gpus = [r.context["gpu_name"].replace("NVIDIA ", "").split(" ")[0] for r in runs]
    cells = [{(r.M, r.N, r.K): r for r in variant_rows(results, "dmma_tma")} for results in runs]
    head = "| class | M x N x K | " + " | ".join(f"{g}: cuBLAS ms | {g}: `dmma_tma`" for g in gpus)
    out = [head + f" | what `dmma_tma` ran on the {gpus[-1]} |", "|---|---" + "|---:|---:" * len(runs) + "|---|"]
    for key, last in cells[-1].items():
        row = [last.labels.get("shape_class", "?"), "x".join(map(str, key))]
        for run in cells:
            r = run.get(key)
            if r is None:
                row += ["", ""]
                continue
            anchor = r.extra.get("interleaved_anchor_ms", r.median_ms * r.vs_anchor)  # vs_anchor: anchor / ours
            row += [f"{anchor:.4g}", f"{100 * r.vs_anchor:.1f}%"]
        out.append("| " + " | ".join(row + [what_ran(last)]) + " |")
    return "\n".join(out) + "\n"


def ozaki_table(paths):
    """`ozaki` as a multiple of native cuBLAS's speed (the moduli it took) per size, and the largest sampled errors,
    ours against cuBLAS's; a row per run (GPU and input distribution)."""
    runs = [load(p) for p in paths]
    sizes = sorted({r.M for results in runs for r in variant_rows(results, "ozaki")})
    out = ["| GPU (revision) | data | " + " | ".join(f"{m}^3" for m in sizes) + " | largest error, `ozaki` / cuBLAS |",
           "|---|---" + "|---:" * len(sizes) + "|---|"]
    last = None

    def moduli(r):
        m = r.labels.get("ozaki_moduli", r.extra.get("ozaki_moduli", "?"))
        return f"{m:g}" if isinstance(m, float) else str(m)

    def span(values):
        lo, hi = min(values), max(values)
        return f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}"

    for results in runs:
        rows = {r.M: r for r in variant_rows(results, "ozaki")}
        native = {r.M: r for r in results.rows if r.ok and r.variant == "cublas" and r.M in rows}
        dist = next(iter(rows.values())).distribution
        name = run_name(results)
        data = "uniform" if dist == "uniform" else dist.replace("exp:", "PHI ")
        cells = [f"{rows[m].vs_anchor:.3f}x ({moduli(rows[m])})" if m in rows else "not measured" for m in sizes]
        errors = span([r.extra["max_error_eps_ab"] for r in rows.values()]) + " / " + span(
            [r.extra["max_error_eps_ab"] for r in native.values()])
        out.append(f"| {name if name != last else ''} | {data} | " + " | ".join(cells) + f" | {errors} |")
        last = name
    return "\n".join(out) + "\n"


GENERATED = {"gemm-device": gemm_device_table, "ceilings": ceilings_text, "shapes-classes": shapes_classes_table,
             "shapes-rows": shapes_rows_table, "ozaki": ozaki_table}


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
    for m in reversed(list(re.finditer(r"(<!-- results ([a-z-]+) ([^>]+?) -->\n)(.*?)(<!-- end -->)", text, re.S))):
        kind, file = m.group(2), m.group(3)
        if kind not in GENERATED:
            print(f"{readme}: unknown block '{kind}'")
            status = 1
            continue
        want = GENERATED[kind]([os.path.join(base, f) for f in file.split()])
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
