#!/usr/bin/env python3
"""Hostile input to every program of the suite: each case must end with its exact exit code (2 bad input,
1 runtime failure such as a write error) within its time, explain itself in one line on stderr (nothing for
the cases that must succeed; CLI11 may add "Run with --help
for usage."), never show a Python traceback, and never run a command smuggled into an argument. None of the
cases needs a GPU: input is checked before a device is opened. Prints the table of cases and outcomes.

usage: hostile_inputs.py KBENCH CHECK_CC PYTHON SOURCE_DIR WORK_DIR
"""
import json
import os
import subprocess
import sys
import time


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def files(work):
    """Damaged and foreign result files."""
    ok_legacy = {"context": {"git_revision": "x", "cuda_architectures": "90", "gpu_name": "G"},
                 "benchmarks": [{"name": "gemm/cublas/device/64x64x64/iterations:1/manual_time", "real_time": 1.0,
                                 "time_unit": "ms", "TFLOP/s": 1.0}]}
    f = {}
    f["foreign"] = write(f"{work}/foreign.json", json.dumps({"context": {"date": "x", "host_name": "h"},
        "benchmarks": [{"name": "BM_x", "real_time": 1500000, "time_unit": "ns"}]}))
    f["array"] = write(f"{work}/array.json", "[1, 2, 3]")
    row = dict(ok_legacy["benchmarks"][0])
    del row["real_time"]
    f["no_real_time"] = write(f"{work}/no_real_time.json", json.dumps(dict(ok_legacy, benchmarks=[row])))
    f["name_not_string"] = write(f"{work}/name.json", json.dumps(dict(ok_legacy, benchmarks=[dict(row, name=7)])))
    f["nan"] = write(f"{work}/nan.json", json.dumps(ok_legacy).replace('"TFLOP/s": 1.0', '"TFLOP/s": NaN'))
    good = write(f"{work}/good.json", json.dumps(ok_legacy))
    f["good"] = good
    f["truncated"] = write(f"{work}/truncated.json", json.dumps(ok_legacy)[:60])
    f["existing_file"] = write(f"{work}/not_a_folder", "x")
    os.makedirs(f"{work}/a_folder", exist_ok=True)
    f["folder"] = f"{work}/a_folder"
    f["deep"] = write(f"{work}/deep.json", "[" * 100000 + "]" * 100000)
    fifo = f"{work}/fifo.json"
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    f["fifo"] = fifo
    dangling = f"{work}/dangling.json"
    if not os.path.lexists(dangling):
        os.symlink(f"{work}/no/such/target.json", dangling)
    f["dangling"] = dangling
    sparse = f"{work}/sparse.json"
    with open(sparse, "w") as s:
        s.truncate(2 << 30)  # 2 GiB of holes: no disk used
    f["sparse"] = sparse
    for key, size in (("n_abc", "n=abc"), ("n_digits", "n=" + "9" * 5000), ("superscript", "\u00b2x2x2")):
        row = dict(ok_legacy["benchmarks"][0], name=f"reduce/fast/double/{size}/iterations:1/manual_time")
        f["legacy_" + key] = write(f"{work}/legacy_{key}.json", json.dumps(dict(ok_legacy, benchmarks=[row])))
    v2_row = {"name": "gemm/v/device/64x64x64", "family": "gemm", "variant": "v", "mode": "device", "M": 64,
              "N": 64, "K": 64, "status": "ok", "median_ms": 1.0, "rate": 1.0, "rate_unit": "TFLOP/s"}
    v2 = {"schema": "kbench-results", "schema_version": 2,
          "context": {"git_revision": "x", "gpu": {"name": "G"}, "ceilings": {"fp64_fma_tflops": 60.0}},
          "benchmarks": [v2_row]}
    def v2_file(key, doc):
        f[key] = write(f"{work}/{key}.json", json.dumps(doc).replace('"INF"', "1e999"))
    v2_file("v2_good", v2)
    v2_file("ceiling_text", dict(v2, context=dict(v2["context"], ceilings={"fp64_fma_tflops": "abc"})))
    v2_file("ceiling_list", dict(v2, context=dict(v2["context"], ceilings={"fp64_fma_tflops": [1]})))
    v2_file("ceiling_inf", dict(v2, context=dict(v2["context"], ceilings={"fp64_fma_tflops": "INF"})))
    v2_file("version_text", dict(v2, schema_version="2"))
    reduce_row = dict(v2_row, name="reduce/v/null/n=1024", family="reduce", dtype=None, n=1024, rate_unit="GB/s")
    for k in ("M", "N", "K", "mode"):
        del reduce_row[k]
    v2_file("dtype_null", dict(v2, benchmarks=[reduce_row]))
    v2_file("rows_20000", dict(v2, benchmarks=[dict(v2_row, name=f"gemm/v{i}/device/64x64x64", variant=f"v{i}")
                                               for i in range(20000)]))
    v2_file("m_text", dict(v2, benchmarks=[dict(v2_row, M="big")]))
    v2_file("m_huge", dict(v2, benchmarks=[dict(v2_row, M=10 ** 400)]))
    v2_file("mathtext", dict(v2, benchmarks=[dict(v2_row, variant="$\\frac$")], context=dict(
        v2["context"], gpu={"name": "$\\frac{1}$"})))
    return f


