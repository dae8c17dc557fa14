#!/usr/bin/env python3
"""The include graph of the project's own modules: no cycle, and no project header unused.

A module is a `.h` and the `.c`/`.cc` files that implement it: `foo.c` with `foo.h`, and a
`foo_bar.c` without a header of its own with the nearest `foo.h` in its directory (act_kube.c
and act_runtime.c implement functions act.h declares), and a private header `foo_p.h` (chrony's
localp.h: what the files of module foo share and nobody else includes) with `foo.h`. Module A depends on module B when a file
of A includes B's header. A cycle in that graph means neither module can be read, tested or
moved without the other; the layers of docs/code-map.md only hold without one. Every cycle is
one FAIL line naming the modules in order and, for each step, the file and line of the
`#include` that makes it.

The unit tests and the fake servers are read as the compiler reads them: tests/unit/test_x.c is
a program of its own (not a file of test.h's module), their quoted includes are looked for in
the file's directory and then in common/, exporter/, enforcer/ and tests/unit/ (the Makefile's
-I order), and a `.c` a test #includes (the module under test, or a fragment such as promq_ref.c
that uses static parts of the files included before it) is part of its text: the names the
included file uses count as the includer's, and the include itself is used when the rest of that
text names a function, type or variable the included file defines.

A project header is unused in a file that names none of the identifiers the header itself
declares (its macros, types, tags, enumerators, functions and variables; not what it merely
includes): the include is there for nothing, or for something the file should include
directly. The declarations are read from the headers' text, which `make format` keeps in one
layout; the check errs towards "used" (any token of the file counts, forward declarations do
not), so a FAIL line is a real unused include. A file's own header is always allowed.

`--self-test` runs the checker on small synthetic trees (a cycle through two .c files, one
through a module's second file, an unused include, a clean tree, a unit test including .c files
and one including a .c it does not use), so that a check that stopped
finding cycles fails too (run by `make check-includes`, the `includes` suite).

usage: tests/check-includes.py [--self-test] [DIR...]
       (default: common exporter enforcer tests/unit tests/fakes)
"""
import os
import re
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRS = ["common", "exporter", "enforcer", "tests/unit", "tests/fakes"]
# Where a quoted #include is looked for after the including file's own directory: the -I flags
# the Makefile compiles each directory with (any other directory: common/ only).
TEST_SEARCH = ["common", "exporter", "enforcer", "tests/unit"]
SEARCH = {"tests/unit": TEST_SEARCH, "tests/fakes": TEST_SEARCH}
SOURCES = (".c", ".cc", ".h")
# [ \t], not \s: a \s* at the start would match the blank lines before an #include, and the
# line counted for it would be the first of them.
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KEYWORDS = {"struct", "union", "enum", "typedef", "const", "static", "inline", "extern",
            "unsigned", "signed", "volatile", "restrict", "_Noreturn", "__attribute__"}


def strip_code(text):
    """Comments, string and character literals removed; line breaks kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" ")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def header_decls(path, text):
    """The identifiers a header (or an #included .c) declares (not those it only mentions)."""
    base = os.path.splitext(os.path.basename(path))[0]
    code = strip_code(re.sub(r'extern\s*"C"\s*\{', "", text))
    names = set()
    guard = re.search(r"^\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\b", code, re.M)
    for m in re.finditer(r"^\s*#\s*define\s+(\w+)", code, re.M):
        if not guard or m.group(1) != guard.group(1):
            names.add(m.group(1))
    # The C part, preprocessor lines (with their continuations) removed.
    code = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", "", code, flags=re.M)
    for m in re.finditer(r"\b(?:struct|union|enum)\s+(\w+)\s*\{", code):
        names.add(m.group(1))
    for m in re.finditer(r"\benum\b[^{;]*\{([^}]*)\}", code):
        for item in m.group(1).split(","):
            e = IDENT.match(item.strip())
            if e:
                names.add(e.group(0))
    # Top-level statements: bodies of braces are collapsed so that only declarators remain.
    flat, depth = [], 0
    for c in code:
        if c == "{":
            if depth == 0:
                flat.append("{}")
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)  # the } closing an extern "C" block
        elif depth == 0:
            flat.append(c)
    for stmt in re.split(r";|\{\}", "".join(flat)):
        stmt = " ".join(stmt.split())
        if not stmt:
            continue
        if stmt.startswith("typedef"):
            m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", stmt)
            ids = IDENT.findall(re.sub(r"\[[^\]]*\]", "", stmt))
            names.add(m.group(1) if m else ids[-1])
            continue
        m = re.fullmatch(r"(?:struct|union|enum)\s+(\w+)", stmt)
        if m:
            # A forward declaration of the module's own opaque type (`struct expo;` in expo.h)
            # declares it; one of another module's type (`struct ydom_node;` in kinds.h) only
            # lets the header name it.
            if m.group(1) == base or m.group(1).startswith(base + "_"):
                names.add(m.group(1))
            continue
        # A function (the first identifier followed by a parenthesis, outside parentheses),
        # else a variable (the last identifier of the declarator).
        depth, fn = 0, None
        for t in re.finditer(r"\w+\s*\(|\(|\)", stmt):
            s = t.group(0)
            if s == ")":
                depth -= 1
                continue
            if depth == 0 and s != "(" and IDENT.match(s) and s.rstrip("( ") not in KEYWORDS:
                fn = s.rstrip("( ")
                break
            depth += 1
        if fn:
            names.add(fn)
            continue
        ids = [i for i in IDENT.findall(re.sub(r"\[[^\]]*\]|=.*", "", stmt)) if i not in KEYWORDS]
        if ids:
            names.add(ids[-1])
    return names


