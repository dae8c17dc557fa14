#!/usr/bin/env python3
"""Checks of the Grafana dashboards in dashboards/ for tests/e2e/dashboards.sh.

There is no Grafana server on Debian 12, so the dashboards are checked by structure and by
running every panel query against a real Prometheus (tests/e2e/dashboards.sh):

  check.py structure DASHBOARD...          JSON, unique ids and uids, datasource variable, known
                                           metric names only
  check.py backfill OUT END METRICS_URL    OpenMetrics history for what the exporter on the
                                           fixture does not produce (owners, enforcer,
                                           kube-state-metrics), one hour ending at END
  check.py queries PROM_URL NOW DASHBOARD...  every variable and panel query, variables
                                           substituted, must return a non-empty result
  check.py queries --container-only PROM_URL NOW DASHBOARD...
                                           the same against a setup without Kubernetes (the
                                           demo: Podman containers only): the few queries in
                                           CONTAINER_ONLY_EMPTY must be empty, all others not
  check.py idle-history OUT END           OpenMetrics: 8 days of per-minute pod busy ratios and
                                           devices ending at END, with idle stretches of known
                                           length, a hole and an unknown device (IDLE_PODS)
  check.py idle-eval PASS PROM_URL FROM END OUT
                                           the rules of the group gpureclaim.idle_beyond, PASS 1
                                           (the per-pod rule) or 2 (the timer rules, which read
                                           the first), evaluated by the server every minute
                                           from FROM to END: OpenMetrics to backfill
  check.py idle-check PROM_URL END DASHBOARD  the panel "GPU-hours idle beyond each timer" on
                                           that history: its query's value per namespace and
                                           timer against the numbers worked out by hand
  check.py tsc-filter TSC_LOG SCHEMA_DIR    the tsc errors that are real: drops "string literal
                                           is not assignable to enum E" when the literal is a
                                           value of E (JSON carries enum values as strings)

Prints "PASS: dashboards/<name>" / "FAIL: dashboards/<name> (why)" lines; standard library only.
"""
import glob
import json
import os
import re
import sys
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import passfail  # noqa: E402

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DS_UID = "${datasource}"

# Metrics the dashboards may use beyond the exporter's golden outputs and the recording rules:
# the ownership metric, the enforcer's own metrics, the two kube-state-metrics series of the
# pressure signal, and Prometheus' `up`.
EXTRA_METRICS = {
    "gpureclaim_owner_info",
    "gpureclaim_enforcer_freed_gpu_seconds_total",
    "gpureclaim_enforcer_returns_total",
    "gpureclaim_enforcer_reclaimed_gpus",
    "gpureclaim_enforcer_build_info",
    "gpureclaim_enforcer_cycles_total",
    "gpureclaim_enforcer_cycle_duration_seconds",
    "gpureclaim_enforcer_last_success_timestamp_seconds",
    "gpureclaim_enforcer_decisions_total",
    "gpureclaim_enforcer_decisions",
    "gpureclaim_enforcer_prometheus_requests_total",
    "gpureclaim_enforcer_prometheus_errors_total",
    "gpureclaim_enforcer_rules_info",
    "gpureclaim_enforcer_rules_reload_success",
    "gpureclaim_enforcer_rules_reloads_total",
    "gpureclaim_enforcer_dry_run",
    "gpureclaim_enforcer_workload_idle_since_timestamp_seconds",
    "gpureclaim_enforcer_actions_total",
    "gpureclaim_enforcer_notices_total",
    "kube_pod_container_resource_requests",
    "kube_pod_status_unschedulable",
    "up",
}

