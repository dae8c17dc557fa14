#!/bin/sh
# End to end: `gpureclaim-enforcer plan` and `explain` against a real VictoriaMetrics (Debian's
# victoria-metrics 1.79), with the same backfilled history, scenarios and expected decisions
# as tests/e2e/enforcer_plan.sh against Prometheus.
#
# The OpenMetrics history of gen_history.py (seconds) is imported through
# /api/v1/import/prometheus with millisecond timestamps, then /internal/force_flush makes it
# searchable. Differences that change an expected answer, each asserted below:
# - NaN samples are dropped at ingestion: the "nan" workload has a 60 s hole instead, and is
#   kept for a gap instead of not_a_number (still kept);
# - rollup windows are left-open, (t - step, t], so went-idle's idle run starts one sample
#   later than with Prometheus 2.x's closed windows;
# - near "now", vmselect rewrites the newest points of a range answer with older values
#   (-search.latencyOffset, 30 s by default): the enforcer refuses such queries (the rule
#   fails loudly, nothing is reclaimed) and decides correctly with -search.latencyOffset=0s.
# Those checks force the PromQL plan (--prometheus.read-path=promql). By default a rule whose
# activity is a selector reads raw samples through /api/v1/export on VictoriaMetrics: the
# same decisions (checked below), closed steps as on Prometheus 2.x, and no rewritten points,
# so the default -search.latencyOffset does not get in the way.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/enforcer
ENF=$BIN/gpureclaim-enforcer
AT=1700000000

require victoria-metrics python3 curl "$ENF"

# The PromQL plan (forced: on VictoriaMetrics a selector rule would read /api/v1/export).
plan() {
    "$ENF" plan --rules.file="$DATA/rules.yaml" --prometheus.url "$VM_URL" \
        --prometheus.read-path=promql "$@"
}

python3 "$DATA/gen_history.py" scenario "$TMP/history.om"
# The same expectations, except that a NaN sample is a missing one here.
python3 "$DATA/gen_history.py" expect | python3 -c '
import json, sys
e = json.load(sys.stdin)
for rule in e.values():
    rule["nan"] = ["keep", "gap"]
json.dump(e, sys.stdout)' >"$TMP/expect.json"

# --- history at a fixed epoch, VictoriaMetrics with its default flags ---------------------
if ! start_vm vm; then
    fail vm-ready "$(tail -n 5 "$TMP/vm.log")"
    exit 1