def scan(top, dirs):
    """{path: text} of every source file under `dirs` of `top` and the directories their
    includes are looked for in."""
    files = {}
    for d in dict.fromkeys(dirs + [s for d in dirs for s in SEARCH.get(d, ["common"])]):
        full = os.path.join(top, d)
        if d not in dirs and not os.path.isdir(full):
            continue
        for name in sorted(os.listdir(full)):
            if name.endswith(SOURCES):
                with open(os.path.join(full, name), encoding="utf-8") as f:
                    files[os.path.join(d, name)] = f.read()
    return files


def module_of(path, files):
    """The module (its header's path without .h) a source file belongs to."""
    stem, _ = os.path.splitext(path)
    d, base = os.path.split(stem)
    if base.startswith("test_") and path.endswith(".c"):
        return stem  # a unit test is a program, not a file of test.h's module
    if path.endswith("_p.h") and stem[:-2] + ".h" in files:
        return stem[:-2]
    parts = base.split("_")
    for k in range(len(parts), 0, -1):
        cand = os.path.join(d, "_".join(parts[:k]))
        if cand + ".h" in files:
            return cand
    return stem


def resolve(path, inc, files):
    """The project file an #include names (same directory, then the search path), or None."""
    d = os.path.dirname(path)
    for where in [d] + SEARCH.get(d, ["common"]):
        cand = os.path.normpath(os.path.join(where, inc))
        if cand in files:
            return cand
    return None


