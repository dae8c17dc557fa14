#!/bin/sh
# End to end: `gpureclaim-enforcer restore` against fake_kube, request by request.
#
# data/restore/gen_objects.py writes objects as the engine leaves them after an action (the
# notice annotation with actedAt and its `acted` record) or as someone changed them since.
# Each way is undone from the record (Deployment scaled back to the recorded replicas with a
# resourceVersion precondition, then its annotations; Notebook's kubeflow-resource-stopped
# removed; RayCluster unpatched), with an Event and an audit line, and restored-at written;
# restore refuses (exit 1, a sentence, no write) a spec changed since (generation), another
# uid, a stop annotation removed (Kubeflow's Start) or changed, a never-reclaimed object, an
# action without a record, and a second restore; --dry-run writes nothing; usage errors.
# Then the whole way: `run` scales an idle Deployment to zero and records how on its notice,
# `restore` brings it back, and the next `run`, whose idle series goes on under the same
# labels, keeps it as too young (restarted) instead of reclaiming it again at once; the same
# for a Kubeflow Notebook stopped with its kubeflow-resource-stopped annotation.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/restore
ENF=$BIN/gpureclaim-enforcer
KUBE_FAKE=$(fake_bin fake_kube)
require python3 curl "$ENF" "$KUBE_FAKE" "$(fake_bin fake_prom)"

mkdir -p "$TMP/kube" "$TMP/flow"
python3 "$DATA/gen_objects.py" "$TMP/kube/objects.json" "$TMP"
PROM_FAKE=$(fake_bin fake_prom)
echo 's3cret-token' >"$TMP/token"
KLOG=$TMP/kube.requests
: >"$KLOG"
# fake_kube: objects in states only an earlier action or an edit can leave (records, generations,
# uids set by gen_objects.py), posed at once; no fault the real server lacks
start_fake_http "$TMP/kube.out" "$KUBE_FAKE" --data "$TMP/kube" --log "$KLOG" \
    --token-file "$TMP/token" || { fail start "$(cat "$TMP/kube.out")"; exit 1; }
KURL=$FAKE_URL
AUDIT=$TMP/audit.jsonl

# restore NAME ARGS...: run it; output in $TMP/NAME.out, status in $RC.
restore() {
    _n=$1; shift
    "$ENF" restore --kube.api-url="$KURL" --kube.token-file="$TMP/token" \
        --kube.allow-insecure-credentials --audit.file="$AUDIT" "$@" >"$TMP/$_n.out" 2>&1
    RC=$?
}

# writes FROM: the PATCH/POST/DELETE requests since log line FROM, "METHOD PATH BODY".
writes() {
    python3 - "$KLOG" "$1" <<'PY'
import json, sys
for i, line in enumerate(open(sys.argv[1])):
    if i < int(sys.argv[2]):
        continue
    r = json.loads(line)
    if r["method"] in ("GET",):
        continue
    body = r.get("body")
    if r["path"].endswith("/events"):
        body = {"reason": body.get("reason"), "type": body.get("type"),
                "involved": body["involvedObject"]["kind"] + "/" + body["involvedObject"]["name"]}
    print(r["method"], r["path"], json.dumps(body, sort_keys=True, separators=(",", ":")))
PY
}
lines() { wc -l <"$KLOG" | tr -d ' '; }

# get PATH EXPR: a field of the object as the fake now serves it (python expression on o).
get() {
    curl -s -H "Authorization: Bearer s3cret-token" "$KURL$1" |
        python3 -c "import json,sys; o=json.load(sys.stdin); print($2)"
}
DEP=/apis/apps/v1/namespaces/ml/deployments
NB=/apis/kubeflow.org/v1/namespaces/ml/notebooks
ANN='o["metadata"]["annotations"]'

# --- dry run: what it would do, no write -----------------------------------------------------
from=$(lines)
restore dry --dry-run ml/deployment/train
check dry-exit-0 test "$RC" = 0
check dry-says-what grep -q 'dry run: would scale Deployment ml/train back to 2 replicas' "$TMP/dry.out"
check dry-no-write test -z "$(writes "$from")"

