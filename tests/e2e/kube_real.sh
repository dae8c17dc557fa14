#!/bin/sh
# End to end against a real Kubernetes (tests/kube/cluster.sh: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler built from their Go modules, kwok's fake nodes with
# amd.com/gpu, kube-state-metrics), not against tests/fakes/fake_kube.c:
#   1. the shipped manifests: `kubectl apply -k deploy/kubernetes` fails without the
#      Prometheus Operator's CRDs naming the two kinds, the rest applied as deploy/README.md
#      says is accepted, and with the operator's CRDs (from its Go module) all of it is; kwok
#      runs the exporter's and the enforcer's pods;
#   2. the enforcer as a local process with a TokenRequest token of the shipped ServiceAccount,
#      bound by the shipped roles (never the admin certificate): its RBAC preflight finds
#      nothing missing; with the one verb of pods/eviction removed from the ClusterRole it names
#      exactly that permission, and the GPUReclaimPermissionMissing expression is true;
#   3. actions through the real controllers (rules.yaml, workloads.yaml): notices are real
#      annotations and Events read back; a Deployment and a StatefulSet scaled to 0 lose their
#      pods, a suspended Job has its pod deleted by the Job controller, a bare pod is evicted
#      through the Eviction API and another refused by its PodDisruptionBudget (kept, retried,
#      the reason in the audit); the busy Deployment is kept; `restore` brings the
#      Deployment's, the StatefulSet's and the Job's pods back;
#   4. two enforcers with --leader-elect on a real Lease: the leader killed between notice and
#      action, the standby takes the Lease once it has expired and acts once (audit, Events
#      and the object's record agree).
# Activity comes from canned answers (gen_prom.py: no exporter can measure kwok's pods); the
# enforcer's clock (--at) is 20 minutes ahead of the cluster's so that the workloads, created
# now, are older than the 15 minute idle window.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/kube/cluster.sh"

DATA=$TOP/tests/e2e/data/kube_real
ENF=$BIN/gpureclaim-enforcer
PROM_FAKE=$(fake_bin fake_prom)
require python3 curl openssl go "$ENF" "$PROM_FAKE"

kube_cluster_start 4 2

is_n() { [ "$("$@")" = "$N" ]; }

# --- 1. the shipped manifests -------------------------------------------------------------------
kubectl apply -k "$TOP/deploy/kubernetes" >"$TMP/apply-nocrd.out" 2>&1
check apply-without-crds-refused [ $? -ne 0 ]
check apply-without-crds-names-servicemonitor \
    grep -q 'no matches for kind "ServiceMonitor" in version "monitoring.coreos.com/v1"' "$TMP/apply-nocrd.out"
check apply-without-crds-names-prometheusrule \
    grep -q 'no matches for kind "PrometheusRule" in version "monitoring.coreos.com/v1"' "$TMP/apply-nocrd.out"
# deploy/README.md: without the operator, leave out prometheus-rules/ and the ServiceMonitors
kubectl kustomize "$TOP/deploy/kubernetes" >"$TMP/all.yaml"
python3 - "$TMP/all.yaml" >"$TMP/no-operator.yaml" <<'PY'
import sys
docs = open(sys.argv[1]).read().split("\n---\n")
keep = [d for d in docs if "\nkind: ServiceMonitor\n" not in "\n" + d + "\n"
        and "\nkind: PrometheusRule\n" not in "\n" + d + "\n"]
print("\n---\n".join(keep))
PY
check apply-without-operator-kinds into "$TMP/apply-noop.out" kubectl apply -f "$TMP/no-operator.yaml" ||
    cat "$TMP/apply-noop.out" >&2

kube_operator_crds
check apply-k-accepted into "$TMP/apply.out" kubectl apply -k "$TOP/deploy/kubernetes" ||
    cat "$TMP/apply.out" >&2
N=2; check servicemonitors-created is_n sh -c "kubectl get servicemonitors -n gpureclaim --no-headers | wc -l | tr -d ' '"
N=1; check prometheusrule-created is_n sh -c "kubectl get prometheusrules -n gpureclaim --no-headers | wc -l | tr -d ' '"
check enforcer-pods-running wait_for 90 sh -c \
    "[ \"\$(kubectl get deploy gpureclaim-enforcer -n gpureclaim -o jsonpath='{.status.availableReplicas}')\" = 2 ]"
