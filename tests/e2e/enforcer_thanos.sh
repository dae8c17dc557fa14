#!/bin/sh
# A distributed engine: Thanos Query (thanos-io/thanos, built from its module by
# tests/tsdb/build.sh) in front of two Prometheus servers, each with a Thanos sidecar, holding
# the same random histories (gen_random.py, loaded into each by remote write, staleness markers
# included) as an HA pair (external label replica="a"/"b", deduplicated by
# --query.replica-label). `plan`, `run` and `backtest` read through Thanos Query must give,
# record for record, the decisions the single Prometheus "a" gives on the same data when read
# the same way: Thanos Query serves PromQL only (no /api/v1/read), so every selector rule takes
# the PromQL plan there, and an expression rule, whose selectors' raw samples cannot be read,
# keeps every workload with query_error (docs/tsdb-engines.md). Then the faults:
# - one sidecar stopped, endpoints declared strict: Thanos' default answers with the other
#   store's series and a warning; the enforcer asks partial_response=false, gets an error, and
#   keeps every workload (query_error) naming the store;
# - without strict, Thanos Query drops the stopped store from its set at its next health
#   check and answers from the replica that is left, without a warning: the data is whole (an
#   HA pair), and the decisions are those of the single Prometheus;
# - a sidecar that accepts connections and never answers (SIGSTOP) under a Query started with
#   --store.response-timeout: an error naming that setting, every workload kept.
# N (default 120 pods) sets the size, SEED (1) the history.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/enforcer
ENF=$BIN/gpureclaim-enforcer
RW=$(fake_bin remote_write)
THANOS=$(sh "$TOP/tests/tsdb/build.sh" --path thanos)
AT=1700000000
RULES=$DATA/rules-random.yaml

require prometheus python3 curl "$ENF" "$RW"
# Not built by make check (tests/go-build.sh): its cold build takes longer than make check's
# budget on a new machine allows (docs/tsdb-engines.md). Where it is not cached, say so.
if [ ! -x "$THANOS" ]; then
    echo "SKIP: $SUITE/all (no '$THANOS'; 'sh tests/tsdb/build.sh thanos' builds it)"
    exit 0
fi
echo "thanos: $("$THANOS" --version 2>&1 | head -n 1) ($THANOS)"

# --- two Prometheus servers with the same data, a sidecar beside each ----------------------
python3 "$DATA/gen_random.py" "${SEED:-1}" "${N:-120}" "$TMP/samples.txt" "$TMP/meta.json"
for r in a b; do
    mkdir -p "$TMP/tsdb-$r"
    # A sidecar needs external labels that tell its Prometheus from any other.
    printf 'global:\n  scrape_interval: 15s\n  external_labels:\n    replica: %s\nscrape_configs: []\n' \
        "$r" >"$TMP/prometheus-$r.yml"
    if ! start_retrying "$TMP/prometheus-$r.log" /-/ready 120 _run_prometheus "$TMP/prometheus-$r.yml" \
        "$TMP/tsdb-$r" --web.enable-remote-write-receiver; then
        fail "prometheus-$r-ready" "$(tail -n 5 "$TMP/prometheus-$r.log")"
        exit 1
    fi
    eval "PROM_$r=http://127.0.0.1:$SR_PORT PROM_PID_$r=$LAST_PID"
    check "remote-write-$r" sh -c '"$1" "$2" <"$3"' sh "$RW" "http://127.0.0.1:$SR_PORT" "$TMP/samples.txt"
done

# _run_sidecar NAME PROM_URL: a sidecar serving HTTP on $SR_PORT and its Store API on the gRPC
# port it writes to $TMP/NAME.grpc. Started after the data is in: it tells Query the oldest
# sample its Prometheus holds (prometheus_tsdb_lowest_timestamp_seconds), and Query asks only
# the stores whose range overlaps a query's.
_run_sidecar() {
    _g=$(free_port)
    echo "$_g" >"$TMP/$1.grpc"
    exec "$THANOS" sidecar --prometheus.url "$2" --http-address "127.0.0.1:$SR_PORT" \
        --grpc-address "127.0.0.1:$_g" --log.level warn
}
for r in a b; do
    eval "_pu=\$PROM_$r"
    if ! start_retrying "$TMP/sidecar-$r.log" /-/ready 120 _run_sidecar "sidecar-$r" "$_pu"; then
        fail "sidecar-$r-ready" "$(tail -n 5 "$TMP/sidecar-$r.log")"
        exit 1
    fi
    eval "SIDECAR_PID_$r=$LAST_PID SIDECAR_GRPC_$r=127.0.0.1:$(cat "$TMP/sidecar-$r.grpc")"