def fake_cuobjdumps(work):
    """Stand-ins for cuobjdump whose resource dumps are damaged: its output is input like any other."""
    def dump(name, function="_ZN2ks4gemm6kernelEv", arch="90", reg="40", shared="0"):
        path = f"{work}/cuobjdump-{name}"
        write(path, "#!/bin/sh\ncat <<'DUMP'\nFatbin elf code:\n================\n"
                    f"arch = sm_{arch}\nidentifier = /src/gemm/x.cu\n\nResource usage:\n Function {function}:\n"
                    f"  REG:{reg} STACK:0 SHARED:{shared} LOCAL:0\nDUMP\n")
        os.chmod(path, 0o755)
        return path
    return {"ok": dump("ok"), "long": dump("long", function="_ZN2ks4gemm" + "x" * 60000 + "Ev"),
            "reg": dump("reg", reg="99999999999"), "arch": dump("arch", arch="99999999999"),
            "shared": dump("shared", shared="2147483000")}


def cases(kbench, check_cc, python, src, work):
    f = files(work)
    fake = fake_cuobjdumps(work)
    compare = [python, f"{src}/bench/compare.py"]
    summarize = [python, f"{src}/bench/summarize.py"]
    long_pattern = "a" * 100000
    deep = "(" * 20 + "a" + ")" * 20
    pwned = f"{work}/pwned"
    inject = f"x'; touch {pwned}; echo '"
    C = []  # (what, argv, env, expected exit, stdout, at most this many seconds)
    add = lambda what, argv, code, env=None, stdout=None, seconds=60, stderr_lines=1: C.append(
        (what, argv, env or {}, code, stdout, seconds, stderr_lines))
    explode = "(.*)*z"  # exponential in a backtracking engine: std::regex never finished it over the row names
    explode_none = "(.*)*Q"  # the same, matching no row name (they hold no Q)
    add("unknown flag", [kbench, "run", "--bogus"], 2)
    add("unknown suite", [kbench, "run", "--suite", "fft"], 2)
    add("variants matching nothing", [kbench, "run", "--variants", "nope"], 2)
    add("invalid regex", [kbench, "run", "--variants", "("], 2)
    add("100,000-character --variants", [kbench, "run", "--variants", long_pattern], 2)
    add("--variants nested 20 deep", [kbench, "run", "--variants", deep], 2)
    add("empty --variants", [kbench, "run", "--variants", ""], 2)
    add("size 0", [kbench, "run", "--sizes", "0"], 2)
    add("--dist unknown", [kbench, "run", "--suite", "gemm", "--dist", "normal"], 2)
    add("--dist exp:nan", [kbench, "run", "--suite", "gemm", "--dist", "exp:nan"], 2)
    add("--dist pow2 out of range", [kbench, "run", "--suite", "gemm", "--dist", "exp:1,pow2:100000"], 2)
    add("--dist on reductions", [kbench, "run", "--suite", "reduce", "--dist", "exp:1"], 2)
    add("negative size", [kbench, "run", "--suite", "reduce", "--sizes", "-5"], 2)
    add("2^64 elements", [kbench, "run", "--suite", "reduce", "--sizes", "2^64"], 2)
    add("malformed triple", [kbench, "run", "--suite", "gemm", "--sizes", "12x3"], 2)
    add("triple without --suite gemm", [kbench, "run", "--sizes", "64x64x64"], 2)
    add("empty --sizes", [kbench, "run", "--sizes", ""], 2)
    add("empty --types", [kbench, "run", "--types", ""], 2)
    add("empty --mode", [kbench, "run", "--mode", ""], 2)
    add("empty --out", [kbench, "run", "--out", ""], 2)
    add("unknown type", [kbench, "run", "--types", "int16"], 2)
    add("unknown mode", [kbench, "run", "--suite", "gemm", "--mode", "zero-copy"], 2)
    add("--mode with --suite reduce", [kbench, "run", "--suite", "reduce", "--mode", "pinned"], 2)
    add("--types with --suite gemm", [kbench, "run", "--suite", "gemm", "--types", "int32"], 2)
    add("--block with --suite gemm", [kbench, "run", "--suite", "gemm", "--block", "128"], 2)
    add("--block 96", [kbench, "run", "--suite", "reduce", "--block", "96"], 2)
    piped = [kbench, "run", "--suite", "gemm", "--mode", "pinned_pipelined", "--sizes", "4096"]
    add("--devices 0,0", piped + ["--devices", "0,0"], 2)
    add("--devices with 10^4 entries", piped + ["--devices", ",".join(str(i % 8) for i in range(10000))], 2)
    add("--devices 100000", piped + ["--devices", "100000"], 2)
    add("--device-memory 1 (one byte)", piped + ["--device-memory", "1"], 2)
    add("--sizes 1024,1024", [kbench, "run", "--suite", "gemm", "--sizes", "1024,1024"], 2)
    add("--sizes 1024,1024x1024x1024", [kbench, "run", "--suite", "gemm", "--sizes", "1024,1024x1024x1024"], 2)
    add("--sizes 2^20,1048576", [kbench, "run", "--suite", "reduce", "--sizes", "2^20,1048576"], 2)
    add("--mode device,device", [kbench, "run", "--suite", "gemm", "--mode", "device,device"], 2)
    add("--types double,double", [kbench, "run", "--suite", "reduce", "--types", "double,double"], 2)
    add("--repetitions 1.5", [kbench, "run", "--repetitions", "1.5"], 2)
    add("--repetitions 0", [kbench, "run", "--repetitions", "0"], 2)
    add("--device -1", [kbench, "run", "--device", "-1"], 2)
    add("--noise -3", [kbench, "run", "--noise", "-3"], 2)
    add("--noise inf", [kbench, "run", "--noise", "inf"], 2)
    add("--noise 1e400", [kbench, "run", "--noise", "1e400"], 2)
    add("--time-budget abc", [kbench, "run", "--time-budget", "abc"], 2)
    add("--out in a missing folder", [kbench, "run", "--out", f"{work}/no/such/folder/r.json"], 2)
    add("--out naming a folder", [kbench, "run", "--out", f["folder"]], 2)
    for dev in ("/dev/null", "/dev/full", "/dev/stdout"):
        what = f"--out {dev}" + (" (standard output a pipe)" if dev == "/dev/stdout" else "")
        add(what, [kbench, "run", "--out", dev], 2)
    add("--out a FIFO", [kbench, "run", "--out", f["fifo"]], 2)
    add("--out a link to nothing", [kbench, "run", "--out", f["dangling"]], 2)
    add("--benchmark_out", [kbench, "run", "--benchmark_out=x.json"], 2)
    add("--benchmark_repetitions", [kbench, "run", "--benchmark_repetitions=3"], 2)
    add("invalid --benchmark_filter", [kbench, "run", "--benchmark_filter=("], 2)
    add("KS_SEED=abc", [kbench, "run"], 2, {"KS_SEED": "abc"})
    add("KS_SEED=-1", [kbench, "run"], 2, {"KS_SEED": "-1"})
    add("KS_SEED=2^64", [kbench, "run"], 2, {"KS_SEED": "18446744073709551616"})
    add("KS_BENCH_FAULT=(", [kbench, "run"], 2, {"KS_BENCH_FAULT": "("})
    add("--variants (.*)*z", [kbench, "run", "--variants", explode], 2, seconds=5)
    add("--variants (.*)*z --suite reduce", [kbench, "run", "--suite", "reduce", "--variants", explode], 2, seconds=5)
    add("--benchmark_filter=(.*)*Q --benchmark_list_tests",
        [kbench, "run", f"--benchmark_filter={explode_none}", "--benchmark_list_tests"], 2, seconds=5)
    add("--variants with a backreference", [kbench, "run", "--variants", "(a)\\1"], 2)
    add("no subcommand", [kbench], 2)
    add("autotune --sizes 0", [kbench, "autotune", "--sizes", "0"], 2)
    add("autotune --variants", [kbench, "autotune", "--variants", "naive"], 2)
    add("list fft", [kbench, "list", "fft"], 2)
    add("resources --filter (", [kbench, "resources", "--filter", "("], 2)
    add("100,000-character --filter", [kbench, "resources", "--filter", long_pattern], 2)
    add("resources --threads 0", [kbench, "resources", "--threads", "0"], 2)
    add("missing --cuobjdump", [kbench, "resources", "--cuobjdump", "/nonexistent/cuobjdump"], 2)
    add("shell injection in --cuobjdump", [kbench, "resources", "--cuobjdump", inject], 2)
    add("resources --filter (.*)*z", [kbench, "resources", "--filter", explode, "--cuobjdump", fake["ok"]], 0,
        seconds=5, stderr_lines=0)
    add("cuobjdump: a 60 KB kernel name", [kbench, "resources", "--filter", explode, "--cuobjdump", fake["long"]], 0,
        seconds=5, stderr_lines=0)
    add("cuobjdump: REG:99999999999", [kbench, "resources", "--cuobjdump", fake["reg"]], 2)
    add("cuobjdump: arch = sm_99999999999", [kbench, "resources", "--cuobjdump", fake["arch"]], 2)
    add("cuobjdump: SHARED:2147483000", [kbench, "resources", "--cuobjdump", fake["shared"]], 2)
    plan = [kbench, "pipeline", "--h2d", "55", "--tflops", "60", "--sizes"]
    add("pipeline without --h2d", [kbench, "pipeline", "--sizes", "8192", "--tflops", "60"], 2)
    add("pipeline --tflops 0", [kbench, "pipeline", "--sizes", "8192", "--h2d", "55", "--tflops", "0"], 2)
    add("pipeline --tflops 60,x", [kbench, "pipeline", "--sizes", "8192", "--h2d", "55", "--tflops", "60,x"], 2)
    add("pipeline --sizes 0", plan + ["0"], 2)
    add("pipeline --device-memory 1K", plan + ["8192", "--device-memory", "1K"], 2)
    add("pipeline --device-memory 8X", plan + ["8192", "--device-memory", "8X"], 2)
    add("pipeline --gpus 0", plan + ["8192", "--gpus", "0"], 2)
    add("pipeline 370000^3 in 1 GiB (too many tiles)", plan + ["370000", "--device-memory", "1G"], 2)
    add("pipeline --nt 64 --lead 10^6 --chunks 10^6 (a schedule of billions of steps)",
        plan + ["60000", "--nt", "64", "--lead", "1000000", "--chunks", "1000000"], 2, seconds=5)
    add("pipeline 64x64x2147482623 --chunks 2^30", plan + ["64x64x2147482623", "--device-memory", "1024T", "--chunks",
                                                          "1073741824"], 2, seconds=5)
    add("pipeline > /dev/full", plan + ["8192"], 1, stdout="/dev/full")
    add("compare a missing file", [kbench, "compare", f"{work}/missing.json"], 2)
    add("compare another tool's file", compare + [f["foreign"]], 2)
    add("compare a JSON array", compare + [f["array"]], 2)
    add("compare a row without real_time", compare + [f["no_real_time"]], 2)
    add("compare a non-string name", compare + [f["name_not_string"]], 2)
    add("compare NaN", compare + [f["nan"]], 2)
    add("compare a truncated file", compare + [f["truncated"]], 2)
    add("compare --plots onto a file", compare + [f["good"], "--plots", f["existing_file"]], 2)
    add("compare with no file", compare, 2)
    add("compare /dev/zero", compare + ["/dev/zero"], 2, seconds=10)
    add("compare a FIFO", compare + [f["fifo"]], 2, seconds=10)
    add("compare a 2 GiB sparse file", compare + [f["sparse"]], 2, seconds=10)
    add("compare JSON nested 100000 deep", compare + [f["deep"]], 2)
    add("compare two files of 20000 rows (linear, not quadratic)", compare + [f["rows_20000"], f["rows_20000"]], 0,
        seconds=4, stderr_lines=0, stdout="devnull")
    for what, tool, key in (("compare a legacy row n=abc", compare, "legacy_n_abc"),
                            ("summarize a legacy row n=<5000 digits>", summarize, "legacy_n_digits"),
                            ("compare a legacy row 2x2x2 with a superscript 2", compare, "legacy_superscript"),
                            ("summarize a ceiling 'abc'", summarize, "ceiling_text"),
                            ("summarize a ceiling that is a list", summarize, "ceiling_list"),
                            ("summarize a ceiling of 1e999", summarize, "ceiling_inf"),
                            ("summarize schema_version '2' (text)", summarize, "version_text")):
        add(what, tool + [f[key]], 2)
    add("compare --plots, a row whose dtype is null", compare + [f["dtype_null"], "--plots", f"{work}/plots"], 0,
        stderr_lines=None)
    add("compare --plots, M 'big'", compare + [f["m_text"], "--plots", f"{work}/plots"], 2)
    add("compare --plots, M 10^400", compare + [f["m_huge"], "--plots", f"{work}/plots"], 2)
    add("compare --plots, mathtext in the GPU and variant names", compare + [f["mathtext"], "--plots", f"{work}/plots"],
        0, stderr_lines=None)
    add("KS_PYTHON=/bin/false kbench compare", [kbench, "compare", f["v2_good"]], 2, {"KS_PYTHON": "/bin/false"})
    add("KS_PYTHON missing", [kbench, "compare", f["v2_good"]], 2, {"KS_PYTHON": f"{work}/no-such-python"})
    add("summarize with no argument", summarize, 2)
    add("summarize --bogus", summarize + ["--bogus"], 2)
    add("summarize a truncated file", summarize + [f["truncated"]], 2)
    add("summarize another tool's file", summarize + [f["foreign"]], 2)
    add("check_cc unknown flag", [check_cc, "--bogus"], 2)
    add("check_cc --all --device 1", [check_cc, "--all", "--device", "1"], 2)
    add("check_cc --device -1", [check_cc, "--device", "-1"], 2)
    add("kbench list > /dev/full", [kbench, "list"], 1, stdout="/dev/full")
    add("kbench --version > /dev/full", [kbench, "--version"], 1, stdout="/dev/full")
    add("check_cc --version > /dev/full", [check_cc, "--version"], 1, stdout="/dev/full")
    add("compare into a closed pipe", compare + [f["good"]], 1, stdout="closed-pipe")
    add("summarize > /dev/full", summarize + [f["good"]], 1, stdout="/dev/full")
    return C, pwned


