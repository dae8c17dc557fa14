#!/bin/sh
# End to end, the custom-resource rows of the kinds table (enforcer/kinds.c) on a real API
# server (tests/kube/cluster.sh) with their projects' own CRDs installed (tests/kube/crds.sh,
# from the Go modules; the versions are printed), not against tests/fakes/fake_kube.c:
#   1. the CRDs are accepted (server-side apply) and Established; per row whose group is
#      installed, discovery serves the row's version, or (LLMInferenceService: KServe 0.16.0
#      serves v1alpha1 only) the enforcer finds the served one (its restore reaches it);
#   2. per kind one minimal object the schema accepts, with a chain of owners where the row
#      sits above other objects (RayJob and RayService over a RayCluster, a serverless
#      InferenceService over Knative's Service, Configuration and Revision, a CronWorkflow's
#      Workflow, a Job Kueue admitted with its Workload), and a GPU pod kwok runs under it;
#   3. one `run --once --no-dry-run` with the shipped ServiceAccount's token and roles, every
#      pod idle (canned answers, as kube_real.sh): each object read back carries what its way
#      sets (the real schema kept it: a pruned field would show here), and the audit agrees;
#      RayService, whose KubeRay 1.5.0 CRD has no spec.suspend, is not counted as acted; the
#      Kueue Job's Workload is deactivated at the version Kueue serves (v1beta2);
#   4. `restore` of each: the original value is back, the deletes refused;
#   5. the JobSet, LeaderWorkerSet and KubeRay controllers, built from their modules and run
#      out of cluster with the admin's kubeconfig (webhooks unregistered, internal certificate
#      management off): their children go away on the stop and come back on restore.
# Kinds whose CRDs no module the proxy serves carries (Notebook, Volcano Job, Kaiwo, AIM) are
# said in docs/real-cluster.md, "CRDs"; they stay with kinds_all.sh and kube_kinds.sh.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/kube/cluster.sh"

DATA=$TOP/tests/e2e/data/kube_crds
ENF=$BIN/gpureclaim-enforcer
PROM_FAKE=$(fake_bin fake_prom)
require python3 curl openssl go "$ENF" "$PROM_FAKE"

t0=$(date +%s)
# KUBE_CRDS_CONTROLLERS: the controllers built and run (default "jobset lws kuberay"; "no": none).
# A cold build of them (some 20 CPU-minutes) happens here, at nice 10, not in go-build: in
# make check this suite runs in the background beside check-e2e (the Makefile's KUBE_CRDS_PID),
# so the build does not hold up the suites that wait for go-build.
CTL_WANT=${KUBE_CRDS_CONTROLLERS:-jobset lws kuberay}
[ "$CTL_WANT" = no ] && CTL_WANT=""
KUBE_CRDS_CONTROLLERS=$CTL_WANT nice -n 10 sh "$TOP/tests/kube/crds.sh" ${CTL_WANT:+--controllers} >"$TMP/crds.list" 2>"$TMP/crds.err" ||
    { fail crds-fetched "$(tail -n 5 "$TMP/crds.err")"; exit 1; }
cat "$TMP/crds.err" >&2
pass "crds-fetched-$(grep -vc '^controller ' "$TMP/crds.list")-files ($(($(date +%s) - t0)) s)"
echo "CRDs (module version path):"
grep -v '^controller ' "$TMP/crds.list" | awk '{ print "  " $1 "@" $2 " " $3 }'
grep '^controller ' "$TMP/crds.list" | awk '{ print "controller " $2 ": " $3 "@" $4 }'
# check_into NAME FILE COMMAND...: check COMMAND, its output in FILE, the end of it on failure
check_into() {
    _n=$1 _f=$2
    shift 2
    if "$@" >"$_f" 2>&1; then pass "$_n"; else fail "$_n" "$(tail -n 3 "$_f")"; fi
}
ctl_bin() { awk -v n="$1" '$1 == "controller" && $2 == n { print $5 }' "$TMP/crds.list"; }

kube_cluster_start 16 2

# --- 1. the CRDs, discovery ---------------------------------------------------------------------
set --
for f in $(grep -v '^controller ' "$TMP/crds.list" | awk '{ print $4 }'); do set -- "$@" -f "$f"; done
check_into crds-applied "$TMP/crds-apply.out" kubectl apply --server-side "$@"
check_into crds-established "$TMP/crds-wait.out" \
    kubectl wait --for=condition=Established --timeout=60s "$@"
python3 "$DATA/cases.py" discovery "$TOP/enforcer/kinds.c" "$TMP" >"$TMP/discovery.txt" 2>&1 ||
    fail discovery-read "$(tail -n 3 "$TMP/discovery.txt")"
sed 's/^/discovery: /' "$TMP/discovery.txt"
while read -r how kg rest; do
    case $kg in
    # KServe 0.16.0's LLMInferenceService CRD serves v1alpha1, the row names v1alpha2 (KServe
    # 0.17): restore (part 4) reaches it at the served version
    LLMInferenceService.serving.kserve.io) check "discovery-$kg-$how" [ "$how" = NOT-SERVED ] ;;
    *) check "discovery-$kg-serves-row-version" [ "$how" = SERVED ] ;;
    esac
