#!/bin/sh
# Replay benchmark (issues 25 and 31): the `backtest` command, event-driven (the default:
# only the workloads whose decision can have changed judged, btdue.h) and per cycle
# (--backtest.every-cycle: decide() of every workload and the engine over every decision at
# every cycle), side by side in one run, and its range reader alone (enforcer/replay.c,
# driven by tests/fakes/replay_dump in `quiet` mode: every cycle decided, nothing printed;
# and in `read` mode: nothing decided, the read's share of a backtest; both also with each
# chunk read in place, REPLAY_SYNC=1, beside the default read-ahead) over DAYS
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
# peak RSS (which does not depend on the range, as the first figures show). BIG_WORKLOADS
# (default 0: off) and BIG_DAYS (default 7) add the event-driven backtest at that size, with
# its floor, wall time, time per workload-cycle and peak RSS (issue 31: 10,000 x 7 days
# within 10 minutes and 256 MiB; writing that history takes about an hour). HISTORY=DIR
# keeps each history's TSDB there and reuses it in a later run; SLICE=0 skips the plan loop.
# ENF and DUMP name other builds of the enforcer and of replay_dump; BASE_ENF names a build
# to compare with (an earlier commit): its backtests run beside ENF's, on the same Prometheus,
# each mode and cap one after the other, and their results are compared with ENF's.
# The history is written by remote write in time order (bench/replay_history.py; a week of
# 1,000 workloads is 40 M activity samples and takes minutes). Numbers, not a pass/fail test;
# not part of `make check`.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SUITE=replay-bench
. "$TOP/tests/lib.sh"
. "$TOP/bench/lib.sh"

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
DUMP=${DUMP:-$(fake_bin replay_dump)}
TCK=$(getconf CLK_TCK)
for tool in prometheus python3 /usr/bin/time "$ENF" "$RW" "$DUMP"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "replay bench: '$tool' not found" >&2; exit 1; }
done
prom_cpu() { awk '{ print $14 + $15 }' "/proc/$PROM_PID/stat"; }

# floor DAYS: every raw sample of DAYS days before END read once, day by day; sets floor_wall
# and floor_cpu.
floor() {
    _c0=$(prom_cpu)
    _t0=$(bench_now)
    _d=0
    while [ $_d -lt "$1" ]; do
        curl -sf --data-urlencode "query=count(count_over_time(bench_busy_ratio[1d]))" \
            --data-urlencode "time=$((END - _d * 86400))" "$PROM_URL/api/v1/query" >/dev/null
        _d=$((_d + 1))
    done
    floor_wall=$(echo "$(bench_now) - $_t0" | bc)
    floor_cpu=$(echo "scale=3; ($(prom_cpu) - $_c0) / $TCK" | bc)
}

# replay FROM: replay_dump over [FROM, END] (REPLAY_MODE, default lean: proofs carried from
# cycle to cycle, as the backtest without --decisions); prints wall seconds, peak RSS KiB and
# its stats.
replay() {
    REPLAY_MODE=${REPLAY_MODE:-lean} /usr/bin/time -f 'maxrss_kib=%M' -o "$TMP/time.txt" \
        "$DUMP" "$PROM_URL" "$RULES" "$1" $END $INTERVAL 0 auto "${2:-quiet}" >/dev/null \
        2>"$TMP/replay.err"
    _rss=$(sed -n 's/^maxrss_kib=//p' "$TMP/time.txt")
    _stats=$(grep '^stats:' "$TMP/replay.err")
    _secs=$(echo "$_stats" | sed 's/.*seconds=\([0-9.]*\).*/\1/')
    echo "$_secs $_rss $_stats"
}

# backtest FROM [FLAG...]: the command itself over [FROM, END] (replay, decide, the simulated
# engine); prints wall seconds and peak RSS KiB. Its result is kept in $TMP/backtest$FLAG.json
# (the modes' results are compared), the workload-cycles judged and carried in
# $TMP/backtest.err.
backtest() {
    _from=$1
    shift
    _t0=$(bench_now)
    /usr/bin/time -f 'maxrss_kib=%M' -o "$TMP/time.txt" "${BT_ENF:-$ENF}" backtest --rules.file "$RULES" \
        --prometheus.url "$PROM_URL" --from "$_from" --to $END --enforce.interval ${INTERVAL}s \
        --output json --stats "$@" >"$TMP/backtest$*.json" 2>"$TMP/backtest.err"
    echo "$(echo "$(bench_now) - $_t0" | bc) $(sed -n 's/^maxrss_kib=//p' "$TMP/time.txt")"
}

echo "== replay benchmark: $W workloads x $DAYS days, 15 s samples, a cycle every $INTERVAL s =="
bench_history "$W" "$SPAN"
FROM=$((END - SPAN + 3600))

# Floor: every raw sample read once, day by day.
floor "$DAYS"
floor1_wall=$floor_wall
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

