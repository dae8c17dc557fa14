#!/bin/sh
# End to end: reclaim acts at the top of custom-resource owner chains (issue 18). fake_kube
# serves data/kube_kinds/cluster.json (a Notebook, an InferenceService, a RayCluster, a JobSet,
# an AIMService, a Widget the kinds table does not know, an exempt Deployment under an
# InferenceService) with API discovery; fake_prom says every pod is idle. `plan` with the
# --kube.* flags of `run` names the object each reclaim would act on and how, or why nothing
# would be done, with GETs only; without them it says the targets were not resolved. Then one
# `run --once --no-dry-run` (notice period 0) acts on the topmost known owner of each chain,
# with the exact requests asserted: the Notebook is annotated kubeflow-resource-stopped, the
# InferenceService serving.kserve.io/stop, the RayCluster and JobSet get spec.suspend; their
# StatefulSet, Deployment, Job and pods are never written. The AIMService (delete only, the
# rule says scaleToZero), the Widget and the exempt chain are kept with their reasons.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/kube_kinds
KA=$TOP/tests/e2e/data/kube_actions
ENF=$BIN/gpureclaim-enforcer
KUBE_FAKE=$(fake_bin fake_kube)
PROM_FAKE=$(fake_bin fake_prom)
T0=1700000000
RULES=$DATA/rules.yaml
OBJECTS=$DATA/cluster.json

require python3 "$ENF" "$KUBE_FAKE" "$PROM_FAKE"
python3 "$DATA/gen_matrix.py" "$TMP"
echo 's3cret-token' >"$TMP/token"

start_fake_http "$TMP/prom.out" "$PROM_FAKE" 0 ok "$TMP/range.json" "$TMP/instant.json" ||
    { fail prom-start "$(cat "$TMP/prom.out")"; exit 1; }
PURL=$FAKE_URL
mkdir -p "$TMP/kube"
cp "$OBJECTS" "$TMP/kube/"
: >"$TMP/faults"
# fake_kube: the upstream CRDs (Notebook, InferenceService, RayCluster, JobSet, AIMService) are not
# installed on the real test cluster; no fault the real server lacks
start_fake_kube kube "$TMP/kube" --token-file "$TMP/token" --faults-file "$TMP/faults"
pass fakes-started

KFLAGS="--kube.api-url=$KURL --kube.token-file=$TMP/token --kube.allow-insecure-credentials \
--kube.timeout=2s"
lines() { wc -l <"$KLOG" | tr -d ' '; }
# The requests since line FROM, one per line (kube_log.py), the stop annotation's wall-clock
# time written <time>, discovery GETs left out.
transcript() {
    python3 "$KA/kube_log.py" "$KLOG" "$1" "$OBJECTS" |
        sed 's/"kubeflow-resource-stopped":"[0-9TZ:-]*"/"kubeflow-resource-stopped":"<time>"/' |
        grep -v '^GET /apis\?\(/[a-z0-9.-]*/[a-z0-9]*\)\?$' | grep -v '^GET /api/v1$'
}
expect() {
    cat >"$TMP/$1.want"
    transcript "$2" >"$TMP/$1.got"
    if diff -u "$TMP/$1.want" "$TMP/$1.got" >"$TMP/$1.diff"; then
        pass "$1"
    else
        fail "$1" "requests differ"
        cat "$TMP/$1.diff" >&2
    fi
}

# --- plan without the Kubernetes API: decisions only, and it says so -----------------------
"$ENF" plan --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 >"$TMP/plan0.out" \
    2>"$TMP/plan0.err"
check plan-unresolved-exit-0 test $? = 0
check plan-unresolved-reclaims test "$(grep -c ' reclaim ' "$TMP/plan0.out")" = 7
check plan-unresolved-said grep -q 'targets not resolved' "$TMP/plan0.err"

# --- plan with it: the object each reclaim acts on, and how; GETs only ----------------------
from=$(lines)
# shellcheck disable=SC2086
"$ENF" plan --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 $KFLAGS \
    >"$TMP/plan.out" 2>"$TMP/plan.err"
