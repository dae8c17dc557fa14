#!/bin/sh
# Enforcer benchmark: one `plan` cycle over WORKLOADS (default 10000) workloads.
#
# Backfills 15 minutes of 15 s history at the fixed epoch 1700000000 (one in ten
# workloads busy, the rest idle), starts Prometheus on a free loopback port, then runs
# `plan --output json --stats` RUNS times (default 3) and prints for each: wall time, the
# HTTP requests made, the time spent fetching and deciding, and the peak RSS of the
# enforcer; then the median and range of the wall times and the machine load (wall times
# on a shared machine vary with it). CALLGRIND=1 adds one run under callgrind, whose
# instruction count does not depend on the load. ENF=path benchmarks another build.
# Target: at most 1 s per cycle. Numbers, not a pass/fail test.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SUITE=enforcer-bench
. "$TOP/tests/lib.sh"

WORKLOADS=${WORKLOADS:-10000}
RUNS=${RUNS:-3}
ENF=${ENF:-$TOP/bin/gpureclaim-enforcer}
DATA=$TOP/tests/e2e/data/enforcer
AT=1700000000

for tool in prometheus promtool python3 "$ENF"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "enforcer bench: '$tool' not found" >&2; exit 1; }
done

echo "== enforcer plan benchmark: $WORKLOADS workloads, 15 m window at 15 s =="
t0=$(date +%s.%N)
python3 "$DATA/gen_history.py" bench "$WORKLOADS" "$TMP/history.om"
promtool tsdb create-blocks-from openmetrics "$TMP/history.om" "$TMP/tsdb" >"$TMP/promtool.log" 2>&1 ||
    { tail -n 5 "$TMP/promtool.log" >&2; exit 1; }
t1=$(date +%s.%N)
printf 'backfill: %s lines in %.1f s\n' "$(wc -l <"$TMP/history.om")" "$(echo "$t1 - $t0" | bc)"
printf 'global:\n  scrape_interval: 15s\nscrape_configs: []\n' >"$TMP/prometheus.yml"
start_prometheus "$TMP/prometheus.yml" "$TMP/tsdb" || { tail -n 5 "$TMP/prometheus.log" >&2; exit 1; }

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

printf 'load before: %s\n' "$(uptime | sed 's/.*load average: //')"
best="" walls="" rsss=""
for i in $(seq 1 "$RUNS"); do
    s=$(date +%s.%N)
    rss=$(run_rss "$TMP/plan.json" "$TMP/stats.txt" "$ENF" plan --rules.file \
        "$DATA/rules-always.yaml" --prometheus.url "$PROM_URL" --at $AT --output json --stats)
    e=$(date +%s.%N)
    wall=$(echo "$e - $s" | bc)
    stats=$(grep '^stats:' "$TMP/stats.txt" | sed 's/^stats: //')
    counts=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = sum(x["decision"] == "reclaim" for x in d)
print("%d decisions, %d reclaim, %d keep" % (len(d), r, len(d) - r))' "$TMP/plan.json")
    printf 'run %d: wall %.3f s, peak RSS %s KiB, %s; %s\n' "$i" "$wall" "$rss" "$counts" "$stats"
    if [ -z "$best" ] || [ "$(echo "$wall < $best" | bc)" -eq 1 ]; then best=$wall; fi
    walls="$walls $wall" rsss="$rsss $rss"
done
printf 'load after: %s\n' "$(uptime | sed 's/.*load average: //')"
# median MIN MAX of the numbers given
summary() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR] }'; }
set -- $(summary $walls)
printf 'wall over %d runs: median %.3f s, min %.3f s, max %.3f s\n' "$RUNS" "$1" "$2" "$3"
set -- $(summary $rsss)
printf 'peak RSS over %d runs: median %d KiB, min %d KiB, max %d KiB\n' "$RUNS" "$1" "$2" "$3"
if [ -n "${CALLGRIND:-}" ] && command -v valgrind >/dev/null 2>&1; then
    valgrind --tool=callgrind --callgrind-out-file="$TMP/callgrind.out" "$ENF" plan --rules.file \
        "$DATA/rules-always.yaml" --prometheus.url "$PROM_URL" --at $AT --output json \
        >/dev/null 2>"$TMP/callgrind.log"
    printf 'callgrind: %s instructions in the enforcer (Prometheus not included)\n' \
        "$(sed -n 's/.*Collected : //p' "$TMP/callgrind.log")"
fi
if [ "$(echo "$best <= 1" | bc)" -eq 1 ]; then verdict=met; else verdict=missed; fi
printf 'best wall time %.3f s per cycle (target <= 1 s: %s)\n' "$best" "$verdict"
