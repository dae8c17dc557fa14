# Helpers of the benchmarks that read bench/replay_history.py's history (bench/replay.sh,
# bench/recommend.sh), sourced after tests/lib.sh: both start Prometheus on the same history,
# written or reused the same way, and time their commands with the same clock. Not a
# benchmark itself (bench/run.sh names the ones it runs).
# Needs TMP (tests/lib.sh), TOP, END (the history's last second), RW (fake remote_write) and
# HISTORY (optional: a directory that keeps each history's TSDB for a later run).

# bench_now: the wall clock in seconds, with nanoseconds (for bc).
bench_now() { date +%s.%N; }

# bench_history N SECONDS: a fresh Prometheus (PROM_PID, PROM_URL; the one started before is
# stopped) on N workloads' history of SECONDS before END, written by remote write in time order
# (a week of 1,000 workloads takes minutes) or, with HISTORY, reused from $HISTORY/tsdb-N-SECONDS
# when a run before wrote it there. Exits when Prometheus does not start or the write fails.
bench_history() {
    [ -n "${PROM_PID:-}" ] && stop_pid "$PROM_PID"
    _db=$TMP/tsdb
    [ -n "${HISTORY:-}" ] && _db=$HISTORY/tsdb-$1-$2
    [ -n "${HISTORY:-}" ] && [ -f "$_db.done" ] || { rm -rf "$_db" "$_db.done"; mkdir -p "$_db"; }
    printf 'global:\n  scrape_interval: 15s\nscrape_configs: []\n' >"$TMP/prometheus.yml"
    start_prometheus "$TMP/prometheus.yml" "$_db" --web.enable-remote-write-receiver \
        --storage.tsdb.retention.time=100d || { echo "prometheus did not start" >&2; exit 1; }
    if [ -f "$_db.done" ]; then
        echo "history: $1 workloads x $2 s reused from $_db"
        return
    fi
    _t0=$(bench_now)
    python3 "$TOP/bench/replay_history.py" "$1" "$2" $END | "$RW" "$PROM_URL" ||
        { echo "remote write failed" >&2; exit 1; }
    echo "history: $1 workloads x $2 s written in $(echo "$(bench_now) - $_t0" | bc) s"
    [ -n "${HISTORY:-}" ] && touch "$_db.done"
}