check plan-exit-0 test $? = 0
check plan-only-gets test "$(transcript "$from" | grep -vc '^GET ')" = 0
check plan-notebook grep -q 'annotate Notebook nb/alice kubeflow-resource-stopped' "$TMP/plan.out"
check plan-kserve grep -q 'annotate InferenceService kserve/llm serving.kserve.io/stop=true' \
    "$TMP/plan.out"
check plan-ray grep -qF 'patch RayCluster ray/rc {"spec":{"suspend":true}}' "$TMP/plan.out"
check plan-jobset grep -qF 'patch JobSet jobset/sweep {"spec":{"suspend":true}}' "$TMP/plan.out"
check plan-aim-kept grep -q "AIMService aim/chat cannot be reclaimed by action 'scaleToZero'" \
    "$TMP/plan.out"
check plan-widget-kept grep -q "Widget wid/w (apiVersion 'example.com/v1') .*add it under 'kinds:'" \
    "$TMP/plan.out"
check plan-exempt-kept grep -q 'kept: labelled gpureclaim.io/exempt=true' "$TMP/plan.out"
"$ENF" plan --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 $KFLAGS --output=json \
    >"$TMP/plan.json" 2>/dev/null
check plan-json-target python3 - "$TMP/plan.json" <<'PY'
import json, sys
plan = {d["workload"]["pod"]: d for d in json.load(open(sys.argv[1]))}
assert plan["alice-0"]["target"] == "annotate Notebook nb/alice kubeflow-resource-stopped", plan["alice-0"]
assert "cannot be reclaimed" in plan["chat-predictor-8b9c-r4t5y"]["targetKept"]
PY

# --- explain: the same answer for one workload, only its own objects read -----------------
from=$(lines)
# shellcheck disable=SC2086
"$ENF" explain --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 $KFLAGS \
    --workload='namespace="nb",pod="alice-0"' >"$TMP/explain.out" 2>/dev/null
check explain-exit-0 test $? = 0
check explain-would grep -q '^  would: annotate Notebook nb/alice kubeflow-resource-stopped$' \
    "$TMP/explain.out"
check explain-reads-only-its-chain test "$(transcript "$from" | grep -c '/namespaces/' |
    tr -d ' ')" = 3
"$ENF" explain --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 $KFLAGS \
    --workload='namespace="aim"' >"$TMP/explain-aim.out" 2>/dev/null
check explain-kept grep -q "^  would do nothing: kept: AIMService aim/chat cannot be reclaimed" \
    "$TMP/explain-aim.out"

# --- plan without the permission to read an owner: says so, acts on nothing below it ------
echo 'GET /apis/kubeflow.org/v1/namespaces/nb/notebooks/alice=403' >"$TMP/faults"
sleep 1 # the faults file is re-read when its mtime changes
# shellcheck disable=SC2086
"$ENF" plan --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 $KFLAGS \
    >"$TMP/plan403.out" 2>/dev/null
check plan-403-exit-0 test $? = 0
check plan-403-said grep -q 'not resolved (forbidden): .*HTTP 403 Forbidden' "$TMP/plan403.out"
check plan-403-others-resolved grep -q 'annotate InferenceService kserve/llm' "$TMP/plan403.out"
: >"$TMP/faults"
sleep 1

# --- run: each chain acted on at its top --------------------------------------------------
from=$(lines)
# shellcheck disable=SC2086
"$ENF" run --once --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 \
    --state.file="$TMP/state.json" --audit.file="$TMP/audit.jsonl" $KFLAGS \
    --enforce.max-actions-per-hour=0 --no-dry-run >"$TMP/run.log" 2>&1
