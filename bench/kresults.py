"""Reading kbench result files: the one module that knows their schema (docs/results-schema.md).

load(path) returns a Results object whose rows carry their axes as fields (family, variant, mode, dtype, M, N,
K, n, ...) and their rate with its unit, for files of schema version 2 (written by kbench since 0.2) and for the
Google Benchmark files of earlier kbench versions, whose rows are upgraded from their names. Anything else,
or a damaged file, raises ResultsError with one line for the user.
"""
import json
import math
import os
import re
import stat
import sys

SCHEMA = "kbench-results"
SCHEMA_VERSION = 2
RATE_UNITS = ("TFLOP/s", "GB/s", "Gpoints/s")
TIME_UNITS_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
# Context keys of the earlier files that kbench alone wrote (Google Benchmark's own files have neither).
LEGACY_MARKERS = ("binary_images", "cuda_architectures")

# The largest results file read (kbench's default suite writes about 0.5 MB; 20000 rows about 30 MB).
MAX_FILE_BYTES = 256 << 20
# Counts, sizes and leading dimensions: whole numbers up to this (what a 64-bit index holds).
MAX_INT_AXIS = (1 << 63) - 1
INT_AXES = ("M", "N", "K", "lda", "ldb", "ldc", "n", "block")
TEXT_AXES = ("family", "variant", "mode", "dtype", "op", "distribution", "group")
_DIGITS = re.compile(r"[0-9]{1,19}")

# What the upgraded earlier context keys are called in schema 2.
LEGACY_CEILINGS = {
    "ceiling_device_bandwidth_gbs": "device_bandwidth_gbs",
    "ceiling_device_read_bandwidth_gbs": "device_read_bandwidth_gbs",
    "ceiling_fp64_fma_tflops": "fp64_fma_tflops",
    "ceiling_h2d_pinned_gbs": "h2d_pinned_gbs",
    "ceiling_h2d_pageable_gbs": "h2d_pageable_gbs",
    "ceiling_host_elementwise_single_thread_gbs": "host_elementwise_single_thread_gbs",
    "ceiling_host_elementwise_openmp_gbs": "host_elementwise_openmp_gbs",
}


class ResultsError(Exception):
    """A file that is not a kbench results file, or a damaged one. The message is one line: text quoted from the
    file (a ceiling's name, a row's) may hold line breaks and other control characters, which it shows escaped."""

    def __init__(self, message):
        super().__init__("".join(c if c.isprintable() else repr(c)[1:-1] for c in message))


class Row:
    """One row: its axes (None where they do not apply), status, and measurement."""

    AXES = ("family", "variant", "mode", "dtype", "op", "M", "N", "K", "lda", "ldb", "ldc", "alpha", "beta", "n",
            "block", "distribution", "group")

    def __init__(self, name, **fields):
        self.name = name
        for axis in self.AXES:
            setattr(self, axis, fields.get(axis))
        self.anchor = bool(fields.get("anchor", False))
        self.status = fields.get("status", "ok")
        self.error = fields.get("error", "")
        self.median_ms = fields.get("median_ms")
        self.rate = fields.get("rate")
        self.rate_unit = fields.get("rate_unit")
        self.vs_anchor = fields.get("vs_anchor")
        self.of_ceiling = fields.get("of_ceiling")
        self.noise = fields.get("noise")
        self.throttled = bool(fields.get("throttled", False))
        self.extra = fields.get("extra", {})
        self.labels = fields.get("labels", {})

    @property
    def ok(self):
        return self.status == "ok"

    def size(self):
        """The row's size as text: 'MxNxK' for GEMM rows, 'n=N' for reductions and the integral."""
        if self.M is not None:
            return f"{self.M}x{self.N}x{self.K}"
        return f"n={self.n}" if self.n is not None else ""


class Results:
    def __init__(self, path, context, rows):
        self.path = path
        self.context = context
        self.rows = rows

    def label(self):
        ctx = self.context
        return "{} [{}] {}".format(ctx.get("gpu_name", "?"), ctx.get("cuda_architectures", "?"),
                                   ctx.get("git_revision", "?"))

    def ceiling(self, name):
        value = self.context.get("ceilings", {}).get(name)  # checked finite numbers (_ceilings)
        return float(value) if value is not None else None


def _reject_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


def _number(value, what, path):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ResultsError(f"{path}: {what} is not a finite number")
    return float(value)


