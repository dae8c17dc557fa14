#!/bin/sh
# End to end: `plan` against a faulty Prometheus (build/fakes/fake_prom) must never reclaim.
#
# For every fault (nothing listening, a server slower than --prometheus.timeout, 5xx, the
# error envelope, garbage JSON, a partial answer with warnings, truncated JSON, an answer
# larger than the response cap, one failing query) `plan --output json` exits 3 (a rule
# could not be evaluated), prints only `keep` decisions with reason query_error (or none
# when nothing is known), and reports the error on stderr once; `explain` exits 3 too.
# A well-formed matrix with points missing inside the window gives `keep` with `gap`.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/enforcer
ENF=$BIN/gpureclaim-enforcer
FAKE=${FAKE_PROM:-$(fake_bin fake_prom)}
AT=1700000000

require python3 "$ENF" "$FAKE"
python3 "$DATA/gen_matrix.py" "$TMP/range.json" "$TMP/instant.json" "$TMP/coverage.json" \
    "$TMP/subpoints.json" "$TMP/empty.json"
# The raw-coverage query (present_over_time) gets its own canned answer.
COV="-A present_over_time $TMP/coverage.json -A vector(1) $TMP/subpoints.json"

# start_fake NAME ARGS...: start fake_prom on a free port, set $FAKE_URL and $FAKE_PID.
start_fake() {
    _name=$1; shift
    start_fake_http "$TMP/fake-$_name.log" "$FAKE" "$@"
}

# verdict FILE: "n=<decisions> reclaim=<n> non_query_error=<n>" from plan's JSON.
verdict() {
    python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("invalid-json", e); sys.exit()
print("n=%d reclaim=%d non_query_error=%d" % (len(d),
      sum(x["decision"] == "reclaim" for x in d),
      sum(x["reason"] != "query_error" for x in d)))' "$1"
}

# fault NAME WANT_NONEMPTY FAKE_ARGS...: run plan against the fake (port 0 = any free one).
fault() {
    _name=$1 _nonempty=$2; shift 2
    if ! start_fake "$_name" "$@"; then
        fail "$_name" "fake_prom did not start"
        return
    fi
    run_plan "$_name" "$FAKE_URL" "$_nonempty"
    stop_pid "$FAKE_PID"
}

run_plan() {
    _name=$1 _url=$2 _nonempty=$3
    _t0=$(date +%s)
    # shellcheck disable=SC2086
    "$ENF" plan --rules.file "$DATA/rules-always.yaml" --prometheus.url "$_url" \
        --prometheus.timeout 1s --at $AT --output json ${PLAN_FLAGS:-} >"$TMP/$_name.json" \
        2>"$TMP/$_name.err"
    _rc=$?
    _took=$(( $(date +%s) - _t0 ))
    _v=$(verdict "$TMP/$_name.json")
    _errs=$(grep -c 'prometheus query failed' "$TMP/$_name.err")
    case "$_v" in
    "n=0 reclaim=0 non_query_error=0") _shape=empty ;;
    "n="*" reclaim=0 non_query_error=0") _shape=keep ;;
    *) _shape=bad ;;
    esac
    if [ "$_rc" -ne 3 ]; then
        fail "$_name" "exit status $_rc, want 3"
    elif [ "$_shape" = bad ] || { [ "$_nonempty" = yes ] && [ "$_shape" != keep ]; }; then
        fail "$_name" "$_v"
    elif [ "$_errs" -lt 1 ]; then
        fail "$_name" "no error on stderr: $(head -c 300 "$TMP/$_name.err")"
    elif [ "$(sort "$TMP/$_name.err" | uniq -d | wc -l)" -ne 0 ]; then
        fail "$_name" "an error printed twice"
    elif [ "$_took" -gt 10 ]; then
        fail "$_name" "took ${_took}s"
    else
        pass "$_name"
    fi
}

