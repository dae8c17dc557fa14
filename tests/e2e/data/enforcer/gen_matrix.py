#!/usr/bin/env python3
"""Canned Prometheus answers for fake_prom's `ok FILE INSTANT_FILE` mode.

usage: gen_matrix.py RANGE_OUT INSTANT_OUT [COVERAGE_OUT SUBPOINTS_OUT EMPTY_OUT]
The range answer holds the activity of two workloads over [1700000000 - 1800, 1700000000]
at 15 s: ml/idle (0.01 throughout) and ml/gappy (idle too, but 5 points missing inside the
15 minute window, a 90 s hole, more than the 30 s tolerated gap). The instant answer is
the allocation of both, one device each. The coverage answers are for the enforcer's raw
coverage queries (fake_prom -A present_over_time COVERAGE_OUT -A 'vector(1)' SUBPOINTS_OUT):
4 sub-points per step, all covered for ml/idle; for ml/gappy none inside its hole and 1 of
4 in the step after it, as Prometheus answers. EMPTY_OUT is an empty matrix, the answer of
the non-finite check (fake_prom -A sum_over_time EMPTY_OUT): no NaN anywhere.
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
        values = [[END - 1800 + i * STEP, "1" if skip and i == max(skip) + 1 else "4"]
                  for i in range(121) if i not in skip]
        return {"metric": {"namespace": "ml", "pod": pod}, "values": values}
    cov = {"status": "success", "data": {"resultType": "matrix", "result": [
        coverage("gappy", skip=range(90, 95)), coverage("idle")]}}
    json.dump(cov, open(sys.argv[3], "w"))
    sub = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {}, "values": [[END - 1800 + i * STEP, "4"] for i in range(121)]}]}}
    json.dump(sub, open(sys.argv[4], "w"))
    empty = {"status": "success", "data": {"resultType": "matrix", "result": []}}
    json.dump(empty, open(sys.argv[5], "w"))
