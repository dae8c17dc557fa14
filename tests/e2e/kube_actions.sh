#!/bin/sh
# End to end: the enforcer's Kubernetes actions against fake_kube, request by request.
#
# fake_kube serves data/kube_actions/cluster.json (pods under ReplicaSet -> Deployment,
# StatefulSet, a Job, a Kueue-managed Job with its Workload, bare pods, a pod in kube-system
# and a Deployment labelled gpureclaim.io/exempt=true); fake_prom answers canned matrices
# (gen_matrix.py) in which every pod is idle except one busy pod and one that becomes busy
# during the notice period. rules.yaml has one rule per action (scaleToZero, suspend, evict,
# delete), each with a 5 minute notice period. `run --once --at T` with one state file
# walks through the cycles:
#   dry run T0    (the default) only GETs;
#   A  T0         notices: GET pod, owner GETs, PATCH reclaim-notice annotation, POST Event;
#   B  T0+120     notice period running: no request at all;
#   C  T0+300     (a `run` serving /metrics) actions, with faults: eviction 429 (PDB), Job
#                 PATCH 500, a slow GET .../scale past --kube.timeout, the bare pod replaced
#                 under its name (409 on the uid precondition), 404 on a DELETE; the notebook,
#                 busy again, is spared (annotation removed);
#   D  T0+360     the 429, 500 and timeout are retried once and succeed; nothing else;
#   E  T0+420     nothing mutating: every action happened exactly once.
# Each cycle's requests are compared with the expected transcript (kube_log.py prints
# them, uids as @Kind/name). Then --kube.confirm-pressure with the DuringGPUPressure rule in
# rules-pressure.yaml against Pending pods and Kueue Workloads waiting for quota; a pod re-created under its name skipped as
# too_young (rules-young.yaml); a workload busy during the notice period, unseen by any
# cycle, spared (rules-late.yaml); SIGTERM during a slow DELETE: that call completes, none
# other starts, a restart repeats nothing (rules-stop.yaml); and credentials refused over
# plain http without --kube/--prometheus.allow-insecure-credentials.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/kube_actions
ENF=$BIN/gpureclaim-enforcer
KUBE_FAKE=$(fake_bin fake_kube)
PROM_FAKE=$(fake_bin fake_prom)
T0=1700000000

require python3 curl "$ENF" "$KUBE_FAKE" "$PROM_FAKE"
python3 "$DATA/gen_matrix.py" "$TMP"
echo 's3cret-token' >"$TMP/token"

# start_kube NAME FILE...: fake_kube over a data dir of FILEs; sets KURL and KLOG.
start_kube() {
    _name=$1; shift
    mkdir -p "$TMP/$_name"
    for _f in "$@"; do cp "$DATA/$_f" "$TMP/$_name/"; done
    : >"$TMP/$_name.faults"
    # fake_kube: a PATCH answered 500, a GET slower than --kube.timeout, a pod replaced between read
    # and delete, each at a chosen request: faults a real server does not give on demand
    start_fake_kube "$_name" "$TMP/$_name" --token-file "$TMP/token" \
        --faults-file "$TMP/$_name.faults"
}

# start_prom NAME RANGE INSTANT: sets PURL.
start_prom() {
    start_fake_http "$TMP/$1.out" "$PROM_FAKE" 0 ok "$TMP/$2" "$TMP/$3" ||
        { fail "$1-start" "$(cat "$TMP/$1.out")"; exit 1; }
    PURL=$FAKE_URL
}

# enf LOG AT STATE AUDIT [FLAGS...]: one `run --once` at time AT.
enf() {
    _log=$1 _at=$2 _state=$3 _audit=$4; shift 4
    "$ENF" run --once --rules.file="$RULES" --prometheus.url="$PURL" --at="$_at" \
        --state.file="$_state" --audit.file="$_audit" --kube.api-url="$KURL" \
        --kube.token-file="$TMP/token" --kube.allow-insecure-credentials --kube.timeout=1s \
        --enforce.max-actions-per-hour=0 \
        "$@" >"$_log" 2>&1
}

# transcript FROM OBJECTS...: the requests of $KLOG from line FROM on.
transcript() {
    _from=$1; shift
    # the permission check of a `run` daemon (C) is tested in permissions.sh, not here
    python3 "$DATA/kube_log.py" "$KLOG" "$_from" "$@" |
        grep -v '^POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews '
}

# expect NAME FROM: compare the requests since line FROM with the expected transcript on stdin.
expect() {
    _name=$1 _from=$2
    cat >"$TMP/$_name.want"
    transcript "$_from" "$OBJECTS" >"$TMP/$_name.got"
    if diff -u "$TMP/$_name.want" "$TMP/$_name.got" >"$TMP/$_name.diff"; then
        pass "$_name"
    else
        fail "$_name" "requests differ"
        cat "$TMP/$_name.diff" >&2
    fi
}

lines() { wc -l <"$KLOG" | tr -d ' '; }

# audit FILE EVENT RESULT [POD] [API_STATUS]: how many lines match.
audit() {
    python3 - "$@" <<'PY'
import json, sys
path, event, result = sys.argv[1:4]
pod = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
status = int(sys.argv[5]) if len(sys.argv) > 5 else None
n = 0
for line in open(path):
    o = json.loads(line)
    if o["event"] != event or o.get("result") != result:
        continue
    if pod and o["workload"].get("pod") != pod:
        continue
    if status is not None and o.get("api_status", 0) != status:
        continue
    n += 1
print(n)
PY
}

metric() { # FILE SAMPLE: its value, empty when absent
    python3 -c '
import sys
for line in open(sys.argv[1]):
    if line.startswith(sys.argv[2] + " "):
        print(line.split()[-1])' "$1" "$2"
}

RULES=$DATA/rules.yaml
OBJECTS="$DATA/cluster.json"
start_prom prom range.json instant.json
echo "$LAST_PID" >"$TMP/prom.pid"
start_kube kube cluster.json
pass fakes-started

# --- dry run (the default): resolves, reports, never mutates ----------------------------------
from=$(lines)
check dry-run-exit-0 enf "$TMP/dry.log" $T0 "$TMP/dry-state.json" "$TMP/dry-audit.jsonl"
check dry-run-only-gets test "$(transcript "$from" | grep -vc '^GET ')" = 0
check dry-run-resolved test \
    "$(transcript "$from" | grep -c '^GET /api/v1/namespaces/[a-z-]*/pods/')" = 11