def edges(files):
    """[(from module, to module, file, line, header)] for every project #include."""
    out = []
    for path, text in files.items():
        src = module_of(path, files)
        for m in INCLUDE.finditer(text):
            hdr = resolve(path, m.group(1), files)
            if hdr is None:
                continue
            dst = module_of(hdr, files) if hdr.endswith(".c") else hdr[:-2]
            if dst != src:
                out.append((src, dst, path, text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


def cycles(files, dirs):
    """One FAIL message per strongly connected component of more than one module, one of
    them in `dirs`."""
    graph, where = {}, {}
    for src, dst, path, line, inc in edges(files):
        graph.setdefault(src, set()).add(dst)
        graph.setdefault(dst, set())
        where.setdefault((src, dst), "%s:%d includes %s" % (path, line, inc))
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def strong(v):  # Tarjan, recursive: the graph has tens of nodes
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 and any(os.path.dirname(c) in dirs for c in comp):
                comps.append(set(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    msgs = []
    for comp in comps:
        # One cycle through the component's first module, by breadth-first search.
        start = min(comp)
        prev, queue = {start: None}, [start]
        cyc = None
        while queue and cyc is None:
            v = queue.pop(0)
            for w in sorted(graph[v] & comp):
                if w == start:
                    cyc = [v]
                    while prev[cyc[-1]] is not None:
                        cyc.append(prev[cyc[-1]])
                    cyc = cyc[::-1] + [start]
                    break
                if w not in prev:
                    prev[w] = v
                    queue.append(w)
        steps = "; ".join(where[(a, b)] for a, b in zip(cyc, cyc[1:]))
        more = ""
        if len(comp) > len(cyc) - 1:
            more = "; one of the cycles among %s" % ", ".join(sorted(comp))
        msgs.append("include cycle %s (%s%s)" % (" -> ".join(cyc), steps, more))
    return msgs


def included_c(path, text, files, seen):
    """The .c files `path` #includes, directly or through another included .c."""
    out = []
    for m in INCLUDE.finditer(text):
        inc = resolve(path, m.group(1), files)
        if inc and inc.endswith(".c") and inc not in seen:
            seen.add(inc)
            out += [inc] + included_c(inc, files[inc], files, seen)
    return out


def unused(files, dirs):
    """One FAIL message per project file a file of `dirs` includes without using it."""
    decls, msgs = {}, []
    for path, text in files.items():
        if os.path.dirname(path) not in dirs:
            continue
        # An included .c is part of this file's text: the names it uses are served by this
        # file's includes too (promq_ref.c uses what test_promq.c includes before it).
        names = {p: set(IDENT.findall(strip_code(INCLUDE.sub("", files[p]))))
                 for p in [path] + included_c(path, text, files, {path})}
        for m in INCLUDE.finditer(text):
            hdr = resolve(path, m.group(1), files)
            if hdr is None or os.path.splitext(hdr)[0] == os.path.splitext(path)[0]:
                continue
            if hdr not in decls:
                decls[hdr] = header_decls(hdr, files[hdr])
            # An included .c is not used by its own text.
            used = set().union(*(v for p, v in names.items() if p != hdr))
            if not decls[hdr] & used:
                msgs.append("%s:%d includes %s and uses nothing it declares" %
                            (path, text.count("\n", 0, m.start()) + 1, m.group(1)))
    return msgs


def check(top, dirs):
    dirs = [os.path.normpath(d) for d in dirs]
    files = scan(top, dirs)
    return cycles(files, dirs), unused(files, dirs)


def self_test():
    """Trees the checker must judge right; returns the number of failures."""
    trees = {
        "clean": ({"a.h": "#define A_X 1\n", "a.c": '#include "a.h"\nint a(void);\n',
                   "b.h": "int b(void);\n", "b.c": '#include "a.h"\n#include "b.h"\n'
                   "int b(void) { return A_X; }\n"}, 0, 0),
        "cycle through .c files": ({"a.h": "int a(void);\n", "b.h": "int b(void);\n",
                                    "a.c": '#include "b.h"\nint a(void) { return b(); }\n',
                                    "b.c": '#include "a.h"\nint b(void) { return a(); }\n'}, 1, 0),
        "cycle through a module's second file": (
            {"a.h": "struct a_cfg { int x; };\nint a_kube(void);\n", "a.c": "int q;\n",
             "a_kube.c": '#include "r.h"\nint a_kube(void) { return r_undo(); }\n',
             "r.h": "int r_undo(void);\n",
             "r.c": '#include "a.h"\nint r_undo(void) { struct a_cfg c = {0}; return c.x; }\n'},
            1, 0),
        "private header": ({"a.h": "struct a_cfg { int x; };\nint a_live(void);\n",
                            "a_p.h": '#include "a.h"\nstruct a_state { struct a_cfg c; };\n'
                            "int a_read(struct a_state *s);\n",
                            "a.c": '#include "a.h"\n#include "a_p.h"\n'
                            "int a_read(struct a_state *s) { return s->c.x; }\n",
                            "a_live.c": '#include "a.h"\n#include "a_p.h"\n'
                            "int a_live(void) { struct a_state s = {0}; return a_read(&s); }\n"},
                           0, 0),
        "unused include": ({"a.h": "/* a */\n#ifndef A_H\n#define A_H\nenum a_kind { A_ONE };\n"
                            "typedef int (*a_fn)(void);\n#endif\n",
                            "b.h": "struct a_kind;\nextern int b_count;\n",
                            "b.c": '/* b */\n\n#include "a.h"\nint b_count; /* a_kind A_ONE */\n'},
                           0, 1, "m/b.c:3 includes a.h"),
        # A unit test is a program: fake.h including test.h is no cycle with test_x.c; an
        # included .c counts as used through what the test calls, and its text uses y.h.
        "unit test including .c files": (
            {"test.h": "#define TEST(n) static void n(void)\n",
             "fake.h": '#include "test.h"\n#define FAKE_TEST(n) TEST(n)\nint fake_start(void);\n',
             "x.h": "int x_run(void);\n", "y.h": "int y_get(void);\n",
             "x.c": '#include "x.h"\nstatic int x_step(void) { return 1; }\n'
             "int x_run(void) { return x_step(); }\n",
             "x_ref.c": "static int x_ref_run(void) { return x_step() + y_get(); }\n",
             "test_x.c": '#include "test.h"\n#include "fake.h"\n#include "y.h"\n#include "x.c"\n'
             '#include "x_ref.c"\nTEST(t) { fake_start(); x_ref_run(); }\n'}, 0, 0),
        "unit test including a .c it does not use": (
            {"x.h": "int x_run(void);\n",
             "x.c": '#include "x.h"\nint x_run(void) { return 1; }\n',
             "test_y.c": '#include "x.c"\nint main(void) { return 0; }\n'}, 0, 1),
    }
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (tree, want_cycles, want_unused, *want_msgs) in trees.items():
            top = os.path.join(tmp, name.replace(" ", "_").replace("'", ""))
            os.makedirs(os.path.join(top, "m"))
            for f, text in tree.items():
                with open(os.path.join(top, "m", f), "w", encoding="utf-8") as out:
                    out.write(text)
            cyc, unu = check(top, ["m"])
            ok = len(cyc) == want_cycles and len(unu) == want_unused
            ok = ok and all(any(m.startswith(w) for m in cyc + unu) for w in want_msgs)
            print("%s: self-test %s finds %d cycle(s) and %d unused include(s)%s" %
                  ("PASS" if ok else "FAIL", name, want_cycles, want_unused,
                   "".join(" (%s)" % w for w in want_msgs)))
            for msg in cyc + unu if not ok else []:
                print("  " + msg)
            failures += not ok
    return failures


def main(argv):
    failures = 0
    if argv[:1] == ["--self-test"]:
        failures += self_test()
        argv = argv[1:]
    dirs = argv or DIRS
    cyc, unu = check(TOP, dirs)
    for msg in cyc + unu:
        print("FAIL: " + msg)
    if not cyc:
        print("PASS: no include cycle between the modules of %s" % ", ".join(dirs))
    if not unu:
        print("PASS: no unused project include in %s" % ", ".join(dirs))
    return 1 if failures or cyc or unu else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
