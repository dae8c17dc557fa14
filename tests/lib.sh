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

pass() { echo "PASS: $SUITE/$1"; }
fail() { echo "FAIL: $SUITE/$1${2:+ ($2)}"; TEST_FAILED=$((TEST_FAILED + 1)); }

# check NAME COMMAND...: PASS if the command succeeds.
check() {
    _name=$1; shift
    if "$@"; then pass "$_name"; else fail "$_name"; fi
}

# A free TCP port on 127.0.0.1 (bind to port 0 and read back what the kernel chose).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_bg LOGFILE COMMAND...: start in the background and remember the PID in $LAST_PID.
start_bg() {
    _log=$1; shift
    "$@" >"$_log" 2>&1 &
    LAST_PID=$!
    BG_PIDS="$BG_PIDS $LAST_PID"
}

stop_pid() {
    _pid=$1
    kill "$_pid" 2>/dev/null || return 0
    for _i in $(seq 1 50); do
        kill -0 "$_pid" 2>/dev/null || { wait "$_pid" 2>/dev/null; return 0; }
        sleep 0.1
    done
    kill -9 "$_pid" 2>/dev/null
    wait "$_pid" 2>/dev/null
    return 0
}

cleanup() {
    for _p in $BG_PIDS; do stop_pid "$_p"; done
    if [ -z "${KEEP_TMP:-}" ]; then rm -rf "$TMP"; else echo "kept $TMP" >&2; fi
}
trap cleanup EXIT

# wait_http URL [SECONDS]: poll until the URL answers 2xx.
wait_http() {
    _deadline=$(( $(date +%s) + ${2:-20} ))
    while [ "$(date +%s)" -le "$_deadline" ]; do
        curl -sf -o /dev/null "$1" && return 0
        sleep 0.1
    done
    return 1
}

# start_prometheus CONFIG DATA_DIR: starts Prometheus on a free loopback port, sets $PROM_URL.
start_prometheus() {
    _port=$(free_port)
    start_bg "$TMP/prometheus.log" prometheus --config.file="$1" --storage.tsdb.path="$2" \
        --web.listen-address="127.0.0.1:$_port" --log.level=warn
    PROM_PID=$LAST_PID
    PROM_URL="http://127.0.0.1:$_port"
    wait_http "$PROM_URL/-/ready" 30
}

# prom_query EXPR [TIME]: instant query, prints the JSON answer.
prom_query() {
    if [ -n "${2:-}" ]; then
        curl -s "$PROM_URL/api/v1/query" --data-urlencode "query=$1" --data-urlencode "time=$2"
    else
        curl -s "$PROM_URL/api/v1/query" --data-urlencode "query=$1"
    fi
}

finish() {
    [ "$TEST_FAILED" -eq 0 ]
}
