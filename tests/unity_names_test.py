#!/usr/bin/env python3
"""The libraries compile in unity batches (CMakeLists.txt, gpurent_module): a few .cc files of a
module become one translation unit, so a name a file keeps to itself (an anonymous namespace or
`static`) is seen by the files after it in its batch. Two files of a module with the same internal
name either fail to compile together or, worse, quietly overload each other; an internal name that
a header also declares can take a call meant for the header's function. This check refuses both,
whatever the batches happen to be. Files that compile alone (GPURENT_SRC_ALONE in CMakeLists.txt,
and files with a namespace-scope `using namespace` or a `#define`) are left out.

Usage: unity_names_test.py SRC_DIR   (exit 0: clean; 1: clashes, listed)
"""
import os
import re
import sys
from collections import defaultdict

FUNC = re.compile(r"^(?:template\s*<.*>\s*)?(?:[\w:<>,\s\*&\[\]]+?)\s+[*&]*(~?\w+)\s*\(")
VAR = re.compile(r"^(?:static\s+)?(?:inline\s+)?(?:constexpr|const)\s+[^=({]*?\b(\w+)\s*(?:\[[^\]]*\])?\s*(?:=|\{)")
TYPE = re.compile(r"^(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)\b(?!\s*;)")
RAW = re.compile(r'R"(\w*)\(')
NOT_DECL = ("return", "if", "for", "while", "switch", "case", "default", "else", "do", "namespace", "}", "#",
            "//", "using namespace", "template <>", "extern")
KEYWORDS = {"operator", "if", "for", "while", "switch", "return", "sizeof", "decltype", "static_assert", "main"}


def declared(line):
    for rx in (TYPE, VAR, FUNC):
        m = rx.match(line)
        if m and m.group(1) not in KEYWORDS:
            return m.group(1)
    return None


def internal_names(path):
    """Names a .cc file declares with internal linkage at its top level (column 0)."""
    names = set()
    anon = 0
    raw_end = None  # the closing delimiter of a raw string literal being skipped
    with open(path, encoding="utf-8") as f:
        for line in f:
            if raw_end:
                if raw_end in line:
                    raw_end = None
                continue
            opened = RAW.findall(line)
            if opened and (")" + opened[-1] + '"') not in line.split('R"' + opened[-1] + "(", 1)[-1]:
                raw_end = ")" + opened[-1] + '"'
            if line.startswith("namespace {"):
                anon += 1
                continue
            if anon and line.startswith("}  // namespace") and "namespace " not in line[len("}  // namespace"):]:
                anon -= 1
                continue
            if not line[:1].strip() or line.startswith(NOT_DECL):
                continue
            if anon or line.startswith("static "):
                name = declared(line.removeprefix("static ").removeprefix("inline "))
                if name:
                    names.add(name)
    return names


def header_functions(src):
    """Function names any header under src/ declares at its top level."""
    names = set()
    for root, _, files in os.walk(src):
        for fn in files:
            if not fn.endswith(".h"):
                continue
            with open(os.path.join(root, fn), encoding="utf-8") as f:
                for line in f:
                    if line[:1].strip() and not line.startswith(NOT_DECL):
                        m = FUNC.match(line.removeprefix("inline ").removeprefix("static "))
                        if m and m.group(1) not in KEYWORDS:
                            names.add(m.group(1))
    return names


def alone_patterns(src):
    """GPURENT_SRC_ALONE from CMakeLists.txt: the files that compile outside the batches."""
    with open(os.path.join(src, "..", "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"set\(GPURENT_SRC_ALONE((?:\s+\"[^\"]*\")+)\)", f.read())
    if not m:
        sys.exit("unity names: no set(GPURENT_SRC_ALONE ...) in CMakeLists.txt")
    return [re.compile(x.replace("\\\\", "\\")) for x in re.findall(r'"([^"]*)"', m.group(1))]


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "src"
    in_headers = header_functions(src)
    alone = alone_patterns(src)
    problems = []
    for module in sorted(os.listdir(src)):
        top = os.path.join(src, module)
        if not os.path.isdir(top):
            continue
        owners = defaultdict(list)
        for root, _, files in os.walk(top):
            for fn in sorted(files):
                if not fn.endswith(".cc") or fn.endswith("_test.cc"):
                    continue
                path = os.path.join(root, fn)
                if any(rx.fullmatch(os.path.relpath(path, src)) for rx in alone):
                    continue  # compiles alone
                with open(path, encoding="utf-8") as f:
                    if any(l.startswith(("using namespace ", "#define ")) for l in f):
                        continue  # compiles alone
                for name in internal_names(path):
                    owners[name].append(os.path.relpath(path, src))
        for name, paths in sorted(owners.items()):
            if len(paths) > 1:
                problems.append(f"{module}: '{name}' is internal to {len(paths)} files: {', '.join(paths)}")
            if name in in_headers:
                problems.append(f"{module}: '{name}' is internal to {paths[0]} and also declared in a header")
    for p in problems:
        print(p)
    print(f"unity names: {len(problems)} clash(es)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