# --- scale way: back to the recorded replicas, then the annotations (uid only: the controller
# writes the status at once after the scale) ---------------------------------------------------
from=$(lines)
restore scale -n ml deployments/train
check scale-exit-0 test "$RC" = 0
check scale-says grep -q '^restored: scale Deployment ml/train back to 2 replicas (reclaimed by rule .scale.)' "$TMP/scale.out"
writes "$from" >"$TMP/scale.writes"
check scale-requests test "$(sed 's/"resourceVersion":"[0-9]*"/"resourceVersion":RV/; s/"gpureclaim.io\/restored-at":"[^"]*"/"gpureclaim.io\/restored-at":T/' "$TMP/scale.writes")" = 'PATCH /apis/apps/v1/namespaces/ml/deployments/train/scale {"metadata":{"resourceVersion":RV,"uid":"d-1"},"spec":{"replicas":2}}
PATCH /apis/apps/v1/namespaces/ml/deployments/train {"metadata":{"annotations":{"gpureclaim.io/reclaim-notice":null,"gpureclaim.io/replicas-before-reclaim":null,"gpureclaim.io/restored-at":T},"uid":"d-1"}}
POST /api/v1/namespaces/ml/events {"involved":"Deployment/train","reason":"IdleGPUReclaimRestored","type":"Normal"}'
check scale-replicas test "$(get $DEP/train 'o["spec"]["replicas"]')" = 2
check scale-restored-at test "$(get $DEP/train "$ANN.get('gpureclaim.io/restored-at') is not None and 'gpureclaim.io/reclaim-notice' not in $ANN")" = True
check scale-audit grep -q '"event":"restore".*"result":"ok"' "$AUDIT"
# a second restore: nothing to undo
restore again ml/Deployment/train
check again-refused test "$RC" = 1
check again-says grep -q 'was already restored at' "$TMP/again.out"

# --- annotate way: kubeflow-resource-stopped removed, in one patch ---------------------------
from=$(lines)
restore nb ml/notebook/alice
check nb-exit-0 test "$RC" = 0
check nb-annotation-gone test "$(get $NB/alice "'kubeflow-resource-stopped' in $ANN")" = False
writes "$from" | grep '^PATCH ' >"$TMP/nb.patches"
check nb-one-patch test "$(wc -l <"$TMP/nb.patches")" = 1
check nb-patch-removes-stop grep -q '"kubeflow-resource-stopped":null' "$TMP/nb.patches"
check nb-patch-precondition grep -q '"resourceVersion":"[0-9]*","uid":"nb-1"' "$TMP/nb.patches"

# --- patch way: the undo patch ------------------------------------------------------------------
restore ray ml/raycluster.ray.io/ray
check ray-exit-0 test "$RC" = 0
check ray-unsuspended test "$(get /apis/ray.io/v1/namespaces/ml/rayclusters/ray 'o["spec"]["suspend"]')" = False

# --- refusals: exit 1, a sentence, no write -------------------------------------------------------
refused() { # NAME TARGET PATTERN
    _from=$(lines)
    restore "$1" "$2"
    if [ "$RC" = 1 ] && grep -q "$3" "$TMP/$1.out" && [ -z "$(writes "$_from")" ]; then
        pass "$1-refused"
    else
        fail "$1-refused" "rc=$RC: $(cat "$TMP/$1.out")"
    fi
}
refused edited ml/deployment/edited 'changed since the action: its spec is at generation 4, the action left 3'
refused replaced ml/deployment/replaced "was replaced since the action (uid 'd-3-new', the action was on 'd-3')"
refused started ml/notebook/bob "no longer has the annotation 'kubeflow-resource-stopped'"
refused restopped ml/notebook/carol "annotation 'kubeflow-resource-stopped' is '2023-11-15T08:00:00Z'"
refused never ml/deployment/fresh 'gpureclaim did not reclaim it, nothing to undo'
refused norecord ml/deployment/old 'does not record how'
refused missing ml/deployment/nope 'Deployment ml/nope does not exist: nothing to restore (a reclaim by delete cannot be undone'
check refusals-audited test "$(grep -c '"event":"restore".*"result":"refused"' "$AUDIT")" -ge 6

# --- usage ----------------------------------------------------------------------------------------
restore badtarget ml/x/y/z
check usage-bad-target test "$RC" = 1 -a -n "$(grep "invalid target" "$TMP/badtarget.out")"
restore badkind ml/gizmo/x
check usage-unknown-kind grep -q "kind 'gizmo' is not in the workload kinds table" "$TMP/badkind.out"
# a bare kind shared by Kubernetes and a custom resource is Kubernetes' (batch/v1 Job, not
# Volcano's), as kubectl takes it; two custom resources' is ambiguous
restore barejob ml/job/nojob
check usage-bare-job-is-batch grep -q "^error: Job ml/nojob does not exist" "$TMP/barejob.out"
check usage-bare-job-read-at-batch grep -q '"path":"/apis/batch/v1/namespaces/ml/jobs/nojob"' "$KLOG"
restore aim ml/aimservice/x
check usage-ambiguous-kind grep -q "kind 'aimservice' is ambiguous: AIMService.aim.eai.amd.com, AIMService.aim.silogen.ai" "$TMP/aim.out"
restore nsclash -n other ml/deployment/train
check usage-namespace-clash grep -q "names namespace 'ml', --namespace says 'other'" "$TMP/nsclash.out"

# --- the whole way: act, restore, not reclaimed again at once -----------------------------------
# flow NAME PREFIX: fake_prom on $TMP/PREFIX{range,instant}.json and fake_kube on $TMP/NAME;
# sets PURL, KURL and KLOG, and starts from an empty state file.
flow() {
    start_fake_http "$TMP/$1-prom.out" "$PROM_FAKE" 0 ok "$TMP/$2range.json" \
        "$TMP/$2instant.json" || { fail "$1-prom-start" "$(cat "$TMP/$1-prom.out")"; exit 1; }
    PURL=$FAKE_URL
    KLOG=$TMP/$1.requests
    : >"$KLOG"
    FAULTS=$TMP/$1.faults
    : >"$FAULTS"
    # fake_kube: a status or spec write by another writer injected before one chosen request (the
    # real server's 409s from two writers are in kube_faults.sh, part C); a Kubeflow Notebook
    # without its controller
    start_fake_http "$TMP/$1-kube.out" "$KUBE_FAKE" --data "$TMP/$1" --log "$KLOG" \
        --token-file "$TMP/token" --faults-file "$FAULTS" ||
        { fail "$1-kube-start" "$(cat "$TMP/$1-kube.out")"; exit 1; }
    KURL=$FAKE_URL
    rm -f "$TMP/state.json"
}
flow flow ""
T0=1700000000
run_once() { # LOG AT
    "$ENF" run --once --no-dry-run --rules.file="$DATA/rules.yaml" --prometheus.url="$PURL" \
        --at="$2" --state.file="$TMP/state.json" --audit.file="$TMP/flow-audit.jsonl" \
        --kube.api-url="$KURL" --kube.token-file="$TMP/token" \
        --kube.allow-insecure-credentials --enforce.max-actions-per-hour=0 >"$1" 2>&1
}
# A controller's status update between the enforcer's read and its /scale (as the Deployment
# controller writes at once after the replicas-before annotation): 409 Conflict, read again,
# unchanged, scaled on the second attempt.
SCALE=/apis/apps/v1/namespaces/flow/deployments/web/scale
echo "PATCH $SCALE=statusx1" >"$FAULTS"
check flow-act run_once "$TMP/run1.log" $T0
check flow-scale-retried test "$(writes 0 | grep -c "^PATCH $SCALE ")" = 2
check flow-scaled test "$(get /apis/apps/v1/namespaces/flow/deployments/web 'o["spec"]["replicas"]')" = 0
NOTICE="json.loads($ANN['gpureclaim.io/reclaim-notice'])"
# The record's own write moved the Deployment's generation once more (kube-apiserver bumps it
# for annotations, docs/real-cluster.md): the record holds the spec's digest, which did not move.
check flow-recorded test "$(get /apis/apps/v1/namespaces/flow/deployments/web "(lambda n: (n['acted']['way'], n['acted']['uid'], n['acted']['replicasBefore'], n['acted']['specDigest'].startswith('fnv1a64:'), n['acted']['generation'] + 1 == o['metadata']['generation']))($NOTICE)" 2>&1)" = "('scale', 'w-dep', 2, True, True)"
check flow-event-says-how grep -q 'gpureclaim-enforcer restore flow/Deployment/web' "$KLOG"
# Both pods of web are idle, a decision each in the same cycle: the Deployment gets one
# notice and one action (a second one rewrote the record without replicasBefore).
events_of() { # REASON: Events of that reason posted about Deployment web
    writes 0 | grep -c "^POST /api/v1/namespaces/flow/events .*\"involved\":\"Deployment/web\",\"reason\":\"$1\"" || true
}
check flow-one-notice-event test "$(events_of IdleGPUReclaimNotice)" = 1
check flow-one-reclaimed-event test "$(events_of IdleGPUReclaimed)" = 1
check flow-one-notice-audited test "$(grep '"event":"notice"' "$TMP/flow-audit.jsonl" | grep -c '"result":"ok"')" = 1
check flow-one-action-audited test "$(grep '"event":"action"' "$TMP/flow-audit.jsonl" | grep -c '"result":"ok"')" = 1
# the same between restore's read and its /scale: read again, decided again, restored
from=$(lines)
echo "PATCH $SCALE=statusx1" >"$FAULTS"
restore flowrestore flow/deployment/web
check flow-restore-exit-0 test "$RC" = 0
check flow-restore-retried test "$(writes "$from" | grep -c "^PATCH $SCALE ")" = 2
check flow-restored test "$(get /apis/apps/v1/namespaces/flow/deployments/web 'o["spec"]["replicas"]')" = 2
from=$(lines)
check flow-run-again run_once "$TMP/run2.log" $((T0 + 60))
check flow-not-reclaimed-again test -z "$(writes "$from" | grep -v '/events ')"
check flow-kept-restarted python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if any(l["event"] == "skipped" and l.get("result") == "too_young" and
                  "restarted: Deployment web was brought back at" in l.get("message", "")
                  for l in lines) else 1)' "$TMP/flow-audit.jsonl"

