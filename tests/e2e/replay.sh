#!/bin/sh
# The backtest's range reader (enforcer/replay.c, driven by tests/fakes/replay_dump) against
# `plan --at t` (issue 25): on random histories (gen_replay.py, 3 seeds; selector rules at
# three resolutions, one with an override, a DuringGPUPressure rule and an expression rule),
# every decision record of every compared cycle time is the same JSON object, field for field
# (decision, reason, idleSince, detail, window, allocation...), on a real Prometheus 2.42 (raw
# samples by remote read, loaded by remote write with staleness markers) and on
# VictoriaMetrics (raw samples by /api/v1/export). Replay reads in chunks of 25 minutes, which
# fall across cycle times and across the rules' windows, so series are carried from chunk to
# chunk. Then: a server that fails half-way makes the cycles it covers query_error, never idle,
# and names the part; a range that starts before the data says where the data starts.
# Then the event-driven backtest (issue 31: only the workloads whose decision can have changed
# judged, the engine stepped only for reclaims and open notices) against
# --backtest.every-cycle on each server and seed (backtests, below). Seed 3's history ends at
# 2023-11-05T09:00:00Z, across New York's change from daylight to standard time.
# SEEDS (default "1 2 3"), N (default 120 pods) and EVERY (compare every EVERY-th cycle,
# default 3) set the size.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/replay
ENF=$BIN/gpureclaim-enforcer
RW=$(fake_bin remote_write)
DUMP=$(fake_bin replay_dump)
END=1700000000
FROM=$((END - 6000))
INTERVAL=120
CHUNK=1500
RULES=$DATA/rules-replay.yaml

require prometheus victoria-metrics python3 curl "$ENF" "$RW" "$DUMP"

# compare NAME URL [READ_PATH]: replay over [FROM, END], then plan --at each compared cycle.
# MODE (replay_dump's REPLAY_MODE): carry (the default) and windowed compare whole records;
# lean, whose records have window statistics only where a verdict needs them, compares the
# decision, the reason and the idle time of each (the backtest without --decisions).
compare() {
    _name=$1 _url=$2 _path=${3:-auto}
    if ! REPLAY_MODE=${MODE:-carry} "$DUMP" "$_url" "$RULES" $FROM $END $INTERVAL $CHUNK "$_path" \
        >"$TMP/replay.txt" 2>"$TMP/replay.err"; then
        fail "$_name-replay-exit-0" "$(tail -n 3 "$TMP/replay.err")"
        return
    fi
    pass "$_name-replay-exit-0"
    : >"$TMP/plans.txt"
    _k=0
    _t=$FROM
    while [ $_t -le $END ]; do
        if [ $((_k % ${EVERY:-3})) -eq 0 ] || [ $_t -eq $END ]; then
            echo "@ $_t" >>"$TMP/plans.txt"
            "$ENF" plan --rules.file "$RULES" --prometheus.url "$_url" --at $_t --output json \
                --prometheus.read-path="$_path" >>"$TMP/plans.txt" 2>>"$TMP/plans.err"
        fi
        _k=$((_k + 1))
        _t=$((_t + INTERVAL))
    done
    LEAN=$([ "${MODE:-carry}" = lean ] && echo 1) NAME=$_name SUITE=$SUITE DATA=$DATA \
        python3 - "$TMP/replay.txt" "$TMP/plans.txt" "$TMP/replay.err" <<'PY' ||
import json, os, re, sys

sys.path.insert(0, os.environ["DATA"])
from replay_json import blocks, key

replay, plans = blocks(sys.argv[1]), blocks(sys.argv[2])
stats = open(sys.argv[3]).read()
name, suite = os.environ["NAME"], os.environ["SUITE"]
bad, n, reasons, fallback = [], 0, {}, re.search(r"fallback_rules=(\d+)", stats)
for t, plan in sorted(plans.items()):
    if t not in replay:
        bad.append("cycle %d missing from the replay" % t)
        continue
    a = {key(d): d for d in replay[t]}
    b = {key(d): d for d in plan}
    if os.environ.get("LEAN"):
        lean = lambda d: {f: d[f] for f in ("decision", "reason", "idleSince")}
        a = {k: lean(d) for k, d in a.items()}
        b = {k: lean(d) for k, d in b.items()}
    for k in sorted(set(a) | set(b)):
        n += 1
        ra, rb = a.get(k), b.get(k)
        if ra != rb:
            diff = sorted(f for f in set(ra or {}) | set(rb or {})
                          if (ra or {}).get(f) != (rb or {}).get(f))
            bad.append("t=%d %s %s: %s replay %s plan %s" % (
                t, k[0], k[1], diff, [(ra or {}).get(f) for f in diff],
                [(rb or {}).get(f) for f in diff]))
        if rb:
            r = "%s/%s" % (rb["decision"], rb["reason"])
            reasons[r] = reasons.get(r, 0) + 1
ok = not bad and n > 0 and reasons.get("reclaim/idle", 0) > 0
print("%s: %s/%s-same-as-plan (%d cycles replayed, %d compared, %d decision records, "
      "%d differ; plan's reasons %s; %s)%s" % (
          "PASS" if ok else "FAIL", suite, name, len(replay), len(plans), n, len(bad),
          ", ".join("%s=%d" % kv for kv in sorted(reasons.items())), stats.strip(),
          "" if not bad else "\n  " + "\n  ".join(bad[:15])))
sys.exit(0 if ok else 1)
PY
        TEST_FAILED=$((TEST_FAILED + 1))
}

