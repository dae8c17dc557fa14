#!/bin/sh
# End to end: `gpureclaim-enforcer recommend` on the history of the README's backtest example
# (tests/e2e/data/backtest/gen_types.py, here five days so that the range chosen on holds
# the three days of data the recommendation wants), on Prometheus and on VictoriaMetrics:
# the choice per namespace, the properties of the sweep (freed GPU-hours and reclaims never
# grow with the idle timer; the fast pass's CSV is the per-point engine's, byte for byte),
# the round trip of the YAML output through `check` and `backtest` (the same figures), the
# held-out part, "not enough data", the README's output, the HTML page in headless Chromium
# (tests/e2e/data/recommend/page.py), and the refused flags and bad input.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/backtest
ENF=$BIN/gpureclaim-enforcer
FROM=2023-10-29T06:00:00Z
TO=2023-11-03T00:00:00Z
# The range chosen on with --holdout 25%: 1369 cycles, the last 342 held out.
FIT_TO=2023-11-01T19:30:00Z
GRID="--thresholds 2,5,10 --idle-timers 15m,1h,2h,4h --notice-periods 0s,15m,30m"

require prometheus promtool victoria-metrics python3 curl "$ENF"

python3 "$DATA/gen_types.py" "$TMP/types.om" 5
# A day before it, two pods whose namespaces are markup, for the page (--output html).
PAGE="python3 $TOP/tests/e2e/data/recommend/page.py"
$PAGE hostile "$TMP/hostile.om"
mkdir -p "$TMP/tsdb"
check hostile-backfill promtool tsdb create-blocks-from openmetrics "$TMP/hostile.om" "$TMP/tsdb" -q
need_history "$TMP/types.om"

rec() {
    # shellcheck disable=SC2086
    (cd "$TOP" && "$ENF" recommend --rules.file rules/amd-walkthrough.yaml --prometheus.url "$URL" \
        --from $FROM --to $TO --enforce.interval 5m $GRID --max-return-share 20% "$@")
}