done

# _run_query NAME STRICT [FLAG...]: Thanos Query on $SR_PORT over both sidecars, declared strict
# (kept in its set, and asked, when their health check fails) or not.
_run_query() {
    _qn=$1 _qs=$2
    shift 2
    exec "$THANOS" query --http-address "127.0.0.1:$SR_PORT" --grpc-address "127.0.0.1:$(free_port)" \
        --endpoint.sd-config "$(printf 'endpoints:\n  - address: %s\n    strict: %s\n  - address: %s\n    strict: %s\n' \
            "$SIDECAR_GRPC_a" "$_qs" "$SIDECAR_GRPC_b" "$_qs")" \
        --query.replica-label replica --log.level warn "$@"
}
# stores_up URL N: Query's /api/v1/stores lists N sidecars that answered their last health
# check, each knowing a time range that reaches back to the history (45 minutes before AT).
stores_up() {
    curl -sf "$1/api/v1/stores" | python3 -c '
import json, sys
s = json.load(sys.stdin)["data"].get("sidecar") or []
ok = [x for x in s if not x.get("lastError") and x.get("minTime", 1 << 62) <= 1699997600000]
sys.exit(len(ok) != int(sys.argv[1]))' "$2"
}
# start_query NAME STRICT [FLAG...]: sets QURL and QPID, waits for both stores.
start_query() {
    _sq=$1
    if ! start_retrying "$TMP/$_sq.log" /-/ready 120 _run_query "$@"; then
        fail "$_sq-ready" "$(tail -n 5 "$TMP/$_sq.log")"
        exit 1
    fi
    QURL=http://127.0.0.1:$SR_PORT QPID=$LAST_PID
    wait_for 60 stores_up "$QURL" 2 || { fail "$_sq-stores" "$(curl -s "$QURL/api/v1/stores")"; exit 1; }
}
start_query query true
pass query-ready

# --- plan: Thanos Query against the single Prometheus read the same way -----------------------
t0=$(date +%s)
"$ENF" plan --rules.file "$RULES" --prometheus.url "$QURL" --at $AT --output json --stats \
    >"$TMP/plan-thanos.json" 2>"$TMP/stats-thanos.txt"
check plan-thanos-exit-0 test $? -eq 0
# Auto read path: Thanos has no remote read, so both selector rules take the PromQL plan.
check plan-thanos-read-paths grep -q 'read=fine:promql,coarse:promql$' "$TMP/stats-thanos.txt"
"$ENF" plan --rules.file "$RULES" --prometheus.url "$PROM_a" --at $AT --output json \
    --prometheus.read-path=promql >"$TMP/plan-prom.json" 2>/dev/null