set -- $(replay $FROM read)
read_wall=$1
shift 2
echo "replay $DAYS days, read only (nothing decided): wall ${read_wall} s ($*)"
# The same read with each chunk read in place when its first cycle comes (no read-ahead
# thread, enforcer/replay_ahead.c), and a lean replay that decides every cycle both ways.
set -- $(REPLAY_SYNC=1 replay $FROM read)
echo "replay $DAYS days, read only, each chunk read in place: wall $1 s"
set -- $(REPLAY_SYNC=1 replay $FROM)
echo "replay $DAYS days, every cycle decided, each chunk read in place: wall $1 s (read ahead: ${week_wall} s)"

# Each hourly cap of CAPS (default "10 0": the default of --enforce.max-actions-per-hour, which
# binds nearly every cycle against this many idle workloads, and none), both modes.
CAPS=${CAPS:-10 0}
for cap in $CAPS; do
    c0=$(prom_cpu)
    set -- $(backtest $FROM --enforce.max-actions-per-hour=$cap)
    eval "bt_wall_$cap=$1 bt_rss_$cap=$2"
    bt_cpu=$(echo "scale=3; ($(prom_cpu) - $c0) / $TCK" | bc)
    eval "bt_stats_$cap=\$(grep 'workload-cycles' \"\$TMP/backtest.err\")"
    echo "backtest $DAYS days, hourly cap $cap (event-driven): wall $1 s, peak RSS $2 KiB, prometheus cpu ${bt_cpu} s ($(grep 'workload-cycles' "$TMP/backtest.err"))"
    set -- $(backtest $FROM --enforce.max-actions-per-hour=$cap --backtest.every-cycle)
    eval "ev_wall_$cap=$1 ev_rss_$cap=$2"
    echo "backtest $DAYS days, hourly cap $cap (--backtest.every-cycle): wall $1 s, peak RSS $2 KiB"
    if cmp -s "$TMP/backtest--enforce.max-actions-per-hour=$cap.json" \
        "$TMP/backtest--enforce.max-actions-per-hour=$cap --backtest.every-cycle.json"; then
        echo "results of the two modes: the same"
    else
        echo "results of the two modes: DIFFERENT ($TMP/backtest*.json)"
    fi
    if [ -n "${BASE_ENF:-}" ]; then
        for mode in "" --backtest.every-cycle; do
            mv "$TMP/backtest--enforce.max-actions-per-hour=$cap${mode:+ $mode}.json" "$TMP/enf.json"
            set -- $(BT_ENF=$BASE_ENF backtest $FROM --enforce.max-actions-per-hour=$cap $mode)
            eval "base_wall_$cap${mode:+_ev}=\$1 base_rss_$cap${mode:+_ev}=\$2"
            cmp -s "$TMP/enf.json" "$TMP/backtest--enforce.max-actions-per-hour=$cap${mode:+ $mode}.json" &&
                same="the same result" || same="a DIFFERENT result"
            echo "BASE_ENF backtest $DAYS days, hourly cap $cap (${mode:-event-driven}): wall $1 s, peak RSS $2 KiB; $same as ENF's"
        done
    fi
done
# A second floor after the backtests: the machine's load moves while they run.
floor "$DAYS"
floor2_wall=$floor_wall
echo "floor again: wall ${floor2_wall} s, prometheus cpu ${floor_cpu} s"
set -- $(backtest $((END - 86400)))
echo "backtest 1 day: wall $1 s, peak RSS $2 KiB"
bt_day_rss=$2

ncycles=$(( (END - FROM) / INTERVAL + 1 ))
plan_all=0
if [ "$SLICE" -gt 0 ]; then
    step=$(( (END - FROM) / SLICE ))
    t0=$(bench_now)
    k=0
    while [ $k -lt "$SLICE" ]; do
        "$ENF" plan --rules.file "$RULES" --prometheus.url "$PROM_URL" --at $((FROM + k * step)) \
            --output json >/dev/null 2>&1
        k=$((k + 1))
    done
    plan_each=$(echo "scale=4; ($(bench_now) - $t0) / $SLICE" | bc)
    plan_all=$(echo "scale=1; $plan_each * $ncycles" | bc)
    echo "plan --at: ${plan_each} s a cycle over $SLICE cycles; x $ncycles cycles = ${plan_all} s"
fi
wc=$((W * ncycles))

