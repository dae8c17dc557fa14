#!/bin/sh
# End to end: `backtest` looking its workloads up in a real Kubernetes (tests/kube/cluster.sh,
# as kube_real.sh), not in tests/fakes/fake_kube.c. The history is backtest.sh's known answer
# (tests/e2e/data/backtest/gen.py, backfilled into a real Prometheus); the cluster holds, as
# they are now, ml/idle labelled gpureclaim.io/exempt=true, ml/back annotated
# gpureclaim.io/keep-until far ahead (the rule allows 1d), dev/late a plain pod, and no ml/gone.
# The enforcer authenticates with a TokenRequest token of a ServiceAccount bound to the
# built-in `view` ClusterRole only, so the API server itself would refuse any write; and the
# objects' resourceVersions and the namespaces' Events are the same after the backtest as
# before it: it wrote nothing.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/kube/cluster.sh"

DATA=$TOP/tests/e2e/data/backtest
ENF=$BIN/gpureclaim-enforcer
END=1700000000
FROM=$((END - 10800))
require prometheus promtool python3 curl openssl go "$ENF"

kube_cluster_start 4 1
for ns in ml dev; do kubectl create namespace $ns >/dev/null; done
kubectl apply -f - >"$TMP/apply.out" 2>&1 <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: idle, namespace: ml, labels: {gpureclaim.io/exempt: "true"}}
spec: {containers: [{name: main, image: rocm/pytorch:latest, resources: {limits: {amd.com/gpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: back, namespace: ml, annotations: {gpureclaim.io/keep-until: "2099-01-01T00:00:00Z"}}
spec: {containers: [{name: main, image: rocm/pytorch:latest, resources: {limits: {amd.com/gpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: late, namespace: dev}
spec: {containers: [{name: main, image: rocm/pytorch:latest, resources: {limits: {amd.com/gpu: "1"}}}]}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: backtest, namespace: dev}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: backtest-view}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: ServiceAccount, name: backtest, namespace: dev}]
EOF
check objects-applied [ $? -eq 0 ]
check pods-running wait_for 60 sh -c \
    "[ \"\$(kubectl get pods -A --field-selector=status.phase=Running --no-headers | grep -c '^ml \|^dev ')\" = 3 ]"
kube_sa_token dev backtest 3600 >"$TMP/sa.token" 2>"$TMP/token.err"
check sa-token-issued [ -s "$TMP/sa.token" ]
kc_token_kubeconfig "$TMP/sa.kubeconfig" "$TMP/sa.token"
check sa-cannot-write [ "$("$KUBE_BIN/kubectl" --kubeconfig="$TMP/sa.kubeconfig" auth can-i patch pods -n ml)" = no ]

# state: every object's resourceVersion and the Events of both namespaces, to compare.
state() {
    kubectl get pods -n ml -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.resourceVersion}{"\n"}{end}'
    kubectl get pods -n dev -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.resourceVersion}{"\n"}{end}'
    kubectl get events -n ml --no-headers 2>/dev/null | grep -c 'IdleGPU'
    kubectl get events -n dev --no-headers 2>/dev/null | grep -c 'IdleGPU'
}
state >"$TMP/before.txt"

python3 "$DATA/gen.py" "$TMP/history.om"
need_history "$TMP/history.om"
sed 's/^  action: delete$/  action: delete\n  maxKeepUntil: 1d/' "$DATA/rules-a.yaml" >"$TMP/rules.yaml"
"$ENF" backtest --rules.file "$TMP/rules.yaml" --prometheus.url "$PROM_URL" --from $FROM \
    --to $END --enforce.interval 5m --kube.api-url="$KUBE_URL" --kube.ca-file="$KUBE_CA" \
    --kube.token-file="$TMP/sa.token" --output json >"$TMP/bt.json" 2>"$TMP/bt.err"
check backtest-exit-0 [ $? -eq 0 ]
got=$(python3 - "$TMP/bt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s, l = r["rules"][0], r["lookup"]
print(s["reclaims"], "%.4f" % s["gpuHoursFreed"], sorted(x["workload"]["pod"] for x in r["reclaims"]))
for x in l["leftOut"] + l["notChecked"]:
    print(x["workload"]["pod"], x["reason"])
PY
)
want="3 10.1667 ['gone', 'late', 'late']
back kept until .* at the owner's request, capped: gpureclaim.io/keep-until on Pod ml/back asks for 2099-01-01T00:00:00Z, rule 'notebooks' allows at most 1d after the notice
idle labelled gpureclaim.io/exempt=true in its owner chain
gone not found now: .*"
if printf '%s\n' "$got" | python3 -c '
import re, sys
got, want = sys.stdin.read().rstrip("\n").split("\n"), sys.argv[1].split("\n")
pat = lambda w: re.escape(w).replace(re.escape(".*"), ".*")
sys.exit(0 if len(got) == len(want) and all(re.fullmatch(pat(w), g) for w, g in zip(want, got)) else 1)' "$want"
then pass left-out-and-not-checked; else
    fail left-out-and-not-checked "$(printf 'got:\n%s\nwant:\n%s\nstderr: %s' "$got" "$want" "$(head -c 400 "$TMP/bt.err")")"; fi
state >"$TMP/after.txt"
check nothing-written cmp -s "$TMP/before.txt" "$TMP/after.txt"
finish
