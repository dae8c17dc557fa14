#!/bin/sh
# `make demo-kube`: the demo's loop on a real Kubernetes control plane, on loopback, without a
# GPU and without a cluster of your own.
#
# Starts, in a private temporary directory and on 127.0.0.1 ports picked free:
#   * the test cluster of the kube suites (tests/kube/cluster.sh): etcd, kube-apiserver,
#     kube-controller-manager, kube-scheduler, kwok and kube-state-metrics, built from their
#     Go modules by tests/kube/build.sh on first use (cached outside the tree), with one fake
#     node gpu-node-1 that kwok runs, advertising 64 amd.com/gpu (8 x MI300X in CPX);
#   * the shipped manifests of deploy/kubernetes without the Prometheus Operator's kinds, as
#     deploy/README.md describes: the enforcer's ServiceAccount and RBAC are the shipped ones;
#   * three workloads (kube-workloads.yaml): a notebook (StatefulSet, idle), an inference
#     Deployment (busy) and a training Job (busy for 30 s, then idle);
#   * the node's side: kube_node.py gives the Running pods partitions of the simulated tree
#     (simulate.py) and serves them on a kubelet pod-resources socket (tests/podres/server.js);
#     gpureclaim-exporter reads activity from the tree and owners from that socket;
#   * Prometheus scraping the exporter, the enforcer and kube-state-metrics with the project's
#     recording rules and alerts;
#   * gpureclaim-enforcer, a local process with a TokenRequest token of the shipped
#     ServiceAccount (never the admin certificate): first in dry run until it reports what it
#     would do, then --no-dry-run: notices (annotation, Event), the notebook scaled to zero,
#     the Job suspended, the inference Deployment kept; then `gpureclaim-enforcer restore`
#     brings both back;
# prints a timeline (kube_timeline.py) and a summary, and stops everything it started, by PID.
#
# usage: deploy/demo/demo-kube.sh [--keep] [--help]
#   --keep   keep the temporary directory (logs, audit file, Prometheus data, summary.json)
set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$TOP/deploy/demo

