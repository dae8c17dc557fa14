#!/bin/sh
# End to end: `gpureclaim-enforcer run` plumbing against fake_prom in `ok` mode.
#
# `run` evaluates at wall-clock now by default, where canned data at a fixed epoch would
# only give stale decisions, so the test pins the evaluation time with --at. Checked: the
# self-metrics answer and pass `promtool check metrics`, cycles are counted, reclaim
# decisions are logged and exported with their idle-since time, a broken rules file keeps
# the old rules (reload_success 0, same hash) and logs its errors once, a fixed file is
# picked up, SIGHUP reloads a change the mtime check cannot see, SIGTERM exits 0.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/enforcer
ENF=$BIN/gpureclaim-enforcer
FAKE=${FAKE_PROM:-$(fake_bin fake_prom)}
AT=1700000000

require python3 curl "$ENF" "$FAKE"
python3 "$DATA/gen_matrix.py" "$TMP/range.json" "$TMP/instant.json" "$TMP/coverage.json" \
    "$TMP/subpoints.json" "$TMP/empty.json"
if ! start_fake_http "$TMP/fake.log" "$FAKE" -A present_over_time "$TMP/coverage.json" \
    -A 'vector(1)' "$TMP/subpoints.json" 0 ok \
    "$TMP/range.json" "$TMP/instant.json"; then
    fail setup "fake_prom did not start"
    exit 1
fi

# metric URL NAME_AND_LABELS: the value of one sample (empty when absent).
metric() {
    curl -s "$1" | python3 -c '
import sys
want = sys.argv[1]
for line in sys.stdin:
    if line.startswith(want + " "):
        print(line.split()[-1]); break' "$2"
}

# wait_metric URL SAMPLE VALUE [SECONDS]: poll until the sample has that value.
wait_metric() {
    _deadline=$(( $(date +%s) + ${4:-60} ))
    while [ "$(date +%s)" -le "$_deadline" ]; do
        [ "$(metric "$1" "$2")" = "$3" ] && return 0
        sleep 0.1
    done
    echo "$2 = '$(metric "$1" "$2")', want '$3'" >&2
    return 1
}

hash_of() {
    "$ENF" check "$1" | sed -n 's/.*hash \([0-9a-f]*\))$/\1/p'
}

# --- instance 1: 1 s interval ------------------------------------------------------------------
cp "$DATA/rules-always.yaml" "$TMP/rules.yaml"
HASH1=$(hash_of "$TMP/rules.yaml")
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
start_bg "$TMP/run1.log" "$ENF" run --rules.file "$TMP/rules.yaml" \
    --prometheus.url "http://127.0.0.1:$FAKE_PORT" --enforce.interval=1s \
    --web.listen-address "127.0.0.1:$PORT" --at $AT
RUN1=$LAST_PID
if ! wait_http "$URL" 60; then
    fail metrics-answer "$(tail -n 5 "$TMP/run1.log")"
    exit 1
fi
pass metrics-answer
ended_one() { [ "$(cycles_done "$URL")" -ge 1 ]; }
wait_for 60 ended_one || fail first-cycle "$(tail -n 5 "$TMP/run1.log")"
curl -s "$URL" >"$TMP/metrics1.txt"
check content-type sh -c "curl -sI '$URL' | grep -qi '^content-type: text/plain; version=0.0.4'"
if command -v promtool >/dev/null 2>&1; then
    if promtool check metrics <"$TMP/metrics1.txt" >"$TMP/promtool.txt" 2>&1; then
        pass promtool-check-metrics
    else
        fail promtool-check-metrics "$(head -n 5 "$TMP/promtool.txt")"
    fi
