"""The kernel naming rule (docs/adding-a-kernel.md), checked on src/kernels:

- a folder is <dtype>-<op>, or <src>-<dst>-vcvt for a conversion, with
  known dtype words (two joined for a mixed pair: u8s8);
- a file in a folder is <isa>.c with a known ISA, or a header; beside the
  folders only headers and kernel lists (*-list.inc);
- every non-static function defined in src/kernels/<dtype>-<op>/<isa>.c is
  named mxp_<dtype>_<op>[_<params>]__<isa>[_<variant>];
- every such function is an entry of exactly one src/kernels/*list*.inc;
- every list is included (#include "...<list>.inc") by a test under tests/.

One line per offence, naming the file and the rule; exit status 1 if any.
--self-test runs the check on a made-up tree holding each offence once.

usage: python3 check_kernel_names.py SOURCE_DIR
       python3 check_kernel_names.py --self-test"""
import os
import re
import sys
import tempfile

DTYPES = {"f64", "f32", "f16", "bf16", "e4m3", "e5m2", "s8", "u8", "s16", "s32", "x16", "x32", "x64",
          "e3m4", "e4m3ieee", "e4m3b11", "e4m3fnuz", "e5m2fnuz", "e8m0", "e2m3", "e3m2", "e2m1",
          "s4", "u4", "s2", "u2", "s1", "u1"}  # mxp's short names: bits, as s8/u8 (not NumPy's u4 = uint32)
ISAS = {"scalar", "avx2", "avx512f", "avx512bf16", "avx512vnni", "avx512vbmi", "amx"}

# Folders that other parts of issue 22 are still renaming, exempt from every
# check meanwhile.  IT MUST BE EMPTY WHEN ISSUE 22 IS DONE: a folder named
# here that passes the checks (or no longer exists) is itself an offence.
PENDING = set()

WORD = re.compile(r"[a-z][a-z0-9]*$")
IDENT = re.compile(r"[A-Za-z_]\w*")


def is_dtype(word):
    return word in DTYPES or any(word[:i] in DTYPES and word[i:] in DTYPES for i in range(1, len(word)))


def folder_problem(name):
    """Why a folder name breaks the rule, or None."""
    parts = name.split("-")
    if len(parts) < 2 or not all(WORD.match(p) for p in parts):
        return "not <dtype>-<op> (lowercase words joined by '-')"
    if parts[-1] == "vcvt":
        if len(parts) != 3 or not (is_dtype(parts[0]) and is_dtype(parts[1])):
            return "a conversion folder is <src>-<dst>-vcvt, both dtype words"
        return None
    if not is_dtype(parts[0]):
        return "'%s' is no dtype word (%s)" % (parts[0], " ".join(sorted(DTYPES)))
    if len(parts) == 2 and is_dtype(parts[1]):
        return "the op is a dtype word: a conversion is <src>-<dst>-vcvt"
    return None


