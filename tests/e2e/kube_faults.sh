#!/bin/sh
# End to end: faults of a real Kubernetes (tests/kube/cluster.sh), each made to happen at a
# known point rather than by timing luck, and what the enforcer does through them:
#   D  one enforcer daemon (the ServiceAccount's token read from a projected-token-like file,
#      its cycles let through one at a time by --at.before-cycle, data/kube_faults/gate.sh)
#      with two idle Deployments whose notices are open:
#        token: the file holds a token that has expired on the server (401): kept, said why;
#               the file is then rotated (as the kubelet does: a symlink swapped) and the next
#               cycle uses the new token, without a restart;
#        etcd:  etcd stopped for a cycle that would act: kept, said why (log, audit, metrics);
#        crash: the API server SIGKILLed while it holds the enforcer's /scale (the test's
#               admission webhook, data/kube_faults/writer.py, kills it before the write is
#               stored), then started again on the same port and etcd data: both kept;
#      then each Deployment is scaled to 0 once, its notice the one posted before the faults
#      (one notice Event, one action, one IdleGPUReclaimed Event, the record's replicasBefore
#      right) and `restore` brings it back;
#   C  two writers: another writer (the webhook, as the admin) changes the Deployment between
#      the enforcer's read and its write, so the real server answers 409: an annotation
#      changed, the enforcer reads again, verifies again and acts once, keeping the other
#      writer's annotation; the spec changed, it keeps the workload and says why;
#   K  a CronJob's run: the Job the real CronJob controller created is suspended (not the
#      CronJob, a schedule that never restores a run), the Job controller deletes its pod, the
#      schedule starts no other run, and `restore` resumes the Job.
# Activity comes from canned answers (data/kube_real/gen_prom.py), and the enforcer's clock
# (--at) is 20 minutes ahead of the cluster's, as in kube_real.sh.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/kube/cluster.sh"

DATA=$TOP/tests/e2e/data/kube_faults
ENF=$BIN/gpureclaim-enforcer
PROM_FAKE=$(fake_bin fake_prom)
require python3 curl openssl go "$ENF" "$PROM_FAKE"

T0=$(date +%s)
kube_cluster_start 8 1

not() { ! "$@"; }
is_n() { [ "$("$@")" = "$N" ]; }
audit_n() { # FILE EVENT RESULT POD_PREFIX: how many audit lines match
    python3 - "$@" <<'PY'
import json, sys
path, event, result, pod = sys.argv[1:5]
n = 0
for line in open(path):
    o = json.loads(line)
    if o["event"] == event and o.get("result") == result and \
            o["workload"].get("pod", "").startswith(pod):
        n += 1
print(n)
PY
}
record_before() { # KIND/NAME NS: the record's replicasBefore
    python3 -c '
import json, sys
print(json.loads(sys.argv[1])["acted"].get("replicasBefore"))' "$(kube_notice "$1" "$2")" 2>/dev/null
}

# --- setup: the shipped RBAC, the workloads, the webhook -----------------------------------------
kubectl apply -f "$TOP/deploy/kubernetes/namespace.yaml" >"$TMP/ns.out" 2>&1 &&
    kubectl kustomize "$TOP/deploy/kubernetes/enforcer" | python3 -c '
import sys
docs = sys.stdin.read().split("\n---\n")
print("\n---\n".join(d for d in docs if "\nkind: ServiceMonitor\n" not in "\n" + d + "\n"))' |
    kubectl apply -f - >"$TMP/rbac.out" 2>&1 || { fail shipped-rbac "$(cat "$TMP/rbac.out")"; exit 1; }
pass shipped-rbac-applied
# the CronJob first: its controller starts a run at the next minute, while the rest is set up
kubectl apply -f "$DATA/workloads.yaml" >"$TMP/w.out" 2>&1 || { fail workloads "$(cat "$TMP/w.out")"; exit 1; }
pass workloads-applied

