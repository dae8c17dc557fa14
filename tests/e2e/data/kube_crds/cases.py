#!/usr/bin/env python3
"""The objects, rules and checks of tests/e2e/kube_crds.sh, on a real API server with the
upstream CRDs installed (tests/kube/crds.sh).

usage: cases.py create KINDS_C OUTDIR [CONTROLLER...]
       cases.py check stopped|restored OUTDIR
       cases.py discovery KINDS_C OUTDIR

create: one namespace per case, its chain of owners made top-down through `kubectl create`
(each child's ownerReference carries its owner's real uid), and under the last one a GPU pod
that kwok runs, unless a controller named on the command line makes the children itself
(jobset, lws). Every object is minimal but complete for its CRD's schema: the server's
validation is what is tested. Writes OUTDIR/rules.yaml (one rule per namespace, notice period
0) and OUTDIR/cases.json.

check: reads each target back (kubectl get -o json, as the admin) and prints "PASS NAME" or
"FAIL NAME (why)" per check: after the stop, the field the row's way sets is set (or, for a
kind whose installed CRD lacks the field, that the enforcer did not count it acted); after
restore, the value is the original one again (or restore refused a delete).

discovery: per kinds.c row whose group is installed, the row's version against what /apis
says the group serves and prefers.
"""
import json
import os
import re
import subprocess
import sys

GPU = {"limits": {"amd.com/gpu": "1"}}
IMAGE = "rocm/pytorch:latest"


def ctr(name="main"):
    return {"name": name, "image": IMAGE, "resources": GPU}


def podspec(restart=None):
    s = {"containers": [ctr()]}
    if restart:
        s["restartPolicy"] = restart
    return s


def tmpl(restart=None):
    return {"spec": podspec(restart)}


def ray_head():
    return {"headGroupSpec": {"rayStartParams": {},
                              "template": {"spec": {"containers": [ctr("ray-head")]}}}}


def replicas(*types):
    return {t: {"replicas": 1, "restartPolicy": "Never", "template": tmpl()} for t in types}


SUSPEND = (["spec", "suspend"], True, False)
RUNPOLICY = (["spec", "runPolicy", "suspend"], True, False)
KSERVE = (["metadata", "annotations", "serving.kserve.io/stop"], "true", None)

