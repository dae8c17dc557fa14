# A real Kubernetes control plane for the kube suites (sourced after tests/lib.sh, not run).
#
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok and kube-state-metrics,
# built from Go modules by tests/kube/build.sh (cached outside the work tree), all on
# 127.0.0.1 with ports picked free. TLS with certificates made here by openssl, RBAC
# authorization, ServiceAccount tokens signed with a key made here. The admin is a client
# certificate (O=system:masters) used only to set the cluster up; the enforcer is given a
# ServiceAccount token instead (kube_sa_token), so RBAC answers for it as in a cluster.
# kwok plays the kubelets: nodes annotated kwok.x-k8s.io/node=fake advertise amd.com/gpu, and
# their pods become Running without a container. kwok's pod-complete stage is left out, so a
# Job's pods keep running until something (the Job controller) deletes them.
#
# What was taken from where is in docs/real-cluster.md. Each process is stopped by its PID
# (kube_cluster_stop, added to CLEANUP_HOOK), in the reverse order of their start. Every wait is
# on a condition with a bound that names what it waited for.
#
#   kube_cluster_start [GPUS_PER_NODE] [NODES]   sets KC (the directory), KUBE_URL, KUBE_CA,
#                                                KSM_PORT; puts a `kubectl` running as the
#                                                admin first on PATH
#   kube_sa_token NS SA [SECONDS]                prints a TokenRequest token of NS/SA
#   kube_enforcer_can / kube_enforcer_cannot VERB RESOURCE [FLAG...]
#                                                the shipped ServiceAccount (KUBE_ENFORCER_SA)
#                                                may / may not, as `kubectl auth can-i` says
#   kube_operator_crds                           the Prometheus Operator's two CRDs the
#                                                manifests need, applied and Established
#   kube_role_without_eviction ALL_YAML / kube_role_restored
#                                                the shipped ClusterRole without its one verb
#                                                of pods/eviction, then restored (checks)
#   kube_jp, kube_npods, kube_nrunning, kube_notice, kube_events
#                                                what a suite reads back from live objects
#   kube_versions                                prints one line a component
#   kube_apiserver_stop / kube_apiserver_start   the API server, by PID; started again on the
#   kube_etcd_stop / kube_etcd_start             same port (etcd: ports and data directory)

KC_PIDS=""
# kc_bg NAME COMMAND...: start a cluster process, its output in $KC/NAME.log (appended: a
# restarted process's log follows its predecessor's).
kc_bg() {
    _kn=$1; shift
    "$@" >>"$KC/$_kn.log" 2>&1 &
    KC_PIDS="$! $KC_PIDS"
    eval "KC_PID_$(echo "$_kn" | tr -c 'a-zA-Z0-9\n' _)=$!"
}

kube_cluster_stop() {
    for _p in $KC_PIDS; do stop_pid "$_p"; done
    KC_PIDS=""
}

# kc_wait SECONDS WHAT COMMAND...: poll every 0.2 s until COMMAND succeeds, else say WHAT.
kc_wait() {
    _kw_s=$1 _kw_end=$(( $(date +%s) + $1 )) _kw_what=$2; shift 2
    while [ "$(date +%s)" -le "$_kw_end" ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    echo "kube-cluster: no $_kw_what after ${_kw_s} s" >&2
    return 1
}

# kc_cert NAME SUBJECT [SAN]: a key and a certificate signed by the cluster CA.
kc_cert() {
    openssl req -new -newkey rsa:2048 -nodes -keyout "$KC/$1.key" -subj "$2" \
        -out "$KC/$1.csr" 2>/dev/null || return 1
    if [ -n "${3:-}" ]; then
        printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$3" >"$KC/$1.ext"
    else
        printf 'extendedKeyUsage=clientAuth\n' >"$KC/$1.ext"
    fi
    openssl x509 -req -in "$KC/$1.csr" -CA "$KC/ca.crt" -CAkey "$KC/ca.key" -CAcreateserial \
        -days 2 -sha256 -extfile "$KC/$1.ext" -out "$KC/$1.crt" 2>/dev/null
}

# kc_config FILE USER CREDENTIALS: a kubeconfig for the test cluster, USER authenticating with
# CREDENTIALS (the inside of its `user:` mapping).
kc_config() {
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "$KUBE_URL", certificate-authority: "$KC/ca.crt"}
users:
- name: $2
  user: {$3}
contexts:
- name: test
  context: {cluster: test, user: $2}
current-context: test
EOF
}
# kc_kubeconfig NAME: $KC/NAME.kubeconfig with the client certificate NAME.
kc_kubeconfig() {
    kc_config "$KC/$1.kubeconfig" "$1" "client-certificate: \"$KC/$1.crt\", client-key: \"$KC/$1.key\""
}
# kc_token_kubeconfig FILE TOKEN_FILE: a kubeconfig that authenticates with a bearer token.
kc_token_kubeconfig() {
    kc_config "$1" sa "tokenFile: \"$2\""
}

