# Shared helpers for the shell end-to-end tests (sourced, not run).
#
# Tests bind only to 127.0.0.1 on ports they pick free, and stop every process they start:
# start_bg records the PID, and the EXIT trap kills exactly those PIDs (never by name).
# Each check prints "PASS: suite/name" or "FAIL: suite/name" for tests/run-suite.sh.

SUITE=${SUITE:-$(basename "$0" .sh)}
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${BIN:-$TOP/bin}
BG_PIDS=""
TEST_FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpureclaim-$SUITE.XXXXXX")

# TSDB_GEN picks the generation of time-series servers a suite runs on, by PATH, so a suite
# calls `prometheus`, `promtool` and `victoria-metrics` by name either way: `debian` (default:
# Debian 12's Prometheus 2.42 and VictoriaMetrics 1.79) or `current` (Prometheus 3.x and a
# current VictoriaMetrics, built from Go modules by tests/tsdb/build.sh into the cache outside
# the work tree). `make check` runs the decision suites on both (Makefile, TSDB_SUITES).
TSDB_GEN=${TSDB_GEN:-debian}
case $TSDB_GEN in
debian) ;;
current)
    for _tb in prometheus victoria-metrics; do
        _tp=$(sh "$TOP/tests/tsdb/build.sh" --path "$_tb")
        if [ ! -x "$_tp" ]; then
            echo "FAIL: ${SUITE}/setup (TSDB_GEN=current: no '$_tp'; run tests/tsdb/build.sh)"
            exit 1
        fi
        PATH=$(dirname "$_tp"):$PATH
    done
    export PATH
    ;;
*) echo "FAIL: ${SUITE}/setup (unknown TSDB_GEN '$TSDB_GEN': debian or current)"; exit 1 ;;
esac
# server_versions: one line naming the versions of the servers this suite runs on (on stdout,
# so each suite's log says which generation its decisions were tested against)
server_versions() {
    _pv=$(prometheus --version 2>&1 | sed -n 's/^prometheus, version \([^ ]*\).*/\1/p' | head -n 1)
    _vv=$(victoria-metrics -version 2>&1 | sed -n 's/^victoria-metrics-\([^ ]*\).*/\1/p' | head -n 1)
    # Debian's build prints an empty -version: its package says it
    [ -n "$_vv" ] || _vv=$(dpkg-query -W -f '${Version}' victoria-metrics 2>/dev/null)
    echo "servers ($TSDB_GEN): prometheus ${_pv:-none} ($(command -v prometheus)), victoria-metrics ${_vv:-none} ($(command -v victoria-metrics))"
}

pass() { echo "PASS: $SUITE/$1"; }
fail() { echo "FAIL: $SUITE/$1${2:+ ($2)}"; TEST_FAILED=$((TEST_FAILED + 1)); }

# check NAME COMMAND...: PASS if the command succeeds.
# Returns the command's status, so that `check NAME CMD || show-the-log` shows it on a failure.
check() {
    _name=$1; shift
    if "$@"; then pass "$_name"; else fail "$_name"; return 1; fi
}

# into FILE COMMAND...: the command with its output in FILE, for `check NAME into FILE CMD`
# (a redirect after check would take check's own PASS/FAIL line with it).
into() {
    _into=$1; shift
    "$@" >"$_into" 2>&1
}

# A free TCP port on 127.0.0.1, outside the kernel's ephemeral range (tests/free_port.py says why).
free_port() {
    python3 "$TOP/tests/free_port.py"
}

# start_bg LOGFILE COMMAND...: start in the background and remember the PID in $LAST_PID.
start_bg() {
    _log=$1; shift
    "$@" >"$_log" 2>&1 &
    LAST_PID=$!
    BG_PIDS="$BG_PIDS $LAST_PID"
}

# require COMMAND...: each must be on PATH or an executable path, else FAIL setup and exit 1.
# A suite that requires a time-series server names the versions it runs on (server_versions).
require() {
    for _t in "$@"; do
        command -v "$_t" >/dev/null 2>&1 && continue
        fail setup "'$_t' not found"
        exit 1
    done
    case " $* " in
    *" prometheus "* | *" promtool "* | *" victoria-metrics "*) server_versions ;;
    esac
}

