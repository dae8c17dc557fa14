#!/bin/sh
# End to end: the enforcer stops idle containers through a real Podman API service.
#
# Six busybox containers run `sleep 100000` under a private podman (tests/podman.sh), labelled
# gpureclaim.io/workload=<name>; exempt-f also carries gpureclaim.io/exempt=true. Prometheus
# holds backfilled history at a fixed epoch (data/runtime/gen_history.py): idle-a, idle-b,
# idle-c and exempt-f idle, busy-d busy, bursty-e idle but for one burst. One `run --once
# --at T --no-dry-run` must stop exactly idle-a, idle-b and idle-c (exited, 137), leave the
# others running, write one audit "action" line per stopped container and one "skipped"
# line for exempt-f; a second run must not act again (the ledger). A dry run beforehand
# must not stop anything. The history ends 30 minutes in the future (AT), so that the
# containers, created now, are older than the idle window they are judged on: a container
# created after its window started is kept as too_young. That is tested too: idle-a is
# removed and created again under its name (the same series), kept as too_young while its
# own 15 idle minutes are incomplete, stopped once they are.
#
# Then the same six containers, history and rules against dockerd on a private socket
# (tests/dockerd.sh), with its own state and audit files: one acting run must stop exactly
# idle-a/b/c and leave the others running. Podman is stopped first so that the two daemons
# never run at once on this 2-core machine. Without dockerd installed that part prints a
# SKIP note; when dockerd is installed but cannot run in this sandbox (a kernel or privilege
# limit found in its log) it prints a SKIP note with the reason, any other failure to start
# is a FAIL.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/podman.sh"
. "$TOP/tests/dockerd.sh"

DATA=$TOP/tests/e2e/data/runtime
ENF=$BIN/gpureclaim-enforcer
# Evaluation time: 30 minutes ahead (see above), on the 15 s grid of the history.
AT=$(( $(date +%s) / 15 * 15 + 1800 ))

require python3 curl promtool prometheus "$ENF"
if ! podman_start "$TMP/podman"; then
    fail podman-start "$PODMAN_ERR"
    exit 1
fi
BG_PIDS="$BG_PIDS $PODMAN_PID"
CLEANUP_HOOK='podman_stop; dockerd_stop'
pass podman-start
SOCK=$PODMAN_SOCK
IMAGE=$PODMAN_IMAGE
STATE=$TMP/state.json
AUDIT=$TMP/audit.jsonl

api() { # METHOD PATH [BODY]: prints the HTTP status, body in $TMP/api.out
    curl -s -o "$TMP/api.out" -w '%{http_code}' --unix-socket "$SOCK" -X "$1" \
        -H 'Content-Type: application/json' ${3:+-d "$3"} "http://d/v1.41$2"
}

NAMES="idle-a idle-b idle-c busy-d bursty-e exempt-f"
create_containers() { # PREFIX: the six labelled containers on $SOCK, running
    ok=true
    for n in $NAMES; do
        labels="\"gpureclaim.io/workload\":\"$n\""
        [ "$n" = exempt-f ] && labels="$labels,\"gpureclaim.io/exempt\":\"true\""
        st=$(api POST "/containers/create?name=$n" \
            "{\"Image\":\"$IMAGE\",\"Cmd\":[\"sleep\",\"100000\"],\"Labels\":{$labels},\"HostConfig\":{\"NetworkMode\":\"none\"}}")
        [ "$st" = 201 ] || { ok=false; echo "create $n: $st $(cat "$TMP/api.out")" >&2; }
        st=$(api POST "/containers/$n/start")
        [ "$st" = 204 ] || { ok=false; echo "start $n: $st $(cat "$TMP/api.out")" >&2; }
    done
    if $ok; then pass "${1}containers-created"; else fail "${1}containers-created"; return 1; fi
}
create_containers "" || exit 1

# state NAME: "running" or "exited/<code>"
state() {
    api GET "/containers/$1/json" >/dev/null
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["State"]
print("running" if s["Running"] else "%s/%d" % (s["Status"], s["ExitCode"]))' "$TMP/api.out"
}