mkdir -p "$TMP/arm"
kc_cert webhook "/CN=gpureclaim-test-writer" "IP:127.0.0.1" || { fail webhook-cert; exit 1; }
WPORT=$(free_port)
start_bg "$TMP/writer.out" python3 "$DATA/writer.py" "$WPORT" "$KC/webhook.crt" "$KC/webhook.key" \
    "$TMP/arm" "$TMP/writer.log" "$KUBE_URL" "$KC"
WRITER_PID=$LAST_PID
listening "$TMP/writer.out" "$WRITER_PID" >/dev/null || { fail webhook-start "$(cat "$TMP/writer.out")"; exit 1; }
: >"$TMP/writer.log"
cat >"$TMP/webhook.yaml" <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: gpureclaim-test-writer}
webhooks:
- name: writer.gpureclaim-test.io
  clientConfig:
    url: https://127.0.0.1:$WPORT/
    caBundle: $(base64 -w0 "$KC/ca.crt")
  rules:
  - apiGroups: [apps]
    apiVersions: [v1]
    operations: [UPDATE]
    resources: [deployments, deployments/scale]
  namespaceSelector: {matchLabels: {gpureclaim-test/writer: "on"}}
  matchConditions:
  - name: the-enforcer
    expression: request.userInfo.username == '$KUBE_ENFORCER_SA'
  failurePolicy: Fail
  sideEffects: NoneOnDryRun
  timeoutSeconds: 15
  admissionReviewVersions: [v1]
EOF
check webhook-configured into "$TMP/webhook.out" kubectl apply -f "$TMP/webhook.yaml" ||
    cat "$TMP/webhook.out" >&2

N=1
for a in fault/web fault/also conflict/two conflict/three; do
    check "running-${a#*/}" wait_for 60 is_n kube_nrunning "${a%/*}" "app=${a#*/}"
done
echo "setup: $(($(date +%s) - T0)) s"

NOW=$(date +%s)
END=$((NOW + 1200))
pods_of() { kubectl get pods -n "$1" -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}'; }
# fake_prom PREFIX NAMESPACE...: canned activity of those namespaces' pods (idle), in PURL
fake_prom() {
    _fp=$1; shift
    for _ns in "$@"; do pods_of "$_ns"; done >"$TMP/${_fp}pods.txt"
    python3 "$TOP/tests/e2e/data/kube_real/gen_prom.py" "$TMP" "$_fp" "$END" $(cat "$TMP/${_fp}pods.txt")
    start_fake_http "$TMP/${_fp}prom.out" "$PROM_FAKE" 0 ok "$TMP/${_fp}range.json" "$TMP/${_fp}instant.json" ||
        { fail "${_fp}prom-start" "$(cat "$TMP/${_fp}prom.out")"; exit 1; }
    PURL=$FAKE_URL
}
fake_prom d- fault
kube_sa_token gpureclaim gpureclaim-enforcer 3600 >"$TMP/sa.token" || { fail sa-token; exit 1; }
# the daemon's timeout is short (2 s: the reads of the etcd outage time out quickly); the
# `run --once` parts wait longer (10 s), well past the webhook's other write
KFLAGS="--kube.api-url=$KUBE_URL --kube.ca-file=$KUBE_CA"

# --- D: one daemon through a token that expires, etcd stopped and the API server crashing --------
# The token file as the kubelet projects it (AtomicWriter): TD/token -> ..data/token, ..data a
# symlink to a timestamped directory, replaced by a rename so a reader sees one token or the
# other, never half of one.
TD=$TMP/projected
mkdir -p "$TD"
NTOK=0
project_token() { # FILE: the token in FILE becomes the projected one
    NTOK=$((NTOK + 1))
    mkdir "$TD/..tok$NTOK" && cp "$1" "$TD/..tok$NTOK/token" &&
        ln -s "..tok$NTOK" "$TD/..data_tmp" && mv -T "$TD/..data_tmp" "$TD/..data"
}
project_token "$TMP/sa.token"
ln -s ..data/token "$TD/token"

