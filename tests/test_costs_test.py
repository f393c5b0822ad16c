#!/usr/bin/env python3
"""Every test tests/test_costs.cmake names is a test of this build, and carries that COST (the file
is read after the tests are defined: CMakeLists.txt). Usage: test_costs_test.py COSTS_FILE CTEST,
run in the build directory (ctest's working directory for it). Exits 77 (skipped) while a test
binary is not built."""
import json
import re
import subprocess
import sys


def main():
    costs_file, ctest = sys.argv[1], sys.argv[2]
    want = {}
    for line in open(costs_file, encoding="utf-8"):
        m = re.match(r"\s*set_tests_properties\((\S+) PROPERTIES COST (\d+)\)\s*$", line)
        if m:
            want[m.group(1)] = float(m.group(2))
        elif line.strip() and not line.lstrip().startswith("#"):
            print(f"test_costs: a line that is neither a comment nor one test's COST: {line.rstrip()}")
            return 1
    if not want:
        print(f"test_costs: {costs_file} names no test")
        return 1
    out = subprocess.run([ctest, "--show-only=json-v1"], capture_output=True, text=True, check=True).stdout
    have = {}
    for t in json.loads(out)["tests"]:
        cost = next((p["value"] for p in t.get("properties", []) if p["name"] == "COST"), None)
        have[t["name"]] = cost
    unbuilt = sorted(n for n in have if n.endswith("_NOT_BUILT"))
    if unbuilt:  # gtest_discover_tests' stand-in for a test binary not built yet
        print(f"test_costs: SKIPPED: {', '.join(unbuilt)}: build every target first (scripts/build.sh)")
        return 77
    bad = 0
    for name, cost in want.items():
        if name not in have:
            print(f"test_costs: {name} is no test of this build (renamed? update {costs_file})")
            bad += 1
        elif have[name] is None or float(have[name]) != cost:
            print(f"test_costs: {name} has COST {have[name]}, not {cost:g} (read before the test was defined?)")
            bad += 1
    print(f"test_costs: {len(want) - bad} of {len(want)} tests carry their COST")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