fi
pass vm-ready
check vm-import vm_import "$TMP/history.om"
n=$(curl -s "$VM_URL/api/v1/query" --data-urlencode \
    'query=count_over_time(gpureclaim:workload_busy:ratio{pod="nan"}[20m])' -d time=$AT |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
# 80 samples in (END-20m, END], 3 of them NaN.
check vm-drops-nan test "$n" = 77

plan --at $AT --output json >"$TMP/plan.json" 2>"$TMP/plan.err"
rc=$?
check plan-json-exit-0 test "$rc" -eq 0
check plan-json-no-stderr test ! -s "$TMP/plan.err"
SUITE=$SUITE python3 "$DATA/check_plan.py" "$TMP/plan.json" "$TMP/expect.json" || TEST_FAILED=$((TEST_FAILED + 1))
got=$(python3 -c '
import json, sys
for d in json.load(open(sys.argv[1])):
    if d["rule"] == "always" and d["workload"]["pod"] in ("went-idle", "nan"):
        print(d["workload"]["pod"], d["idleSince"], d["window"]["samples"], d["detail"])
' "$TMP/plan.json")
# Left-open windows: the step ending at END-1185 holds only the idle sample at END-1185.
check plan-json-idle-since sh -c 'echo "$1" | grep -q "^went-idle 2023-11-14T21:53:35Z 61 "' sh "$got"
check plan-json-nan-is-gap sh -c 'echo "$1" | grep -q "^nan None 58 no data from 2023-11-14T22:03:05Z to 2023-11-14T22:04:05Z"' sh "$got"

plan --at $AT >"$TMP/plan.txt" 2>/dev/null
check plan-table-summary grep -q '^28 workloads: 5 reclaim, 23 keep (8 active, 2 no_data, 2 too_young, 4 gap, 2 stale, 2 exempt, 3 not_needed); dry run: reported only$' "$TMP/plan.txt"
plan --at $AT --output json --stats >/dev/null 2>"$TMP/stats.txt"
# One request per distinct query, not per workload (28 here), and none failed.
n=$(sed -n 's/.* requests=\([0-9]*\) failures=0 .*/\1/p' "$TMP/stats.txt")
check plan-stats-requests test "${n:-99}" -le 8

explain() {
    "$ENF" explain --rules.file "$DATA/rules.yaml" --prometheus.url="$VM_URL" --at $AT \
        --prometheus.read-path=promql "$@"
}
explain --rule always --workload '{pod="gappy"}' >"$TMP/explain-gappy.txt" 2>&1
# The raw hole runs from the sample at 22:05:20 to the one at 22:08:20; Prometheus 2.x's closed
# windows carry the first into the next step and report 2m45s.
check explain-gappy-reason grep -q 'kept: no data for 3m between 22:05:20 and 22:08:20' "$TMP/explain-gappy.txt"
explain --rule always --workload 'pod="burst"' >"$TMP/explain-burst.txt" 2>&1
check explain-burst-reason grep -q 'kept: 1 of 61 points at or above 10 % (max 80 % at 22:08:20)' "$TMP/explain-burst.txt"

# An expression as activity (a subquery): MetricsQL's inner selectors look back about one
# scrape interval, not Prometheus' 5 minutes, so raw holes still show as gaps here.
sed 's/^  policy: Always$/  policy: Always\n  queries:\n    activity: max by (namespace, pod) (gpureclaim:workload_busy:ratio)/' \
    "$DATA/rules.yaml" >"$TMP/rules-expr.yaml"
"$ENF" plan --rules.file "$TMP/rules-expr.yaml" --prometheus.url "$VM_URL" --at $AT --output json \
    >"$TMP/plan-expr.json" 2>/dev/null
python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))
json.dump({"always": e["always"]}, open(sys.argv[2], "w"))' "$TMP/expect.json" "$TMP/expect-always.json"
python3 -c '
import json, sys
json.dump([d for d in json.load(open(sys.argv[1])) if d["rule"] == "always"], open(sys.argv[2], "w"))
' "$TMP/plan-expr.json" "$TMP/plan-expr-always.json"
SUITE=$SUITE-expr python3 "$DATA/check_plan.py" "$TMP/plan-expr-always.json" "$TMP/expect-always.json" ||
    TEST_FAILED=$((TEST_FAILED + 1))

# An answer over the cap fails the rule loudly: a message naming the cap, nothing reclaimed.
plan --at $AT --output json --prometheus.max-answer-bytes=1024 >"$TMP/plan-cap.json" 2>"$TMP/plan-cap.err"
rc=$?
check over-cap-message grep -q 'prometheus answer too large: its series need more than the cap of 1024 bytes' "$TMP/plan-cap.err"
check over-cap-no-reclaim sh -c '! grep -q "\"decision\": *\"reclaim\"" "$1"' sh "$TMP/plan-cap.json"
check over-cap-exit-nonzero test "$rc" -ne 0

# --- raw samples through /api/v1/export (the default for selectors on VictoriaMetrics) -------
"$ENF" plan --rules.file="$DATA/rules.yaml" --prometheus.url "$VM_URL" --at $AT --output json \
    --stats >"$TMP/plan-export.json" 2>"$TMP/stats-export.txt"
check export-exit-0 test $? -eq 0
# /flags, one export (both rules have the same selector), allocation and pending; and no
# warning on stderr.
check export-stats grep -q '^stats: .* requests=4 failures=0 .* read=always:export,pressure:export$' "$TMP/stats-export.txt"
check export-stderr-only-stats test "$(wc -l <"$TMP/stats-export.txt")" -eq 1
SUITE=$SUITE-export python3 "$DATA/check_plan.py" "$TMP/plan-export.json" "$TMP/expect.json" ||
    TEST_FAILED=$((TEST_FAILED + 1))
# The same decisions and reasons as the PromQL plan; idleSince may differ by a sample (raw
# steps are closed like Prometheus 2.x's, MetricsQL's rollups left-open), not the decision.
python3 - "$TMP/plan.json" "$TMP/plan-export.json" <<'PY' >"$TMP/export.diff"
import json, sys
def key(f):
    return {(d["rule"], json.dumps(d["workload"], sort_keys=True)): (d["decision"], d["reason"])
            for d in json.load(open(f))}
a, b = key(sys.argv[1]), key(sys.argv[2])
for k in sorted(set(a) | set(b)):
    if a.get(k) != b.get(k):
        print(k, a.get(k), b.get(k))
