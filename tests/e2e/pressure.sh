#!/bin/sh
# End to end: GPU pressure as clusters report it (issue 24 §1, §2), against fake_kube and
# fake_prom, request by request. The rules' Prometheus answers label the resource amd_com_gpu,
# as kube-state-metrics does, while the scheduler and Kueue write amd.com/gpu
# (data/pressure/gen.py derives every answer from data/kube_actions/):
#   K1  a pod Pending for "Insufficient amd.com/gpu.": confirmed, noticed, confirmed again,
#       deleted;
#   K2  no pod waits, a Kueue Workload lacks "unused quota for amd.com/gpu in flavor mi300x",
#       Kueue serving v1beta2 only: confirmed at v1beta2;
#   K3  two pods wait for amd.com/gpu and amd_com/gpu, both amd_com_gpu once sanitized:
#       ambiguous, nothing noticed, the audit says why;
#   K4  a 5 minute notice posted while a pod waited; the pod is gone when the action is due:
#       not confirmed, no action (the notice stands, to be acted on once pressure returns);
#   V   Kueue's versions: only v1beta1, only v1beta2, both (v1beta2 preferred): the Workload
#       list of the pressure check and the deactivation of a Kueue-managed Job (suspend) use
#       the version discovery prefers.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/pressure
KA=$TOP/tests/e2e/data/kube_actions
ENF=$BIN/gpureclaim-enforcer
KUBE_FAKE=$(fake_bin fake_kube)
PROM_FAKE=$(fake_bin fake_prom)
T0=1700000000

require python3 curl "$ENF" "$KUBE_FAKE" "$PROM_FAKE"
python3 "$DATA/gen.py" "$TMP"
echo 's3cret-token' >"$TMP/token"

# start_kube NAME KUEUE_VERSIONS FILE...: fake_kube over FILEs (from $TMP, else data/
# kube_actions); sets KURL, KLOG, KPID.
start_kube() {
    _name=$1 _kv=$2; shift 2
    [ -n "${KPID:-}" ] && stop_pid "$KPID"
    mkdir -p "$TMP/$_name"
    for _f in "$@"; do
        if [ -f "$TMP/$_f" ]; then cp "$TMP/$_f" "$TMP/$_name/"; else cp "$KA/$_f" "$TMP/$_name/"; fi
    done
    # fake_kube: Kueue's API served at chosen versions (v1beta1 only, v1beta2 only) and Workloads
    # with chosen conditions, without a Kueue controller; the Pending pod itself is on the real
    # server (kube_pressure.sh)
    start_fake_kube "$_name" "$TMP/$_name" --token-file "$TMP/token" --kueue-versions "$_kv"
}

# start_prom PREFIX: fake_prom answering PREFIX-{range,instant}.json; sets PURL.
start_prom() {
    [ -n "${PPID_FAKE:-}" ] && stop_pid "$PPID_FAKE"
    start_fake_http "$TMP/prom-$1.out" "$PROM_FAKE" 0 ok "$TMP/$1-range.json" \
        "$TMP/$1-instant.json" || { fail "prom-start" "$(cat "$TMP/prom-$1.out")"; exit 1; }
    PURL=$FAKE_URL
    PPID_FAKE=$FAKE_PID
}

# enf LOG AT STATE AUDIT RULES: one `run --once`, actions on, pressure confirmed by the API.
enf() {
    "$ENF" run --once --rules.file="$DATA/$5" --prometheus.url="$PURL" --at="$2" \
        --state.file="$TMP/$3" --audit.file="$TMP/$4" --kube.api-url="$KURL" \
        --kube.token-file="$TMP/token" --kube.allow-insecure-credentials --kube.timeout=5s \
        --enforce.max-actions-per-hour=0 --no-dry-run --kube.confirm-pressure >"$TMP/$1" 2>&1
}

lines() { wc -l <"$KLOG" | tr -d ' '; }

# expect NAME FROM OBJECTS...: the requests since line FROM (kube_log.py: uids as @Kind/name;
# the permission reviews of `run` left out) against the transcript on stdin.
expect() {
    _n=$1 _from=$2; shift 2
    cat >"$TMP/$_n.want"
    python3 "$KA/kube_log.py" "$KLOG" "$_from" "$@" |
        grep -v '^POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews ' >"$TMP/$_n.got"
    if diff -u "$TMP/$_n.want" "$TMP/$_n.got" >"$TMP/$_n.diff"; then
        pass "$_n"
    else
        fail "$_n" "requests differ"
        cat "$TMP/$_n.diff" >&2
    fi
}

