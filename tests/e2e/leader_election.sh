#!/bin/sh
# End to end: two enforcer replicas with --leader-elect against one fake Kubernetes API.
#
# The rule (data/leader/rules.yaml) scales one idle Deployment to zero after a 20 s notice;
# the evaluation clock starts at the canned history's end and advances (--at.advance). Each
# replica has its own bearer token, so the fake's request log tells who made each call.
#   1. exactly one replica becomes the leader; the standby makes no call but the Lease's;
#   2. the leader posts the notice and is killed (SIGKILL) before the action: the standby
#      takes over once the lease expires, adopts the notice from the object's annotation (it
#      does not need the dead replica's disk), sends no second notice, and scales the
#      Deployment exactly once, not before the time the notice announced;
#   3. a partition: the leader's API connection is cut through a proxy after its notice; it
#      stops being the leader (its own metric) before the standby acquires the Lease; the
#      standby then acts exactly once; when the partition heals the old leader stays a
#      standby and repeats nothing.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/leader
KA=$TOP/tests/e2e/data/kube_actions
ENF=$BIN/gpureclaim-enforcer
KUBE_FAKE=$(fake_bin fake_kube)
PROM_FAKE=$(fake_bin fake_prom)
T0=1700000000

require python3 curl "$ENF" "$KUBE_FAKE" "$PROM_FAKE"
python3 "$KA/gen_matrix.py" "$TMP"
for t in a b t; do echo "tok-$t" >"$TMP/tok-$t"; done

start_fake_http "$TMP/prom.out" "$PROM_FAKE" 0 ok "$TMP/range.json" "$TMP/instant.json" ||
    { fail prom-start "$(cat "$TMP/prom.out")"; exit 1; }
PURL=$FAKE_URL

# start_cluster NAME: a fresh fake API over cluster.json; sets KURL, KPORT and KLOG.
start_cluster() {
    mkdir -p "$TMP/$1"
    cp "$KA/cluster.json" "$TMP/$1/"
    # fake_kube: a request log by token, in order (who made each call); the takeover itself is also
    # on the real server (kube_real.sh, part 4)
    start_fake_kube "$1" "$TMP/$1" --token tok-t --token tok-a --token tok-b
}

# start_enf ID API_URL PHASE: replica enf-ID; sets PID_ID and PORT_ID.
start_enf() {
    _port=$(free_port)
    start_bg "$TMP/enf-$1.$3.log" env POD_NAME="enf-$1" "$ENF" run --rules.file="$DATA/rules.yaml" \
        --prometheus.url="$PURL" --at="$T0" --at.advance --enforce.interval=1s --no-dry-run \
        --state.file="$TMP/$1.$3.state" --audit.file="$TMP/$1.$3.audit" --kube.api-url="$2" \
        --kube.token-file="$TMP/tok-$1" --kube.allow-insecure-credentials --kube.timeout=2s \
        --enforce.max-actions-per-hour=0 --leader-elect --leader-elect.namespace=gpureclaim \
        --leader-elect.lease-duration=5s --leader-elect.renew-deadline=3s \
        --leader-elect.retry-period=1s --web.listen-address="127.0.0.1:$_port" --log.level=debug
    eval "PID_$1=$LAST_PID PORT_$1=$_port"
}

# Both reads allow 10 s: a one-shot check of either (lease-holder-is-leader, healed-a-is-standby)
# would fail on a loaded machine where an answer takes longer than a second.
is_leader() { # ID: 1, 0, or empty when its metrics cannot be read
    eval "_p=\$PORT_$1"
    curl -s -m 10 "http://127.0.0.1:$_p/metrics" 2>/dev/null |
        awk '$1 == "gpureclaim_enforcer_leader" { print $2 }'
}

holder() { # the Lease's holderIdentity, read with the test's own token
    curl -s -m 10 -H 'Authorization: Bearer tok-t' \
        "$KURL/apis/coordination.k8s.io/v1/namespaces/gpureclaim/leases/gpureclaim-enforcer" |
        python3 -c 'import json,sys
try: print(json.load(sys.stdin)["spec"]["holderIdentity"])
except Exception: print("")'
}

