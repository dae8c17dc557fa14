#!/bin/sh
# Incremental `run` benchmark (issue 26): what a steady-state cycle costs when each cycle reads
# only what is new, for a short and a day-long idle timer at the same scale.
#
# Builds N workloads (default 100,000; 1 series each, a sample every 15 s, and the allocation
# every 240 s) over LONG + 30 minutes of history ending at END by remote write straight from
# tests/fakes/remote_write --bench (window by window, so Prometheus appends at its head), then
# for each idle timer of IDLES (minutes, default "15 1440") runs `run --dry-run` on a fixed
# clock (--at.step 60s) for CYCLES cycles (default 6) ending at END: the first is cold (a full
# read of the rule's window, streamed through the proof fold), the others are steady state
# (the samples since the last read plus the 30 s overlap). Prints per cycle the wall time
# (the enforcer's own "cycle done in" figure) and Prometheus' CPU time (utime + stime between
# the --at.before-cycle hooks), the enforcer's peak RSS over the whole run and the state it
# carries (gpureclaim_enforcer_proof_series, _proof_bytes from the last cycle's debug log),
# then the ratios of the day-long timer to the short one. Targets (issue 26): steady state at
# most 2x the wall and 2x the Prometheus CPU of the short timer's, peak RSS (cold cycle
# included) under 2x the short timer's and under 512 MiB. Numbers, not a pass/fail test.
# The machine is shared: run it alone, once; building 100,000 x 24.5 h (590 M samples) takes
# tens of minutes. SERVER=victoriametrics measures VictoriaMetrics (export) instead of
# Prometheus (remote read), written by remote write too; its CPU is then in the CPU column.
# MAX_ANSWER: --prometheus.max-answer-bytes (default 128 MiB, the flag's: at 1,000,000 workloads
# a remote-read answer and the allocation's instant query are larger, and the rule then keeps
# every workload with query_error, as it must).
# VictoriaMetrics is started with -search.maxUniqueTimeseries above the workloads: its default
# (300,000) fails the allocation's instant query at a million (422, and the rule keeps every
# workload, as it must), which the first 1,000,000-workload measurements did not notice.
# HISTORY=DIR: keep the server's data in DIR, and when DIR already holds one (a run with the same
# N and IDLES), skip writing the history: the enforcer's side measured again on the same data.
# Each cycle's peak RSS is sampled every 0.2 s from /proc (the steady cycles' peak is printed
# apart from the whole run's, which the cold cycle sets).
# A million workloads, on both servers (issue 26; about 10 minutes each after the history):
#   N=1000000 IDLES=15 CYCLES=4 MAX_ANSWER=4294967296 sh bench/incremental.sh
#   N=1000000 IDLES=15 CYCLES=4 MAX_ANSWER=4294967296 SERVER=victoriametrics sh bench/incremental.sh
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SUITE=incremental-bench
. "$TOP/tests/lib.sh"

N=${N:-100000}
IDLES=${IDLES:-15 1440}
CYCLES=${CYCLES:-6}
END=${END:-1700000000}
ENF=${ENF:-$TOP/bin/gpureclaim-enforcer}
RW=$(fake_bin remote_write)
TCK=$(getconf CLK_TCK)
LONG=0
for i in $IDLES; do [ "$i" -gt "$LONG" ] && LONG=$i; done
HIST=$(((LONG + 30) * 60))

for tool in prometheus bc "$ENF" "$RW"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "incremental bench: '$tool' not found" >&2; exit 1; }
done

echo "== incremental run benchmark: $N workloads, idle timers ${IDLES} min, ${HIST}s of history, ${SERVER:-prometheus} =="
printf 'load before: %s\n' "$(uptime | sed 's/.*load average: //')"
printf 'global:\n  scrape_interval: 15s\nscrape_configs: []\n' >"$TMP/prometheus.yml"
DATA=${HISTORY:-$TMP/tsdb}
REUSE=0
[ -n "${HISTORY:-}" ] && [ -n "$(ls -A "$HISTORY" 2>/dev/null)" ] && REUSE=1
mkdir -p "$DATA"
if [ "${SERVER:-prometheus}" = victoriametrics ]; then
    _port=$(free_port)
    start_bg "$TMP/vm.log" victoria-metrics -storageDataPath="$DATA" -retentionPeriod=100y \
        -httpListenAddr="127.0.0.1:$_port" -loggerLevel=ERROR -search.maxUniqueTimeseries=$((2 * N + 1000))
    PROM_PID=$LAST_PID
    PROM_URL=http://127.0.0.1:$_port
    wait_http "$PROM_URL/health" 30 || { tail -n 5 "$TMP/vm.log" >&2; exit 1; }
