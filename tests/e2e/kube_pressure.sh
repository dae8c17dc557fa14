#!/bin/sh
# End to end: DuringGPUPressure and --kube.confirm-pressure with pressure as a real cluster
# produces it (tests/kube/cluster.sh: two kwok nodes of 2 amd.com/gpu each), not as
# tests/fakes/fake_kube.c models it. A real Prometheus scrapes the real kube-state-metrics
# (the shipped default `pending` query over kube_pod_container_resource_requests{resource=
# "amd_com_gpu"} and kube_pod_status_unschedulable) and a file of activity samples for the
# idle StatefulSet (no exporter can measure kwok's pods). The enforcer uses the shipped
# ServiceAccount's token, bound by the shipped roles, and its real clock:
#   A  nothing waits: the idle StatefulSet is kept (no pressure);
#   B  a pod asking for 2 GPUs is Pending with the scheduler's "Insufficient amd.com/gpu",
#      then schedules once the busy filler is deleted, before the cycle: kept (the demand is
#      gone);
#   C  another such pod Pending, seen by kube-state-metrics and confirmed in the API: the idle
#      StatefulSet is scaled to 0 and the waiting pod then schedules onto the freed GPUs.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/kube/cluster.sh"

DATA=$TOP/tests/e2e/data/kube_pressure
ENF=$BIN/gpureclaim-enforcer
require python3 curl openssl go prometheus "$ENF"

kube_cluster_start 2 2

jp() { kubectl get "$1" -n "$2" -o "jsonpath=$3" 2>/dev/null; }
phase_is() { [ "$(jp "pod/$2" "$1" '{.status.phase}')" = "$3" ]; }

kubectl apply -f "$TOP/deploy/kubernetes/namespace.yaml" >"$TMP/ns.out" 2>&1 &&
    kubectl kustomize "$TOP/deploy/kubernetes/enforcer" | python3 -c '
import sys
docs = sys.stdin.read().split("\n---\n")
print("\n---\n".join(d for d in docs if "\nkind: ServiceMonitor\n" not in "\n" + d + "\n"))' |
    kubectl apply -f - >"$TMP/rbac.out" 2>&1 || { fail shipped-rbac "$(cat "$TMP/rbac.out")"; exit 1; }
pass shipped-rbac-applied
kube_sa_token gpureclaim gpureclaim-enforcer 3600 >"$TMP/sa.token" || { fail sa-token; exit 1; }
kubectl apply -f "$DATA/workloads.yaml" >"$TMP/w.out" 2>&1 || { fail workloads "$(cat "$TMP/w.out")"; exit 1; }
check idle-running wait_for 60 sh -c "kubectl get pods -n press -l app=idle --field-selector=status.phase=Running --no-headers | grep -q ."
check filler-running wait_for 60 phase_is other filler Running
IDLE_POD=idle-0
CREATED=$(date +%s)

# the activity of the idle pod, served as a file for Prometheus to scrape every second
mkdir -p "$TMP/act"
cat >"$TMP/act/metrics" <<EOF
# TYPE gpureclaim_test_busy gauge
gpureclaim_test_busy{namespace="press",pod="$IDLE_POD"} 0.01
# TYPE gpureclaim_test_devices gauge
gpureclaim_test_devices{namespace="press",pod="$IDLE_POD",resource="amd.com/gpu"} 2
EOF
APORT=$(free_port)
start_bg "$TMP/act.log" python3 -m http.server "$APORT" --bind 127.0.0.1 --directory "$TMP/act"
wait_http "http://127.0.0.1:$APORT/metrics" 10 || { fail activity-server; exit 1; }
scrape_config "$TMP/prometheus.yml" "$APORT $KSM_PORT" test
mkdir -p "$TMP/tsdb"
start_prometheus "$TMP/prometheus.yml" "$TMP/tsdb" || { fail prometheus-ready "$(tail -n 5 "$TMP/prometheus.log")"; exit 1; }
PENDING_Q=$(python3 - "$TOP/rules/during-pressure.yaml" <<'PY'
import re, sys
m = re.search(r"pending: >-\n((?:\s{6}.*\n)+)", open(sys.argv[1]).read())
print(" ".join(l.strip() for l in m.group(1).splitlines()))
PY
)
check pending-query-read [ -n "$PENDING_Q" ]
pending_is() { [ "$(prom_value "$PENDING_Q")" = "$1" ]; }
value_is() { [ "$(prom_value "$1")" = "$2" ]; }
value_at_least() { _v=$(prom_value "$1"); [ "$_v" != none ] && [ "$_v" -ge "$2" ]; }
check ksm-scraped wait_for 30 value_is 'count(kube_node_status_allocatable{resource="amd_com_gpu"})' 2