check run-exit-0 test $? = 0
expect run-requests "$from" <<'EOF2'
GET /api/v1/namespaces/nb/pods/alice-0
GET /apis/apps/v1/namespaces/nb/statefulsets/alice
GET /apis/kubeflow.org/v1/namespaces/nb/notebooks/alice
PATCH /apis/kubeflow.org/v1/namespaces/nb/notebooks/alice [application/merge-patch+json] {"metadata":{"uid":"@Notebook/alice","annotations":{"gpureclaim.io/reclaim-notice":"<notice notebook scaleToZero at 2023-11-14T22:13:20Z>"}}}
POST /api/v1/namespaces/nb/events [application/json] <Event Warning IdleGPUReclaimNotice Notebook/alice action=Notice>
PATCH /apis/kubeflow.org/v1/namespaces/nb/notebooks/alice [application/merge-patch+json] {"metadata":{"uid":"@Notebook/alice","resourceVersion":"@rv","annotations":{"kubeflow-resource-stopped":"<time>"}}}
POST /api/v1/namespaces/nb/events [application/json] <Event Warning IdleGPUReclaimed Notebook/alice action=ScaleToZero>
PATCH /apis/kubeflow.org/v1/namespaces/nb/notebooks/alice [application/merge-patch+json] {"metadata":{"uid":"@Notebook/alice","annotations":{"gpureclaim.io/reclaim-notice":"<notice notebook scaleToZero at 2023-11-14T22:13:20Z acted>"}}}
GET /api/v1/namespaces/ex/pods/keep-predictor-1a2b-c3v4b
GET /apis/apps/v1/namespaces/ex/replicasets/keep-predictor-1a2b
GET /apis/apps/v1/namespaces/ex/deployments/keep-predictor
GET /apis/serving.kserve.io/v1beta1/namespaces/ex/inferenceservices/keep
GET /api/v1/namespaces/kserve/pods/llm-predictor-5d6f7-q2w3e
GET /apis/apps/v1/namespaces/kserve/replicasets/llm-predictor-5d6f7
GET /apis/apps/v1/namespaces/kserve/deployments/llm-predictor
GET /apis/serving.kserve.io/v1beta1/namespaces/kserve/inferenceservices/llm
PATCH /apis/serving.kserve.io/v1beta1/namespaces/kserve/inferenceservices/llm [application/merge-patch+json] {"metadata":{"uid":"@InferenceService/llm","annotations":{"gpureclaim.io/reclaim-notice":"<notice kserve scaleToZero at 2023-11-14T22:13:20Z>"}}}
POST /api/v1/namespaces/kserve/events [application/json] <Event Warning IdleGPUReclaimNotice InferenceService/llm action=Notice>
PATCH /apis/serving.kserve.io/v1beta1/namespaces/kserve/inferenceservices/llm [application/merge-patch+json] {"metadata":{"uid":"@InferenceService/llm","resourceVersion":"@rv","annotations":{"serving.kserve.io/stop":"true"}}}
POST /api/v1/namespaces/kserve/events [application/json] <Event Warning IdleGPUReclaimed InferenceService/llm action=ScaleToZero>
PATCH /apis/serving.kserve.io/v1beta1/namespaces/kserve/inferenceservices/llm [application/merge-patch+json] {"metadata":{"uid":"@InferenceService/llm","annotations":{"gpureclaim.io/reclaim-notice":"<notice kserve scaleToZero at 2023-11-14T22:13:20Z acted>"}}}
GET /api/v1/namespaces/ray/pods/rc-head-h7j8k
GET /apis/ray.io/v1/namespaces/ray/rayclusters/rc
PATCH /apis/ray.io/v1/namespaces/ray/rayclusters/rc [application/merge-patch+json] {"metadata":{"uid":"@RayCluster/rc","annotations":{"gpureclaim.io/reclaim-notice":"<notice ray suspend at 2023-11-14T22:13:20Z>"}}}
POST /api/v1/namespaces/ray/events [application/json] <Event Warning IdleGPUReclaimNotice RayCluster/rc action=Notice>
PATCH /apis/ray.io/v1/namespaces/ray/rayclusters/rc [application/merge-patch+json] {"metadata":{"uid":"@RayCluster/rc","resourceVersion":"@rv"},"spec":{"suspend":true}}
POST /api/v1/namespaces/ray/events [application/json] <Event Warning IdleGPUReclaimed RayCluster/rc action=Suspend>
PATCH /apis/ray.io/v1/namespaces/ray/rayclusters/rc [application/merge-patch+json] {"metadata":{"uid":"@RayCluster/rc","annotations":{"gpureclaim.io/reclaim-notice":"<notice ray suspend at 2023-11-14T22:13:20Z acted>"}}}
GET /api/v1/namespaces/jobset/pods/sweep-workers-0-0-z9x8c
GET /apis/batch/v1/namespaces/jobset/jobs/sweep-workers-0
GET /apis/jobset.x-k8s.io/v1alpha2/namespaces/jobset/jobsets/sweep
PATCH /apis/jobset.x-k8s.io/v1alpha2/namespaces/jobset/jobsets/sweep [application/merge-patch+json] {"metadata":{"uid":"@JobSet/sweep","annotations":{"gpureclaim.io/reclaim-notice":"<notice jobset suspend at 2023-11-14T22:13:20Z>"}}}
POST /api/v1/namespaces/jobset/events [application/json] <Event Warning IdleGPUReclaimNotice JobSet/sweep action=Notice>
PATCH /apis/jobset.x-k8s.io/v1alpha2/namespaces/jobset/jobsets/sweep [application/merge-patch+json] {"metadata":{"uid":"@JobSet/sweep","resourceVersion":"@rv"},"spec":{"suspend":true}}
POST /api/v1/namespaces/jobset/events [application/json] <Event Warning IdleGPUReclaimed JobSet/sweep action=Suspend>
PATCH /apis/jobset.x-k8s.io/v1alpha2/namespaces/jobset/jobsets/sweep [application/merge-patch+json] {"metadata":{"uid":"@JobSet/sweep","annotations":{"gpureclaim.io/reclaim-notice":"<notice jobset suspend at 2023-11-14T22:13:20Z acted>"}}}
GET /api/v1/namespaces/aim/pods/chat-predictor-8b9c-r4t5y
GET /apis/apps/v1/namespaces/aim/replicasets/chat-predictor-8b9c
GET /apis/apps/v1/namespaces/aim/deployments/chat-predictor
GET /apis/serving.kserve.io/v1beta1/namespaces/aim/inferenceservices/chat
GET /apis/aim.silogen.ai/v1alpha1/namespaces/aim/aimservices/chat
GET /api/v1/namespaces/wid/pods/w-6c7d-a1s2d
GET /apis/apps/v1/namespaces/wid/replicasets/w-6c7d
GET /apis/apps/v1/namespaces/wid/deployments/w
GET /apis/example.com/v1/namespaces/wid/widgets/w
EOF2
check run-no-child-written test "$(transcript "$from" | grep -v '^GET ' |
    grep -c '/statefulsets/\|/deployments/\|/replicasets/\|/jobs/\|/pods/[a-z0-9-]*$')" = 0