usage() {
    sed -n '/^# usage:/,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}
KEEP=
while [ $# -gt 0 ]; do
    case $1 in
    --keep) KEEP=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "demo-kube: unknown argument '$1' (try --help)" >&2; exit 1 ;;
    esac
    shift
done

# tests/lib.sh: the temporary directory, free ports, start_bg/stop_pid of every process by
# PID at exit (its EXIT trap), and what tests/kube/cluster.sh needs.
SUITE=demo-kube
[ -z "$KEEP" ] || KEEP_TMP=1
. "$TOP/tests/lib.sh"
. "$TOP/tests/kube/cluster.sh"
DIR=$TMP
T0=$(date +%s)

die() {
    echo "demo-kube: $*" >&2
    KEEP_TMP=1
    exit 1
}
for b in "$BIN/gpureclaim-exporter" "$BIN/gpureclaim-enforcer"; do
    [ -x "$b" ] || die "'$b' is missing; run 'make' first"
done
for c in prometheus python3 curl openssl go node npm; do
    command -v "$c" >/dev/null 2>&1 || die "'$c' is not installed; run 'make deps' as root"
done
ENF=$BIN/gpureclaim-enforcer
# say TEXT: a line of the demo's own, with the time since its start
say() {
    _t=$(( $(date +%s) - T0 ))
    printf '%02d:%02d  %s\n' $((_t / 60)) $((_t % 60)) "$*"
}

echo "gpureclaim demo on a real Kubernetes: kwok's fake GPU node, simulated MI300X activity"
echo "working directory $DIR"
echo
say "starting the cluster (tests/kube/cluster.sh; the first run builds it, many minutes)"
kube_cluster_start 64 1 >"$DIR/cluster.out" 2>&1 || die "the cluster did not start: $(tail -n 3 "$DIR/cluster.out")"
grep -v '^PASS: ' "$DIR/cluster.out" | sed 's/^/       /'
say "cluster ready: $KUBE_URL"

# ---- the shipped manifests without the Prometheus Operator's kinds (deploy/README.md) --------
kubectl kustomize "$TOP/deploy/kubernetes" >"$DIR/all.yaml" || die "kubectl kustomize failed"
python3 - "$DIR/all.yaml" >"$DIR/no-operator.yaml" <<'PY'
import sys
docs = open(sys.argv[1]).read().split("\n---\n")
print("\n---\n".join(d for d in docs if "\nkind: ServiceMonitor\n" not in "\n" + d + "\n"
                   and "\nkind: PrometheusRule\n" not in "\n" + d + "\n"))
PY
kubectl apply -f "$DIR/no-operator.yaml" >"$DIR/apply.out" 2>&1 ||
    die "the shipped manifests were refused: $(tail -n 3 "$DIR/apply.out")"
say "applied deploy/kubernetes (without ServiceMonitor, PrometheusRule): $(grep -c . "$DIR/apply.out") objects"
kube_sa_token gpureclaim gpureclaim-enforcer 7200 >"$DIR/sa.token" 2>"$DIR/token.err" ||
    die "no token: $(cat "$DIR/token.err")"
kc_token_kubeconfig "$DIR/sa.kubeconfig" "$DIR/sa.token"
WHO=$("$KUBE_BIN/kubectl" --kubeconfig="$DIR/sa.kubeconfig" auth whoami -o jsonpath='{.status.userInfo.username}')
say "the enforcer authenticates as $WHO (TokenRequest token, shipped ClusterRole)"

kubectl apply -f "$HERE/kube-workloads.yaml" >"$DIR/workloads.out" 2>&1 ||
    die "the workloads were refused: $(tail -n 3 "$DIR/workloads.out")"
running() {
    [ "$(kubectl get pods -A -l gpureclaim.io/demo-profile --field-selector=status.phase=Running \
        --no-headers 2>/dev/null | wc -l)" -eq 4 ]
}
kc_wait 90 "Running workload pods" running || die "the workloads' pods did not run"
say "workloads Running on gpu-node-1 (kwok): notebooks/notebook-alice (StatefulSet, 1 GPU, idle),"
say "  inference/llm-serve-bob (Deployment, 2 pods x 2 GPUs, busy), training/train-carol (Job, 4 GPUs, busy 30 s then idle)"

# ---- the node: partitions, pod-resources socket, simulator, exporter --------------------------
if [ ! -d "$TOP/tests/podres/node_modules/@grpc/grpc-js" ]; then
    npm ci --prefix "$TOP/tests/podres" --no-audit --no-fund >"$DIR/npm.log" 2>&1 ||
        die "npm ci failed: $(tail -n 3 "$DIR/npm.log")"
fi
NODE=$DIR/node
mkdir -p "$DIR/empty/proc" "$DIR/empty/dev"
# the tree first (the node agent reads its device ids), then who has which partition
start_bg "$DIR/simulator.log" python3 "$HERE/simulate.py" --root "$NODE" --interval 2 \
    --workloads-file "$DIR/workloads.json" --goes-idle-after 30 \
    --ready-file "$DIR/simulator.ready" --status-file "$DIR/simulator.json"
kc_wait 20 "simulator tree" test -f "$DIR/simulator.ready" || die "the simulator did not start"
start_bg "$DIR/kube-node.log" python3 "$HERE/kube_node.py" --sysfs "$NODE/sys" \
    --kubectl "$KC/bin/kubectl" --podres-file "$DIR/podres.json" --workloads-file "$DIR/workloads.json"
kc_wait 20 "pod-resources answer" test -f "$DIR/podres.json" || die "kube_node.py did not start"
SOCK=$DIR/kubelet.sock
start_bg "$DIR/podres.log" node "$TOP/tests/podres/server.js" "$SOCK" "$DIR/podres.json" --reload
kc_wait 30 "kubelet socket" test -S "$SOCK" || die "the pod-resources server did not start"
EXPORTER=127.0.0.1:$(free_port)
start_bg "$DIR/exporter.log" "$BIN/gpureclaim-exporter" --web.listen-address="$EXPORTER" \
    --path.sysfs="$NODE/sys" --path.procfs="$DIR/empty/proc" --path.devfs="$DIR/empty/dev" \
    --kubelet.pod-resources-socket="$SOCK" --collector.ownership.refresh-interval=2s \
    --no-collector.amdgpu
owners() { curl -sf "http://$EXPORTER/metrics" | grep -q 'gpureclaim_owner_info{.*pod="notebook-alice-0"'; }
kc_wait 30 "exporter owners" owners || die "the exporter names no pod owner"
say "exporter: activity from the simulated sysfs tree, owners from the kubelet pod-resources socket"

# ---- Prometheus, the enforcer ----------------------------------------------------------------
ENFORCER=127.0.0.1:$(free_port)
cat >"$DIR/prometheus.yml" <<EOF
global: {scrape_interval: 2s, scrape_timeout: 2s, evaluation_interval: 2s}
rule_files: ["$TOP/rules/prometheus/gpureclaim.rules.yml"]
scrape_configs:
  - job_name: gpureclaim-exporter
    static_configs: [{targets: ["$EXPORTER"]}]
  - job_name: gpureclaim-enforcer
    static_configs: [{targets: ["$ENFORCER"]}]
  - job_name: kube-state-metrics
    static_configs: [{targets: ["127.0.0.1:$KSM_PORT"]}]
EOF
start_prometheus "$DIR/prometheus.yml" "$DIR/prometheus-data" ||
    die "Prometheus did not start: $(tail -n 3 "$DIR/prometheus.log")"
PROM=$PROM_URL
"$ENF" check "$HERE/rules-kube.yaml" >"$DIR/rules-check.log" 2>&1 ||
    die "rules-kube.yaml is invalid: $(cat "$DIR/rules-check.log")"
AUDIT=$DIR/audit.jsonl
KFLAGS="--kube.api-url=$KUBE_URL --kube.ca-file=$KUBE_CA --kube.token-file=$DIR/sa.token"
# start_enforcer LOG MODE: the daemon, every 5 s, with the ServiceAccount's token
start_enforcer() {
    # shellcheck disable=SC2086
    start_bg "$1" "$ENF" run --rules.file="$HERE/rules-kube.yaml" --prometheus.url="$PROM" \
        --enforce.interval=5s "$2" $KFLAGS --state.file="$DIR/enforcer-state.json" \
        --audit.file="$AUDIT" --web.listen-address="$ENFORCER"
    ENF_PID=$LAST_PID
    kc_wait 30 "enforcer metrics" curl -sf "http://$ENFORCER/metrics" || die "the enforcer did not start"
}
start_enforcer "$DIR/enforcer-dry.log" --dry-run
QUERY=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' \
    "gpureclaim:workload_busy:ratio")
echo
echo "URLs (loopback only)"
echo "  kube-apiserver     $KUBE_URL (admin: KUBECONFIG=$KC/admin.kubeconfig)"
echo "  exporter metrics   http://$EXPORTER/metrics"
echo "  Prometheus         $PROM/graph?g0.expr=$QUERY&g0.tab=0&g0.range_input=10m"
echo "  enforcer metrics   http://$ENFORCER/metrics"
echo "Rules (rules-kube.yaml): below 10% for 1m -> notebooks scaled to zero, training suspended,"
echo "inference scaled to zero; 20 s notice. Activity: generated busy values (simulate.py) in a"
echo "sysfs tree the exporter reads; pods own partitions through the pod-resources API."
echo
grep 'permission check' "$DIR/enforcer-dry.log" | sed 's/.*msg="\(.*\)"$/\1/' | head -n 1 |
    while read -r l; do say "enforcer: $l"; done

python3 "$HERE/kube_timeline.py" --t0 "$T0" --prometheus-url "$PROM" --kubectl "$KC/bin/kubectl" \
    --audit-file "$AUDIT" --summary-file "$DIR/summary.json" &
TL_PID=$!
BG_PIDS="$BG_PIDS $TL_PID"

# ---- dry run, then for real -----------------------------------------------------------------
dry_reported() { grep -q '"event":"dry_run".*notebook-alice' "$AUDIT" 2>/dev/null; }
say "enforcer in dry run (--dry-run, the default): it reports, changes nothing"
kc_wait 180 "dry-run report of the notebook" dry_reported || die "no dry-run report in 180 s"
sed -n 's/.*msg="\(dry run: would [^"]*\)".*/\1/p' "$DIR/enforcer-dry.log" | head -n 3 |
    while read -r l; do say "enforcer: $l"; done
stop_pid "$ENF_PID"
say "enforcer restarted with --no-dry-run (same state file)"
start_enforcer "$DIR/enforcer.log" --no-dry-run

jp() { kubectl get "$1" -n "$2" -o "jsonpath=$3" 2>/dev/null; }
npods() { kubectl get pods -n "$1" -l "app=$2" --no-headers 2>/dev/null | wc -l | tr -d ' '; }
reclaimed() {
    [ "$(jp statefulset/notebook-alice notebooks '{.spec.replicas}')" = 0 ] &&
        [ "$(npods notebooks notebook-alice)" = 0 ] &&
        [ "$(jp job/train-carol training '{.spec.suspend}')" = true ] &&
        [ "$(npods training train-carol)" = 0 ]
}
kc_wait 240 "the notebook scaled to zero and the Job suspended" reclaimed ||
    die "not reclaimed in 240 s: see $DIR/enforcer.log"
say "reclaimed: notebook-alice scaled to 0, train-carol suspended, their pods deleted by their controllers"
say "kept: inference/llm-serve-bob, replicas $(jp deployment/llm-serve-bob inference '{.spec.replicas}'), $(npods inference llm-serve-bob) pods"
# seen SPEC...: the timeline has printed each WORKLOAD:REASON (an Event about it) and
# WORKLOAD=PODS (that many Running pods): it is then told in order, before the next step
seen() {
    python3 - "$DIR/summary.json" "$@" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(1)
for spec in sys.argv[2:]:
    if "=" in spec:
        w, n = spec.split("=")
        if len(s.get(w, {}).get("pods", [])) != int(n):
            sys.exit(1)
    else:
        w, reason = spec.split(":")
        if reason not in s.get(w, {}).get("events", []):
            sys.exit(1)
PY
}
kc_wait 60 "the timeline's view of the reclaim" seen notebooks/notebook-alice:IdleGPUReclaimed \
    training/train-carol:IdleGPUReclaimed notebooks/notebook-alice=0 training/train-carol=0 ||
    die "the timeline did not see the reclaim"
stop_pid "$ENF_PID"
say "enforcer stopped; restoring with 'gpureclaim-enforcer restore' (the same token)"
for t in notebooks/statefulset/notebook-alice training/job/train-carol; do
    # shellcheck disable=SC2086
    "$ENF" restore $KFLAGS --audit.file="$AUDIT" "$t" >"$DIR/restore-${t##*/}.out" 2>&1 ||
        die "restore '$t' failed: $(tail -n 3 "$DIR/restore-${t##*/}.out")"
    sed 's/^/       /' "$DIR/restore-${t##*/}.out"
done
back() {
    [ "$(kubectl get pods -n notebooks -l app=notebook-alice --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l)" -eq 1 ] &&
        [ "$(kubectl get pods -n training -l app=train-carol --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l)" -eq 1 ]
}
kc_wait 90 "the restored pods Running" back || die "the restored pods did not run"
kc_wait 60 "the timeline's view of the restore" seen notebooks/notebook-alice:IdleGPUReclaimRestored \
    training/train-carol:IdleGPUReclaimRestored notebooks/notebook-alice=1 training/train-carol=1 ||
    die "the timeline did not see the restore"
say "restored: notebook-alice and train-carol Running again"
stop_pid "$TL_PID"

echo
echo "Summary (the cluster's objects at the end, the enforcer's audit)"
python3 - "$AUDIT" "$DIR/summary.json" <<'PY'
import json, sys
acts = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
last = json.load(open(sys.argv[2]))
want = {"notebooks/notebook-alice": ("idle", "scaleToZero", True),
        "inference/llm-serve-bob": ("busy", "-", False),
        "training/train-carol": ("busy, then idle", "suspend", True)}
print("  %-26s %-16s %-12s %-8s %-8s %s" % ("workload", "activity", "action", "acted", "restored", "ok"))
bad = 0
for w, (prof, action, reclaim) in want.items():
    name = w.split("/")[1]
    # a pod of the workload, or (a restore names no pod) the workload's object as root owner
    mine = [a for a in acts if (a.get("workload") or {}).get("pod", "").startswith(name + "-")
            or any(o.get("name") == name for o in a.get("owner_chain") or [])]
    acted = any(a["event"] == "action" and a.get("result") == "ok" for a in mine)
    restored = any(a["event"] == "restore" and a.get("result") == "ok" for a in mine)
    pods = len(last.get(w, {}).get("pods", []))
    ok = acted == reclaim and restored == reclaim and pods >= 1
    print("  %-26s %-16s %-12s %-8s %-8s %s" % (w, prof, action, "yes" if acted else "no",
                                               "yes" if restored else "no", "ok" if ok else "UNEXPECTED"))
    bad += not ok
sys.exit(1 if bad else 0)
PY
RESULT=$?
echo "Elapsed $(( $(date +%s) - T0 )) s"
echo "stopping everything the demo started"
[ "$RESULT" -eq 0 ] || { KEEP_TMP=1; exit 1; }
exit 0