# failures: on the first seed's Prometheus, through a proxy that fails the 4th raw read
# (tests/e2e/data/replay/failproxy.py): exit 3, the failed part named on stderr, and each
# record either what the good replay gave or, for a selector rule whose window reaches into
# that part, keep/query_error. Then a range that starts an hour before the data: where the
# data starts is reported, and nothing is reclaimed before a whole idle timer of data.
failures() {
    # The selector rules only: the expression rule's per-cycle reads (exprcov) would take
    # the proxy's count.
    sed '/^- name: expr/,$d' "$RULES" >"$TMP/rules-sel.yaml"
    "$DUMP" "$PROM_URL" "$TMP/rules-sel.yaml" $FROM $END $INTERVAL $CHUNK >"$TMP/good.txt" \
        2>"$TMP/good.err"
    start_bg "$TMP/proxy.log" python3 "$DATA/failproxy.py" "$PROM_URL" 4
    _pport=$(listening "$TMP/proxy.log")
    "$DUMP" "http://127.0.0.1:$_pport" "$TMP/rules-sel.yaml" $FROM $END $INTERVAL $CHUNK \
        >"$TMP/failed.txt" 2>"$TMP/failed.err"
    check failed-read-exit-3 test $? -eq 3
    check failed-read-named grep -Eq '^failed: 2023-11-[0-9]+T[0-9:]+Z to 2023-11-[0-9]+T[0-9:]+Z: activity .rp_busy_ratio. \(remote_read\): remote read: HTTP 503 from ./api/v1/read.: injected failure$' "$TMP/failed.err"
    SUITE=$SUITE DATA=$DATA python3 - "$TMP/good.txt" "$TMP/failed.txt" <<'PY' || TEST_FAILED=$((TEST_FAILED + 1))
import json, os, sys
sys.path.insert(0, os.environ["DATA"])
from replay_json import blocks, key
good, failed = blocks(sys.argv[1]), blocks(sys.argv[2])
same = err = gone = 0
bad = []
for t in sorted(good):
    a = {key(d): d for d in good[t]}
    b = {key(d): d for d in failed.get(t, [])}
    for k in sorted(set(a) | set(b)):
        ra, rb = a.get(k), b.get(k)
        if ra == rb:
            same += 1
        elif rb and rb["decision"] == "keep" and rb["reason"] == "query_error" and \
                " not read: " in rb["detail"]:
            err += 1
        elif not rb and any(d["rule"] == k[0] and d["reason"] == "query_error" for d in b.values()):
            # A failed rule lists the workloads it knows from the allocation only (as plan).
            gone += 1
        else:
            bad.append("t=%d %s: good %s failed %s" % (t, k, ra and (ra["decision"], ra["reason"]),
                                                      rb and (rb["decision"], rb["reason"])))
ok = not bad and err > 0 and same > 0
print("%s: %s/failed-read-query-error (%d records as without the failure, %d keep/query_error, "
      "%d not listed by a failed rule%s)"
      % ("PASS" if ok else "FAIL", os.environ["SUITE"], same, err, gone,
         "" if not bad else ":\n  " + "\n  ".join(bad[:10])))
sys.exit(0 if ok else 1)
PY
    stop_pid "$LAST_PID"
    # The read-ahead (enforcer/replay_ahead.c: the next chunk read by a thread while this
    # one's cycles are judged) hands over what reading each chunk in place reads, failures
    # included: the same records, the same failed part, the same stats but the time.
    REPLAY_SYNC=1 "$DUMP" "$PROM_URL" "$TMP/rules-sel.yaml" $FROM $END $INTERVAL $CHUNK \
        >"$TMP/good-sync.txt" 2>"$TMP/good-sync.err"
    check read-ahead-same-records cmp -s "$TMP/good.txt" "$TMP/good-sync.txt"
    start_bg "$TMP/proxy2.log" python3 "$DATA/failproxy.py" "$PROM_URL" 4
    _pport=$(listening "$TMP/proxy2.log")
    REPLAY_SYNC=1 "$DUMP" "http://127.0.0.1:$_pport" "$TMP/rules-sel.yaml" $FROM $END $INTERVAL \
        $CHUNK >"$TMP/failed-sync.txt" 2>"$TMP/failed-sync.err"
    check read-ahead-failed-exit-3 test $? -eq 3
    stop_pid "$LAST_PID"
    check read-ahead-failed-same-records cmp -s "$TMP/failed.txt" "$TMP/failed-sync.txt"
    # But the clock: the log lines' time and the stats' seconds.
    sed 's/^ts=[^ ]* //; s/ seconds=[0-9.]*$//' "$TMP/failed.err" >"$TMP/failed.err.cmp"
    sed 's/^ts=[^ ]* //; s/ seconds=[0-9.]*$//' "$TMP/failed-sync.err" >"$TMP/failed-sync.err.cmp"
    check read-ahead-failed-logged grep -q 'injected failure' "$TMP/failed.err.cmp"
    check read-ahead-failed-same-stderr cmp -s "$TMP/failed.err.cmp" "$TMP/failed-sync.err.cmp"

    _from=$((END - 5 * 3600))
    "$DUMP" "$PROM_URL" "$RULES" $_from $((END - 3 * 3600)) 300 >"$TMP/early.txt" 2>"$TMP/early.err"
    check early-exit-0 test $? -eq 0
    _start=$(sed -n 's/.* data_start=\([0-9.]*\) .*/\1/p' "$TMP/early.err")
    check early-data-start awk -v s="$_start" -v e=$((END - 4 * 3600)) 'BEGIN { exit !(s >= e && s < e + 3) }'
    # No reclaim before the shortest idle timer (10m) has data behind it.
    awk -v s="$_start" '/^@ / { t = $2 } /"decision": "reclaim"/ && t < s + 600 { bad = 1 } END { exit bad }' "$TMP/early.txt"
    check early-nothing-reclaimed-before-data test $? -eq 0
    grep -q '"decision": "reclaim"' "$TMP/early.txt"
    check early-reclaims-later test $? -eq 0
}

