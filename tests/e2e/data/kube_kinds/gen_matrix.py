#!/usr/bin/env python3
"""Canned Prometheus answers for tests/e2e/kube_kinds.sh (fake_prom `ok` mode).

usage: gen_matrix.py OUTDIR
Writes OUTDIR/{range,instant}.json: every pod of cluster.json idle (1 %) from END - 1800 to
END + 600, sampled every 15 s, each holding one amd.com/gpu.
"""
import json
import os
import sys

END = 1700000000
STEP = 15
PODS = [
    ("nb", "alice-0"),
    ("kserve", "llm-predictor-5d6f7-q2w3e"),
    ("ray", "rc-head-h7j8k"),
    ("jobset", "sweep-workers-0-0-z9x8c"),
    ("aim", "chat-predictor-8b9c-r4t5y"),
    ("wid", "w-6c7d-a1s2d"),
    ("ex", "keep-predictor-1a2b-c3v4b"),
]

times = range(END - 1800, END + 601, STEP)
rng = {"status": "success", "data": {"resultType": "matrix", "result": [
    {"metric": {"namespace": ns, "pod": pod}, "values": [[t, "0.01"] for t in times]}
    for ns, pod in PODS]}}
inst = {"status": "success", "data": {"resultType": "vector", "result": [
    {"metric": {"namespace": ns, "pod": pod, "resource": "amd.com/gpu"}, "value": [END, "1"]}
    for ns, pod in PODS]}}
with open(os.path.join(sys.argv[1], "range.json"), "w") as f:
    json.dump(rng, f)
with open(os.path.join(sys.argv[1], "instant.json"), "w") as f:
    json.dump(inst, f)