G=$TMP/gate
mkdir -p "$G"
CLEANUP_HOOK="touch '$G/stop'; $CLEANUP_HOOK"
DAUDIT=$TMP/daemon.audit
DPORT=$(free_port)
# shellcheck disable=SC2086
start_bg "$TMP/daemon.log" "$ENF" run --rules.file="$DATA/rules-daemon.yaml" --prometheus.url="$PURL" \
    --at="$END" --at.step=60s --enforce.interval=100ms --no-dry-run $KFLAGS --kube.timeout=2s \
    --kube.token-file="$TD/token" --state.file="$TMP/daemon.state" --audit.file="$DAUDIT" \
    --enforce.max-actions-per-hour=0 --log.level=debug --web.listen-address="127.0.0.1:$DPORT" \
    --at.before-cycle="sh '$DATA/gate.sh' '$G'"
DAEMON_PID=$LAST_PID
waiting_is() { [ "$(cut -d' ' -f1 "$G/waiting" 2>/dev/null)" = "$1" ]; }
# cycle N: let the daemon's cycle N (0, 1, ...) run, and wait until it has ended (the next one
# is waiting at the gate); its log lines from that cycle in $TMP/cycle-N.log
cycle() {
    wait_for 60 waiting_is "$1" || { echo "cycle $1 never reached the gate" >&2; return 1; }
    _cl=$(wc -l <"$TMP/daemon.log")
    touch "$G/go"
    wait_for 120 waiting_is $(($1 + 1)) || { echo "cycle $1 did not end" >&2; return 1; }
    tail -n +$((_cl + 1)) "$TMP/daemon.log" >"$TMP/cycle-$1.log"
}
metric() { curl -s -m 10 "http://127.0.0.1:$DPORT/metrics" | awk -v s="$1" '$1 == s { print $2 }'; }
dlines() { audit_n "$DAUDIT" "$@"; }

check D0-notice-cycle cycle 0
check D0-notice-web [ -n "$(kube_notice deploy/web fault)" ]
check D0-notice-also [ -n "$(kube_notice deploy/also fault)" ]
NOTICE_WEB=$(kube_notice deploy/web fault)

# token: a token of the ServiceAccount that expires in 15 s, projected; the server takes it,
# then refuses it once it has expired
python3 "$DATA/mint_token.py" "$TMP/sa.token" "$KC/sa.key" 15 >"$TMP/short.token"
MINTED=$(date +%s)
with_token() { curl -s -o /dev/null -w '%{http_code}' --cacert "$KUBE_CA" -H "Authorization: Bearer $(cat "$1")" \
    "$KUBE_URL/apis/apps/v1/namespaces/fault/deployments/web"; }
check D1-short-token-taken [ "$(with_token "$TMP/short.token")" = 200 ]
project_token "$TMP/short.token"
token_refused() { [ "$(with_token "$1")" = 401 ]; }
check D1-short-token-expired wait_for 90 token_refused "$TMP/short.token"
echo "the minted token was refused $(($(date +%s) - MINTED)) s after it was minted (valid 15 s, and the server's leeway and token cache)"
check D1-server-says-expired grep -q 'service account token has expired' "$KC/apiserver.log"
check D1-expired-cycle cycle 1
check D1-reread-after-401 grep -q 'answered 401 to .*re-reading the token' "$TMP/cycle-1.log"
N=1; check D1-web-kept is_n kube_jp deploy/web fault '{.spec.replicas}'
skip_msgs() { # the messages of the daemon's `skipped` `error` lines, one a line
    python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["event"] == "skipped" and o.get("result") == "error":
        print(o["workload"].get("pod", ""), o.get("message", ""))' "$DAUDIT"
}
SKIP_ERR='gpureclaim_enforcer_skipped_total{rule="scale",reason="error"}'
skips_saying() { skip_msgs | grep -c "$1"; }
N=2; check D1-audit-says-401 is_n skips_saying 'HTTP 401 Unauthorized'
N=2; check D1-metric-says-error is_n metric "$SKIP_ERR"

