#!/usr/bin/env python3
"""Canned Prometheus answers (fake_prom `ok` mode) for the pods of a real test cluster.

usage: gen_prom.py OUTDIR PREFIX END NAMESPACE/POD[=busy]...
Writes OUTDIR/PREFIXrange.json and OUTDIR/PREFIXinstant.json. Activity is sampled every 15 s
from END - 1800 to END + 1200 (one answer serves every evaluation time of a suite: the
enforcer ignores points after its evaluation time); every pod is idle (1 %) except the ones
marked =busy (80 %). The instant answer gives each pod one amd.com/gpu (its allocation).

Why canned: the cluster's pods run on kwok's fake nodes, so no exporter measures them; what
these suites test is the Kubernetes side (the real API server, controllers and RBAC), and
the pods' real names are only known once the controllers have made them.
"""
import json
import os
import sys

outdir, prefix, end = sys.argv[1], sys.argv[2], int(sys.argv[3])
pods = []
for a in sys.argv[4:]:
    name, _, mark = a.partition("=")
    ns, pod = name.split("/", 1)
    pods.append((ns, pod, "0.8" if mark == "busy" else "0.01"))
times = range(end - 1800, end + 1201, 15)
rng = {"status": "success", "data": {"resultType": "matrix", "result": [
    {"metric": {"namespace": ns, "pod": pod}, "values": [[t, v] for t in times]}
    for ns, pod, v in pods]}}
inst = {"status": "success", "data": {"resultType": "vector", "result": [
    {"metric": {"namespace": ns, "pod": pod, "resource": "amd.com/gpu"}, "value": [end, "1"]}
    for ns, pod, _ in pods]}}
with open(os.path.join(outdir, prefix + "range.json"), "w") as f:
    json.dump(rng, f)
with open(os.path.join(outdir, prefix + "instant.json"), "w") as f:
    json.dump(inst, f)