# backtests NAME URL: the backtest of rules-due.yaml over 3.5 hours (notices and spares,
# returns, pressure on and off, caps that bind (the hourly one reached), active windows in
# America/New_York, selector and expression rules), event-driven (the default) against
# --backtest.every-cycle (decide() of every workload and the engine over every decision at
# every cycle): the same result, every per-rule total and every reclaim, and the same
# --decisions file, byte for byte; the same result without --decisions (proofs without window
# statistics); and the event-driven run carried more than a third of the workload-cycles.
backtests() {
    _bn=$1 _url=$2
    for _mode in event every lean; do
        set -- --output json
        [ $_mode = every ] && set -- "$@" --backtest.every-cycle
        [ $_mode = lean ] || set -- "$@" --decisions "$TMP/bt-$_mode.jsonl"
        "$ENF" backtest --rules.file "$DATA/rules-due.yaml" --prometheus.url "$_url" \
            --from $((END - 12600)) --to $END --enforce.interval 2m \
            --enforce.max-actions-per-hour 12 --stats "$@" >"$TMP/bt-$_mode.json" \
            2>"$TMP/bt-$_mode.err"
        check "$_bn-backtest-$_mode-exit-0" test $? -eq 0
    done
    check "$_bn-backtest-same-result" cmp -s "$TMP/bt-event.json" "$TMP/bt-every.json"
    check "$_bn-backtest-same-decisions" cmp -s "$TMP/bt-event.jsonl" "$TMP/bt-every.jsonl"
    check "$_bn-backtest-lean-same-result" cmp -s "$TMP/bt-lean.json" "$TMP/bt-every.json"
    # What the histories exercise (so that equality means something), and the shortcut taken.
    _got=$(python3 - "$TMP/bt-every.json" "$TMP/bt-lean.err" <<'PY'
import datetime, json, re, sys
r = json.load(open(sys.argv[1]))
rules = {s["rule"]: s for s in r["rules"]}
tot = lambda f: sum(s[f] for s in r["rules"])
kept = lambda why: sum(s["keptByReason"].get(why, 0) for s in r["rules"])
ts = sorted(datetime.datetime.strptime(x["reclaimed"], "%Y-%m-%dT%H:%M:%SZ").timestamp()
            for x in r["reclaims"])
hour = max((sum(1 for u in ts if t <= u < t + 3600) for t in ts), default=0)
m = re.search(r"(\d+) workload-cycles judged, (\d+) carried", open(sys.argv[2]).read())
judged, carried = int(m.group(1)), int(m.group(2))
p = rules["pressure"]
print(tot("notices") > 0, tot("spared") > 0, tot("returns") > 0, kept("cycle_cap") > 0,
      kept("outside_window") > 0, rules["windowed"]["notices"] > 0, hour == 12,
      kept("no_pressure") > 0,
      p["notices"] + p["keptByReason"].get("not_needed", 0) + p["keptByReason"].get("fit_check", 0) > 0,
      kept("gap") + kept("stale") + kept("not_a_number") > 0, rules["expr"]["reclaims"] > 0,
      2 * carried > judged)
# (rule, notices, spared, reclaims, returns, kept by reason), judged, carried, most in an hour
print(json.dumps([(s["rule"], s["notices"], s["spared"], s["reclaims"], s["returns"],
                   s["keptByReason"]) for s in r["rules"]]), judged, carried, hour)
PY
)
    _seen=$(echo "$_got" | tail -n 1)
    _got=$(echo "$_got" | head -n 1)
    if [ "$_got" = "True True True True True True True True True True True True" ]; then
        pass "$_bn-backtest-exercised"
    else
        fail "$_bn-backtest-exercised" "notices spared returns cycle_cap outside_window windowed-notices hourly-cap-reached no_pressure pressure-on gap/stale/nan expr-reclaims 2*carried>judged: $_got; $_seen"
    fi
}

