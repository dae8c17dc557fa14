#!/bin/sh
# End to end, custom-resource owners beyond tests/e2e/kube_kinds.sh: a kind added in the rules
# file, the platforms' controllers (tests/fakes/fake_kube_ctl.h) keeping what the enforcer did
# to the owner, and failover between two replicas with a custom resource as the owner acted on.
# fake_kube serves data/kube_kinds/cluster.json; fake_prom says every pod is idle.
#   1. rules-user-kind.yaml, one `run --once --no-dry-run`: the Widget (a kind only the rules'
#      kinds: section knows) gets its annotation and nothing below it is written; the
#      Notebook's controller has set its StatefulSet to 0 replicas and the InferenceService's
#      has deleted its Deployment, KubeRay and JobSet have deleted the pods of the suspended
#      RayCluster and JobSet, and all stay so; then `restore` of each owner (Notebook,
#      InferenceService, RayCluster, JobSet, Widget) brings it back, the controllers bring
#      back the StatefulSet's replica and the Deployment, and the next run reclaims none of
#      them again (the Notebook's and the Widget's pods, still there, kept as restarted); the
#      permission check of a `run` daemon finds the Widget's resource through discovery and
#      asks for it;
#   2. rules-ha.yaml, two replicas with --leader-elect: the leader annotates the Notebook with
#      the notice and is killed (SIGKILL) before the action; the other replica takes the
#      Lease, adopts the notice from the Notebook and stops it exactly once, not before the
#      announced time, without a second notice; the StatefulSet ends at 0.
. "$(dirname "$0")/../lib.sh"

KK=$TOP/tests/e2e/data/kube_kinds
DATA=$TOP/tests/e2e/data/kinds_ha
KA=$TOP/tests/e2e/data/kube_actions
ENF=$BIN/gpureclaim-enforcer
KUBE_FAKE=$(fake_bin fake_kube)
PROM_FAKE=$(fake_bin fake_prom)
T0=1700000000
OBJECTS=$KK/cluster.json

require python3 curl "$ENF" "$KUBE_FAKE" "$PROM_FAKE"
python3 "$KK/gen_matrix.py" "$TMP"
for t in a b t; do echo "tok-$t" >"$TMP/tok-$t"; done
start_fake_http "$TMP/prom.out" "$PROM_FAKE" 0 ok "$TMP/range.json" "$TMP/instant.json" ||
    { fail prom-start "$(cat "$TMP/prom.out")"; exit 1; }
PURL=$FAKE_URL

# start_cluster NAME: a fresh fake API over cluster.json; sets KURL and KLOG.
start_cluster() {
    mkdir -p "$TMP/$1"
    cp "$OBJECTS" "$TMP/$1/"
    # fake_kube: the custom resources' controllers (Kubeflow, KServe, KubeRay, JobSet), which the
    # real test cluster does not run, and a request log by token (who made each call)
    start_fake_kube "$1" "$TMP/$1" --token tok-t --token tok-a --token tok-b
}

# get PATH EXPR: EXPR (Python, on the object `o`) of the object at PATH, read with the test's
# own token; "404" when it is gone.
get() {
    _code=$(curl -s -o "$TMP/obj" -w '%{http_code}' -H 'Authorization: Bearer tok-t' "$KURL$1")
    [ "$_code" = 200 ] || { echo "$_code"; return 0; }
    python3 -c 'import json, sys
o = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$TMP/obj" "$2"
}

# writes PATH_RE [TOKEN]: the non-GET requests whose path matches PATH_RE (Python regex),
# access reviews left out.
writes() {
    python3 - "$KLOG" "$1" "${2:-}" <<'PY'
import json, re, sys
log, pat, token = sys.argv[1], re.compile(sys.argv[2]), sys.argv[3]
n = 0
for line in open(log):
    r = json.loads(line)
    if token and r.get("token") != token:
        continue
    if r["method"] != "GET" and pat.search(r["path"]) and "selfsubjectaccessreviews" not in r["path"]:
        n += 1
print(n)
PY
}