check exporter-pods-running wait_for 90 sh -c \
    "[ \"\$(kubectl get ds -n gpureclaim -o jsonpath='{.items[0].status.numberReady}')\" = 2 ]"

# --- 2. the shipped ServiceAccount's token and the RBAC preflight -------------------------------
kube_sa_token gpureclaim gpureclaim-enforcer 3600 >"$TMP/sa.token" 2>"$TMP/token.err"
check sa-token-issued [ -s "$TMP/sa.token" ]
kc_token_kubeconfig "$TMP/sa.kubeconfig" "$TMP/sa.token"
check sa-token-not-admin [ "$("$KUBE_BIN/kubectl" --kubeconfig="$TMP/sa.kubeconfig" auth can-i delete nodes)" = no ]
check sa-token-is-the-sa [ "$("$KUBE_BIN/kubectl" --kubeconfig="$TMP/sa.kubeconfig" auth whoami -o jsonpath='{.status.userInfo.username}')" = "$KUBE_ENFORCER_SA" ]

kubectl apply -f "$DATA/workloads.yaml" >"$TMP/workloads.out" 2>&1 ||
    { fail workloads-applied "$(cat "$TMP/workloads.out")"; exit 1; }
pass workloads-applied
N=2; check web-pods-running wait_for 60 is_n kube_nrunning apps app=web
N=1; check db-pod-running wait_for 60 is_n kube_nrunning apps app=db
N=1; check busy-pod-running wait_for 60 is_n kube_nrunning apps app=busy
N=1; check train-pod-running wait_for 60 is_n kube_nrunning batch app=train
N=2; check serve-pods-running wait_for 60 is_n sh -c "kubectl get pods -n serve --field-selector=status.phase=Running --no-headers | wc -l | tr -d ' '"
check pdb-computed wait_for 30 sh -c \
    "[ \"\$(kubectl get pdb guarded -n serve -o jsonpath='{.status.currentHealthy}')\" = 1 ]"

NOW=$(date +%s)
END=$((NOW + 1200))
pods_of() { kubectl get pods -n "$1" -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}'; }
{ pods_of apps; pods_of batch; pods_of serve; } >"$TMP/pods.txt"
python3 "$DATA/gen_prom.py" "$TMP" "" "$END" $(sed 's#^\(apps/busy-.*\)#\1=busy#' "$TMP/pods.txt")
start_fake_http "$TMP/prom.out" "$PROM_FAKE" 0 ok "$TMP/range.json" "$TMP/instant.json" ||
    { fail prom-start "$(cat "$TMP/prom.out")"; exit 1; }
PURL=$FAKE_URL

KFLAGS="--kube.api-url=$KUBE_URL --kube.ca-file=$KUBE_CA --kube.token-file=$TMP/sa.token --kube.timeout=2s"
# preflight LOG: a `run` daemon in dry run (with leader election, so that the Lease's
# permissions are checked too; a Lease of its own, not the one of part 4) until its first
# permission check; its /metrics in LOG.metrics.
preflight() {
    _port=$(free_port)
    # shellcheck disable=SC2086
    start_bg "$1" env POD_NAME=preflight "$ENF" run --rules.file="$DATA/rules.yaml" \
        --prometheus.url="$PURL" --at="$END" --enforce.interval=1h --dry-run $KFLAGS \
        --leader-elect --leader-elect.namespace=gpureclaim --leader-elect.lease-name=preflight \
        --state.file="$TMP/pf.state" \
        --audit.file="$TMP/pf.audit" --web.listen-address="127.0.0.1:$_port"
    _pid=$LAST_PID
    wait_for 30 grep -q 'permission check:' "$1"
    _rc=$?
    curl -s "http://127.0.0.1:$_port/metrics" >"$1.metrics"
    stop_pid "$_pid"
    return $_rc
}
mval() { awk -v s="$2" '$1 == s { print $2 }' "$1"; }
check preflight-ran preflight "$TMP/pf1.log"
check preflight-nothing-missing grep -q 'permission check: all [0-9]* permissions the rules can use are granted' "$TMP/pf1.log" ||
    grep 'permission' "$TMP/pf1.log" >&2
