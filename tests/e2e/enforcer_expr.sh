#!/bin/sh
# End to end: rules whose `activity` is an expression may not reclaim across a raw gap
# (issue 24 §4), on Prometheus 2.42 (remote read) and VictoriaMetrics (/api/v1/export).
#
# gen_judge.py's history at a fixed epoch, rules-judge.yaml's rules "expr"
# (`max by (namespace, pod) (x)`) and "join" (`... and on (namespace, pod, gpu_id) held`).
# On Prometheus the expression's inner selectors look back 5 minutes: a 4-minute raw hole, a
# stop 3 minutes ago, a silent device next to an idle one and a held series that stopped are
# all invisible in the result, and a device missing from the joined selector vanishes from
# it. Each must keep, from the raw samples of the selectors; the clean histories still
# reclaim. Then: an expression whose selectors cannot be extracted safely keeps every
# workload loudly, and so does a server without a raw read.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/enforcer
ENF=$BIN/gpureclaim-enforcer
AT=1700000000
JR=$DATA/rules-judge.yaml

require prometheus promtool victoria-metrics python3 curl "$ENF"

python3 "$DATA/gen_judge.py" openmetrics "$TMP/judge.om"
python3 "$DATA/gen_judge.py" expect >"$TMP/expect.json"

# decisions NAME PLAN_JSON [POD=DECISION,REASON...]: one check per workload of the rules
# "expr" and "join" against gen_judge.py's expectations (or the ones given).
decisions() {
    _dn=$1 _dp=$2
    shift 2
    python3 - "$_dp" "$TMP/expect.json" "$SUITE" "$_dn" "$@" <<'PY' || TEST_FAILED=$((TEST_FAILED + 1))
import json, sys
plan, want, suite, name = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
for o in sys.argv[5:]:
    pod, dr = o.split("=")
    for rule in want.values():
        if pod in rule:
            rule[pod] = dr.split(",")
bad = 0
for rule in ("expr", "join"):
    pods = want[rule]
    got = {d["workload"]["pod"]: [d["decision"], d["reason"]] for d in plan if d["rule"] == rule}
    for pod in sorted(set(pods) | set(got)):
        w, g = pods.get(pod), got.get(pod)
        ok = w is not None and w == g
        print("%s: %s/%s-%s%s" % ("PASS" if ok else "FAIL", suite, name, pod,
                                  "" if ok else " (want %s, got %s)" % (w, g)))
        bad += not ok
sys.exit(1 if bad else 0)
PY
}

# has_detail NAME PLAN_JSON POD TEXT: check that the decision on POD has exactly that detail.
has_detail() {
    _got=$(python3 -c '
import json, sys
print([d["detail"] for d in json.load(open(sys.argv[1])) if d["workload"]["pod"] == sys.argv[2]][0])
' "$2" "$3")
    if [ "$_got" = "$4" ]; then pass "$1"; else fail "$1" "$_got"; fi
}

# --- Prometheus 2.42: the selectors' raw samples through remote read -----------------------
need_history "$TMP/judge.om"
"$ENF" plan --rules.file "$JR" --prometheus.url "$PROM_URL" --at $AT --output json --stats \
    >"$TMP/prom.json" 2>"$TMP/prom.err"
check prom-exit-0 test $? -eq 0
decisions prom "$TMP/prom.json"
# Per rule: activity, allocation and one remote read per selector of an expression.
# Per rule: activity and one remote read per selector of an expression; /flags and the
# allocation once.
check prom-requests grep -q 'requests=8 failures=0 .* read=raw:remote_read,expr:promql,join:promql$' "$TMP/prom.err"
# Prometheus 2.42 ignores the per-query lookback_delta (2.43 added it), so the result bridges
# the hole and the selector's raw proof names it; Prometheus 3 honours it, the result itself
# has the hole (one lookback later), and that keeps first: the same decision, another detail
# (docs/decision-semantics.md §4.6).
PROM2=
prometheus --version 2>&1 | grep -q '^prometheus, version 2\.' && PROM2=1
if [ -n "$PROM2" ]; then
    has_detail prom-detail-gap "$TMP/prom.json" expr-hole-4m "selector 'judge_expr_busy_ratio' {gpu_id=\"0\"}: no raw sample from 2023-11-14T22:03:20Z to 2023-11-14T22:07:20Z, more than the tolerated gap 2m"
    has_detail prom-detail-stale "$TMP/prom.json" expr-stale-3m "selector 'judge_expr_busy_ratio' {gpu_id=\"0\"}: last raw sample at 2023-11-14T22:10:20Z, none within the tolerated gap 2m before now"
else
    has_detail prom-detail-gap "$TMP/prom.json" expr-hole-4m "no data from 2023-11-14T22:05:20Z to 2023-11-14T22:08:20Z: raw samples more than the tolerated gap 2m apart"
    has_detail prom-detail-stale "$TMP/prom.json" expr-stale-3m "last point at 2023-11-14T22:12:20Z, 1m before now: the last step has no point"
fi
has_detail prom-detail-missing "$TMP/prom.json" expr-join-missing "selector 'judge_expr_held' has no series with gpu_id=\"1\", which another selector has"
has_detail prom-detail-held-stale "$TMP/prom.json" expr-join-held-stale "selector 'judge_expr_held' {gpu_id=\"1\"}: last raw sample at 2023-11-14T22:10:20Z, none within the tolerated gap 2m before now"

# The result alone (what the enforcer judged before): at now Prometheus still shows the
# series that stopped 3 minutes ago, and the join shows only the idle GPU of expr-join-missing.
value_at() {
    prom_query "$1" $AT | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if len(r) == 1 else "none")'
}
check prom-bridges-stop test "$(value_at 'max by (pod) (judge_expr_busy_ratio{pod="expr-stale-3m"})')" = 0.01
check prom-join-hides-gpu test "$(value_at 'max by (pod) (judge_expr_busy_ratio{pod="expr-join-missing"} and on (namespace, pod, gpu_id) judge_expr_held)')" = 0.01