# Each case: ns, the rule's action, the chain (apiVersion, kind, name, spec, extra) top-down,
# what the stop sets on the target (the chain's first object): (path, stopped, restored), or
# "delete", "kueue" (the Workload deactivated instead), "pruned" (the installed CRD has no
# such field: the enforcer must not count it acted). controller: made by that controller when
# it runs (no pod of ours).
CASES = [
    dict(ns="js", action="suspend", stop=SUSPEND, controller="jobset", chain=[
        # with what JobSet's defaulting webhook would add (pkg/webhooks/jobset_webhook.go,
        # Default): the controller runs without its webhooks, and dereferences spec.network
        ("jobset.x-k8s.io/v1alpha2", "JobSet", "sweep", {
            "successPolicy": {"operator": "All"}, "startupPolicy": {"startupPolicyOrder": "AnyOrder"},
            "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
            "replicatedJobs": [{"name": "workers", "replicas": 1, "template": {"spec": {
                "parallelism": 1, "completions": 1, "backoffLimit": 0, "completionMode": "Indexed",
                "template": tmpl("Never")}}}]}, {})]),
    dict(ns="lws", action="scaleToZero", stop="scale", controller="lws", chain=[
        # with what LWS's defaulting webhook would add (pkg/webhooks/leaderworkerset_webhook.go)
        ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "lws", {
            "replicas": 1, "leaderWorkerTemplate": {
                "size": 1, "restartPolicy": "RecreateGroupOnPodRestart", "workerTemplate": tmpl()},
            "rolloutStrategy": {"type": "RollingUpdate", "rollingUpdateConfiguration": {
                "maxUnavailable": 1, "maxSurge": 0, "partition": 0}},
            "networkConfig": {"subdomainPolicy": "Shared"}}, {})]),
    dict(ns="rc", action="suspend", stop=SUSPEND, controller="kuberay", chain=[
        ("ray.io/v1", "RayCluster", "rc", ray_head(), {})]),
    dict(ns="rj", action="suspend", stop=SUSPEND, chain=[
        ("ray.io/v1", "RayJob", "rj", {"entrypoint": "python train.py",
                                       "shutdownAfterJobFinishes": True,
                                       "rayClusterSpec": ray_head()},
         {"status": {"jobDeploymentStatus": "Running"}}),
        ("ray.io/v1", "RayCluster", "rj-raycluster-x1", ray_head(), {})]),
    # KubeRay before 1.7.0 has no RayService spec.suspend: the server prunes it and answers 200
    dict(ns="rsvc", action="suspend", stop="pruned", chain=[
        ("ray.io/v1", "RayService", "serve", {"rayClusterConfig": ray_head()}, {}),
        ("ray.io/v1", "RayCluster", "serve-raycluster-y2", ray_head(), {})]),
    dict(ns="isvc", action="scaleToZero", stop=KSERVE, chain=[
        ("serving.kserve.io/v1beta1", "InferenceService", "llm", {"predictor": {"model": {
            "modelFormat": {"name": "sklearn"}, "storageUri": "pvc://models/llm"}}}, {})]),
    # a serverless InferenceService: its pods are under Knative's Service, Configuration and
    # Revision, which the walk climbs through
    dict(ns="kn", action="suspend", stop=KSERVE, chain=[
        ("serving.kserve.io/v1beta1", "InferenceService", "kn", {"predictor": {"model": {
            "modelFormat": {"name": "sklearn"}, "storageUri": "pvc://models/kn"}}},
         {"annotations": {"serving.kserve.io/deploymentMode": "Serverless"}}),
        ("serving.knative.dev/v1", "Service", "kn-predictor",
         {"template": {"spec": {"containers": [ctr()]}}}, {}),
        ("serving.knative.dev/v1", "Configuration", "kn-predictor",
         {"template": {"spec": {"containers": [ctr()]}}}, {}),
        ("serving.knative.dev/v1", "Revision", "kn-predictor-00001",
         {"containers": [ctr()]}, {})]),
    dict(ns="llm", action="suspend", stop=KSERVE, chain=[
        ("serving.kserve.io/v1alpha1", "LLMInferenceService", "qwen",
         {"model": {"uri": "pvc://models/qwen"}}, {})]),
    dict(ns="tj", action="suspend", stop=SUSPEND, chain=[
        ("trainer.kubeflow.org/v1alpha1", "TrainJob", "tj",
         {"runtimeRef": {"name": "torch-distributed"}}, {})]),
    dict(ns="ptj", action="suspend", stop=RUNPOLICY, chain=[
        ("kubeflow.org/v1", "PyTorchJob", "ptj", {"pytorchReplicaSpecs": replicas("Master")}, {})]),
    dict(ns="tfj", action="suspend", stop=RUNPOLICY, chain=[
        ("kubeflow.org/v1", "TFJob", "tfj", {"tfReplicaSpecs": replicas("Worker")}, {})]),
    dict(ns="xgb", action="suspend", stop=RUNPOLICY, chain=[
        ("kubeflow.org/v1", "XGBoostJob", "xgb", {"xgbReplicaSpecs": replicas("Master")}, {})]),
    dict(ns="pdl", action="suspend", stop=RUNPOLICY, chain=[
        ("kubeflow.org/v1", "PaddleJob", "pdl", {"paddleReplicaSpecs": replicas("Worker")}, {})]),
    dict(ns="jax", action="suspend", stop=RUNPOLICY, chain=[
        ("kubeflow.org/v1", "JAXJob", "jax", {"jaxReplicaSpecs": replicas("Worker")}, {})]),
    dict(ns="mpi", action="suspend", stop=RUNPOLICY, chain=[
        ("kubeflow.org/v2beta1", "MPIJob", "mpi", {"mpiReplicaSpecs": replicas("Launcher", "Worker")},
         {})]),
    dict(ns="aw", action="suspend", stop=SUSPEND, chain=[
        ("workload.codeflare.dev/v1beta2", "AppWrapper", "aw", {"components": [{"template": {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "aw-0"},
            "spec": podspec("Never")}}]}, {})]),
    dict(ns="wf", action="delete", stop="delete", chain=[
        ("argoproj.io/v1alpha1", "Workflow", "wf", {"entrypoint": "main", "templates": [
            {"name": "main", "container": {"image": IMAGE}}]}, {})]),
    # a CronWorkflow is a schedule: the walk stops below it and deletes this run's Workflow
    dict(ns="cwf", action="delete", stop="delete", top=1, chain=[
        ("argoproj.io/v1alpha1", "CronWorkflow", "nightly", {
            "schedules": ["0 2 * * *"], "workflowSpec": {"entrypoint": "main", "templates": [
                {"name": "main", "container": {"image": IMAGE}}]}}, {}),
        ("argoproj.io/v1alpha1", "Workflow", "nightly-2850", {"entrypoint": "main", "templates": [
            {"name": "main", "container": {"image": IMAGE}}]}, {})]),
    # a Job Kueue admitted (label queue-name): its Workload is deactivated, the Job left alone
    dict(ns="kq", action="suspend", stop="kueue", controller="job", chain=[
        ("batch/v1", "Job", "kj", {"parallelism": 1, "completions": 1, "backoffLimit": 0,
                                   "template": tmpl("Never")},
         {"labels": {"kueue.x-k8s.io/queue-name": "lq"}})]),
]


