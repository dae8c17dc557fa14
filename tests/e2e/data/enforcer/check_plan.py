#!/usr/bin/env python3
"""Compare `plan --output json` with the expected decisions of gen_history.py.

usage: check_plan.py PLAN_JSON EXPECT_JSON
Prints one PASS:/FAIL: line per rule (suite from $SUITE) and exits 1 on any mismatch.
"""
import json
import os
import sys

suite = os.environ.get("SUITE", "enforcer_plan")
plan = json.load(open(sys.argv[1]))
expect = json.load(open(sys.argv[2]))
failed = 0
keys = {"rule", "workload", "decision", "reason", "detail", "idleSince", "threshold",
        "idleTimer", "window", "allocated", "resource", "dryRun"}
for rule, want in sorted(expect.items()):
    got = {}
    problems = []
    for d in plan:
        if d["rule"] != rule:
            continue
        missing = keys - set(d)
        if missing:
            problems.append("%s: missing keys %s" % (d["workload"], sorted(missing)))
        got[d["workload"]["pod"]] = [d["decision"], d["reason"]]
        if d["decision"] == "reclaim" and not d["idleSince"]:
            problems.append("%s: reclaim without idleSince" % d["workload"]["pod"])
        if d["decision"] == "keep" and d["reason"] == "idle":
            problems.append("%s: keep with reason idle" % d["workload"]["pod"])
    for pod in sorted(set(want) | set(got)):
        if want.get(pod) != got.get(pod):
            problems.append("%s: want %s, got %s" % (pod, want.get(pod), got.get(pod)))
    if problems:
        failed += 1
        print("FAIL: %s/decisions-%s (%s)" % (suite, rule, "; ".join(problems)))
    else:
        print("PASS: %s/decisions-%s" % (suite, rule))
sys.exit(1 if failed else 0)
