#!/bin/sh
# --at.before-cycle of the leader change in tests/e2e/enforcer_incremental.sh: at FLIP_AT,
# once `run` leads, another holder takes the Lease (a merge PATCH, which no renewal of run's can
# race) and the hook waits until `run` says it no longer leads, so that cycle runs
# as a standby. The other holder's lease is long (an hour), so the standby cycle cannot turn
# into a leading one however slow the machine is; at the next cycle the other holder releases
# it (as client-go's ReleaseOnCancel: no holder, 1 s) and the hook waits until `run` leads
# again, so that cycle is the first of a new leadership. Before every cycle, `plan --at` that
# time; `run` is stopped (exit 1) after FLIP_AT + 3 cycles. Leadership is read from run's log
# (LOG): its metrics are published after each cycle, not while the hook runs.
# env: DIR, ENF, PROM_URL, RULES, FLIP_AT, STEP (seconds between cycles), KURL, LOG.
t=${GPURECLAIM_CYCLE_TIME%.*}
[ "$t" -gt $((FLIP_AT + 3 * STEP)) ] && exit 1
LEASE=$KURL/apis/coordination.k8s.io/v1/namespaces/gpureclaim/leases/gpureclaim-enforcer
leader() { # wait up to 120 s until run's log says it leads (1) or lost the Lease (0)
    case $1 in
    1) want=$2 pat="is now the leader" ;;
    *) want=1 pat="lost the lease" ;;
    esac
    for _ in $(seq 1 480); do
        [ "$(grep -c "$pat" "$LOG")" -ge "$want" ] && return 0
        sleep 0.25
    done
    echo "test: run's log did not say '$pat' ($want) in 120 s" >&2
    return 1
}
# lease_put HOLDER SECONDS: write the Lease's holder and duration in one merge PATCH (as
# `kubectl patch lease` would), with no resourceVersion: the server applies it to the object it
# holds, so it cannot lose a race with run's renewal. (A GET-then-PUT did: run renews every
# retry period, GET then PUT, and its write could land between ours; under `stress-ng --cpu 2`
# beside a make check it lost 100 tries in a row.) run's next PUT then carries a stale
# resourceVersion, gets 409, and its next GET reads the other holder.
# Only a transport failure is tried again (a request timed out or came back empty on a loaded
# machine); the PATCH is idempotent, so one that was applied but not answered is harmless.
lease_put() {
    now=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
    printf '{"spec":{"holderIdentity":"%s","leaseDurationSeconds":%d,"acquireTime":"%s","renewTime":"%s"}}' \
        "$1" "$2" "$now" "$now" >"$DIR/lease.json"
    for try in $(seq 1 10); do
        code=$(curl -s -m 30 -o "$DIR/lease.put" -w '%{http_code}' -X PATCH \
            -H 'Authorization: Bearer tok-t' -H 'Content-Type: application/merge-patch+json' \
            --data-binary @"$DIR/lease.json" "$LEASE")
        case $code in
        200)
            echo "test: the Lease written (holder '$1') on try $try" >&2
            return 0
            ;;
        000) echo "test: the Lease's PATCH got no answer in 30 s, again" >&2 ;;
        *)
            echo "test: the Lease's PATCH answered $code: $(cat "$DIR/lease.put")" >&2
            return 1
            ;;
        esac
    done
    echo "test: the Lease's PATCH got no answer 10 times" >&2
    return 1
}
if [ "$t" -eq "$FLIP_AT" ]; then
    leader 1 1 || exit 2
    lease_put enf-other 3600 || exit 2
    leader 0 || exit 2
    echo "test: the lease is another holder's at $t" >&2
elif [ "$t" -eq $((FLIP_AT + STEP)) ]; then
    lease_put "" 1 || exit 2
    leader 1 2 || exit 2
    echo "test: run leads again at $t" >&2
fi
"$ENF" plan --rules.file "$RULES" --prometheus.url "$PROM_URL" --at "$t" --output json \
    >"$DIR/plan.json" 2>>"$DIR/plans.err"
echo "@ $t" >>"$DIR/lead-plans.txt"
cat "$DIR/plan.json" >>"$DIR/lead-plans.txt"
exit 0
