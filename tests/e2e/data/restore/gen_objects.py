#!/usr/bin/env python3
"""Objects for tests/e2e/restore.sh, in the List shape fake_kube loads: each as the engine
leaves it after an action (notice annotation with actedAt and the `acted` record, see
enforcer/restore.h), or changed since by someone else; with DIR, also DIR/flow/objects.json
and DIR/{range,instant}.json (fake_prom) for the act -> restore -> run flow.
usage: gen_objects.py OUT.json [DIR]"""
import json
import os
import sys

ACTED = "2023-11-14T22:13:20Z"


def notice(rule, action, acted):
    n = {"actAt": ACTED, "rule": rule, "action": action, "noticedAt": "2023-11-14T22:00:00Z",
         "uid": "pod-uid", "actedAt": ACTED}
    if acted is not None:
        n["acted"] = acted
    return json.dumps(n, separators=(",", ":"))


def obj(api, kind, name, uid, generation, ann, spec):
    return {"apiVersion": api, "kind": kind,
            "metadata": {"name": name, "namespace": "ml", "uid": uid, "generation": generation,
                         "creationTimestamp": "2023-11-01T00:00:00Z", "annotations": ann},
            "spec": spec}


def scaled(name, uid, generation, record_uid, record_gen):
    return obj("apps/v1", "Deployment", name, uid, generation,
               {"gpureclaim.io/replicas-before-reclaim": "2",
                "gpureclaim.io/reclaim-notice": notice("scale", "scaleToZero", {
                    "way": "scale", "uid": record_uid, "generation": record_gen,
                    "replicasBefore": 2})},
               {"replicas": 0})


def stopped_nb(name, uid, value):
    ann = {"gpureclaim.io/reclaim-notice": notice("nb", "stop", {
        "way": "annotate", "uid": uid, "key": "kubeflow-resource-stopped", "value": ACTED})}
    if value is not None:
        ann["kubeflow-resource-stopped"] = value
    return obj("kubeflow.org/v1", "Notebook", name, uid, 1, ann, {"template": {}})


items = [
    scaled("train", "d-1", 3, "d-1", 3),          # scale back to 2
    scaled("edited", "d-2", 4, "d-2", 3),         # spec changed since: refused
    scaled("replaced", "d-3-new", 1, "d-3", 1),   # another uid: refused
    stopped_nb("alice", "nb-1", ACTED),           # remove the stop annotation
    stopped_nb("bob", "nb-2", None),              # started through Kubeflow: refused
    stopped_nb("carol", "nb-3", "2023-11-15T08:00:00Z"),  # stopped again by someone: refused
    obj("ray.io/v1", "RayCluster", "ray", "rc-1", 5,
        {"gpureclaim.io/reclaim-notice": notice("ray", "suspend", {
            "way": "patch", "uid": "rc-1", "generation": 5,
            "undo": {"spec": {"suspend": False}}})},
        {"suspend": True}),                       # unpatch
    obj("apps/v1", "Deployment", "fresh", "d-4", 1, {}, {"replicas": 1}),  # never reclaimed
    obj("apps/v1", "Deployment", "old", "d-5", 2,
        {"gpureclaim.io/reclaim-notice": notice("scale", "scaleToZero", None)},
        {"replicas": 0}),                         # acted on before records existed
]
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(sys.argv[1], "w"),
          indent=1)

# The flow of restore.sh's second part: namespace `flow`, pods web-7f-abcde and web-7f-fghij
# under ReplicaSet web-7f under Deployment web (2 replicas), idle (1 %) every 15 s from
# END - 1800 on.
if len(sys.argv) > 2:
    END = 1700000000
    out = sys.argv[2]

    def meta(name, uid, owner=None):
        m = {"name": name, "namespace": "flow", "uid": uid,
             "creationTimestamp": "2023-11-01T00:00:00Z"}
        if owner:
            m["ownerReferences"] = [dict(owner, controller=True)]
        return m

    flow = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("web", "w-dep"),
         "spec": {"replicas": 2}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet",
         "metadata": meta("web-7f", "w-rs", {"apiVersion": "apps/v1", "kind": "Deployment",
                                             "name": "web", "uid": "w-dep"}),
         "spec": {"replicas": 2}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": meta("web-7f-abcde", "w-pod", {"apiVersion": "apps/v1",
                                                    "kind": "ReplicaSet", "name": "web-7f",
                                                    "uid": "w-rs"}),
         "spec": {}, "status": {"phase": "Running"}},
        # its second replica, idle too: one decision each, one notice for the Deployment
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": meta("web-7f-fghij", "w-pod2", {"apiVersion": "apps/v1",
                                                     "kind": "ReplicaSet", "name": "web-7f",
                                                     "uid": "w-rs"}),
         "spec": {}, "status": {"phase": "Running"}},
    ]
    json.dump({"apiVersion": "v1", "kind": "List", "items": flow},
              open(out + "/flow/objects.json", "w"), indent=1)
    times = range(END - 1800, END + 1200 + 1, 15)
    pods = [{"namespace": "flow", "pod": p} for p in ("web-7f-abcde", "web-7f-fghij")]
    json.dump({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": labels, "values": [[t, "0.01"] for t in times]} for labels in pods]}},
        open(out + "/range.json", "w"))
    json.dump({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": dict(labels, resource="amd.com/gpu"), "value": [END, "1"]}
        for labels in pods]}},
        open(out + "/instant.json", "w"))

    # The Kubeflow flow: pod nb-0 -> StatefulSet nb -> Notebook nb (namespace nbflow), idle.
    def nbmeta(name, uid, owner=None):
        m = meta(name, uid, owner)
        m["namespace"] = "nbflow"
        return m

    os.makedirs(out + "/nbflow", exist_ok=True)
    nbflow = [
        {"apiVersion": "kubeflow.org/v1", "kind": "Notebook", "metadata": nbmeta("nb", "n-nb"),
         "spec": {"template": {"spec": {"containers": [{"name": "nb"}]}}}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet",
         "metadata": nbmeta("nb", "n-sts", {"apiVersion": "kubeflow.org/v1", "kind": "Notebook",
                                            "name": "nb", "uid": "n-nb"}),
         "spec": {"replicas": 1}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": nbmeta("nb-0", "n-pod", {"apiVersion": "apps/v1", "kind": "StatefulSet",
                                              "name": "nb", "uid": "n-sts"}),
         "spec": {}, "status": {"phase": "Running"}},
    ]
    json.dump({"apiVersion": "v1", "kind": "List", "items": nbflow},
              open(out + "/nbflow/objects.json", "w"), indent=1)
    labels = {"namespace": "nbflow", "pod": "nb-0"}
    json.dump({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": labels, "values": [[t, "0.01"] for t in times]}]}},
        open(out + "/nb-range.json", "w"))
    json.dump({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": dict(labels, resource="amd.com/gpu"), "value": [END, "1"]}]}},
        open(out + "/nb-instant.json", "w"))