# Nothing listening: a port that was free a moment ago.
run_plan connection-refused "http://127.0.0.1:$(free_port)" no
fault slow no 0 slow 3
fault status-502 no 0 status 502
fault status-503 no 0 status 503
fault error-bad-data no 0 error bad_data 'invalid parameter "query": parse error'
fault error-timeout no 0 error timeout 'query timed out in expression evaluation'
fault garbage no 0 garbage
fault partial no 0 partial
# A VictoriaMetrics cluster's vmselect with a vmstorage node down (isPartial), named as such.
fault vm-partial no 0 vmpartial
check vm-partial-named grep -q "partial answer: the server marked it isPartial (a VictoriaMetrics vmstorage node did not answer" "$TMP/vm-partial.err"
fault truncated no 0 truncated
# An answer whose series need more than --prometheus.max-answer-bytes (here 16 MiB, so that a
# 68 MB answer is over it; the default 128 MiB holds 100,000 workloads): loud, never
# "all kept".
python3 -c '
import sys
pts = ",".join("[%d,\"0.01\"]" % (1700000000 - 1800 + 15 * i) for i in range(121))
with open(sys.argv[1], "w") as f:
    f.write("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[")
    f.write(",".join("{\"metric\":{\"namespace\":\"ml\",\"pod\":\"w%06d\"},\"values\":[%s]}"
                     % (i, pts) for i in range(28000)))
    f.write("]}}")' "$TMP/large.json"
# shellcheck disable=SC2086
PLAN_FLAGS=--prometheus.max-answer-bytes=16777216
fault too-large yes $COV 0 ok "$TMP/large.json" "$TMP/instant.json"
PLAN_FLAGS=
# Over the cap, or over the 1 s timeout on a loaded machine: either way the rule failed.
check too-large-message grep -Eq 'activity query: .*(too large|time)' "$TMP/too-large.err"
rm -f "$TMP/large.json"
# Only the activity query fails: the allocated workloads are known and must be kept.
# shellcheck disable=SC2086
fault activity-query-error yes -E workload_busy $COV 0 ok "$TMP/range.json" "$TMP/instant.json"
check activity-error-message grep -q 'injected failure' "$TMP/activity-query-error.err"
# Only the raw-coverage query fails: the rule cannot be judged, so it is kept too.
# shellcheck disable=SC2086
fault coverage-query-error yes -E present_over_time 0 ok "$TMP/range.json" "$TMP/instant.json"
check coverage-error-message grep -q 'coverage query: .*injected failure' "$TMP/coverage-query-error.err"

# explain on a rule that could not be evaluated: kept, said so, exit 3.
# shellcheck disable=SC2086
if start_fake explain-error -E workload_busy $COV 0 ok "$TMP/range.json" "$TMP/instant.json"; then
    "$ENF" explain --rules.file "$DATA/rules-always.yaml" --prometheus.url "$FAKE_URL" \
        --at $AT --workload 'pod="idle"' >"$TMP/explain-error.txt" 2>"$TMP/explain-error.err"
    check explain-error-exit-3 test $? -eq 3
    check explain-error-kept grep -q 'kept: the Prometheus query failed' "$TMP/explain-error.txt"
    check explain-error-stderr grep -q 'prometheus query failed' "$TMP/explain-error.err"
    stop_pid "$FAKE_PID"
else
    fail explain-error "fake_prom did not start"
fi

# --- a good answer with a hole inside the window --------------------------------------------
# shellcheck disable=SC2086
if start_fake ok $COV 0 ok "$TMP/range.json" "$TMP/instant.json"; then
    "$ENF" plan --rules.file "$DATA/rules-always.yaml" --prometheus.url "$FAKE_URL" \
        --at $AT --output json >"$TMP/ok.json" 2>"$TMP/ok.err"
    check ok-exit-0 test $? -eq 0
    got=$(python3 -c '
import json, sys
print(" ".join("%s:%s:%s" % (d["workload"]["pod"], d["decision"], d["reason"])
               for d in json.load(open(sys.argv[1]))))' "$TMP/ok.json")
    check ok-gap-kept-idle-reclaimed test "$got" = "gappy:keep:gap idle:reclaim:idle"
    check ok-no-stderr test ! -s "$TMP/ok.err"
    # The fake offers neither VictoriaMetrics' /flags nor remote read (asked once each), so
    # three range queries (activity with its non-finite steps, its raw coverage and the
    # sub-point count) and one instant query (allocation); no pending query for an Always rule.
    n=$(grep -c '^request POST /api/v1/query_range' "$TMP/fake-ok.log")
    m=$(grep -c '^request POST /api/v1/query ' "$TMP/fake-ok.log")
    r=$(grep -c '^request POST /api/v1/read ' "$TMP/fake-ok.log")
    check ok-request-count test "$n:$m:$r" = "3:1:1"
    stop_pid "$FAKE_PID"
else
    fail ok "fake_prom did not start"
fi

finish
