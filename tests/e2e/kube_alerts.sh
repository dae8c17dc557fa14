#!/bin/sh
# The shipped alert GPUReclaimPermissionMissing, end to end on a real cluster and a real
# Prometheus, with nothing shortened: the shipped manifests applied (`kubectl apply -k
# deploy/kubernetes`, the Prometheus Operator's CRDs from its module), the PrometheusRule read
# back from the API server as the Operator would hand it to Prometheus, loaded unchanged
# (its `for: 5m` included) into Debian's Prometheus 2.42, which scrapes an enforcer running
# with a TokenRequest token of the shipped ServiceAccount after the one verb of pods/eviction
# was removed from the shipped ClusterRole. The alert must go pending at once, stay pending
# for its whole `for`, go firing after it with the permission's labels and a rendered
# description, and resolve once the role is restored and the enforcer checks again.
#
# Why a suite of its own: the `for` is five minutes of wall time, which kube_real (about a
# minute) should not wait. Prometheus cannot be made to pass `for` faster (the evaluation
# interval only samples it), and a test may not shorten the shipped rule, so this suite waits
# the real five minutes with the CPU nearly idle; `make check` runs it beside the CPU-bound
# stages, as it does the demo (Makefile, check-all).
# The other shipped alerts this cluster could raise: GPUReclaimEnforcerDown/ExporterDown
# (a scrape target down for 5m) say nothing about Kubernetes; GPUReclaimIdleWhileDemand needs
# an hour of idle history (its promtool test is tests/prometheus/gpureclaim.test.yml).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/kube/cluster.sh"

DATA=$TOP/tests/e2e/data/kube_real
ENF=$BIN/gpureclaim-enforcer
require python3 curl openssl go prometheus promtool "$ENF"
ALERT=GPUReclaimPermissionMissing

kube_cluster_start 4 1

# --- the shipped manifests, the PrometheusRule as the API server stores it ----------------------
kube_operator_crds
check apply-k-accepted into "$TMP/apply.out" kubectl apply -k "$TOP/deploy/kubernetes" ||
    cat "$TMP/apply.out" >&2
# The Operator writes a PrometheusRule's spec (its groups) into the rule file of the Prometheus
# it selects: that is what this Prometheus loads.
kubectl get prometheusrule gpureclaim -n gpureclaim -o json >"$TMP/prometheusrule.json"
python3 - "$TMP/prometheusrule.json" >"$TMP/rules.yml" <<'PY'
import json, sys, yaml
print(yaml.safe_dump(json.load(open(sys.argv[1]))["spec"], sort_keys=False))
PY
check rule-file-valid into "$TMP/promtool-check.out" promtool check rules "$TMP/rules.yml"
FOR=$(python3 - "$TMP/rules.yml" "$ALERT" <<'PY'
import sys, yaml
for g in yaml.safe_load(open(sys.argv[1]))["groups"]:
    for r in g["rules"]:
        if r.get("alert") == sys.argv[2]:
            print(r.get("for", ""))
PY
)
check alert-shipped [ "$FOR" = 5m ]
FOR_S=300

# --- one verb removed from the shipped ClusterRole ------------------------------------------------
kubectl kustomize "$TOP/deploy/kubernetes" >"$TMP/all.yaml"
kube_role_without_eviction "$TMP/all.yaml"

kube_sa_token gpureclaim gpureclaim-enforcer 3600 >"$TMP/sa.token" 2>"$TMP/token.err"
check sa-token-issued [ -s "$TMP/sa.token" ]

# --- Prometheus with the shipped rules, scraping the enforcer ---------------------------------------
ENF_PORT=$(free_port)
cat >"$TMP/prometheus.yml" <<EOF
global: {scrape_interval: 5s, scrape_timeout: 4s, evaluation_interval: 5s}
rule_files: ["$TMP/rules.yml"]
scrape_configs:
  - job_name: gpureclaim-enforcer
    static_configs: [{targets: ["127.0.0.1:$ENF_PORT"]}]
EOF
start_prometheus "$TMP/prometheus.yml" "$TMP/prom-data" ||
    { fail prometheus-ready "$(tail -n 5 "$TMP/prometheus.log")"; exit 1; }
pass prometheus-ready

# --kube.timeout 10 s: a permission review that times out on a loaded machine is "could not be
# checked", not "missing", and would leave the alert quiet (seen at a load average of 40).
KFLAGS="--kube.api-url=$KUBE_URL --kube.ca-file=$KUBE_CA --kube.token-file=$TMP/sa.token --kube.timeout=10s"
# start_enforcer LOG: the daemon in dry run (the rules of kube_real: one uses evict in 'serve'),
# on ENF_PORT; it checks its permissions at start.
start_enforcer() {
    # shellcheck disable=SC2086
    start_bg "$1" "$ENF" run --rules.file="$DATA/rules.yaml" --prometheus.url="$PROM_URL" \
        --enforce.interval=1m --dry-run $KFLAGS --state.file="$TMP/enf.state" \
        --audit.file="$TMP/enf.audit" --web.listen-address="127.0.0.1:$ENF_PORT"
    ENF_PID=$LAST_PID
    wait_for 60 grep -q 'permission check:' "$1"
}
check enforcer-checked start_enforcer "$TMP/enf1.log"
if grep -q "permission missing: cannot create 'pods/eviction' in namespace 'serve'; needed by rule 'evict' (evict)" \
    "$TMP/enf1.log"; then
    pass enforcer-names-eviction
