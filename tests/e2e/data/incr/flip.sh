#!/bin/sh
# --at.before-cycle of the leader change in tests/e2e/enforcer_incremental.sh: at FLIP_AT,
# once `run` leads, another holder takes the Lease (a PUT with the resourceVersion read, as a
# replica's update) and the hook waits until `run` says it no longer leads, so that cycle runs
# as a standby; at the next cycle it waits until `run` leads again (the other holder's lease
# expired), so that cycle is the first of a new leadership. Before every cycle, `plan --at`
# that time; `run` is stopped (exit 1) after FLIP_AT + 3 cycles. Leadership is read from run's
# log (LOG): its metrics are published after each cycle, not while the hook runs.
# env: DIR, ENF, PROM_URL, RULES, FLIP_AT, STEP (seconds between cycles), KURL, LOG.
t=${GPURECLAIM_CYCLE_TIME%.*}
[ "$t" -gt $((FLIP_AT + 3 * STEP)) ] && exit 1
LEASE=$KURL/apis/coordination.k8s.io/v1/namespaces/gpureclaim/leases/gpureclaim-enforcer
leader() { # wait up to 20 s until run's log says it leads (1) or lost the Lease (0)
    case $1 in
    1) want=$2 pat="is now the leader" ;;
    *) want=1 pat="lost the lease" ;;
    esac
    for _ in $(seq 1 80); do
        [ "$(grep -c "$pat" "$LOG")" -ge "$want" ] && return 0
        sleep 0.25
    done
    echo "test: run's log did not say '$pat' ($want)" >&2
    return 1
}
if [ "$t" -eq "$FLIP_AT" ]; then
    leader 1 1 || exit 2
    curl -s -m 2 -H 'Authorization: Bearer tok-t' "$LEASE" | python3 -c '
import json, sys, time
l = json.load(sys.stdin)
l["spec"]["holderIdentity"] = "enf-other"
l["spec"]["leaseDurationSeconds"] = 2
now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
l["spec"]["acquireTime"] = l["spec"]["renewTime"] = now
json.dump(l, sys.stdout)' >"$DIR/lease.json" || exit 2
    curl -sf -m 2 -X PUT -H 'Authorization: Bearer tok-t' -H 'Content-Type: application/json' \
        --data-binary @"$DIR/lease.json" "$LEASE" >/dev/null || exit 2
    leader 0 || exit 2
    echo "test: the lease is another holder's at $t" >&2
elif [ "$t" -eq $((FLIP_AT + STEP)) ]; then
    leader 1 2 || exit 2
    echo "test: run leads again at $t" >&2
fi
"$ENF" plan --rules.file "$RULES" --prometheus.url "$PROM_URL" --at "$t" --output json \
    >"$DIR/plan.json" 2>>"$DIR/plans.err"
echo "@ $t" >>"$DIR/lead-plans.txt"
cat "$DIR/plan.json" >>"$DIR/lead-plans.txt"
exit 0
