#!/bin/sh
# End to end: `gpureclaim-enforcer plan`, `explain` and `check` against a real Prometheus
# loaded with backfilled history at a fixed epoch (promtool tsdb create-blocks-from openmetrics).
#
# gen_history.py writes 1 h of 15 s samples ending at 1700000000 for workloads that are
# idle, busy, bursty, young, gappy, NaN, stale, exempt, ... and prints the decisions the two
# rules of data/enforcer/rules.yaml must make; check_plan.py compares them with the JSON.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/enforcer
ENF=$BIN/gpureclaim-enforcer
AT=1700000000

require prometheus promtool python3 "$ENF"

python3 "$DATA/gen_history.py" scenario "$TMP/history.om"
python3 "$DATA/gen_history.py" expect >"$TMP/expect.json"
# The raw-sample judgment scenarios (gen_judge.py, other metric names) in the same TSDB.
python3 "$DATA/gen_judge.py" openmetrics "$TMP/judge.om"
python3 "$DATA/gen_judge.py" expect >"$TMP/expect-judge.json"
sed -i '/^# EOF$/d' "$TMP/history.om"
cat "$TMP/judge.om" >>"$TMP/history.om"
need_history "$TMP/history.om"

plan() {
    "$ENF" plan --rules.file="$DATA/rules.yaml" --prometheus.url "$PROM_URL" "$@"
}

# --- plan --output json -----------------------------------------------------------------
plan --at $AT --output json >"$TMP/plan.json" 2>"$TMP/plan.err"
rc=$?
check plan-json-exit-0 test "$rc" -eq 0
check plan-json-no-stderr test ! -s "$TMP/plan.err"
SUITE=$SUITE python3 "$DATA/check_plan.py" "$TMP/plan.json" "$TMP/expect.json" || TEST_FAILED=$((TEST_FAILED + 1))