def run_case(argv, env, stdout, seconds):
    full_env = dict(os.environ, **env)
    read_end = None
    if stdout == "/dev/full":
        out = open("/dev/full", "w")
    elif stdout == "devnull":
        out = subprocess.DEVNULL
    elif stdout == "closed-pipe":
        read_end, write_end = os.pipe()
        os.close(read_end)
        out = write_end
    else:
        out = subprocess.PIPE
    try:
        start = time.monotonic()
        try:
            r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE, env=full_env,
                               timeout=seconds, text=True, errors="replace")
        except subprocess.TimeoutExpired:
            return None, f"did not finish in {seconds} s", seconds
        took = time.monotonic() - start
    finally:
        if stdout == "/dev/full":
            out.close()
        elif stdout == "closed-pipe":
            os.close(out)
    return r.returncode, r.stderr, took


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    kbench, check_cc, python, src, work = argv
    os.makedirs(work, exist_ok=True)
    all_cases, pwned = cases(kbench, check_cc, python, src, work)
    if os.path.exists(pwned):
        os.remove(pwned)
    failed = 0
    print(f"{len(all_cases)} hostile inputs\n\n| input | exit | message |\n|---|---:|---|")
    for what, args, env, code, stdout, seconds, stderr_lines in all_cases:
        rc, err, took = run_case(args, env, stdout, seconds)
        lines = [l for l in err.splitlines() if l.strip() and l != "Run with --help for usage."]
        message = lines[0] if lines else ""
        problems = []
        if rc != code:
            problems.append(f"exit {rc}, want {code}")
        if rc is None:
            problems.append(err)
        elif stderr_lines is not None and len(lines) != stderr_lines:
            problems.append(f"{len(lines)} lines on stderr, want {stderr_lines}")
        if "Traceback" in err:
            problems.append("a Python traceback")
        shown = message if len(message) < 160 else message[:157] + "..."
        print(f"| {what} | {rc} | {shown.replace('|', '/')} |" + ("  FAILED: " + "; ".join(problems) if problems else ""))
        failed += bool(problems)
    if os.path.exists(pwned):
        print(f"FAILED: the shell injection created {pwned}")
        failed += 1
    print(f"\n{len(all_cases) - failed} of {len(all_cases)} as expected")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
