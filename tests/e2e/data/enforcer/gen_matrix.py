#!/usr/bin/env python3
"""Canned Prometheus answers for fake_prom's `ok FILE INSTANT_FILE` mode.

usage: gen_matrix.py RANGE_OUT INSTANT_OUT [COVERAGE_OUT]
The range answer holds the activity of two workloads over [1700000000 - 1800, 1700000000]
at 15 s: ml/idle (0.01 throughout) and ml/gappy (idle too, but 5 points missing inside the
15 minute window, a 90 s hole, more than the 30 s tolerated gap). The instant answer is
the allocation of both, one device each. The coverage answer (for the enforcer's raw
coverage query, fake_prom -A present_over_time) is 1 at every step of ml/idle; for
ml/gappy it is 0 at the step after its hole and absent inside it, as Prometheus answers.
"""
import json
import sys

END = 1700000000
STEP = 15


def series(pod, skip=()):
    values = [[END - 1800 + i * STEP, "0.01"] for i in range(121) if i not in skip]
    return {"metric": {"namespace": "ml", "pod": pod}, "values": values}


rng = {"status": "success", "data": {"resultType": "matrix", "result": [
    series("gappy", skip=range(90, 95)), series("idle")]}}
inst = {"status": "success", "data": {"resultType": "vector", "result": [
    {"metric": {"namespace": "ml", "pod": p, "resource": "amd.com/gpu"}, "value": [END, "1"]}
    for p in ("gappy", "idle")]}}
json.dump(rng, open(sys.argv[1], "w"))
json.dump(inst, open(sys.argv[2], "w"))
if len(sys.argv) > 3:
    def coverage(pod, skip=()):
        values = [[END - 1800 + i * STEP, "0" if skip and i == max(skip) + 1 else "1"]
                  for i in range(121) if i not in skip]
        return {"metric": {"namespace": "ml", "pod": pod}, "values": values}
    cov = {"status": "success", "data": {"resultType": "matrix", "result": [
        coverage("gappy", skip=range(90, 95)), coverage("idle")]}}
    json.dump(cov, open(sys.argv[3], "w"))