# annotated PATH KEY [TOKEN]: PATCHes of PATH setting annotation KEY (not to null).
annotated() {
    python3 - "$KLOG" "$1" "$2" "${3:-}" <<'PY'
import json, sys
log, path, key, token = sys.argv[1:5]
n = 0
for line in open(log):
    r = json.loads(line)
    if r["method"] != "PATCH" or r["path"] != path or (token and r.get("token") != token):
        continue
    body = r.get("body") if isinstance(r.get("body"), dict) else {}
    ann = (body.get("metadata") or {}).get("annotations") or {}
    v = ann.get(key)
    if v is None:
        continue
    if key == "gpureclaim.io/reclaim-notice" and "actedAt" in json.loads(v):
        continue  # the record of the action, not a notice
    n += 1
print(n)
PY
}

# --- 1. a kind added in the rules file; the controllers keep the owners' stop ----------------
start_cluster c1
T1=$TMP/t1
"$ENF" run --once --rules.file="$DATA/rules-user-kind.yaml" --prometheus.url="$PURL" --at=$T0 \
    --state.file="$T1.state" --audit.file="$T1.audit" --kube.api-url="$KURL" \
    --kube.token-file="$TMP/tok-t" --kube.allow-insecure-credentials --kube.timeout=2s \
    --enforce.max-actions-per-hour=0 --no-dry-run >"$T1.log" 2>&1
check run-exit-0 test $? = 0
WID=/apis/example.com/v1/namespaces/wid/widgets/w
check user-kind-annotated [ "$(annotated $WID example.com/paused)" = 1 ]
check user-kind-value [ "$(get $WID 'o["metadata"]["annotations"]["example.com/paused"]')" = true ]
check user-kind-child-untouched [ "$(writes '/namespaces/wid/(deployments|replicasets|pods)/')" = 0 ]
check user-kind-audited python3 - "$T1.audit" <<'PY'
import json, sys
acted = [json.loads(l) for l in open(sys.argv[1])]
acted = [o for o in acted if o["event"] == "action" and o.get("result") == "ok"]
pods = sorted(o["workload"]["pod"] for o in acted)
assert pods == ["alice-0", "llm-predictor-5d6f7-q2w3e", "rc-head-h7j8k",
                "sweep-workers-0-0-z9x8c", "w-6c7d-a1s2d"], pods
PY
NB=/apis/kubeflow.org/v1/namespaces/nb/notebooks/alice
SS=/apis/apps/v1/namespaces/nb/statefulsets/alice
check notebook-annotated [ "$(annotated $NB kubeflow-resource-stopped)" = 1 ]
check notebook-statefulset-stopped-by-controller [ "$(get $SS 'o["spec"]["replicas"]')" = 0 ]
check notebook-statefulset-never-written [ "$(writes '/statefulsets/')" = 0 ]
check kserve-deployment-deleted-by-controller \
    [ "$(get /apis/apps/v1/namespaces/kserve/deployments/llm-predictor '0')" = 404 ]
check kserve-deployment-never-written [ "$(writes '/deployments/')" = 0 ]
# a second run: the owners are still stopped, nothing is written again
"$ENF" run --once --rules.file="$DATA/rules-user-kind.yaml" --prometheus.url="$PURL" \
    --at=$((T0 + 60)) --state.file="$T1.state" --audit.file="$T1.audit" --kube.api-url="$KURL" \
    --kube.token-file="$TMP/tok-t" --kube.allow-insecure-credentials --kube.timeout=2s \
    --enforce.max-actions-per-hour=0 --no-dry-run >"$T1.2.log" 2>&1
check second-run-exit-0 test $? = 0
check nothing-acted-twice [ "$(annotated $NB kubeflow-resource-stopped)$(annotated $WID example.com/paused)" = 11 ]
check statefulset-still-stopped [ "$(get $SS 'o["spec"]["replicas"]')" = 0 ]
check ray-pods-deleted-by-controller [ "$(get /api/v1/namespaces/ray/pods/rc-head-h7j8k '0')" = 404 ]
check jobset-pods-deleted-by-controller \
    [ "$(get /api/v1/namespaces/jobset/pods/sweep-workers-0-0-z9x8c '0')" = 404 ]

