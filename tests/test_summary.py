#!/usr/bin/env python3
"""What a ctest run checked, per case: reads the JUnit file ctest wrote (--output-junit) and the GoogleTest XML
files the test programs wrote (tests/CMakeLists.txt, ks_add_test: one per program or shard), counts the
GoogleTest programs by their cases and the other ctest tests (scripts, exit-code checks) by themselves, prints
why tests were skipped, one line per reason with the count, the failed cases by name, and last one line:

    tests: N passed, N failed, N skipped

usage: test_summary.py CTEST_JUNIT.xml GTEST_XML_DIR
Exit status: 0, or 2 when the JUnit file cannot be read.
"""
import os
import sys
import xml.etree.ElementTree as ET
from collections import Counter


def reason(output):
    """The reason a skipped ctest test printed: a script's "SKIP: ..." or "not created: ..." line, else its
    last line."""
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    for line in lines:
        if line.startswith(("SKIP:", "not created:")):
            return line
    return lines[-1] if lines else "no reason printed"


def gtest_cases(path):
    """(name, status, reason) of every case in one GoogleTest XML file; status passed, failed or skipped, the
    reason a skip's ("" otherwise)."""
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname', '?')}.{case.get('name', '?')}"
        failure = case.find("failure")
        skipped = case.find("skipped")
        if failure is not None:
            out.append((name, "failed", ""))
        elif skipped is not None or case.get("result") == "skipped":
            msg = (skipped.get("message") if skipped is not None else "") or ""
            # GoogleTest writes "file:line\nreason" (or "file:line: Skipped\nreason"): the reason is the last line.
            lines = [l.strip() for l in msg.splitlines() if l.strip()]
            out.append((name, "skipped", lines[-1] if lines else "no reason printed"))
        else:
            out.append((name, "passed", ""))
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    junit, gtest_dir = argv
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"test_summary: cannot read {junit}: {e}", file=sys.stderr)
        return 2
    counts = Counter()
    skipped = Counter()
    failed = []
    for test in root.iter("testcase"):
        name = test.get("name", "?")
        xml = os.path.join(gtest_dir, name + ".xml")
        if os.path.exists(xml):
            try:
                cases = gtest_cases(xml)
            except ET.ParseError as e:  # a program that crashed mid-write: count the ctest result itself
                cases = None
                print(f"test_summary: {xml}: {e}", file=sys.stderr)
            if cases is not None:
                if test.find("failure") is not None and not any(s == "failed" for _, s, _ in cases):
                    cases.append((name + " (outside its cases: see its output)", "failed", ""))
                for case, status, extra in cases:
                    counts[status] += 1
                    if status == "skipped":
                        skipped[extra] += 1
                    elif status == "failed":
                        failed.append(case)
                continue
        if test.find("failure") is not None or test.find("error") is not None:
            counts["failed"] += 1
            failed.append(name)
        elif test.find("skipped") is not None or test.get("status") in ("notrun", "disabled"):
            counts["skipped"] += 1
            skipped[reason(test.findtext("system-out") or "")] += 1
        else:
            counts["passed"] += 1
    for why, n in skipped.most_common():
        print(f"skipped: {n} test{'s' if n != 1 else ''}: {why}")
    for name in failed:
        print(f"failed: {name}")
    print(f"tests: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