# idleSince is the start of the trailing idle run: went-idle was busy until END-1200, and
# the step ending at END-1185 still covers that sample.
got=$(python3 -c '
import json, sys
for d in json.load(open(sys.argv[1])):
    if d["rule"] == "always" and d["workload"]["pod"] == "went-idle":
        print(d["idleSince"], d["idleTimer"], d["threshold"], d["window"]["samples"], d["dryRun"])
' "$TMP/plan.json")
check plan-json-idle-since test "$got" = "2023-11-14T21:53:50Z 15m 10 61 True"

# The same instant in RFC 3339 gives the same answer.
plan --at 2023-11-14T23:13:20+01:00 --output=json >"$TMP/plan-rfc.json" 2>/dev/null
check plan-at-rfc3339 cmp -s "$TMP/plan.json" "$TMP/plan-rfc.json"

# --no-dry-run is reflected in every decision; the default is dry run.
plan --at $AT --output json --no-dry-run >"$TMP/plan-nodry.json" 2>/dev/null
n=$(python3 -c 'import json,sys; print(sum(d["dryRun"] for d in json.load(open(sys.argv[1]))))' \
    "$TMP/plan-nodry.json")
check plan-no-dry-run test "$n" -eq 0

# --- plan table ---------------------------------------------------------------------------
plan --at $AT >"$TMP/plan.txt" 2>"$TMP/plan-table.err"
check plan-table-exit-0 test $? -eq 0
check plan-table-header grep -q '^RULE  *WORKLOAD  *DECISION  *REASON  *IDLE FOR  *ALLOC  *MAX  *MEAN$' "$TMP/plan.txt"
check plan-table-row grep -q '^always  *namespace="ml",pod="went-idle"  *reclaim (dry run)  *idle  *19m30s  *1 ' "$TMP/plan.txt"
check plan-table-summary grep -q '^28 workloads: 5 reclaim, 23 keep (8 active, 2 no_data, 2 too_young, 2 gap, 2 stale, 2 not_a_number, 2 exempt, 3 not_needed); dry run: reported only$' "$TMP/plan.txt"

# --stats reports the HTTP requests: one per distinct query, not per workload.
plan --at $AT --output json --stats >/dev/null 2>"$TMP/stats.txt"
# /flags (is it VictoriaMetrics?), one remote read (both rules have the same selector),
# allocation (shared by both rules) and pending.
check plan-stats-requests grep -q 'requests=4 failures=0' "$TMP/stats.txt"
check plan-stats-remote-read grep -q 'read=always:remote_read,pressure:remote_read$' "$TMP/stats.txt"
plan --at $AT --output json --stats --prometheus.read-path=promql >"$TMP/plan-promql.json" \
    2>"$TMP/stats-promql.txt"
# activity (its non-finite steps folded in), raw coverage and sub-point count (all shared by
# both rules), allocation and pending.
check plan-stats-promql-requests grep -q 'requests=5 failures=0 .* read=always:promql,pressure:promql$' "$TMP/stats-promql.txt"

# --- the same decisions on both paths -----------------------------------------------------
# same_decisions NAME A B [EDGE]: every rule/workload has the same decision, reason, idleSince
# and window sample count in the plan JSON files A and B. With EDGE (the raw path against the
# PromQL plan on a server whose ranges are left-open, Prometheus 3): idleSince may differ by one
# 15 s step and the sample count by one, the sample on a step's left edge that a closed step
# counts and a left-open one does not (docs/decision-semantics.md §4.6); decision and reason
# stay equal.
same_decisions() {
    python3 - "$2" "$3" "${4:-}" <<'PY' >"$TMP/$1.diff"
import datetime, json, sys
def key(f):
    return {(d["rule"], json.dumps(d["workload"], sort_keys=True)):
            (d["decision"], d["reason"], d["idleSince"], d["window"]["samples"])
            for d in json.load(open(f))}
def t(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() if s else None
def edge_only(x, y):
    if not x or not y or x[:2] != y[:2] or abs(x[3] - y[3]) > 1:
        return False
    return x[2] == y[2] or (x[2] and y[2] and abs(t(x[2]) - t(y[2])) <= 15)
a, b = key(sys.argv[1]), key(sys.argv[2])
for k in sorted(set(a) | set(b)):
    if a.get(k) != b.get(k) and not (sys.argv[3] and edge_only(a.get(k), b.get(k))):
        print(k, a.get(k), b.get(k))
PY
    check "$1" test ! -s "$TMP/$1.diff"
}
# Prometheus 3's range selectors are left-open, 2.x's closed.
EDGE=
prometheus --version 2>&1 | grep -q '^prometheus, version [3-9]\.' && EDGE=left-open
SUITE=$SUITE-promql python3 "$DATA/check_plan.py" "$TMP/plan-promql.json" "$TMP/expect.json" ||
    TEST_FAILED=$((TEST_FAILED + 1))
same_decisions paths-remote-read-promql "$TMP/plan.json" "$TMP/plan-promql.json" $EDGE
plan --at $AT --output json --prometheus.read-path=remote-read >"$TMP/plan-rr.json" 2>/dev/null
check forced-remote-read-exit-0 test $? -eq 0
same_decisions paths-forced-remote-read "$TMP/plan.json" "$TMP/plan-rr.json"
# Forcing VictoriaMetrics' export on Prometheus fails loudly: every workload kept.
plan --at $AT --output json --prometheus.read-path=export >"$TMP/plan-export.json" 2>"$TMP/plan-export.err"
check forced-export-exit-3 test $? -eq 3
check forced-export-message grep -q "activity query (export): export: HTTP 404 from '/api/v1/export'" "$TMP/plan-export.err"
check forced-export-no-reclaim sh -c '! grep -q "\"decision\": *\"reclaim\"" "$1"' sh "$TMP/plan-export.json"
plan --at $AT --prometheus.read-path=foo >/dev/null 2>"$TMP/plan-badpath.err"
check bad-read-path-exit-1 test $? -eq 1
check bad-read-path-message grep -q "invalid read path 'foo' for '--prometheus.read-path'" "$TMP/plan-badpath.err"

# --- explain --------------------------------------------------------------------------------
explain() {
    "$ENF" explain --rules.file "$DATA/rules.yaml" --prometheus.url="$PROM_URL" --at $AT "$@"
}
explain --rule always --workload 'namespace="ml",pod="burst"' >"$TMP/explain-burst.txt" 2>&1
check explain-burst-exit-0 test $? -eq 0
check explain-burst-sparkline grep -q '21:58:20 ▁*▇▇▁*$' "$TMP/explain-burst.txt"
check explain-burst-marker grep -q '^  *\^\^$' "$TMP/explain-burst.txt"
check explain-burst-reason grep -q 'kept: 2 of 61 points at or above 10 % (max 80 % at 22:08:20)' "$TMP/explain-burst.txt"

explain --rule always --workload '{pod="gappy"}' >"$TMP/explain-gappy.txt" 2>&1
check explain-gappy-sparkline grep -q '▁··········▁' "$TMP/explain-gappy.txt"
check explain-gappy-reason grep -q 'kept: no data for 2m45s between 22:05:35 and 22:08:20' "$TMP/explain-gappy.txt"

explain --rule always --workload 'pod="went-idle"' >"$TMP/explain-idle.txt" 2>&1
check explain-idle-reason grep -q 'reclaim: below 10 % for the whole 15m window since 2023-11-14T21:53:50Z' "$TMP/explain-idle.txt"

# Without --rule, every rule that decided on the workload is explained.
n=$(explain --workload 'pod="idle-b"' 2>/dev/null | grep -c '^workload ')
check explain-all-rules test "$n" -eq 2

explain --workload 'namespace="ml",pod="nobody"' >/dev/null 2>"$TMP/explain-none.err"
check explain-no-match-exit-2 test $? -eq 2
check explain-no-match-message grep -q "no workload matches" "$TMP/explain-none.err"
explain --workload 'pod=' >/dev/null 2>&1
check explain-bad-workload-exit-1 test $? -eq 1

# --- judged per device, on raw sample times (gen_judge.py, rules-judge.yaml) ----------------
JR=$DATA/rules-judge.yaml
"$ENF" plan --rules.file "$JR" --prometheus.url "$PROM_URL" --at $AT --output json \
    >"$TMP/judge.json" 2>"$TMP/judge.err"
check judge-exit-0 test $? -eq 0
# Compare with gen_judge.py's expectations ("*": either decision, checked below).
python3 - "$TMP/judge.json" "$TMP/expect-judge.json" "$SUITE" <<'PY' || TEST_FAILED=$((TEST_FAILED + 1))
import json, sys
plan, want, suite = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
bad = 0
for rule, pods in sorted(want.items()):
    got = {d["workload"]["pod"]: [d["decision"], d["reason"]] for d in plan if d["rule"] == rule}
    for pod in sorted(set(pods) | set(got)):
        w, g = pods.get(pod), got.get(pod)
        ok = w is not None and g is not None and (w == ["*", "*"] or w == g)
        print("%s: %s/judge-%s-%s%s" % ("PASS" if ok else "FAIL", suite, rule, pod,
                                        "" if ok else " (want %s, got %s)" % (w, g)))
        bad += not ok
sys.exit(1 if bad else 0)
PY
jexplain() {
    "$ENF" explain --rules.file "$JR" --prometheus.url "$PROM_URL" --at $AT --workload "pod=\"$1\"" \
        >"$TMP/judge-$1.txt" 2>&1
}
jexplain silent-gpu
check judge-explain-silent-gpu-rows grep -q '^  series {gpu_id="0",namespace="judge",pod="silent-gpu"}$' "$TMP/judge-silent-gpu.txt"
check judge-explain-silent-gpu-reason grep -q 'kept: stale in one of its 2 series' "$TMP/judge-silent-gpu.txt"
jexplain stale-3m
check judge-explain-stale-3m grep -q 'kept: stopped reporting: no raw sample within the tolerated gap (2m) before the evaluation time; last point at 22:11:20' "$TMP/judge-stale-3m.txt"
check judge-explain-stale-3m-detail grep -q 'detail: {gpu_id="0",namespace="judge",pod="stale-3m"}: last point at 2023-11-14T22:11:20Z; no raw sample within the tolerated gap 2m before now' "$TMP/judge-stale-3m.txt"
jexplain nan-step
# The NaN at END-300 lies on a step point: both closed steps around it hold it (2.x).
check judge-explain-nan grep -Eq 'kept: [12] of 16 points are NaN or Inf \(first at 22:0[89]:20\)' "$TMP/judge-nan-step.txt"
check judge-explain-nan-marker grep -Eq '^ +!!?$' "$TMP/judge-nan-step.txt"
jexplain hole-90s
check judge-explain-tolerated-hole grep -q 'reclaim: .*(1 step without a point, raw samples never more than 2m apart)' "$TMP/judge-hole-90s.txt"
# plan and explain tell the same story, and explain never draws a gap and says reclaim.
for pod in $(python3 -c 'import json,sys; print(" ".join(d["workload"]["pod"] for d in json.load(open(sys.argv[1]))))' "$TMP/judge.json"); do
    jexplain "$pod"
    want=$(python3 -c 'import json,sys; print([d["decision"] for d in json.load(open(sys.argv[1])) if d["workload"]["pod"] == sys.argv[2]][0])' "$TMP/judge.json" "$pod")
    if [ "$want" = reclaim ]; then
        check "judge-story-$pod" sh -c "grep -q '^  reclaim: ' '$TMP/judge-$pod.txt' && ! grep -Eq '^ +[ ^_!]*[_!^][ ^_!]*\$' '$TMP/judge-$pod.txt'"
    else
        check "judge-story-$pod" grep -q '^  kept: ' "$TMP/judge-$pod.txt"
    fi
done
"$ENF" plan --rules.file "$JR" --prometheus.url "$PROM_URL" --at $AT --output json --stats \
    >/dev/null 2>"$TMP/judge-stats.txt"
# /flags; raw: one remote read; expr and join: activity (non-finite folded in) and one
# remote read per selector of the expression; allocation.
check judge-requests grep -q 'requests=8 failures=0 .* read=raw:remote_read,expr:promql,join:promql$' "$TMP/judge-stats.txt"
# The judgment scenarios of the selector rule decide the same through PromQL; the expression
# rules have no raw read there to prove their selectors' samples with, so they keep
# (query_error; tests/e2e/enforcer_expr.sh).
"$ENF" plan --rules.file "$JR" --prometheus.url "$PROM_URL" --at $AT --output json \
    --prometheus.read-path=promql >"$TMP/judge-promql-all.json" 2>/dev/null
python3 - "$TMP/judge.json" "$TMP/judge-promql-all.json" "$TMP/judge-raw.json" "$TMP/judge-promql.json" <<'PY' ||
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
json.dump([d for d in a if d["rule"] == "raw"], open(sys.argv[3], "w"))
json.dump([d for d in b if d["rule"] == "raw"], open(sys.argv[4], "w"))
sys.exit(any(d["decision"] != "keep" or d["reason"] != "query_error" for d in b if d["rule"] != "raw"))
PY
    fail judge-promql-expressions-keep
same_decisions judge-paths-remote-read-promql "$TMP/judge-raw.json" "$TMP/judge-promql.json" $EDGE
"$ENF" check "$JR" >"$TMP/check-judge.txt" 2>&1
check judge-check-exit-0 test $? -eq 0
check judge-check-warns-expression grep -q "rules-judge.yaml:26:15: warning: rule 'expr': 'activity' (max by (namespace, pod) (judge_expr_busy_ratio)) is an expression, so its result bridges raw holes (its selectors look back up to 5m): the raw samples of its 1 selector are read and proven gap-free instead" "$TMP/check-judge.txt"
check judge-check-no-warning-for-selector sh -c "! grep -q \"rule 'raw'\" '$TMP/check-judge.txt'"

# A rule Prometheus cannot evaluate: loud (exit 3, one error line), its workloads kept; the
# other rule is decided as usual.
"$ENF" plan --rules.file "$DATA/rules-judge-broken.yaml" --prometheus.url "$PROM_URL" --at $AT \
    --output json >"$TMP/broken.json" 2>"$TMP/broken.err"
check broken-rule-exit-3 test $? -eq 3
check broken-rule-error-once test "$(grep -c "prometheus query failed for rule 'broken'" "$TMP/broken.err")" -eq 1
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
b = [x for x in d if x["rule"] == "broken"]
r = {x["workload"]["pod"]: x["reason"] for x in d if x["rule"] == "raw"}
print(len(b) > 0 and all(x["decision"] == "keep" and x["reason"] == "query_error" for x in b),
      r.get("idle"), r.get("stale-3m"))' "$TMP/broken.json")
check broken-rule-kept-other-decided test "$got" = "True idle stale"
"$ENF" explain --rules.file "$DATA/rules-judge-broken.yaml" --prometheus.url "$PROM_URL" --at $AT \
    --workload 'pod="idle"' >"$TMP/broken-explain.txt" 2>&1
check broken-rule-explain-exit-3 test $? -eq 3
"$ENF" explain --rules.file "$DATA/rules-judge-broken.yaml" --prometheus.url "$PROM_URL" --at $AT \
    --rule raw --workload 'pod="idle"' >/dev/null 2>&1
check broken-rule-explain-other-rule-exit-0 test $? -eq 0

# --- raw reads over TLS: the same client settings as the queries ----------------------------
# The same history behind HTTPS (Prometheus' --web.config.file): remote read works with
# --prometheus.ca-file and fails loudly without it, like the queries.
P=$TMP/pki
mkdir -p "$P"
if openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/ca.key" \
    -out "$P/ca.crt" -days 2 -subj /CN=test-ca 2>/dev/null &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/srv.key" \
        -out "$P/srv.csr" -subj /CN=127.0.0.1 2>/dev/null &&
    printf 'subjectAltName=IP:127.0.0.1\n' >"$P/srv.ext" &&
    openssl x509 -req -in "$P/srv.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
        -out "$P/srv.crt" -days 2 -extfile "$P/srv.ext" 2>/dev/null; then
    stop_pid "$PROM_PID"
    printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$P/srv.crt" "$P/srv.key" \
        >"$TMP/web.yml"
    _port=$(free_port)
    start_bg "$TMP/prometheus-tls.log" prometheus --config.file="$TMP/prometheus.yml" \
        --storage.tsdb.path="$TMP/tsdb" --web.listen-address="127.0.0.1:$_port" --log.level=warn \
        --web.config.file="$TMP/web.yml"
    TLS_PID=$LAST_PID
    for _ in $(seq 1 1200); do
        curl -sf --cacert "$P/ca.crt" -o /dev/null "https://127.0.0.1:$_port/-/ready" && break
        kill -0 "$TLS_PID" 2>/dev/null || break
        sleep 0.1
    done
    if curl -sf --cacert "$P/ca.crt" -o /dev/null "https://127.0.0.1:$_port/-/ready"; then
        "$ENF" plan --rules.file="$DATA/rules.yaml" --prometheus.url "https://127.0.0.1:$_port" \
            --prometheus.ca-file "$P/ca.crt" --at $AT --output json --stats \
            >"$TMP/plan-tls.json" 2>"$TMP/stats-tls.txt"
        check tls-remote-read-exit-0 test $? -eq 0
        check tls-remote-read-path grep -q 'read=always:remote_read,pressure:remote_read$' "$TMP/stats-tls.txt"
        same_decisions tls-remote-read-same "$TMP/plan.json" "$TMP/plan-tls.json"
        "$ENF" plan --rules.file="$DATA/rules.yaml" --prometheus.url "https://127.0.0.1:$_port" \
            --at $AT --output json --prometheus.read-path=remote-read >"$TMP/plan-notls.json" \
            2>"$TMP/plan-notls.err"
        check tls-unverified-exit-3 test $? -eq 3
        check tls-unverified-no-reclaim sh -c '! grep -q "\"decision\": *\"reclaim\"" "$1"' sh "$TMP/plan-notls.json"
    else
        fail tls-prometheus-ready "$(tail -n 5 "$TMP/prometheus-tls.log")"
    fi
    stop_pid "$TLS_PID"
else
    fail tls-setup "openssl could not make the test certificates"
fi

# --- a query over the server's --query.max-samples ------------------------------------------
# Prometheus' 422 does not name the setting; the enforcer's message does, and every workload
# of the rule keeps (query_error), on 2.42 and 3.x alike.
start_prometheus "$TMP/prometheus.yml" "$TMP/tsdb" --query.max-samples=100 ||
    fail max-samples-prometheus-ready "$(tail -n 5 "$TMP/prometheus.log")"
plan --at $AT --output json --prometheus.read-path=promql >"$TMP/plan-maxs.json" 2>"$TMP/plan-maxs.err"
check max-samples-exit-3 test $? -eq 3
check max-samples-names-setting grep -q "prometheus error (execution, over the server's --query.max-samples): query processing would load too many samples" "$TMP/plan-maxs.err"
check max-samples-all-kept python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not d or any(x["decision"] != "keep" or x["reason"] != "query_error" for x in d))' "$TMP/plan-maxs.json"
stop_pid "$PROM_PID"

# --- check ----------------------------------------------------------------------------------
set -- "$TOP"/rules/*.yaml
if [ -e "$1" ]; then
    "$ENF" check "$@" >"$TMP/check.txt" 2>&1
    check check-example-rules test $? -eq 0
fi
"$ENF" check "$DATA/rules.yaml" >"$TMP/check-e2e.txt" 2>&1
check check-e2e-rules test $? -eq 0
"$ENF" check "$DATA/rules.yaml" "$DATA/broken.yaml" >"$TMP/check-broken.txt" 2>&1
check check-broken-exit-1 test $? -eq 1
check check-broken-position grep -q 'broken.yaml:[0-9]*:[0-9]*: ' "$TMP/check-broken.txt"

# --- usage and rules errors -------------------------------------------------------------------
"$ENF" plan --rules.file "$DATA/broken.yaml" --prometheus.url "$PROM_URL" >/dev/null 2>"$TMP/e1"
check plan-broken-rules-exit-1 test $? -eq 1
plan --output yaml >/dev/null 2>&1
check plan-bad-output-exit-1 test $? -eq 1
plan --no-such-flag >/dev/null 2>&1
check plan-unknown-flag-exit-1 test $? -eq 1
plan --at yesterday >/dev/null 2>&1
check plan-bad-at-exit-1 test $? -eq 1
"$ENF" --help >"$TMP/help.txt"
missing=""
for f in rules.file prometheus.url prometheus.timeout prometheus.bearer-token-file \
    prometheus.basic-auth-user prometheus.basic-auth-password-file prometheus.ca-file \
    prometheus.insecure-skip-verify dry-run at output workload rule enforce.interval \
    web.listen-address web.telemetry-path log.level log.format; do
    grep -Eq -- "(--|\])$f(=| )" "$TMP/help.txt" || missing="$missing $f"
done
check help-lists-flags test -z "$missing"
check help-shows-defaults grep -q -- '--enforce.interval="1m"' "$TMP/help.txt"
check version sh -c '"$1" --version | grep -q "^gpureclaim-enforcer "' sh "$ENF"

finish
