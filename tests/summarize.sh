#!/bin/sh
# Sum the counts written by tests/run-suite.sh and print the one closing line CI reads.
# Exit status is non-zero when anything failed or when no test ran at all.
set -u
results=${RESULTS:-build/results}
passed=0; failed=0
for f in "$results"/*.count; do
    [ -e "$f" ] || continue
    read -r p q s <"$f"
    passed=$((passed + p)); failed=$((failed + q))
    printf '  %-28s %4d passed, %d failed  %5ss\n' "$(basename "$f" .count)" "$p" "$q" "${s:--}"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
