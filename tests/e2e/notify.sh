#!/bin/sh
# End to end: webhook notices (a rules file's notify:) from the real enforcer, acting through
# fake_kube on the cluster of tests/e2e/kube_actions.sh, to a Python receiver on 127.0.0.1
# (data/notify/receiver.py). rules.yaml.in sends slack text for rule 'scale', nothing but
# successful actions for 'suspend', nothing for 'evict' (events: []) and the json audit
# record (the default from defaults:) for 'delete'.
#   A  T0      notices; the receiver answers the first request 500: retried, all delivered;
#   C  T0+300  actions and the spared notebook;
#   H  T0      a fresh state against a receiver that never answers, from a `run` serving
#              /metrics with a queue of 3: the cycle completes while the worker is stuck in its
#              first request, the excess is dropped and counted, and SIGTERM ends the process
#              after the drain time instead of the 60 s webhook timeout.
# The URL's path is a secret: no log line may contain it.
. "$(dirname "$0")/../lib.sh"

KDATA=$TOP/tests/e2e/data/kube_actions
DATA=$TOP/tests/e2e/data/notify
ENF=$BIN/gpureclaim-enforcer
KUBE_FAKE=$(fake_bin fake_kube)
PROM_FAKE=$(fake_bin fake_prom)
T0=1700000000
SECRET=/hooks/T0001/B0002/XsEcReTpAtH

require python3 curl "$ENF" "$KUBE_FAKE" "$PROM_FAKE"
python3 "$KDATA/gen_matrix.py" "$TMP"
echo 's3cret-token' >"$TMP/token"
sed "s|@URLFILE@|$TMP/webhook-url|" "$DATA/rules.yaml.in" >"$TMP/rules.yaml"
RULES=$TMP/rules.yaml

start_fake_http "$TMP/prom.out" "$PROM_FAKE" 0 ok "$TMP/range.json" "$TMP/instant.json" ||
    { fail prom-start "$(cat "$TMP/prom.out")"; exit 1; }
PURL=$FAKE_URL
mkdir -p "$TMP/kube"
cp "$KDATA/cluster.json" "$TMP/kube/"
: >"$TMP/kube.faults"
# fake_kube: no fault; the real server could serve this (kept: the canned activity is keyed on the
# fixed pod names of data/kube_actions/cluster.json)
start_fake_kube kube "$TMP/kube" --token-file "$TMP/token" --faults-file "$TMP/kube.faults"
: >"$TMP/hooks.jsonl"
start_fake_http "$TMP/receiver.out" python3 "$DATA/receiver.py" "$TMP/hooks.jsonl" ok 1 ||
    { fail receiver-start "$(cat "$TMP/receiver.out")"; exit 1; }
echo "$FAKE_URL$SECRET" >"$TMP/webhook-url"
check checks-ok "$ENF" check "$RULES"

# enf LOG AT STATE [FLAGS...]: one `run --once` at time AT.
enf() {
    _log=$1 _at=$2 _state=$3; shift 3
    "$ENF" run --once --rules.file="$RULES" --prometheus.url="$PURL" --at="$_at" \
        --state.file="$_state" --audit.file="$TMP/audit.jsonl" --kube.api-url="$KURL" \
        --kube.token-file="$TMP/token" --kube.allow-insecure-credentials \
        --enforce.max-actions-per-hour=0 --no-dry-run \
        --notify.drain-timeout=20s "$@" >"$_log" 2>&1
}

# hooks FROM KIND PATTERN: posts since line FROM; KIND slack: text contains PATTERN;
# KIND json-EVENT: audit records of that event whose rule is PATTERN.
hooks() {
    python3 - "$TMP/hooks.jsonl" "$@" <<'PY'
import json, sys
path, start, kind, pat = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
n = 0
seen = set()  # a post answered 500 comes again: count each body once
for i, line in enumerate(open(path)):
    h = json.loads(line)
    if i < start or h["body"] in seen:
        continue
    seen.add(h["body"])
    assert h["content_type"] == "application/json", h
    b = json.loads(h["body"])
    if kind == "slack":
        n += "text" in b and pat in b["text"]
    elif "event" in b:
        n += b["event"] == kind[5:] and b["rule"] == pat
print(n)
PY
}
posts() { wc -l <"$TMP/hooks.jsonl" | tr -d ' '; }

# --- A: notices ---------------------------------------------------------------------------------
check A-exit-0 enf "$TMP/A.log" $T0 "$TMP/state.json"
# 3 slack notices (scale), 4 json notices (delete), none of suspend (events: [action]) or
# evict (events: []); 8 posts because the first one got a 500 and was sent again.
check A-posts test "$(posts)" = 8
check A-secret-path-used test "$(grep -c "\"path\": \"$SECRET\"" "$TMP/hooks.jsonl")" = 8
check A-slack-notices test "$(hooks 0 slack 'has been idle since')" = 3
check A-slack-names-rule test "$(hooks 0 slack "rule 'scale' plans its scale to zero")" = 3
check A-slack-how-to-keep test \
    "$(hooks 0 slack 'kubectl label -n apps deployment/notebook gpureclaim.io/exempt=true')" = 1