# calls WHAT [TOKEN]: count requests in $KLOG: notice (PATCH adding the notice annotation;
# not the record of an action, which adds actedAt to it), acted (that record), scale (PATCH
# .../scale), mutating (any non-GET outside the Lease API and the access reviews),
# lease-review (an access review of the Lease: every replica checks it at start).
calls() {
    python3 - "$KLOG" "$1" "${2:-}" <<'PY'
import json, sys
log, what, token = sys.argv[1], sys.argv[2], sys.argv[3]
n = 0
for line in open(log):
    r = json.loads(line)
    if token and r.get("token") != token:
        continue
    lease = "/apis/coordination.k8s.io/" in r["path"]
    # an access review (the permission check at start) reads, it changes nothing
    review = r["path"].endswith("/selfsubjectaccessreviews")
    body = r.get("body") if isinstance(r.get("body"), dict) else {}
    ann = (body.get("metadata") or {}).get("annotations") or {}
    notice = ann.get("gpureclaim.io/reclaim-notice")
    acted = bool(notice) and "actedAt" in json.loads(notice)
    if what == "notice":
        n += r["method"] == "PATCH" and bool(notice) and not acted
    elif what == "acted":
        n += r["method"] == "PATCH" and acted
    elif what == "scale":
        n += r["method"] == "PATCH" and r["path"].endswith("/deployments/web/scale")
    elif what == "mutating":
        n += r["method"] != "GET" and not lease and not review
    elif what == "lease-review":
        body = r.get("body") or {}
        ra = (body.get("spec") or {}).get("resourceAttributes") or {}
        n += review and ra.get("resource") == "leases"
print(n)
PY
}

one_leader() {
    _a=$(is_leader a) _b=$(is_leader b)
    [ "$_a$_b" = "10" ] && LEADER=a STANDBY=b && return 0
    [ "$_a$_b" = "01" ] && LEADER=b STANDBY=a && return 0
    return 1
}
has_notice() { [ "$(calls notice)" -ge 1 ]; }
has_scale() { [ "$(calls scale)" -ge 1 ]; }

# act_after FILE: the actAt of the notice the audit file records, and its action time.
audit_times() {
    python3 - "$@" <<'PY'
import json, sys
notice, acted = None, None
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        o = json.loads(line)
        if o["event"] == "notice" and o.get("act_after"):
            notice = o["act_after"]
        if o["event"] == "action" and o.get("result") == "ok":
            acted = o["time"]
print(notice or "-", acted or "-")
PY
}

# ---- 1 and 2: one leader; the leader killed between notice and action ---------------------
start_cluster c1
start_enf a "$KURL" c1
start_enf b "$KURL" c1
if wait_for 60 one_leader; then pass one-leader; else fail one-leader "a=$(is_leader a) b=$(is_leader b)"; fi
check lease-holder-is-leader [ "$(holder)" = "enf-$LEADER" ]
if wait_for 60 has_notice; then pass notice-sent; else fail notice-sent; fi
check notice-by-leader [ "$(calls notice "tok-$LEADER")" = 1 ]
check standby-quiet [ "$(calls mutating "tok-$STANDBY")" = 0 ]
# get, update and create on the Lease, asked by the standby too: it may lead next
check standby-checked-lease-permissions [ "$(calls lease-review "tok-$STANDBY")" = 3 ]
check leader-checked-lease-permissions [ "$(calls lease-review "tok-$LEADER")" = 3 ]
check nothing-acted-yet [ "$(calls scale)" = 0 ]

eval "kill -KILL \$PID_$LEADER"
KILLED=$LEADER
OTHER=$STANDBY
if wait_for 45 has_scale; then pass action-after-failover; else fail action-after-failover; fi
# three more of the new leader's cycles: had it a second action to do, it would have done it
eval "wait_cycles http://127.0.0.1:\$PORT_$OTHER/metrics 3" || fail after-failover-cycles
check acted-once [ "$(calls scale)" = 1 ]
check acted-by-new-leader [ "$(calls scale "tok-$OTHER")" = 1 ]
check no-second-notice [ "$(calls notice)" = 1 ]
check action-recorded-on-object [ "$(calls acted "tok-$OTHER")" = 1 ]
set -- $(audit_times "$TMP/$KILLED.c1.audit" "$TMP/$OTHER.c1.audit")
# Times are RFC 3339 in UTC: their string order is their time order.
if [ "$1" != "-" ] && [ "$2" != "-" ] && [ ! "$2" \< "$1" ]; then
    pass not-before-announced-time