else
    fail enforcer-names-eviction "$(grep 'permission' "$TMP/enf1.log" | head -n 5)"
fi

# alert_state: the alert's state in Prometheus (/api/v1/alerts), "inactive" when absent;
# ALERT_JSON holds its entry.
alert_state() {
    curl -s "$PROM_URL/api/v1/alerts" >"$TMP/alerts.json" 2>/dev/null
    python3 - "$TMP/alerts.json" "$ALERT" <<'PY'
import json, sys
try:
    alerts = json.load(open(sys.argv[1]))["data"]["alerts"]
except (ValueError, KeyError):
    print("unknown")
    sys.exit(0)
a = [x for x in alerts if x["labels"].get("alertname") == sys.argv[2]]
print(a[0]["state"] if len(a) == 1 else "inactive" if not a else "several")
PY
}
is_state() { [ "$(alert_state)" = "$1" ]; }

T_START=$(date +%s)
if ! wait_for 60 is_state pending; then
    fail alert-pending "state '$(alert_state)' after 60 s; $(curl -s "$PROM_URL/api/v1/query" \
        --data-urlencode 'query=gpureclaim_enforcer_permission_missing' | head -c 400)"
    exit 1
fi
pass alert-pending
T_PENDING=$(date +%s)
echo "$ALERT pending $((T_PENDING - T_START)) s after the enforcer's permission check"
cp "$TMP/alerts.json" "$TMP/alerts-pending.json"
# Pending for its whole `for`: polled until firing; never seen firing before `for` has
# passed since the alert's activeAt (Prometheus' own record of when it went pending).
firing_or_early() {
    _s=$(alert_state)
    [ "$_s" = firing ] && return 0
    [ "$_s" = pending ] || { echo "$ALERT went '$_s' while pending" >&2; return 0; }
    return 1
}
wait_for $((FOR_S + 90)) firing_or_early
T_FIRING=$(date +%s)
check alert-firing is_state firing
echo "$ALERT firing $((T_FIRING - T_PENDING)) s after it was first seen pending (for: $FOR)"
curl -s "$PROM_URL/api/v1/query" --data-urlencode \
    "query=ALERTS{alertname=\"$ALERT\",alertstate=\"firing\"}[10m]" >"$TMP/firing-series.json"
# held: from the alert's activeAt to the first sample of ALERTS{alertstate="firing"}, both as
# Prometheus recorded them (its evaluation times), so this test's polling does not enter it.
python3 - "$TMP/alerts.json" "$TMP/firing-series.json" "$ALERT" "$FOR_S" >"$TMP/firing.check" 2>&1 <<'PY'
import json, sys
from datetime import datetime, timezone
alerts, series, name, for_s = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
a = [x for x in json.load(open(alerts))["data"]["alerts"] if x["labels"]["alertname"] == name][0]
active = datetime.strptime(a["activeAt"][:26].rstrip("Z"), "%Y-%m-%dT%H:%M:%S.%f")
active = active.replace(tzinfo=timezone.utc).timestamp()
res = json.load(open(series))["data"]["result"]
first = min(float(v[0]) for r in res for v in r["values"])
held = first - active
print("activeAt %s, first firing sample %.3f s later" % (a["activeAt"], held))
want = {"verb": "create", "resource": "pods", "subresource": "eviction", "namespace": "serve",
        "group": "", "severity": "warning", "job": "gpureclaim-enforcer"}
bad = {k: a["labels"].get(k, "") for k in want if a["labels"].get(k, "") != want[k]}
print("labels off: %s" % bad if bad else "labels ok")
desc = a["annotations"].get("description", "")
print("description: %s" % desc)
# It fires at the first evaluation (every 5 s) at least `for` after activeAt; activeAt has
# nanoseconds, a sample's timestamp milliseconds (truncated), hence the millisecond allowed.
ok_held = for_s - 0.001 <= held <= for_s + 15
print("held: %s" % ("ok" if ok_held else "WRONG"))
sys.exit(0 if ok_held and not bad and "may not create pods/eviction in namespace serve" in desc else 1)
PY
check alert-firing-after-for-with-labels [ $? -eq 0 ]
sed 's/^/    /' "$TMP/firing.check"

# --- the role restored: the enforcer checks again at its start and the alert resolves ------------
kube_role_restored
stop_pid "$ENF_PID"
check enforcer-rechecked start_enforcer "$TMP/enf2.log"
check enforcer-nothing-missing grep -q 'permission check: all [0-9]* permissions the rules can use are granted' "$TMP/enf2.log"
check alert-resolved wait_for 60 is_state inactive
stop_pid "$ENF_PID"
finish