# Values of the variables when queries run: multi-value variables use their allValue; these
# pick the workload that the backfill gives an owner, an idle run and live activity.
VARIABLES = {
    "gpureclaim-workload": {"namespace": "ml", "pod": "idle-b"},
}
# The same for --container-only: the workload is the demo's exempt container, idle and running
# from start to end, so the enforcer reports its idle run whenever the check runs.
VARIABLES_CONTAINER_ONLY = {
    "gpureclaim-workload": {"container": "pinned-erin"},
}
# What cannot have data without Kubernetes, and why. Everything else must return data.
CONTAINER_ONLY_EMPTY = {
    "gpureclaim-cluster.json/variable-namespace":
        "namespaces come from pod ownership (pod-resources); containers have none",
    "gpureclaim-cluster.json/panel-9A":
        "pending GPU demand is kube-state-metrics' unschedulable pods",
    "gpureclaim-workload.json/variable-namespace":
        "lists namespaces of gpureclaim:workload_busy:ratio, a pod-only recording rule",
    "gpureclaim-workload.json/variable-pod":
        "lists pods of gpureclaim:workload_busy:ratio, a pod-only recording rule",
    "gpureclaim-enforcer.json/variable-namespace":
        "the enforcer's idle workloads carry a namespace only under a pod identity",
    "gpureclaim-enforcer.json/panel-19A":
        "GPU-hours idle beyond each timer are per namespace, from the pod-only recording rules",
}
BUILTINS = {"__range": "1h", "__range_s": "3600", "__rate_interval": "1m", "__interval": "1m"}
RANGE_S = 3600
STEP_S = 60

report = passfail.Report("dashboards/")


def known_metrics():
    names = set(EXTRA_METRICS)
    for path in glob.glob(os.path.join(TOP, "tests", "golden", "*.prom")):
        with open(path) as f:
            for line in f:
                m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]", line)
                if m and not line.startswith("#"):
                    names.add(m.group(1))
    with open(os.path.join(TOP, "rules", "prometheus", "gpureclaim.rules.yml")) as f:
        for line in f:
            m = re.match(r"\s*- record:\s*(\S+)", line)
            if m:
                names.add(m.group(1))
    return names


