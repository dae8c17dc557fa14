#!/bin/sh
# Enforcer benchmark: one `plan` cycle over 1,000, 10,000 and 100,000 workloads (SIZES).
#
# For each size: backfills HISTORY seconds of history (default 1800, the rule's 30m lookback)
# at the fixed epoch 1700000000 with `promtool tsdb create-blocks-from openmetrics` (one sample
# every INTERVAL s, default 15: issue 19's shape, 121 samples per series;
# pod-i busy at 50 % when i % 10 == 0, idle at 1 % otherwise), starts Prometheus on a free
# loopback port, sends the activity query once to warm it, then runs
# the floor RUNS times (the instant query count_over_time(x[30m]) over every series: Prometheus
# reads each raw sample of the lookback once), then for each read path of PATHS (default
# "remote-read promql") `plan --output json --stats` RUNS times (default 3) with the rule in
# bench/enforcer-rules.yaml (15m idle timer, 1m step) and prints for each run: wall time,
# Prometheus' CPU time (utime + stime of its process),
# peak RSS of the enforcer, the HTTP requests and failures, the time spent fetching and
# deciding, and whether every decision is right (busy: keep/active; idle: reclaim/idle, or
# keep/cycle_cap past maxTerminationsPerCycle). Then the medians, the 100k/10k cost ratio and
# the machine load (wall times on a shared machine vary with it), and a table of the medians
# with their ratio to the floor. CALLGRIND=1 adds one run
# under callgrind at the middle size, whose instruction count does not depend on the load.
# ENF=path benchmarks another build. IDLE=minutes (default 15) sets the rule's idle timer (a
# copy of bench/enforcer-rules.yaml with that idleTimer), the lookback (twice it) and HISTORY
# (default the lookback): how memory and time grow with the idle timer (issue 26).
# Targets: 100,000 workloads with 0 failures, every decision right, peak RSS <= 256 MiB, a
# median wall time at most 12x the 10,000-workload one, and on the raw path (remote read) a
# cycle's wall time and Prometheus CPU time each at most 3x the floor (issue 19). Numbers, not a pass/fail test.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SUITE=enforcer-bench
. "$TOP/tests/lib.sh"

SIZES=${SIZES:-1000 10000 100000}
RUNS=${RUNS:-3}
INTERVAL=${INTERVAL:-15}
IDLE=${IDLE:-15}
# The rule's lookback: twice its idle timer.
LOOKBACK=$((IDLE * 120))
HISTORY=${HISTORY:-$LOOKBACK}
ENF=${ENF:-$TOP/bin/gpureclaim-enforcer}
DATA=$TOP/tests/e2e/data/enforcer
RULES=$TOP/bench/enforcer-rules.yaml
if [ "$IDLE" != 15 ]; then
    sed "s/^  idleTimer: 15m$/  idleTimer: ${IDLE}m/" "$RULES" >"$TMP/rules.yaml"
    RULES=$TMP/rules.yaml
fi
AT=1700000000
# Read paths compared (--prometheus.read-path); the first one's wall times give the ratio.
PATHS=${PATHS:-remote-read promql}
TCK=$(getconf CLK_TCK)
table=""

# prom_cpu: user + system CPU time of Prometheus so far, in clock ticks.
prom_cpu() { awk '{ print $14 + $15 }' "/proc/$PROM_PID/stat"; }

for tool in prometheus promtool python3 bc "$ENF"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "enforcer bench: '$tool' not found" >&2; exit 1; }
done

# run_rss OUT ERR COMMAND...: run with stdout/stderr to files, print the peak RSS in KiB
# (GNU time when installed, else getrusage of the child from a small Python wrapper).
run_rss() {
    _out=$1 _err=$2; shift 2
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f 'maxrss_kib=%M' -o "$TMP/time.txt" "$@" >"$_out" 2>"$_err"
        sed -n 's/^maxrss_kib=//p' "$TMP/time.txt"
    else
        python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "w") as o, open(sys.argv[2], "w") as e:
    subprocess.run(sys.argv[3:], stdout=o, stderr=e, check=False)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$_out" "$_err" "$@"
    fi
}