# --- restore each owner; the controllers bring the children back; not reclaimed again --------
restore() { # NAME TARGET
    "$ENF" restore --rules.file="$DATA/rules-user-kind.yaml" --kube.api-url="$KURL" \
        --kube.token-file="$TMP/tok-t" --kube.allow-insecure-credentials \
        --audit.file="$T1.audit" "$2" >"$T1.restore-$1.out" 2>&1
}
ISVC=/apis/serving.kserve.io/v1beta1/namespaces/kserve/inferenceservices/llm
RC=/apis/ray.io/v1/namespaces/ray/rayclusters/rc
JS=/apis/jobset.x-k8s.io/v1alpha2/namespaces/jobset/jobsets/sweep
ANN='o["metadata"].get("annotations", {})'
check restore-notebook restore nb nb/notebook/alice
check restore-isvc restore isvc kserve/inferenceservice/llm
check restore-ray restore ray ray/raycluster/rc
check restore-jobset restore js jobset/jobset/sweep
check restore-user-kind restore wid wid/widget/w
check notebook-started [ "$(get $NB "'kubeflow-resource-stopped' in $ANN")" = False ]
check statefulset-back-by-controller [ "$(get $SS 'o["spec"]["replicas"]')" = 1 ]
check isvc-started [ "$(get $ISVC "'serving.kserve.io/stop' in $ANN")" = False ]
check isvc-deployment-back-by-controller \
    [ "$(get /apis/apps/v1/namespaces/kserve/deployments/llm-predictor 'o["spec"]["replicas"]')" = 1 ]
check ray-resumed [ "$(get $RC 'o["spec"].get("suspend")')" = False ]
check jobset-resumed [ "$(get $JS 'o["spec"].get("suspend")')" = False ]
check user-kind-started [ "$(get $WID "'example.com/paused' in $ANN")" = False ]
check restores-audited [ "$(grep -c '"event":"restore","rule"' "$T1.audit")" -ge 5 ]
stops_before=$(writes '/(notebooks|inferenceservices|rayclusters|jobsets|widgets)/')
"$ENF" run --once --rules.file="$DATA/rules-user-kind.yaml" --prometheus.url="$PURL" \
    --at=$((T0 + 120)) --state.file="$T1.state" --audit.file="$T1.audit" --kube.api-url="$KURL" \
    --kube.token-file="$TMP/tok-t" --kube.allow-insecure-credentials --kube.timeout=2s \
    --enforce.max-actions-per-hour=0 --no-dry-run >"$T1.3.log" 2>&1
check run-after-restore-exit-0 test $? = 0
check not-reclaimed-again \
    [ "$(writes '/(notebooks|inferenceservices|rayclusters|jobsets|widgets)/')" = "$stops_before" ]
check notebook-kept-restarted grep -q \
    '"result":"too_young","message":"restarted: Notebook alice was brought back at' "$T1.audit"
check user-kind-kept-restarted grep -q \
    '"result":"too_young","message":"restarted: Widget w was brought back at' "$T1.audit"

# the permission check of a `run` daemon: the Widget's resource through discovery
PORT=$(free_port)
start_bg "$T1.daemon.log" "$ENF" run --rules.file="$DATA/rules-user-kind.yaml" \
    --prometheus.url="$PURL" --at=$T0 --enforce.interval=1h --kube.api-url="$KURL" \
    --kube.token-file="$TMP/tok-t" --kube.allow-insecure-credentials --kube.timeout=2s \
    --web.listen-address="127.0.0.1:$PORT"
DPID=$LAST_PID
checked() { grep -q 'permission check:' "$T1.daemon.log"; }
if wait_for 60 checked; then pass daemon-checked; else fail daemon-checked; fi
check widget-patch-reviewed python3 - "$KLOG" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    ra = ((r.get("body") or {}).get("spec") or {}).get("resourceAttributes") or {} \
        if isinstance(r.get("body"), dict) else {}
    if r["path"].endswith("/selfsubjectaccessreviews") and ra.get("group") == "example.com" \
            and ra.get("resource") == "widgets" and ra.get("verb") == "patch" \
            and ra.get("namespace") == "wid":
        sys.exit(0)