check plan-prom-exit-0 test $? -eq 0
# same_records A B: the same decision records, in any order.
same_records() {
    python3 - "$1" "$2" <<'PY'
import json, sys
def recs(f):
    """plan's JSON array, run's '@ TIME' blocks of it (--at.decisions) or JSON lines."""
    text = open(f).read()
    if text.lstrip().startswith("["):
        rows = json.loads(text)
    elif text.startswith("@ "):
        rows, at, buf = [], None, []
        for line in text.splitlines(True) + ["@ end"]:
            if line.startswith("@ "):
                if at is not None:
                    rows += [dict(d, at=at) for d in json.loads("".join(buf))]
                at, buf = line[2:].strip(), []
            else:
                buf.append(line)
    else:
        rows = [json.loads(l) for l in text.splitlines() if l.strip()]
    return rows
def key(rows, window):
    return sorted(json.dumps(r if window else {k: v for k, v in r.items() if k != "window"},
                             sort_keys=True) for r in rows)
ra, rb = recs(sys.argv[1]), recs(sys.argv[2])
# The window's statistics (samples, max, mean, last) are shown but decide nothing: Thanos'
# deduplication of the two replicas has been seen to count one sample fewer in a window
# (44 against 45). Counted, not failed.
wdiff = len(set(key(ra, True)) - set(key(rb, True)))
a, b = key(ra, False), key(rb, False)
if a != b:
    sa, sb = set(a), set(b)
    print("%d records against %d; only in the first: %s; only in the second: %s" % (
        len(a), len(b), sorted(sa - sb)[:3], sorted(sb - sa)[:3]))
    sys.exit(1)
print("%d records, %d with other window statistics" % (len(a), wdiff))
PY
}
if out=$(same_records "$TMP/plan-thanos.json" "$TMP/plan-prom.json"); then
    pass "plan-same-as-prometheus ($out)"
else
    fail plan-same-as-prometheus "$out"
fi
# Not vacuous: both rules reclaim some workloads and keep others.
check plan-has-reclaims-and-keeps python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not ({"reclaim", "keep"} <= {x["decision"] for x in d} and len({x["rule"] for x in d}) == 2))' \
    "$TMP/plan-thanos.json"

# An expression as activity: its selectors' raw samples cannot be read through Thanos Query,
# so each of its workloads keeps with query_error, as on Prometheus read through PromQL only.
sed 's/^    activity: rnd_busy_ratio$/    activity: max by (namespace, pod) (rnd_busy_ratio)/' "$RULES" \
    >"$TMP/rules-expr.yaml"
"$ENF" plan --rules.file "$TMP/rules-expr.yaml" --prometheus.url "$QURL" --at $AT --output json \
    >"$TMP/plan-expr.json" 2>"$TMP/plan-expr.err"
check expr-exit-3 test $? -eq 3
check expr-no-raw-read grep -q "activity selector 'rnd_busy_ratio': the server offers no raw read" "$TMP/plan-expr.err"
check expr-all-kept python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not d or any((x["decision"], x["reason"]) != ("keep", "query_error") for x in d))' "$TMP/plan-expr.json"

# --- run: six cycles a minute apart, each decision record equal -------------------------------
run_dry() {
    _rn=$1 _ru=$2
    shift 2
    rm -f "$TMP/run-$_rn.txt"
    "$ENF" run --rules.file "$RULES" --prometheus.url "$_ru" --dry-run --at $((AT - 300)) --at.step 60s \
        --enforce.interval 50ms --at.before-cycle "test \"\${GPURECLAIM_CYCLE_TIME%.*}\" -le $AT" \
        --at.decisions "$TMP/run-$_rn.txt" --state.file "$TMP/state-$_rn.json" \
        --web.listen-address 127.0.0.1:0 "$@" >"$TMP/run-$_rn.log" 2>&1
}
run_dry thanos "$QURL"
run_dry prom "$PROM_a" --prometheus.read-path=promql
check run-six-cycles test "$(grep -c '^@ ' "$TMP/run-thanos.txt" 2>/dev/null)" -eq 6
if out=$(same_records "$TMP/run-thanos.txt" "$TMP/run-prom.txt"); then
    pass "run-same-as-prometheus ($out)"
else
    fail run-same-as-prometheus "$out"
fi
check run-no-query-error sh -c '! grep -q query_error "$1"' sh "$TMP/run-thanos.txt"

# --- backtest: the last 10 minutes (the allocation's), a cycle a minute ----------------------
bt() {
    _bu=$1 _bn=$2
    shift 2
    "$ENF" backtest --rules.file "$RULES" --prometheus.url "$_bu" --from $((AT - 600)) --to $AT \
        --enforce.interval 1m --output json --decisions "$TMP/bt-$_bn.jsonl" "$@"
}
bt "$QURL" thanos >"$TMP/bt-thanos.json" 2>"$TMP/bt-thanos.err"
check backtest-thanos-exit-0 test $? -eq 0
bt "$PROM_a" prom --prometheus.read-path=promql >"$TMP/bt-prom.json" 2>/dev/null
check backtest-prom-exit-0 test $? -eq 0
check backtest-same-result cmp -s "$TMP/bt-thanos.json" "$TMP/bt-prom.json"
if out=$(same_records "$TMP/bt-thanos.jsonl" "$TMP/bt-prom.jsonl"); then
    pass "backtest-same-decisions ($out)"