python3 "$DATA/gen_history.py" $AT "$TMP/history.om" 1200
prometheus_on_history "$TMP/history.om"
case $? in
1) fail backfill "$(tail -n 3 "$TMP/promtool.log")"; exit 1 ;;
2) fail prometheus-start "$(tail -n 3 "$TMP/prometheus.log")"; exit 1 ;;
esac
pass backfill

run_once() { # LOG [FLAGS...]
    _log=$1; shift
    "$ENF" run --once --rules.file="$DATA/rules.yaml" --prometheus.url="$PROM_URL" \
        --at=$AT --runtime.socket="$SOCK" --runtime.stop-timeout=1s \
        --state.file="$STATE" --audit.file="$AUDIT" \
        --enforce.protected-namespaces=kube-system "$@" >"$_log" 2>&1
}

# --- dry run (the default): nothing stopped, one dry_run line per idle container ------------
check dry-run-exit-0 run_once "$TMP/dry.log"
all_running=true
for n in $NAMES; do [ "$(state "$n")" = running ] || all_running=false; done
check dry-run-stops-nothing $all_running
check dry-run-audited test "$(grep -c '"event":"dry_run"' "$AUDIT")" = 3
rm -f "$AUDIT" "$STATE"

# --- out of scope: --runtime.scope-label that no container carries stops nothing ------------
check scoped-exit-0 run_once "$TMP/scoped.log" --no-dry-run \
    --runtime.scope-label=gpureclaim.io/workload=nobody
all_running=true
for n in $NAMES; do [ "$(state "$n")" = running ] || all_running=false; done
check scoped-stops-nothing $all_running
check scoped-audited test "$(grep -c '"result":"out_of_scope"' "$AUDIT")" = 4
rm -f "$AUDIT" "$STATE"

# --- acting run --------------------------------------------------------------------------------
count() { python3 - "$AUDIT" "$@" <<'PY'
import json, sys
path, event, result = sys.argv[1], sys.argv[2], sys.argv[3]
n = 0
for line in open(path):
    o = json.loads(line)
    if o["event"] == event and o["result"] == result:
        n += 1
print(n)
PY
}
acting_run() { # PREFIX: one acting run on $SOCK, exactly idle-a/b/c stopped and audited
    check "${1}run-exit-0" run_once "$TMP/${1}run1.log" --no-dry-run \
        --runtime.scope-label=gpureclaim.io/workload
    for n in idle-a idle-b idle-c; do
        check "${1}stopped-$n" test "$(state $n)" = exited/137
    done
    for n in busy-d bursty-e exempt-f; do
        check "${1}running-$n" test "$(state $n)" = running
    done
    check "${1}audit-one-action-each" test "$(count action ok)" = 3
    for n in idle-a idle-b idle-c; do
        check "${1}audit-action-$n" test "$(grep '"event":"action"' "$AUDIT" |
            grep -c "\"container_name\":\"$n\"")" = 1
    done
    check "${1}audit-exempt-skipped" test "$(count skipped exempt)" = 1
    check "${1}audit-no-other-actions" test "$(grep -c '"event":"action"' "$AUDIT")" = 3
    check "${1}audit-fields" python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    for k in ("time", "event", "rule", "workload", "owner_chain", "action", "result"):
        assert k in o, (k, line)
    if o["event"] == "action":
        assert o["api_status"] == 204 and o["owner_chain"][0]["kind"] == "Container", line
        assert o["window"]["samples"] > 0 and o["threshold_percent"] == 10, line
' "$AUDIT"
}
acting_run ""

# --- a second run: the ledger says done, nothing new ------------------------------------------
lines_before=$(wc -l <"$AUDIT")
check run2-exit-0 run_once "$TMP/run2.log" --no-dry-run
check run2-no-new-action test "$(grep -c '"event":"action"' "$AUDIT")" = 3
check run2-no-new-lines test "$(wc -l <"$AUDIT")" -le $((lines_before + 1))
for n in busy-d bursty-e exempt-f; do
    check "run2-running-$n" test "$(state $n)" = running
