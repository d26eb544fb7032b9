"""Writes corpus.txt and calibration.txt into OUTDIR: the first sentence
of docstrings of CPython 3.11's standard library (PSF License, see
SOURCE.md), one a line: 1,200 for the table and 64 others for W8A8's
calibration.

    python3 python/benchmarks/minilm/make_corpus.py LIBDIR OUTDIR

Standard library only; deterministic for a given library tree (files in
sorted order, docstrings in source order, then a seeded sample)."""
import ast
import os
import random
import re
import sys

SKIP = ("test", "tests", "idlelib", "lib2to3", "site-packages", "dist-packages", "ensurepip", "turtledemo",
        "__pycache__", "config-3.11-x86_64-linux-gnu", "pydoc_data")


def first_sentence(doc):
    text = " ".join(doc.strip().split("\n\n")[0].split())
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    return m.group(1) if m else None


def good(s):
    words = s.split()
    return (6 <= len(words) <= 40 and s[0].isupper() and ">>>" not in s and "`" not in s and "::" not in s
            and s.isascii() and sum(c.isalpha() for c in s) > 0.75 * len(s.replace(" ", "")))


def main(root, outdir):
    seen, out = set(), []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP)
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            try:
                tree = ast.parse(open(os.path.join(d, f), encoding="utf-8").read())
            except (SyntaxError, UnicodeDecodeError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    s = doc and first_sentence(doc)
                    if s and good(s) and s.lower() not in seen:
                        seen.add(s.lower())
                        out.append(s)
    random.Random(27).shuffle(out)
    for name, lines in (("corpus.txt", out[:1200]), ("calibration.txt", out[1200:1264])):
        with open(os.path.join(outdir, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