else
    # A kept history is replayed from the WAL first: minutes at a million series.
    start_prometheus "$TMP/prometheus.yml" "$DATA" --web.enable-remote-write-receiver ||
        { [ "$REUSE" = 1 ] && wait_http "$PROM_URL/-/ready" 900; } ||
        { tail -n 5 "$TMP/prometheus.log" >&2; exit 1; }
fi
t0=$(date +%s.%N)
if [ "$REUSE" = 1 ]; then
    echo "history: the one kept in $HISTORY"
else
    "$RW" "$PROM_URL" --bench "$N" $((END - HIST)) $((END + 1)) 15 ||
        { echo "remote write failed" >&2; exit 1; }
    [ "${SERVER:-prometheus}" = victoriametrics ] && curl -sf "$PROM_URL/internal/force_flush" >/dev/null
    printf 'history: %d series x %d samples written in %.0f s\n' "$N" $((HIST / 15)) \
        "$(echo "$(date +%s.%N) - $t0" | bc)"
fi
t1=$(date +%s.%N)
# Let the server compact what it received first (up to 15 minutes): its background work would
# be counted as the cycles' CPU.
for _i in $(seq 1 90); do
    _c0=$(awk '{ print $14 + $15 }' "/proc/$PROM_PID/stat")
    sleep 10
    _c1=$(awk '{ print $14 + $15 }' "/proc/$PROM_PID/stat")
    [ $((_c1 - _c0)) -lt $((TCK / 2)) ] && break
done
printf 'server quiet after %d s\n' "$(echo "$(date +%s.%N) - $t1" | bc | cut -d. -f1)"

cat >"$TMP/hook.sh" <<'H'
#!/bin/sh
# Before each cycle: Prometheus' CPU ticks so far; stop after CYCLES cycles.
n=$(wc -l <"$OUT" 2>/dev/null || echo 0)
awk -v t="$GPURECLAIM_CYCLE_TIME" '{ print t, $14 + $15 }' "/proc/$PROM_PID/stat" >>"$OUT"
# The RSS samples' cycle marks (below): "cycle" before each, "end" after the last.
[ "$n" -lt "$CYCLES" ] && { echo cycle >>"$OUT.rss"; exit 0; }
echo end >>"$OUT.rss"
exit 1
H
chmod +x "$TMP/hook.sh"

