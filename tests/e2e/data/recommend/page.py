#!/usr/bin/env python3
"""The HTML page of `recommend --output html` as Chromium rendered it, for tests/e2e/recommend.sh.

  page.py hostile OUT            OpenMetrics: one day (2023-10-27) of two pods in namespaces
                                 whose names are markup (HOSTILE), before the history of
                                 gen_types.py so that both fit in one TSDB
  page.py static PAGE            the page as written: nothing that loads from anywhere (no
                                 script, link, import, url() or src; the only URL is the SVG
                                 namespace) and a Content-Security-Policy that forbids it all
  page.py check DOM JSON NPTS    the DOM `chromium --headless --dump-dom` printed against
                                 `recommend --output json` of the same run: one chart per
                                 group, the recommended and the current point carrying the
                                 JSON's numbers, as many frontier points as the JSON's
                                 frontier, NPTS grid points, the target line at the target
  page.py hostile-check DOM      every hostile namespace has its chart and heading, its value
                                 read back unchanged from the DOM, and no script element exists

Prints PASS/FAIL lines as tests/lib.sh does ("PASS: recommend/page-...", tests/passfail.py);
standard library only.
"""
import html.parser
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
import passfail  # noqa: E402

HOSTILE = ['</svg><script>alert(1)</script>', 'a&b "c" \'d\' <i>x</i>']
report = passfail.Report("recommend/page-")


def hostile(out):
    start = 1698364800  # 2023-10-27T00:00:00Z
    lines_b, lines_d = [], []
    for ns in HOSTILE:
        esc = ns.replace("\\", "\\\\").replace('"', '\\"')
        lab = f'namespace="{esc}",pod="p-1"'
        for t in range(start, start + 86400, 60):
            # 2 h at work, 1 h idle, again
            v = 0.5 if (t - start) % 10800 < 7200 else 0.01
            lines_b.append(f"gpureclaim:workload_busy:ratio{{{lab}}} {v} {t}\n")
            lines_d.append(f'gpureclaim:workload_devices:count{{{lab},resource="amd.com/gpu"}} 1 {t}\n')
    with open(out, "w") as f:
        f.write("# TYPE gpureclaim:workload_busy:ratio gauge\n")
        f.writelines(lines_b)
        f.write("# TYPE gpureclaim:workload_devices:count gauge\n")
        f.writelines(lines_d)
        f.write("# EOF\n")