def strip_c(text):
    """Comments, literals and preprocessor lines blanked; newlines kept."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'",
                  lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    lines, directive = text.split("\n"), False
    for k, line in enumerate(lines):
        if directive or line.lstrip().startswith("#"):
            directive = line.rstrip().endswith("\\")
            lines[k] = ""
    return "\n".join(lines)


def static_macros(texts):
    """Macros whose replacement holds 'static' (MXP_INLINE)."""
    found = set()
    for text in texts:
        for m in re.finditer(r"^\s*#\s*define\s+(\w+)[ \t]+([^\n]*)", text, re.M):
            if re.search(r"\bstatic\b", m.group(2)):
                found.add(m.group(1))
    return found


def definitions(text, statics):
    """(name, is_static, line) of every function defined at file scope."""
    s = strip_c(text)
    found, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        if ch == "{":
            if depth == 0:
                head = re.sub(r"(\s*__attribute__\s*\(\(.*?\)\))+\s*$", "", s[start:i], flags=re.S).rstrip()
                if head.endswith(")") and not re.search(r"\b(typedef|struct|union|enum)\b|=", head):
                    level, k = 0, len(head) - 1
                    while k >= 0:
                        level += {")": 1, "(": -1}.get(head[k], 0)
                        if level == 0:
                            break
                        k -= 1
                    m = re.search(r"(\w+)\s*$", head[:k])
                    if m and m.group(1) != "__attribute__":
                        specifiers = set(IDENT.findall(head[:m.start()]))
                        is_static = "static" in specifiers or bool(specifiers & statics)
                        found.append((m.group(1), is_static, s.count("\n", 0, start + m.start()) + 1))
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif ch == ";" and depth == 0:
            start = i + 1
    return found


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def check(root, pending):
    """The offences, as (path relative to root, rule, detail), and a summary."""
    kdir = os.path.join(root, "src", "kernels")
    rel = lambda *p: os.path.join("src", "kernels", *p)
    offences, held = [], {}  # held: offences of pending folders, by folder
    headers = [read(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(root, "src")) for f in fs
               if f.endswith(".h")]
    statics = static_macros(headers)
    lists = sorted(f for f in os.listdir(kdir) if os.path.isfile(os.path.join(kdir, f)) and f.endswith(".inc"))
    listed = {}
    for lst in lists:
        for name in set(re.findall(r"\bmxp_\w+__\w+\b", strip_c(read(os.path.join(kdir, lst))))):
            listed.setdefault(name, []).append(lst)
    kernels = 0
    for entry in sorted(os.listdir(kdir)):
        path = os.path.join(kdir, entry)
        if not os.path.isdir(path):
            if not (entry.endswith(".h") or (entry.endswith(".inc") and "list" in entry)):
                offences.append((rel(entry), "file", "beside the kernel folders only headers and *-list.inc files"))
            continue
        found = []
        problem = folder_problem(entry)
        if problem:
            found.append((rel(entry), "folder", problem))
        for f in sorted(os.listdir(path)):
            isa = f[:-2] if f.endswith(".c") else None
            if os.path.isdir(os.path.join(path, f)) or not (f.endswith(".h") or isa in ISAS):
                found.append((rel(entry, f), "file", "not <isa>.c (%s) nor a header" % ", ".join(sorted(ISAS))))
            if not f.endswith(".c") or os.path.isdir(os.path.join(path, f)):
                continue
            prefix = "mxp_" + entry.replace("-", "_")
            pattern = re.compile(r"%s(_[a-z0-9]+)*__%s(_[a-z0-9]+)*$" % (re.escape(prefix), re.escape(isa or "")))
            text = read(os.path.join(path, f))
            for name, is_static, line in definitions(text, statics | static_macros([text])):
                if is_static:
                    continue
                kernels += 1
                where = "%s:%d" % (rel(entry, f), line)
                if not pattern.match(name):
                    found.append((where, "function", "%s is not %s[_<params>]__%s[_<variant>] (or make it static)"
                                  % (name, prefix, isa)))
                n = len(listed.get(name, []))
                if n != 1:
                    found.append((where, "list", "%s is in %s src/kernels/*list*.inc" % (name, "no" if n == 0 else
                                  "%d" % n)))
        if entry in pending:
            held[entry] = found
        else:
            offences.extend(found)
    for name in sorted(pending):
        if name not in held:
            offences.append((rel(name), "pending", "named in PENDING but no such folder: remove it from PENDING"))
        elif not held[name]:
            offences.append((rel(name), "pending", "follows the rule now: remove it from PENDING"))
    tests_dir = os.path.join(root, "tests")
    includes = set()
    for d, _, fs in os.walk(tests_dir):
        for f in fs:
            if f.endswith((".c", ".h", ".cc", ".cpp")):
                for m in re.finditer(r"^\s*#\s*include\s*[\"<]([^\">]+\.inc)[\">]", read(os.path.join(d, f)), re.M):
                    includes.add(os.path.basename(m.group(1)))
    for lst in lists:
        if lst not in includes:
            offences.append((rel(lst), "test", "no test under tests/ includes this list (#include \"kernels/%s\")" % lst))
    summary = "%d folders (%d pending), %d lists, %d kernel functions" % (
        sum(os.path.isdir(os.path.join(kdir, e)) for e in os.listdir(kdir)), len(held), len(lists), kernels)
    return offences, summary


def report(offences):
    for path, rule, detail in sorted(offences):
        print("%s: %s: %s" % (path, rule, detail))


def self_test():
    """Each offence once in a made-up tree, and a clean part that gives none."""
    files = {
        "src/kernels/f32-good/avx2.c":
            "#define MY_INLINE static inline\n"
            "MY_INLINE int helper(int x) { return x; }\n"
            "static void other(void) { }\n"
            "/* void mxp_f32_bad__avx2(void) { } */\n"
            "void mxp_f32_good__avx2(void *d, const void *s) { (void)d; (void)s; }\n"
            "void mxp_f32_good_4x8__avx2_sr(void)\n{\n    struct { int a; } v = { 0 };\n    (void)v;\n}\n",
        "src/kernels/f32-good/scalar.c": "void mxp_f32_good__scalar(void) { }\n",
        "src/kernels/f32-good/helpers.h": "static inline int h(void) { return 0; }\n",
        "src/kernels/u8s8-good/avx512vnni.c": "void mxp_u8s8_good__avx512vnni(void) { }\n",
        "src/kernels/f32-bf16-vcvt/avx512bf16.c": "void mxp_f32_bf16_vcvt__avx512bf16(void) { }\n",
        "src/kernels/good-list.inc": "X(mxp_f32_good__avx2) X(mxp_f32_good_4x8__avx2_sr) X(mxp_f32_good__scalar)\n"
                                     "X(mxp_u8s8_good__avx512vnni) X(mxp_f32_bf16_vcvt__avx512bf16)\n",
        "src/kernels/good.h": "",
        "tests/t.c": "#include \"kernels/good-list.inc\"\n#include \"kernels/twice-list.inc\"\n",
        # offences
        "src/kernels/sr-vcvt/avx2.c": "",                       # folder: no dtype
        "src/kernels/f32-vcvt/avx2.c": "",                      # folder: conversion without dst
        "src/kernels/Gemv/avx2.c": "",                          # folder: not lowercase words
        "src/kernels/f32-bf16/avx2.c": "",                      # folder: op is a dtype
        "src/kernels/f32-bad/avx3.c": "",                       # file: unknown isa
        "src/kernels/f32-bad/notes.txt": "",                    # file: not a kernel file
        "src/kernels/f32-bad/sub/x.c": "",                      # file: a folder in a kernel folder
        "src/kernels/stray.c": "",                              # file: beside the folders
        "src/kernels/f32-bad/avx2.c":
            "void mxp_f32_bad__avx2(void) { }\n"                # clean
            "void mxp_f32_other__avx2(void) { }\n"              # function (folder) + list
            "void mxp_f32_bad__avx512f(void) { }\n"             # function (isa) + list
            "int helper(int x) { return x; }\n"                 # function + list
            "void mxp_f32_bad__avx2_twice(void) { }\n",         # list: in two lists
        "src/kernels/bad-list.inc": "X(mxp_f32_bad__avx2) X(mxp_f32_bad__avx2_twice)\n",  # test: not included
        "src/kernels/twice-list.inc": "X(mxp_f32_bad__avx2_twice)\n",
        "src/kernels/x-pending/avx3.c": "int helper(void) { return 0; }\n",  # pending: exempt
        "src/kernels/f32-done/avx2.c": "",                      # pending: follows the rule now
    }
    expected = {
        ("src/kernels/sr-vcvt", "folder"), ("src/kernels/f32-vcvt", "folder"), ("src/kernels/Gemv", "folder"),
        ("src/kernels/f32-bf16", "folder"), ("src/kernels/f32-bad/avx3.c", "file"),
        ("src/kernels/f32-bad/notes.txt", "file"), ("src/kernels/f32-bad/sub", "file"),
        ("src/kernels/stray.c", "file"),
        ("src/kernels/f32-bad/avx2.c:2", "function"), ("src/kernels/f32-bad/avx2.c:2", "list"),
        ("src/kernels/f32-bad/avx2.c:3", "function"), ("src/kernels/f32-bad/avx2.c:3", "list"),
        ("src/kernels/f32-bad/avx2.c:4", "function"), ("src/kernels/f32-bad/avx2.c:4", "list"),
        ("src/kernels/f32-bad/avx2.c:5", "list"), ("src/kernels/bad-list.inc", "test"),
        ("src/kernels/f32-done", "pending"), ("src/kernels/gone", "pending"),
    }
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        offences, summary = check(root, {"x-pending", "f32-done", "gone"})
    got = {(path, rule) for path, rule, _ in offences}
    report(offences)
    ok = got == expected and len(offences) == len(expected)
    for path, rule in sorted(expected - got):
        print("self-test: not caught: %s: %s" % (path, rule))
    for path, rule in sorted(got - expected):
        print("self-test: caught wrongly: %s: %s" % (path, rule))
    print("self-test %s: %d offences expected, %d found (%s)" % ("passed" if ok else "FAILED", len(expected),
                                                               len(offences), summary))
    return 0 if ok else 1


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    offences, summary = check(argv[1], PENDING)
    report(offences)
    print("%s: %d offences against the kernel naming rule (docs/adding-a-kernel.md)" % (summary, len(offences)))
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