done <"$TMP/discovery.txt"
# Kueue's Workloads (no row: the enforcer deactivates them in a job's stead) at the version
# the group prefers, v1beta2 since Kueue v0.16.0 (enforcer/kube.c, kube_kueue_resource)
KUEUE_PREF=$(kubectl get --raw /apis/kueue.x-k8s.io | python3 -c 'import json, sys
print(json.load(sys.stdin)["preferredVersion"]["version"])')
echo "discovery: kueue.x-k8s.io preferred=$KUEUE_PREF"
check discovery-kueue-prefers-v1beta2 [ "$KUEUE_PREF" = v1beta2 ]

# --- 2. the shipped roles, the objects ---------------------------------------------------------
kubectl kustomize "$TOP/deploy/kubernetes" >"$TMP/all.yaml"
python3 - "$TMP/all.yaml" >"$TMP/rbac.yaml" <<'PY'
import sys
kinds = ("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
docs = open(sys.argv[1]).read().split("\n---\n")
print("\n---\n".join(d for d in docs if any("\nkind: %s\n" % k in "\n" + d + "\n" for k in kinds)))
PY
check_into rbac-applied "$TMP/rbac.out" kubectl apply -f "$TMP/rbac.yaml"
kube_sa_token gpureclaim gpureclaim-enforcer 3600 >"$TMP/sa.token" 2>"$TMP/token.err"
check sa-token-issued [ -s "$TMP/sa.token" ]

# the controllers, out of cluster, before their objects exist
CTLS=""
# start_ctl NAME CONFIG-API: the controller with a config file that turns off its internal
# certificate management (which would write a Secret and a webhook configuration in the
# cluster) and leader election, its webhook server on a free port with a certificate made
# here (controller-runtime's server needs one to start; no webhook configuration points at it,
# so the API server never calls it), no metrics server.
start_ctl() {
    _b=$(ctl_bin "$1")
    [ -x "$_b" ] || { fail "$1-controller-built" "no binary"; return 1; }
    mkdir -p "$TMP/$1-certs"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/$1-certs/tls.key" \
        -out "$TMP/$1-certs/tls.crt" -subj "/CN=127.0.0.1" -days 1 2>/dev/null
    cat >"$TMP/$1.config.yaml" <<EOF
apiVersion: $2
kind: Configuration
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {port: $(free_port), host: 127.0.0.1, certDir: "$TMP/$1-certs"}
metrics: {bindAddress: "0"}
health: {healthProbeBindAddress: "127.0.0.1:$(free_port)"}
EOF
    start_bg "$TMP/$1-controller.log" "$_b" --kubeconfig="$KC/admin.kubeconfig" \
        --config="$TMP/$1.config.yaml" --zap-log-level=info
    eval "CTL_PID_$1=$LAST_PID"
    _hp=$(sed -n 's/.*healthProbeBindAddress: "\(.*\)"}/\1/p' "$TMP/$1.config.yaml")
    if wait_for 60 curl -sf "http://$_hp/readyz"; then
        pass "$1-controller-ready"
        CTLS="$CTLS $1"
    else
        fail "$1-controller-ready" "$(tail -n 5 "$TMP/$1-controller.log")"
    fi
}
# start_kuberay: KubeRay's operator with flags (no config file: "Flags are ignored if config
# file is set"); its webhooks are off unless ENABLE_WEBHOOKS=true; it watches the one
# namespace whose RayCluster has no pod of ours (the RayJob's and RayService's RayClusters
# here are stand-ins the operator would otherwise fill with head pods of its own).
start_kuberay() {
    _b=$(ctl_bin kuberay)
    [ -x "$_b" ] || { fail kuberay-controller-built "no binary"; return 1; }
    _hp=127.0.0.1:$(free_port)
    start_bg "$TMP/kuberay-controller.log" env -u ENABLE_WEBHOOKS "$_b" \
        --kubeconfig="$KC/admin.kubeconfig" --metrics-addr=0 --health-probe-bind-address="$_hp" \
        --enable-leader-election=false --watch-namespace=rc
    CTL_PID_kuberay=$LAST_PID
    if wait_for 60 curl -sf "http://$_hp/readyz"; then
        pass kuberay-controller-ready
        CTLS="$CTLS kuberay"
    else
        fail kuberay-controller-ready "$(tail -n 5 "$TMP/kuberay-controller.log")"
    fi
}
for c in $CTL_WANT; do
    case $c in
    kuberay) start_kuberay ;;
    *) start_ctl "$c" "config.$c.x-k8s.io/v1alpha1" ;;
    esac
done