class Dom(html.parser.HTMLParser):
    """Elements as (tag, attrs, index of the enclosing section) and each h2's text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elems, self.h2, self.section, self.in_h2 = [], [], -1, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.section += 1
        if tag == "h2":
            self.in_h2 = True
            self.h2.append("")
        self.elems.append((tag, a, self.section))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "h2":
            self.in_h2 = False

    def handle_data(self, data):
        if self.in_h2:
            self.h2[-1] += data


def parse(path):
    d = Dom()
    with open(path, encoding="utf-8") as f:
        d.feed(f.read())
    return d


def classes(a):
    return set((a.get("class") or "").split())


def static(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    urls = set(re.findall(r"[a-z]+://[^\s\"'<>)]*", text))
    report(urls == {"http://www.w3.org/2000/svg"}, "static-no-url", str(sorted(urls)))
    bad = [p for p in (r"<script", r"<link", r"@import", r"url\(", r"\ssrc=", r"<iframe",
                       r"<object", r"<embed", r"<img") if re.search(p, text, re.I)]
    report(not bad, "static-nothing-loads", str(bad))
    report("content=\"default-src 'none'; style-src 'unsafe-inline'\"" in text, "static-csp")


def point_ok(a, want, settings=True):
    """The data-* attributes of a marked point against a JSON figure."""
    diffs = []
    pairs = [("data-gpu-hours-freed", "%.6f" % want["gpuHoursFreed"]),
             ("data-reclaims", str(want["reclaims"])),
             ("data-returns-within", str(want["returnsWithin"])),
             ("data-return-share", "" if want["returnShare"] is None
              else "%.6f" % want["returnShare"])]
    if settings:
        pairs += [("data-threshold", "%.15g" % want["threshold"]),
                  ("data-idle-timer", want["idleTimer"]),
                  ("data-notice-period", want["noticePeriod"])]
    for k, v in pairs:
        if a.get(k) != v:
            diffs.append(f"{k}={a.get(k)!r}, json {v!r}")
    return diffs


def check(dom_path, json_path, npts):
    d = parse(dom_path)
    r = json.load(open(json_path))
    label = r["by"]
    charts = [(a, s) for t, a, s in d.elems if t == "svg" and "rec-chart" in classes(a)]
    report(len(charts) == len(r["groups"]), "one-chart-per-group",
           f"{len(charts)} charts, {len(r['groups'])} groups")
    for i, g in enumerate(r["groups"]):
        v = g["by"][label]
        mine = [s for a, s in charts if a.get("data-value") == v and a.get("data-rule") == g["rule"]]
        name = re.sub(r"[^a-z0-9]+", "-", v.lower())
        if len(mine) != 1:
            report(False, f"{name}-chart", f"{len(mine)} charts for {label}={v}")
            continue
        report(True, f"{name}-chart")
        sec = mine[0]
        els = [(t, a) for t, a, s in d.elems if s == sec]
        rec = [a for t, a in els if t == "circle" and "recommended" in classes(a) and
               "data-reclaims" in a]
        cur = [a for t, a in els if t == "rect" and "current" in classes(a) and
               "data-reclaims" in a]
        front = [a for t, a in els if t == "circle" and "on-frontier" in classes(a) and
                 "data-reclaims" in a]
        pts = [a for t, a in els if t == "circle" and "point" in classes(a) and
               "data-reclaims" in a]
        tgt = [a for t, a in els if t == "line" and "target" in classes(a)]
        if g["recommended"] is None:
            report(not rec, f"{name}-no-recommended-mark", f"{len(rec)} marks")
        else:
            diffs = point_ok(rec[0], g["recommended"]) if len(rec) == 1 else [f"{len(rec)} marks"]
            report(not diffs, f"{name}-recommended-mark", "; ".join(diffs))
        diffs = point_ok(cur[0], g["current"]) if len(cur) == 1 else [f"{len(cur)} marks"]
        report(not diffs, f"{name}-current-mark", "; ".join(diffs))
        report(len(front) == len(g["frontier"]), f"{name}-frontier-points",
               f"{len(front)} in the chart, {len(g['frontier'])} in the JSON")
        # every frontier point of the JSON is a point of the chart with its numbers
        missing = [f for f in g["frontier"] if not any(not point_ok(a, f) for a in front)]
        report(not missing, f"{name}-frontier-numbers", str(missing[:2]))
        report(len(pts) == npts, f"{name}-every-grid-point", f"{len(pts)} points, want {npts}")
        report(len(tgt) == 1 and tgt[0].get("data-share") == "%.6f" % r["maxReturnShare"],
               f"{name}-target-line", str(tgt))


def hostile_check(dom_path):
    d = parse(dom_path)
    scripts = [a for t, a, s in d.elems if t == "script"]
    report(not scripts, "hostile-no-script-element", f"{len(scripts)} script elements")
    for i, v in enumerate(HOSTILE):
        charts = [a for t, a, s in d.elems if t == "svg" and a.get("data-value") == v]
        report(len(charts) == 1, f"hostile-{i}-chart", f"{len(charts)} charts for {v!r}")
        report(any(("namespace=" + v) in h for h in d.h2), f"hostile-{i}-heading-text",
               str(d.h2))


def main(argv):
    if len(argv) == 3 and argv[1] == "hostile":
        hostile(argv[2])
        return 0
    if len(argv) == 3 and argv[1] == "static":
        static(argv[2])
    elif len(argv) == 5 and argv[1] == "check":
        check(argv[2], argv[3], int(argv[4]))
    elif len(argv) == 3 and argv[1] == "hostile-check":
        hostile_check(argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    return report.status()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
