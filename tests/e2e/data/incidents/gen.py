#!/usr/bin/env python3
"""The cluster of the README's "Incidents" section (tests/e2e/readme_incidents.sh): namespace
`ml`, Deployment train -> ReplicaSet train-7f -> pod train-7f-x2k9p holding one GPU, idle (1 %)
every 15 s for the hour before END; and Deployment infer -> infer-5c -> infer-5c-q8m4t,
idle as well, which the section keeps with gpureclaim.io/exempt=true; and the enforcer's
Deployment in namespace gpureclaim.
usage: gen.py DIR END   (END in Unix seconds; writes DIR/history.om for promtool and DIR/kube/objects.json for fake_kube)"""
import json
import os
import sys

out, END = sys.argv[1], int(sys.argv[2])
os.makedirs(out + "/kube", exist_ok=True)


def meta(name, uid, owner=None):
    m = {"name": name, "namespace": "ml", "uid": uid, "generation": 1,
         "creationTimestamp": "2023-11-01T00:00:00Z"}
    if owner:
        m["ownerReferences"] = [dict(owner, controller=True)]
    return m


items = []
pods = []
for dep, rs, pod in (("train", "train-7f", "train-7f-x2k9p"),
                     ("infer", "infer-5c", "infer-5c-q8m4t")):
    items += [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(dep, dep + "-dep"),
         "spec": {"replicas": 1}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet",
         "metadata": meta(rs, dep + "-rs", {"apiVersion": "apps/v1", "kind": "Deployment",
                                            "name": dep, "uid": dep + "-dep"}),
         "spec": {"replicas": 1}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": meta(pod, dep + "-pod", {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": rs, "uid": dep + "-rs"}),
         "spec": {}, "status": {"phase": "Running"}},
    ]
    pods.append(pod)
# The enforcer's own Deployment, which the section scales to zero.
items.append({"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": dict(meta("gpureclaim-enforcer", "enforcer-dep"),
                               namespace="gpureclaim"),
              "spec": {"replicas": 2}})
json.dump({"apiVersion": "v1", "kind": "List", "items": items},
          open(out + "/kube/objects.json", "w"), indent=1)

with open(out + "/history.om", "w") as f:
    for name, value in (("gpureclaim:workload_busy:ratio", "0.01"),
                        ("gpureclaim:workload_devices:count", "1")):
        f.write("# TYPE %s gauge\n" % name)
        for pod in pods:
            extra = ',resource="amd.com/gpu"' if "devices" in name else ""
            for t in range(END - 3600, END + 1, 15):
                f.write('%s{namespace="ml",pod="%s"%s} %s %d\n' % (name, pod, extra, value, t))
    f.write("# EOF\n")