PY
check export-same-decisions-as-promql test ! -s "$TMP/export.diff"

# --- under a path prefix, as a cluster's vmselect is read (.../select/0/prometheus) ----------
# The single-node server serves the same API under /prometheus/ (app/vmselect/main.go), but
# not its /flags page, as a vmselect under a tenant path does not: the server is then not
# known to be VictoriaMetrics, a selector rule tries remote read, which it refuses, and every
# workload keeps. With --prometheus.read-path=export (docs/tsdb-engines.md) the decisions equal
# those read at the root, on both read paths.
"$ENF" plan --rules.file="$DATA/rules.yaml" --prometheus.url "$VM_URL/prometheus" --at $AT \
    --output json >"$TMP/plan-prefix-auto.json" 2>"$TMP/plan-prefix-auto.err"
check prefix-unprobed-exit-3 test $? -eq 3
check prefix-unprobed-remote-read-refused grep -q 'remote read: HTTP 400 from' "$TMP/plan-prefix-auto.err"
check prefix-unprobed-no-reclaim sh -c '! grep -q "\"decision\": *\"reclaim\"" "$1"' sh "$TMP/plan-prefix-auto.json"
"$ENF" plan --rules.file="$DATA/rules.yaml" --prometheus.url "$VM_URL/prometheus" --at $AT \
    --prometheus.read-path=export --output json --stats >"$TMP/plan-prefix-export.json" \
    2>"$TMP/stats-prefix.txt"
check prefix-export-exit-0 test $? -eq 0
check prefix-export-read-path grep -q 'read=always:export,pressure:export$' "$TMP/stats-prefix.txt"
plan --prometheus.url "$VM_URL/prometheus" --at $AT --output json >"$TMP/plan-prefix.json" 2>/dev/null
check prefix-promql-exit-0 test $? -eq 0
check prefix-same-decisions sh -c 'cmp -s "$1" "$2" && cmp -s "$3" "$4"' sh "$TMP/plan-export.json" \
    "$TMP/plan-prefix-export.json" "$TMP/plan.json" "$TMP/plan-prefix.json"