# The checks on one server ($URL), named NAME-...
suite() {
    name=$1
    rec --output json >"$TMP/$name.json" 2>"$TMP/$name.err"
    check "$name-json-exit-0" test $? -eq 0
    # The choice per namespace. Notebook owners pause for 10-45 minutes (gen_types.py): a
    # timer of an hour or more, at a threshold above their 0-3 % pauses; inference serves at
    # 1-4 % and training dips below 10 % at every checkpoint, both back within the hour
    # whatever the setting: no recommendation.
    got=$(python3 - "$TMP/$name.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for g in r["groups"]:
    c = g["recommended"]
    print(g["by"]["namespace"], "none: " + g["reason"] if c is None else
          "%s %s %s" % (c["threshold"], c["idleTimer"], c["noticePeriod"]))
PY
)
    want="inference none: no setting frees GPU-hours without interrupting more than 20%: keep, or exempt
notebooks 2 2h 0s
training none: no setting frees GPU-hours without interrupting more than 20%: keep, or exempt"
    if [ "$got" = "$want" ]; then pass "$name-choice"; else
        fail "$name-choice" "$(printf 'got:\n%s\nwant:\n%s' "$got" "$want")"; fi
    # The chosen point is the best inside the target among the CSV's rows (every grid point),
    # its share within its Wilson interval, and the frontier holds it.
    rec --output csv >"$TMP/$name.csv" 2>/dev/null
    check "$name-csv-rows" test "$(wc -l <"$TMP/$name.csv")" -eq $((3 * 36 + 1))
    # The fast pass (enforcer/recfast.h) scored every grid point, and each of its figures,
    # held-out ones included, is the engine's: the CSV of --recommend.engine (a simulation
    # per grid point) is the same file. Also without the hourly cap, which couples the
    # workloads of a point (the engine behind the fast pass steps it too).
    rec --output csv --stats >"$TMP/$name-fast.csv" 2>"$TMP/$name-fast.err"
    check "$name-fast-pass-used" grep -q "^recommend: 3 groups x 36 grid points: 108 by the fast pass, 0 by the engine" "$TMP/$name-fast.err"
    rec --output csv --recommend.engine --stats >"$TMP/$name-engine.csv" 2>"$TMP/$name-engine.err"
    check "$name-engine-flag" grep -q "^recommend: 3 groups x 36 grid points: 0 by the fast pass, 108 by the engine" "$TMP/$name-engine.err"
    check "$name-fast-equals-engine" cmp "$TMP/$name.csv" "$TMP/$name-engine.csv"
    rec --output csv --enforce.max-actions-per-hour 0 >"$TMP/$name-fast0.csv" 2>/dev/null
    rec --output csv --enforce.max-actions-per-hour 0 --recommend.engine \
        >"$TMP/$name-engine0.csv" 2>/dev/null
    check "$name-fast-equals-engine-no-cap" cmp "$TMP/$name-fast0.csv" "$TMP/$name-engine0.csv"
    check "$name-choice-is-best" python3 - "$TMP/$name.csv" "$TMP/$name.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
r = json.load(open(sys.argv[2]))
for g in r["groups"]:
    mine = [x for x in rows if x["value"] == g["by"]["namespace"]]
    inside = [x for x in mine if int(x["reclaims"]) and float(x["gpu_hours_freed"]) > 0
              and int(x["returns_within"]) <= 0.2 * int(x["reclaims"])]
    chosen = [x for x in mine if x["recommended"] == "true"]
    c = g["recommended"]
    if c is None:
        assert not inside and not chosen, (g["by"], inside)
        continue
    best = max(float(x["gpu_hours_freed"]) for x in inside)
    assert len(chosen) == 1 and float(chosen[0]["gpu_hours_freed"]) == best, (chosen, best)
    assert abs(c["gpuHoursFreed"] - best) < 1e-3 and c["reclaims"] == int(chosen[0]["reclaims"])
    lo, hi = c["returnShareInterval"]
    assert lo <= c["returnShare"] <= hi and 0 <= lo and hi <= 1
    assert chosen[0]["frontier"] == "true"
    assert any(f["idleTimer"] == c["idleTimer"] and f["threshold"] == c["threshold"]
               for f in g["frontier"])
PY
    # Property: freed GPU-hours and reclaims never grow with the idle timer.
    check "$name-monotone-in-idle-timer" python3 - "$TMP/$name.csv" <<'PY'
import csv, sys
from collections import defaultdict
sec = {"15m": 900, "1h": 3600, "2h": 7200, "4h": 14400}
g = defaultdict(list)
for x in csv.DictReader(open(sys.argv[1])):
    g[(x["value"], x["threshold"], x["notice_period"])].append(x)
for k, v in g.items():
    v.sort(key=lambda x: sec[x["idle_timer"]])
    for a, b in zip(v, v[1:]):
        assert float(b["gpu_hours_freed"]) <= float(a["gpu_hours_freed"]) + 1e-9, (k, a, b)
        assert int(b["reclaims"]) <= int(a["reclaims"]), (k, a, b)
PY
    # Held out: the recommendation's figures over the last quarter, beside the prediction.
    got=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
g = [g for g in r["groups"] if g["recommended"]][0]
print(r["chosenOn"]["to"], r["heldOut"]["from"], r["heldOut"]["to"],
      g["holdout"]["predicted"]["reclaims"] == g["recommended"]["reclaims"],
      g["holdout"]["heldOut"]["reclaims"] > 0, g["holdout"]["aboveTarget"])' "$TMP/$name.json")
    check "$name-holdout" test "$got" = "$FIT_TO 2023-11-01T19:35:00Z $TO True True False"

    # The rules file: `check` accepts it, and its backtest over the range chosen on gives
    # the figures recommend printed for it (without the hourly cap every rule shares, a
    # group's variant alone and the file's rule with the others are the same simulation).
    rec --output yaml --enforce.max-actions-per-hour 0 >"$TMP/$name.yaml" 2>/dev/null
    rec --output json --enforce.max-actions-per-hour 0 >"$TMP/$name-nocap.json" 2>/dev/null
    "$ENF" check "$TMP/$name.yaml" >"$TMP/$name-check.txt" 2>&1
    check "$name-yaml-check" test $? -eq 0
    check "$name-yaml-comment" grep -q "^# namespace=notebooks (rule 'amd-walkthrough'): fitted on $FROM .. $FIT_TO: [0-9]* reclaims, [0-9.]* GPU-hours freed" "$TMP/$name.yaml"
    "$ENF" backtest --rules.file "$TMP/$name.yaml" --prometheus.url "$URL" --from $FROM \
        --to $FIT_TO --enforce.interval 5m --enforce.max-actions-per-hour 0 --output json \
        >"$TMP/$name-yaml-bt.json" 2>/dev/null
    check "$name-yaml-backtest-exit-0" test $? -eq 0
    check "$name-yaml-backtest-equal" python3 - "$TMP/$name-nocap.json" "$TMP/$name-yaml-bt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bt = {x["rule"]: x for x in json.load(open(sys.argv[2]))["rules"]}
n = 0
for g in r["groups"]:
    b = bt[g["name"]]
    for fig in [g["confirmed"]] + ([g["recommended"]] if g["recommended"] else []):
        if fig is None:
            continue
        assert fig["reclaims"] == b["reclaims"], (g["name"], fig, b["reclaims"])
        assert fig["returnsWithin"] == b["returnsWithin"], (g["name"], fig)
        assert abs(fig["gpuHoursFreed"] - b["gpuHoursFreed"]) < 1e-4, (g["name"], fig)
        n += 1
assert n == 2, n  # notebooks: the recommended and the confirmed figure
PY
    # With the shared hourly cap (the default, 10) the file's backtest is the "confirmed"
    # figure, named beside the sweep's when they differ.
    rec --output yaml >"$TMP/$name-cap.yaml" 2>/dev/null
    "$ENF" backtest --rules.file "$TMP/$name-cap.yaml" --prometheus.url "$URL" --from $FROM \
        --to $FIT_TO --enforce.interval 5m --output json >"$TMP/$name-cap-bt.json" 2>/dev/null
    check "$name-yaml-cap-confirmed" python3 - "$TMP/$name.json" "$TMP/$name-cap-bt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bt = {x["rule"]: x for x in json.load(open(sys.argv[2]))["rules"]}
for g in r["groups"]:
    if g["confirmed"]:
        b = bt[g["name"]]
        assert (g["confirmed"]["reclaims"], g["confirmed"]["returnsWithin"]) == \
            (b["reclaims"], b["returnsWithin"]), (g, b)
        assert abs(g["confirmed"]["gpuHoursFreed"] - b["gpuHoursFreed"]) < 1e-4
PY
}