# rotated: a new TokenRequest token projected over the expired one; no restart
kube_sa_token gpureclaim gpureclaim-enforcer 3600 >"$TMP/sa2.token" || fail D2-new-token
project_token "$TMP/sa2.token"

# etcd: stopped for a cycle that would act (the notice period is over)
kube_etcd_stop
check D2-etcd-stopped not curl -sf -m 2 "http://127.0.0.1:$KC_ETCD_PORT/health"
check D2-etcd-cycle cycle 2
check D2-daemon-alive kill -0 "$DAEMON_PID"
# the rotated token was read (no restart): no 401 any more, only etcd's timeouts
check D2-new-token-used not grep -q 'HTTP 401' "$TMP/cycle-2.log"
check D2-log-says-why grep -q "cannot resolve .*fault.*timeout after 2.0 s" "$TMP/cycle-2.log"
N=2; check D2-audit-says-timeout is_n skips_saying 'timeout after 2.0 s'
N=4; check D2-metric-counts-it is_n metric "$SKIP_ERR"
check D2-etcd-restarted kube_etcd_start || tail -n 5 "$KC/etcd.log" >&2
check D2-apiserver-ready-again kc_wait 60 "kube-apiserver /readyz after etcd" kc_https "$KUBE_URL/readyz"
N=1; check D2-web-kept is_n kube_jp deploy/web fault '{.spec.replicas}'
N=1; check D2-also-kept is_n kube_jp deploy/also fault '{.spec.replicas}'
N=0; check D2-nothing-acted is_n dlines action ok ""

# crash: the API server SIGKILLed while it holds the enforcer's first /scale
echo "kill $KC_PID_apiserver" >"$TMP/arm/fault.web.scale"
echo "kill $KC_PID_apiserver" >"$TMP/arm/fault.also.scale"
check D3-crash-cycle cycle 3
check D3-webhook-killed grep -q ' scale .* kill ' "$TMP/writer.log"
kube_apiserver_reap
check D3-apiserver-gone not kc_https -m 2 "$KUBE_URL/readyz"
check D3-apiserver-restarted kube_apiserver_start || tail -n 5 "$KC/apiserver.log" >&2
N=1; check D3-web-kept is_n kube_jp deploy/web fault '{.spec.replicas}'
N=1; check D3-also-kept is_n kube_jp deploy/also fault '{.spec.replicas}'
N=0; check D3-nothing-acted is_n dlines action ok ""
# the first /scale died with the server (the action failed, retried next cycle); the other
# workload's read found no server
N=1; check D3-audit-action-error is_n dlines action error ""
N=1; check D3-audit-no-server is_n skips_saying 'Connection re[fs][ue]'
check D3-notice-survived [ "$(kube_notice deploy/web fault)" = "$NOTICE_WEB" ] ||
    kube_notice deploy/web fault >&2

check D4-act-cycle cycle 4
N=0; check D4-web-scaled is_n kube_jp deploy/web fault '{.spec.replicas}'
N=0; check D4-also-scaled is_n kube_jp deploy/also fault '{.spec.replicas}'
N=0; check D4-web-pod-gone wait_for 60 is_n kube_npods fault app=web
check D5-quiet-cycle cycle 5
touch "$G/stop"
stop_pid "$DAEMON_PID"
for d in web also; do
    N=1; check "D-$d-one-action" is_n dlines action ok "$d-"
    N=1; check "D-$d-one-notice" is_n dlines notice ok "$d-"
    N=1; check "D-$d-one-notice-event" is_n kube_events fault Deployment "$d" IdleGPUReclaimNotice
    N=1; check "D-$d-one-reclaimed-event" is_n kube_events fault Deployment "$d" IdleGPUReclaimed
    N=1; check "D-$d-record" is_n record_before "deploy/$d" fault