else
    fail not-before-announced-time "announced $1, acted $2"
fi
eval "stop_pid \$PID_$OTHER"
stop_pid "$FAKE_PID"

# ---- 3: the leader partitioned from the API --------------------------------------------------
start_cluster c2
start_fake_http "$TMP/proxy-a.out" python3 "$DATA/proxy.py" "$KPORT" "$TMP/cut-a" ||
    { fail proxy-start; exit 1; }
PROXY_A=$FAKE_URL
start_enf a "$PROXY_A" c2
wait_for 60 sh -c "[ \"\$(curl -s -m 1 http://127.0.0.1:$PORT_a/metrics | awk '\$1==\"gpureclaim_enforcer_leader\"{print \$2}')\" = 1 ]" ||
    fail a-leads-first
start_enf b "$KURL" c2
if wait_for 60 has_notice; then pass partition-notice-sent; else fail partition-notice-sent; fi
check partition-notice-by-a [ "$(calls notice tok-a)" = 1 ]
touch "$TMP/cut-a"
# Which came first is read from the two replicas' own logs (millisecond wall-clock stamps on
# one machine): a's "lost the lease" and b's "is now the leader". Polling a's metrics and the
# Lease instead timed the poll: on a loaded machine one round (python, two curls) can outlast
# the 2 s between a's renew deadline and b's acquisition, and both would be seen at once.
lead_ts() { # LOG PATTERN: the ts= of the first line of LOG matching PATTERN, or nothing
    python3 - "$1" "$2" <<'PY'
import re, sys
for line in open(sys.argv[1], errors="replace"):
    if sys.argv[2] in line:
        m = re.search(r'ts=(\S+)', line)
        print(m.group(1) if m else "")
        break
PY
}
both_logged() {
    grep -q "'enf-a' lost the lease" "$TMP/enf-a.c2.log" &&
        grep -q "'enf-b' is now the leader" "$TMP/enf-b.c2.log"
}
wait_for 60 both_logged
A_OFF=$(lead_ts "$TMP/enf-a.c2.log" "'enf-a' lost the lease")
B_ON=$(lead_ts "$TMP/enf-b.c2.log" "'enf-b' is now the leader")
# RFC 3339 stamps of one format and zone compare as strings
if [ -n "$A_OFF" ] && [ -n "$B_ON" ] && [ "$A_OFF" \< "$B_ON" ]; then
    pass "partitioned-leader-stops-first (a stopped at $A_OFF, b acquired at $B_ON)"
else
    fail partitioned-leader-stops-first "a stopped at '$A_OFF', b acquired at '$B_ON'"
fi
if wait_for 45 has_scale; then pass partition-action; else fail partition-action; fi
rm -f "$TMP/cut-a"
# two more cycles of each, with a reaching the API again: nothing more may be done
wait_cycles "http://127.0.0.1:$PORT_a/metrics" 2 || fail healed-a-cycles
wait_cycles "http://127.0.0.1:$PORT_b/metrics" 2 || fail healed-b-cycles
check partition-acted-once [ "$(calls scale)" = 1 ]
check partition-acted-by-b [ "$(calls scale tok-b)" = 1 ]
check healed-a-is-standby [ "$(is_leader a)" = 0 ]
# a's only mutating calls are its notice: the annotation PATCH and its Event.
check healed-a-repeats-nothing [ "$(calls mutating tok-a)" = 2 ]

# A clean stop releases the Lease: once b has exited, the Lease is no longer b's (released:
# no holder, or a's already), so a takes over at its next retry, not after b's lease expires.
stop_pid "$PID_b"
check release-on-stop [ "$(holder)" != enf-b ]
if wait_for 30 sh -c "[ \"\$(curl -s -m 1 http://127.0.0.1:$PORT_a/metrics | awk '\$1==\"gpureclaim_enforcer_leader\"{print \$2}')\" = 1 ]"; then
    pass a-leads-after-release
else
    fail a-leads-after-release
fi
# a leads again; its own ledger still has its notice pending, but the object records b's
# action: nothing more is done in three of its cycles.
wait_cycles "http://127.0.0.1:$PORT_a/metrics" 3 || fail new-leader-cycles
check new-leader-reads-action-on-object [ "$(calls mutating tok-a)" = 2 ]
check still-acted-once [ "$(calls scale)" = 1 ]
finish