done

# --- a corrupt state file refuses to act ----------------------------------------------------------
echo '{"version":1,"entries":[' >"$STATE"
if run_once "$TMP/run3.log" --no-dry-run; then fail corrupt-state-refused; else
    check corrupt-state-refused grep -q "is corrupt" "$TMP/run3.log"
fi
check corrupt-state-nothing-stopped test "$(state busy-d)" = running

# --- a container re-created under its name does not inherit the old one's idle time ---------
# idle-a (stopped above) is removed and created again: same name, so the same series, but a
# new id and Created time. With a fresh state file (nothing remembers the old idle-a) a run
# whose idle window starts before that Created keeps it as too_young; once its own window is
# complete it is stopped.
api DELETE "/containers/idle-a?force=1" >/dev/null
st=$(api POST "/containers/create?name=idle-a" \
    "{\"Image\":\"$IMAGE\",\"Cmd\":[\"sleep\",\"100000\"],\"Labels\":{\"gpureclaim.io/workload\":\"idle-a\"},\"HostConfig\":{\"NetworkMode\":\"none\"}}")
check recreated-created test "$st" = 201
check recreated-started test "$(api POST /containers/idle-a/start)" = 204
api GET /containers/idle-a/json >/dev/null
CREATED=$(python3 -c '
import datetime, json, re, sys
c = json.load(open(sys.argv[1]))["Created"]
m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$", c)
tz = "+00:00" if m.group(3) == "Z" else m.group(3)
print(int(datetime.datetime.strptime(m.group(1) + tz, "%Y-%m-%dT%H:%M:%S%z").timestamp()))
' "$TMP/api.out")
AT_ALL=$AT STATE_ALL=$STATE AUDIT_ALL=$AUDIT
STATE=$TMP/young-state.json
AUDIT=$TMP/young-audit.jsonl
AT=$(( CREATED / 15 * 15 + 600 )) # window start 5 minutes before the creation
check young-exit-0 run_once "$TMP/young.log" --no-dry-run \
    --runtime.scope-label=gpureclaim.io/workload=idle-a
check young-still-running test "$(state idle-a)" = running
check young-audit-too-young test "$(count skipped too_young)" = 1
check young-audit-message grep -q '"result":"too_young".*Container idle-a was created at' "$AUDIT"
check young-no-action test "$(grep -c '"event":"action"' "$AUDIT")" = 0
AT=$(( CREATED / 15 * 15 + 960 )) # window start a minute after the creation
check grown-exit-0 run_once "$TMP/grown.log" --no-dry-run \
    --runtime.scope-label=gpureclaim.io/workload=idle-a
check grown-stopped test "$(state idle-a)" = exited/137
check grown-audit-action test "$(count action ok)" = 1
AT=$AT_ALL STATE=$STATE_ALL AUDIT=$AUDIT_ALL

# --- dockerd on a private socket ------------------------------------------------------------------
if ! command -v dockerd >/dev/null 2>&1; then
    echo "SKIP: $SUITE/dockerd (dockerd is not installed; run 'make deps')"
    finish
    exit
fi
# Podman is done: stop it now (and forget it, so that the EXIT trap does not signal its
# old PID again) before the second daemon starts.
BG_PIDS=$(echo " $BG_PIDS " | sed "s/ $PODMAN_PID / /")
podman_stop
PODMAN_DIR=
if ! dockerd_start "$TMP/dockerd"; then
    if [ -n "$DOCKERD_SANDBOX" ]; then
        echo "SKIP: $SUITE/dockerd (the daemon cannot run in this sandbox: $DOCKERD_ERR)"
    else
        fail dockerd-start "$DOCKERD_ERR"
    fi
    finish
    exit
fi
pass dockerd-start
SOCK=$DOCKERD_SOCK
IMAGE=$DOCKERD_IMAGE
STATE=$TMP/docker-state.json
AUDIT=$TMP/docker-audit.jsonl
create_containers dockerd- || exit 1
acting_run dockerd-
finish