RULES=$TMP/rules.yaml
cp "$DATA/rules.yaml" "$RULES"
AUDIT=$TMP/audit.jsonl
enf() { # LOG: one `run --once`, acting, pressure confirmed by the API
    "$ENF" run --once --no-dry-run --kube.confirm-pressure --rules.file="$RULES" \
        --prometheus.url="$PROM_URL" --state.file="$TMP/state.json" --audit.file="$AUDIT" \
        --kube.api-url="$KUBE_URL" --kube.ca-file="$KUBE_CA" --kube.token-file="$TMP/sa.token" \
        --enforce.max-actions-per-hour=0 >"$TMP/$1" 2>&1
}
replicas() { jp statefulset/idle press '{.spec.replicas}'; }
acted() { grep -c '"event":"action"' "$AUDIT" 2>/dev/null || true; }

# the idle window (1 minute) must be the object's and covered by samples
wait_until() { while [ "$(date +%s)" -lt "$1" ]; do sleep 1; done; }
check idle-series-covers-window wait_for 120 value_at_least 'count_over_time(gpureclaim_test_busy[75s])' 70
wait_until $((CREATED + 75))

# --- A: nothing waits ---------------------------------------------------------------------------
check A-no-demand pending_is none
check A-cycle enf A.log
check A-kept [ "$(replicas)" = 1 ]
check A-no-action [ "$(acted)" = 0 ]

# --- B: a pod waits, then schedules before the cycle --------------------------------------------
kubectl apply -f "$DATA/waiting-1.yaml" >"$TMP/b.out" 2>&1
check B-waiting-pending wait_for 30 sh -c \
    "kubectl get pod waiting-1 -n queue -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q 'Insufficient amd.com/gpu'"
check B-ksm-amd_com_gpu wait_for 30 sh -c \
    "curl -sf http://127.0.0.1:$KSM_PORT/metrics | grep 'kube_pod_container_resource_requests{' | grep 'pod=\"waiting-1\"' | grep -q 'resource=\"amd_com_gpu\"'"
check B-demand-seen wait_for 30 pending_is 2
kubectl delete pod filler -n other --wait=true >"$TMP/b2.out" 2>&1
check B-waiting-scheduled wait_for 60 phase_is queue waiting-1 Running
check B-demand-gone wait_for 30 pending_is none
check B-cycle enf B.log
check B-kept [ "$(replicas)" = 1 ]
check B-no-action [ "$(acted)" = 0 ]

# --- C: a pod waits for the idle StatefulSet's GPUs ---------------------------------------------
kubectl apply -f "$DATA/waiting-2.yaml" >"$TMP/c.out" 2>&1
check C-waiting-pending wait_for 30 sh -c \
    "kubectl get pod waiting-2 -n queue -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q 'Insufficient amd.com/gpu'"
check C-demand-seen wait_for 30 pending_is 2
check C-cycle enf C.log
check C-reclaimed [ "$(replicas)" = 0 ]
check C-one-action [ "$(acted)" = 1 ]
check C-idle-pod-gone wait_for 60 sh -c "[ -z \"\$(kubectl get pods -n press -l app=idle --no-headers)\" ]"
check C-waiting-scheduled wait_for 60 phase_is queue waiting-2 Running

kube_versions >"$TMP/versions.txt"
finish