fi
c1=$(metric "$URL" 'gpureclaim_enforcer_cycles_total{result="success"}')
wait_cycles "$URL" 2
c2=$(metric "$URL" 'gpureclaim_enforcer_cycles_total{result="success"}')
check cycles-increase test "${c2:-0}" -gt "${c1:-0}"
check cycles-no-error test "$(metric "$URL" 'gpureclaim_enforcer_cycles_total{result="error"}')" = 0
check build-info grep -q '^gpureclaim_enforcer_build_info{version="[^"]*"} 1$' "$TMP/metrics1.txt"
check dry-run-default test "$(metric "$URL" gpureclaim_enforcer_dry_run)" = 1
check rules-info-hash grep -q "^gpureclaim_enforcer_rules_info{file=\"$TMP/rules.yaml\",version=\"gpureclaim/v1\",hash=\"$HASH1\"} 1\$" "$TMP/metrics1.txt"
check reload-success-1 test "$(metric "$URL" gpureclaim_enforcer_rules_reload_success)" = 1
check decisions-gauge test "$(metric "$URL" 'gpureclaim_enforcer_decisions{rule="always",decision="reclaim",reason="idle"}')" = 1
check decisions-gauge-gap test "$(metric "$URL" 'gpureclaim_enforcer_decisions{rule="always",decision="keep",reason="gap"}')" = 1
n=$(metric "$URL" 'gpureclaim_enforcer_decisions_total{rule="always",decision="reclaim",reason="idle"}')
check decisions-counter test "${n:-0}" -ge 2
check idle-since test "$(metric "$URL" 'gpureclaim_enforcer_workload_idle_since_timestamp_seconds{rule="always",namespace="ml",pod="idle"}')" = 1699998200
n=$(metric "$URL" gpureclaim_enforcer_prometheus_requests_total)
check prometheus-requests test "${n:-0}" -ge 4
check prometheus-errors test "$(metric "$URL" gpureclaim_enforcer_prometheus_errors_total)" = 0
check rule-evaluation-ok test "$(metric "$URL" 'gpureclaim_enforcer_rule_evaluation_failed{rule="always"}')" = 0
# The fake offers no raw read (no /flags, no /api/v1/read): the rule took the PromQL plan, and
# the log says so once.
check rule-read-path test "$(metric "$URL" 'gpureclaim_enforcer_rule_read_path{rule="always",path="promql"}')" = 1
check rule-read-path-logged-once test "$(grep -c "rule 'always': activity read through promql (the PromQL plan)" "$TMP/run1.log")" = 1
check rule-evaluation-errors-0 test "$(metric "$URL" 'gpureclaim_enforcer_rule_evaluation_errors_total{rule="always"}')" = 0
check reclaim-logged grep -q 'msg="reclaim rule=always namespace=ml pod=idle reason=idle idle_since=2023-11-14T21:43:20Z dry_run=true' "$TMP/run1.log"

# A broken file: old rules stay in force, errors are logged once, the gauge drops to 0.
cp "$DATA/broken.yaml" "$TMP/rules.yaml"
check broken-reload-success-0 wait_metric "$URL" gpureclaim_enforcer_rules_reload_success 0 60
wait_cycles "$URL" 2 # more cycles and mtime checks: the errors must not be logged again
curl -s "$URL" >"$TMP/metrics2.txt"
check broken-keeps-hash grep -q "hash=\"$HASH1\"" "$TMP/metrics2.txt"
check broken-reloads-failure test "$(metric "$URL" 'gpureclaim_enforcer_rules_reloads_total{result="failure"}')" = 1
n=$(grep -c "rules.yaml:[0-9]*:[0-9]*: .*threshold" "$TMP/run1.log")
check broken-error-logged-once test "$n" -eq 1
c3=$(metric "$URL" 'gpureclaim_enforcer_cycles_total{result="success"}')
check broken-cycles-go-on test "${c3:-0}" -gt "${c2:-0}"

# A fixed file is picked up without a signal.
sed 's/threshold: 10/threshold: 12/' "$DATA/rules-always.yaml" >"$TMP/rules.yaml"
HASH2=$(hash_of "$TMP/rules.yaml")
check fixed-reload-success-1 wait_metric "$URL" gpureclaim_enforcer_rules_reload_success 1 60
check fixed-new-hash sh -c "curl -s '$URL' | grep -q 'hash=\"$HASH2\"'"
check fixed-reloads-success test "$(metric "$URL" 'gpureclaim_enforcer_rules_reloads_total{result="success"}')" = 1

