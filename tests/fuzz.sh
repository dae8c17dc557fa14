#!/bin/sh
# Run each libFuzzer target for SECONDS on a scratch copy of its seed corpus
# (fuzz/corpus/<name>), so new inputs never land in the repository, and report how many
# executions ran without a crash. usage: tests/fuzz.sh SECONDS BINARY...
# With FUZZ_RUNS=N in the environment each target instead runs until N executions (SECONDS
# is then ignored): `make fuzz FUZZ_RUNS=10000000` is the campaign run before a release.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
# Targets run one per core (xargs calls this script back with --one); the results are
# printed in the order given.
if [ "${1:-}" = --one ]; then
    secs=$2; bin=$3; exec >"$4/$(basename "$bin").out" 2>&1
else
    secs=$1; shift
    out=$(mktemp -d)
    for bin in "$@"; do
        case $bin in /*) ;; *) bin=$TOP/$bin ;; esac
        echo "$bin"
    done | xargs -P "${JOBS:-$(nproc 2>/dev/null || echo 2)}" -I{} sh "$0" --one "$secs" {} "$out"
    for bin in "$@"; do
        name=$(basename "$bin")
        cat "$out/$name.out" 2>/dev/null || echo "FAIL: fuzz/$name (did not run)"
    done
    rm -rf "$out"
    exit 0
fi
# One target (the --one call).
name=$(basename "$bin"); short=${name#fuzz_}
work=$(mktemp -d)
mkdir -p "$work/corpus"
[ -d "$TOP/fuzz/corpus/$short" ] && cp -r "$TOP/fuzz/corpus/$short/." "$work/corpus/"
if [ -n "${FUZZ_RUNS:-}" ]; then limit="-runs=$FUZZ_RUNS"; else limit="-max_total_time=$secs"; fi
start=$(date +%s)
(cd "$work" && "$bin" "$limit" -print_final_stats=1 -rss_limit_mb=1024 \
    -timeout=10 corpus >"$work/log" 2>&1)
rc=$?
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$')
if [ "$rc" -eq 0 ]; then
    echo "PASS: fuzz/$name (${execs:-?} executions in $(( $(date +%s) - start ))s, no crash)"
else
    echo "FAIL: fuzz/$name (exit $rc)"
    grep -A20 -m1 'ERROR\|SUMMARY' "$work/log" | head -30
    ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* 2>/dev/null
fi
rm -rf "$work"
