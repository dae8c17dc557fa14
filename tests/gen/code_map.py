#!/usr/bin/env python3
"""docs/code-map.md: one line per source file of the two programs, from its opening comment.

Every C file opens with a comment saying what it owns and why (style rule); the first sentence
of that comment is the file's line in the map, so the map cannot say something the file does
not. The files are listed by layer (LAYERS below), so the map reads bottom up. `--check`
compares the committed map with the tree and fails on a difference, on a file without an
opening comment, or on a file no layer names (run by `make check` as the `code-map` suite);
without it the map is written anew.
"""
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join("docs", "code-map.md")

# The layers, bottom up: each program's files in the order a newcomer reads them, from the
# pieces that know nothing of the others to the program that ties them together. A module is
# named by its stem (`util` is common/util.c and common/util.h). A file that no row names fails
# the check, so a new file gets a place; a row may name a file that does not exist yet (the
# modules other branches are adding), since only files that exist are listed.
LAYERS = [
    ("common", "Shared by both programs", [
        ("Utilities", "allocation, strings, files, logging, time and flag parsing",
         ["util", "slice", "file", "utf8", "log", "dur", "rfc3339", "flags"]),
        ("Formats", "parsers and writers of the formats both programs read or write",
         ["jsonparse", "ydom", "pbwire", "expo"]),
        ("HTTP and sockets", "the client, the server and its configuration, the container API",
         ["httpc", "httpd", "webcfg", "docker"]),
    ]),
    ("exporter", "gpureclaim-exporter", [
        ("Readers and parsers", "pure parsers of kernel and driver files, and rooted readers",
         ["fdio", "sysfs", "attrfd", "fdinfo", "gpu_metrics", "cgroup", "kfdproc"]),
        ("Discovery and sources", "GPUs and partitions, processes, the kubelet, ownership",
         ["gpu", "accum", "procscan", "grpc", "podres", "owners"]),
        ("Collectors", "the collector table, one file per collector, the metric families",
         ["metrics", "collector", "collector_devices", "collector_gpu_metrics",
          "collector_partitions", "collector_ownership", "collector_amdgpu"]),
        ("Program", "flags, start-up order, the HTTP endpoint",
         ["main"]),
    ]),
    ("enforcer", "gpureclaim-enforcer", [
        ("Data model and parsers", "series, label matchers, rules and kinds, metric families, "
         "the formats of Prometheus' answers",
         ["annot", "action", "series", "re2_shim", "match", "promsel", "tz", "kinds", "rules",
          "enfmetrics", "jsonpush", "promjson", "xorchunk", "remoteread", "vmexport"]),
        ("Proof and decision", "pure functions: what the raw samples prove, then keep or reclaim",
         ["reason", "raw", "proof", "exprcov", "decide"]),
        ("Reading Prometheus", "queries, raw samples, the per-cycle fetch, replay over a range",
         ["promq", "rawread", "fetch", "replay_p", "replay", "replay_ahead", "replay_live"]),
        ("Kubernetes and container runtime clients", "API calls, their JSON, pressure, leases",
         ["kube", "kube_json", "pressure", "lease", "perm"]),
        ("Action engine", "notice, wait, re-check, act once; ledger, audit, webhooks, restore",
         ["lifecycle", "ledger", "notice", "keep", "audit", "notify", "act", "act_kube",
          "act_runtime", "restore", "restore_plan", "restore_run"]),
        ("Commands and daemon", "what the commands print, backtest, the run loop, one file per "
         "command behind main.c's command table",
         ["report", "backtest", "btdue", "btlookup", "btreport", "recommend", "recfast", "rechtml",
          "daemon", "cmd", "cmd_flags", "cmd_check", "cmd_plan", "cmd_run", "cmd_backtest",
          "cmd_recommend", "cmd_restore",
          "main"]),
    ]),
]


def first_sentence(path):
    with open(os.path.join(TOP, path), encoding="utf-8") as f:
        text = f.read(8192)
    m = re.match(r"\s*/\*(.*?)\*/", text, re.S)
    if not m:
        return None
    body = " ".join(line.strip().lstrip("*").strip() for line in m.group(1).splitlines())
    body = re.sub(r"\s+", " ", body).strip()
    # The first sentence: up to a full stop followed by a space, outside parentheses.
    depth = 0
    for i, ch in enumerate(body):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "." and depth <= 0 and (i + 1 == len(body) or body[i + 1] == " "):
            return body[: i + 1]
    return body


def files():
    out = subprocess.run(["git", "-C", TOP, "ls-files", "--cached", "--others",
                          "--exclude-standard", "--", *[d for d, _, _ in LAYERS]],
                         capture_output=True, text=True, check=True).stdout.split()
    return sorted(p for p in set(out) if re.search(r"\.(c|h|cc)$", p)
                  and os.path.exists(os.path.join(TOP, p)))


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def render():
    """The map's text, the files without an opening comment, and the files no layer names."""
    lines = ["# Code map", "",
             "One line per source file: the first sentence of the comment the file opens with,",
             "each program's files by layer, bottom up: utilities and parsers first, the program's",
             "`main.c` last. Generated by `tests/gen/code_map.py` from its layer table; `make check`",
             "fails when the map is out of date or a file has no place in the table.", ""]
    missing, unplaced = [], []
    paths = files()
    for d, title, layers in LAYERS:
        here = [p for p in paths if p.startswith(d + "/")]
        placed = set()
        lines += ["## %s (`%s/`)" % (title, d), ""]
        for n, (name, what, stems) in enumerate(layers, 1):
            rows = [p for s in stems for p in here if stem(p) == s]
            placed.update(rows)
            if not rows:
                continue
            lines += ["### %d. %s" % (n, name), "", what[0].upper() + what[1:] + ".", "",
                      "| file | what it owns |", "|---|---|"]
            for p in rows:
                s = first_sentence(p)
                if s is None:
                    missing.append(p)
                    continue
                lines.append("| `%s` | %s |" % (p, s.replace("|", "\\|")))
            lines.append("")
        unplaced += [p for p in here if p not in placed]
    return "\n".join(lines), missing, unplaced


def main():
    text, missing, unplaced = render()
    for p in missing:
        print("FAIL: %s: no opening comment saying what the file owns" % p)
    for p in unplaced:
        print("FAIL: %s: in no layer: add its stem to LAYERS in tests/gen/code_map.py" % p)
    if "--check" in sys.argv[1:]:
        try:
            with open(os.path.join(TOP, OUT), encoding="utf-8") as f:
                old = f.read()
        except OSError:
            old = ""
        if old != text:
            print("FAIL: %s is out of date: run python3 tests/gen/code_map.py" % OUT)
            return 1
        if missing or unplaced:
            return 1
        print("PASS: %s lists every source file" % OUT)
        return 0
    with open(os.path.join(TOP, OUT), "w", encoding="utf-8") as f:
        f.write(text)
    return 1 if missing or unplaced else 0


if __name__ == "__main__":
    sys.exit(main())
