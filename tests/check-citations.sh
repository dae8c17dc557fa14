#!/bin/sh
# Citations must lead somewhere: every Markdown file (a name ending in .md, with or without a
# path) named in a source file, script, fixture note or document of the repository must be a
# file of the repository, and a citation of a file under docs/ followed by a section ("§N.M" or
# "section N.M", also lists and ranges such as "§4-5, §8.5") must name a heading "N.M" there.
#
# A citation resolves against, in order: the citing file's directory, the repository root, and
# (for a bare name or a relative path) any tracked file whose path ends with it. A path that
# resolves nowhere is accepted only as a file of another repository, when the same sentence
# names that repository (`owner/name` of a known public owner, or a github.com URL), e.g.
# "prometheus/prometheus docs/querying/api.md"; never when it points into the project's notes
# outside the repository (shared/, reference/, /work/). In the reference itself (docs/*.md),
# every `quoted` path that starts with a top-level directory of the repository (`enforcer/x.c`,
# `tests/fixtures/`) must exist too, so that a renamed file cannot leave the reference behind.
# In Markdown files, a link to a heading (a page name or nothing, then `#anchor`) must find it.
# Everything else is one FAIL line with file:line; one PASS line when all citations resolve.
#
# usage: tests/check-citations.sh [TREE]   (TREE defaults to the repository of this script)
set -u
TOP=${1:-$(cd "$(dirname "$0")/.." && pwd)}
exec python3 - "$TOP" <<'EOF'
import os, re, subprocess, sys

top = sys.argv[1]
EXTS = (".c", ".h", ".cc", ".sh", ".py", ".md", ".yaml", ".yml", ".proto", ".txt", ".mk")
NAMES = ("Makefile",)
SKIP = ("fuzz/corpus/", "tests/podres/node_modules/")
# Owners of public repositories the code cites files of (extend when citing a new one).
OWNERS = ("prometheus", "ROCm", "kubernetes", "kubernetes-sigs", "NVIDIA", "torvalds", "grpc",
          "VictoriaMetrics", "containers", "moby", "docker", "silogen", "Syllo", "Umio-Yasuno",
          "flightlessmango", "SebastianM-C", "volcano-sh", "protocolbuffers", "opendatahub-io")
# The project's notes and captures outside the repository: never a public source.
LOCAL = re.compile(r"^(?:\.\./)*(?:shared|reference|work)/")
QUAL = re.compile(r"github\.com/|(?<![\w./-])(?:%s)/[\w.-]+" % "|".join(map(re.escape, OWNERS)))
# Not after "$" or "}": "$TOP/rules/README.md" in a script is a path expression, not a citation.
TOKEN = re.compile(r"(?<![\w./$}-])((?:\.{1,2}/)*(?:[\w.-]+/)*[\w.-]+\.md)(?![\w-])")
NUM = r"\d+(?:\.\d+)*"
SECT = re.compile(r"(?:#[\w-]+)?[`)\]\"']*\s*(?:§\s*|section\s+)(%s(?:\s*(?:,|-|–|and)\s*§?\s*%s)*)"
                  % (NUM, NUM))

try:
    out = subprocess.run(["git", "-C", top, "ls-files", "-z"], capture_output=True, check=True)
    files = [f for f in out.stdout.decode().split("\0") if f]
except (OSError, subprocess.CalledProcessError):
    files = []
    for d, dirs, fs in os.walk(top):
        dirs[:] = [x for x in dirs if x not in (".git", "build", "bin")]
        files += [os.path.relpath(os.path.join(d, f), top) for f in fs]
files = [f for f in files if os.path.isfile(os.path.join(top, f))]
tracked = set(files)


def resolve(cite, src):
    cands = [os.path.normpath(os.path.join(os.path.dirname(src), cite)), os.path.normpath(cite)]
    for c in cands:
        if c in tracked:
            return c
    if not cite.startswith("."):
        for f in sorted(tracked):
            if f == cite or f.endswith("/" + cite):
                return f
    return None


heads = {}


