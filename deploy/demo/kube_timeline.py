#!/usr/bin/env python3
"""The narrator of `make demo-kube`: what happens to each workload on the real test cluster.

demo-kube.sh starts the processes and drives the phases; this program only watches, from:

* Prometheus: gpureclaim:workload_busy:ratio per pod (the exporter's activity, through the
  shipped recording rules), summed up per workload every --interval seconds;
* the API server (kubectl as the admin, read only): each workload's object (replicas, or a
  Job's suspend), its Running pods, the notice annotation gpureclaim.io/reclaim-notice and the
  Events the enforcer posts on it (reasons IdleGPUReclaim*);
* the enforcer's audit file: dry-run reports, notices, actions and restores.

Each change is printed once, as mm:ss since --t0, with a status row of every workload every
--status-every seconds. After every poll it writes --summary-file (each workload's last state
and the reasons of the Events seen about it: demo-kube.sh waits on it, and reads its summary
from it); it exits 0 on SIGTERM.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request

RECORD = "gpureclaim:workload_busy:ratio"
NOTICE = "gpureclaim.io/reclaim-notice"
# namespace, kind, name, pod label app
WORKLOADS = [("notebooks", "statefulset", "notebook-alice"),
             ("inference", "deployment", "llm-serve-bob"),
             ("training", "job", "train-carol")]


def kubectl_json(kubectl, *args):
    try:
        out = subprocess.run([kubectl, *args, "-o", "json"], capture_output=True, timeout=10,
                             check=True).stdout
        return json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def busy(prom, ns):
    """namespace/pod -> busy ratio of the pods of a namespace, None when Prometheus fails."""
    q = urllib.parse.urlencode({"query": '%s{namespace="%s"}' % (RECORD, ns)})
    try:
        with urllib.request.urlopen("%s/api/v1/query?%s" % (prom, q), timeout=5) as r:
            res = json.load(r)["data"]["result"]
    except (OSError, ValueError, KeyError):
        return None
    return {x["metric"].get("pod", "?"): float(x["value"][1]) for x in res}


KINDS = {"statefulset": "StatefulSet", "deployment": "Deployment", "job": "Job"}


def snapshot(kubectl):
    """Everything the timeline reads from the API server, in one request (one kubectl)."""
    got = kubectl_json(kubectl, "get", "statefulsets,deployments,jobs,pods,events", "-A")
    return None if got is None else got.get("items", [])


def state(items, ns, kind, name):
    obj = next((o for o in items if o.get("kind") == KINDS[kind]
                and o["metadata"].get("namespace") == ns and o["metadata"]["name"] == name), None)
    if obj is None:
        return None
    pods = [o["metadata"]["name"] for o in items if o.get("kind") == "Pod"
            and o["metadata"].get("namespace") == ns
            and (o["metadata"].get("labels") or {}).get("app") == name
            and o.get("status", {}).get("phase") == "Running"
            and not o["metadata"].get("deletionTimestamp")]
    spec = obj.get("spec", {})
    ann = obj.get("metadata", {}).get("annotations", {}) or {}
    if kind == "job":
        shape = "suspended" if spec.get("suspend") else "running"
    else:
        shape = "replicas %d" % spec.get("replicas", 0)
    return {"shape": shape, "pods": sorted(pods), "notice": ann.get(NOTICE, "")}


def events(items, ns):
    return [e for e in items if e.get("kind") == "Event" and e["metadata"].get("namespace") == ns
            and e.get("reason", "").startswith("IdleGPUReclaim")]


def audit_subject(a):
    """The pod an audit line is about, or its root owner (a restore names no pod)."""
    w = a.get("workload") or {}
    if w.get("pod"):
        return "%s/%s" % (w.get("namespace", "?"), w["pod"])
    chain = a.get("owner_chain") or [{}]
    top = chain[-1]
    return "%s/%s" % (top.get("namespace", "?"), top.get("name", "?"))


def audit_text(a):
    text = "%s %s (rule %s)" % (a["event"], a.get("result", ""), a.get("rule", "-"))
    if a["event"] == "spared":
        # why the entry was withdrawn, in the enforcer's words
        return text + ": " + a.get("message", a.get("reason", ""))[:140]
    return text + (": " + a["reason"] if a.get("reason") else "")


def write_summary(path, last, reasons):
    """What the timeline has seen so far, renamed into place: demo-kube.sh waits on it."""
    out = {k: dict(v, events=reasons.get(k, [])) for k, v in last.items()}
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    os.rename(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t0", type=float, required=True)
    ap.add_argument("--prometheus-url", required=True)
    ap.add_argument("--kubectl", default="kubectl")
    ap.add_argument("--audit-file", required=True)
    ap.add_argument("--interval", type=float, default=2.0)
    ap.add_argument("--status-every", type=float, default=10.0)
    ap.add_argument("--summary-file")
    args = ap.parse_args(argv)

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))

    def say(text):
        t = max(0, int(time.time() - args.t0))
        print("%02d:%02d  %s" % (t // 60, t % 60, text), flush=True)

    last = {}
    seen_events = set()
    audit_pos = 0
    next_status = 0.0
    ratios = {}
    reasons = {}  # workload -> the reasons of the Events seen about it, in order
    while not stopping:
        items = snapshot(args.kubectl) or []
        for ns, kind, name in WORKLOADS:
            key = "%s/%s" % (ns, name)
            st = state(items, ns, kind, name)
            b = busy(args.prometheus_url, ns)
            if b is not None:
                ratios[key] = [b[p] for p in sorted(b) if p.startswith(name)]
            if st is None:
                continue
            old = last.get(key)
            if old is None or old["shape"] != st["shape"]:
                say("%-24s %s/%s: %s" % (key, kind, name, st["shape"]))
            if old is None or old["pods"] != st["pods"]:
                say("%-24s Running pods: %s" % (key, ", ".join(st["pods"]) or "none"))
            if (old is None and st["notice"]) or (old and old["notice"] != st["notice"]):
                if st["notice"]:
                    say("%-24s annotation %s: %s" % (key, NOTICE, st["notice"][:160]))
                else:
                    say("%-24s annotation %s removed" % (key, NOTICE))
            last[key] = st
            for e in events(items, ns):
                uid = e["metadata"]["uid"]
                if uid in seen_events:
                    continue
                seen_events.add(uid)
                reasons.setdefault(key, []).append(e["reason"])
                io = e.get("involvedObject", {})
                say("%-24s Event %s on %s/%s: %s" % (key, e["reason"], io.get("kind"),
                                                    io.get("name"), e.get("message", "")[:200]))
        try:
            with open(args.audit_file) as f:
                f.seek(audit_pos)
                for line in f:
                    if not line.endswith("\n"):
                        break
                    audit_pos += len(line.encode())
                    try:
                        a = json.loads(line)
                    except ValueError:
                        continue
                    if a.get("event") in ("dry_run", "notice", "action", "restore", "spared"):
                        say("%-24s audit: %s" % (audit_subject(a), audit_text(a)))
        except OSError:
            pass
        if time.time() >= next_status:
            next_status = time.time() + args.status_every
            row = []
            for ns, _, name in WORKLOADS:
                r = ratios.get("%s/%s" % (ns, name))
                row.append("%s %s" % (name, " ".join("%d%%" % round(v * 100) for v in r)
                                      if r else "-"))
            say("busy: " + " | ".join(row))
        if args.summary_file:
            write_summary(args.summary_file, last, reasons)
        end = time.monotonic() + args.interval
        while not stopping and time.monotonic() < end:
            time.sleep(0.1)
    if args.summary_file:
        write_summary(args.summary_file, last, reasons)
    return 0


if __name__ == "__main__":
    sys.exit(main())