def kubectl(*args, stdin=None):
    r = subprocess.run(["kubectl"] + list(args), input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("kubectl %s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


def create(o):
    return json.loads(kubectl("create", "-o", "json", "-f", "-", stdin=json.dumps(o)))


def rows_of(kinds_c):
    rows = {}
    for g, v, k, res in re.findall(
            r'ROW\("([^"]*)", "([^"]*)", "([^"]*)", (?:true|false), "([^"]*)"',
            open(kinds_c).read()):
        rows[(g, k)] = (v, res)
    return rows


def group_of(api_version):
    return api_version.split("/")[0] if "/" in api_version else ""


def do_create(kinds_c, out, controllers):
    rows = rows_of(kinds_c)
    cases = []
    kq = [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
         "metadata": {"name": "gpu"}, "spec": {}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [{
             "coveredResources": ["amd.com/gpu"],
             "flavors": [{"name": "gpu", "resources": [{"name": "amd.com/gpu",
                                                        "nominalQuota": 4}]}]}]}},
    ]
    for c in CASES:
        kubectl("create", "namespace", c["ns"])
        if c["ns"] == "kq":
            for o in kq:
                create(o)
            create({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                    "metadata": {"name": "lq", "namespace": "kq"}, "spec": {"clusterQueue": "cq"}})
        owner = None
        made = []
        for api, kind, name, spec, extra in c["chain"]:
            meta = {"name": name, "namespace": c["ns"]}
            meta.update({k: v for k, v in extra.items() if k in ("labels", "annotations")})
            if owner:
                meta["ownerReferences"] = [{"apiVersion": owner["apiVersion"],
                                            "kind": owner["kind"],
                                            "name": owner["metadata"]["name"],
                                            "uid": owner["metadata"]["uid"], "controller": True}]
            owner = create({"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec})
            if "status" in extra:
                kubectl("patch", "-n", c["ns"], "%s.%s" % (kind.lower(), group_of(api)), name,
                        "--subresource=status", "--type=merge", "-p", json.dumps(extra))
            made.append(owner)
        if c["ns"] == "kq":
            job = made[0]
            create({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                    "metadata": {"name": "job-kj-1", "namespace": "kq",
                                 "labels": {"kueue.x-k8s.io/job-uid": job["metadata"]["uid"]},
                                 "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                                      "name": "kj",
                                                      "uid": job["metadata"]["uid"],
                                                      "controller": True}]},
                    "spec": {"queueName": "lq", "active": True, "podSets": [
                        {"name": "main", "count": 1, "template": tmpl("Never")}]}})
        ctl = c.get("controller")
        if ctl not in controllers and ctl != "job":
            create({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": c["ns"] + "-0", "namespace": c["ns"],
                                 "labels": {"case": c["ns"]},
                                 "ownerReferences": [{"apiVersion": owner["apiVersion"],
                                                      "kind": owner["kind"],
                                                      "name": owner["metadata"]["name"],
                                                      "uid": owner["metadata"]["uid"],
                                                      "controller": True}]},
                    "spec": podspec()})
        top = made[c.get("top", 0)]
        api, kind = top["apiVersion"], top["kind"]
        g = group_of(api)
        v, res = rows[(g, kind)]
        cases.append(dict(ns=c["ns"], action=c["action"], kind=kind, group=g, row_version=v,
                          resource="%s.%s" % (res, g) if g else res,
                          name=top["metadata"]["name"], uid=top["metadata"]["uid"],
                          stop=c["stop"], controller=ctl if ctl in controllers else None,
                          restore_target="%s/%s%s/%s" % (c["ns"], res, "." + g if g else "",
                                                         top["metadata"]["name"])))
    json.dump(cases, open(os.path.join(out, "cases.json"), "w"), indent=1)
    with open(os.path.join(out, "rules.yaml"), "w") as f:
        f.write("apiVersion: gpureclaim/v1\nkind: ReclaimRules\ndefaults:\n  policy: Always\n"
                "  threshold: 10\n  idleTimer: 15m\n  step: 15s\n  toleratedGap: 30s\n"
                "  noticePeriod: 0s\n  maxTerminationsPerCycle: 50\nrules:\n")
        for c in cases:
            f.write("- name: %s\n  action: %s\n  scope:\n    namespaces: [%s]\n"
                    % (c["ns"], c["action"], c["ns"]))
    print(len(cases))


