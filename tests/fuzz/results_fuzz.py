#!/usr/bin/env python3
"""Fuzz target (Hypothesis): the readers of kbench results files (bench/kresults.py) and the tools built on them
(compare.py's table and plots, summarize.py). Documents are generated near the schema (docs/results-schema.md):
schema 2 and the earlier Google Benchmark files, with every field sometimes of the wrong type, out of range, huge,
nested, NaN or text where a number belongs, and rows named with odd sizes. Each must give a result or exit 2 with
one line (ResultsError); any other exception is a finding, which Hypothesis shrinks and prints. Inputs found
once are kept below as @example regression cases.

usage: results_fuzz.py SECONDS   (exit 77, skipped, without Hypothesis: Debian python3-hypothesis)
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
try:
    from hypothesis import HealthCheck, example, given, settings, strategies as st
except ImportError:
    print("results_fuzz: Hypothesis is not installed (Debian: python3-hypothesis); skipped")
    sys.exit(77)

import compare  # noqa: E402
import summarize  # noqa: E402
from kresults import ResultsError, load  # noqa: E402

ROW_KEYS = ["name", "family", "variant", "mode", "dtype", "op", "M", "N", "K", "lda", "ldb", "ldc", "alpha", "beta",
            "n", "block", "distribution", "group", "anchor", "status", "error", "real_time", "time_unit",
            "median_ms", "rate", "rate_unit", "vs_anchor", "of_ceiling", "noise", "throttled", "TFLOP/s", "GB/s",
            "error_message", "skip_message", "graph_setup_ms", "rel_error", "batch", "l2"]
CONTEXT_KEYS = ["gpu", "binary", "git_revision", "date", "ceilings", "cuda_architectures", "binary_images",
                "gpu_name", "ceiling_fp64_fma_tflops", "ceiling_device_read_bandwidth_gbs"]
CEILINGS = ["fp64_fma_tflops", "device_read_bandwidth_gbs", "device_bandwidth_gbs", "int8_gemm_tops",
            "h2d_pinned_gbs"]
NAME_PIECES = ["gemm", "reduce", "integral", "cublas", "dmma", "fast", "cub", "device", "pinned", "double", "int32",
               "n=", "n=abc", "1024", "2^20", "1024x1024x1024", "²x2x2", "x", "/", "$\\frac$", "_", "{", "%",
               "9" * 40, "/iterations:10", ""]

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(1 << 70), max_value=1 << 70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                    st.sampled_from(["ms", "ns", "ok", "failed", "skipped", "TFLOP/s", "GB/s", "device", "double",
                                     "gemm", "reduce", "1e999", "abc", "2"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5),
                                                                                           inner, max_size=3),
                      max_leaves=6)
names = st.lists(st.sampled_from(NAME_PIECES), min_size=1, max_size=5).map("/".join)


@st.composite
def rows(draw):
    keys = draw(st.lists(st.sampled_from(ROW_KEYS), max_size=12, unique=True))
    row = {k: draw(values) for k in keys}
    if draw(st.booleans()):
        row["name"] = draw(names)
    if draw(st.booleans()):  # a plausible measured row, so the readers go past the first check
        row.update(status="ok", median_ms=draw(st.floats(0, 1e3)), rate=draw(st.floats(0, 1e3)),
                   rate_unit=draw(st.sampled_from(["TFLOP/s", "GB/s"])))
    return row


@st.composite
def documents(draw):
    context = {k: draw(values) for k in draw(st.lists(st.sampled_from(CONTEXT_KEYS), max_size=5, unique=True))}
    if draw(st.booleans()):
        context["ceilings"] = {k: draw(values) for k in draw(st.lists(st.sampled_from(CEILINGS), max_size=3,
                                                                       unique=True))}
    doc = {"context": context, "benchmarks": draw(st.lists(rows(), max_size=6))}
    kind = draw(st.sampled_from(["v2", "legacy", "other"]))
    if kind == "v2":
        doc.update(schema="kbench-results", schema_version=draw(st.sampled_from([2, 2, 2, "2", 2.0, True, 3, None])))
    elif kind == "legacy":
        context.setdefault("git_revision", draw(values))
        context.setdefault("binary_images", draw(values))
    return doc


def expect_result_or_one_line(path):
    """Each tool gives output or a ResultsError (exit 2 with one line); nothing else may escape."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            results = load(path)
        except ResultsError as e:
            assert "\n" not in str(e), f"a multi-line message: {e!r}"
            return
        compare.table([(results.label(), results)])
        assert summarize.main([path]) == 0
        compare.figures([(results.label(), results)])


def write(doc, raw):
    fd, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        f.write(raw if raw is not None else json.dumps(doc))
    return path


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(doc=documents(), raw=st.none() | st.text(max_size=40))
@example(doc={"context": {}, "benchmarks": [], "schema": "kbench-results", "schema_version": "2"}, raw=None)
@example(doc={"schema": "kbench-results", "schema_version": 2, "benchmarks": [],
              "context": {"ceilings": {"fp64_fma_tflops": "abc"}}}, raw=None)
@example(doc={"schema": "kbench-results", "schema_version": 2, "benchmarks": [],
              "context": {"ceilings": {"fp64_fma_tflops": 1e999}}}, raw=None)
@example(doc={"schema": "kbench-results", "schema_version": 2, "benchmarks": [],
              "context": {"ceilings": {"\n": None}}}, raw=None)  # a name with a line break, in the message
@example(doc={"context": {"git_revision": "x", "binary_images": 1}, "benchmarks": [
    {"name": "reduce/fast/double/n=abc"}, {"name": "gemm/cublas/device/²x2x2"}]}, raw=None)
@example(doc={"context": {"git_revision": None, "binary_images": None}, "benchmarks": [
    {"name": "", "skip_message": [None]}, {"name": "", "error_message": 1}]}, raw=None)
@example(doc={"context": {"git_revision": "x", "binary_images": 1}, "benchmarks": [
    {"name": "gemm/cublas/device/2x2x2", "time_unit": []}]}, raw=None)
@example(doc=None, raw="[" * 100000 + "]" * 100000)
@example(doc=None, raw='{"context": {}, "benchmarks": [NaN]}')
def check(doc, raw):
    path = write(doc, raw)
    try:
        expect_result_or_one_line(path)
    finally:
        os.unlink(path)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    start, runs = time.monotonic(), 0
    while time.monotonic() - start < seconds:  # Hypothesis counts examples, not time: repeat batches until due
        check()
        runs += 1
    print(f"results_fuzz: {runs} batches of 100 generated documents in {time.monotonic() - start:.1f} s, no finding")
    return 0


if __name__ == "__main__":
    sys.exit(main())