kc_https() { curl -sf --cacert "$KC/ca.crt" --cert "$KC/admin.crt" --key "$KC/admin.key" "$@"; }

# kc_kwok_stages: kwok's own node and pod stages from its module, without pod-complete.
kc_kwok_stages() {
    _kd=$(cd "$KC" && GOTOOLCHAIN=local go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
    [ -d "$_kd/kustomize/stage" ] || return 1
    for _s in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
        pod/fast/pod-ready.yaml pod/fast/pod-delete.yaml; do
        [ -f "$_kd/kustomize/stage/$_s" ] || { echo "kube-cluster: no '$_s' in '$_kd'" >&2; return 1; }
        echo "---"
        cat "$_kd/kustomize/stage/$_s"
    done
}

# kube_etcd_start: etcd on the cluster's ports and data directory (again after
# kube_etcd_stop: the same member, its data kept); waits for its /health.
kube_etcd_start() {
    kc_bg etcd "$ETCD_BIN" --data-dir="$KC/etcd" --name=test \
        --listen-client-urls="http://127.0.0.1:$KC_ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$KC_ETCD_PORT" \
        --listen-peer-urls="http://127.0.0.1:$KC_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$KC_PEER_PORT" \
        --initial-cluster="test=http://127.0.0.1:$KC_PEER_PORT" --unsafe-no-fsync --log-level=warn
    kc_wait 30 "etcd /health" sh -c "curl -sf http://127.0.0.1:$KC_ETCD_PORT/health | grep -q '\"health\":\"true\"'"
}

# kube_apiserver_start: kube-apiserver on the cluster's port, certificates and etcd (again
# after kube_apiserver_stop or a kill: same URL, same signing key, so tokens and kubeconfigs
# stay good); waits for its /readyz.
kube_apiserver_start() {
    kc_bg apiserver "$KUBE_BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$KC_ETCD_PORT" \
        --bind-address=127.0.0.1 --secure-port="$KC_API_PORT" \
        --tls-cert-file="$KC/apiserver.crt" --tls-private-key-file="$KC/apiserver.key" \
        --client-ca-file="$KC/ca.crt" --authorization-mode=RBAC \
        --service-account-issuer="$KUBE_URL" --service-account-key-file="$KC/sa.pub" \
        --service-account-signing-key-file="$KC/sa.key" \
        --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true --profiling=false
    # 180 s: on a 2-core machine at a load of 30 (other builds beside) it took over 90 s
    kc_wait 180 "kube-apiserver /readyz" kc_https "$KUBE_URL/readyz"
}

# kc_forget PID: take PID off the list kube_cluster_stop stops (it was stopped or killed).
kc_forget() {
    _kf=""
    for _p in $KC_PIDS; do [ "$_p" = "$1" ] || _kf="$_kf $_p"; done
    KC_PIDS=$_kf
}
# kube_apiserver_stop, kube_etcd_stop: stop that one process by its PID (SIGTERM, as a
# restart does), for the fault suites; the ports and the data directory stay for its start.
kube_apiserver_stop() { stop_pid "$KC_PID_apiserver"; kc_forget "$KC_PID_apiserver"; }
kube_etcd_stop() { stop_pid "$KC_PID_etcd"; kc_forget "$KC_PID_etcd"; }
# kube_apiserver_reap: the API server was killed by someone the test started (a webhook of a
# fault suite): wait for it, and forget its PID.
kube_apiserver_reap() { wait "$KC_PID_apiserver" 2>/dev/null; kc_forget "$KC_PID_apiserver"; }

kube_cluster_start() {
    _gpus=${1:-4} _nodes=${2:-1}
    _env=$(sh "$TOP/tests/kube/build.sh" -q) || { fail kube-build "tests/kube/build.sh failed"; exit 1; }
    . "$_env"
    KC=$TMP/cluster
    mkdir -p "$KC/etcd"
    CLEANUP_HOOK="${CLEANUP_HOOK:+$CLEANUP_HOOK; }kube_cluster_stop"

    # certificates: a CA, the API server's serving cert, one client cert per component
    openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$KC/ca.key" -subj "/CN=test-ca" \
        -days 2 -out "$KC/ca.crt" 2>/dev/null || { fail kube-certs "openssl CA"; exit 1; }
    kc_cert apiserver "/CN=kube-apiserver" "IP:127.0.0.1,DNS:localhost" &&
        kc_cert admin "/O=system:masters/CN=test-admin" &&
        kc_cert kcm "/CN=system:kube-controller-manager" &&
        kc_cert scheduler "/CN=system:kube-scheduler" &&
        openssl genrsa -out "$KC/sa.key" 2048 2>/dev/null &&
        openssl rsa -in "$KC/sa.key" -pubout -out "$KC/sa.pub" 2>/dev/null ||
        { fail kube-certs "openssl"; exit 1; }

    KC_ETCD_PORT=$(free_port) KC_PEER_PORT=$(free_port) KC_API_PORT=$(free_port)
    kube_etcd_start || { fail kube-etcd "$(tail -n 5 "$KC/etcd.log")"; exit 1; }
    KUBE_URL=https://127.0.0.1:$KC_API_PORT
    KUBE_CA=$KC/ca.crt
    kube_apiserver_start || { fail kube-apiserver "$(tail -n 5 "$KC/apiserver.log")"; exit 1; }
    kc_kubeconfig admin
    # `kubectl` as the admin, also in the `sh -c` of a suite's waits
    mkdir -p "$KC/bin"
    printf '#!/bin/sh\nexec "%s/kubectl" --kubeconfig="%s/admin.kubeconfig" "$@"\n' \
        "$KUBE_BIN" "$KC" >"$KC/bin/kubectl"
    chmod +x "$KC/bin/kubectl"
    PATH=$KC/bin:$PATH
    export PATH
    kc_kubeconfig kcm
    kc_kubeconfig scheduler

    _kcm=$(free_port) _sch=$(free_port)
    kc_bg controller-manager "$KUBE_BIN/kube-controller-manager" --kubeconfig="$KC/kcm.kubeconfig" \
        --authentication-kubeconfig="$KC/kcm.kubeconfig" --authorization-kubeconfig="$KC/kcm.kubeconfig" \
        --leader-elect=false --bind-address=127.0.0.1 --secure-port="$_kcm" \
        --service-account-private-key-file="$KC/sa.key" --root-ca-file="$KC/ca.crt" \
        --use-service-account-credentials=true --controllers='*'
    kc_bg scheduler "$KUBE_BIN/kube-scheduler" --kubeconfig="$KC/scheduler.kubeconfig" \
        --authentication-kubeconfig="$KC/scheduler.kubeconfig" \
        --authorization-kubeconfig="$KC/scheduler.kubeconfig" \
        --leader-elect=false --bind-address=127.0.0.1 --secure-port="$_sch"
    kc_wait 60 "kube-controller-manager /healthz" curl -sfk "https://127.0.0.1:$_kcm/healthz" ||
        { fail kube-controller-manager "$(tail -n 5 "$KC/controller-manager.log")"; exit 1; }
    kc_wait 60 "kube-scheduler /readyz" curl -sfk "https://127.0.0.1:$_sch/readyz" ||
        { fail kube-scheduler "$(tail -n 5 "$KC/scheduler.log")"; exit 1; }

    kc_kwok_stages >"$KC/kwok-stages.yaml" || { fail kube-kwok "no kwok stages"; exit 1; }
    _kwok=$(free_port)
    kc_bg kwok "$KWOK_BIN" --kubeconfig="$KC/admin.kubeconfig" --config="$KC/kwok-stages.yaml" \
        --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
        --node-ip=10.0.1.1 --cidr=10.0.2.0/24 --server-address="127.0.0.1:$_kwok"
    _i=0
    while [ "$_i" -lt "$_nodes" ]; do
        _i=$((_i + 1))
        kubectl apply -f - >>"$KC/setup.log" 2>&1 <<EOF || { fail kube-node "$(tail -n 3 "$KC/setup.log")"; exit 1; }
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-$_i
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: gpu-node-$_i, type: kwok, feature.node.kubernetes.io/amd-gpu: "true"}
spec: {}
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110", amd.com/gpu: "$_gpus"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", amd.com/gpu: "$_gpus"}
EOF
    done
    kc_wait 60 "kwok: nodes Ready" kubectl wait --for=condition=Ready node --all --timeout=2s ||
        { fail kube-kwok "$(tail -n 5 "$KC/kwok.log")"; exit 1; }
    # the serviceaccount controller makes "default" in each namespace; pods need it
    kc_wait 60 "ServiceAccount default/default" kubectl get serviceaccount default -n default ||
        { fail kube-serviceaccounts "$(tail -n 5 "$KC/controller-manager.log")"; exit 1; }

    KSM_PORT=$(free_port)
    _ksmt=$(free_port)
    kc_bg kube-state-metrics "$KSM_BIN" --kubeconfig="$KC/admin.kubeconfig" --host=127.0.0.1 \
        --port="$KSM_PORT" --telemetry-host=127.0.0.1 --telemetry-port="$_ksmt" \
        --resources=pods,nodes,deployments,jobs,namespaces
    kc_wait 60 "kube-state-metrics: amd_com_gpu of the nodes" sh -c \
        "curl -sf http://127.0.0.1:$KSM_PORT/metrics | grep -q 'kube_node_status_allocatable{.*resource=\"amd_com_gpu\"'" ||
        { fail kube-state-metrics "$(tail -n 5 "$KC/kube-state-metrics.log")"; exit 1; }
    pass kube-cluster-started
    kube_versions
}