URL=$PROM_URL
suite prometheus
# The table: current -> recommended, the held-out line, the frontier with the choice marked.
rec >"$TMP/table.txt" 2>/dev/null
check table-exit-0 test $? -eq 0
check table-head grep -q "^rules/amd-walkthrough.yaml: chosen on $FROM .. $FIT_TO, every 5m, scored on 2023-11-01T19:35:00Z .. $TO; target: at most 20% returned within 1h; 36 grid points$" "$TMP/table.txt"
check table-current-to-recommended grep -q '^amd-walkthrough namespace=notebooks (8 workloads): 10% 15m notice 0s -> 2% 2h notice 0s$' "$TMP/table.txt"
check table-none grep -q '^amd-walkthrough namespace=inference (4 workloads): 10% 15m notice 0s -> (none)$' "$TMP/table.txt"
check table-held-out grep -q '^  held out     [0-9]* reclaims, ' "$TMP/table.txt"
check table-frontier-marked grep -q ' 2% 2h notice 0s  <- recommended$' "$TMP/table.txt"
# The README's example is what the command prints.
sed -n '/^<!-- recommend-types:begin -->$/,/^<!-- recommend-types:end -->$/p' "$TOP/README.md" |
    grep -v -e '^<!--' -e '^```' -e '^\.\.\.$' >"$TMP/readme-lines"
check readme-example-lines test "$(wc -l <"$TMP/readme-lines")" -ge 10
missing=$(grep -vxF -f "$TMP/table.txt" "$TMP/readme-lines")
check readme-example-output test -z "$missing"