table=""
for idle in $IDLES; do
    sed "s/^  idleTimer: 15m$/  idleTimer: ${idle}m/" "$TOP/bench/enforcer-rules.yaml" >"$TMP/rules-$idle.yaml"
    OUT=$TMP/cpu-$idle.txt
    rm -f "$OUT"
    export OUT PROM_PID CYCLES
    rm -f "$OUT.rss"
    /usr/bin/time -f 'maxrss_kib=%M' -o "$TMP/time-$idle.txt" "$ENF" run \
        --rules.file "$TMP/rules-$idle.yaml" --prometheus.url "$PROM_URL" --prometheus.timeout 300s \
        --prometheus.max-answer-bytes "${MAX_ANSWER:-134217728}" \
        --dry-run --state.file "$TMP/state-$idle.json" --audit.file "$TMP/audit-$idle.jsonl" \
        --at $((END - (CYCLES - 1) * 60)) --at.step 60s --enforce.interval 100ms \
        --at.before-cycle "$TMP/hook.sh" --log.level debug --web.listen-address 127.0.0.1:0 \
        >"$TMP/run-$idle.log" 2>&1 &
    tpid=$!
    # The enforcer is /usr/bin/time's child: its RSS every 0.2 s, each cycle's after a line
    # "cycle" (the hook's), into $OUT.rss.
    epid=""
    while [ -z "$epid" ] && kill -0 "$tpid" 2>/dev/null; do
        epid=$(cat "/proc/$tpid/task/$tpid/children" 2>/dev/null | awk '{ print $1 }')
        [ -n "$epid" ] || sleep 0.05
    done
    while [ -n "$epid" ] && [ -r "/proc/$epid/status" ]; do
        awk '/^VmRSS:/ { print $2 }' "/proc/$epid/status" >>"$OUT.rss" 2>/dev/null
        sleep 0.2
    done
    wait "$tpid"
    # Per cycle: the largest sample between its "cycle" line and the next (or "end"); "?"
    # for a cycle shorter than the sampling.
    crss=$(awk '/^(cycle|end)/ { if (k) print c ? int(m / 1024) : "?"; k++; m = c = 0 }
                /^end/ { exit } /^[0-9]/ { c++; if ($1 + 0 > m) m = $1 }' "$OUT.rss" 2>/dev/null)
    rss=$(sed -n 's/^maxrss_kib=//p' "$TMP/time-$idle.txt")
    walls=$(sed -n 's/.*cycle done in \([0-9.]*\) s.*/\1/p' "$TMP/run-$idle.log")
    cpus=$(awk -v tck="$TCK" 'NR > 1 { printf "%.2f\n", ($2 - prev) / tck } { prev = $2 }' "$OUT")
    reads=$(grep -c "proof incremental" "$TMP/run-$idle.log")
    k=0
    for w in $walls; do
        k=$((k + 1))
        c=$(echo "$cpus" | sed -n "${k}p")
        m=$(echo "$crss" | sed -n "${k}p")
        printf '  %s min, cycle %d (%s): wall %.3f s, prometheus CPU %s s, peak RSS %s MiB\n' "$idle" \
            "$k" "$([ $k -eq 1 ] && echo cold || echo steady)" "$w" "${c:-?}" "${m:-?}"
    done
    srss=$(echo "$crss" | sed 1d | grep -v '?' | sort -n | tail -n 1)
    cold=$(echo "$walls" | head -n 1)
    swall=$(echo "$walls" | sed 1d | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    scpu=$(echo "$cpus" | sed 1d | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    ccpu=$(echo "$cpus" | head -n 1)
    printf '  %s min: cold %.2f s (prometheus CPU %s s), steady median %.3f s (prometheus CPU %s s), peak RSS %d MiB (steady cycles %s MiB), %d incremental reads\n' \
        "$idle" "$cold" "$ccpu" "$swall" "$scpu" $((rss / 1024)) "${srss:-?}" "$reads"
    eval "W_$idle=$swall C_$idle=$scpu R_$idle=$rss"
    table="$table
| $N | ${idle} min | $(printf %.2f "$cold") s / ${ccpu} s | $(printf %.3f "$swall") s | ${scpu} s | $((rss / 1024)) MiB |"
done
stop_pid "$PROM_PID"
printf 'load after: %s\n' "$(uptime | sed 's/.*load average: //')"
printf '\n| workloads | idle timer | cold cycle: wall / Prometheus CPU | steady wall (median) | steady Prometheus CPU (median) | enforcer peak RSS |\n|---|---|---|---|---|---|%s\n' "$table"
set -- $IDLES
if [ $# -ge 2 ]; then
    eval "w1=\$W_$1 w2=\$W_$2 c1=\$C_$1 c2=\$C_$2 r1=\$R_$1 r2=\$R_$2"
    printf 'ratios %s min / %s min: steady wall %.2fx (target <= 2), steady Prometheus CPU %.2fx (target <= 2), peak RSS %.2fx (target < 2, and < 512 MiB: %d MiB)\n' \
        "$2" "$1" "$(echo "$w2 / $w1" | bc -l)" "$(echo "$c2 / ($c1 + 0.005)" | bc -l)" \
        "$(echo "$r2 / $r1" | bc -l)" $((r2 / 1024))
fi