# explain tells the same story.
"$ENF" explain --rules.file "$JR" --prometheus.url "$PROM_URL" --at $AT \
    --workload 'pod="expr-hole-4m"' >"$TMP/explain.txt" 2>&1
check explain-keeps grep -q '^  kept: ' "$TMP/explain.txt"
if [ -n "$PROM2" ]; then
    check explain-names-selector grep -q "selector 'judge_expr_busy_ratio'" "$TMP/explain.txt"
else
    check explain-names-hole grep -q "kept: no data for 3m between 22:05:20 and 22:08:20" "$TMP/explain.txt"
fi

# A selector that cannot be placed in time (@): every workload of the rule keeps, loudly.
sed 's/judge_expr_busy_ratio)$/judge_expr_busy_ratio @ 1700000000)/' "$JR" >"$TMP/rules-at.yaml"
"$ENF" plan --rules.file "$TMP/rules-at.yaml" --prometheus.url "$PROM_URL" --at $AT \
    --output json >"$TMP/at.json" 2>"$TMP/at.err"
check unsafe-exit-3 test $? -eq 3
check unsafe-message grep -q "rule 'expr'.*activity: its raw samples cannot be proven gap-free: the @ modifier reads samples at a fixed time" "$TMP/at.err"
check unsafe-keeps python3 -c '
import json, sys
d = [x for x in json.load(open(sys.argv[1])) if x["rule"] == "expr"]
sys.exit(not d or any(x["decision"] != "keep" or x["reason"] != "query_error" for x in d))' "$TMP/at.json"

"$ENF" check "$TMP/rules-at.yaml" >"$TMP/check-at.txt" 2>&1
check unsafe-check-exit-0 test $? -eq 0
check unsafe-check-warns grep -q "rules-at.yaml:26:15: warning: rule 'expr': .* its selectors cannot be extracted safely (the @ modifier reads samples at a fixed time, not in the window), so its raw samples cannot be proven gap-free and every workload of the rule is kept" "$TMP/check-at.txt"

# No raw read (forced PromQL plan): nothing proves the samples behind an expression.
"$ENF" plan --rules.file "$JR" --prometheus.url "$PROM_URL" --at $AT --output json \
    --prometheus.read-path=promql >"$TMP/promql.json" 2>"$TMP/promql.err"
check promql-exit-3 test $? -eq 3
check promql-message grep -q "activity selector 'judge_expr_busy_ratio': the server offers no raw read" "$TMP/promql.err"
check promql-no-expr-reclaim python3 -c '
import json, sys
sys.exit(any(x["decision"] == "reclaim" for x in json.load(open(sys.argv[1])) if x["rule"] != "raw"))' "$TMP/promql.json"
stop_pid "$PROM_PID"

# --- VictoriaMetrics: the selectors' raw samples through /api/v1/export --------------------
if ! start_vm vm; then
    fail vm-ready "$(tail -n 5 "$TMP/vm.log")"
    exit 1
fi
pass vm-ready
check vm-import vm_import "$TMP/judge.om"
"$ENF" plan --rules.file "$JR" --prometheus.url "$VM_URL" --at $AT --output json --stats \
    >"$TMP/vm.json" 2>"$TMP/vm.err"
check vm-exit-0 test $? -eq 0
# A 90 s raw hole is tolerated (2m), but MetricsQL's own lookback is about one sample
# interval: the result has a step without a point there, which still keeps (step grid).
decisions vm "$TMP/vm.json" expr-hole-90s=keep,gap
check vm-read-path grep -q 'read=raw:export,expr:promql,join:promql$' "$TMP/vm.err"
has_detail vm-detail-missing "$TMP/vm.json" expr-join-missing "selector 'judge_expr_held' has no series with gpu_id=\"1\", which another selector has"
has_detail vm-detail-stale "$TMP/vm.json" expr-join-held-stale "selector 'judge_expr_held' {gpu_id=\"1\"}: last raw sample at 2023-11-14T22:10:20Z, none within the tolerated gap 2m before now"
stop_pid "$VM_PID"

finish