check preflight-metric-zero [ "$(mval "$TMP/pf1.log.metrics" 'gpureclaim_enforcer_permission_checks{result="missing"}')" = 0 ]

# one verb removed from the shipped ClusterRole: pods/eviction's create (a rule of its own)
kube_role_without_eviction "$TMP/all.yaml"
check preflight-again-ran preflight "$TMP/pf2.log"
check preflight-names-eviction grep -q \
    "permission missing: cannot create 'pods/eviction' in namespace 'serve'; needed by rule 'evict' (evict)" \
    "$TMP/pf2.log" || grep 'permission' "$TMP/pf2.log" >&2
check preflight-only-that [ "$(grep -c 'permission missing:' "$TMP/pf2.log")" = 1 ]
check preflight-metric-one [ "$(mval "$TMP/pf2.log.metrics" 'gpureclaim_enforcer_permission_checks{result="missing"}')" = 1 ]
check preflight-metric-series [ "$(mval "$TMP/pf2.log.metrics" 'gpureclaim_enforcer_permission_missing{group="",resource="pods",subresource="eviction",verb="create",namespace="serve"}')" = 1 ]
# the alert's expression from the shipped rules, on those metrics (promtool, no server)
ALERT_EXPR=$(python3 - "$TOP/rules/prometheus/gpureclaim.rules.yml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"- alert: GPUReclaimPermissionMissing\n\s+expr: (.*)\n", text)
print(m.group(1) if m else "")
PY
)
check alert-expr-found [ -n "$ALERT_EXPR" ]
# alert_samples METRICS EXPR WANT: promtool evaluates count(EXPR) over the scraped samples
# (labelled as the shipped alerts' job); WANT is 1 (it would fire) or none (no sample)
alert_samples() {
    grep '^gpureclaim_enforcer_permission_missing{' "$1" | awk 'NF >= 2 {
        n = $1; l = "job=\"gpureclaim-enforcer\",instance=\"e\""
        if (n ~ /}$/) { sub(/}$/, "," l "}", n) } else { n = n "{" l "}" }
        printf "      - series: '\''%s'\''\n        values: \"%sx20\"\n", n, $2 }' >"$1.series"
    {
        printf 'evaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n'
        cat "$1.series"
        printf '    promql_expr_test:\n      - expr: count(%s)\n        eval_time: 10m\n' "$2"
        if [ "$3" = none ]; then
            printf '        exp_samples: []\n'
        else
            printf '        exp_samples:\n          - labels: "{}"\n            value: %s\n' "$3"
        fi
    } >"$1.test.yml"
    promtool test rules "$1.test.yml" >"$1.promtool" 2>&1 || { cat "$1.promtool" >&2; return 1; }
}
check alert-would-fire alert_samples "$TMP/pf2.log.metrics" "$ALERT_EXPR" 1
check alert-quiet-when-granted alert_samples "$TMP/pf1.log.metrics" "$ALERT_EXPR" none
kube_role_restored

# --- 3. actions through the real controllers ------------------------------------------------------
STATE=$TMP/state.json
AUDIT=$TMP/audit.jsonl
enf() { # LOG AT [FLAG...]: one `run --once`, acting
    _log=$1 _at=$2; shift 2
    # shellcheck disable=SC2086
    "$ENF" run --once --no-dry-run --rules.file="$DATA/rules.yaml" --prometheus.url="$PURL" \
        --at="$_at" --state.file="$STATE" --audit.file="$AUDIT" $KFLAGS \
        --enforce.max-actions-per-hour=0 "$@" >"$_log" 2>&1
}
audit() { # EVENT RESULT POD [API_STATUS]: how many audit lines match
    python3 - "$AUDIT" "$@" <<'PY'
import json, sys
path, event, result, pod = sys.argv[1:5]
status = int(sys.argv[5]) if len(sys.argv) > 5 else None
n = 0
for line in open(path):
    o = json.loads(line)
    if o["event"] != event or o.get("result") != result:
        continue
    if not o["workload"].get("pod", "").startswith(pod):
        continue
    if status is not None and o.get("api_status", 0) != status:
        continue
    n += 1
print(n)
PY
}

check A-notices-sent enf "$TMP/A.log" "$END"
for o in "deploy/web apps" "statefulset/db apps" "job/train batch" "pod/free serve" "pod/guarded serve"; do
    set -- $o
    check "A-annotation-${1#*/}" [ -n "$(kube_notice "$1" "$2")" ]
