#!/bin/sh
# Replay benchmark (issue 25): the `backtest` command (replay, decide() and the simulated
# engine at every cycle) and its range reader alone (enforcer/replay.c, driven by
# tests/fakes/replay_dump in `quiet` mode: every cycle decided, nothing printed) over DAYS
# (default 7) of history of WORKLOADS (default 1000) workloads at 15 s samples, one selector
# rule (bench/replay-rules.yaml: 15m idle timer, 1m step, raw samples by remote read), a
# cycle every INTERVAL s (default 60: 10,080 cycles a week), against:
#   floor   what Prometheus needs to read every raw sample of the range once:
#           count_over_time(bench_busy_ratio[1d]) at the end of each day, one day after the
#           other (wall time and Prometheus' CPU time);
#   plan    `plan --at t` at SLICE (default 20) cycle times spread over the range, the mean
#           extrapolated to every cycle of the range (a loop over plan);
# and peak RSS of a 1-day replay against the whole range's (memory must not grow with the
# range). RSS_WORKLOADS (default 10000) adds a 3-hour replay at that many workloads for its
# peak RSS (which does not depend on the range, as the first figures show).
# The history is written by remote write in time order (bench/replay_history.py; a week of
# 1,000 workloads is 40 M activity samples and takes minutes). Numbers, not a pass/fail test;
# not part of `make check`.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SUITE=replay-bench
. "$TOP/tests/lib.sh"

W=${WORKLOADS:-1000}
DAYS=${DAYS:-7}
INTERVAL=${INTERVAL:-60}
SLICE=${SLICE:-20}
RSS_W=${RSS_WORKLOADS:-10000}
END=1700000000
SPAN=$((DAYS * 86400))
RULES=$TOP/bench/replay-rules.yaml
ENF=${ENF:-$TOP/bin/gpureclaim-enforcer}
RW=$(fake_bin remote_write)
DUMP=$(fake_bin replay_dump)
TCK=$(getconf CLK_TCK)
for tool in prometheus python3 /usr/bin/time "$ENF" "$RW" "$DUMP"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "replay bench: '$tool' not found" >&2; exit 1; }
done
prom_cpu() { awk '{ print $14 + $15 }' "/proc/$PROM_PID/stat"; }
now() { date +%s.%N; }

# load N SECONDS: a fresh Prometheus with N workloads' history of SECONDS before END.
load() {
    [ -n "${PROM_PID:-}" ] && stop_pid "$PROM_PID"
    rm -rf "$TMP/tsdb"
    mkdir -p "$TMP/tsdb"
    printf 'global:\n  scrape_interval: 15s\nscrape_configs: []\n' >"$TMP/prometheus.yml"
    start_prometheus "$TMP/prometheus.yml" "$TMP/tsdb" --web.enable-remote-write-receiver \
        --storage.tsdb.retention.time=100d || { echo "prometheus did not start" >&2; exit 1; }
    _t0=$(now)
    python3 "$TOP/bench/replay_history.py" "$1" "$2" $END | "$RW" "$PROM_URL" ||
        { echo "remote write failed" >&2; exit 1; }
    echo "history: $1 workloads x $2 s written in $(echo "$(now) - $_t0" | bc) s"
}

# replay FROM: replay_dump over [FROM, END] (REPLAY_MODE, default lean: proofs carried from
# cycle to cycle, as the backtest without --decisions); prints wall seconds, peak RSS KiB and
# its stats.
replay() {
    REPLAY_MODE=${REPLAY_MODE:-lean} /usr/bin/time -f 'maxrss_kib=%M' -o "$TMP/time.txt" \
        "$DUMP" "$PROM_URL" "$RULES" "$1" $END $INTERVAL 0 auto quiet >/dev/null 2>"$TMP/replay.err"
    _rss=$(sed -n 's/^maxrss_kib=//p' "$TMP/time.txt")
    _stats=$(grep '^stats:' "$TMP/replay.err")
    _secs=$(echo "$_stats" | sed 's/.*seconds=\([0-9.]*\).*/\1/')
    echo "$_secs $_rss $_stats"
}

# backtest FROM: the command itself over [FROM, END] (replay, decide, the simulated engine);
# prints wall seconds and peak RSS KiB.
backtest() {
    _t0=$(now)
    /usr/bin/time -f 'maxrss_kib=%M' -o "$TMP/time.txt" "$ENF" backtest --rules.file "$RULES" \
        --prometheus.url "$PROM_URL" --from "$1" --to $END --enforce.interval ${INTERVAL}s \
        --output json >"$TMP/backtest.json" 2>"$TMP/backtest.err"
    echo "$(echo "$(now) - $_t0" | bc) $(sed -n 's/^maxrss_kib=//p' "$TMP/time.txt")"
}