# median MIN MAX of the numbers given
summary() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR] }'; }

# check_plan N FILE: "right/total" decisions, from the workload number in the pod name.
check_plan() {
    python3 -c '
import json, sys
n, d = int(sys.argv[1]), json.load(open(sys.argv[2]))
seen, right = set(), 0
for x in d:
    pod = x["workload"]["pod"]
    i = int(pod.split("-")[1])
    seen.add(i)
    got = (x["decision"], x["reason"])
    if i % 10 == 0:
        right += got == ("keep", "active")
    else:
        right += got in (("reclaim", "idle"), ("keep", "cycle_cap"))
print("%d/%d" % (right if len(seen) == len(d) == n else 0, n))' "$1" "$2"
}

echo "== enforcer plan benchmark: ${IDLE}m idle timer, 1m step, ${HISTORY}s of history, samples every ${INTERVAL}s =="
printf 'load before: %s\n' "$(uptime | sed 's/.*load average: //')"
results=""
for n in $SIZES; do
    t0=$(date +%s.%N)
    rm -rf "$TMP/tsdb" "$TMP/history.om"
    python3 "$DATA/gen_history.py" bench "$n" "$TMP/history.om" "$INTERVAL" "$HISTORY"
    promtool tsdb create-blocks-from openmetrics "$TMP/history.om" "$TMP/tsdb" >"$TMP/promtool.log" 2>&1 ||
        { tail -n 5 "$TMP/promtool.log" >&2; exit 1; }
    lines=$(wc -l <"$TMP/history.om")
    rm -f "$TMP/history.om"
    t1=$(date +%s.%N)
    printf '%d workloads: backfill of %s lines in %.1f s\n' "$n" "$lines" "$(echo "$t1 - $t0" | bc)"
    printf 'global:\n  scrape_interval: 15s\nscrape_configs: []\n' >"$TMP/prometheus.yml"
    start_prometheus "$TMP/prometheus.yml" "$TMP/tsdb" || { tail -n 5 "$TMP/prometheus.log" >&2; exit 1; }
    curl -s -o /dev/null "$PROM_URL/api/v1/query_range" \
        --data-urlencode 'query=max_over_time(gpureclaim:workload_busy:ratio[60s])' \
        -d start=$((AT - 900)) -d end=$AT -d step=60
    # The floor: Prometheus reads every raw sample of the lookback once, and nothing more.
    fwalls="" fcpus=""
    for i in $(seq 1 "$RUNS"); do
        c0=$(prom_cpu) s=$(date +%s.%N)
        curl -s -o /dev/null "$PROM_URL/api/v1/query" \
            --data-urlencode "query=count_over_time(gpureclaim:workload_busy:ratio[${LOOKBACK}s])" \
            -d time=$AT
        e=$(date +%s.%N) c1=$(prom_cpu)
        fwalls="$fwalls $(echo "$e - $s" | bc)" fcpus="$fcpus $(echo "scale=3; ($c1 - $c0) / $TCK" | bc)"
    done
    set -- $(summary $fwalls); fwall=$1
    set -- $(summary $fcpus); fcpu=$1
    printf '  floor (instant count_over_time(x[%ss])): wall median %.3f s, prometheus CPU median %.2f s\n' \
        "$LOOKBACK" "$fwall" "$fcpu"
    table="$table
