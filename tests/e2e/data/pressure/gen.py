#!/usr/bin/env python3
"""Canned answers for tests/e2e/pressure.sh, derived from ../kube_actions/ at run time.

usage: gen.py OUTDIR
Writes OUTDIR/prom-{range,instant}.json: press/press-a idle (1 %) from END - 1800 to
END + 1200 every 15 s, its allocation and the pending demand labelled as kube-state-metrics
writes the resource (resource="amd_com_gpu"); OUTDIR/kq-{range,instant}.json: batch/kq-fgh12
idle, resource="amd.com/gpu" (the Kueue-managed Job of ../kube_actions/cluster.json).
Kubernetes objects, each a `List`:
  pending-ksm.json        ../kube_actions/pending-gpu.json (queue/wait-gpu, "Insufficient
                          amd.com/gpu.");
  pending-collision.json  wait-gpu and its copy wait-gpu-2 that asks for amd_com/gpu and is
                          "Insufficient amd_com/gpu.": two resources that read alike once
                          sanitized;
  kueue-v1beta2.json      ../kube_actions/kueue-waiting.json at kueue.x-k8s.io/v1beta2 (the
                          fields read are the same in both versions);
  batch.json              the batch namespace of ../kube_actions/cluster.json.
"""
import copy
import json
import os
import sys

END = 1700000000
HERE = os.path.dirname(os.path.abspath(__file__))
KA = os.path.join(HERE, "..", "kube_actions")


def matrices(out, prefix, ns, pod, resource):
    times = range(END - 1800, END + 1201, 15)
    rng = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"namespace": ns, "pod": pod}, "values": [[t, "0.01"] for t in times]}]}}
    inst = {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"namespace": ns, "pod": pod, "resource": resource}, "value": [END, "1"]}]}}
    for name, doc in (("range", rng), ("instant", inst)):
        with open(os.path.join(out, "%s-%s.json" % (prefix, name)), "w") as f:
            json.dump(doc, f)


def load(name):
    with open(os.path.join(KA, name)) as f:
        return json.load(f)


def save(out, name, items):
    with open(os.path.join(out, name), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f, indent=1)


def main():
    out = sys.argv[1]
    matrices(out, "prom", "press", "press-a", "amd_com_gpu")
    matrices(out, "kq", "batch", "kq-fgh12", "amd.com/gpu")
    pending = load("pending-gpu.json")["items"]
    save(out, "pending-ksm.json", pending)
    other = copy.deepcopy(pending[0])
    other["metadata"]["name"] = "wait-gpu-2"
    other["metadata"]["uid"] = other["metadata"]["uid"][:-2] + "99"
    c = other["spec"]["containers"][0]["resources"]
    for m in ("requests", "limits"):
        c[m]["amd_com/gpu"] = c[m].pop("amd.com/gpu")
    cond = other["status"]["conditions"][0]
    cond["message"] = cond["message"].replace("amd.com/gpu", "amd_com/gpu")
    save(out, "pending-collision.json", pending + [other])
    wls = load("kueue-waiting.json")["items"]
    for w in wls:
        w["apiVersion"] = "kueue.x-k8s.io/v1beta2"
    save(out, "kueue-v1beta2.json", wls)
    save(out, "batch.json",
         [o for o in load("cluster.json")["items"] if o["metadata"].get("namespace") == "batch"])


main()
