#!/usr/bin/env python3
"""libtlc.so exports exactly the functions the public headers declare.

usage: check_exports.py LIBTLC_SO CC INCLUDE_DIR

The declared set comes from the headers of INCLUDE_DIR/tlc, preprocessed by
CC as C (static inline helpers excluded: they are not in the library); the
exported set from `nm -D --defined-only`. A function missing TLC_API shows
as declared but not exported, an internal symbol that leaks as exported but
not declared; either fails the test."""
import os
import re
import subprocess
import sys


def declared_functions(cc, include_dir):
    headers = sorted(f for f in os.listdir(os.path.join(include_dir, "tlc")) if f.endswith(".h"))
    tu = "".join(f"#include <tlc/{h}>\n" for h in headers)
    out = subprocess.run([cc, "-std=c11", "-E", "-I", include_dir, "-x", "c", "-"], input=tu, text=True,
                         capture_output=True, check=True).stdout
    # Keep only the text that comes from the public headers (line markers say where each part is from).
    public_dir = os.path.realpath(os.path.join(include_dir, "tlc"))
    text, keep = [], False
    for line in out.splitlines():
        m = re.match(r'# \d+ "([^"]*)"', line)
        if m:
            keep = os.path.dirname(os.path.realpath(m.group(1))) == public_dir
        elif keep:
            text.append(line)
    source = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", " ", "\n".join(text))

    # Top-level declarations: split at ';' outside braces, and after the body of a static inline function.
    chunks, cur, depth = [], [], 0
    for ch in source:
        cur.append(ch)
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0 and "".join(cur).lstrip().startswith("static"):
                chunks.append("".join(cur))
                cur = []
        elif ch == ";" and depth == 0:
            chunks.append("".join(cur))
            cur = []
    names = set()
    for c in chunks:
        c = " ".join(c.split())
        if not c or re.match(r"(typedef|static|enum|struct|union)\b", c) or "(" not in c:
            continue
        m = re.search(r"(\w+)\s*\(", c)
        names.add(m.group(1))
    return names, headers


def exported_symbols(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], text=True, capture_output=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def main():
    lib, cc, include_dir = sys.argv[1:4]
    declared, headers = declared_functions(cc, include_dir)
    exported = exported_symbols(lib)
    ok = True
    for name in sorted(exported - declared):
        print(f"FAIL: {os.path.basename(lib)} exports {name}, which no public header declares")
        ok = False
    for name in sorted(declared - exported):
        print(f"FAIL: {name} is declared in include/tlc but not exported (TLC_API missing?)")
        ok = False
    if len(declared) < 10:
        print(f"FAIL: only {len(declared)} functions found in {', '.join(headers)}: the header scan is broken")
        ok = False
    print(f"exports: {len(exported)} symbols exported, {len(declared)} functions declared in {', '.join(headers)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
