#!/usr/bin/env python3
"""Checks of deploy/ for tests/e2e/deploy.sh (standard library only; PyYAML when present,
tests/dashboards/miniyaml.py otherwise).

  deploy_check.py manifests ALL_YAML    the output of `kubectl kustomize deploy/kubernetes`
  deploy_check.py flags EXPORTER_HELP ENFORCER_HELP FILE...
                                        every --flag in FILE is in the matching program's --help
  deploy_check.py libs CONTAINERFILE PACKAGE...
                                        the runtime stage installs every PACKAGE

Prints "PASS: deploy/<name>" / "FAIL: deploy/<name> (why)".
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import passfail  # noqa: E402

try:
    import yaml

    def load_all(text):
        return list(yaml.safe_load_all(text))

    def load(text):
        return yaml.safe_load(text)
except ImportError:
    from miniyaml import load, load_all

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NAMESPACE = "gpureclaim"
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding"}
report = passfail.Report("deploy/")


def get(d, *path, default=None):
    for p in path:
        if isinstance(d, dict):
            d = d.get(p)
        elif isinstance(d, list) and isinstance(p, int) and p < len(d):
            d = d[p]
        else:
            return default
        if d is None:
            return default
    return d


def check_pod(name, pod, port, want_args):
    c = get(pod, "spec", "containers", default=[])
    report(len(c) == 1, f"{name}/one-container")
    if not c:
        return
    c = c[0]
    args = c.get("args", [])
    missing = [a for a in want_args if a not in args]
    report(not missing, f"{name}/args", f"missing {missing} in {args}")
    ports = [p.get("containerPort") for p in c.get("ports", [])]
    report(port in ports, f"{name}/port-{port}", str(ports))
    for probe in ("livenessProbe", "readinessProbe"):
        report(get(c, probe, "httpGet", "path") == "/healthz"
               and get(c, probe, "httpGet", "port") in ("metrics", port),
               f"{name}/{probe}-healthz", str(c.get(probe)))
    sc = c.get("securityContext", {})
    report(sc.get("readOnlyRootFilesystem") is True, f"{name}/read-only-root")
    report(sc.get("allowPrivilegeEscalation") is False, f"{name}/no-privilege-escalation")
    report(get(sc, "capabilities", "drop") == ["ALL"] and not sc.get("privileged"),
           f"{name}/capabilities-dropped", str(sc.get("capabilities")))
    res = c.get("resources", {})
    report(all(get(res, k, r) for k in ("requests", "limits") for r in ("cpu", "memory")),
           f"{name}/resources", str(res))
    return c


def manifests(path):
    with open(path) as f:
        docs = [d for d in load_all(f.read()) if d]
    by = {}
    for d in docs:
        by.setdefault(d.get("kind"), []).append(d)
        n = get(d, "metadata", "name")
        ok = d.get("apiVersion") and n
        ns = get(d, "metadata", "namespace")
        ok = ok and (ns == NAMESPACE if d.get("kind") not in CLUSTER_SCOPED else ns is None)
        report(bool(ok), f"object-{d.get('kind')}-{n}", f"apiVersion/name/namespace {ns}")
    for kind in ("Namespace", "DaemonSet", "Deployment", "Service", "ServiceMonitor",
                 "ServiceAccount", "ConfigMap", "PrometheusRule"):
        report(kind in by, f"has-{kind}")

    # Exporter DaemonSet.
    ds = (by.get("DaemonSet") or [{}])[0]
    pod = get(ds, "spec", "template", default={})
    report(get(pod, "spec", "hostPID") is True, "exporter/host-pid")
    c = check_pod("exporter", pod, 9841, [
        "--path.sysfs=/host/sys", "--path.procfs=/host/proc", "--path.devfs=/host/dev",
        "--web.listen-address=:9841"])
    if c:
        caps = sorted(get(c, "securityContext", "capabilities", "add", default=[]))
        report(caps == ["DAC_READ_SEARCH", "SYS_PTRACE"], "exporter/only-needed-capabilities",
               str(caps))
        mounts = c.get("volumeMounts", [])
        report(mounts and all(m.get("readOnly") for m in mounts), "exporter/mounts-read-only")
        vols = {v["name"]: get(v, "hostPath", "path") for v in get(pod, "spec", "volumes", default=[])}
        paths = {m["mountPath"]: vols.get(m["name"]) for m in mounts}
        want = {"/host/sys": "/sys", "/host/proc": "/proc", "/host/dev/dri": "/dev/dri",
                "/var/lib/kubelet/pod-resources": "/var/lib/kubelet/pod-resources"}
        report(paths == want, "exporter/host-paths", str(paths))
        sock = [a for a in c.get("args", []) if a.startswith("--kubelet.pod-resources-socket=")]
        report(len(sock) == 1 and os.path.dirname(sock[0].split("=", 1)[1]) in paths,
               "exporter/socket-in-mounted-dir", str(sock))

    # Enforcer Deployment.
    dep = (by.get("Deployment") or [{}])[0]
    # Two replicas are safe only with leader election: exactly one acts.
    report(get(dep, "spec", "replicas") == 2, "enforcer/two-replicas")
    report("--leader-elect" in (get(dep, "spec", "template", "spec", "containers",
                                    default=[{}])[0].get("args") or []),
           "enforcer/leader-elect")
    env = {e.get("name"): e for e in get(dep, "spec", "template", "spec", "containers",
                                        default=[{}])[0].get("env") or []}
    report(get(env.get("POD_NAME", {}), "valueFrom", "fieldRef", "fieldPath") == "metadata.name",
           "enforcer/pod-name-identity")
    pdbs = by.get("PodDisruptionBudget", [])
    report(len(pdbs) == 1 and get(pdbs[0], "spec", "selector", "matchLabels") ==
           get(dep, "spec", "selector", "matchLabels"), "enforcer/pdb-selects-enforcer")
    lease_rules = [r for role in by.get("Role", []) for r in role.get("rules", [])
                   if "leases" in r.get("resources", [])]
    report(len(lease_rules) == 1 and sorted(lease_rules[0].get("verbs", [])) ==
           ["create", "get", "update"] and lease_rules[0].get("apiGroups") == ["coordination.k8s.io"],
           "enforcer/lease-rbac-minimal", str(lease_rules))
    report(not any("leases" in r.get("resources", []) for c in by.get("ClusterRole", [])
                   for r in c.get("rules", [])), "enforcer/lease-rbac-namespaced")
    pod = get(dep, "spec", "template", default={})
    report(get(pod, "spec", "securityContext", "runAsNonRoot") is True, "enforcer/non-root")
    c = check_pod("enforcer", pod, 9842, ["run", "--rules.file=/etc/gpureclaim/rules.yaml",
                                          "--dry-run", "--web.listen-address=:9842"])
    if c:
        report(any(a.startswith("--prometheus.url=") for a in c.get("args", [])),
               "enforcer/prometheus-url")
    sa = get(pod, "spec", "serviceAccountName")
    report(sa in [get(d, "metadata", "name") for d in by.get("ServiceAccount", [])],
           "enforcer/service-account", str(sa))
    bound = [(s.get("name"), s.get("namespace")) for b in by.get("ClusterRoleBinding", [])
             + by.get("RoleBinding", []) for s in b.get("subjects", [])
             if s.get("kind") == "ServiceAccount"]
    report((sa, NAMESPACE) in bound, "enforcer/service-account-bound", str(bound))
    cm_names = {get(d, "metadata", "name"): d for d in by.get("ConfigMap", [])}
    vol = [get(v, "configMap", "name") for v in get(pod, "spec", "volumes", default=[])
           if v.get("configMap")]
    report(len(vol) == 1 and vol[0] in cm_names, "enforcer/configmap-volume", str(vol))
    if vol and vol[0] in cm_names:
        data = get(cm_names[vol[0]], "data", "rules.yaml", default="")
        with open(os.path.join(TOP, "rules", "during-pressure.yaml")) as f:
            src = load(f.read())
        report(load(data) == src, "enforcer/configmap-is-during-pressure")

    # Services select their pods; ServiceMonitors select their Services by a named port.
    pods = [get(x, "spec", "template", "metadata", "labels", default={})
            for x in by.get("DaemonSet", []) + by.get("Deployment", [])]
    for svc in by.get("Service", []):
        n = get(svc, "metadata", "name")
        sel = get(svc, "spec", "selector", default={})
        report(bool(sel) and any(all(p.get(k) == v for k, v in sel.items()) for p in pods),
               f"service-{n}/selects-pods")
    for sm in by.get("ServiceMonitor", []):
        n = get(sm, "metadata", "name")
        sel = get(sm, "spec", "selector", "matchLabels", default={})
        svcs = [s for s in by.get("Service", [])
                if all(get(s, "metadata", "labels", k) == v for k, v in sel.items())]
        ports = {p.get("name") for s in svcs for p in get(s, "spec", "ports", default=[])}
        eps = [e.get("port") for e in get(sm, "spec", "endpoints", default=[])]
        report(len(svcs) == 1 and eps and all(e in ports for e in eps),
               f"servicemonitor-{n}/selects-service", f"{len(svcs)} services, ports {eps}")
        # The alerts match the job label the operator derives from the Service name.
        report(svcs and re.fullmatch(r"gpureclaim-(exporter|enforcer)", get(svcs[0], "metadata", "name")),
               f"servicemonitor-{n}/job-matches-alerts")

    # The PrometheusRule carries exactly the rule file.
    pr = (by.get("PrometheusRule") or [{}])[0]
    with open(os.path.join(TOP, "rules", "prometheus", "gpureclaim.rules.yml")) as f:
        rules = load(f.read())
    report(get(pr, "spec") == rules, "prometheusrule/equals-rule-file")


def flags(exporter_help, enforcer_help, files):
    helps = {}
    for name, path in (("exporter", exporter_help), ("enforcer", enforcer_help)):
        with open(path) as f:
            text = f.read()
        known = set(re.findall(r"--(?:\[no-\])?([a-z][a-z0-9._-]*)", text))
        no = set(re.findall(r"--\[no-\]([a-z][a-z0-9._-]*)", text))
        helps[name] = (known, no)
    for path in files:
        base = os.path.relpath(path, TOP)
        prog = "exporter" if "exporter" in os.path.basename(path) or "/exporter/" in path else \
            "enforcer" if "enforcer" in os.path.basename(path) or "/enforcer/" in path else None
        if prog is None:
            report(False, f"flags/{base}", "cannot tell which program the file configures")
            continue
        known, no = helps[prog]
        with open(path) as f:
            text = "\n".join(line for line in f if not line.lstrip().startswith("#"))
        used = set(re.findall(r"(?<![\w-])--([a-z][a-z0-9._-]*)", text))
        bad = []
        for u in sorted(used):
            if u in ("no-install-recommends", "from", "build-arg"):
                continue  # apt-get and Containerfile syntax, not our flags
            if u in known or (u.startswith("no-") and u[3:] in no):
                continue
            bad.append("--" + u)
        report(not bad, f"flags/{base}", f"not in gpureclaim-{prog} --help: {bad}")


def libs(containerfile, packages):
    with open(containerfile) as f:
        text = f.read()
    runtime = text.rsplit("\nFROM ", 1)[-1]
    installed = set(re.findall(r"[a-z0-9][a-z0-9.+-]+", runtime))
    missing = [p for p in packages if p not in installed]
    report(not missing, f"runtime-libs/{os.path.basename(containerfile)}",
           f"runtime stage lacks {missing}")


def main(argv):
    if len(argv) == 3 and argv[1] == "manifests":
        manifests(argv[2])
    elif len(argv) >= 4 and argv[1] == "flags":
        flags(argv[2], argv[3], argv[4:])
    elif len(argv) >= 3 and argv[1] == "libs":
        libs(argv[2], argv[3:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return report.status()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