audit_has() { # EVENT RESULT POD TEXT
    python3 - "$TMP/audit.jsonl" "$@" <<'PY'
import json, sys
path, event, result, pod, text = sys.argv[1:6]
for line in open(path):
    o = json.loads(line)
    if o["event"] == event and o.get("result") == result and o["workload"].get("pod") == pod \
            and text in json.dumps(o):
        sys.exit(0)
sys.exit(1)
PY
}
check run-aim-kept audit_has skipped unsupported chat-predictor-8b9c-r4t5y "has no way for it on kind AIMService"
check run-widget-kept audit_has skipped unsupported w-6c7d-a1s2d "is a kind gpureclaim does not know"
check run-exempt-kept audit_has skipped exempt keep-predictor-1a2b-c3v4b "gpureclaim.io/exempt"
check run-ledger-root python3 - "$TMP/state.json" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
roots = sorted("%s/%s" % (e["root_kind"], e["root_name"]) for e in st["entries"] if e["state"] == "acted")
assert roots == ["InferenceService/llm", "JobSet/sweep", "Notebook/alice", "RayCluster/rc"], roots
PY

# --- failover: the notice is on the Notebook, and another replica continues it -------------
mkdir -p "$TMP/kube2"
cp "$OBJECTS" "$TMP/kube2/"
# fake_kube: as above, custom resources whose CRDs the real test cluster does not install
start_fake_kube kube2 "$TMP/kube2" --token-file "$TMP/token"
KFLAGS2="--kube.api-url=$FAKE_URL --kube.token-file=$TMP/token \
--kube.allow-insecure-credentials --kube.timeout=2s"
replica() { # NAME AT: one `run --once` of the failover rule with its own state
    # shellcheck disable=SC2086
    "$ENF" run --once --rules.file="$DATA/rules-notice.yaml" --prometheus.url="$PURL" --at="$2" \
        --state.file="$TMP/$1-state.json" --audit.file="$TMP/$1-audit.jsonl" $KFLAGS2 \
        --enforce.max-actions-per-hour=0 --no-dry-run >"$TMP/$1.log" 2>&1
}
from=$(lines)
check failover-a-exit-0 replica a $T0
expect failover-a-notice "$from" <<'EOF2'
GET /api/v1/namespaces/nb/pods/alice-0
GET /apis/apps/v1/namespaces/nb/statefulsets/alice
GET /apis/kubeflow.org/v1/namespaces/nb/notebooks/alice
PATCH /apis/kubeflow.org/v1/namespaces/nb/notebooks/alice [application/merge-patch+json] {"metadata":{"uid":"@Notebook/alice","annotations":{"gpureclaim.io/reclaim-notice":"<notice notebook scaleToZero at 2023-11-14T22:18:20Z>"}}}
POST /api/v1/namespaces/nb/events [application/json] <Event Warning IdleGPUReclaimNotice Notebook/alice action=Notice>
EOF2
from=$(lines)
check failover-b-exit-0 replica b $((T0 + 300))
check failover-b-adopted grep -q "continuing the notice another replica gave on Notebook nb/alice" \
    "$TMP/b.log"
