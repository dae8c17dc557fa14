#!/usr/bin/env python3
"""Fixtures of tests/e2e/kinds_all.sh from its table (kinds.txt) and the built-in kinds table.

usage: gen.py KINDS_C KINDS_TXT OUTDIR
Reads the built-in rows (ROW("group", "version", "Kind", ...)) of enforcer/kinds.c and fails,
naming them, when a row has no line in kinds.txt (or a line names no row). Writes OUTDIR/
cluster.json (each line's chain of owners above its idle pod NS-0), rules.yaml (one rule per
namespace, notice period 0), range.json and instant.json (every pod idle, one amd.com/gpu),
and cases.json (the lines, for the checks).
"""
import json
import os
import re
import sys

END = 1700000000
kinds_c, table, out = sys.argv[1:4]
rows = {}
for g, v, k, res in re.findall(r'ROW\("([^"]*)", "([^"]*)", "([^"]*)", (?:true|false), "([^"]*)"',
                               open(kinds_c).read()):
    rows["%s.%s" % (k, g or "core")] = (g, v, k, res)
if len(rows) < 20:
    sys.exit("gen.py: only %d built-in rows read from %s" % (len(rows), kinds_c))

cases = []
for line in open(table):
    if not line.strip() or line.startswith("#"):
        continue
    f = line.split()
    row, ns, action, target, request, restore = f[:6]
    chain = [] if f[6:] == ["-"] else f[6:]
    cases.append(dict(row=row, ns=ns, action=action, target=target, request=request,
                      restore=restore, chain=chain))
named = {c["row"] for c in cases}
missing = sorted(set(rows) - named)
unknown = sorted(named - set(rows))
if missing or unknown:
    sys.exit("gen.py: built-in rows without a line in %s: %s; lines naming no row: %s"
             % (table, missing, unknown))
climbed = {el.split("/")[0] for c in cases for el in c["chain"]}
for c in cases:
    if c["action"] == "-" and c["row"] not in climbed:
        sys.exit("gen.py: %s has no action and is in no chain" % c["row"])

items = []
seq = [0]


def obj(kvg, name, ns, owner):
    kind, group = kvg
    version = rows.get("%s.%s" % (kind, group or "core"), (group, "v1", kind))[1]
    seq[0] += 1
    o = {"apiVersion": "%s/%s" % (group, version) if group else version, "kind": kind,
         "metadata": {"name": name, "namespace": ns,
                      "uid": "6a1e0000-0000-4000-8000-%012d" % seq[0],
                      "creationTimestamp": "2023-11-14T20:00:00Z", "generation": 1},
         "spec": {}}
    if owner:
        o["metadata"]["ownerReferences"] = [{
            "apiVersion": owner["apiVersion"], "kind": owner["kind"],
            "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}]
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "LeaderWorkerSet"):
        o["spec"]["replicas"] = 1
    if kind == "RayJob":
        o["spec"]["shutdownAfterJobFinishes"] = True
        o["status"] = {"jobDeploymentStatus": "Running"}
    if kind in ("PyTorchJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob", "MPIJob"):
        o["spec"]["runPolicy"] = {}
    if kind == "Job" and group == "batch.volcano.sh":
        o["status"] = {"state": {"phase": "Running"}}
    if kind == "Pod":
        o["spec"] = {"containers": [{"name": "main", "image": "rocm/pytorch:latest",
                                     "resources": {"limits": {"amd.com/gpu": "1"}}}]}
        o["status"] = {"phase": "Running"}
    items.append(o)
    return o


pods = []
done = set()
for c in cases:
    if c["action"] == "-" or c["ns"] in done:
        continue
    done.add(c["ns"])
    owner = None
    for el in c["chain"]:
        kg, name = el.split("/")
        kind, _, group = kg.partition(".")
        owner = obj((kind, "" if group == "core" else group), name, c["ns"], owner)
    obj(("Pod", ""), c["ns"] + "-0", c["ns"], owner)
    pods.append((c["ns"], c["ns"] + "-0"))

json.dump({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items},
          open(os.path.join(out, "cluster.json"), "w"), indent=1)
with open(os.path.join(out, "rules.yaml"), "w") as f:
    f.write("apiVersion: gpureclaim/v1\nkind: ReclaimRules\ndefaults:\n  policy: Always\n"
            "  threshold: 10\n  idleTimer: 15m\n  step: 15s\n  toleratedGap: 30s\n"
            "  noticePeriod: 0s\n  maxTerminationsPerCycle: 10\nrules:\n")
    for c in cases:
        if c["action"] != "-":
            f.write("- name: %s\n  action: %s\n  scope:\n    namespaces: [%s]\n"
                    % (c["ns"], c["action"], c["ns"]))
times = range(END - 1800, END + 601, 15)
json.dump({"status": "success", "data": {"resultType": "matrix", "result": [
    {"metric": {"namespace": ns, "pod": pod}, "values": [[t, "0.01"] for t in times]}
    for ns, pod in pods]}}, open(os.path.join(out, "range.json"), "w"))
json.dump({"status": "success", "data": {"resultType": "vector", "result": [
    {"metric": {"namespace": ns, "pod": pod, "resource": "amd.com/gpu"}, "value": [END, "1"]}
    for ns, pod in pods]}}, open(os.path.join(out, "instant.json"), "w"))
for c in cases:
    c["resource"] = rows[c["row"]][3]
    if c["action"] == "-":
        continue
    tk, tn = c["target"].split("/")
    kg = next((el.split("/")[0] for el in c["chain"] if el.split("/")[0].split(".")[0] == tk
               and el.split("/")[1] == tn), "Pod.core")
    g, v, _, res = rows[kg]
    c["path"] = "%s/namespaces/%s/%s/%s" % ("/apis/%s/%s" % (g, v) if g else "/api/v1",
                                           c["ns"], res, tn)
    if c["request"].startswith("command:"):  # the command's group/version/resource (kinds.c)
        c["command_path"] = "/apis/bus.volcano.sh/v1alpha1/namespaces/%s/commands" % c["ns"]
    c["kind"], c["name"] = tk, tn
    c["restore_target"] = "%s/%s%s/%s" % (c["ns"], res, "." + g if g else "", tn)
json.dump(cases,
          open(os.path.join(out, "cases.json"), "w"))
print(len(rows))