kill -TERM "$RUN1"
wait "$RUN1"
check sigterm-exit-0 test $? -eq 0
check sigterm-stops-http sh -c "! curl -s -m 2 '$URL' >/dev/null"

# --- instance 2: SIGHUP reloads a change that mtime and size cannot reveal ----------------
cp "$DATA/rules-always.yaml" "$TMP/hup.yaml"
touch -d @1600000000 "$TMP/hup.yaml"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
start_bg "$TMP/run2.log" "$ENF" run --rules.file="$TMP/hup.yaml" \
    --prometheus.url="http://127.0.0.1:$FAKE_PORT" --enforce.interval=1h \
    --web.listen-address="127.0.0.1:$PORT" --at=$AT --no-dry-run \
    --state.file="$TMP/state.json" --audit.file="$TMP/audit.jsonl"
RUN2=$LAST_PID
wait_http "$URL" 60 || fail run2-start "$(tail -n 5 "$TMP/run2.log")"
check no-dry-run test "$(metric "$URL" gpureclaim_enforcer_dry_run)" = 0
# Same size, same mtime, different content.
sed 's/threshold: 10/threshold: 20/' "$DATA/rules-always.yaml" >"$TMP/hup.new"
cat "$TMP/hup.new" >"$TMP/hup.yaml"
touch -d @1600000000 "$TMP/hup.yaml"
HASH3=$(hash_of "$TMP/hup.yaml")
sleep 2.5
check hup-not-seen-before-signal sh -c "curl -s '$URL' | grep -q 'hash=\"$HASH1\"'"
kill -HUP "$RUN2"
check hup-new-hash wait_metric "$URL" "gpureclaim_enforcer_rules_info{file=\"$TMP/hup.yaml\",version=\"gpureclaim/v1\",hash=\"$HASH3\"}" 1 60
check hup-reload-success test "$(metric "$URL" gpureclaim_enforcer_rules_reload_success)" = 1
check hup-logged grep -q 'SIGHUP' "$TMP/run2.log"
kill -INT "$RUN2"
wait "$RUN2"
check sigint-exit-0 test $? -eq 0

# --- instance 3: a rule that cannot be evaluated is loud and never acted on ---------------
if start_fake_http "$TMP/fake-err.log" "$FAKE" -E workload_busy 0 ok "$TMP/range.json" \
    "$TMP/instant.json"; then
    PORT=$(free_port)
    URL="http://127.0.0.1:$PORT/metrics"
    start_bg "$TMP/run4.log" "$ENF" run --rules.file="$DATA/rules-always.yaml" \
        --prometheus.url="$FAKE_URL" --enforce.interval=1s --web.listen-address="127.0.0.1:$PORT" \
        --at=$AT
    RUN4=$LAST_PID
    wait_http "$URL" 60 || fail run4-start "$(tail -n 5 "$TMP/run4.log")"
    check rule-failed-gauge wait_metric "$URL" 'gpureclaim_enforcer_rule_evaluation_failed{rule="always"}' 1 60
    wait_cycles "$URL" 2
    n=$(metric "$URL" 'gpureclaim_enforcer_rule_evaluation_errors_total{rule="always"}')
    check rule-errors-counter test "${n:-0}" -ge 2
    check rule-failed-kept test "$(metric "$URL" 'gpureclaim_enforcer_decisions{rule="always",decision="keep",reason="query_error"}')" = 2
    check rule-failed-no-reclaim sh -c "! grep -q 'msg=\"reclaim ' '$TMP/run4.log'"
    n=$(grep -c "rule 'always' could not be evaluated" "$TMP/run4.log")
    check rule-failed-logged-once test "$n" -eq 1
    kill -TERM "$RUN4"
    wait "$RUN4"
else
    fail run4-start "fake_prom did not start"
fi

# A rules file that does not load at start is fatal.
"$ENF" run --rules.file "$DATA/broken.yaml" --prometheus.url "http://127.0.0.1:$FAKE_PORT" \
    --web.listen-address "127.0.0.1:$(free_port)" >"$TMP/run3.log" 2>&1
check broken-at-start-exit-1 test $? -eq 1

finish