done
check A-busy-no-notice [ -z "$(kube_notice deploy/busy apps)" ]
# web has two pods, each a decision resolving to the Deployment: one notice for the object
# (one Event, one audit line), not one per pod (found here; act.c, act_same_target)
N=1; check A-event-web is_n kube_events apps Deployment web IdleGPUReclaimNotice
N=1; check A-audit-web-one-notice is_n sh -c "grep '\"event\":\"notice\"' '$AUDIT' | grep '\"result\":\"ok\"' | grep -c '\"pod\":\"web-'"
N=1; check A-event-db is_n kube_events apps StatefulSet db IdleGPUReclaimNotice
N=1; check A-event-train is_n kube_events batch Job train IdleGPUReclaimNotice
N=1; check A-event-guarded is_n kube_events serve Pod guarded IdleGPUReclaimNotice
check A-nothing-stopped [ "$(kube_jp deploy/web apps '{.spec.replicas}')" = 2 ]

# The scale of a Deployment writes its annotation replicas-before-reclaim and then the scale,
# each with the resourceVersion just read; the annotation moves the Deployment's generation and
# its controller writes the status at once, so the scale may get 409: it is then read again,
# re-verified and retried (found here; docs/real-cluster.md). C-audit-web-ok asserts the one
# action whichever way it went.
check C-actions enf "$TMP/C.log" $((END + 300))
check C-web-scaled [ "$(kube_jp deploy/web apps '{.spec.replicas}')" = 0 ]
N=0; check C-web-pods-gone wait_for 60 is_n kube_npods apps app=web
check C-db-scaled [ "$(kube_jp statefulset/db apps '{.spec.replicas}')" = 0 ]
N=0; check C-db-pod-gone wait_for 60 is_n kube_npods apps app=db
check C-train-suspended [ "$(kube_jp job/train batch '{.spec.suspend}')" = true ]
check C-train-suspended-condition wait_for 30 sh -c \
    "kubectl get job train -n batch -o jsonpath='{.status.conditions[?(@.type==\"Suspended\")].status}' | grep -q True"
N=0; check C-train-pod-deleted wait_for 60 is_n kube_npods batch app=train
N=0; check C-free-evicted wait_for 60 is_n kube_npods serve app=free
N=1; check C-guarded-kept is_n kube_nrunning serve app=guarded
N=1; check C-busy-kept is_n kube_nrunning apps app=busy
check C-busy-replicas [ "$(kube_jp deploy/busy apps '{.spec.replicas}')" = 1 ]
N=1; check C-audit-web-ok is_n audit action ok web- 200
N=1; check C-audit-free-ok is_n audit action ok free
N=1; check C-audit-guarded-retry is_n audit action retry guarded 429
check C-audit-pdb-reason grep -q '"result":"retry".*disruption budget' "$AUDIT"
N=1; check C-event-web-reclaimed is_n kube_events apps Deployment web IdleGPUReclaimed
N=1; check C-event-train-reclaimed is_n kube_events batch Job train IdleGPUReclaimed
check C-recorded python3 -c '
import json, sys
n = json.loads(sys.argv[1])
sys.exit(0 if n["acted"]["way"] == "scale" and n["acted"]["replicasBefore"] == 2 else 1)' \
    "$(kube_notice deploy/web apps)"

check D-retry-refused-again enf "$TMP/D.log" $((END + 360))
N=1; check D-guarded-still-kept is_n kube_nrunning serve app=guarded
N=2; check D-audit-guarded-retry is_n audit action retry guarded 429