# fake_bin NAME: tests/fakes/NAME as built for this run ($BUILD, build/san under sanitizers),
# else the plain build's.
fake_bin() {
    _fb=$TOP/${BUILD:-build}/fakes/$1
    [ -x "$_fb" ] || _fb=$TOP/build/fakes/$1
    echo "$_fb"
}

# listening LOG [PID]: print the port a fake wrote to LOG as "listening on PORT". Waits up to
# 60 s (a loaded machine starts a process slowly), and fails at once when PID has exited.
listening() {
    for _i in $(seq 1 1200); do
        _lp=$(sed -n 's/^listening on \([0-9][0-9]*\)$/\1/p' "$1" 2>/dev/null)
        [ -n "$_lp" ] && { echo "$_lp"; return 0; }
        [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null && return 1
        sleep 0.05
    done
    return 1
}

# start_fake_http LOG COMMAND...: start_bg a fake HTTP server (tests/fakes) and wait for its
# "listening on PORT"; sets FAKE_PID, FAKE_PORT and FAKE_URL. Fails when it did not start.
start_fake_http() {
    _fl=$1
    start_bg "$@"
    FAKE_PID=$LAST_PID
    FAKE_PORT=$(listening "$_fl" "$FAKE_PID") || return 1
    FAKE_URL=http://127.0.0.1:$FAKE_PORT
}

# start_fake_kube NAME DIR [FLAG...]: fake_kube ($KUBE_FAKE) serving the data directory DIR,
# its requests logged to $TMP/NAME.requests, with FLAGs; sets KURL, KPORT, KPID and KLOG, or
# fails NAME-start and exits.
start_fake_kube() {
    _kn=$1 _kd=$2
    shift 2
    KLOG=$TMP/$_kn.requests
    : >"$KLOG"
    start_fake_http "$TMP/$_kn.out" "$KUBE_FAKE" --data "$_kd" --log "$KLOG" "$@" ||
        { fail "$_kn-start" "$(cat "$TMP/$_kn.out")"; exit 1; }
    KURL=$FAKE_URL
    KPORT=$FAKE_PORT
    KPID=$FAKE_PID
}

# need_podres_server: node and the npm packages of tests/podres/server.js (the kubelet
# pod-resources gRPC server; npm ci on first use), else FAIL setup and exit 1.
need_podres_server() {
    if ! command -v node >/dev/null 2>&1; then
        fail setup "node not installed; run 'make deps'"
        exit 1
    fi
    if [ ! -d "$TOP/tests/podres/node_modules/@grpc/grpc-js" ]; then
        npm ci --prefix "$TOP/tests/podres" --no-audit --no-fund >"$TMP/npm.log" 2>&1 ||
            { fail setup "npm ci failed: $(tail -n 3 "$TMP/npm.log")"; exit 1; }
    fi
}

# have_kubectl: 0 when kubectl is on PATH, after installing Debian's kubernetes-client with
# apt-get when it is not and we are root (the suites that need it: deploy, readme_incidents).
have_kubectl() {
    if ! command -v kubectl >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "note: installing kubernetes-client (kubectl) with apt-get"
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends kubernetes-client \
            >"$TMP/apt.log" 2>&1 ||
            { apt-get update >>"$TMP/apt.log" 2>&1 &&
              DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
                  kubernetes-client >>"$TMP/apt.log" 2>&1; }
    fi
    command -v kubectl >/dev/null 2>&1
}

# stop_pid PID: SIGTERM, then up to 20 s for a clean exit (an enforcer releases its Lease and
# writes its state on the way out, slowly on a loaded machine), then SIGKILL.
stop_pid() {
    _pid=$1
    kill "$_pid" 2>/dev/null || return 0
    for _i in $(seq 1 200); do
        kill -0 "$_pid" 2>/dev/null || { wait "$_pid" 2>/dev/null; return 0; }
        sleep 0.1
    done
    kill -9 "$_pid" 2>/dev/null
    wait "$_pid" 2>/dev/null
    return 0
}

# CLEANUP_HOOK: commands a test adds to its clean-up (e.g. podman_stop); they run on exit and
# on a signal alike, before the background processes are stopped.
cleanup() {
    if [ -n "${CLEANUP_HOOK:-}" ]; then eval "$CLEANUP_HOOK"; fi
    for _p in $BG_PIDS; do stop_pid "$_p"; done
    if [ -z "${KEEP_TMP:-}" ]; then rm -rf "$TMP"; else echo "kept $TMP" >&2; fi
}
trap cleanup EXIT
# A signal (Ctrl-C, a closed pipe) must not leave the servers a test started running.
trap 'cleanup; trap - EXIT; exit 130' INT TERM HUP PIPE

# wait_http URL [SECONDS [PID]]: poll until the URL answers 2xx; fails after SECONDS (60), or
# at once when PID has exited (it will never answer).
wait_http() {
    _deadline=$(( $(date +%s) + ${2:-60} ))
    while [ "$(date +%s)" -le "$_deadline" ]; do
        curl -sf -o /dev/null "$1" && return 0
        [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && return 1
        sleep 0.1
    done
    return 1
}

# wait_for SECONDS COMMAND...: poll every 0.2 s until the command succeeds (its output
# dropped); fails after SECONDS. A suite waits on the condition it needs, never on a fixed
# sleep that stands in for it.
wait_for() {
    _end=$(( $(date +%s) + $1 )); shift
    while [ "$(date +%s)" -le "$_end" ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    return 1
}

# cycles_done METRICS_URL: how many cycles an enforcer has ended (gpureclaim_enforcer_cycles_total
# over every result), or -1 when its metrics cannot be read.
cycles_done() {
    curl -s -m 2 "$1" 2>/dev/null | awk '
        $1 ~ /^gpureclaim_enforcer_cycles_total[{]/ { n += $2; seen = 1 }
        END { print seen ? n : -1 }'
}

# wait_cycles METRICS_URL N [SECONDS]: wait until the enforcer has ended N more cycles than when
# called (up to SECONDS, 60): "nothing more happened in two cycles" is then a fact, not a guess
# that a fixed sleep held two cycles on a loaded machine.
wait_cycles() {
    _wc0=$(cycles_done "$1")
    _wc_end=$(( $(date +%s) + ${3:-60} ))
    while [ "$(date +%s)" -le "$_wc_end" ]; do
        [ "$_wc0" -ge 0 ] && [ "$(cycles_done "$1")" -ge $((_wc0 + $2)) ] && return 0
        [ "$_wc0" -lt 0 ] && _wc0=$(cycles_done "$1")
        sleep 0.2
    done
    echo "note: $SUITE: $1 did not end $2 more cycles in ${3:-60} s" >&2
    return 1
}

# start_retrying LOG URLPATH SECONDS FUNCTION [ARG...]: start a server that is told its port on
# the command line: pick a free port into SR_PORT, start_bg LOG FUNCTION ARG... (FUNCTION runs
# the server on $SR_PORT), and wait up to SECONDS for URLPATH to answer there. free_port gives
# the port back before the server binds it, so another process can take it in between: when
# the server exits saying the address is in use, try again with another port (3 tries).
start_retrying() {
    _sr_log=$1 _sr_path=$2 _sr_secs=$3
    shift 3
    for _sr_try in 1 2 3; do
        SR_PORT=$(free_port)
        start_bg "$_sr_log" "$@"
        wait_http "http://127.0.0.1:$SR_PORT$_sr_path" "$_sr_secs" "$LAST_PID" && return 0
        kill -0 "$LAST_PID" 2>/dev/null && return 1
        grep -qi 'address already in use' "$_sr_log" || return 1
        echo "note: $SUITE: port $SR_PORT was taken before the server bound it; trying another" >&2
    done
    return 1
}

# start_prometheus CONFIG DATA_DIR [FLAG...]: starts Prometheus on a free loopback port, sets
# $PROM_URL.
start_prometheus() {
    _cfg=$1 _dir=$2
    shift 2
    start_retrying "$TMP/prometheus.log" /-/ready 120 _run_prometheus "$_cfg" "$_dir" "$@"
    _rc=$?
    PROM_PID=$LAST_PID
    PROM_URL="http://127.0.0.1:$SR_PORT"
    return $_rc
}
_run_prometheus() {
    _rp_cfg=$1 _rp_dir=$2
    shift 2
    exec prometheus --config.file="$_rp_cfg" --storage.tsdb.path="$_rp_dir" \
        --web.listen-address="127.0.0.1:$SR_PORT" --log.level=warn "$@"
}

# prometheus_on_history OPENMETRICS: backfill the file into $TMP/tsdb with promtool and
# start_prometheus on it with no scrape targets (sets PROM_URL). 1 when the backfill failed
# (see $TMP/promtool.log), 2 when Prometheus did not become ready ($TMP/prometheus.log).
prometheus_on_history() {
    mkdir -p "$TMP/tsdb"
    promtool tsdb create-blocks-from openmetrics "$1" "$TMP/tsdb" >"$TMP/promtool.log" 2>&1 ||
        return 1
    printf 'global:\n  scrape_interval: 15s\nscrape_configs: []\n' >"$TMP/prometheus.yml"
    start_prometheus "$TMP/prometheus.yml" "$TMP/tsdb" || return 2
}

# need_history OPENMETRICS: prometheus_on_history, reported as the checks backfill and
# prometheus-ready; the test exits when either failed.
need_history() {
    prometheus_on_history "$1"
    case $? in
    1) fail backfill "$(tail -n 3 "$TMP/promtool.log")"; exit 1 ;;
    2) pass backfill; fail prometheus-ready "$(tail -n 5 "$TMP/prometheus.log")"; exit 1 ;;
    esac
    pass backfill
    pass prometheus-ready
}

# start_vm NAME [FLAG...]: VictoriaMetrics on a free loopback port with its data in
# $TMP/NAME; sets VM_URL and VM_PID.
start_vm() {
    _name=$1; shift
    start_retrying "$TMP/$_name.log" /health 120 _run_vm "$_name" "$@"
    _rc=$?
    VM_PID=$LAST_PID
    VM_URL=http://127.0.0.1:$SR_PORT
    return $_rc
}
_run_vm() {
    _rv_name=$1; shift
    exec victoria-metrics -storageDataPath="$TMP/$_rv_name" -retentionPeriod=100y \
        -httpListenAddr="127.0.0.1:$SR_PORT" -loggerLevel=ERROR "$@"
}

# vm_import OPENMETRICS: import OpenMetrics history with timestamps in seconds (gen_history.py,
# gen_judge.py) into $VM_URL, with millisecond timestamps, and make it searchable.
vm_import() {
    awk '!/^#/ { $NF = $NF "000"; print }' "$1" >"$TMP/import.prom"
    curl -sf --data-binary @"$TMP/import.prom" "$VM_URL/api/v1/import/prometheus" &&
        curl -sf "$VM_URL/internal/force_flush" >/dev/null
}

# prom_query EXPR [TIME]: instant query, prints the JSON answer.
prom_query() {
    if [ -n "${2:-}" ]; then
        curl -s "$PROM_URL/api/v1/query" --data-urlencode "query=$1" --data-urlencode "time=$2"
    else
        curl -s "$PROM_URL/api/v1/query" --data-urlencode "query=$1"
    fi
}

# scrape_config FILE "PORT..." JOB [RULE_FILE...]: write a prometheus.yml that scrapes
# 127.0.0.1:PORT (each of a space-separated list) as JOB and evaluates the rule files, both
# every second.
scrape_config() {
    _sf=$1; _sp=$2; _sj=$3; shift 3
    {
        printf 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n'
        [ $# -eq 0 ] || echo 'rule_files:'
        for _sr in "$@"; do echo "  - $_sr"; done
        printf 'scrape_configs:\n  - job_name: %s\n    static_configs:\n' "$_sj"
        for _spp in $_sp; do printf "      - targets: ['127.0.0.1:%s']\n" "$_spp"; done
    } >"$_sf"
}

# prom_value EXPR: the single value of an instant query, or "none" (no series or several).
prom_value() {
    prom_query "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d.get("data", {}).get("result", [])
print(r[0]["value"][1] if len(r) == 1 else "none")'
}

finish() {
    [ "$TEST_FAILED" -eq 0 ]
}