def get(c):
    r = subprocess.run(["kubectl", "get", "-n", c["ns"], c["resource"], c["name"], "-o", "json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None if "NotFound" in r.stderr else r.stderr.strip()
    return json.loads(r.stdout)


def at(o, path):
    for k in path:
        if not isinstance(o, dict) or k not in o:
            return None
        o = o[k]
    return o


def out(ok, name, why=""):
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, " (%s)" % why if not ok and why else ""))


def audit_lines(d):
    p = os.path.join(d, "audit.jsonl")
    return [json.loads(l) for l in open(p)] if os.path.exists(p) else []


def do_check(stage, d):
    cases = json.load(open(os.path.join(d, "cases.json")))
    audit = audit_lines(d)
    for c in cases:
        o = get(c)
        n = "%s-%s" % (stage, c["ns"])
        acts = [a for a in audit if a.get("event") == "action"
                and a.get("workload", {}).get("namespace") == c["ns"]]
        if isinstance(o, str):
            out(False, n + "-read", o)
            continue
        s = c["stop"]
        if stage == "stopped":
            ok_acts = [a for a in acts if a.get("result") == "ok"]
            if s == "delete":
                out(o is None or o["metadata"].get("deletionTimestamp"), n + "-deleted",
                    "still there")
                out(len(ok_acts) == 1, n + "-audit-ok", "%d ok actions" % len(ok_acts))
                continue
            if o is None:
                out(False, n + "-exists", "gone")
                continue
            if s == "pruned":
                out(at(o, ["spec", "suspend"]) is None, n + "-field-pruned",
                    "spec.suspend=%r" % at(o, ["spec", "suspend"]))
                errs = [a for a in acts if a.get("result") == "error"
                        and "but is not stopped: the API dropped the field" in (a.get("message") or "")]
                out(not ok_acts and errs, n + "-not-counted-acted",
                    "audit: %s" % [(a.get("result"), a.get("message")) for a in acts])
                continue
            out(len(ok_acts) == 1, n + "-audit-ok",
                "audit: %s" % [(a.get("result"), a.get("message")) for a in acts])
            if s == "scale":
                out(at(o, ["spec", "replicas"]) == 0, n + "-replicas-0",
                    "spec.replicas=%r" % at(o, ["spec", "replicas"]))
                out(at(o, ["metadata", "annotations", "gpureclaim.io/replicas-before-reclaim"])
                    == "1", n + "-replicas-recorded")
            elif s == "kueue":
                wl = json.loads(kubectl("get", "-n", c["ns"], "workloads.kueue.x-k8s.io",
                                        "job-kj-1", "-o", "json"))
                out(at(wl, ["spec", "active"]) is False, n + "-workload-deactivated",
                    "spec.active=%r" % at(wl, ["spec", "active"]))
                out(at(o, ["spec", "suspend"]) is False, n + "-job-left-to-kueue",
                    "spec.suspend=%r" % at(o, ["spec", "suspend"]))
            else:
                path, stopped, _ = s
                out(at(o, path) == stopped, n + "-" + path[-1].split("/")[-1],
                    "%s=%r" % (".".join(path), at(o, path)))
            out(bool(at(o, ["metadata", "annotations", "gpureclaim.io/reclaim-notice"])),
                n + "-notice-annotation")
        else:
            rc_path = os.path.join(d, "restore-%s.rc" % c["ns"])
            rc = int(open(rc_path).read().strip()) if os.path.exists(rc_path) else None
            text = open(os.path.join(d, "restore-%s.out" % c["ns"])).read() \
                if os.path.exists(os.path.join(d, "restore-%s.out" % c["ns"])) else ""
            if s == "delete":
                out(rc == 1, n + "-refused", "exit %s: %s" % (rc, text.strip()[-200:]))
                continue
            if s == "pruned":  # never acted: nothing to undo, and restore says so
                out(rc == 1 and "was not acted on: nothing to undo" in text, n + "-nothing-to-undo",
                    "exit %s: %s" % (rc, text.strip()[-200:]))
                continue
            if s == "kueue":
                # Kueue's Workload was deactivated in the Job's stead: restore does not guess at
                # it and says to undo it by hand (act_kube.c: no acted record on the Job)
                out(rc == 1 and "undo it by hand" in text, n + "-refused-by-hand",
                    "exit %s: %s" % (rc, text.strip()[-200:]))
                continue
            out(rc == 0, n + "-exit-0", "exit %s: %s" % (rc, text.strip()[-300:]))
            if s == "scale":
                out(at(o, ["spec", "replicas"]) == 1, n + "-replicas-back",
                    "spec.replicas=%r" % at(o, ["spec", "replicas"]))
            else:
                path, _, restored = s
                out(at(o, path) == restored, n + "-" + path[-1].split("/")[-1] + "-back",
                    "%s=%r" % (".".join(path), at(o, path)))