def _read_json(path):
    """The document of a regular file of at most MAX_FILE_BYTES: a device (/dev/zero), a FIFO or a folder is
    refused before it is opened, a larger file before it is read."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ResultsError(f"cannot read {path}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ResultsError(f"{path}: not a regular file (a device, FIFO, socket or folder)")
    if st.st_size > MAX_FILE_BYTES:
        raise ResultsError(f"{path}: {st.st_size} bytes; a results file is at most {MAX_FILE_BYTES} bytes")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ResultsError(f"{path}: more than {MAX_FILE_BYTES} bytes; a results file is at most that")
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ResultsError(f"cannot read {path}: {e}") from None
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ResultsError(f"{path}: not a kbench results file (JSON nested too deeply)") from None
    except ValueError as e:
        raise ResultsError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise ResultsError(f"{path}: not a kbench results file (the document is not a JSON object)")
    if not isinstance(doc.get("context"), dict) or not isinstance(doc.get("benchmarks"), list):
        raise ResultsError(f"{path}: not a kbench results file (no 'context' object and 'benchmarks' list)")
    return doc


def _checked_axes(fields, name, path):
    """Axes of the types the schema gives them: whole numbers in range, text, or null."""
    for k in INT_AXES:
        v = fields.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_INT_AXIS):
            raise ResultsError(f"{path}: row {name}: {k} is not a whole number from 0 to 2^63-1")
    for k in TEXT_AXES + ("status", "error", "rate_unit"):
        if fields.get(k) is not None and not isinstance(fields[k], str):
            raise ResultsError(f"{path}: row {name}: {k} is not text")
    return fields


def _row_v2(b, path):
    if not isinstance(b, dict) or not isinstance(b.get("name"), str):
        raise ResultsError(f"{path}: a row is not an object with a string 'name'")
    fields = {k: b[k] for k in Row.AXES + ("anchor", "status", "error", "rate_unit", "throttled") if k in b}
    _checked_axes(fields, b["name"], path)
    extra_keys = set(b) - set(Row.AXES) - {"name", "anchor", "status", "error", "real_time", "time_unit", "median_ms",
                                           "min_ms", "max_ms", "stddev_ms", "noise", "noise_met", "repetitions",
                                           "batch", "graph", "blocked", "l2", "rate", "rate_unit", "vs_anchor", "of_ceiling",
                                           "sm_clock_before_mhz", "sm_clock_after_mhz", "throttled", "throttle"}
    if fields.get("status", "ok") == "ok":
        if b.get("time_unit", "ms") != "ms":
            raise ResultsError(f"{path}: row {b['name']}: time_unit {b.get('time_unit')!r}, schema 2 writes ms")
        fields["median_ms"] = _number(b.get("median_ms", b.get("real_time")), f"row {b['name']}: median_ms", path)
        fields["rate"] = _number(b.get("rate"), f"row {b['name']}: rate", path)
        for key in ("vs_anchor", "of_ceiling", "noise"):
            if key in b:
                fields[key] = _number(b[key], f"row {b['name']}: {key}", path)
        fields["extra"] = {k: _number(b[k], f"row {b['name']}: {k}", path) for k in extra_keys
                           if not isinstance(b[k], str)}
        fields["labels"] = {k: b[k] for k in extra_keys if isinstance(b[k], str)}
    return Row(b["name"], **fields)


def _whole(text, name, path):
    """A size in a row's name: ASCII digits only (not '²'), at most 19 of them."""
    if not _DIGITS.fullmatch(text):
        raise ResultsError(f"{path}: row {name[:80]}: size {text[:20]!r} is not a whole number of at most 19 digits")
    return int(text)


def _legacy_axes(name, path):
    """Axes of an earlier kbench row from its name: family/variant/mode-or-type/size."""
    parts = name.split("/")
    axes = {"family": parts[0], "variant": parts[1] if len(parts) > 1 else None}
    last = parts[-1]
    if last.startswith("n="):
        axes["n"] = _whole(last[2:], name, path)
        if len(parts) >= 4:
            axes["dtype"] = parts[2]
        axes["group"] = "/".join(["integral" if parts[0] == "integral" else "reduce", axes.get("dtype", "double"), last])
    elif last.count("x") == 2 and last.replace("x", "").isdigit():
        axes["M"], axes["N"], axes["K"] = (_whole(d, name, path) for d in last.split("x"))
        axes["mode"] = parts[2] if parts[0] == "gemm" and len(parts) == 4 else "device"
        axes["group"] = "gemm/{}/{}".format(axes["mode"], last)
    return axes