# --- the same way on a Kubeflow Notebook: the stop annotation, and Kubeflow's own Start -------
flow nbflow nb-
NBF=/apis/kubeflow.org/v1/namespaces/nbflow/notebooks/nb
check nbflow-act run_once "$TMP/nbrun1.log" $T0
check nbflow-stopped test "$(get $NBF "'kubeflow-resource-stopped' in $ANN")" = True
check nbflow-recorded test "$(get $NBF "(lambda n: (n['acted']['way'], n['acted']['key'], n['acted']['value'] == $ANN['kubeflow-resource-stopped']))($NOTICE)" 2>&1)" = "('annotate', 'kubeflow-resource-stopped', True)"
check nbflow-event-says-how grep -q 'or remove the annotation kubeflow-resource-stopped from Notebook nb' "$TMP/nbflow.requests"
restore nbrestore nbflow/notebook/nb
check nbflow-restore-exit-0 test "$RC" = 0
check nbflow-started test "$(get $NBF "'kubeflow-resource-stopped' in $ANN")" = False
from=$(lines)
check nbflow-run-again run_once "$TMP/nbrun2.log" $((T0 + 60))
check nbflow-not-reclaimed-again test -z "$(writes "$from" | grep -v '/events ')"
check nbflow-kept-restarted grep -q '"result":"too_young","message":"restarted: Notebook nb was brought back at' "$TMP/flow-audit.jsonl"

# --- the same Notebook, edited by someone between the enforcer's read and its write ----------
# The spec edit comes before the notice (an annotation without a resourceVersion, whose answer
# then shows the edit: not taken for the action's precondition) and the stop annotation gets
# 409; read again, the spec is not the one decided on: kept, and said why.
mkdir -p "$TMP/nbedit"
cp "$TMP/nbflow/objects.json" "$TMP/nbedit/"
flow nbedit nb-
echo "PATCH $NBF=specx1" >"$FAULTS"
check nbedit-run run_once "$TMP/nbedit.log" $T0
check nbedit-edited test "$(get $NBF "o['spec'].get('fakeEdits')")" = 1
check nbedit-kept test "$(get $NBF "'kubeflow-resource-stopped' in $ANN")" = False
check nbedit-said grep -q '"event":"action".*"result":"conflict".*its spec is not the one the decision was made on' "$TMP/flow-audit.jsonl"

finish