check A-slack-when test "$(hooks 0 slack 'at 2023-11-14T22:18:20Z')" = 3
check A-json-notices test "$(hooks 0 json-notice delete)" = 4
check A-no-suspend-evict test "$(( $(hooks 0 json-notice suspend) + $(hooks 0 json-notice evict) ))" = 0
# the json body is the audit line itself
python3 - "$TMP/hooks.jsonl" "$TMP/audit.jsonl" >"$TMP/A.same" <<'PY'
import json, sys
audit = set(l.rstrip("\n") for l in open(sys.argv[2]))
print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["body"] in audit))
PY
check A-json-is-audit-record test "$(cat "$TMP/A.same")" = 4

# --- C: actions and the spare -------------------------------------------------------------------
from=$(posts)
check C-exit-0 enf "$TMP/C.log" $((T0 + 300)) "$TMP/state.json"
check C-slack-spared test "$(hooks "$from" slack 'notebook-55d6-w4x5y is active again')" = 1
check C-slack-actions test "$(hooks "$from" slack 'was scaled to zero by rule')" = 2
check C-json-suspend test "$(hooks "$from" json-action suspend)" = 2
check C-json-delete test "$(hooks "$from" json-action delete)" = 4
check C-no-evict test "$(hooks "$from" json-action evict)" = 0
check C-posts test "$(( $(posts) - from ))" = 9

# --- H: a receiver that hangs, a queue of 3 -----------------------------------------------------
# C changed the cluster (pods deleted, evicted): a fresh fake_kube on the original data.
mkdir -p "$TMP/kube-h"
cp "$KDATA/cluster.json" "$TMP/kube-h/"
# fake_kube: as above (no fault; fixed pod names)
start_fake_kube kube-h "$TMP/kube-h" --token-file "$TMP/token" --faults-file "$TMP/kube.faults"
start_fake_http "$TMP/hang.out" python3 "$DATA/receiver.py" "$TMP/hang.jsonl" hang ||
    { fail hang-start "$(cat "$TMP/hang.out")"; exit 1; }
echo "$FAKE_URL$SECRET" >"$TMP/webhook-url" # read at each attempt: no restart needed
MPORT=$(free_port)
start_bg "$TMP/H.log" "$ENF" run --rules.file="$RULES" --prometheus.url="$PURL" --at=$T0 \
    --enforce.interval=1h --web.listen-address="127.0.0.1:$MPORT" \
    --state.file="$TMP/state-h.json" --audit.file="$TMP/audit-h.jsonl" --kube.api-url="$KURL" \
    --kube.token-file="$TMP/token" --kube.allow-insecure-credentials \
    --enforce.max-actions-per-hour=0 --no-dry-run \
    --notify.queue-size=3 --notify.timeout=60s --notify.drain-timeout=1s
RUN_H=$LAST_PID
metric() { sed -n "s/^$1 //p" "$TMP/H.metrics"; }
ok=false
for _i in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$MPORT/metrics" >"$TMP/H.metrics" 2>/dev/null &&
        [ "$(metric 'gpureclaim_enforcer_cycles_total{result="success"}')" = 1 ] &&
        [ -s "$TMP/hang.jsonl" ] && { ok=true; break; }
    sleep 0.1
done
# The cycle is done and audited all 7 notices while the first request still hangs: 3 held
# (one in flight), 4 dropped, none sent or failed.
check H-cycle-done $ok
check H-cycle-audited test "$(grep -c '"event":"notice"' "$TMP/audit-h.jsonl")" = 10
check H-queue-held test "$(metric gpureclaim_enforcer_notification_queue_length)" = 3
check H-dropped test "$(metric 'gpureclaim_enforcer_notifications_total{result="dropped"}')" = 4
check H-none-sent test "$(metric 'gpureclaim_enforcer_notifications_total{result="sent"}')" = 0
check H-one-request test "$(wc -l <"$TMP/hang.jsonl" | tr -d ' ')" = 1
if command -v promtool >/dev/null 2>&1; then
    check H-metrics-promtool sh -c "promtool check metrics <'$TMP/H.metrics' >'$TMP/promtool.out' 2>&1"
fi
# SIGTERM: the drain (1 s) ends, the hanging request is cancelled, the process exits well
# before the 60 s webhook timeout (30 s: a loaded machine exits slowly, and still well before
# that timeout).
kill "$RUN_H"
exited=false
for _i in $(seq 1 300); do
    kill -0 "$RUN_H" 2>/dev/null || { exited=true; break; }
    sleep 0.1
done
check H-shutdown-bounded $exited
wait "$RUN_H" 2>/dev/null
check H-shutdown-logged grep -q 'webhook notifications not delivered' "$TMP/H.log"

# --- the secret path is in no log ---------------------------------------------------------------
check no-secret-in-logs sh -c "! grep -l 'XsEcReTpAtH' '$TMP/A.log' '$TMP/C.log' '$TMP/H.log' '$TMP/H.metrics'"
finish
