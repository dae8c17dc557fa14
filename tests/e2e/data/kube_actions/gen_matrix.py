#!/usr/bin/env python3
"""Canned Prometheus answers for tests/e2e/kube_actions.sh (fake_prom `ok` mode).

usage: gen_matrix.py OUTDIR
Writes OUTDIR/{range,instant}.json (the cluster in cluster.json) and
OUTDIR/{press-range,press-instant}.json (only press/press-a, for the pressure rule).

Activity is sampled every 15 s from END - 1800 to END + 600, so that one answer serves every
evaluation time of the test (END, +120, +300, +360, +420): the enforcer ignores points after
its evaluation time, as Prometheus would not have them yet. Every pod is idle (1 %) except
apps/busy-7b9c-k8m3n (80 % throughout) and apps/notebook-55d6-w4x5y, which is idle until one
90 % sample at END + 210: idle at END and END + 120, active again from END + 210 (spared).
The instant answers give each pod one amd.com/gpu; served for every instant query, they are
both the allocation and, for the DuringGPUPressure rule, the pending demand.

It also writes OUTDIR/{young,late,stop}-{range,instant}.json for the pods of young.json,
late.json and stop.json (sampled up to END + 1200): all idle except late/blip, busy at
END + 150 only, between two evaluations, so that no cycle sees it busy.
"""
import json
import os
import sys

END = 1700000000
STEP = 15
PODS = [
    ("apps", "web-5d8f-abc12"),
    ("apps", "db-0"),
    ("apps", "exempt-6c4f-q7r2s"),
    ("apps", "busy-7b9c-k8m3n"),
    ("apps", "notebook-55d6-w4x5y"),
    ("batch", "train-abcde"),
    ("batch", "kq-fgh12"),
    ("serve", "infer-6f7g-m9n8p"),
    ("scratch", "bare-ok"),
    ("scratch", "bare-conflict"),
    ("scratch", "bare-gone"),
    ("scratch", "sweep-8h9j-t5u6v"),
    ("kube-system", "gpu-burn"),
]


def activity(pod, t):
    if pod == "busy-7b9c-k8m3n":
        return "0.8"
    if pod == "notebook-55d6-w4x5y" and t == END + 210:
        return "0.9"
    if pod == "blip" and t == END + 150:
        return "0.9"
    return "0.01"


def write(outdir, prefix, pods, until=END + 600):
    times = range(END - 1800, until + 1, STEP)
    rng = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"namespace": ns, "pod": pod}, "values": [[t, activity(pod, t)] for t in times]}
        for ns, pod in pods]}}
    inst = {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"namespace": ns, "pod": pod, "resource": "amd.com/gpu"}, "value": [END, "1"]}
        for ns, pod in pods]}}
    with open(os.path.join(outdir, prefix + "range.json"), "w") as f:
        json.dump(rng, f)
    with open(os.path.join(outdir, prefix + "instant.json"), "w") as f:
        json.dump(inst, f)


write(sys.argv[1], "", PODS)
write(sys.argv[1], "press-", [("press", "press-a")])
write(sys.argv[1], "young-", [("young", "jupyter-alice"), ("young", "jupyter-bob")], END + 1200)
write(sys.argv[1], "late-", [("late", "blip"), ("late", "steady")], END + 1200)
write(sys.argv[1], "stop-", [("stop", "s1"), ("stop", "s2"), ("stop", "s3")], END + 1200)