done
restore() { # LOG TOKEN_FILE TARGET: gpureclaim-enforcer restore with the ServiceAccount's token
    # shellcheck disable=SC2086
    "$ENF" restore $KFLAGS --kube.token-file="$2" --audit.file="$TMP/restore.audit" "$3" >"$TMP/$1" 2>&1 ||
        { _rc=$?; sed "s/^/$1: /" "$TMP/$1" >&2; return $_rc; }
}
check D-restore-web restore restore-web.out "$TD/token" fault/deployment/web
N=1; check D-web-back wait_for 60 is_n kube_nrunning fault app=web

echo "D: $(($(date +%s) - T0)) s"

# --- C and K: two writers; a CronJob's run ---------------------------------------------------------
# the CronJob controller's run, at the first minute after the workloads were applied: its Job
# (owned by the CronJob) and pod
check K-job-created wait_for 90 sh -c "kubectl get jobs -n cron --no-headers | grep -q ."
CRON_JOB=$(kubectl get jobs -n cron -o jsonpath='{.items[0].metadata.name}')
check K-job-owned-by-cronjob [ "$(kube_jp "job/$CRON_JOB" cron '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}')" = CronJob/nightly/true ]
N=1; check K-pod-running wait_for 60 is_n kube_nrunning cron app=nightly
stop_pid "$FAKE_PID"
fake_prom ck- conflict cron
AUDIT=$TMP/audit.jsonl
enf() { # LOG AT: one `run --once`, acting
    # shellcheck disable=SC2086
    "$ENF" run --once --no-dry-run --rules.file="$DATA/rules.yaml" --prometheus.url="$PURL" \
        --at="$2" --state.file="$TMP/state.json" --audit.file="$AUDIT" $KFLAGS --kube.timeout=10s \
        --kube.token-file="$TMP/sa.token" --enforce.max-actions-per-hour=0 --log.level=debug \
        >"$TMP/$1" 2>&1
}
check CK-notices enf ck0.log "$END"
check C-notice-two [ -n "$(kube_notice deploy/two conflict)" ]
check C-notice-three [ -n "$(kube_notice deploy/three conflict)" ]
check K-notice-on-the-job [ -n "$(kube_notice "job/$CRON_JOB" cron)" ]
check K-no-notice-on-the-cronjob [ -z "$(kube_notice cronjob/nightly cron)" ]

echo annotate >"$TMP/arm/conflict.two.-"
echo spec >"$TMP/arm/conflict.three.-"
# already_active: how often the CronJob controller said "not starting job because prior
# execution is running" (its Events are aggregated: their counts summed)
already_active() {
    kubectl get events -n cron -o json | python3 -c '
import json, sys
print(sum((e.get("series") or {}).get("count") or e.get("count") or 1
          for e in json.load(sys.stdin)["items"] if e["reason"] == "JobAlreadyActive"))'
}
already_active_more() { [ "$(already_active)" -gt "$1" ]; }
check CK-actions enf ck1.log $((END + 400))
check C-other-writer-wrote grep -q '^conflict two - .* annotate status=200' "$TMP/writer.log"
# the write after the other writer's: 409 from the server, then read again and retried (the
# Deployment controller, reacting to the new annotation, may give one more 409: also retried)
check C-two-got-409 grep -q 'PATCH /apis/apps/v1/namespaces/conflict/deployments/two: HTTP 409' "$TMP/ck1.log"
check C-two-read-again grep -q 'PATCH /apis/apps/v1/namespaces/conflict/deployments/two/scale: HTTP 200' "$TMP/ck1.log"
N=0; check C-two-scaled is_n kube_jp deploy/two conflict '{.spec.replicas}'
N=1; check C-two-one-action is_n audit_n "$AUDIT" action ok two-
N=1; check C-two-one-reclaimed-event is_n kube_events conflict Deployment two IdleGPUReclaimed
check C-two-other-annotation-kept [ "$(kube_jp deploy/two conflict '{.metadata.annotations.gpureclaim-test/other-writer}')" = wrote-between ]
check C-other-writer-changed-spec grep -q '^conflict three - .* spec status=200' "$TMP/writer.log"
N=1; check C-three-kept is_n kube_jp deploy/three conflict '{.spec.replicas}'
N=0; check C-three-no-action is_n audit_n "$AUDIT" action ok three-
N=0; check C-three-no-reclaimed-event is_n kube_events conflict Deployment three IdleGPUReclaimed
check C-three-got-409 grep -q 'PATCH /apis/apps/v1/namespaces/conflict/deployments/three: HTTP 409' "$TMP/ck1.log"
check C-three-said-why grep -q "Deployment conflict/three: kept: .*its spec is not the one the decision was made on" "$TMP/ck1.log"

