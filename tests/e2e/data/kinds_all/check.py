#!/usr/bin/env python3
"""Checks of tests/e2e/kinds_all.sh, one line per check: "PASS NAME" or "FAIL NAME (why)".

usage: check.py acted|restored|again CASES LOG FROM DIR KURL
LOG is fake_kube's request log, FROM the line it is read from, DIR the suite's directory
(restore-NS.rc / restore-NS.out from `restore`, audit.jsonl), KURL the fake API (token tok-t).
"""
import json
import os
import sys
import urllib.error
import urllib.request

stage, cases_path, log, frm, d, kurl = sys.argv[1:7]
allcases = json.load(open(cases_path))
cases = [c for c in allcases if c["action"] != "-"]
reqs = [json.loads(l) for i, l in enumerate(open(log)) if i >= int(frm)]
NOTICE = "gpureclaim.io/reclaim-notice"
REPLICAS = "gpureclaim.io/replicas-before-reclaim"


def out(ok, name, why=""):
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, " (%s)" % why if not ok and why else ""))


def get(path):
    rq = urllib.request.Request(kurl + path, headers={"Authorization": "Bearer tok-t"})
    try:
        return json.load(urllib.request.urlopen(rq, timeout=5))
    except urllib.error.HTTPError as e:
        return e.code


def body(r):
    return r.get("body") if isinstance(r.get("body"), dict) else {}


def notice_only(r):
    """A PATCH that writes the notice annotation (or its acted record) and nothing else."""
    b = body(r)
    ann = (b.get("metadata") or {}).get("annotations") or {}
    return r["method"] == "PATCH" and set(b) <= {"metadata"} and list(ann) == [NOTICE]


def writes(ns):
    return [r for r in reqs if r["method"] != "GET" and "/namespaces/%s/" % ns in r["path"]
            and "selfsubjectaccessreviews" not in r["path"]]


def events(ns, reason):
    return [body(r) for r in writes(ns) if r["path"].endswith("/events")
            and body(r).get("reason") == reason]


def request_ok(c, rs):
    want = c["request"]
    if want == "scale":  # the count recorded on the object first, then /scale to 0
        return len(rs) == 2 and rs[0]["method"] == "PATCH" and rs[0]["path"] == c["path"] \
            and body(rs[0])["metadata"].get("annotations") == {REPLICAS: "1"} \
            and set(body(rs[0])) == {"metadata"} \
            and rs[1]["method"] == "PATCH" and rs[1]["path"] == c["path"] + "/scale" \
            and (body(rs[1]).get("spec") or {}).get("replicas") == 0
    if len(rs) != 1:
        return False
    r = rs[0]
    if want == "delete":
        return r["method"] == "DELETE" and r["path"] == c["path"]
    if want.startswith("patch:"):
        spec = json.loads(want[6:])["spec"]
        return r["method"] == "PATCH" and r["path"] == c["path"] and body(r).get("spec") == spec
    if want.startswith("command:"):
        b = body(r)
        return r["method"] == "POST" and r["path"] == c["command_path"] \
            and b.get("action") == want[8:] and (b.get("target") or {}).get("name") == c["name"] \
            and (b.get("target") or {}).get("controller") is True
    if want.startswith("annotate:"):
        ann = (body(r).get("metadata") or {}).get("annotations") or {}
        return r["method"] == "PATCH" and r["path"] == c["path"] and want[9:] in ann \
            and "spec" not in body(r)
    return False


if stage == "planned":
    plan = {d["workload"].get("namespace"): d for d in json.load(open(os.path.join(d, "plan.json")))}
    out(all(r["method"] == "GET" for r in reqs if "selfsubjectaccessreviews" not in r["path"]),
        "plan-only-reads", [(r["method"], r["path"]) for r in reqs if r["method"] != "GET"])
    words = {"scale": "scale %s to 0", "delete": "delete %s", "patch": "patch %s ",
             "annotate": "annotate %s ", "command": "create a bus.volcano.sh/v1alpha1 Command "
             "AbortJob for %s"}
    for c in cases:
        want = words[c["request"].split(":")[0]] % ("%s %s/%s" % (c["kind"], c["ns"], c["name"]))
        got = (plan.get(c["ns"]) or {}).get("target") or ""
        out(got.startswith(want), c["row"] + "/plan-target", "%r, want %r" % (got, want))