restore() { # NAME TARGET: gpureclaim-enforcer restore with the ServiceAccount's token
    # shellcheck disable=SC2086
    "$ENF" restore $KFLAGS --audit.file="$AUDIT" "$2" >"$TMP/$1.out" 2>&1 ||
        { _rc=$?; sed "s/^/$1: /" "$TMP/$1.out"; return $_rc; }
}
# Found here, not by fake_kube (which now does the same): an apps/v1 Deployment's
# metadata.generation moves on every change of its annotations too (kubernetes
# pkg/registry/apps/deployment/strategy.go, PrepareForUpdate, v1.36.3), so the enforcer's own
# record annotation moved it past the generation the record held, and restore refused the
# Deployment it had scaled itself. The record now holds the digest of the spec as the scale
# left it (docs/real-cluster.md): restore brings the Deployment back.
check R-web-restore restore r-web apps/deployment/web
check R-web-replicas [ "$(kube_jp deploy/web apps '{.spec.replicas}')" = 2 ]
N=2; check R-web-pods-back wait_for 60 is_n kube_nrunning apps app=web
N=1; check R-web-event is_n kube_events apps Deployment web IdleGPUReclaimRestored
# Found here: restore scaled the StatefulSet back and then wrote its annotations with the
# resourceVersion it had read; the StatefulSet controller, reacting to the scale, wrote the
# status in between and the second write got 409. The annotations now follow the /scale with
# the uid precondition only, and a 409 on the /scale itself is read again and decided again
# (docs/real-cluster.md): one restore suffices. The controller is still let settle first, so
# that its scale-down is done before the scale back (not to avoid the race).
sts_settled() {
    [ "$(kube_jp statefulset/db apps '{.status.observedGeneration}/{.status.replicas}')" = \
        "$(kube_jp statefulset/db apps '{.metadata.generation}')/0" ]
}
check R-db-settled wait_for 30 sts_settled
check R-db-restore restore r-db apps/statefulset/db
N=1; check R-db-pod-back wait_for 60 is_n kube_nrunning apps app=db
check R-train-restore restore r-train batch/job/train
check R-train-resumed [ "$(kube_jp job/train batch '{.spec.suspend}')" = false ]
N=1; check R-train-pod-back wait_for 60 is_n kube_nrunning batch app=train
N=1; check R-db-event is_n kube_events apps StatefulSet db IdleGPUReclaimRestored
N=1; check R-train-event is_n kube_events batch Job train IdleGPUReclaimRestored

# --- 4. leader election on a real Lease -----------------------------------------------------------
kubectl apply -f "$DATA/lead.yaml" >"$TMP/lead.out" 2>&1 || { fail lead-applied "$(cat "$TMP/lead.out")"; exit 1; }
N=1; check L-pod-running wait_for 60 is_n kube_nrunning lead app=lead
LEAD_POD=$(kubectl get pods -n lead -l app=lead -o jsonpath='{.items[0].metadata.name}')
stop_pid "$FAKE_PID"
python3 "$DATA/gen_prom.py" "$TMP" lead- "$END" "lead/$LEAD_POD"
start_fake_http "$TMP/prom-lead.out" "$PROM_FAKE" 0 ok "$TMP/lead-range.json" "$TMP/lead-instant.json" ||
    { fail prom-lead-start "$(cat "$TMP/prom-lead.out")"; exit 1; }
PURL=$FAKE_URL
start_le() { # ID: a `run` daemon with --leader-elect (lease 5 s), the ServiceAccount's token
    _port=$(free_port)
    # shellcheck disable=SC2086
    start_bg "$TMP/le-$1.log" env POD_NAME="enf-$1" "$ENF" run --rules.file="$DATA/rules-leader.yaml" \
        --prometheus.url="$PURL" --at="$END" --at.advance --enforce.interval=1s --no-dry-run \
        --state.file="$TMP/le-$1.state" --audit.file="$TMP/le-$1.audit" $KFLAGS \
        --enforce.max-actions-per-hour=0 --leader-elect --leader-elect.namespace=gpureclaim \
        --leader-elect.lease-duration=5s --leader-elect.renew-deadline=3s \
        --leader-elect.retry-period=1s --web.listen-address="127.0.0.1:$_port"
    eval "LE_PID_$1=$LAST_PID LE_PORT_$1=$_port"
}
is_leader() {
    eval "_p=\$LE_PORT_$1"
    curl -s -m 1 "http://127.0.0.1:$_p/metrics" 2>/dev/null | awk '$1 == "gpureclaim_enforcer_leader" { print $2 }'
}
one_leader() {
    _a=$(is_leader a) _b=$(is_leader b)
    [ "$_a$_b" = 10 ] && LEADER=a STANDBY=b && return 0
    [ "$_a$_b" = 01 ] && LEADER=b STANDBY=a && return 0
    return 1
}
holder() { kube_jp lease/gpureclaim-enforcer gpureclaim '{.spec.holderIdentity}'; }
le_count() { # EVENT RESULT FILE...: audit lines of that event and result
    _e=$1 _r=$2; shift 2
    cat "$@" 2>/dev/null | grep "\"event\":\"$_e\"" | grep -c "\"result\":\"$_r\"" || true
}
start_le a
start_le b
if wait_for 30 one_leader; then pass L-one-leader; else
    fail L-one-leader "a=$(is_leader a) b=$(is_leader b): $(tail -n 2 "$TMP/le-a.log")"
    exit 1