def _row_legacy(b, path):
    if not isinstance(b, dict) or not isinstance(b.get("name"), str):
        raise ResultsError(f"{path}: a row is not an object with a string 'name'")
    name = b["name"].split("/iterations:")[0]
    fields = _legacy_axes(name, path)
    fields["anchor"] = fields.get("variant") in ("cublas", "cub")
    error = b.get("error_message") or b.get("skip_message") or ""
    if not isinstance(error, str):
        raise ResultsError(f"{path}: row {name[:80]}: error_message or skip_message is not text")
    if error:
        fields.update(status="failed" if "validation" in error or "error" in error.lower() else "skipped", error=error)
        return Row(name, **fields)
    unit = b.get("time_unit", "ns")
    if not isinstance(unit, str) or unit not in TIME_UNITS_MS:
        raise ResultsError(f"{path}: row {name}: unknown time_unit {unit!r}")
    fields["median_ms"] = _number(b.get("real_time"), f"row {name}: real_time", path) * TIME_UNITS_MS[unit]
    rate_unit = next((r for r in RATE_UNITS if r in b), None)
    if rate_unit is None:
        raise ResultsError(f"{path}: row {name} has no rate (TFLOP/s, GB/s or Gpoints/s): not written by kbench")
    fields.update(rate=_number(b[rate_unit], f"row {name}: {rate_unit}", path), rate_unit=rate_unit)
    for key in ("vs_anchor", "of_ceiling"):
        if key in b:
            fields[key] = _number(b[key], f"row {name}: {key}", path)
    fields["extra"] = {k: _number(b[k], f"row {name}: {k}", path) for k in ("graph_setup_ms", "rel_error") if k in b}
    return Row(name, **fields)


def _legacy_context(ctx, path):
    out = dict(ctx)
    out["ceilings"] = _ceilings({new: ctx[old] for old, new in LEGACY_CEILINGS.items() if old in ctx}, path, text=True)
    for key in ("gpu_name", "cuda_architectures", "git_revision"):
        if key in out:
            out[key] = _text(out[key])
    return out


def _ceilings(ceilings, path, text=False):
    """The measured ceilings: finite non-negative numbers by name (`text`: the earlier files wrote them as text)."""
    if ceilings is None:
        return {}
    if not isinstance(ceilings, dict):
        raise ResultsError(f"{path}: context.ceilings is not an object")
    out = {}
    for name, value in ceilings.items():
        if text and isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise ResultsError(f"{path}: context {name} is not a number") from None
        v = _number(value, f"context.ceilings.{name}", path)
        if v < 0:
            raise ResultsError(f"{path}: context.ceilings.{name} is negative")
        out[name] = v
    return out


def _text(value):
    return value if isinstance(value, str) else "?"


def _context_v2(ctx, path):
    gpu = ctx.get("gpu", {}) if isinstance(ctx.get("gpu"), dict) else {}
    binary = ctx.get("binary", {}) if isinstance(ctx.get("binary"), dict) else {}
    out = dict(ctx)
    out.update(gpu_name=_text(gpu.get("name", "?")), gpu_compute_capability=_text(gpu.get("compute_capability", "?")),
               cuda_architectures=_text(binary.get("cuda_architectures", "?")),
               git_revision=_text(ctx.get("git_revision", "?")))
    out["ceilings"] = _ceilings(ctx.get("ceilings"), path)
    return out


def load(path):
    doc = _read_json(path)
    ctx = doc["context"]
    if doc.get("schema") == SCHEMA:
        version = doc.get("schema_version")
        if isinstance(version, bool) or not isinstance(version, int):
            raise ResultsError(f"{path}: schema_version {version!r} is not a whole number (this reader knows "
                               f"{SCHEMA_VERSION})")
        if version != SCHEMA_VERSION:
            raise ResultsError(f"{path}: schema version {version}; this reader knows {SCHEMA_VERSION}")
        return Results(path, _context_v2(ctx, path), [_row_v2(b, path) for b in doc["benchmarks"]])
    if "schema" in doc or not all(k in ctx for k in ("git_revision",)) or not any(k in ctx for k in LEGACY_MARKERS):
        raise ResultsError(f"{path}: not a kbench results file (written by another program?)")
    return Results(path, _legacy_context(ctx, path), [_row_legacy(b, path) for b in doc["benchmarks"]])


def run_tool(main, argv):
    """Runs a tool's main(argv) -> exit code, turning the failures a user can cause into one line and an exit
    code (2: bad input, 1: a write error such as a closed pipe), never a traceback."""
    prog = sys.argv[0].rsplit("/", 1)[-1]
    try:
        code = main(argv)
        sys.stdout.flush()
        return code
    except ResultsError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _silence_stdout()
        print(f"{prog}: cannot write standard output: the pipe was closed", file=sys.stderr)
        return 1
    except OSError as e:
        _silence_stdout()
        if getattr(e, "filename", None):
            print(f"{prog}: {e.filename}: {e.strerror or e}", file=sys.stderr)
        else:
            print(f"{prog}: cannot write standard output: {e.strerror or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _silence_stdout():
    # After a write error, Python would fail again flushing stdout at exit: point it at /dev/null.
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