expect failover-b-acts "$from" <<'EOF2'
GET /api/v1/namespaces/nb/pods/alice-0
GET /apis/apps/v1/namespaces/nb/statefulsets/alice
GET /apis/kubeflow.org/v1/namespaces/nb/notebooks/alice
PATCH /apis/kubeflow.org/v1/namespaces/nb/notebooks/alice [application/merge-patch+json] {"metadata":{"uid":"@Notebook/alice","resourceVersion":"@rv","annotations":{"kubeflow-resource-stopped":"<time>"}}}
POST /api/v1/namespaces/nb/events [application/json] <Event Warning IdleGPUReclaimed Notebook/alice action=ScaleToZero>
PATCH /apis/kubeflow.org/v1/namespaces/nb/notebooks/alice [application/merge-patch+json] {"metadata":{"uid":"@Notebook/alice","annotations":{"gpureclaim.io/reclaim-notice":"<notice notebook scaleToZero at 2023-11-14T22:18:20Z acted>"}}}
EOF2
# Replica a, later, finds the action recorded on the Notebook: nothing is written again.
from=$(lines)
check failover-a-again-exit-0 replica a $((T0 + 360))
check failover-a-no-write test "$(transcript "$from" | grep -vc '^GET ')" = 0
# --- a stop patch the API accepts but does not store is not a success ----------------------
# A RayCluster CRD without spec.suspend (KubeRay before it had one) prunes the field and answers
# 200: the action is an error, retried next cycle and audited, and the ledger never says acted.
mkdir -p "$TMP/kube3"
cp "$OBJECTS" "$TMP/kube3/"
# fake_kube: a server that prunes a field from an accepted patch (answers 200 without spec.suspend),
# which a real server with the upstream CRD would not do on demand
start_fake_kube kube3 "$TMP/kube3" --token-file "$TMP/token" \
    --fault 'PATCH /apis/ray.io/v1/namespaces/ray/rayclusters/rc=prune:spec.suspend'
# shellcheck disable=SC2086
"$ENF" run --once --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 \
    --state.file="$TMP/prune-state.json" --audit.file="$TMP/prune-audit.jsonl" \
    --kube.api-url="$FAKE_URL" --kube.token-file="$TMP/token" \
    --kube.allow-insecure-credentials --kube.timeout=2s \
    --enforce.max-actions-per-hour=0 --no-dry-run >"$TMP/prune.log" 2>&1
check pruned-run-exit-0 test $? = 0
check pruned-not-acted python3 - "$TMP/prune-state.json" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
rc = [e for e in st["entries"] if e.get("root_name") == "rc"]
assert rc and all(e["state"] != "acted" for e in rc), rc
acted = sorted(e["root_name"] for e in st["entries"] if e["state"] == "acted")
assert acted == ["alice", "llm", "sweep"], acted
PY
check pruned-audited-error python3 - "$TMP/prune-audit.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    m = o.get("message") or ""
    if o["event"] == "action" and o.get("result") == "error" and "RayCluster ray/rc" in m \
            and "spec" in m and "CRD" in m:
        sys.exit(0)
sys.exit(1)
PY
check pruned-no-record test "$(grep 'rayclusters/rc' "$KLOG" | grep -c actedAt)" = 0
finish