# count FILE EVENT [RESULT]: audit lines of that event (and result).
count() {
    python3 - "$@" <<'PY'
import json, sys
path, event = sys.argv[1:3]
result = sys.argv[3] if len(sys.argv) > 3 else None
print(sum(1 for l in open(path) if json.loads(l)["event"] == event
          and (result is None or json.loads(l).get("result") == result)))
PY
}

PRESS="$KA/press.json"

# --- K1: the pod waits for amd.com/gpu, the rule says amd_com_gpu -----------------------------
start_prom prom
start_kube k1 v1beta1 press.json pending-ksm.json
from=$(lines)
check K1-exit-0 enf k1.log $T0 k1-state.json k1-audit.jsonl rules-ksm.yaml
expect K1-requests "$from" "$PRESS" "$TMP/pending-ksm.json" <<'EOF'
GET /api/v1/namespaces/press/pods/press-a
GET /api/v1/pods?fieldSelector=status.phase=Pending
PATCH /api/v1/namespaces/press/pods/press-a [application/merge-patch+json] {"metadata":{"uid":"@Pod/press-a","annotations":{"gpureclaim.io/reclaim-notice":"<notice ksm delete at 2023-11-14T22:13:20Z>"}}}
POST /api/v1/namespaces/press/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/press-a action=Notice>
GET /api/v1/pods?fieldSelector=status.phase=Pending
DELETE /api/v1/namespaces/press/pods/press-a [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Pod/press-a","resourceVersion":"@rv"}}
POST /api/v1/namespaces/press/events [application/json] <Event Warning IdleGPUReclaimed Pod/press-a action=Delete>
EOF
check K1-audit-action test "$(count "$TMP/k1-audit.jsonl" action ok)" = 1

# --- K2: a Kueue Workload short of amd.com/gpu quota, Kueue serving v1beta2 only -------------
start_kube k2 v1beta2 press.json kueue-v1beta2.json
from=$(lines)
check K2-exit-0 enf k2.log $T0 k2-state.json k2-audit.jsonl rules-ksm.yaml
expect K2-requests "$from" "$PRESS" "$TMP/kueue-v1beta2.json" <<'EOF'
GET /api/v1/namespaces/press/pods/press-a
GET /api/v1/pods?fieldSelector=status.phase=Pending
GET /apis
GET /apis/kueue.x-k8s.io/v1beta2
GET /apis/kueue.x-k8s.io/v1beta2/workloads
PATCH /api/v1/namespaces/press/pods/press-a [application/merge-patch+json] {"metadata":{"uid":"@Pod/press-a","annotations":{"gpureclaim.io/reclaim-notice":"<notice ksm delete at 2023-11-14T22:13:20Z>"}}}
POST /api/v1/namespaces/press/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/press-a action=Notice>
GET /api/v1/pods?fieldSelector=status.phase=Pending
GET /apis/kueue.x-k8s.io/v1beta2/workloads
DELETE /api/v1/namespaces/press/pods/press-a [application/json] {"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","preconditions":{"uid":"@Pod/press-a","resourceVersion":"@rv"}}
POST /api/v1/namespaces/press/events [application/json] <Event Warning IdleGPUReclaimed Pod/press-a action=Delete>
EOF
check K2-audit-action test "$(count "$TMP/k2-audit.jsonl" action ok)" = 1

# --- K3: amd.com/gpu and amd_com/gpu both wait: which one the rule means is unknown ----------
start_kube k3 v1beta1 press.json pending-collision.json
from=$(lines)
check K3-exit-0 enf k3.log $T0 k3-state.json k3-audit.jsonl rules-ksm.yaml
expect K3-requests "$from" "$PRESS" "$TMP/pending-collision.json" <<'EOF'
GET /api/v1/namespaces/press/pods/press-a
GET /api/v1/pods?fieldSelector=status.phase=Pending
EOF
check K3-audit-skipped test "$(count "$TMP/k3-audit.jsonl" skipped pressure_not_confirmed)" = 1
check K3-no-notice test "$(count "$TMP/k3-audit.jsonl" notice)" = 0
check K3-audit-says-why grep -q "'amd_com_gpu' is more than one resource once sanitized ('amd.com/gpu', 'amd_com/gpu'): which one the rule means is unknown" "$TMP/k3-audit.jsonl"

# --- K4: confirmation lost between the notice and the action ---------------------------------
start_kube k4 v1beta1 press.json pending-ksm.json
from=$(lines)
check K4-notice-exit-0 enf k4a.log $T0 k4-state.json k4-audit.jsonl rules-ksm-notice.yaml
check K4-noticed test "$(count "$TMP/k4-audit.jsonl" notice)" = 1
# The waiting pod is scheduled elsewhere (deleted here): nothing waits any more.
curl -sf -X DELETE -H "Authorization: Bearer $(cat "$TMP/token")" \
    "$KURL/api/v1/namespaces/queue/pods/wait-gpu" >/dev/null
check K4-due-exit-0 enf k4b.log $((T0 + 300)) k4-state.json k4-audit.jsonl rules-ksm-notice.yaml
expect K4-requests "$from" "$PRESS" "$TMP/pending-ksm.json" <<'EOF'
GET /api/v1/namespaces/press/pods/press-a
GET /api/v1/pods?fieldSelector=status.phase=Pending
PATCH /api/v1/namespaces/press/pods/press-a [application/merge-patch+json] {"metadata":{"uid":"@Pod/press-a","annotations":{"gpureclaim.io/reclaim-notice":"<notice ksm-notice delete at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/press/events [application/json] <Event Warning IdleGPUReclaimNotice Pod/press-a action=Notice>
DELETE /api/v1/namespaces/queue/pods/wait-gpu
GET /api/v1/namespaces/press/pods/press-a
GET /api/v1/pods?fieldSelector=status.phase=Pending
GET /apis
GET /apis/kueue.x-k8s.io/v1beta1
GET /apis/kueue.x-k8s.io/v1beta1/workloads
EOF
check K4-no-action test "$(count "$TMP/k4-audit.jsonl" action)" = 0
check K4-audit-not-confirmed test "$(count "$TMP/k4-audit.jsonl" skipped pressure_not_confirmed)" = 1

# --- V: Kueue's versions, for the pressure check and for a deactivation ----------------------
# vcase NAME VERSIONS PREFERRED: K2's check and the suspend of batch/kq at PREFERRED only.
vcase() {
    start_prom prom
    start_kube "$1" "$2" press.json kueue-v1beta2.json batch.json
    check "$1-pressure-exit-0" enf "$1a.log" $T0 "$1a-state.json" "$1a-audit.jsonl" rules-ksm.yaml
    check "$1-pressure-confirmed" test "$(count "$TMP/$1a-audit.jsonl" action ok)" = 1
    start_prom kq
    check "$1-suspend-exit-0" enf "$1b.log" $T0 "$1b-state.json" "$1b-audit.jsonl" rules-kueue.yaml
    check "$1-suspend-ok" test "$(count "$TMP/$1b-audit.jsonl" action ok)" = 1
    python3 "$KA/kube_log.py" "$KLOG" 0 "$KA/cluster.json" |
        grep -o '^[A-Z]* /apis/kueue.x-k8s.io/v1beta[12]/[a-z0-9/-]*' | sort -u >"$TMP/$1.kueue"
    cat >"$TMP/$1.want" <<EOF
GET /apis/kueue.x-k8s.io/$3/namespaces/batch/workloads
GET /apis/kueue.x-k8s.io/$3/workloads
PATCH /apis/kueue.x-k8s.io/$3/namespaces/batch/workloads/job-kq-1a2b3
EOF
    check "$1-only-$3" diff -u "$TMP/$1.want" "$TMP/$1.kueue"
    check "$1-deactivated" sh -c "curl -sf -H 'Authorization: Bearer $(cat "$TMP/token")' \
        '$KURL/apis/kueue.x-k8s.io/$3/namespaces/batch/workloads/job-kq-1a2b3' |
        grep -q '\"active\":false'"
}
vcase V1 v1beta1 v1beta1
vcase V2 v1beta2 v1beta2
vcase V3 v1beta2,v1beta1 v1beta2

finish
