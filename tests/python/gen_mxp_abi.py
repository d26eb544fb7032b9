"""Writes mxp_abi.py, a ctypes binding of the public C API, from the headers.

    python3 tests/python/gen_mxp_abi.py include/mxp.h OUT.py

The tests in this folder reach the C functions through it (mxp_ctypes.py
adds their helpers), so no enum value, #define, struct layout or prototype
is copied by hand.  Standard library only; it reads the headers as they are
written here (one declaration per statement, typedef'd enums and structs,
MXP_API before every function), following their #include "..." lines, and
fails on anything it does not understand rather than guess.
"""
import os
import re

# Headers the array tests' ctypes binding does without: mxp/plugin.h is
# the plugin authors' ABI (unions and tables of function pointers), tested
# in C (tests/plugin/) and through the Python package.
SKIPPED = {"mxp/plugin.h"}
import sys

_CTYPES = {
    "void": None, "char": "c_char", "bool": "c_bool", "int": "c_int", "unsigned": "c_uint",
    "unsigned int": "c_uint", "long": "c_long", "unsigned long": "c_ulong", "long long": "c_longlong",
    "unsigned long long": "c_ulonglong", "float": "c_float", "double": "c_double", "size_t": "c_size_t",
    "ptrdiff_t": "c_ssize_t", "int8_t": "c_int8", "int16_t": "c_int16", "int32_t": "c_int32", "int64_t": "c_int64",
    "uint8_t": "c_uint8", "uint16_t": "c_uint16", "uint32_t": "c_uint32", "uint64_t": "c_uint64",
}
# A declaration's base type: qualifiers, then a multi-word C type or one name.
_BASE = r"((?:const |struct )*(?:unsigned long long|unsigned long|unsigned int|long long|unsigned|\w+))"
_LIMITS = {"INT64_MIN": -2**63, "INT64_MAX": 2**63 - 1, "INT32_MIN": -2**31, "INT32_MAX": 2**31 - 1,
           "UINT64_MAX": 2**64 - 1, "SIZE_MAX": 2**64 - 1}


