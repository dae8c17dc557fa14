#!/bin/sh
# --at.before-cycle of the leader change in tests/e2e/enforcer_incremental.sh: at FLIP_AT,
# once `run` leads, another holder takes the Lease (a PUT with the resourceVersion read, as a
# replica's update) and the hook waits until `run` says it no longer leads, so that cycle runs
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
# lease_put HOLDER SECONDS: write the Lease's holder and duration. `run` renews the Lease
# every retry period (2 s here: GET, then PUT with what it read), so its write can land between this
# GET and PUT: the server then refuses ours with 409 (stale resourceVersion). A competing
# replica reads again and retries until its write wins; so does this, a bounded number of
# times, saying what it waited on.
# On a loaded machine (load 30 beside valgrind and builds) a request can also time out or the
# GET come back empty: that is a retry too, not the test's failure; only another answer is.
lease_put() {
    for try in $(seq 1 100); do
        curl -s -m 30 -H 'Authorization: Bearer tok-t' "$LEASE" >"$DIR/lease.get" ||
            { echo "test: the Lease's GET failed (curl $?), again" >&2; continue; }
        HOLDER=$1 SECS=$2 python3 -c '
import json, os, sys, time
l = json.load(sys.stdin)
l["spec"]["holderIdentity"] = os.environ["HOLDER"]
l["spec"]["leaseDurationSeconds"] = int(os.environ["SECS"])
now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
l["spec"]["acquireTime"] = l["spec"]["renewTime"] = now
json.dump(l, sys.stdout)' <"$DIR/lease.get" >"$DIR/lease.json" || return 1
        code=$(curl -s -m 30 -o "$DIR/lease.put" -w '%{http_code}' -X PUT \
            -H 'Authorization: Bearer tok-t' -H 'Content-Type: application/json' \
            --data-binary @"$DIR/lease.json" "$LEASE")
        case $code in
        200)
            echo "test: the Lease written (holder '$1') on try $try" >&2
            return 0
            ;;
        409) ;;
        000) echo "test: the Lease's PUT got no answer in 30 s, again" >&2 ;;
        *)
            echo "test: the Lease's PUT answered $code: $(cat "$DIR/lease.put")" >&2
            return 1
            ;;
        esac
    done
    echo "test: the Lease's PUT lost 100 races with run's renewal" >&2
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
