#!/bin/sh
# Recommend benchmark (issue 32, "fast enough to sweep"): `recommend` over a GRID (default the
# issue's 5 x 8: thresholds 1,2,5,10,20, idle timers 10m .. 24h, no notice period) against
# one `backtest` of the same range and rule, side by side in one run on the same Prometheus,
# over DAYS (default 7) of WORKLOADS (default 1000) workloads at 15 s samples (the replay
# bench's history, bench/replay_history.py, and rule, bench/replay-rules.yaml: one
# namespace, so one group), a cycle every INTERVAL s (default 60), at each hourly cap of
# CAPS (default 0: none; "0 10" adds the default of --enforce.max-actions-per-hour, which
# binds at every cycle on this history and costs the sweep some 25 backtests: measured at
# 100 workloads x 1 day, docs/benchmarks.md). Prints wall time, CPU time (user + system: the
# machine is shared) and peak RSS of each, the ratios, the sweep's own time (--stats: the
# grid's figures; the command also backtests the rule itself over the range chosen on,
# "current", and the rules file it writes, "confirmed") and how many grid points the fast
# pass scored. ENGINE=1 also runs the sweep with --recommend.engine (a simulation per grid
# point: about 40 backtests at the default grid) and compares its CSV with the fast pass's.
# RSS_DAYS (default 1) adds recommend over that many days for peak RSS against the range's.
# HISTORY=DIR keeps the TSDB there and reuses it in a later run. Numbers, not a pass/fail
# test; not part of `make check`.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SUITE=recommend-bench
. "$TOP/tests/lib.sh"
. "$TOP/bench/lib.sh"

W=${WORKLOADS:-1000}
DAYS=${DAYS:-7}
INTERVAL=${INTERVAL:-60}
CAPS=${CAPS:-0}
RSS_DAYS=${RSS_DAYS:-1}
GRID=${GRID:---thresholds 1,2,5,10,20 --idle-timers 10m,15m,30m,1h,2h,4h,8h,24h --notice-periods 0s}
END=1700000000
SPAN=$((DAYS * 86400))
RULES=$TOP/bench/replay-rules.yaml
ENF=${ENF:-$TOP/bin/gpureclaim-enforcer}
RW=$(fake_bin remote_write)
for tool in prometheus python3 /usr/bin/time bc "$ENF" "$RW"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "recommend bench: '$tool' not found" >&2; exit 1; }
done

echo "== recommend benchmark: $W workloads x $DAYS days, 15 s samples, a cycle every $INTERVAL s =="
bench_history "$W" "$SPAN"
FROM=$((END - SPAN + 3600))

# timed NAME CMD...: wall seconds and peak RSS KiB of CMD into $NAME_wall, $NAME_rss; its
# stdout in $TMP/NAME.out, stderr in $TMP/NAME.err.
timed() {
    _n=$1
    shift
    _t0=$(bench_now)
    /usr/bin/time -f 'maxrss_kib=%M cpu=%U+%S' -o "$TMP/$_n.time" "$@" >"$TMP/$_n.out" \
        2>"$TMP/$_n.err"
    _rc=$?
    eval "${_n}_wall=$(echo "$(bench_now) - $_t0" | bc)"
    eval "${_n}_rss=$(sed -n 's/^maxrss_kib=\([0-9]*\).*/\1/p' "$TMP/$_n.time")"
    eval "${_n}_cpu=$(echo "$(sed -n 's/.* cpu=//p' "$TMP/$_n.time")" | bc)"
    [ $_rc -eq 0 ] || echo "$_n: exit $_rc: $(tail -3 "$TMP/$_n.err")"
}

rows=""
for cap in $CAPS; do
    # shellcheck disable=SC2086
    timed bt "$ENF" backtest --rules.file "$RULES" --prometheus.url "$PROM_URL" --from $FROM \
        --to $END --enforce.interval ${INTERVAL}s --enforce.max-actions-per-hour $cap --output json
    # shellcheck disable=SC2086
    timed rec "$ENF" recommend --rules.file "$RULES" --prometheus.url "$PROM_URL" --from $FROM \
        --to $END --enforce.interval ${INTERVAL}s --enforce.max-actions-per-hour $cap $GRID \
        --stats --output csv
    sweep=$(sed -n 's/.* sweep \([0-9.]*\) s$/\1/p' "$TMP/rec.err")
    stats=$(grep '^recommend: .* grid points:' "$TMP/rec.err" | sed 's/; sweep.*//')
    echo "hourly cap $cap: backtest wall ${bt_wall} s, cpu ${bt_cpu} s, peak RSS ${bt_rss} KiB"
    echo "hourly cap $cap: recommend wall ${rec_wall} s (sweep ${sweep} s), cpu ${rec_cpu} s, peak RSS ${rec_rss} KiB ($stats)"
    ratio=$(echo "scale=2; $rec_wall / $bt_wall" | bc)
    sratio=$(echo "scale=2; $sweep / $bt_wall" | bc)
    cratio=$(echo "scale=2; $rec_cpu / $bt_cpu" | bc)
    echo "hourly cap $cap: recommend / backtest: wall ${ratio} (the sweep alone: ${sratio}), cpu ${cratio}"
    rows="$rows
| hourly cap $cap | $bt_wall s (cpu $bt_cpu s), $bt_rss KiB | $rec_wall s (cpu $rec_cpu s), $rec_rss KiB | $sweep s | $ratio (cpu $cratio) | $sratio |"
    if [ "${ENGINE:-0}" = 1 ]; then
        cp "$TMP/rec.out" "$TMP/fast.csv"
        # shellcheck disable=SC2086
        timed eng "$ENF" recommend --rules.file "$RULES" --prometheus.url "$PROM_URL" \
            --from $FROM --to $END --enforce.interval ${INTERVAL}s \
            --enforce.max-actions-per-hour $cap $GRID --stats --recommend.engine --output csv
        esweep=$(sed -n 's/.* sweep \([0-9.]*\) s$/\1/p' "$TMP/eng.err")
        same=DIFFERENT
        cmp -s "$TMP/fast.csv" "$TMP/eng.out" && same="the same"
        echo "hourly cap $cap: recommend --recommend.engine wall ${eng_wall} s (sweep ${esweep} s), peak RSS ${eng_rss} KiB; its CSV and the fast pass's: $same"
    fi
done
if [ "$RSS_DAYS" -gt 0 ] && [ "$RSS_DAYS" -lt "$DAYS" ]; then
    # shellcheck disable=SC2086
    timed day "$ENF" recommend --rules.file "$RULES" --prometheus.url "$PROM_URL" \
        --from $((END - RSS_DAYS * 86400)) --to $END --enforce.interval ${INTERVAL}s \
        --enforce.max-actions-per-hour 0 $GRID --min-history 0s --output csv
    echo "recommend $RSS_DAYS day(s), no hourly cap: wall ${day_wall} s, peak RSS ${day_rss} KiB"
fi
echo
echo "| $W workloads x $DAYS days | backtest (wall, peak RSS) | recommend (wall, peak RSS) | its sweep | recommend / backtest | sweep / backtest |"
echo "|---|---|---|---|---|---|$rows"
[ -n "${day_rss:-}" ] && echo "| peak RSS of recommend, $RSS_DAYS day(s) / $DAYS days (no cap) | $day_rss / ${rec_rss} KiB | | | | |"
stop_pid "$PROM_PID"