printf 'global:\n  scrape_interval: 15s\nscrape_configs: []\n' >"$TMP/prometheus.yml"
SEEDS=${SEEDS:-1 2 3}
FIRST=${SEEDS%% *}
for seed in $SEEDS; do
    END=1700000000
    [ "$seed" = 3 ] && END=1699174800
    FROM=$((END - 6000))
    rm -f "$TMP/samples.txt" "$TMP/import.prom"
    if ! REPLAY_END=$END python3 "$DATA/gen_replay.py" "$seed" "${N:-120}" "$TMP/samples.txt" \
        "$TMP/import.prom"; then
        fail "seed$seed-history"
        continue
    fi

    rm -rf "$TMP/tsdb"
    mkdir -p "$TMP/tsdb"
    if start_prometheus "$TMP/prometheus.yml" "$TMP/tsdb" --web.enable-remote-write-receiver; then
        check "seed$seed-remote-write" sh -c '"$1" "$2" <"$3"' sh "$RW" "$PROM_URL" "$TMP/samples.txt"
        compare "seed$seed-prometheus" "$PROM_URL"
        MODE=lean compare "seed$seed-prometheus-lean" "$PROM_URL"
        # Every selector rule read once; the expression rule per cycle, since its selectors'
        # raw samples prove it at each cycle (docs/decision-semantics.md §3.2).
        grep -q 'fallback_rules=1 ' "$TMP/replay.err"
        check "seed$seed-prometheus-one-per-cycle-rule" test $? -eq 0
        backtests "seed$seed-prometheus" "$PROM_URL"
        if [ "$seed" = "$FIRST" ]; then
            failures
            # The PromQL plan for the selector rules too (coverage queries, sliced).
            compare "seed$seed-prometheus-promql" "$PROM_URL" promql
            # Each cycle's window folded again (rules with more thresholds than a proof folds).
            MODE=windowed compare "seed$seed-prometheus-windowed" "$PROM_URL"
        fi
        stop_pid "$PROM_PID"
    else
        fail "seed$seed-prometheus-ready" "$(tail -n 5 "$TMP/prometheus.log")"
    fi

    if start_vm "vm$seed"; then
        check "seed$seed-vm-import" sh -c 'curl -sf --data-binary @"$1" "$2/api/v1/import/prometheus" &&
            curl -sf "$2/internal/force_flush" >/dev/null' sh "$TMP/import.prom" "$VM_URL"
        compare "seed$seed-victoriametrics" "$VM_URL"
        MODE=lean compare "seed$seed-victoriametrics-lean" "$VM_URL"
        # VictoriaMetrics' range queries look back otherwise than its instant queries: the
        # expression rule is read per cycle there (fetch_rules), the instant series too.
        grep -q 'fallback_rules=1 ' "$TMP/replay.err"
        check "seed$seed-victoriametrics-expression-per-cycle" test $? -eq 0
        backtests "seed$seed-victoriametrics" "$VM_URL"
        stop_pid "$VM_PID"
    else
        fail "seed$seed-vm-ready" "$(tail -n 5 "$TMP/vm$seed.log")"
    fi
done
finish
