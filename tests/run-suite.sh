#!/bin/sh
# Run one test suite, keep its log, and record how many tests passed and failed.
#
# usage: tests/run-suite.sh NAME COMMAND [ARGS...]
# Every suite prints "PASS: ..." / "FAIL: ..." lines on stdout. A suite that exits non-zero
# without printing any FAIL line (a crash, a sanitizer abort, a missing binary) counts as one
# failure, so nothing that breaks can pass unnoticed. Counts, and the suite's wall-clock
# seconds (CI has a time budget, so the summary shows where it goes), go to $RESULTS/NAME.count.
set -u
name=$1; shift
results=${RESULTS:-build/results}
mkdir -p "$results"
log="$results/$name.log"
start=$(date +%s)
"$@" >"$log" 2>&1
rc=$?
seconds=$(($(date +%s) - start))
passed=$(grep -c '^PASS: ' "$log")
failed=$(grep -c '^FAIL: ' "$log")
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
    echo "FAIL: $name (exit status $rc without a FAIL line)" >>"$log"
    failed=1
fi
echo "$passed $failed $seconds" >"$results/$name.count"
grep -E '^(PASS|FAIL): ' "$log" | sed "s|^|[$name] |"
if [ "$failed" -ne 0 ]; then
    echo "---- $name: last lines of $log ----"
    tail -n 40 "$log"
fi
exit 0