# --- the page (--output html), rendered by Debian's headless Chromium --------------------------
# One chart per group with the recommended and the current setting marked by the numbers of
# --output json (the DOM Chromium builds from the page, read back), nothing loaded from
# anywhere, hostile namespaces shown as text. The screenshot stays in the results for a look.
SHOTS=${RESULTS:-build/results}
case $SHOTS in /*) ;; *) SHOTS=$TOP/$SHOTS ;; esac
SHOTS=$SHOTS/e2e-$SUITE # beside build/results/e2e-recommend.log
mkdir -p "$SHOTS"
chrome() { # chromium's headless mode, its profile in $TMP; as root it needs --no-sandbox
    chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
        --user-data-dir="$TMP/chromium" "$@" 2>>"$TMP/chromium.log"
}
if command -v chromium >/dev/null 2>&1; then
    rec --output html >"$SHOTS/page.html" 2>/dev/null
    check page-exit-0 test $? -eq 0
    $PAGE static "$SHOTS/page.html" || TEST_FAILED=$((TEST_FAILED + 1))
    chrome --dump-dom "file://$SHOTS/page.html" >"$TMP/page.dom"
    check page-dom-dumped grep -q '<svg class="rec-chart"' "$TMP/page.dom"
    $PAGE check "$TMP/page.dom" "$TMP/prometheus.json" 36 || TEST_FAILED=$((TEST_FAILED + 1))
    # The check can fail: a recommended point with another reclaim count is found out.
    sed 's/\(<circle class="recommended"[^>]*data-reclaims="\)[0-9]*/\1999999/' "$TMP/page.dom" \
        >"$TMP/page-bad.dom"
    $PAGE check "$TMP/page-bad.dom" "$TMP/prometheus.json" 36 >"$TMP/page-bad.out"
    check page-check-finds-a-wrong-mark grep -q '^FAIL: recommend/page-notebooks-recommended-mark (data-reclaims=.999999.' "$TMP/page-bad.out"
    chrome --screenshot="$SHOTS/page.png" --window-size=1000,3000 "file://$SHOTS/page.html" >/dev/null
    check page-screenshot python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read(24)
assert b[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", b[16:24]) == (1000, 3000)
' "$SHOTS/page.png"
    # Hostile label values: the day of hostile.om, where they are the only namespaces.
    "$ENF" recommend --rules.file "$TOP/rules/amd-walkthrough.yaml" --prometheus.url "$URL" \
        --from 2023-10-27T00:00:00Z --to 2023-10-28T00:00:00Z --enforce.interval 5m $GRID \
        --output html >"$SHOTS/hostile.html" 2>"$TMP/hostile.err"
    check page-hostile-exit-0 test $? -eq 0
    check page-hostile-escaped grep -qF 'namespace=&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;' "$SHOTS/hostile.html"
    $PAGE static "$SHOTS/hostile.html" >"$TMP/hostile-static.out" || TEST_FAILED=$((TEST_FAILED + 1))
    sed 's/page-static/page-hostile-static/' "$TMP/hostile-static.out"
    chrome --dump-dom "file://$SHOTS/hostile.html" >"$TMP/hostile.dom"
    $PAGE hostile-check "$TMP/hostile.dom" || TEST_FAILED=$((TEST_FAILED + 1))
    chrome --screenshot="$SHOTS/hostile.png" --window-size=1000,1600 "file://$SHOTS/hostile.html" >/dev/null
else
    fail page-chromium "chromium not installed (tests/deps.sh installs it)"
fi

# --holdout 0: chosen on the whole range, nothing held out.
rec --holdout 0 --output json >"$TMP/h0.json" 2>/dev/null
got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["chosenOn"]["to"], r["heldOut"], [g["holdout"] for g in r["groups"]])' "$TMP/h0.json")
check holdout-0 test "$got" = "$TO None [None, None, None]"

# Not enough data, with the rule it broke.
rec --min-history 4d --output json >"$TMP/short.json" 2>/dev/null
got=$(python3 -c 'import json,sys; print(set(g["reason"] for g in json.load(open(sys.argv[1]))["groups"]))' "$TMP/short.json")
check not-enough-history test "$got" = "{'not enough data: 3d13h30m of data in the range chosen on, under --min-history 4d'}"
# The idle periods are the reclaims of the most eager point (10 %, 15m, no notice): the
# CSV's row of that point.
rec --min-idle-periods 1000 --output json >"$TMP/few.json" 2>/dev/null
check not-enough-idle-periods python3 - "$TMP/few.json" "$TMP/prometheus.csv" <<'PY'
import csv, json, sys
rows = {x["value"]: x for x in csv.DictReader(open(sys.argv[2]))
        if (x["threshold"], x["idle_timer"], x["notice_period"]) == ("10", "15m", "0s")}