# kube_sa_token NS SA [SECONDS]: a TokenRequest token, as the kubelet would project it.
kube_sa_token() {
    kubectl create token "$2" -n "$1" --duration="${3:-3600}s"
}

# --- the shipped manifests' enforcer, for the suites that apply them -------------------------
# The ServiceAccount deploy/kubernetes runs the enforcer as, as RBAC names it.
KUBE_ENFORCER_SA=system:serviceaccount:gpureclaim:gpureclaim-enforcer
kube_enforcer_can() { [ "$(kubectl auth can-i "$@" --as="$KUBE_ENFORCER_SA" 2>/dev/null)" = yes ]; }
kube_enforcer_cannot() { [ "$(kubectl auth can-i "$@" --as="$KUBE_ENFORCER_SA" 2>/dev/null)" = no ]; }

# kube_operator_crds: the CRDs of the two Prometheus Operator kinds deploy/kubernetes uses
# (ServiceMonitor, PrometheusRule), from the operator's module at PO_VERSION (build.sh), applied
# and Established (checks operator-crds-applied, operator-crds-established).
kube_operator_crds() {
    _po=$(cd "$TMP" && GOTOOLCHAIN=local go mod download -json \
        "github.com/prometheus-operator/prometheus-operator@$PO_VERSION" |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
    _crds=$_po/example/prometheus-operator-crd
    echo "prometheus-operator CRDs: github.com/prometheus-operator/prometheus-operator@$PO_VERSION"
    check operator-crds-applied into "$TMP/crds.out" kubectl apply --server-side \
        -f "$_crds/monitoring.coreos.com_servicemonitors.yaml" \
        -f "$_crds/monitoring.coreos.com_prometheusrules.yaml"
    check operator-crds-established kubectl wait --for=condition=Established --timeout=30s \
        crd/servicemonitors.monitoring.coreos.com crd/prometheusrules.monitoring.coreos.com
}

# kube_role_without_eviction ALL_YAML: the shipped ClusterRole of ALL_YAML (`kubectl kustomize
# deploy/kubernetes`) applied without its rule of pods/eviction's create, and RBAC answering
# so (checks role-verb-removed, rbac-sees-removal). kube_role_restored: the shipped manifests
# applied again and the verb granted again (check role-restored).
kube_role_without_eviction() {
    python3 - "$1" >"$TMP/role-noevict.yaml" <<'PY'
import sys
for d in open(sys.argv[1]).read().split("\n---\n"):
    if "\nkind: ClusterRole\n" in "\n" + d + "\n":
        cut = '- apiGroups:\n  - ""\n  resources:\n  - pods/eviction\n  verbs:\n  - create\n'
        assert cut in d, "the shipped ClusterRole has no pods/eviction rule of its own"
        print(d.replace(cut, ""))
PY
    check role-verb-removed into "$TMP/role.out" kubectl apply -f "$TMP/role-noevict.yaml"
    check rbac-sees-removal wait_for 60 kube_enforcer_cannot create pods --subresource=eviction -n serve
}
kube_role_restored() {
    kubectl apply -k "$TOP/deploy/kubernetes" >"$TMP/apply2.out" 2>&1
    check role-restored wait_for 60 kube_enforcer_can create pods --subresource=eviction -n serve
}

# --- reading live objects back ---------------------------------------------------------------
# kube_jp KIND/NAME NS JSONPATH: one field of a live object
kube_jp() { kubectl get "$1" -n "$2" -o "jsonpath=$3" 2>/dev/null; }
# kube_npods NS SELECTOR, kube_nrunning NS SELECTOR: how many pods, how many of them Running
kube_npods() { kubectl get pods -n "$1" -l "$2" --no-headers 2>/dev/null | wc -l | tr -d ' '; }
kube_nrunning() {
    kubectl get pods -n "$1" -l "$2" --field-selector=status.phase=Running --no-headers 2>/dev/null |
        wc -l | tr -d ' '
}
# kube_notice KIND/NAME NS: the object's reclaim-notice annotation (the enforcer's record)
kube_notice() { kube_jp "$1" "$2" '{.metadata.annotations.gpureclaim\.io/reclaim-notice}'; }
# kube_events NS KIND NAME REASON: how many Events of that reason about the object
kube_events() {
    kubectl get events -n "$1" -o json | python3 -c '
import json, sys
kind, name, reason = sys.argv[1:4]
print(sum(1 for e in json.load(sys.stdin)["items"]
          if e["involvedObject"]["kind"] == kind and e["involvedObject"]["name"] == name
          and e["reason"] == reason))' "$2" "$3" "$4"
}

kube_versions() {
    _v=$(kc_https "$KUBE_URL/version" | sed -n 's/.*"gitVersion": "\(.*\)".*/\1/p')
    echo "kube-apiserver $_v (/version)"
    for _b in kube-controller-manager kube-scheduler; do
        echo "$_b $("$KUBE_BIN/$_b" --version 2>&1 | sed 's/^Kubernetes //')"
    done
    echo "kubectl $("$KUBE_BIN/kubectl" version --client -o json | sed -n 's/.*"gitVersion": "\(.*\)".*/\1/p')"
    echo "etcd $("$ETCD_BIN" --version | sed -n 's/^etcd Version: //p')"
    echo "kwok $("$KWOK_BIN" --version 2>&1 | sed -n 's/^kwok version \([^ ]*\).*/\1/p')"
    echo "kube-state-metrics v$("$KSM_BIN" version 2>&1 | sed -n 's/.*, version \([^ ]*\) .*/\1/p')"
}