def metric_names(expr):
    """Metric names in a PromQL expression: identifiers outside strings and label matchers
    that look like ours (gpureclaim_, kube_, a recording rule's colon, or `up`)."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", "", e)
    e = re.sub(r"\[[^\]]*\]", "", e)
    found = set()
    for tok in re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", e):
        if tok.startswith(("gpureclaim", "kube_")) or ":" in tok or tok == "up":
            found.add(tok)
    return found


def panels_of(d):
    for p in d.get("panels", []):
        yield p
        for q in p.get("panels", []) or []:
            yield q


def structure(paths):
    known = known_metrics()
    uids = {}
    for path in paths:
        base = os.path.basename(path)
        try:
            with open(path) as f:
                d = json.load(f)
        except (OSError, ValueError) as e:
            report(False, f"{base}/json", str(e))
            continue
        report(True, f"{base}/json")
        uid = d.get("uid", "")
        report(bool(uid) and uid not in uids, f"{base}/uid-unique",
               f"uid '{uid}' empty or also in {uids.get(uid)}")
        uids[uid] = base
        report(isinstance(d.get("schemaVersion"), int) and d["schemaVersion"] >= 36,
               f"{base}/schema-version", str(d.get("schemaVersion")))
        tvars = d.get("templating", {}).get("list", [])
        dsv = [v for v in tvars if v.get("type") == "datasource"]
        report(len(dsv) == 1 and dsv[0].get("name") == "datasource"
               and dsv[0].get("query") == "prometheus", f"{base}/datasource-variable")
        vnames = [v.get("name") for v in tvars]
        report(len(vnames) == len(set(vnames)), f"{base}/variables-unique", str(vnames))

        ids, bad_ds, bad_names, no_metric, positions = [], [], [], [], []
        for p in panels_of(d):
            ids.append(p.get("id"))
            if p.get("type") == "row":
                continue
            g = p.get("gridPos", {})
            positions.append((p.get("id"), g.get("x"), g.get("y"), g.get("w"), g.get("h")))
            if p.get("datasource", {}).get("uid") != DS_UID:
                bad_ds.append(f"panel {p.get('id')}")
            if not p.get("targets"):
                no_metric.append(f"panel {p.get('id')} has no query")
            for t in p.get("targets", []):
                if t.get("datasource", {}).get("uid") != DS_UID:
                    bad_ds.append(f"panel {p.get('id')} {t.get('refId')}")
                names = metric_names(t.get("expr", ""))
                unknown = sorted(names - known)
                if unknown:
                    bad_names.append(f"panel {p.get('id')}: {', '.join(unknown)}")
                if not names and "$threshold" not in t.get("expr", ""):
                    no_metric.append(f"panel {p.get('id')} {t.get('refId')} uses no metric")
        for v in tvars:
            if v.get("type") == "query":
                if v.get("datasource", {}).get("uid") != DS_UID:
                    bad_ds.append(f"variable {v.get('name')}")
                q = v.get("query", {})
                q = q.get("query", "") if isinstance(q, dict) else q
                unknown = sorted(metric_names(q) - known)
                if unknown:
                    bad_names.append(f"variable {v.get('name')}: {', '.join(unknown)}")
        report(len(ids) == len(set(ids)) and None not in ids, f"{base}/panel-ids-unique",
               str(sorted(i for i in ids if ids.count(i) > 1)))
        report(not bad_ds, f"{base}/datasource-variable-everywhere", "; ".join(bad_ds))
        report(not bad_names, f"{base}/known-metrics-only", "; ".join(bad_names))
        report(not no_metric, f"{base}/every-panel-queries", "; ".join(no_metric))
        overlap = []
        for i, a in enumerate(positions):
            if a[3] is None or a[1] + a[3] > 24:
                overlap.append(f"panel {a[0]} outside the 24-column grid")
            for b in positions[i + 1:]:
                if (a[1] < b[1] + b[3] and b[1] < a[1] + a[3] and a[2] < b[2] + b[4]
                        and b[2] < a[2] + a[4]):
                    overlap.append(f"panels {a[0]} and {b[0]}")
        report(not overlap, f"{base}/grid-no-overlap", "; ".join(overlap))


# ---- backfill -------------------------------------------------------------------------------

def scrape(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def backfill(out, end, metrics_url):
    """One hour of 15 s samples ending at END for the series the fixture exporter cannot give.
    Owners sit on real partitions of the fixture (device ids read from its partition_info) and
    carry the live exporter's instance, so the recording rules join them with live activity."""
    instance = urllib.parse.urlparse(metrics_url).netloc
    device = {}
    for line in scrape(metrics_url).splitlines():
        if line.startswith("gpureclaim_partition_info{"):
            lab = dict(re.findall(r'(\w+)="([^"]*)"', line))
            device[(lab["gpu"], lab["partition"])] = lab["device_id"]
    owners = [  # (gpu, partition, namespace, pod, container, container_name, source)
        ("0000:05:00.0", "0", "ml", "idle-b", "main", "", "podresources"),
        ("0000:05:00.0", "1", "ml", "idle-b", "main", "", "podresources"),
        ("0000:05:00.0", "2", "ml", "idle-b", "main", "", "podresources"),
        ("0000:05:00.0", "3", "ml", "idle-b", "main", "", "podresources"),
        ("0000:27:00.0", "0", "ml", "train-a", "main", "", "podresources"),
        ("0000:27:00.0", "1", "ml", "train-a", "main", "", "podresources"),
        ("0000:47:00.0", "2", "", "", "", "bench", "fdinfo"),
    ]
    fam = {}

    def add(name, labels, value_at):
        lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
        fam.setdefault(name, []).append((lab, value_at))

    for gpu, part, ns, pod, cont, cname, src in owners:
        add("gpureclaim_owner_info", {
            "instance": instance, "job": "gpureclaim-exporter", "gpu": gpu, "partition": part,
            "device_id": device.get((gpu, part), gpu), "resource": "amd.com/gpu" if pod else "",
            "namespace": ns, "pod": pod, "container": cont,
            "container_id": f"containerd://{pod or cname}", "container_name": cname,
            "source": src}, lambda i, t: 1)
    enf = {"instance": "127.0.0.1:9842", "job": "gpureclaim-enforcer"}
    rule = {"rule": "during-pressure"}
    add("up", enf, lambda i, t: 1)
    add("gpureclaim_enforcer_build_info", dict(enf, version="test"), lambda i, t: 1)
    add("gpureclaim_enforcer_cycles_total", dict(enf, result="success"), lambda i, t: i)
    add("gpureclaim_enforcer_cycles_total", dict(enf, result="error"), lambda i, t: i // 20)
    add("gpureclaim_enforcer_cycle_duration_seconds", enf, lambda i, t: 0.05)
    add("gpureclaim_enforcer_last_success_timestamp_seconds", enf, lambda i, t: t)
    for dec, reason, n in (("reclaim", "idle", 1), ("keep", "active", 1),
                           ("keep", "no_pressure", 0), ("keep", "too_young", 1)):
        add("gpureclaim_enforcer_decisions_total", dict(enf, decision=dec, reason=reason, **rule),
            lambda i, t, n=n: n * i)
        add("gpureclaim_enforcer_decisions", dict(enf, decision=dec, reason=reason, **rule),
            lambda i, t, n=n: n)
    add("gpureclaim_enforcer_prometheus_requests_total", enf, lambda i, t: 3 * i)
    add("gpureclaim_enforcer_prometheus_errors_total", enf, lambda i, t: i // 20)
    add("gpureclaim_enforcer_rules_info", dict(enf, file="/etc/gpureclaim/rules.yaml",
                                               version="gpureclaim/v1", hash="0123456789abcdef"),
        lambda i, t: 1)
    add("gpureclaim_enforcer_rules_reload_success", enf, lambda i, t: 1)
    add("gpureclaim_enforcer_rules_reloads_total", dict(enf, result="success"), lambda i, t: i // 60)
    add("gpureclaim_enforcer_rules_reloads_total", dict(enf, result="failure"), lambda i, t: 0)
    add("gpureclaim_enforcer_dry_run", enf, lambda i, t: 1)
    add("gpureclaim_enforcer_workload_idle_since_timestamp_seconds",
        dict(enf, namespace="ml", pod="idle-b", **rule), lambda i, t: end - 3600)
    add("gpureclaim_enforcer_actions_total", dict(enf, action="delete", result="success", **rule),
        lambda i, t: i // 40)
    add("gpureclaim_enforcer_notices_total", dict(enf, **rule), lambda i, t: i // 40)
    add("gpureclaim_enforcer_freed_gpu_seconds_total", dict(enf, namespace="ml", **rule),
        lambda i, t: 2 * 15 * i)
    add("gpureclaim_enforcer_returns_total", dict(enf, namespace="ml", within="1h", **rule),
        lambda i, t: i // 120)
    add("gpureclaim_enforcer_reclaimed_gpus", dict(enf, namespace="ml", **rule), lambda i, t: 2)
    ksm = {"instance": "127.0.0.1:8080", "job": "kube-state-metrics"}
    add("kube_pod_container_resource_requests", dict(ksm, namespace="ml", pod="waiting",
                                                     uid="u1", container="main", node="",
                                                     resource="amd_com_gpu", unit="integer"),
        lambda i, t: 2)
    add("kube_pod_status_unschedulable", dict(ksm, namespace="ml", pod="waiting", uid="u1"),
        lambda i, t: 1)

    times = list(range(end - 3600, end + 1, 15))
    with open(out, "w") as f:
        for name, series in fam.items():
            # Gauge for all: OpenMetrics counters would need the family name without _total.
            f.write(f"# TYPE {name} gauge\n")
            for lab, value_at in series:
                for i, t in enumerate(times):
                    f.write(f"{name}{{{lab}}} {value_at(i, t)} {t}\n")
        f.write("# EOF\n")


# ---- queries --------------------------------------------------------------------------------

def api(prom, path, params):
    url = prom + path + "?" + urllib.parse.urlencode(params, doseq=True)
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        try:
            return json.load(e)
        except ValueError:
            return {"status": "error", "error": str(e)}
    except OSError as e:
        return {"status": "error", "error": str(e)}


def substitute(text, values):
    def one(m):
        name = m.group(1) or m.group(2)
        return values.get(name, m.group(0))
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", one, text)


def check_result(ok_status, nonempty, name, why, container_only):
    """Report one query: non-empty, or under --container-only empty where listed."""
    if container_only and name in CONTAINER_ONLY_EMPTY:
        why = "returned data: drop it from CONTAINER_ONLY_EMPTY" if ok_status else why
        report(ok_status and not nonempty,
               f"{name} (expected empty: {CONTAINER_ONLY_EMPTY[name]})", why)
    else:
        report(ok_status and nonempty, name, why)


def queries(prom, now, paths, container_only=False):
    for path in paths:
        base = os.path.basename(path)
        with open(path) as f:
            d = json.load(f)
        values = dict(BUILTINS)
        fixed = (VARIABLES_CONTAINER_ONLY if container_only else VARIABLES).get(d.get("uid"), {})
        tvars = d.get("templating", {}).get("list", [])
        for v in tvars:
            name = v.get("name")
            if name in fixed:
                values[name] = fixed[name]
            elif v.get("includeAll") and v.get("allValue"):
                values[name] = v["allValue"]
            elif v.get("type") in ("textbox", "custom", "constant"):
                values[name] = v.get("current", {}).get("value", "")
        for v in tvars:
            if v.get("type") != "query":
                continue
            q = v.get("query", {})
            q = q.get("query", "") if isinstance(q, dict) else q
            m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", substitute(q, values))
            if not m:
                report(False, f"{base}/variable-{v['name']}", f"not label_values(): {q}")
                continue
            r = api(prom, f"/api/v1/label/{m.group(2)}/values",
                    {"match[]": m.group(1), "start": now - RANGE_S, "end": now})
            vals = r.get("data") or []
            want = fixed.get(v["name"])
            # A fixed value must be among the values; none at all is reported as empty.
            ok_status = r.get("status") == "success" and (want is None or want in vals or not vals)
            check_result(ok_status, bool(vals), f"{base}/variable-{v['name']}",
                         f"{r.get('error', '')} values {vals}", container_only)
        for p in panels_of(d):
            for t in p.get("targets", []):
                expr = substitute(t.get("expr", ""), values)
                name = f"{base}/panel-{p['id']}{t.get('refId', '')}"
                if "$" in expr:
                    report(False, name, f"unsubstituted variable in {expr}")
                    continue
                if t.get("instant"):
                    r = api(prom, "/api/v1/query", {"query": expr, "time": now})
                else:
                    r = api(prom, "/api/v1/query_range", {"query": expr, "start": now - RANGE_S,
                                                          "end": now, "step": STEP_S})
                res = (r.get("data") or {}).get("result") or []
                check_result(r.get("status") == "success", len(res) > 0, name,
                             f"{p.get('title')}: {r.get('error', 'empty result')}: {expr}",
                             container_only)


# ---- idle beyond each timer (7 days) ---------------------------------------------------------
#
# The recorded inputs of the group gpureclaim.idle_beyond (rules/prometheus/gpureclaim.rules.yml)
# for pods whose idle stretches are known, one sample a minute on whole minutes. The expected
# GPU-hours beyond a timer T are worked out by hand: an idle stretch of n minutes adds
# devices x (n - T) / 60 when n > T; a hole (nothing known: no sample of either series) or an
# unknown device (devices held, no busy ratio) ends the stretch. Each stretch's ends may be
# one evaluation off (Prometheus 2's ranges include their start, so one missing evaluation at
# a window's edge is tolerated), so the check allows 2 minutes per stretch and device.
IDLE_DAY = 86400
# (namespace, pod, devices, first day, [(start minute, idle minutes)] from the day's start,
#  holes [(start, minutes)], unknown [(start, minutes)], the pod's life in days from day 0)
IDLE_PODS = [
    # 10 h and 30 min idle: 2 x (585 + 15) / 60 = 20 beyond 15m, 2 x 540 / 60 = 18 beyond 1h,
    # 2 x 360 / 60 = 12 beyond 4h, nothing beyond 24h
    ("alpha", "a1", 2, [(2 * 1440, 600), (4 * 1440, 30)], [], []),
    # 30 h idle with a 10-minute hole after 12 h: stretches of 720 and 1070 minutes. Beyond 24h
    # nothing, where the 30 h without the hole would give 6.
    ("beta", "b1", 1, [(1 * 1440, 1800)], [(1 * 1440 + 720, 10)], []),
    # 8 h idle, one of its 4 devices unknown for 2 h after 3 h: stretches of 180 and 180,
    # 4 x 330 / 60 = 22 beyond 15m, 4 x 240 / 60 = 16 beyond 1h, nothing beyond 4h
    ("gamma", "g1", 4, [(5 * 1440, 480)], [], [(5 * 1440 + 180, 120)]),
    # always busy: 0 everywhere, still listed
    ("delta", "d1", 1, [], [], []),
]
IDLE_TIMERS = {"15m": 15, "1h": 60, "4h": 240, "24h": 1440}
# The comments' numbers: idle_expected() must give them (the check of the check).
IDLE_BY_HAND = {
    "alpha": (20, 18, 12, 0), "beta": (1760 / 60, 1670 / 60, 1310 / 60, 0),
    "gamma": (22, 16, 0, 0), "delta": (0, 0, 0, 0),
}


def idle_expected():
    """{(namespace, timer): (GPU-hours, tolerance)}."""
    out = {}
    for ns, _pod, dev, idle, holes, unknown in IDLE_PODS:
        cuts = holes + unknown
        stretches = []
        for start, n in idle:
            a = start
            for cs, cn in sorted(cuts):
                if start <= cs < start + n:
                    stretches.append(cs - a)
                    a = cs + cn
            stretches.append(start + n - a)
        for timer, t in IDLE_TIMERS.items():
            got = sum(dev * (n - t) for n in stretches if n > t) / 60
            out[(ns, timer)] = (got, dev * 2 * len(stretches) / 60)
    return out


def idle_history(out, end):
    """Day 0 starts 7 days before END; one day before it for the 24h windows."""
    day0 = end - 7 * IDLE_DAY
    first = day0 - IDLE_DAY
    busy = []
    devices = []
    for ns, pod, dev, idle, holes, unknown in IDLE_PODS:
        idle_m, hole_m, unknown_m = set(), set(), set()
        for start, n in idle:
            idle_m.update(range(start, start + n))
        for start, n in holes:
            hole_m.update(range(start, start + n))
        for start, n in unknown:
            unknown_m.update(range(start, start + n))
        lab = f'namespace="{ns}",pod="{pod}"'
        for t in range(first, end + 1, 60):
            m = (t - day0) // 60
            if m in hole_m:
                continue
            devices.append(f'gpureclaim:workload_devices:count{{{lab},resource="amd.com/gpu"}} '
                           f"{dev} {t}\n")
            if m not in unknown_m:
                v = 0.02 if m in idle_m else 0.55
                busy.append(f"gpureclaim:workload_busy:ratio{{{lab}}} {v} {t}\n")
    with open(out, "w") as f:
        f.write("# TYPE gpureclaim:workload_busy:ratio gauge\n")
        f.writelines(busy)
        f.write("# TYPE gpureclaim:workload_devices:count gauge\n")
        f.writelines(devices)
        f.write("# EOF\n")


def idle_eval(which, prom, start, end, out):
    """The group's rules of pass 1 or 2 evaluated as Prometheus evaluates a recording rule,
    one query at each minute from START to END (query_range, a day at a time), written as
    OpenMetrics. What `promtool tsdb create-blocks-from rules` does; not that command because
    Prometheus 2.42's writes no block when its first evaluation (offset by a hash of the file
    name) falls after the first 2h block (prometheus/prometheus#19714), and because the offset
    would put the evaluations off the minutes the history's samples are on."""
    sys.path.insert(0, os.path.dirname(__file__))
    from miniyaml import load
    with open(os.path.join(TOP, "rules", "prometheus", "gpureclaim.rules.yml")) as f:
        d = load(f.read())
    g = [g for g in d["groups"] if g["name"] == "gpureclaim.idle_beyond"][0]
    assert g["interval"] == "1m", g["interval"]
    rules = [r for r in g["rules"]
             if (r["record"] == "gpureclaim:workload_idle:bool") == (which == 1)]
    fam = {}
    for r in rules:
        for a in range(start, end + 1, 86400):
            z = min(a + 86400 - 60, end)
            res = api(prom, "/api/v1/query_range", {"query": r["expr"], "start": a, "end": z,
                                                     "step": 60})
            if res.get("status") != "success":
                raise SystemExit(f"idle-eval: {r['record']}: {res.get('error')}")
            for x in res["data"]["result"]:
                lab = dict(x["metric"], **(r.get("labels") or {}))
                lab.pop("__name__", None)
                key = ",".join(f'{k}="{v}"' for k, v in sorted(lab.items()))
                fam.setdefault(r["record"], {}).setdefault(key, []).extend(x["values"])
    with open(out, "w") as f:
        for name, series in fam.items():
            f.write(f"# TYPE {name} gauge\n")
            for key, vals in series.items():
                f.writelines(f"{name}{{{key}}} {v} {t}\n" for t, v in vals)
        f.write("# EOF\n")


IDLE_PANEL = "GPU-hours idle beyond each timer (7 days)"


def idle_check(prom, end, path):
    with open(path) as f:
        d = json.load(f)
    base = os.path.basename(path)
    panels = [p for p in panels_of(d) if p.get("title") == IDLE_PANEL]
    report(len(panels) == 1, f"{base}/idle-beyond-panel", f"{len(panels)} panels '{IDLE_PANEL}'")
    if not panels:
        return
    values = {"namespace": ".*", **BUILTINS}
    want = idle_expected()
    hand = {(ns, t): v for ns, vs in IDLE_BY_HAND.items() for t, v in zip(IDLE_TIMERS, vs)}
    report(set(hand) == set(want) and all(abs(want[k][0] - hand[k]) < 1e-9 for k in hand),
           f"{base}/idle-beyond-expected-by-hand", f"{want} != {hand}")
    for t in panels[0]["targets"]:
        expr = substitute(t["expr"], values)
        r = api(prom, "/api/v1/query", {"query": expr, "time": end})
        res = (r.get("data") or {}).get("result") or []
        got = {(x["metric"].get("namespace"), x["metric"].get("timer")): float(x["value"][1])
               for x in res}
        report(r.get("status") == "success" and set(got) == set(want),
               f"{base}/idle-beyond-series", f"{r.get('error', '')} got {sorted(got)}")
        for key in sorted(want):
            w, tol = want[key]
            g = got.get(key)
            print(f"idle-beyond {key[0]} {key[1]}: got {g}, want {w:.4f} +- {tol:.4f}")
            report(g is not None and abs(g - w) <= tol + 1e-9,
                   f"{base}/idle-beyond-{key[0]}-{key[1]}",
                   f"got {g}, want {w:.4f} +- {tol:.4f}")


# ---- tsc ------------------------------------------------------------------------------------

def tsc_filter(log, schema_dir):
    """Print the tsc errors left after dropping enum false positives; fail if any."""
    enums = {}
    for path in glob.glob(os.path.join(schema_dir, "**", "*.d.ts"), recursive=True):
        with open(path) as f:
            text = f.read()
        for m in re.finditer(r"enum (\w+) \{([^}]*)\}", text):
            enums.setdefault(m.group(1), set()).update(re.findall(r'= "([^"]*)"', m.group(2)))
    real = []
    keep = False
    with open(log) as f:
        for line in f:
            if re.search(r"error TS\d+", line):
                m = re.search(r"""Type '"([^"]*)"' is not assignable to type '(\w+)'""", line)
                keep = not (m and m.group(1) in enums.get(m.group(2), ()))
            elif not line.startswith(" "):
                keep = True  # not tsc's error format: show it
            if keep:
                real.append(line.rstrip())
    report(not real, "grafana-schema-types", "\n".join(real[:20]))


def main(argv):
    if len(argv) >= 2 and argv[1] == "structure":
        structure(argv[2:])
    elif len(argv) == 5 and argv[1] == "backfill":
        backfill(argv[2], int(argv[3]), argv[4])
    elif len(argv) == 4 and argv[1] == "idle-history":
        idle_history(argv[2], int(argv[3]))
    elif len(argv) == 7 and argv[1] == "idle-eval":
        idle_eval(int(argv[2]), argv[3].rstrip("/"), int(argv[4]), int(argv[5]), argv[6])
    elif len(argv) == 5 and argv[1] == "idle-check":
        idle_check(argv[2].rstrip("/"), int(argv[3]), argv[4])
    elif len(argv) == 4 and argv[1] == "tsc-filter":
        tsc_filter(argv[2], argv[3])
    elif len(argv) >= 5 and argv[1] == "queries" and argv[2] == "--container-only":
        queries(argv[3].rstrip("/"), int(argv[4]), argv[5:], container_only=True)
    elif len(argv) >= 4 and argv[1] == "queries":
        queries(argv[2].rstrip("/"), int(argv[3]), argv[4:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return report.status()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