gs = json.load(open(sys.argv[1]))["groups"]
assert len(gs) == 3
for g in gs:
    want = ("not enough data: the most eager setting reclaims %s times, under "
            "--min-idle-periods 1000" % rows[g["by"]["namespace"]]["reclaims"])
    assert g["recommended"] is None and g["reason"] == want, (g["reason"], want)
PY

# --- refused flags and bad input ----------------------------------------------------------
bad() { # NAME MESSAGE-REGEX FLAG...
    _n=$1 _m=$2
    shift 2
    rec "$@" >/dev/null 2>"$TMP/bad-$_n.err"
    _rc=$?
    check "bad-$_n-exit-1" test $_rc -eq 1
    check "bad-$_n-message" grep -q "$_m" "$TMP/bad-$_n.err"
}
bad thresholds "^error: invalid value 'x' in '--thresholds': want a percent above 0 and at most 100" --thresholds 1,x
bad thresholds-range "^error: invalid value '150' in '--thresholds'" --thresholds 5,150
bad empty-item "^error: invalid list '1,,2' for '--thresholds': an empty item$" --thresholds 1,,2
bad share "^error: invalid share '120%' for '--max-return-share': want a percent from 0 to 100, e.g. 10%$" --max-return-share 120%
bad holdout "^error: invalid share '95%' for '--holdout'" --holdout 95%
bad idle-timer "^error: idle timer '1m' of '--idle-timers' is not valid for rule 'amd-walkthrough': it must be longer than its toleratedGap (2m)" --idle-timers 1m,1h
bad compare "^error: flag '--compare' does not apply to 'recommend'$" --compare rules/amd-walkthrough.yaml
bad top "^error: flag '--top' does not apply to 'recommend'$" --top 3
bad decisions "^error: flag '--decisions' does not apply to 'recommend'$" --decisions /dev/null
"$ENF" recommend --rules.file "$TOP/rules/amd-walkthrough.yaml" --prometheus.url "$URL" \
    >/dev/null 2>"$TMP/no-from.err"
check no-from-exit-1 test $? -eq 1
check no-from-message grep -q "^error: 'recommend' needs --from, e.g. --from 7d$" "$TMP/no-from.err"
"$ENF" backtest --rules.file "$TOP/rules/amd-walkthrough.yaml" --prometheus.url "$URL" \
    --from 1h --output yaml >/dev/null 2>"$TMP/bt-yaml.err"
check backtest-no-yaml grep -q "^error: invalid output 'yaml' for 'backtest'" "$TMP/bt-yaml.err"
"$ENF" plan --rules.file "$TOP/rules/amd-walkthrough.yaml" --prometheus.url "$URL" \
    --max-return-share 5% >/dev/null 2>"$TMP/plan-share.err"
check plan-refuses-grid grep -q "^error: flag '--max-return-share' does not apply to 'plan'$" "$TMP/plan-share.err"
# A read failing half-way (the replay test's proxy answers the N-th raw read with 503): no
# recommendation from a history with holes, exit 3 and the part named. The 2nd read is in
# R's own backtest (current), the 80th in the sweep's single replay.
for n in 2 80; do
    case $n in
    2) want="^error: rule 'amd-walkthrough' could not be evaluated over part of the range: no recommendation from a history with holes$" ;;
    *) want="^error: the sweep could not read part of the range: .*HTTP 503.*; no recommendation from a history with holes$" ;;
    esac
    if start_fake_http "$TMP/proxy$n.log" python3 "$TOP/tests/e2e/data/replay/failproxy.py" "$PROM_URL" $n; then
        URL=$FAKE_URL rec --output json >"$TMP/outage$n.json" 2>"$TMP/outage$n.err"
        check "outage-$n-exit-3" test $? -eq 3
        check "outage-$n-no-output" test ! -s "$TMP/outage$n.json"
        check "outage-$n-named" grep -q "$want" "$TMP/outage$n.err"
        stop_pid "$FAKE_PID"
    else
        fail "outage-$n-proxy-start" "$(cat "$TMP/proxy$n.log")"
    fi
