#!/usr/bin/env python3
"""The GPU node of `make demo-kube`: what the kubelet's device manager would tell the exporter.

kwok runs the demo's pods on a fake node (gpu-node-1, advertising amd.com/gpu): they are
Running in the API server but nothing executes and no device is handed out. This program
stands in for the node's device manager: every --interval seconds it lists the pods bound to
--node through kubectl, gives each Running pod that requests amd.com/gpu that many partitions
of the simulated 8 x MI300X CPX tree (the first free ones; a pod keeps its partitions for its
life, and a pod that is gone or terminating releases them, as the kubelet does), and writes

  * --podres-file: the kubelet pod-resources answer (List and GetAllocatableResources, the
    proto field names of tests/podres/api.proto) that tests/podres/server.js --reload serves
    to the exporter on its kubelet socket, so ownership reaches the exporter through the real
    gRPC API;
  * --workloads-file: the simulator's workloads (simulate.py --workloads-file): each pod's
    partitions and its activity profile, the pod label gpureclaim.io/demo-profile.

So the activity the enforcer sees is the exporter's, read from the simulator's sysfs tree and
attributed to pods through the pod-resources API: the same path as on a real node; only the
busy values are generated. Each file is written under a temporary name and renamed into place.
Python 3 standard library only.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simulate  # noqa: E402  (the device ids of the tree, as the simulator names them)

RESOURCE = "amd.com/gpu"
LABEL_PROFILE = "gpureclaim.io/demo-profile"


def write_atomic(path, obj):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")
    os.rename(tmp, path)


def device_order(sysfs):
    """Every device id of the tree, GPU by GPU, partition by partition."""
    _, devices = simulate.discover(sysfs)
    return [d for d, _ in sorted(devices.items(), key=lambda kv: (kv[1][0].bdf, kv[1][1]))]


def gpus_requested(pod):
    n = 0
    for c in pod["spec"].get("containers", []):
        res = c.get("resources", {})
        v = res.get("limits", {}).get(RESOURCE) or res.get("requests", {}).get(RESOURCE)
        if v:
            n += int(v)
    return n


def node_pods(kubectl, node):
    """The pods bound to the node, or None when the API cannot be read (keep what we had)."""
    try:
        out = subprocess.run([kubectl, "get", "pods", "-A", "-o", "json",
                              "--field-selector=spec.nodeName=" + node],
                             capture_output=True, timeout=10, check=True).stdout
        return json.loads(out)["items"]
    except (OSError, subprocess.SubprocessError, ValueError, KeyError):
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sysfs", required=True, help="the simulator's sysfs tree")
    ap.add_argument("--node", default="gpu-node-1")
    ap.add_argument("--kubectl", default="kubectl")
    ap.add_argument("--podres-file", required=True)
    ap.add_argument("--workloads-file", required=True)
    ap.add_argument("--interval", type=float, default=1.0)
    args = ap.parse_args(argv)

    order = device_order(args.sysfs)
    if not order:
        raise SystemExit("kube_node: no device in '%s'" % args.sysfs)
    given = {}  # pod uid -> (namespace, name, container, profile, [device ids])
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
    while not stopping:
        pods = node_pods(args.kubectl, args.node)
        if pods is not None:
            live = {}
            for p in pods:
                m = p["metadata"]
                if p.get("status", {}).get("phase") != "Running" or m.get("deletionTimestamp"):
                    continue
                n = gpus_requested(p)
                if n:
                    live[m["uid"]] = (p, n)
            for uid in list(given):
                if uid not in live:
                    del given[uid]
            used = {d for g in given.values() for d in g[4]}
            for uid, (p, n) in sorted(live.items(), key=lambda kv: kv[1][0]["metadata"]["name"]):
                if uid in given:
                    continue
                free = [d for d in order if d not in used][:n]
                if len(free) < n:
                    print("kube_node: no %d free partitions for '%s'" % (n, p["metadata"]["name"]),
                          file=sys.stderr)
                    continue
                used.update(free)
                m = p["metadata"]
                given[uid] = (m["namespace"], m["name"], p["spec"]["containers"][0]["name"],
                              m.get("labels", {}).get(LABEL_PROFILE, "idle"), free)
            write_atomic(args.podres_file, {
                "list": {"pod_resources": [
                    {"name": name, "namespace": ns, "containers": [
                        {"name": ctr, "devices": [{"resource_name": RESOURCE, "device_ids": devs}]}]}
                    for ns, name, ctr, _, devs in sorted(given.values())]},
                "allocatable": {"devices": [{"resource_name": RESOURCE, "device_ids": order}]},
            })
            write_atomic(args.workloads_file, [
                {"name": "%s/%s" % (ns, name), "profile": prof, "devices": devs, "running": True}
                for ns, name, _, prof, devs in sorted(given.values())])
        end = time.monotonic() + args.interval
        while not stopping and time.monotonic() < end:
            time.sleep(0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
