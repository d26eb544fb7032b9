"""Every relative link in README.md and docs/*.md leads to a file of the
repository, and every #anchor to a heading of its page (GitHub's rule:
lowercase, punctuation dropped, spaces to hyphens).  Paths written in text
or code spans that climb with ../ must stay inside the repository and
exist too: the docs may not send a reader outside it.

usage: python3 check_doc_links.py SOURCE_DIR"""
import os
import re
import sys

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CLIMB = re.compile(r"(?<![\w./])((?:\.\./)+[\w.\-/]*)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def slug(title):
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link's text only
    title = re.sub(r"[`*_]", "", title).strip().lower()
    return re.sub(r"[^\w\- ]", "", title).replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, found, fence = {}, set(), False
        for line in open(path, encoding="utf-8"):
            if line.startswith("```"):
                fence = not fence
            m = not fence and HEADING.match(line)
            if m:
                s = slug(m.group(1))
                found.add(s if s not in seen else f"{s}-{seen[s]}")
                seen[s] = seen.get(s, 0) + 1
        cache[path] = found
    return cache[path]


def check(root, page):
    problems = []
    base = os.path.dirname(page)
    text = open(page, encoding="utf-8").read()
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # links in code blocks are code
    for target in LINK.findall(prose):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        if path.startswith("/"):
            problems.append(f"{target}: an absolute path")
            continue
        full = os.path.normpath(os.path.join(base, path)) if path else page
        if os.path.commonpath([root, full]) != root:
            problems.append(f"{target}: outside the repository")
        elif not os.path.exists(full):
            problems.append(f"{target}: no such file")
        elif anchor and full.endswith(".md") and anchor not in anchors(full):
            problems.append(f"{target}: no heading #{anchor} in {os.path.relpath(full, root)}")
    for path in CLIMB.findall(text):
        full = os.path.normpath(os.path.join(base, path))
        if os.path.commonpath([root, full]) != root:
            problems.append(f"{path}: outside the repository")
        elif not os.path.exists(full):
            problems.append(f"{path}: no such file")
    return [f"{os.path.relpath(page, root)}: {p}" for p in dict.fromkeys(problems)]


def main():
    root = os.path.realpath(sys.argv[1])
    docs = os.path.join(root, "docs")
    pages = [os.path.join(root, "README.md")]
    pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    problems = [p for page in pages for p in check(root, page)]
    for p in problems:
        print(p)
    print(f"{len(pages)} pages, {len(problems)} broken links")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