done

# --- the workloads as they are now, asked of the Kubernetes API (fake_kube) -----------------
# notebooks/nb-0 is labelled gpureclaim.io/exempt=true now; no other pod is there (404: not
# checked, counted). nb-0 is left out of every grid point: named, looked up once for the whole
# sweep (current, 36 points over two parts, the confirmation), with GETs only, and the
# notebooks' figures lose what it freed.
KUBE_FAKE=$(fake_bin fake_kube)
mkdir -p "$TMP/kube"
cat >"$TMP/kube/nb-0.json" <<'EOF2'
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "nb-0", "namespace": "notebooks", "uid": "pod-nb-0",
              "creationTimestamp": "2023-10-01T00:00:00Z",
              "labels": {"gpureclaim.io/exempt": "true"}},
 "spec": {}, "status": {"phase": "Running"}}
EOF2
start_fake_kube kube "$TMP/kube"
URL=$PROM_URL rec --output json --kube.api-url "$KURL" --kube.token-file '' \
    >"$TMP/lookup.json" 2>"$TMP/lookup.err"
check lookup-exit-0 test $? -eq 0
check lookup-left-out python3 - "$TMP/lookup.json" "$TMP/prometheus.json" <<'PY'
import json, sys
r, plain = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
l = r["lookup"]
assert [(x["workload"]["pod"], x["reason"]) for x in l["leftOut"]] == \
    [("nb-0", "labelled gpureclaim.io/exempt=true in its owner chain")], l["leftOut"]
assert l["notChecked"] and all(x["reason"].startswith("not found now: ") for x in l["notChecked"])
assert "Kubernetes API (reads only, once per workload)" in l["checked"], l["checked"]
assert "1 left out" in l["checked"], l["checked"]
nb = lambda x: [g for g in x["groups"] if g["by"]["namespace"] == "notebooks"][0]
assert nb(r)["current"]["gpuHoursFreed"] < nb(plain)["current"]["gpuHoursFreed"] - 1, (nb(r), nb(plain))
assert nb(r)["current"]["reclaims"] < nb(plain)["current"]["reclaims"]
PY
check lookup-get-only python3 -c '
import json, sys
sys.exit(0 if all(json.loads(l)["method"] == "GET" for l in open(sys.argv[1])) else 1)' "$KLOG"
got=$(python3 -c '
import json, sys
print(sum(json.loads(l)["path"] == "/api/v1/namespaces/notebooks/pods/nb-0" for l in open(sys.argv[1])))' "$KLOG")
check lookup-once-for-the-sweep test "$got" -eq 1
URL=$PROM_URL rec --kube.api-url "$KURL" --kube.token-file '' >"$TMP/lookup.txt" 2>/dev/null
check lookup-table grep -q '^  left out: {namespace="notebooks",pod="nb-0"}: labelled gpureclaim.io/exempt=true in its owner chain$' "$TMP/lookup.txt"
# The rules file says what its figures left out: its backtest without the API counts nb-0.
URL=$PROM_URL rec --kube.api-url "$KURL" --kube.token-file '' --output yaml >"$TMP/lookup.yaml" 2>/dev/null
check lookup-yaml-comment grep -q '^# Left out of these figures (looked up as it was then): {namespace="notebooks",pod="nb-0"}: labelled gpureclaim.io/exempt=true in its owner chain$' "$TMP/lookup.yaml"
"$ENF" check "$TMP/lookup.yaml" >/dev/null 2>&1
check lookup-yaml-check test $? -eq 0
check lookup-none-said grep -q '^not checked without the Kubernetes API (--kube.api-url, or in a pod): ' "$TMP/table.txt"
stop_pid "$KPID"
stop_pid "$PROM_PID"

# --- VictoriaMetrics: the same history, the same checks -------------------------------------
if start_vm vm && vm_import "$TMP/types.om"; then
    URL=$VM_URL
    suite victoriametrics
    stop_pid "$VM_PID"
else
    fail vm-ready "$(tail -n 5 "$TMP/vm.log")"
fi
finish