| $n | floor: instant \`count_over_time(x[${LOOKBACK}s])\` | $(printf %.2f "$fwall") s | $(printf %.2f "$fcpu") s | - | - |"
    for path in $PATHS; do
    walls="" rsss="" cpus="" ok=yes
    for i in $(seq 1 "$RUNS"); do
        c0=$(prom_cpu)
        s=$(date +%s.%N)
        rss=$(run_rss "$TMP/plan.json" "$TMP/stats.txt" "$ENF" plan --rules.file "$RULES" \
            --prometheus.url "$PROM_URL" --prometheus.timeout=120s --at $AT --output json --stats \
            --prometheus.read-path="$path")
        e=$(date +%s.%N)
        c1=$(prom_cpu)
        cpu=$(echo "scale=3; ($c1 - $c0) / $TCK" | bc)
        wall=$(echo "$e - $s" | bc)
        stats=$(grep '^stats:' "$TMP/stats.txt" | sed 's/^stats: //')
        right=$(check_plan "$n" "$TMP/plan.json" 2>/dev/null || echo "0/$n")
        [ "$right" = "$n/$n" ] || ok=no
        case $stats in *" failures=0 "*) ;; *) ok=no ;; esac
        printf '  %s run %d: wall %.3f s, prometheus CPU %.2f s, peak RSS %s KiB, decisions right %s; %s\n' \
            "$path" "$i" "$wall" "$cpu" "$rss" "$right" "$stats"
        walls="$walls $wall" rsss="$rsss $rss" cpus="$cpus $cpu"
    done
    set -- $(summary $walls)
    wmed=$1
    printf '  %s wall over %d runs: median %.3f s, min %.3f s, max %.3f s (%.1fx the floor)\n' "$path" \
        "$RUNS" "$1" "$2" "$3" "$(echo "$1 / $fwall" | bc -l)"
    set -- $(summary $cpus)
    cmed=$1
    printf '  %s prometheus CPU over %d runs: median %.2f s (%.1fx the floor)\n' "$path" "$RUNS" "$1" \
        "$(echo "$1 / ($fcpu + 0.001)" | bc -l)"
    set -- $(summary $rsss)
    rmax=$3
    printf '  %s peak RSS over %d runs: median %d KiB, max %d KiB (target <= 262144 KiB)\n' "$path" "$RUNS" "$1" "$3"
    printf '  %s every decision right and 0 failures in every run: %s\n' "$path" "$ok"
    [ "$path" = "${PATHS%% *}" ] && results="$results $n:$wmed"
    table="$table
| $n | plan, --prometheus.read-path=$path | $(printf %.2f "$wmed") s ($(printf %.1f "$(echo "$wmed / $fwall" | bc -l)")x) | $(printf %.2f "$cmed") s ($(printf %.1f "$(echo "$cmed / ($fcpu + 0.001)" | bc -l)")x) | $((rmax / 1024)) MiB | $ok |"
    done
    if [ -n "${CALLGRIND:-}" ] && [ "$n" = 10000 ] && command -v valgrind >/dev/null 2>&1; then
        valgrind --tool=callgrind --callgrind-out-file="$TMP/callgrind.out" "$ENF" plan \
            --rules.file "$RULES" --prometheus.url "$PROM_URL" --prometheus.timeout=120s --at $AT \
            --output json >/dev/null 2>"$TMP/callgrind.log"
        printf '  callgrind: %s instructions in the enforcer (Prometheus not included)\n' \
            "$(sed -n 's/.*Collected : //p' "$TMP/callgrind.log")"
    fi
    stop_pid "$PROM_PID"
done
printf 'load after: %s\n' "$(uptime | sed 's/.*load average: //')"
printf '\n| workloads | what | wall (x floor) | Prometheus CPU (x floor) | enforcer peak RSS | decisions right |\n|---|---|---|---|---|---|%s\n' "$table"
w10=$(printf '%s\n' $results | sed -n 's/^10000://p')
w100=$(printf '%s\n' $results | sed -n 's/^100000://p')
if [ -n "$w10" ] && [ -n "$w100" ]; then
    ratio=$(echo "scale=2; $w100 / $w10" | bc)
    if [ "$(echo "$ratio <= 12" | bc)" -eq 1 ]; then verdict=met; else verdict=missed; fi
    printf 'cost of 100,000 workloads / 10,000 (median wall): %sx (target <= 12x: %s)\n' "$ratio" "$verdict"
fi