got=$(python3 -c '
import json, sys
for d in json.load(open(sys.argv[1])):
    if d["rule"] == "always" and d["workload"]["pod"] == "went-idle":
        print(d["idleSince"])' "$TMP/plan-export.json")
# Closed steps on raw samples: the idle run starts where it does on Prometheus 2.x.
check export-idle-since test "$got" = 2023-11-14T21:53:50Z
"$ENF" plan --rules.file="$DATA/rules.yaml" --prometheus.url "$VM_URL" --at $AT --output json \
    --prometheus.max-answer-bytes=1024 >"$TMP/plan-export-cap.json" 2>"$TMP/plan-export-cap.err"
check export-over-cap-exit-3 test $? -eq 3
check export-over-cap-message grep -q 'activity query (export): export: export answer line 1: longer than the cap of 1024 bytes' "$TMP/plan-export-cap.err"
check export-over-cap-no-reclaim sh -c '! grep -q "\"decision\": *\"reclaim\"" "$1"' sh "$TMP/plan-export-cap.json"
stop_pid "$VM_PID"

# --- over -search.maxUniqueTimeseries: the 422 names the setting, nothing is reclaimed -------
# A fresh data directory: a current release keeps its tag-filter cache across a restart, and a
# cached lookup is not counted against the limit. v1.153.0 does not apply the limit to these
# queries at all (it answered 5 series of one name under a limit of 2): there the answer must
# then be whole, the decisions those of the unlimited server.
if start_vm vm-limit -search.maxUniqueTimeseries=2 && vm_import "$TMP/history.om"; then
    plan --at $AT --output json >"$TMP/plan-maxts.json" 2>"$TMP/plan-maxts.err"
    rc=$?
    if [ "$rc" -ne 0 ] || [ "$TSDB_GEN" = debian ]; then
        check max-unique-timeseries-exit-3 test "$rc" -eq 3
        check max-unique-timeseries-named grep -q -- "prometheus error (422, over the server's -search.maxUniqueTimeseries): error when executing" "$TMP/plan-maxts.err"
        # The allocation's query fails too, so no workload is known: none listed, none reclaimed.
        check max-unique-timeseries-no-reclaim python3 -c '
import json, sys
sys.exit(any(x["decision"] != "keep" or x["reason"] != "query_error" for x in json.load(open(sys.argv[1]))))' "$TMP/plan-maxts.json"
    else
        check max-unique-timeseries-not-applied-same python3 -c '
import json, sys
k = lambda f: sorted(json.dumps([d["rule"], d["workload"], d["decision"], d["reason"], d["idleSince"]], sort_keys=True) for d in json.load(open(f)))
sys.exit(k(sys.argv[1]) != k(sys.argv[2]))' "$TMP/plan.json" "$TMP/plan-maxts.json"
    fi
    stop_pid "$VM_PID"
else
    fail max-unique-timeseries-vm-ready "$(tail -n 5 "$TMP/vm-limit.log")"
fi

# --- at wall-clock now: the newest points ----------------------------------------------------
# busy-now: idle for 20 minutes, busy in its last two samples (the last 15 s); idle-now: idle.
NOW=$(date +%s)
python3 -c '
import sys
now = int(sys.argv[1])
print("# TYPE t_now gauge")
for pod in ("busy-now", "idle-now"):
    for off in range(-1200, 1, 15):
        v = 0.9 if pod == "busy-now" and off >= -15 else 0.01
        print("t_now{pod=\"%s\"} %s %d" % (pod, v, now + off))
print("# EOF")' "$NOW" >"$TMP/now.om"
cat >"$TMP/rules-now.yaml" <<'EOF'
apiVersion: gpureclaim/v1
kind: ReclaimRules
rules:
- name: now
  policy: Always
  threshold: 10
  idleTimer: 15m
  step: 15s
  toleratedGap: 30s
  identity: [pod]
  queries:
    activity: t_now
    allocation: count by (pod) (t_now)
EOF
plan_now() {
    "$ENF" plan --rules.file "$TMP/rules-now.yaml" --prometheus.url "$VM_URL" --at "$NOW" \
        --output json --prometheus.read-path=promql "$@"
}
# decision POD FILE: "decision/reason" of POD in plan JSON FILE.
decision() {
    python3 -c '
import json, sys
for d in json.load(open(sys.argv[2])):
    if d["workload"]["pod"] == sys.argv[1]:
        print(d["decision"] + "/" + d["reason"])' "$1" "$2" 2>/dev/null
}

# The default -search.latencyOffset=30s rewrites the last 30 s: busy-now would read idle.
if start_vm vm-default && vm_import "$TMP/now.om"; then
    curl -s "$VM_URL/api/v1/query_range" --data-urlencode 'query=max_over_time(t_now{pod="busy-now"}[15s])' \
        -d start=$((NOW - 30)) -d end="$NOW" -d step=15 >"$TMP/raw-now.json"
    check vm-rewrites-newest-points grep -q '"values":\[\[[0-9]*,"0.01"\],\[[0-9]*,"0.01"\],\[[0-9]*,"0.01"\]\]' "$TMP/raw-now.json"
    plan_now >"$TMP/plan-now-default.json" 2>"$TMP/plan-now-default.err"
    rc=$?
    check now-default-refused grep -q 'replaces the points of the last 30s of a range answer' "$TMP/plan-now-default.err"
    got=$(decision busy-now "$TMP/plan-now-default.json")
    check now-default-busy-not-reclaimed test "$got" != reclaim/idle
    check now-default-exit-nonzero test "$rc" -ne 0
    # Raw samples are not rewritten: the export path decides right with the default flags.
    plan_now --prometheus.read-path=auto >"$TMP/plan-now-export.json" 2>/dev/null
    check now-export-exit-0 test $? -eq 0
    check now-export-busy-kept test "$(decision busy-now "$TMP/plan-now-export.json")" = keep/active
    check now-export-idle-reclaimed test "$(decision idle-now "$TMP/plan-now-export.json")" = reclaim/idle
    stop_pid "$VM_PID"
else
    fail vm-default-ready "$(tail -n 5 "$TMP/vm-default.log")"
fi

# With -search.latencyOffset=0s the answer is the data: busy-now is busy, idle-now idle.
if start_vm vm-now -search.latencyOffset=0s && vm_import "$TMP/now.om"; then
    plan_now >"$TMP/plan-now.json" 2>"$TMP/plan-now.err"
    check now-exit-0 test $? -eq 0
    check now-busy-kept test "$(decision busy-now "$TMP/plan-now.json")" = keep/active
    check now-idle-reclaimed test "$(decision idle-now "$TMP/plan-now.json")" = reclaim/idle
    stop_pid "$VM_PID"
else
    fail vm-now-ready "$(tail -n 5 "$TMP/vm-now.log")"
fi

finish
