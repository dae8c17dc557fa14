#!/bin/sh
# `make demo`: the whole gpureclaim loop on one machine, on loopback, without a GPU.
#
# Starts, in a private temporary directory and on 127.0.0.1 ports picked free:
#   * a private Podman API service (tests/podman.sh) and six busybox containers that "own"
#     partitions through the label gpureclaim.io/devices, each with an activity profile;
#   * simulate.py, a live copy of the 8 x MI300X CPX fixture tree whose per-partition activity
#     follows those profiles (a stopped container releases its partitions);
#   * gpureclaim-exporter on that tree, naming owners through the Podman API;
#   * Prometheus scraping it every 2 s with the project's recording rules;
#   * gpureclaim-enforcer with deploy/demo/rules.yaml (Always, 10 %, 2 minutes, action stop)
#     stopping idle containers through the same API;
# then prints the URLs and a timeline (timeline.py) until --duration or Ctrl-C, a summary, a
# backtest of the demo's own history with its rules against a stricter variant
# (rules-strict.yaml, `backtest --compare`) and a `recommend` of it, both looking the containers
# up in the Podman API, and stops everything it started: only its own PIDs, only the
# containers of its private store.
#
# usage: deploy/demo/demo.sh [--duration D] [--keep] [--help]
#   --duration D   run for D (e.g. 6m, 200s, 90) counted from the start; 0 = until Ctrl-C.
#                  Default: until Ctrl-C when stdin is a terminal, else 6m.
#   --keep         keep the temporary directory (logs, audit file, Prometheus data)
set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$TOP/deploy/demo
BIN=${BIN:-$TOP/bin}
THRESHOLD=10
IDLE_TIMER=120

# die() during start-up keeps the working directory (once there is one) so its logs can be read.
die() {
    echo "demo: $*" >&2
    KEEP_ON_ERROR=1
    exit 1
}

usage() {
    sed -n '/^# usage:/,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}

# seconds DURATION: "90", "90s", "6m", "1m30s" -> seconds; empty on a bad value.
seconds() {
    case $1 in
    *[!0-9ms]* | "" | m* | s*) return 0 ;;
    esac
    _m=0
    _s=$1
    case $_s in *m*) _m=${_s%%m*}; _s=${_s#*m} ;; esac
    _s=${_s%s}
    case "$_m$_s" in *[!0-9]*) return 0 ;; esac
    echo $(( ${_m:-0} * 60 + ${_s:-0} ))
}

DURATION=
KEEP=
while [ $# -gt 0 ]; do
    case $1 in
    --duration) [ $# -ge 2 ] || die "option '--duration' needs a value"; DURATION=$2; shift ;;
    --duration=*) DURATION=${1#*=} ;;
    --keep) KEEP=1 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (try --help)" ;;
    esac
    shift
done
if [ -z "$DURATION" ]; then
    if [ -t 0 ]; then DURATION=0; else DURATION=6m; fi
fi
DURATION_S=$(seconds "$DURATION")
[ -n "$DURATION_S" ] || die "invalid duration '$DURATION' (use e.g. 6m, 200s or 0)"

for b in "$BIN/gpureclaim-exporter" "$BIN/gpureclaim-enforcer"; do
    [ -x "$b" ] || die "'$b' is missing; run 'make' first"
done
for c in prometheus podman python3 curl busybox; do
    command -v "$c" >/dev/null 2>&1 || die "'$c' is not installed; run 'make deps' as root"
done

DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpureclaim-demo.XXXXXX") ||
    die "cannot create a temporary directory"
T0=$(date +%s.%N)
PIDS=""
TL_PID=
CLEANED=

# A port below the kernel's ephemeral range, which nothing else is handed meanwhile
# (tests/free_port.py says why).
free_port() {
    python3 "$TOP/tests/free_port.py"
}

# start NAME COMMAND...: run in the background with its log in $DIR/NAME.log. setsid puts it
# in its own session so a Ctrl-C on the terminal reaches only this script, which then stops
# everything in order (the timeline first, so that its summary still sees the Podman API).
start() {
    _name=$1
    shift
    if command -v setsid >/dev/null 2>&1; then
        setsid "$@" >"$DIR/$_name.log" 2>&1 </dev/null &
    else
        "$@" >"$DIR/$_name.log" 2>&1 </dev/null &
    fi
    LAST_PID=$!
    PIDS="$LAST_PID $PIDS"
}

stop_pid() {
    kill "$1" 2>/dev/null || return 0
    _i=0
    while kill -0 "$1" 2>/dev/null && [ $_i -lt 100 ]; do
        sleep 0.1
        _i=$((_i + 1))
    done
    kill -9 "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    return 0
}