else
    fail backtest-same-decisions "$out"
fi
echo "note: $SUITE: plan, run and backtest through Thanos Query and Prometheus took $(($(date +%s) - t0)) s"

# --- one sidecar stopped, strict endpoints: no partial answer is believed ---------------------
stop_pid "$SIDECAR_PID_b"
# Thanos' own default (--query.partial-response) answers with the other store's series and a
# warning naming the one that failed.
curl -s "$QURL/api/v1/query" --data-urlencode 'query=count(rnd_devices)' -d time=$AT >"$TMP/partial.json"
check partial-default-warns python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (d["status"] == "success" and d.get("warnings")))' "$TMP/partial.json"
"$ENF" plan --rules.file "$RULES" --prometheus.url "$QURL" --at $AT --output json \
    >"$TMP/plan-down.json" 2>"$TMP/plan-down.err"
check store-down-exit-3 test $? -eq 3
# The allocation's query fails too, so no workload is known: none listed, none reclaimed.
check store-down-all-kept python3 -c '
import json, sys
sys.exit(any((x["decision"], x["reason"]) != ("keep", "query_error") for x in json.load(open(sys.argv[1]))))' \
    "$TMP/plan-down.json"
check store-down-names-store grep -q "prometheus error.*$SIDECAR_GRPC_b" "$TMP/plan-down.err"
stop_pid "$QPID"

# --- not strict: Query drops the stopped store, and the replica left answers whole ----------
start_retrying "$TMP/query-loose.log" /-/ready 120 _run_query query-loose false ||
    { fail query-loose-ready "$(tail -n 5 "$TMP/query-loose.log")"; exit 1; }
QURL=http://127.0.0.1:$SR_PORT QPID=$LAST_PID
check loose-one-store wait_for 60 stores_up "$QURL" 1
"$ENF" plan --rules.file "$RULES" --prometheus.url "$QURL" --at $AT --output json \
    >"$TMP/plan-loose.json" 2>"$TMP/plan-loose.err"
check loose-exit-0 test $? -eq 0
if out=$(same_records "$TMP/plan-loose.json" "$TMP/plan-prom.json"); then
    pass "loose-same-as-prometheus ($out)"
else
    fail loose-same-as-prometheus "$out"
fi
stop_pid "$QPID"

# --- a store that never answers, under --store.response-timeout -----------------------------
if start_retrying "$TMP/sidecar-b2.log" /-/ready 120 _run_sidecar sidecar-b2 "$PROM_b"; then
    SIDECAR_PID_b=$LAST_PID SIDECAR_GRPC_b=127.0.0.1:$(cat "$TMP/sidecar-b2.grpc")
else
    fail sidecar-b2-ready "$(tail -n 5 "$TMP/sidecar-b2.log")"
    exit 1
fi
start_query query-timeout true --store.response-timeout=1s
kill -STOP "$SIDECAR_PID_b"
CLEANUP_HOOK="kill -CONT $SIDECAR_PID_b 2>/dev/null"
"$ENF" plan --rules.file "$RULES" --prometheus.url "$QURL" --at $AT --output json \
    >"$TMP/plan-timeout.json" 2>"$TMP/plan-timeout.err"
check timeout-exit-3 test $? -eq 3
check timeout-names-setting grep -q "over the server's --store.response-timeout): .*failed to receive any data in 1s from" "$TMP/plan-timeout.err"
check timeout-all-kept python3 -c '
import json, sys
sys.exit(any((x["decision"], x["reason"]) != ("keep", "query_error") for x in json.load(open(sys.argv[1]))))' \
    "$TMP/plan-timeout.json"
kill -CONT "$SIDECAR_PID_b"
finish