sys.exit(1)
PY
check all-granted grep -q 'permission check: all [0-9]* permissions the rules can use are granted' \
    "$T1.daemon.log"
stop_pid "$DPID"
stop_pid "$KPID"

# --- 2. failover between two replicas, a Notebook as the owner -------------------------------
start_cluster c2
# start_enf ID: replica enf-ID; sets PID_ID and PORT_ID.
start_enf() {
    _port=$(free_port)
    start_bg "$TMP/enf-$1.log" env POD_NAME="enf-$1" "$ENF" run \
        --rules.file="$DATA/rules-ha.yaml" --prometheus.url="$PURL" --at="$T0" --at.advance \
        --enforce.interval=1s --no-dry-run --state.file="$TMP/$1.state" \
        --audit.file="$TMP/$1.audit" --kube.api-url="$KURL" --kube.token-file="$TMP/tok-$1" \
        --kube.allow-insecure-credentials --kube.timeout=2s --enforce.max-actions-per-hour=0 \
        --leader-elect --leader-elect.namespace=gpureclaim --leader-elect.lease-duration=5s \
        --leader-elect.renew-deadline=3s --leader-elect.retry-period=1s \
        --web.listen-address="127.0.0.1:$_port"
    eval "PID_$1=$LAST_PID PORT_$1=$_port"
}
is_leader() { # ID: 1, 0, or empty when its metrics cannot be read
    eval "_p=\$PORT_$1"
    curl -s -m 1 "http://127.0.0.1:$_p/metrics" 2>/dev/null |
        awk '$1 == "gpureclaim_enforcer_leader" { print $2 }'
}
one_leader() {
    _a=$(is_leader a) _b=$(is_leader b)
    [ "$_a$_b" = "10" ] && LEADER=a OTHER=b && return 0
    [ "$_a$_b" = "01" ] && LEADER=b OTHER=a && return 0
    return 1
}
noticed() { [ "$(annotated $NB gpureclaim.io/reclaim-notice)" -ge 1 ]; }
stopped() { [ "$(annotated $NB kubeflow-resource-stopped)" -ge 1 ]; }
start_enf a
start_enf b
if wait_for 60 one_leader; then pass one-leader; else fail one-leader "a=$(is_leader a) b=$(is_leader b)"; fi
if wait_for 60 noticed; then pass notice-on-notebook; else fail notice-on-notebook; fi
check notice-by-leader [ "$(annotated $NB gpureclaim.io/reclaim-notice "tok-$LEADER")" = 1 ]
check not-stopped-yet [ "$(annotated $NB kubeflow-resource-stopped)" = 0 ]
eval "kill -KILL \$PID_$LEADER"
if wait_for 45 stopped; then pass stopped-after-failover; else fail stopped-after-failover; fi
# three more of the new leader's cycles: had it a second stop or notice to do, it would have
eval "wait_cycles http://127.0.0.1:\$PORT_$OTHER/metrics 3" || fail after-failover-cycles
check stopped-once [ "$(annotated $NB kubeflow-resource-stopped)" = 1 ]
check stopped-by-other [ "$(annotated $NB kubeflow-resource-stopped "tok-$OTHER")" = 1 ]
check no-second-notice [ "$(annotated $NB gpureclaim.io/reclaim-notice)" = 1 ]
check statefulset-at-zero [ "$(get $SS 'o["spec"]["replicas"]')" = 0 ]
check statefulset-never-written [ "$(writes '/statefulsets/')" = 0 ]
check not-before-announced python3 - "$TMP/a.audit" "$TMP/b.audit" <<'PY'
import json, sys
notice = acted = None
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        o = json.loads(line)
        if o["event"] == "notice" and o.get("act_after"):
            notice = o["act_after"]
        if o["event"] == "action" and o.get("result") == "ok":
            acted = o["time"]
assert notice and acted and acted >= notice, (notice, acted)
PY
eval "stop_pid \$PID_$OTHER"
finish