# wait_for WHAT SECONDS COMMAND...: poll until COMMAND succeeds.
wait_for() {
    _what=$1
    _n=$(($2 * 10))
    shift 2
    while [ $_n -gt 0 ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
        _n=$((_n - 1))
    done
    die "$_what did not come up; see $DIR (kept)"
}

cleanup() {
    [ -z "$CLEANED" ] || return 0
    CLEANED=1
    trap '' INT TERM HUP PIPE
    [ -z "$TL_PID" ] || stop_pid "$TL_PID"
    # Newest first: enforcer, Prometheus, exporter, simulator.
    for p in $PIDS; do stop_pid "$p"; done
    if [ -n "${PODMAN_DIR:-}" ]; then
        podman_stop
    fi
    if [ -n "$KEEP" ] || [ -n "${KEEP_ON_ERROR:-}" ]; then
        echo "demo: kept $DIR"
    else
        rm -rf "$DIR"
    fi
}

on_signal() {
    INTERRUPTED=1
    if [ -n "$TL_PID" ]; then
        kill -TERM "$TL_PID" 2>/dev/null
    else
        echo "demo: interrupted while starting; cleaning up" >&2
        exit 130
    fi
}

INTERRUPTED=
trap cleanup EXIT
trap on_signal INT TERM HUP PIPE

echo "gpureclaim demo: simulated 8 x AMD Instinct MI300X node (CPX, 64 partitions), no GPU needed"
echo "working directory $DIR"

# ---- Podman and the workloads -----------------------------------------------------------------

. "$TOP/tests/podman.sh"
podman_start "$DIR/podman" </dev/null || die "cannot start podman: $PODMAN_ERR"
SOCK=$PODMAN_SOCK

# name profile devices. Partition p of GPU g is 0000:BB:00.0 for p = 0 and amdgpu_xcp_<7g+p-1>
# otherwise (tests/fixtures/mi300x-cpx/GENERATED.md). Every other partition is nobody's.
WORKLOADS="notebook-alice idle amdgpu_xcp_0
train-bob busy amdgpu_xcp_7,amdgpu_xcp_8
sweep-carol bursty amdgpu_xcp_14
eval-dave goes-idle 0000:65:00.0,amdgpu_xcp_21
pinned-erin exempt amdgpu_xcp_28
notebook-frank idle 0000:a7:00.0,amdgpu_xcp_35"

echo "$WORKLOADS" | while read -r name profile devices; do
    extra=
    [ "$profile" != exempt ] || extra="--label gpureclaim.io/exempt=true"
    # shellcheck disable=SC2086
    podman_cmd run -d --name "$name" --label "gpureclaim.io/devices=$devices" \
        --label "gpureclaim.io/profile=$profile" $extra "$PODMAN_IMAGE" sleep 100000 \
        >>"$DIR/podman-run.log" 2>&1 || exit 1
done || die "cannot create the containers: $(tail -n 2 "$DIR/podman-run.log")"

# ---- simulator, exporter, Prometheus, enforcer ------------------------------------------------

NODE=$DIR/node
mkdir -p "$DIR/empty/proc" "$DIR/empty/dev"
start simulator python3 "$HERE/simulate.py" --root "$NODE" --runtime-socket "$SOCK" \
    --interval 2 --ready-file "$DIR/simulator.ready" --status-file "$DIR/simulator.json"
wait_for "the simulator" 20 test -f "$DIR/simulator.ready"

EXPORTER_PORT=$(free_port)
EXPORTER=127.0.0.1:$EXPORTER_PORT
# procfs and devfs are empty directories: there are no GPU processes or device nodes to find,
# and the kubelet socket does not exist, so ownership comes from the Podman containers only.
start exporter "$BIN/gpureclaim-exporter" --web.listen-address="$EXPORTER" \
    --path.sysfs="$NODE/sys" --path.procfs="$DIR/empty/proc" --path.devfs="$DIR/empty/dev" \
    --kubelet.pod-resources-socket="$DIR/no-kubelet.sock" --runtime.socket="$SOCK" \
    --collector.ownership.refresh-interval=2s --no-collector.amdgpu
wait_for "the exporter" 20 curl -sf "http://$EXPORTER/metrics"

ENFORCER_PORT=$(free_port)
ENFORCER=127.0.0.1:$ENFORCER_PORT
PROM_PORT=$(free_port)
PROM=http://127.0.0.1:$PROM_PORT
sed -e "s|@RULES_FILE@|$TOP/rules/prometheus/gpureclaim.rules.yml|" \
    -e "s|@EXPORTER_ADDR@|$EXPORTER|" -e "s|@ENFORCER_ADDR@|$ENFORCER|" \
    "$HERE/prometheus.yml" >"$DIR/prometheus.yml"
start prometheus prometheus --config.file="$DIR/prometheus.yml" \
    --storage.tsdb.path="$DIR/prometheus-data" --web.listen-address="127.0.0.1:$PROM_PORT" \
    --log.level=warn
wait_for "Prometheus" 30 curl -sf "$PROM/-/ready"

"$BIN/gpureclaim-enforcer" check "$HERE/rules.yaml" >"$DIR/rules-check.log" 2>&1 ||
    die "rules.yaml is invalid: $(cat "$DIR/rules-check.log")"
AUDIT=$DIR/audit.jsonl
start enforcer "$BIN/gpureclaim-enforcer" run --rules.file="$HERE/rules.yaml" \
    --prometheus.url="$PROM" --enforce.interval=10s --web.listen-address="$ENFORCER" \
    --no-dry-run --runtime.socket="$SOCK" --state.file="$DIR/enforcer-state.json" \
    --audit.file="$AUDIT" --runtime.stop-timeout=5s
wait_for "the enforcer" 20 curl -sf "http://$ENFORCER/metrics"

QUERY=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' \
    "gpureclaim:container_busy:ratio")
echo
echo "URLs (loopback only)"
echo "  exporter metrics   http://$EXPORTER/metrics"
echo "  Prometheus         $PROM/graph?g0.expr=$QUERY&g0.tab=0&g0.range_input=10m"
echo "  enforcer metrics   http://$ENFORCER/metrics"
echo "  Podman API socket  $SOCK"
echo "Rule demo-always: policy Always, below $THRESHOLD% for $((IDLE_TIMER / 60))m ->" \
    "stop the container (checked every 10 s)."
OWNED=$(echo "$WORKLOADS" | awk '{ n += split($3, a, ",") } END { print n }')
echo "The $((64 - OWNED)) partitions nobody owns stay at 0 %: idle, but nothing to reclaim."
if [ "$DURATION_S" -eq 0 ]; then
    echo "Running until Ctrl-C."
else
    echo "Running for $DURATION (Ctrl-C stops earlier)."
fi
echo

# ---- timeline -----------------------------------------------------------------------------------

python3 "$HERE/timeline.py" --t0 "$T0" --prometheus-url "$PROM" --runtime-socket "$SOCK" \
    --audit-file "$AUDIT" --threshold "0.$THRESHOLD" --idle-timer "$IDLE_TIMER" \
    --duration "$DURATION_S" --summary-file "$DIR/summary.json" </dev/null &
TL_PID=$!
# A trapped signal ends `wait` early; the handler has asked the timeline to finish, so wait
# again until it has printed its summary.
while kill -0 "$TL_PID" 2>/dev/null; do
    wait "$TL_PID"
done
TL_PID=

# ---- backtest: the same history through the rules and a stricter variant ---------------------

if [ -z "$INTERRUPTED" ]; then
    echo
    TO=$(date +%s)
    echo "Backtest of this run's history, every 10 s: the demo's rules (A) against"
    echo "rules-strict.yaml (B: below 5 % for 3 minutes). The enforcer really stopped containers,"
    echo "so their history ends there: the backtest cannot see them come back. Each container"
    echo "is looked up as it is now in the Podman API, so the exempt one is left out, as run left it."
    "$BIN/gpureclaim-enforcer" backtest --rules.file="$HERE/rules.yaml" \
        --compare="$HERE/rules-strict.yaml" --prometheus.url="$PROM" --from="${T0%.*}" \
        --to="$TO" --enforce.interval=10s --top=3 --runtime.socket="$SOCK" \
        2>"$DIR/backtest.err" ||
        echo "demo: backtest failed: $(tail -n 3 "$DIR/backtest.err")"
    # The range is minutes, not weeks: the minimum history and idle periods are cut to fit
    # it, nothing is held out (a minute of held-out history scores nothing), and the idle
    # timers are those the rule can take (longer than its toleratedGap of 45s).
    echo
    echo "Recommend from the same history: the threshold and idle timer that free the most"
    echo "GPU-hours with at most 10 % of reclaims back within 5 minutes. The stops were real, so"
    echo "no return shows here and only the bursty container's bursts can count against a"
    echo "setting; on the history of a dry run the returns weigh in (README, Choosing thresholds)."
    "$BIN/gpureclaim-enforcer" recommend --rules.file="$HERE/rules.yaml" \
        --prometheus.url="$PROM" --from="${T0%.*}" --to="$TO" --enforce.interval=10s \
        --runtime.socket="$SOCK" --thresholds=5,10,20 --idle-timers=1m,90s,2m,3m \
        --notice-periods=0s --holdout=0 --min-history=2m --min-idle-periods=3 \
        --return-within=5m --max-return-share=10% --by=instance 2>"$DIR/recommend.err" ||
        echo "demo: recommend failed: $(tail -n 3 "$DIR/recommend.err")"
fi
echo
echo "stopping everything the demo started"
[ -z "$INTERRUPTED" ] || exit 130
exit 0
