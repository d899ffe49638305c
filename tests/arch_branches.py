#!/usr/bin/env python3
"""Where the device code differs between sm_75 and sm_86: the `asan-host` preset (CI's sanitized build, whose
kernels never run) compiles every CUDA source as sm_75 PTX and only the DGEMM library's (gemm/, but for its two
sm_90a files, whose kernels compile for sm_90a alone) as sm_86 PTX too, on the grounds that no other source's device
code has a path of its own between the two (cp.async and the m8n8k4 DMMA are gemm/'s). This test keeps that true:
it follows each CUDA source's project includes and fails, naming the file and the line, where a source outside
gemm/ reaches an `__CUDA_ARCH__` test that 750 and 860 answer apart.

usage: arch_branches.py SOURCE_DIR
"""
import pathlib
import re
import sys

# `__CUDA_ARCH__ OP NUMBER` (and NUMBER OP __CUDA_ARCH__ is not written in this project).
TEST = re.compile(r"__CUDA_ARCH__\s*(>=|<=|==|!=|>|<)\s*(\d+)")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
OPS = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, "==": lambda a, b: a == b,
       "!=": lambda a, b: a != b, ">": lambda a, b: a > b, "<": lambda a, b: a < b}
SOURCES = ("common", "reduce", "gemm", "bench", "tests", "dropin")


def splits(op, number):
    """Whether the test answers sm_75's device pass (750) and sm_86's (860) differently."""
    return OPS[op](750, number) != OPS[op](860, number)


def branches(text):
    """(line, test) of each test in text that splits sm_75 from sm_86."""
    return [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in TEST.finditer(text)
            if splits(m.group(1), int(m.group(2)))]


def reached(root, path, seen):
    """The project files path includes, itself among them, each once."""
    if path in seen or not path.is_file():
        return
    seen.add(path)
    for name in INCLUDE.findall(path.read_text(errors="replace")):
        for base in (root, path.parent):
            if (base / name).is_file():
                reached(root, (base / name).resolve(), seen)
                break


def self_test():
    assert splits(">=", 800) and splits("<", 800) and splits(">", 750) and splits("<=", 800)
    assert splits("==", 860) and splits("!=", 750)
    assert not splits(">=", 900) and not splits("<", 900) and not splits(">=", 700) and not splits("==", 800)
    assert branches("#if __CUDA_ARCH__ >= 800\n#elif __CUDA_ARCH__ >= 900\n") == [(1, "__CUDA_ARCH__ >= 800")]


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    self_test()
    root = pathlib.Path(argv[0]).resolve()
    problems, gemm_sources = [], 0
    for top in SOURCES:
        for source in sorted((root / top).rglob("*.cu")):
            files = set()
            reached(root, source.resolve(), files)
            found = [(f, line, t) for f in sorted(files) for line, t in branches(f.read_text(errors="replace"))]
            in_gemm = source.relative_to(root).parts[0] == "gemm"
            gemm_sources += in_gemm and bool(found)
            if found and not in_gemm:
                f, line, t = found[0]
                problems.append(f"{source.relative_to(root)} reaches {f.relative_to(root)}:{line} ({t}): its "
                                "sm_86 device code differs from sm_75's, and the asan-host preset compiles only "
                                "gemm/'s for sm_86 (KS_GEMM_CUDA_ARCHITECTURES)")
    for p in problems:
        print("arch_branches:", p, file=sys.stderr)
    print(f"{gemm_sources} gemm/ sources with paths of their own between sm_75 and sm_86; {len(problems)} elsewhere")
    # gemm/ has such paths (cp.async, the m8n8k4 DMMA): finding none means the scan no longer sees them.
    if gemm_sources == 0:
        print("arch_branches: no gemm/ source has a path between sm_75 and sm_86: the scan is broken", file=sys.stderr)
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
