"""What the table scripts share (scripts/cnn-table.py,
python/benchmarks/minilm_table.py): a generated block of a document
replaced in place between its <!-- NAME begin --> and <!-- NAME end -->
markers."""
import re
import sys


def replace_block(path, name, text):
    """The text between path's <!-- name begin/end --> markers becomes
    text; a document without them stops the script with a message."""
    with open(path, encoding="utf-8") as f:
        s = f.read()
    begin, end = f"<!-- {name} begin -->", f"<!-- {name} end -->"
    pat = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pat.search(s):
        sys.exit(f"{name}: {path} has no {begin} ... {end} markers")
    with open(path, "w", encoding="utf-8") as f:
        f.write(pat.sub(lambda m: f"{begin}\n{text}\n{end}", s))