if stage == "acted":
    # the rows only climbed through (Knative): read on the way up, never written
    for c in allcases:
        if c["action"] != "-":
            continue
        seen = "/namespaces/%s/%s/" % (c["ns"], c["resource"])
        got = [r for r in reqs if r["method"] == "GET" and seen in r["path"]]
        put = [r for r in reqs if r["method"] != "GET" and seen in r["path"]]
        out(got and not put, c["row"] + "/climbed-through", "%d GETs, %d writes" % (len(got), len(put)))
for c in cases:
    n, ns = c["row"], c["ns"]
    w = writes(ns)
    if stage == "acted":
        notices = [r for r in w if notice_only(r) and r["path"] == c["path"]
                   and "actedAt" not in body(r)["metadata"]["annotations"][NOTICE]]
        out(len(notices) == 1, n + "/notice-annotation", "%d notice patches" % len(notices))
        ev = events(ns, "IdleGPUReclaimNotice")
        on = [e for e in ev if (e.get("involvedObject") or {}).get("kind") == c["kind"]
              and e["involvedObject"].get("name") == c["name"]]
        out(len(on) == 1 and len(ev) == 1, n + "/notice-event",
            [e.get("involvedObject") for e in ev])
        acts = [r for r in w if not notice_only(r) and not r["path"].endswith("/events")]
        out(request_ok(c, acts), n + "/action-" + c["request"].split(":")[0],
            [(r["method"], r["path"], body(r)) for r in acts])
        done = events(ns, "IdleGPUReclaimed")
        out(len(done) == 1 and done[0]["involvedObject"].get("name") == c["name"],
            n + "/action-event", len(done))
    elif stage == "restored":
        rc = open(os.path.join(d, "restore-%s.rc" % ns)).read().strip()
        said = open(os.path.join(d, "restore-%s.out" % ns)).read().strip()
        if c["restore"] == "refuse":
            acts = [r for r in w if not r["path"].endswith("/events")]
            out(rc == "1" and "%s %s/%s" % (c["kind"], ns, c["name"]) in said
                and "not found" in said and "cannot be undone" in said and not acts,
                n + "/restore-refused",
                "exit %s: %s; %d writes" % (rc, said, len(acts)))
            continue
        o = get(c["path"])
        ok, why = rc == "0", "exit %s: %s" % (rc, said)
        if ok and isinstance(o, int):
            ok, why = False, "GET %d" % o
        elif ok and c["request"] == "scale":
            ok, why = o["spec"].get("replicas") == 1, o["spec"]
        elif ok and c["request"].startswith("command:"):
            # the undo command was posted, and its controller carried it out
            phase = ((o.get("status") or {}).get("state") or {}).get("phase")
            posted = [body(r).get("action") for r in w if r["method"] == "POST"
                      and r["path"] == c["command_path"]]
            ann = o["metadata"].get("annotations") or {}
            ok = phase == "Running" and posted == ["ResumeJob"] and NOTICE not in ann
            why = (phase, posted, list(ann))
        elif ok and c["request"].startswith("patch:"):
            spec = json.dumps(o["spec"])
            ok, why = '"suspend": false' in spec, spec
        elif ok:
            ann = o["metadata"].get("annotations") or {}
            ok, why = c["request"][9:] not in ann, ann
        out(ok, n + "/restored", why)
        ev = events(ns, "IdleGPUReclaimRestored")
        if not ev:
            ev = [body(r) for r in w if r["path"].endswith("/events")]
        out(len(ev) == 1, n + "/restore-event", [e.get("reason") for e in ev])
    elif stage == "again":
        acts = [r for r in w if not r["path"].endswith("/events")]
        out(not acts and not [r for r in w if r["path"].endswith("/events")],
            n + "/not-reclaimed-again", [(r["method"], r["path"]) for r in w])
        pod = get("/api/v1/namespaces/%s/pods/%s-0" % (ns, ns))
        audit = [json.loads(l) for l in open(os.path.join(d, "audit.jsonl"))]
        last = [a for a in audit if a["workload"].get("pod") == ns + "-0"
                and a["event"] in ("decision", "skipped", "action")]
        if isinstance(pod, int):
            out(pod == 404, n + "/pod-gone", pod)
        else:
            a = last[-1] if last else {}
            # restored: kept as restarted; deleted: kept, its owner gone
            want = "restarted" if c["restore"] == "yes" else ""
            res = "too_young" if c["restore"] == "yes" else "gone"
            out(a.get("result") == res and want in (a.get("message") or ""),
                n + "/kept" + ("-restarted" if want else ""),
                {k: a.get(k) for k in ("event", "result", "message")})