check dry-run-audited test "$(audit "$TMP/dry-audit.jsonl" dry_run dry_run)" = 10

STATE=$TMP/state.json
AUDIT=$TMP/audit.jsonl

# --- A: notices --------------------------------------------------------------------------------
from=$(lines)
check A-exit-0 enf "$TMP/A.log" $T0 "$STATE" "$AUDIT" --no-dry-run
expect A-requests "$from" <<'EOF'
GET /api/v1/namespaces/apps/pods/db-0
GET /apis/apps/v1/namespaces/apps/statefulsets/db
PATCH /apis/apps/v1/namespaces/apps/statefulsets/db [application/merge-patch+json] {"metadata":{"uid":"@StatefulSet/db","annotations":{"gpureclaim.io/reclaim-notice":"<notice scale scaleToZero at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/apps/events [application/json] <Event Warning IdleGPUReclaimNotice StatefulSet/db action=Notice>
GET /api/v1/namespaces/apps/pods/exempt-6c4f-q7r2s
GET /apis/apps/v1/namespaces/apps/replicasets/exempt-6c4f
GET /apis/apps/v1/namespaces/apps/deployments/exempt
GET /api/v1/namespaces/apps/pods/notebook-55d6-w4x5y
GET /apis/apps/v1/namespaces/apps/replicasets/notebook-55d6
GET /apis/apps/v1/namespaces/apps/deployments/notebook
PATCH /apis/apps/v1/namespaces/apps/deployments/notebook [application/merge-patch+json] {"metadata":{"uid":"@Deployment/notebook","annotations":{"gpureclaim.io/reclaim-notice":"<notice scale scaleToZero at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/apps/events [application/json] <Event Warning IdleGPUReclaimNotice Deployment/notebook action=Notice>
GET /api/v1/namespaces/apps/pods/web-5d8f-abc12
GET /apis/apps/v1/namespaces/apps/replicasets/web-5d8f
GET /apis/apps/v1/namespaces/apps/deployments/web
PATCH /apis/apps/v1/namespaces/apps/deployments/web [application/merge-patch+json] {"metadata":{"uid":"@Deployment/web","annotations":{"gpureclaim.io/reclaim-notice":"<notice scale scaleToZero at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/apps/events [application/json] <Event Warning IdleGPUReclaimNotice Deployment/web action=Notice>
GET /api/v1/namespaces/batch/pods/kq-fgh12
GET /apis/batch/v1/namespaces/batch/jobs/kq
PATCH /apis/batch/v1/namespaces/batch/jobs/kq [application/merge-patch+json] {"metadata":{"uid":"@Job/kq","annotations":{"gpureclaim.io/reclaim-notice":"<notice suspend suspend at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/batch/events [application/json] <Event Warning IdleGPUReclaimNotice Job/kq action=Notice>
GET /api/v1/namespaces/batch/pods/train-abcde
GET /apis/batch/v1/namespaces/batch/jobs/train
PATCH /apis/batch/v1/namespaces/batch/jobs/train [application/merge-patch+json] {"metadata":{"uid":"@Job/train","annotations":{"gpureclaim.io/reclaim-notice":"<notice suspend suspend at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/batch/events [application/json] <Event Warning IdleGPUReclaimNotice Job/train action=Notice>
GET /api/v1/namespaces/serve/pods/infer-6f7g-m9n8p
GET /apis/apps/v1/namespaces/serve/replicasets/infer-6f7g
GET /apis/apps/v1/namespaces/serve/deployments/infer
PATCH /apis/apps/v1/namespaces/serve/deployments/infer [application/merge-patch+json] {"metadata":{"uid":"@Deployment/infer","annotations":{"gpureclaim.io/reclaim-notice":"<notice evict evict at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/serve/events [application/json] <Event Warning IdleGPUReclaimNotice Deployment/infer action=Notice>
GET /api/v1/namespaces/scratch/pods/bare-conflict
PATCH /api/v1/namespaces/scratch/pods/bare-conflict [application/merge-patch+json] {"metadata":{"uid":"@Pod/bare-conflict","annotations":{"gpureclaim.io/reclaim-notice":"<notice delete delete at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/scratch/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/bare-conflict action=Notice>
GET /api/v1/namespaces/scratch/pods/bare-gone
PATCH /api/v1/namespaces/scratch/pods/bare-gone [application/merge-patch+json] {"metadata":{"uid":"@Pod/bare-gone","annotations":{"gpureclaim.io/reclaim-notice":"<notice delete delete at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/scratch/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/bare-gone action=Notice>
GET /api/v1/namespaces/scratch/pods/bare-ok
PATCH /api/v1/namespaces/scratch/pods/bare-ok [application/merge-patch+json] {"metadata":{"uid":"@Pod/bare-ok","annotations":{"gpureclaim.io/reclaim-notice":"<notice delete delete at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/scratch/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/bare-ok action=Notice>
GET /api/v1/namespaces/scratch/pods/sweep-8h9j-t5u6v
GET /apis/apps/v1/namespaces/scratch/replicasets/sweep-8h9j
GET /apis/apps/v1/namespaces/scratch/deployments/sweep
PATCH /apis/apps/v1/namespaces/scratch/deployments/sweep [application/merge-patch+json] {"metadata":{"uid":"@Deployment/sweep","annotations":{"gpureclaim.io/reclaim-notice":"<notice delete delete at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/scratch/events [application/json] <Event Warning IdleGPUReclaimNotice Deployment/sweep action=Notice>
EOF
check A-audit-notices test "$(audit "$AUDIT" notice ok)" = 10
check A-audit-exempt test "$(audit "$AUDIT" skipped exempt exempt-6c4f-q7r2s)" = 1
check A-audit-protected test "$(audit "$AUDIT" skipped protected gpu-burn)" = 1

# --- B: inside the notice period nothing is sent but the exempt pod's lookup ------------------
from=$(lines)
check B-exit-0 enf "$TMP/B.log" $((T0 + 120)) "$STATE" "$AUDIT" --no-dry-run
expect B-requests "$from" <<'EOF'
GET /api/v1/namespaces/apps/pods/exempt-6c4f-q7r2s
GET /apis/apps/v1/namespaces/apps/replicasets/exempt-6c4f
GET /apis/apps/v1/namespaces/apps/deployments/exempt
EOF

# --- C: actions with faults, from a `run` that serves its metrics ----------------------------
cat >"$TMP/kube.faults" <<'EOF'
GET /apis/apps/v1/namespaces/apps/statefulsets/db/scale=slow:3x1
PATCH /apis/batch/v1/namespaces/batch/jobs/train=500x1
POST /api/v1/namespaces/serve/pods/infer-6f7g-m9n8p/eviction=429x1
DELETE /api/v1/namespaces/scratch/pods/bare-conflict=replace
DELETE /api/v1/namespaces/scratch/pods/bare-gone=404x1
EOF
from=$(lines)
MPORT=$(free_port)
start_bg "$TMP/C.log" "$ENF" run --rules.file="$RULES" --prometheus.url="$PURL" \
    --at=$((T0 + 300)) --enforce.interval=1h --web.listen-address="127.0.0.1:$MPORT" \
    --state.file="$STATE" --audit.file="$AUDIT" --kube.api-url="$KURL" \
    --kube.token-file="$TMP/token" --kube.allow-insecure-credentials --kube.timeout=1s \
    --enforce.max-actions-per-hour=0 --no-dry-run
RUN_C=$LAST_PID
ok=false
for _i in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$MPORT/metrics" >"$TMP/C.metrics" 2>/dev/null &&
        [ "$(metric "$TMP/C.metrics" 'gpureclaim_enforcer_cycles_total{result="success"}')" = 1 ] &&
        { ok=true; break; }
    sleep 0.1
done
stop_pid "$RUN_C"
check C-cycle-done $ok
# After a /scale the object acted on is read back: the record holds the digest of its spec as
# the scale left it (act_kube.c, act_kube_left); after a 409 the object is read again
# (act_kube_reread: the replaced bare-conflict is then not written again).
expect C-requests "$from" <<'EOF'
PATCH /apis/apps/v1/namespaces/apps/deployments/notebook [application/merge-patch+json] {"metadata":{"uid":"@Deployment/notebook","annotations":{"gpureclaim.io/reclaim-notice":null}}}
POST /api/v1/namespaces/apps/events [application/json] <Event Normal IdleGPUReclaimSpared Deployment/notebook action=Spare>
GET /api/v1/namespaces/apps/pods/db-0
GET /apis/apps/v1/namespaces/apps/statefulsets/db
GET /apis/apps/v1/namespaces/apps/statefulsets/db/scale
GET /api/v1/namespaces/apps/pods/exempt-6c4f-q7r2s
GET /apis/apps/v1/namespaces/apps/replicasets/exempt-6c4f
GET /apis/apps/v1/namespaces/apps/deployments/exempt
GET /api/v1/namespaces/apps/pods/web-5d8f-abc12
GET /apis/apps/v1/namespaces/apps/replicasets/web-5d8f
GET /apis/apps/v1/namespaces/apps/deployments/web
GET /apis/apps/v1/namespaces/apps/deployments/web/scale
PATCH /apis/apps/v1/namespaces/apps/deployments/web [application/merge-patch+json] {"metadata":{"uid":"@Deployment/web","resourceVersion":"@rv","annotations":{"gpureclaim.io/replicas-before-reclaim":"2"}}}
PATCH /apis/apps/v1/namespaces/apps/deployments/web/scale [application/merge-patch+json] {"metadata":{"uid":"@Deployment/web","resourceVersion":"@rv"},"spec":{"replicas":0}}
GET /apis/apps/v1/namespaces/apps/deployments/web
POST /api/v1/namespaces/apps/events [application/json] <Event Warning IdleGPUReclaimed Deployment/web action=ScaleToZero>
PATCH /apis/apps/v1/namespaces/apps/deployments/web [application/merge-patch+json] {"metadata":{"uid":"@Deployment/web","annotations":{"gpureclaim.io/reclaim-notice":"<notice scale scaleToZero at 2023-11-14T22:18:20Z acted>"}}}
GET /api/v1/namespaces/batch/pods/kq-fgh12
GET /apis/batch/v1/namespaces/batch/jobs/kq
GET /apis
GET /apis/kueue.x-k8s.io/v1beta1
GET /apis/kueue.x-k8s.io/v1beta1/namespaces/batch/workloads?labelSelector=kueue.x-k8s.io/job-uid=@Job/kq
PATCH /apis/kueue.x-k8s.io/v1beta1/namespaces/batch/workloads/job-kq-1a2b3 [application/merge-patch+json] {"metadata":{"uid":"@Workload/job-kq-1a2b3"},"spec":{"active":false}}
POST /api/v1/namespaces/batch/events [application/json] <Event Warning IdleGPUReclaimed Job/kq action=Suspend>
PATCH /apis/batch/v1/namespaces/batch/jobs/kq [application/merge-patch+json] {"metadata":{"uid":"@Job/kq","annotations":{"gpureclaim.io/reclaim-notice":"<notice suspend suspend at 2023-11-14T22:18:20Z acted>"}}}
GET /api/v1/namespaces/batch/pods/train-abcde
GET /apis/batch/v1/namespaces/batch/jobs/train
PATCH /apis/batch/v1/namespaces/batch/jobs/train [application/merge-patch+json] {"metadata":{"uid":"@Job/train","resourceVersion":"@rv"},"spec":{"suspend":true}}
GET /api/v1/namespaces/serve/pods/infer-6f7g-m9n8p
GET /apis/apps/v1/namespaces/serve/replicasets/infer-6f7g
GET /apis/apps/v1/namespaces/serve/deployments/infer
POST /api/v1/namespaces/serve/pods/infer-6f7g-m9n8p/eviction [application/json] {"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"infer-6f7g-m9n8p","namespace":"serve"},"deleteOptions":{"preconditions":{"uid":"@Pod/infer-6f7g-m9n8p"}}}
GET /api/v1/namespaces/scratch/pods/bare-conflict
DELETE /api/v1/namespaces/scratch/pods/bare-conflict [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Pod/bare-conflict","resourceVersion":"@rv"}}
GET /api/v1/namespaces/scratch/pods/bare-conflict
GET /api/v1/namespaces/scratch/pods/bare-gone
DELETE /api/v1/namespaces/scratch/pods/bare-gone [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Pod/bare-gone","resourceVersion":"@rv"}}
GET /api/v1/namespaces/scratch/pods/bare-ok
DELETE /api/v1/namespaces/scratch/pods/bare-ok [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Pod/bare-ok","resourceVersion":"@rv"}}
POST /api/v1/namespaces/scratch/events [application/json] <Event Warning IdleGPUReclaimed Pod/bare-ok action=Delete>
GET /api/v1/namespaces/scratch/pods/sweep-8h9j-t5u6v
GET /apis/apps/v1/namespaces/scratch/replicasets/sweep-8h9j
GET /apis/apps/v1/namespaces/scratch/deployments/sweep
DELETE /apis/apps/v1/namespaces/scratch/deployments/sweep [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Deployment/sweep","resourceVersion":"@rv"}}
POST /api/v1/namespaces/scratch/events [application/json] <Event Warning IdleGPUReclaimed Deployment/sweep action=Delete>
EOF
# metrics of C: actions_total by result, spares, skips, what is still pending
C_METRICS='
gpureclaim_enforcer_actions_total{rule="scale",action="scaleToZero",result="ok"} 1
gpureclaim_enforcer_actions_total{rule="scale",action="scaleToZero",result="error"} 1
gpureclaim_enforcer_actions_total{rule="suspend",action="suspend",result="ok"} 1
gpureclaim_enforcer_actions_total{rule="suspend",action="suspend",result="error"} 1
gpureclaim_enforcer_actions_total{rule="evict",action="evict",result="retry"} 1
gpureclaim_enforcer_actions_total{rule="delete",action="delete",result="ok"} 2
gpureclaim_enforcer_actions_total{rule="delete",action="delete",result="conflict"} 1
gpureclaim_enforcer_actions_total{rule="delete",action="delete",result="gone"} 1
gpureclaim_enforcer_spared_total{rule="scale"} 1
gpureclaim_enforcer_skipped_total{rule="scale",reason="exempt"} 1
gpureclaim_enforcer_skipped_total{rule="delete",reason="protected"} 1
gpureclaim_enforcer_pending_notices 3
gpureclaim_enforcer_actions_last_hour 9'
echo "$C_METRICS" | while read -r sample want; do
    [ -n "$sample" ] || continue
    got=$(metric "$TMP/C.metrics" "$sample")
    [ "$got" = "$want" ] || echo "$sample = '$got', want $want"
done >"$TMP/C.metrics.diff"
check C-metrics test ! -s "$TMP/C.metrics.diff" || cat "$TMP/C.metrics.diff" >&2
check C-metrics-no-evict-ok test -z "$(metric "$TMP/C.metrics" \
    'gpureclaim_enforcer_actions_total{rule="evict",action="evict",result="ok"}')"
# audit of C: each result with the API's status (0: no answer, the timeout)
check C-audit-spared test "$(audit "$AUDIT" spared ok notebook-55d6-w4x5y)" = 1
check C-audit-scale-ok test "$(audit "$AUDIT" action ok web-5d8f-abc12 200)" = 1
check C-audit-timeout test "$(audit "$AUDIT" action error db-0 0)" = 1
check C-audit-500 test "$(audit "$AUDIT" action error train-abcde 500)" = 1
check C-audit-kueue-ok test "$(audit "$AUDIT" action ok kq-fgh12 200)" = 1
check C-audit-pdb-retry test "$(audit "$AUDIT" action retry infer-6f7g-m9n8p 429)" = 1
check C-audit-409 test "$(audit "$AUDIT" action conflict bare-conflict 409)" = 1
check C-audit-404 test "$(audit "$AUDIT" action gone bare-gone 404)" = 1
check C-audit-delete-ok test "$(audit "$AUDIT" action ok bare-ok 200)" = 1
check C-audit-timeout-message grep -q '"pod":"db-0".*"result":"error".*timeout after 1.0 s' "$AUDIT"
check C-audit-pdb-message grep -q '"result":"retry".*disruption budget' "$AUDIT"
check C-audit-409-message \
    grep -q '"result":"conflict".*Precondition failed: UID in precondition' "$AUDIT"

# --- D: the 429, 500 and timeout are retried, once ------------------------------------------
from=$(lines)
check D-exit-0 enf "$TMP/D.log" $((T0 + 360)) "$STATE" "$AUDIT" --no-dry-run
# The cycle starts by reading the two objects acted on in C, to count the GPU time their
# actions freed (act.c, act_freed: still stopped?); then the retries.
expect D-requests "$from" <<'EOF'
GET /apis/apps/v1/namespaces/apps/deployments/web
GET /apis/batch/v1/namespaces/batch/jobs/kq
GET /api/v1/namespaces/apps/pods/db-0
GET /apis/apps/v1/namespaces/apps/statefulsets/db
GET /apis/apps/v1/namespaces/apps/statefulsets/db/scale
PATCH /apis/apps/v1/namespaces/apps/statefulsets/db [application/merge-patch+json] {"metadata":{"uid":"@StatefulSet/db","resourceVersion":"@rv","annotations":{"gpureclaim.io/replicas-before-reclaim":"1"}}}
PATCH /apis/apps/v1/namespaces/apps/statefulsets/db/scale [application/merge-patch+json] {"metadata":{"uid":"@StatefulSet/db","resourceVersion":"@rv"},"spec":{"replicas":0}}
GET /apis/apps/v1/namespaces/apps/statefulsets/db
POST /api/v1/namespaces/apps/events [application/json] <Event Warning IdleGPUReclaimed StatefulSet/db action=ScaleToZero>
PATCH /apis/apps/v1/namespaces/apps/statefulsets/db [application/merge-patch+json] {"metadata":{"uid":"@StatefulSet/db","annotations":{"gpureclaim.io/reclaim-notice":"<notice scale scaleToZero at 2023-11-14T22:18:20Z acted>"}}}
GET /api/v1/namespaces/apps/pods/exempt-6c4f-q7r2s
GET /apis/apps/v1/namespaces/apps/replicasets/exempt-6c4f
GET /apis/apps/v1/namespaces/apps/deployments/exempt
GET /api/v1/namespaces/apps/pods/web-5d8f-abc12
GET /apis/apps/v1/namespaces/apps/replicasets/web-5d8f
GET /apis/apps/v1/namespaces/apps/deployments/web
GET /api/v1/namespaces/batch/pods/kq-fgh12
GET /apis/batch/v1/namespaces/batch/jobs/kq
GET /api/v1/namespaces/batch/pods/train-abcde
GET /apis/batch/v1/namespaces/batch/jobs/train
PATCH /apis/batch/v1/namespaces/batch/jobs/train [application/merge-patch+json] {"metadata":{"uid":"@Job/train","resourceVersion":"@rv"},"spec":{"suspend":true}}
POST /api/v1/namespaces/batch/events [application/json] <Event Warning IdleGPUReclaimed Job/train action=Suspend>
PATCH /apis/batch/v1/namespaces/batch/jobs/train [application/merge-patch+json] {"metadata":{"uid":"@Job/train","annotations":{"gpureclaim.io/reclaim-notice":"<notice suspend suspend at 2023-11-14T22:18:20Z acted>"}}}
GET /api/v1/namespaces/serve/pods/infer-6f7g-m9n8p
GET /apis/apps/v1/namespaces/serve/replicasets/infer-6f7g
GET /apis/apps/v1/namespaces/serve/deployments/infer
POST /api/v1/namespaces/serve/pods/infer-6f7g-m9n8p/eviction [application/json] {"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"infer-6f7g-m9n8p","namespace":"serve"},"deleteOptions":{"preconditions":{"uid":"@Pod/infer-6f7g-m9n8p"}}}
POST /api/v1/namespaces/serve/events [application/json] <Event Warning IdleGPUReclaimed Deployment/infer action=Evict>
GET /api/v1/namespaces/scratch/pods/bare-conflict
GET /api/v1/namespaces/scratch/pods/bare-gone
GET /api/v1/namespaces/scratch/pods/bare-ok
GET /api/v1/namespaces/scratch/pods/sweep-8h9j-t5u6v
GET /apis/apps/v1/namespaces/scratch/replicasets/sweep-8h9j
GET /apis/apps/v1/namespaces/scratch/deployments/sweep
EOF
check D-audit-timeout-retried test "$(audit "$AUDIT" action ok db-0 200)" = 1
check D-audit-500-retried test "$(audit "$AUDIT" action ok train-abcde 200)" = 1
check D-audit-pdb-retried test "$(audit "$AUDIT" action ok infer-6f7g-m9n8p 201)" = 1
check D-audit-replaced-skipped test "$(audit "$AUDIT" skipped replaced bare-conflict)" = 1

# --- E: the same state file never acts again --------------------------------------------------
from=$(lines)
check E-exit-0 enf "$TMP/E.log" $((T0 + 420)) "$STATE" "$AUDIT" --no-dry-run
check E-only-gets test "$(transcript "$from" | grep -vc '^GET ')" = 0
check E-no-new-action test "$(grep -c '"event":"action"' "$AUDIT")" = 12
check E-no-new-notice test "$(grep -c '"event":"notice"' "$AUDIT")" = 10

# --- whole log -------------------------------------------------------------------------------
check every-request-has-the-token python3 -c '
import json, sys
for line in open(sys.argv[1]):
    assert json.loads(line)["token"] == "s3cret-token", line' "$KLOG"
check busy-pod-never-read test "$(grep -c 'busy' "$KLOG")" = 0
check kube-system-never-touched test "$(grep -c 'kube-system' "$KLOG")" = 0
check C-permissions-checked test "$(grep -c '/selfsubjectaccessreviews"' "$KLOG")" -gt 0
check exempt-never-mutated test "$(transcript 0 | grep -v '^GET ' | grep -c exempt)" = 0
# Every action request once, but the two answered 500 and 429 at C, sent again at D.
ACTION_RE='^(DELETE|POST [^ ]*/eviction|PATCH [^ ]*/scale|PATCH [^ ]*/(jobs|workloads)/.*"spec")'
transcript 0 "$OBJECTS" | grep -E "$ACTION_RE" |
    sort | uniq -c | awk '{ print $1, $2, $3 }' >"$TMP/mutations"
check mutations-once-but-retries diff -u - "$TMP/mutations" <<'EOF'
1 DELETE /api/v1/namespaces/scratch/pods/bare-conflict
1 DELETE /api/v1/namespaces/scratch/pods/bare-gone
1 DELETE /api/v1/namespaces/scratch/pods/bare-ok
1 DELETE /apis/apps/v1/namespaces/scratch/deployments/sweep
1 PATCH /apis/apps/v1/namespaces/apps/deployments/web/scale
1 PATCH /apis/apps/v1/namespaces/apps/statefulsets/db/scale
2 PATCH /apis/batch/v1/namespaces/batch/jobs/train
1 PATCH /apis/kueue.x-k8s.io/v1beta1/namespaces/batch/workloads/job-kq-1a2b3
2 POST /api/v1/namespaces/serve/pods/infer-6f7g-m9n8p/eviction
EOF
check audit-is-json python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    for k in ("time", "event", "rule", "workload", "owner_chain", "action", "result"):
        assert k in o, (k, line)
    for ref in o["owner_chain"]:
        assert ref["kind"] and ref["name"], line
    if o["event"] in ("notice", "action") and o["owner_chain"]:
        assert o["owner_chain"][0]["kind"] == "Pod", line
' "$AUDIT"

# --- --kube.confirm-pressure -------------------------------------------------------------------
# The DuringGPUPressure rule sees pending demand in Prometheus; with the flag, it notices and
# acts only while the API shows a Pending pod the scheduler could not place for lack of
# amd.com/gpu, asked before the notice and again before the action (issue 24 §1: no notice
# is posted for a pressure the API does not confirm). Kueue is found by discovery (GET /apis).
stop_pid "$(cat "$TMP/prom.pid")"
RULES=$DATA/rules-pressure.yaml
OBJECTS="$DATA/press.json"
start_prom press-prom press-range.json press-instant.json
PSTATE=$TMP/press-state.json
PAUDIT=$TMP/press-audit.jsonl

# P1: only pods pending for cpu, for amd.com/gpu_xcp or pulling images: not confirmed, no
# notice; then the pod list fails (500): not confirmed either, still no notice
start_kube press-other press.json pending-other.json
from=$(lines)
check P1-exit-0 enf "$TMP/P1.log" $T0 "$PSTATE" "$PAUDIT" --no-dry-run --kube.confirm-pressure
echo 'GET /api/v1/pods=500x1' >"$TMP/press-other.faults"
check P1-exit-0-again enf "$TMP/P1b.log" $((T0 + 60)) "$PSTATE" "$PAUDIT" --no-dry-run \
    --kube.confirm-pressure
check P1-list-error-logged grep -q "cannot confirm GPU pressure.*HTTP 500" "$TMP/P1b.log"
expect P1-requests "$from" <<'EOF'
GET /api/v1/namespaces/press/pods/press-a
GET /api/v1/pods?fieldSelector=status.phase=Pending
GET /apis
GET /apis/kueue.x-k8s.io/v1beta1
GET /apis/kueue.x-k8s.io/v1beta1/workloads
GET /api/v1/namespaces/press/pods/press-a
GET /api/v1/pods?fieldSelector=status.phase=Pending
EOF
check P1-audit-not-confirmed test "$(audit "$PAUDIT" skipped pressure_not_confirmed press-a)" = 2
check P1-audit-message python3 -c '
import json, sys
msgs = [json.loads(l).get("message") for l in open(sys.argv[1])]
assert "no Pending pod is unschedulable for lack of '"'"'amd.com/gpu'"'"' and no Kueue " \
    "Workload waits for its quota" in msgs, msgs' "$PAUDIT"
check P1-no-action test "$(grep -c '"event":"action"' "$PAUDIT")" = 0
check P1-no-notice test "$(grep -c '"event":"notice"' "$PAUDIT")" = 0

# P2: now a pod waits for amd.com/gpu: confirmed, noticed, confirmed again, deleted
start_kube press-gpu press.json pending-gpu.json
from=$(lines)
check P2-exit-0 enf "$TMP/P2.log" $((T0 + 120)) "$PSTATE" "$PAUDIT" --no-dry-run \
    --kube.confirm-pressure
expect P2-requests "$from" <<'EOF'
GET /api/v1/namespaces/press/pods/press-a
GET /api/v1/pods?fieldSelector=status.phase=Pending
PATCH /api/v1/namespaces/press/pods/press-a [application/merge-patch+json] {"metadata":{"uid":"@Pod/press-a","annotations":{"gpureclaim.io/reclaim-notice":"<notice pressure delete at 2023-11-14T22:15:20Z>"}}}
POST /api/v1/namespaces/press/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/press-a action=Notice>
GET /api/v1/pods?fieldSelector=status.phase=Pending
DELETE /api/v1/namespaces/press/pods/press-a [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Pod/press-a","resourceVersion":"@rv"}}
POST /api/v1/namespaces/press/events [application/json] <Event Warning IdleGPUReclaimed Pod/press-a action=Delete>
EOF
check P2-audit-action test "$(audit "$PAUDIT" action ok press-a 200)" = 1

# P3: without the flag (the default) there is no pod list: the Prometheus signal decides
start_kube press-plain press.json
from=$(lines)
check P3-exit-0 enf "$TMP/P3.log" $T0 "$TMP/p3-state.json" "$TMP/p3-audit.jsonl" --no-dry-run
expect P3-requests "$from" <<'EOF'
GET /api/v1/namespaces/press/pods/press-a
PATCH /api/v1/namespaces/press/pods/press-a [application/merge-patch+json] {"metadata":{"uid":"@Pod/press-a","annotations":{"gpureclaim.io/reclaim-notice":"<notice pressure delete at 2023-11-14T22:13:20Z>"}}}
POST /api/v1/namespaces/press/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/press-a action=Notice>
DELETE /api/v1/namespaces/press/pods/press-a [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Pod/press-a","resourceVersion":"@rv"}}
POST /api/v1/namespaces/press/events [application/json] <Event Warning IdleGPUReclaimed Pod/press-a action=Delete>
EOF
# P4: no pod waits, but Kueue Workloads do (a suspended Kueue job has no pods). First only
# the candidate's own Workload (Kueue's pod integration: owned by press-a), a deactivated one
# and one short of amd.com/gpu_xcp: not confirmed, no notice; then Kueue's Workloads are
# not found (404): not confirmed; then a list error (500): not confirmed, logged; then another
# job's Workload waits for amd.com/gpu quota: confirmed, noticed, confirmed again, deleted.
P4STATE=$TMP/p4-state.json
P4AUDIT=$TMP/p4-audit.jsonl
start_kube press-kueue-own press.json kueue-own.json
from=$(lines)
check P4-exit-0 enf "$TMP/P4.log" $T0 "$P4STATE" "$P4AUDIT" --no-dry-run --kube.confirm-pressure
printf '%s\n' 'GET /apis/kueue.x-k8s.io/v1beta1/workloads=404x1' \
    'GET /apis/kueue.x-k8s.io/v1beta1/workloads=500x1' >"$TMP/press-kueue-own.faults"
check P4-exit-0-404 enf "$TMP/P4b.log" $((T0 + 60)) "$P4STATE" "$P4AUDIT" --no-dry-run \
    --kube.confirm-pressure
check P4-exit-0-500 enf "$TMP/P4c.log" $((T0 + 90)) "$P4STATE" "$P4AUDIT" --no-dry-run \
    --kube.confirm-pressure
check P4-kueue-error-logged grep -q "cannot confirm GPU pressure.*list Kueue workloads.*HTTP 500" \
    "$TMP/P4c.log"
check P4-404-not-logged-as-error sh -c "! grep -q 'cannot confirm' '$TMP/P4b.log'"
expect P4-requests "$from" <<'EOF'
GET /api/v1/namespaces/press/pods/press-a
GET /api/v1/pods?fieldSelector=status.phase=Pending
GET /apis
GET /apis/kueue.x-k8s.io/v1beta1
GET /apis/kueue.x-k8s.io/v1beta1/workloads
GET /api/v1/namespaces/press/pods/press-a
GET /api/v1/pods?fieldSelector=status.phase=Pending
GET /apis
GET /apis/kueue.x-k8s.io/v1beta1
GET /apis/kueue.x-k8s.io/v1beta1/workloads
GET /api/v1/namespaces/press/pods/press-a
GET /api/v1/pods?fieldSelector=status.phase=Pending
GET /apis
GET /apis/kueue.x-k8s.io/v1beta1
GET /apis/kueue.x-k8s.io/v1beta1/workloads
EOF
check P4-audit-not-confirmed test "$(audit "$P4AUDIT" skipped pressure_not_confirmed press-a)" = 3
check P4-audit-no-kueue grep -q 'the API serves no Kueue Workloads' "$P4AUDIT"
check P4-no-action test "$(grep -c '"event":"action"' "$P4AUDIT")" = 0
check P4-no-notice test "$(grep -c '"event":"notice"' "$P4AUDIT")" = 0
start_kube press-kueue press.json kueue-waiting.json
from=$(lines)
check P4-exit-0-waiting enf "$TMP/P4d.log" $((T0 + 120)) "$P4STATE" "$P4AUDIT" --no-dry-run \
    --kube.confirm-pressure
expect P4-requests-confirmed "$from" <<'EOF'
GET /api/v1/namespaces/press/pods/press-a
GET /api/v1/pods?fieldSelector=status.phase=Pending
GET /apis
GET /apis/kueue.x-k8s.io/v1beta1
GET /apis/kueue.x-k8s.io/v1beta1/workloads
PATCH /api/v1/namespaces/press/pods/press-a [application/merge-patch+json] {"metadata":{"uid":"@Pod/press-a","annotations":{"gpureclaim.io/reclaim-notice":"<notice pressure delete at 2023-11-14T22:15:20Z>"}}}
POST /api/v1/namespaces/press/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/press-a action=Notice>
GET /api/v1/pods?fieldSelector=status.phase=Pending
GET /apis/kueue.x-k8s.io/v1beta1/workloads
DELETE /api/v1/namespaces/press/pods/press-a [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Pod/press-a","resourceVersion":"@rv"}}
POST /api/v1/namespaces/press/events [application/json] <Event Warning IdleGPUReclaimed Pod/press-a action=Delete>
EOF
check P4-audit-action test "$(audit "$P4AUDIT" action ok press-a 200)" = 1

# --- too_young: a pod re-created under its name does not inherit its predecessor's idle time
# jupyter-alice was created at T0 - 120 s, but its series (the same namespace and pod labels)
# has been idle for half an hour: skipped as too_young until its own 15 minutes are complete.
RULES=$DATA/rules-young.yaml
OBJECTS="$DATA/young.json"
start_prom young-prom young-range.json young-instant.json
start_kube young young.json
YSTATE=$TMP/young-state.json
YAUDIT=$TMP/young-audit.jsonl
from=$(lines)
check Y1-exit-0 enf "$TMP/Y1.log" $T0 "$YSTATE" "$YAUDIT" --no-dry-run
expect Y1-requests "$from" <<'EOF'
GET /api/v1/namespaces/young/pods/jupyter-alice
GET /api/v1/namespaces/young/pods/jupyter-bob
PATCH /api/v1/namespaces/young/pods/jupyter-bob [application/merge-patch+json] {"metadata":{"uid":"@Pod/jupyter-bob","annotations":{"gpureclaim.io/reclaim-notice":"<notice young delete at 2023-11-14T22:13:20Z>"}}}
POST /api/v1/namespaces/young/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/jupyter-bob action=Notice>
DELETE /api/v1/namespaces/young/pods/jupyter-bob [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Pod/jupyter-bob","resourceVersion":"@rv"}}
POST /api/v1/namespaces/young/events [application/json] <Event Warning IdleGPUReclaimed Pod/jupyter-bob action=Delete>
EOF
check Y1-audit-too-young test "$(audit "$YAUDIT" skipped too_young jupyter-alice)" = 1
check Y1-audit-message grep -q \
    '"result":"too_young".*created at 2023-11-14T22:11:20Z, after the idle window start 2023-11-14T21:58:20Z' \
    "$YAUDIT"
from=$(lines)
check Y2-exit-0 enf "$TMP/Y2.log" $((T0 + 300)) "$YSTATE" "$YAUDIT" --no-dry-run
check Y2-still-young test "$(transcript "$from" | grep -vc '^GET ')" = 0
# its own idle window complete (15 minutes after its creation): reclaimed
from=$(lines)
check Y3-exit-0 enf "$TMP/Y3.log" $((T0 + 780)) "$YSTATE" "$YAUDIT" --no-dry-run
expect Y3-requests "$from" <<'EOF'
GET /api/v1/namespaces/young/pods/jupyter-alice
PATCH /api/v1/namespaces/young/pods/jupyter-alice [application/merge-patch+json] {"metadata":{"uid":"@Pod/jupyter-alice","annotations":{"gpureclaim.io/reclaim-notice":"<notice young delete at 2023-11-14T22:26:20Z>"}}}
POST /api/v1/namespaces/young/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/jupyter-alice action=Notice>
DELETE /api/v1/namespaces/young/pods/jupyter-alice [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Pod/jupyter-alice","resourceVersion":"@rv"}}
POST /api/v1/namespaces/young/events [application/json] <Event Warning IdleGPUReclaimed Pod/jupyter-alice action=Delete>
GET /api/v1/namespaces/young/pods/jupyter-bob
EOF

# --- continuous idleness since the notice ---------------------------------------------------
# Notice period 5m, idle timer 2m. late/blip is busy at T0 + 150 only, between the cycles at
# T0 + 120 and T0 + 300: the cycle at T0 + 300 sees 2 idle minutes, but its idle run starts
# after the notice, so it is spared (annotation removed, Event) and noticed afresh, while
# late/steady, idle throughout, is deleted.
RULES=$DATA/rules-late.yaml
OBJECTS="$DATA/late.json"
start_prom late-prom late-range.json late-instant.json
start_kube late late.json
LSTATE=$TMP/late-state.json
LAUDIT=$TMP/late-audit.jsonl
from=$(lines)
check L1-exit-0 enf "$TMP/L1.log" $T0 "$LSTATE" "$LAUDIT" --no-dry-run
check L2-exit-0 enf "$TMP/L2.log" $((T0 + 120)) "$LSTATE" "$LAUDIT" --no-dry-run
expect L12-requests "$from" <<'EOF'
GET /api/v1/namespaces/late/pods/blip
PATCH /api/v1/namespaces/late/pods/blip [application/merge-patch+json] {"metadata":{"uid":"@Pod/blip","annotations":{"gpureclaim.io/reclaim-notice":"<notice late delete at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/late/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/blip action=Notice>
GET /api/v1/namespaces/late/pods/steady
PATCH /api/v1/namespaces/late/pods/steady [application/merge-patch+json] {"metadata":{"uid":"@Pod/steady","annotations":{"gpureclaim.io/reclaim-notice":"<notice late delete at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/late/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/steady action=Notice>
EOF
from=$(lines)
check L3-exit-0 enf "$TMP/L3.log" $((T0 + 300)) "$LSTATE" "$LAUDIT" --no-dry-run
expect L3-requests "$from" <<'EOF'
PATCH /api/v1/namespaces/late/pods/blip [application/merge-patch+json] {"metadata":{"uid":"@Pod/blip","annotations":{"gpureclaim.io/reclaim-notice":null}}}
POST /api/v1/namespaces/late/events [application/json] <Event Normal IdleGPUReclaimSpared Pod/blip action=Spare>
GET /api/v1/namespaces/late/pods/blip
PATCH /api/v1/namespaces/late/pods/blip [application/merge-patch+json] {"metadata":{"uid":"@Pod/blip","annotations":{"gpureclaim.io/reclaim-notice":"<notice late delete at 2023-11-14T22:23:20Z>"}}}
POST /api/v1/namespaces/late/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/blip action=Notice>
GET /api/v1/namespaces/late/pods/steady
DELETE /api/v1/namespaces/late/pods/steady [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Pod/steady","resourceVersion":"@rv"}}
POST /api/v1/namespaces/late/events [application/json] <Event Warning IdleGPUReclaimed Pod/steady action=Delete>
EOF
check L3-audit-spared test "$(audit "$LAUDIT" spared ok blip)" = 1
check L3-audit-message grep -q \
    '"event":"spared".*not idle without a break since the notice: the idle run starts at 2023-11-14T22:16:05Z' \
    "$LAUDIT"
check L3-spare-event-message grep -q 'idle GPU reclaim withdrawn: not idle without a break' "$KLOG"
# idle without a break since its new notice: deleted when that one is due
from=$(lines)
check L4-exit-0 enf "$TMP/L4.log" $((T0 + 600)) "$LSTATE" "$LAUDIT" --no-dry-run
check L4-blip-deleted \
    test "$(transcript "$from" | grep -c '^DELETE /api/v1/namespaces/late/pods/blip')" = 1

# --- SIGTERM during a slow call: that call completes, no other starts -----------------------
# Three pods to delete at once; the first DELETE takes 2 s. SIGTERM while it is in flight:
# the DELETE completes and is recorded (ledger, audit), no Event, no call for s2 and s3, exit
# 0 within --kube.timeout. A restart repeats nothing and deletes s2 and s3.
RULES=$DATA/rules-stop.yaml
OBJECTS="$DATA/stop.json"
start_prom stop-prom stop-range.json stop-instant.json
start_kube stop stop.json
echo 'DELETE /api/v1/namespaces/stop/pods/s1=slow:2' >"$TMP/stop.faults"
SSTATE=$TMP/stop-state.json
SAUDIT=$TMP/stop-audit.jsonl
from=$(lines)
start_bg "$TMP/S1.log" "$ENF" run --once --rules.file="$RULES" --prometheus.url="$PURL" \
    --at=$T0 --state.file="$SSTATE" --audit.file="$SAUDIT" --kube.api-url="$KURL" \
    --kube.token-file="$TMP/token" --kube.allow-insecure-credentials --kube.timeout=5s \
    --enforce.max-actions-per-hour=0 --no-dry-run
SPID=$LAST_PID
in_flight=false
for _i in $(seq 1 600); do
    transcript "$from" | grep -q '^DELETE /api/v1/namespaces/stop/pods/s1' &&
        { in_flight=true; break; }
    sleep 0.05
done
check S1-delete-in-flight $in_flight
t_term=$(date +%s.%N)
kill -TERM "$SPID"
wait "$SPID"
src=$?
t_exit=$(date +%s.%N)
check S1-exit-0 test "$src" = 0
check S1-exit-within-kube-timeout \
    python3 -c "import sys; sys.exit(0 if $t_exit - $t_term < 5 else 1)"
expect S1-requests "$from" <<'EOF'
GET /api/v1/namespaces/stop/pods/s1
PATCH /api/v1/namespaces/stop/pods/s1 [application/merge-patch+json] {"metadata":{"uid":"@Pod/s1","annotations":{"gpureclaim.io/reclaim-notice":"<notice stop delete at 2023-11-14T22:13:20Z>"}}}
POST /api/v1/namespaces/stop/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/s1 action=Notice>
DELETE /api/v1/namespaces/stop/pods/s1 [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Pod/s1","resourceVersion":"@rv"}}
EOF
check S1-audit-action test "$(audit "$SAUDIT" action ok s1 200)" = 1
check S1-audit-one-action test "$(grep -c '"event":"action"' "$SAUDIT")" = 1
check S1-ledger python3 -c '
import json, sys
st = json.load(open(sys.argv[1]))
e = st["entries"]
assert len(e) == 1 and e[0]["state"] == "acted" and "s1" in e[0]["workload"], e
assert len(st["actions"]) == 1, st' "$SSTATE"
check S1-logged grep -q 'not posting the event on Pod .stop/s1.: the enforcer is stopping' \
    "$TMP/S1.log"
from=$(lines)
check S2-exit-0 enf "$TMP/S2.log" $T0 "$SSTATE" "$SAUDIT" --no-dry-run
check S2-s1-not-repeated \
    test "$(transcript 0 | grep -c '^DELETE /api/v1/namespaces/stop/pods/s1')" = 1
check S2-others-deleted \
    test "$(transcript "$from" | grep -c '^DELETE /api/v1/namespaces/stop/pods/s[23]')" = 2

# --- credentials are never sent over plain http unless a flag says so ---------------------
from=$(lines)
"$ENF" run --once --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 \
    --state.file="$TMP/r-state.json" --audit.file="$TMP/r-audit.jsonl" --kube.api-url="$KURL" \
    --kube.token-file="$TMP/token" --no-dry-run >"$TMP/R1.log" 2>&1
check R1-kube-token-refused test $? = 1
check R1-message grep -q "refusing to send the token of '$TMP/token' over plain http to '$KURL'" \
    "$TMP/R1.log"
check R1-no-request test "$(lines)" = "$from"
echo 'prom-s3cret' >"$TMP/prom-token"
"$ENF" plan --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 \
    --prometheus.bearer-token-file="$TMP/prom-token" >"$TMP/R2.log" 2>&1
check R2-prom-token-refused test $? = 1
check R2-message grep -q "refusing to send Prometheus credentials over plain http to '$PURL'" \
    "$TMP/R2.log"
"$ENF" run --once --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 \
    --prometheus.basic-auth-user=u --prometheus.basic-auth-password-file="$TMP/prom-token" \
    --state.file="$TMP/r3-state.json" --audit.file="$TMP/r3-audit.jsonl" >"$TMP/R3.log" 2>&1
check R3-prom-basic-auth-refused test $? = 1
check R3-nothing-written test ! -e "$TMP/r3-state.json"
"$ENF" plan --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 \
    --prometheus.bearer-token-file="$TMP/prom-token" --prometheus.allow-insecure-credentials \
    >"$TMP/R4.log" 2>&1
check R4-prom-allowed-with-the-flag test $? = 0
finish