class Headers:
    def __init__(self):
        self.consts = {}      # name -> int or str, in order
        self.enums = {}       # enum type -> [(member, value)]
        self.structs = {}     # struct type -> [(field, ctype expression)]
        self.opaque = set()   # struct types known only by pointer
        self.funptr = set()   # typedefs of function pointers
        self.functions = []   # (name, restype expression, [argtype expressions])
        self.seen = {}        # headers read, in order

    # ---- reading ------------------------------------------------------------

    def read(self, path):
        path = os.path.abspath(path)
        if path in self.seen:
            return
        self.seen[path] = True
        with open(path, encoding="utf-8") as f:
            text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
        text = re.sub(r"//[^\n]*", "", text).replace("\\\n", " ")
        body, depth_cxx = [], []
        for line in text.split("\n"):
            s = line.strip()
            if s.startswith("#"):
                d = s[1:].strip()
                if d.startswith("if"):
                    depth_cxx.append(d == "ifdef __cplusplus")
                elif d.startswith("endif"):
                    depth_cxx.pop()
                elif d.startswith("include") and '"' in d and d.split('"')[1] in SKIPPED:
                    pass
                elif d.startswith("include") and '"' in d and not any(depth_cxx):
                    self.read(os.path.join(os.path.dirname(path), d.split('"')[1]))
                elif d.startswith("define") and not any(depth_cxx):
                    self._define(d[len("define"):].strip())
            elif not any(depth_cxx):
                body.append(line)
        for stmt in _split(" ".join(body), ";"):
            stmt = " ".join(stmt.split())
            if stmt:
                self._statement(stmt)

    def _define(self, d):
        m = re.match(r"(\w+)(\(?)\s*(.*)$", d)
        name, params, value = m.groups()
        if params or not value or not name.startswith("MXP_"):
            return  # function-like macros, guards
        if value.startswith('"'):
            self.consts[name] = value.strip('"')
            return
        try:
            self.consts[name] = self._eval(value)
        except ValueError:
            pass  # MXP_API, compound literals (MXP_SLICE_ALL): nothing a binding needs

    def _eval(self, expr, scope=None):
        e = re.sub(r"\((mxp_\w+|int|unsigned)\)", "", expr)                        # casts
        e = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b", r"\1", e)                # 1ull, 0x1u
        e = re.sub(r"'(.)'", lambda m: str(ord(m.group(1))), e)                    # 'b'
        names = dict(_LIMITS, **self.consts, **(scope or {}))

        def name(m):
            if m.group(0) not in names or not isinstance(names[m.group(0)], int):
                raise ValueError(expr)
            return "(%d)" % names[m.group(0)]
        e = re.sub(r"\b[A-Za-z_]\w*\b", name, e)
        if not re.fullmatch(r"[\s\d()+\-*/<>|&~xXa-fA-F]*", e):
            raise ValueError(expr)
        return int(eval(e, {"__builtins__": {}}))  # digits and operators only, checked above

    def _statement(self, s):
        if s.startswith("typedef enum"):
            m = re.fullmatch(r"typedef enum (\w+) \{(.*)\} (\w+)", s)
            members, value, scope = [], -1, {}
            for item in _split(m.group(2), ","):
                name, _, expr = item.strip().partition("=")
                name = name.strip()
                if not name:
                    continue
                value = self._eval(expr, scope) if expr.strip() else value + 1
                scope[name] = value
                members.append((name, value))
            self.enums[m.group(3)] = members
            self.consts.update(scope)
        elif s.startswith("typedef struct") and "{" in s:
            m = re.fullmatch(r"typedef struct (\w+) \{(.*)\} (\w+)", s)
            fields = []
            for decl in _split(m.group(2), ";"):
                fields += self._fields(decl.strip())
            self.structs[m.group(3)] = fields
        elif s.startswith("typedef struct"):
            self.opaque.add(re.fullmatch(r"typedef struct (\w+) (\w+)", s).group(2))
        elif s.startswith("typedef"):
            self.funptr.add(re.fullmatch(r"typedef .*\(\s*\*\s*(\w+)\s*\)\s*\(.*\)", s).group(1))
        elif s.startswith("MXP_API "):
            m = re.fullmatch(r"MXP_API (.*?)(\w+)\s*\((.*)\)", s)
            args = [] if m.group(3).strip() == "void" else [self._param(p) for p in _split(m.group(3), ",")]
            self.functions.append((m.group(2), self._ctype(m.group(1)), args))
        else:
            raise SyntaxError("gen_mxp_abi: cannot read %r" % s)

    def _fields(self, decl):
        if not decl:
            return []
        fp = re.fullmatch(r".*\(\s*\*\s*(\w+)\s*\)\s*\(.*\)", decl)
        if fp:
            return [(fp.group(1), "c_void_p")]
        m = re.fullmatch(_BASE + r"\s*(.*)", decl)
        out = []
        for d in _split(m.group(2), ","):
            dm = re.fullmatch(r"\s*(\**)\s*(\w+)\s*(?:\[(.*)\])?\s*", d)
            t = self._ctype(m.group(1) + " " + dm.group(1))
            if dm.group(3):
                t = "(%s * %d)" % (t, self._eval(dm.group(3)))
            out.append((dm.group(2), t))
        return out

    def _param(self, p):
        if re.fullmatch(r".*\(\s*\*\s*\w*\s*\)\s*\(.*\)", p.strip()):
            return "c_void_p"  # a callback
        p = re.sub(r"\bconst\b", " ", p)  # (mxp_array *const *grads): ctypes has no const
        m = re.fullmatch(_BASE + r"\s*(\**)\s*\w*\s*", " ".join(p.replace("*", " * ").split()).replace("* ", "*"))
        return self._ctype(m.group(1) + " " + m.group(2))

    def _ctype(self, t):
        stars = t.count("*")
        base = " ".join(w for w in t.replace("*", " ").split() if w not in ("const", "struct"))
        if base in self.structs:
            c = base
        elif base in self.enums:
            c = "c_int"
        elif base in self.funptr:
            c = "c_void_p"  # a callback, passed as an address
        elif base in self.opaque or base == "FILE":
            if not stars:
                raise SyntaxError("gen_mxp_abi: %r by value" % t)
            c, stars = "c_void_p", stars - 1
        elif base in _CTYPES:
            c = _CTYPES[base]
        else:
            raise SyntaxError("gen_mxp_abi: unknown type %r" % t)
        if stars and c in (None, "c_char"):
            c, stars = ("c_void_p" if c is None else "c_char_p"), stars - 1
        for _ in range(stars):
            c = "POINTER(%s)" % c
        return c if c is not None else "None"

    # ---- writing ------------------------------------------------------------

    def module(self, sources):
        out = ['"""A ctypes binding of libmxp, generated from %s and the %d headers it includes'
               % (sources[0], len(sources) - 1), 'by tests/python/gen_mxp_abi.py -- do not edit."""',
               "from ctypes import *  # noqa: F401,F403", "", "# ---- #define and enum values"]
        out += ["%s = %r" % (k, v) for k, v in self.consts.items()]
        out += ["", "# ---- each enum's members, in order", "ENUMS = {"]
        out += ["    %r: %r," % (k, v) for k, v in self.enums.items()]
        out += ["}", "", "# ---- structs"]
        for name, fields in self.structs.items():
            out += ["", "", "class %s(Structure):" % name, "    _fields_ = ["]
            out += ["        (%r, %s)," % f for f in fields]
            out += ["    ]"]
        out += ["", "", "STRUCTS = (%s,)" % ", ".join(self.structs), "", "# ---- functions: (name, restype, argtypes)",
                "FUNCTIONS = ["]
        out += ["    (%r, %s, [%s])," % (n, r, ", ".join(a)) for n, r, a in self.functions]
        out += ["]", "", "",
                "def bind(lib):",
                '    """Sets restype and argtypes of every function of the headers on lib (a CDLL)."""',
                "    for name, restype, argtypes in FUNCTIONS:",
                "        f = getattr(lib, name)",
                "        f.restype, f.argtypes = restype, argtypes",
                "    return lib", ""]
        return "\n".join(out)


def _split(text, sep):
    """text split at sep outside (), [] and {}."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def generate(header, out_path):
    h = Headers()
    h.read(header)
    root = os.path.dirname(os.path.dirname(os.path.abspath(header)))
    text = h.module([os.path.relpath(p, root) for p in h.seen])
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    tmp = out_path + ".tmp%d" % os.getpid()
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, out_path)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: gen_mxp_abi.py include/mxp.h OUT.py")
    generate(sys.argv[1], sys.argv[2])