def do_discovery(kinds_c, d):
    rows = rows_of(kinds_c)
    apis = json.loads(kubectl("get", "--raw", "/apis"))
    groups = {g["name"]: g for g in apis["groups"]}
    seen = {}
    for (g, k), (v, res) in sorted(rows.items()):
        if not g or g not in groups or g in ("apps", "batch"):
            continue
        served = [x["version"] for x in groups[g]["versions"]]
        pref = groups[g]["preferredVersion"]["version"]
        # the kind may be served at some versions of the group only (MPIJob: v2beta1 only)
        kv = []
        for ver in served:
            rl = json.loads(kubectl("get", "--raw", "/apis/%s/%s" % (g, ver)))
            if any(r["kind"] == k for r in rl["resources"]):
                kv.append(ver)
        if not kv:
            continue
        seen["%s.%s" % (k, g)] = dict(row=v, served=kv, preferred=pref)
        print("%s %s.%s row=%s served=%s preferred=%s" % (
            "SERVED" if v in kv else "NOT-SERVED", k, g, v, ",".join(kv), pref))
    json.dump(seen, open(os.path.join(d, "discovery.json"), "w"), indent=1)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "create":
        do_create(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif cmd == "check":
        do_check(sys.argv[2], sys.argv[3])
    elif cmd == "discovery":
        do_discovery(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: cases.py create|check|discovery ...")