# shellcheck disable=SC2086
NCASES=$(python3 "$DATA/cases.py" create "$TOP/enforcer/kinds.c" "$TMP" $CTLS 2>"$TMP/create.err")
if [ -n "$NCASES" ]; then pass "objects-created-$NCASES"; else
    fail objects-created "$(tail -n 3 "$TMP/create.err")"
    exit 1
fi
npods() { kubectl get pods -n "$1" --no-headers 2>/dev/null | grep -c . || true; }
nrunning() {
    kubectl get pods -n "$1" --field-selector=status.phase=Running --no-headers 2>/dev/null |
        grep -c . || true
}
is_n() { [ "$("$@")" = "$N" ]; }
NSS=$(python3 -c 'import json, sys
print(" ".join(c["ns"] for c in json.load(open(sys.argv[1]))))' "$TMP/cases.json" 2>/dev/null)
for ns in $NSS; do
    N=1; check "pod-running-$ns" wait_for 60 is_n nrunning "$ns"
done

NOW=$(date +%s)
END=$((NOW + 1200))
for ns in $NSS; do
    kubectl get pods -n "$ns" -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}'
done >"$TMP/pods.txt"
# shellcheck disable=SC2046
python3 "$TOP/tests/e2e/data/kube_real/gen_prom.py" "$TMP" "" "$END" $(cat "$TMP/pods.txt")
start_fake_http "$TMP/prom.out" "$PROM_FAKE" 0 ok "$TMP/range.json" "$TMP/instant.json" ||
    { fail prom-start "$(cat "$TMP/prom.out")"; exit 1; }
PURL=$FAKE_URL
KFLAGS="--kube.api-url=$KUBE_URL --kube.ca-file=$KUBE_CA --kube.token-file=$TMP/sa.token --kube.timeout=5s"

# checks STAGE: cases.py's per-case checks, each a PASS or a FAIL
checks() {
    python3 "$DATA/cases.py" check "$1" "$TMP" >"$TMP/$1.checks" 2>&1 ||
        fail "$1-checker" "$(tail -n 3 "$TMP/$1.checks")"
    while read -r _res _name _why; do
        case $_res in
        PASS) pass "$_name" ;;
        FAIL) fail "$_name" "$_why" ;;
        *) fail "$1-checker" "$_res $_name $_why" ;;
        esac
    done <"$TMP/$1.checks"
}

# --- 3. the stop --------------------------------------------------------------------------------
# shellcheck disable=SC2086
"$ENF" run --once --no-dry-run --rules.file="$TMP/rules.yaml" --prometheus.url="$PURL" \
    --at="$END" --state.file="$TMP/state.json" --audit.file="$TMP/audit.jsonl" $KFLAGS \
    --enforce.max-actions-per-hour=0 >"$TMP/run.log" 2>&1
rc=$?
[ "$rc" = 0 ] && pass run-exit-0 || fail run-exit-0 "exit $rc: $(tail -n 3 "$TMP/run.log")"
check no-422 [ "$(grep -c '"api_status":422' "$TMP/audit.jsonl")" = 0 ]
# the shipped roles grant every write (a 403 would name the missing permission)
check no-403 [ "$(grep -c '"api_status":403' "$TMP/audit.jsonl")" = 0 ]
checks stopped

# the controllers' reaction: JobSet suspends its Job (the Job controller deletes the pod), LWS
# scales its leader StatefulSet to 0 (the StatefulSet controller deletes the pod)
for c in $CTLS; do
    case $c in jobset) ns=js ;; lws) ns=lws ;; kuberay) ns=rc ;; esac
    N=0; check "$c-children-gone" wait_for 60 is_n npods "$ns"
done
case " $CTLS " in *" jobset "*)
    check jobset-job-suspended [ "$(kubectl get jobs -n js -o jsonpath='{.items[0].spec.suspend}')" = true ] ;;
esac
case " $CTLS " in *" lws "*)
    check lws-statefulset-0 [ "$(kubectl get statefulset lws -n lws -o jsonpath='{.spec.replicas}')" = 0 ] ;;
esac

# --- 4. restore ---------------------------------------------------------------------------------
for t in $(python3 -c 'import json, sys
for c in json.load(open(sys.argv[1])):
    print(c["ns"] + "=" + c["restore_target"])' "$TMP/cases.json"); do
    # shellcheck disable=SC2086
    "$ENF" restore --rules.file="$TMP/rules.yaml" $KFLAGS --audit.file="$TMP/audit.jsonl" \
        "${t#*=}" >"$TMP/restore-${t%%=*}.out" 2>&1
    echo $? >"$TMP/restore-${t%%=*}.rc"
done
checks restored
for c in $CTLS; do
    case $c in jobset) ns=js ;; lws) ns=lws ;; kuberay) ns=rc ;; esac
    N=1; check "$c-children-back" wait_for 60 is_n nrunning "$ns"
done

for c in $CTLS; do eval "stop_pid \$CTL_PID_$c"; done
stop_pid "$FAKE_PID"
echo "kube_crds: $(($(date +%s) - t0)) s in all"
finish