echo
echo "| measure | value |"
echo "|---|---|"
echo "| floor wall, before / after the backtests | $floor1_wall s / $floor2_wall s |"
echo "| replay wall / floor wall ($DAYS days) | $(echo "scale=2; $week_wall / $floor1_wall" | bc) |"
echo "| the read's share: read-only replay wall / floor wall | $(echo "scale=2; $read_wall / $floor1_wall" | bc) |"
for cap in $CAPS; do
    eval "bt_wall=\$bt_wall_$cap ev_wall=\$ev_wall_$cap bt_rss=\$bt_rss_$cap ev_rss=\$ev_rss_$cap bt_stats=\$bt_stats_$cap"
    echo "| hourly cap $cap: backtest (event-driven) wall / floor wall | $(echo "scale=2; $bt_wall / $floor1_wall" | bc) (after: $(echo "scale=2; $bt_wall / $floor2_wall" | bc)) |"
    echo "| hourly cap $cap: backtest --backtest.every-cycle wall / floor wall | $(echo "scale=2; $ev_wall / $floor1_wall" | bc) (after: $(echo "scale=2; $ev_wall / $floor2_wall" | bc)) |"
    echo "| hourly cap $cap: every-cycle wall / event-driven wall | $(echo "scale=2; $ev_wall / $bt_wall" | bc) |"
    echo "| hourly cap $cap: time per workload-cycle ($W x $ncycles): event-driven / every-cycle | $(echo "scale=3; $bt_wall * 1000000 / $wc" | bc) / $(echo "scale=3; $ev_wall * 1000000 / $wc" | bc) us |"
    echo "| hourly cap $cap: the read's share (read-only replay / backtest wall): event-driven / every-cycle | $(echo "scale=2; $read_wall / $bt_wall" | bc) / $(echo "scale=2; $read_wall / $ev_wall" | bc) |"
    echo "| hourly cap $cap: workload-cycles judged / carried (event-driven) | $(echo "$bt_stats" | sed 's/.*: \([0-9]*\) workload-cycles judged, \([0-9]*\) carried/\1 \/ \2/') |"
    echo "| hourly cap $cap: peak RSS event-driven / every-cycle | $bt_rss / $ev_rss KiB |"
    if [ -n "${BASE_ENF:-}" ]; then
        eval "base_wall=\$base_wall_$cap base_ev=\$base_wall_${cap}_ev"
        echo "| hourly cap $cap: BASE_ENF event-driven / every-cycle wall (x floor before) | $base_wall s ($(echo "scale=2; $base_wall / $floor1_wall" | bc)) / $base_ev s ($(echo "scale=2; $base_ev / $floor1_wall" | bc)) |"
        echo "| hourly cap $cap: BASE_ENF / ENF wall, event-driven / every-cycle | $(echo "scale=2; $base_wall / $bt_wall" | bc) / $(echo "scale=2; $base_ev / $ev_wall" | bc) |"
    fi
done
if [ "$SLICE" -gt 0 ]; then
    echo "| plan loop (extrapolated) / replay wall | $(echo "scale=1; $plan_all / $week_wall" | bc) |"
    echo "| plan loop (extrapolated) / backtest wall | $(echo "scale=1; $plan_all / $bt_wall" | bc) |"
fi
echo "| peak RSS $DAYS days / 1 day (replay) | $(echo "scale=3; $week_rss / $day_rss" | bc) |"
echo "| peak RSS $DAYS days / 1 day (backtest, hourly cap 10) | $(echo "scale=3; ${bt_rss_10:-0} / $bt_day_rss" | bc) |"

if [ "$RSS_W" -gt 0 ]; then
    bench_history "$RSS_W" 14400
    set -- $(replay $((END - 10800)))
    echo "replay 3 hours at $RSS_W workloads: wall $1 s, peak RSS $2 KiB ($(echo "scale=1; $2 / 1024" | bc) MiB)"
    set -- $(backtest $((END - 10800)))
    echo "backtest 3 hours at $RSS_W workloads: wall $1 s, peak RSS $2 KiB ($(echo "scale=1; $2 / 1024" | bc) MiB)"
fi
BIG_W=${BIG_WORKLOADS:-0}
BIG_DAYS=${BIG_DAYS:-7}
if [ "$BIG_W" -gt 0 ]; then
    bench_history "$BIG_W" $((BIG_DAYS * 86400))
    _from=$((END - BIG_DAYS * 86400 + 3600))
    floor "$BIG_DAYS"
    echo "floor at $BIG_W workloads x $BIG_DAYS days: wall ${floor_wall} s, prometheus cpu ${floor_cpu} s"
    set -- $(replay $_from read)
    echo "replay at $BIG_W workloads x $BIG_DAYS days, read only: wall $1 s, peak RSS $2 KiB"
    _read=$1
    set -- $(backtest $_from)
    _n=$((BIG_W * ((END - _from) / INTERVAL + 1)))
    echo "backtest at $BIG_W workloads x $BIG_DAYS days (event-driven): wall $1 s ($(echo "scale=2; $1 / $floor_wall" | bc) x the floor, $(echo "scale=3; $1 * 1000000 / $_n" | bc) us a workload-cycle, the read's share $(echo "scale=2; $_read / $1" | bc)), peak RSS $2 KiB ($(echo "scale=1; $2 / 1024" | bc) MiB); $(grep 'workload-cycles' "$TMP/backtest.err")"
fi
stop_pid "$PROM_PID"