fi
check L-lease-holder [ "$(holder)" = "enf-$LEADER" ]
check L-notice-posted wait_for 30 sh -c "[ -n \"\$(kubectl get deploy web -n lead -o jsonpath='{.metadata.annotations.gpureclaim\\.io/reclaim-notice}')\" ]"
check L-not-acted-yet [ "$(kube_jp deploy/web lead '{.spec.replicas}')" = 1 ]
# The Lease's last renewal before the kill, as the leader wrote it (RFC 3339, microseconds).
RENEWED=$(kube_jp lease/gpureclaim-enforcer gpureclaim '{.spec.renewTime}')
eval "kill -KILL \$LE_PID_$LEADER"
KILLED_AT=$(date +%s.%N)
took_over() { [ "$(holder)" = "enf-$STANDBY" ] && [ "$(is_leader "$STANDBY")" = 1 ]; }
if wait_for 60 took_over; then
    TOOK=$(awk -v a="$KILLED_AT" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "standby took the Lease ${TOOK} s after the leader was killed (lease 5 s, retry 1 s)"
    pass L-standby-took-over
    # client-go's rule: the standby takes an expired Lease, a lease duration after the last
    # renewal it saw, at its next try. Measured on the Lease itself (the standby's acquireTime
    # against the leader's last renewTime read before the kill, both written by the
    # enforcers), not on this test's polling: never before the lease duration less one retry
    # period (the renewal read may be up to one old), and no later than the duration, a retry
    # period, the renewal's age and 2 s for a loaded machine's scheduling: 4 to 9 s.
    GAP=$(python3 -c '
import sys
from datetime import datetime
f = lambda s: datetime.strptime(s.rstrip("Z")[:26], "%Y-%m-%dT%H:%M:%S.%f").timestamp()
print("%.1f" % (f(sys.argv[2]) - f(sys.argv[1])))' "$RENEWED" \
        "$(kube_jp lease/gpureclaim-enforcer gpureclaim '{.spec.acquireTime}')" 2>/dev/null)
    echo "the standby acquired the Lease ${GAP:-?} s after the leader's last renewal"
    check L-not-before-expiry awk -v t="${GAP:-0}" 'BEGIN { exit !(t >= 4) }'
    check L-within-lease-and-retries awk -v t="${GAP:-99}" 'BEGIN { exit !(t <= 9) }'
else
    fail L-standby-took-over "holder $(holder)"
fi
check L-acted-by-new-leader wait_for 60 sh -c "[ \"\$(kubectl get deploy web -n lead -o jsonpath='{.spec.replicas}')\" = 0 ]"
# three more cycles of the new leader: nothing more may happen
eval "wait_cycles http://127.0.0.1:\$LE_PORT_$STANDBY/metrics 3" || fail L-three-more-cycles
N=1; check L-one-action-in-audit is_n le_count action ok "$TMP/le-a.audit" "$TMP/le-b.audit"
N=1; check L-one-notice-in-audit is_n le_count notice ok "$TMP/le-a.audit" "$TMP/le-b.audit"
N=1; check L-action-by-standby is_n le_count action ok "$TMP/le-$STANDBY.audit"
N=1; check L-one-reclaimed-event is_n kube_events lead Deployment web IdleGPUReclaimed
N=1; check L-one-notice-event is_n kube_events lead Deployment web IdleGPUReclaimNotice
check L-object-record python3 -c '
import json, sys
n = json.loads(sys.argv[1])
sys.exit(0 if n["acted"]["way"] == "scale" and n["acted"]["replicasBefore"] == 1 else 1)' \
    "$(kube_notice deploy/web lead)"
eval "stop_pid \$LE_PID_$STANDBY"

kube_versions >"$TMP/versions.txt"
finish
