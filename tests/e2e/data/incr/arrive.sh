#!/bin/sh
# --at.before-cycle of tests/e2e/enforcer_incremental.sh: write what has arrived by the cycle
# time (GPURECLAIM_CYCLE_TIME) by remote write, reload the rules at RELOAD_AT, take the
# full-window evaluation `plan --at` of that moment, and stop `run` (exit 1) at STOP_AT so that
# the test can start it again.
# env: DIR (the test's files), RW (remote_write), ENF, PROM_URL (Prometheus or VictoriaMetrics),
# RULES, STOP_AT, RELOAD_AT, FLUSH_URL (VictoriaMetrics: its /internal/force_flush).
t=${GPURECLAIM_CYCLE_TIME%.*}
[ -n "${STOP_AT:-}" ] && [ "$t" -ge "$STOP_AT" ] && exit 1
awk -v t="$t" -v done="$(cat "$DIR/arrived")" \
    '$1 > done * 1000 && $1 <= t * 1000 { sub(/^[0-9]+ /, ""); print }' "$DIR/arrivals.txt" |
    "$RW" "$PROM_URL" || exit 2
# VictoriaMetrics makes what it received searchable after a flush.
[ -n "${FLUSH_URL:-}" ] && { curl -sf "$FLUSH_URL" >/dev/null || exit 2; }
echo "$t" >"$DIR/arrived"
if [ -n "${RELOAD_AT:-}" ] && [ "$t" -eq "$RELOAD_AT" ]; then
    # A longer idle timer for one rule: its selector is read in full again (the state does
    # not reach back far enough), the other selectors keep theirs.
    sed 's/^  idleTimer: 10m$/  idleTimer: 14m/' "$RULES" >"$RULES.new" && mv "$RULES.new" "$RULES"
fi
# plan's own read can fail (exit 3: Prometheus 2.42 has been seen to cut a remote-read stream
# short right after a remote write), and then it keeps every workload with query_error, which
# says nothing to compare run with: ask again, up to three times, and keep the last answer.
for try in 1 2 3; do
    "$ENF" plan --rules.file "$RULES" --prometheus.url "$PROM_URL" --at "$t" --output json \
        >"$DIR/plan.json" 2>>"$DIR/plans.err"
    [ $? -ne 3 ] && break
    echo "plan at $t: a query failed (try $try)" >>"$DIR/plans.err"
    sleep 1
done
echo "@ $t" >>"$DIR/plans.txt"
cat "$DIR/plan.json" >>"$DIR/plans.txt"
exit 0