# k_why: what the K checks depend on, printed once after the first of them fails (a CI run
# failed three of them once, beside two other clusters and a cold Go build, with nothing to
# tell whether the controller-manager still ran; the waits for the controllers allow twice
# what an idle machine needs)
K_WHY=""
k_why() {
    [ -z "$K_WHY" ] || return 0
    K_WHY=said
    if kill -0 "$KC_PID_controller_manager" 2>/dev/null; then echo "k-why: kube-controller-manager running"
    else echo "k-why: kube-controller-manager not running"; fi
    kubectl get cronjob/nightly -n cron -o jsonpath='k-why: cronjob status {.status}{"\n"}' 2>&1
    kubectl get jobs -n cron -o jsonpath='{range .items[*]}k-why: job {.metadata.name} suspend={.spec.suspend} status {.status}{"\n"}{end}' 2>&1
    kubectl get pods -n cron --no-headers 2>&1 | sed 's/^/k-why: pod /'
    echo "k-why: JobAlreadyActive $(already_active 2>&1) (before the action: $ACTIVE_BEFORE)"
    kubectl get events -n cron --sort-by=.lastTimestamp --no-headers 2>&1 | tail -n 15 | sed 's/^/k-why: event /'
    grep -E 'cronjob|job_controller' "$KC/controller-manager.log" | tail -n 10 | sed 's/^/k-why: kcm /'
}
check K-job-suspended [ "$(kube_jp "job/$CRON_JOB" cron '{.spec.suspend}')" = true ] || k_why
ACTIVE_BEFORE=$(already_active)
N=0; check K-pod-deleted wait_for 60 is_n kube_npods cron app=nightly || k_why
check K-cronjob-not-suspended [ "$(kube_jp cronjob/nightly cron '{.spec.suspend}')" != true ] || k_why
run_active() { [ "$(kube_jp cronjob/nightly cron '{.status.active[0].name}')" = "$CRON_JOB" ]; }
check K-cronjob-run-still-active wait_for 30 run_active || k_why
N=1; check K-one-job is_n sh -c "kubectl get jobs -n cron --no-headers | wc -l | tr -d ' '" || k_why
N=1; check K-reclaimed-event is_n kube_events cron Job "$CRON_JOB" IdleGPUReclaimed
# the schedule came round with its run suspended: the CronJob controller starts no other run
# (concurrencyPolicy Forbid: kubernetes pkg/controller/cronjob/cronjob_controllerv2.go, the
# JobAlreadyActive Event, v1.36.3)
check K-schedule-came-round wait_for 150 already_active_more "$ACTIVE_BEFORE" || k_why
N=1; check K-still-one-job is_n sh -c "kubectl get jobs -n cron --no-headers | wc -l | tr -d ' '" || k_why
check K-restore restore restore-job.out "$TMP/sa.token" "cron/job/$CRON_JOB"
check K-resumed [ "$(kube_jp "job/$CRON_JOB" cron '{.spec.suspend}')" = false ]
N=1; check K-pod-back wait_for 120 is_n kube_nrunning cron app=nightly || k_why

echo "suite: $(($(date +%s) - T0)) s"
kube_versions >"$TMP/versions.txt"
finish