def headings(path):
    if path not in heads:
        h = set()
        with open(os.path.join(top, path), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = re.match(r"#+\s+(%s)[.\s]" % NUM, line)
                if m:
                    h.add(m.group(1))
        heads[path] = h
    return heads[path]


def sentence(lines, i, start, end):
    """The sentence around lines[i][start:end], within its paragraph (comment markers kept)."""
    lo = i
    while lo > 0 and i - lo < 12 and lines[lo - 1].strip(" \t/*#>-"):
        lo -= 1
    hi = i
    while hi + 1 < len(lines) and hi - i < 12 and lines[hi + 1].strip(" \t/*#>-"):
        hi += 1
    before = " ".join(lines[lo:i] + [lines[i][:start]])
    after = " ".join([lines[i][end:]] + lines[i + 1:hi + 1])
    cut = [m.end() for m in re.finditer(r"\.\s", before)]
    before = before[cut[-1]:] if cut else before
    m = re.search(r"\.\s", after)
    return before + " " + (after[:m.start()] if m else after)


TOPDIRS = sorted({f.split("/", 1)[0] for f in files if "/" in f} - {".github"})
CODEPATH = re.compile(r"`((?:%s)/[\w./-]*)`" % "|".join(map(re.escape, TOPDIRS)))
dirs = {os.path.dirname(f) for f in files}
dirs |= {d.rsplit("/", k)[0] for d in list(dirs) for k in range(1, d.count("/") + 1)}

fails = 0
count = 0
cited = set()
for src in files:
    if src.startswith(SKIP) or not (src.endswith(EXTS) or os.path.basename(src) in NAMES):
        continue
    try:
        with open(os.path.join(top, src), encoding="utf-8") as fh:
            lines = fh.read().split("\n")
    except (UnicodeDecodeError, OSError):
        continue
    for i, line in enumerate(lines):
        for m in CODEPATH.finditer(line) if src.startswith("docs/") else ():
            p = m.group(1)
            if p.endswith(".md") or p in tracked or p.rstrip("/") in dirs:
                continue  # .md files are checked below
            if QUAL.search(sentence(lines, i, m.start(1), m.end(1))):
                continue
            print("FAIL: citation %s:%d: '%s' is not a file or directory of the repository"
                  % (src, i + 1, p))
            fails += 1
        for m in TOKEN.finditer(line):
            cite = m.group(1)
            count += 1
            cited.add(src)
            where = "%s:%d" % (src, i + 1)
            path = resolve(cite, src)
            if path is None:
                ctx = sentence(lines, i, m.start(1), m.end(1))
                if "/" in cite and not LOCAL.match(cite) and QUAL.search(ctx):
                    continue  # a file of the public repository the paragraph names
                print("FAIL: citation %s: '%s' is not a file of the repository" % (where, cite))
                fails += 1
                continue
            rest = line[m.end():]
            if not rest.strip() and i + 1 < len(lines):  # "§N" may open the next line
                rest = " " + re.sub(r"^[\s*#/>-]+", "", lines[i + 1])
            s = SECT.match(rest)
            if not s or not path.startswith("docs/"):
                continue
            for num in re.findall(NUM, s.group(1)):
                if num not in headings(path):
                    print("FAIL: citation %s: '%s' has no section %s" % (where, path, num))
                    fails += 1

# Links between the Markdown pages: a link to a page and `#anchor`, or to `#anchor`, must lead
# to a heading of that page, as GitHub makes anchors of headings (lower case, punctuation but
# `-` and `_` dropped, spaces to `-`, a repeated heading numbered -1, -2, ...). A concept is
# defined in one place and linked from the others; a renamed heading must not leave a link
# pointing at nothing.
LINK = re.compile(r"\]\(([^)\s#]*)#([^)\s]+)\)")
slugs = {}


def anchors(path):
    if path not in slugs:
        seen, out, fence = {}, set(), False
        with open(os.path.join(top, path), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lstrip().startswith("```"):
                    fence = not fence
                m = None if fence else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
                if not m:
                    continue
                t = re.sub(r"\[([^]]*)\]\([^)]*\)", r"\1", m.group(1)).lower()
                t = re.sub(r"[^\w\- ]", "", t).replace(" ", "-")
                n = seen.get(t, 0)
                seen[t] = n + 1
                out.add(t if n == 0 else "%s-%d" % (t, n))
        slugs[path] = out
    return slugs[path]


links = 0
for src in files:
    if not src.endswith(".md") or src.startswith(SKIP):
        continue
    with open(os.path.join(top, src), encoding="utf-8", errors="replace") as fh:
        lines = fh.read().split("\n")
    for i, line in enumerate(lines):
        for m in LINK.finditer(line):
            target = os.path.normpath(os.path.join(os.path.dirname(src), m.group(1))) \
                if m.group(1) else src
            if target not in tracked or not target.endswith(".md"):
                continue
            links += 1
            if m.group(2) not in anchors(target):
                print("FAIL: link %s:%d: '%s' has no heading for '#%s'"
                      % (src, i + 1, target, m.group(2)))
                fails += 1

if fails == 0:
    print("PASS: citations (%d citations of .md files in %d files lead to a file and section; "
          "%d links to a heading lead to one)" % (count, len(cited), links))
sys.exit(0)
EOF