echo "== replay benchmark: $W workloads x $DAYS days, 15 s samples, a cycle every $INTERVAL s =="
load "$W" "$SPAN"
FROM=$((END - SPAN + 3600))

# Floor: every raw sample read once, day by day.
c0=$(prom_cpu); t0=$(now)
d=0
while [ $d -lt "$DAYS" ]; do
    curl -sf --data-urlencode "query=count(count_over_time(bench_busy_ratio[1d]))" \
        --data-urlencode "time=$((END - d * 86400))" "$PROM_URL/api/v1/query" >/dev/null
    d=$((d + 1))
done
floor_wall=$(echo "$(now) - $t0" | bc)
floor_cpu=$(echo "scale=3; ($(prom_cpu) - $c0) / $TCK" | bc)
echo "floor: count_over_time day by day: wall ${floor_wall} s, prometheus cpu ${floor_cpu} s"

c0=$(prom_cpu)
set -- $(replay $FROM)
week_wall=$1 week_rss=$2
shift 2
week_cpu=$(echo "scale=3; ($(prom_cpu) - $c0) / $TCK" | bc)
echo "replay $DAYS days: wall ${week_wall} s, peak RSS ${week_rss} KiB, prometheus cpu ${week_cpu} s ($*)"

set -- $(replay $((END - 86400)))
day_wall=$1 day_rss=$2
shift 2
echo "replay 1 day: wall ${day_wall} s, peak RSS ${day_rss} KiB ($*)"

c0=$(prom_cpu)
set -- $(backtest $FROM)
bt_wall=$1 bt_rss=$2
bt_cpu=$(echo "scale=3; ($(prom_cpu) - $c0) / $TCK" | bc)
echo "backtest $DAYS days: wall ${bt_wall} s, peak RSS ${bt_rss} KiB, prometheus cpu ${bt_cpu} s"
set -- $(backtest $((END - 86400)))
echo "backtest 1 day: wall $1 s, peak RSS $2 KiB"
bt_day_rss=$2

ncycles=$(( (END - FROM) / INTERVAL + 1 ))
step=$(( (END - FROM) / SLICE ))
t0=$(now)
k=0
while [ $k -lt "$SLICE" ]; do
    "$ENF" plan --rules.file "$RULES" --prometheus.url "$PROM_URL" --at $((FROM + k * step)) \
        --output json >/dev/null 2>&1
    k=$((k + 1))
done
plan_each=$(echo "scale=4; ($(now) - $t0) / $SLICE" | bc)
plan_all=$(echo "scale=1; $plan_each * $ncycles" | bc)
echo "plan --at: ${plan_each} s a cycle over $SLICE cycles; x $ncycles cycles = ${plan_all} s"

echo
echo "| measure | value |"
echo "|---|---|"
echo "| replay wall / floor wall ($DAYS days) | $(echo "scale=2; $week_wall / $floor_wall" | bc) |"
echo "| backtest wall / floor wall ($DAYS days) | $(echo "scale=2; $bt_wall / $floor_wall" | bc) |"
echo "| plan loop (extrapolated) / replay wall | $(echo "scale=1; $plan_all / $week_wall" | bc) |"
echo "| plan loop (extrapolated) / backtest wall | $(echo "scale=1; $plan_all / $bt_wall" | bc) |"
echo "| peak RSS $DAYS days / 1 day (replay) | $(echo "scale=3; $week_rss / $day_rss" | bc) |"
echo "| peak RSS $DAYS days / 1 day (backtest) | $(echo "scale=3; $bt_rss / $bt_day_rss" | bc) |"

if [ "$RSS_W" -gt 0 ]; then
    load "$RSS_W" 14400
    set -- $(replay $((END - 10800)))
    echo "replay 3 hours at $RSS_W workloads: wall $1 s, peak RSS $2 KiB ($(echo "scale=1; $2 / 1024" | bc) MiB)"
    set -- $(backtest $((END - 10800)))
    echo "backtest 3 hours at $RSS_W workloads: wall $1 s, peak RSS $2 KiB ($(echo "scale=1; $2 / 1024" | bc) MiB)"
fi
stop_pid "$PROM_PID"
