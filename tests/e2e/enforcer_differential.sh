#!/bin/sh
# Differential test: the raw path (remote read) against the PromQL plan on random histories
# (gen_random.py: gaps around both tolerated gaps, NaN and +Inf, counter-like and bursty
# values, young and stopped series, staleness markers), loaded into a real Prometheus by
# remote write (tests/fakes/remote_write; OpenMetrics backfill cannot carry a staleness
# marker). Both paths must make the same decision with the same reason for every workload
# of both rules of rules-random.yaml, except where the PromQL plan is known to differ:
# - a raw gap in (G - R, G] (R the PromQL coverage resolution): within the tolerated gap, so
#   the PromQL plan may keep for a gap (or stale) where the raw path reclaims or keeps for
#   another reason;
# - a series whose first sample falls in the step of the window start, after its beginning:
#   the raw path sees that it reaches back to the window start, the PromQL plan (which cannot
#   tell where in that step it began) keeps it as too_young;
# - likewise a hole that ended before the window start, within two steps of it (PromQL starts
#   its check at the step before the window start when that one has no point): the window is
#   covered, and only the PromQL plan keeps for a gap;
# - a staleness marker: it ends the series on the raw path (as in PromQL's instant
#   selectors), while PromQL range functions skip it, so only the raw path keeps then.
# Any other difference fails; so does a difference that would reclaim on the raw path for a
# workload with a staleness marker. SEEDS (default "1 2 3") and N (default 400) set the size.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/enforcer
ENF=$BIN/gpureclaim-enforcer
RW=$(fake_bin remote_write)
AT=1700000000
RULES=$DATA/rules-random.yaml

require prometheus python3 "$ENF" "$RW"

for seed in ${SEEDS:-1 2 3}; do
    rm -rf "$TMP/tsdb"
    mkdir -p "$TMP/tsdb"
    python3 "$DATA/gen_random.py" "$seed" "${N:-400}" "$TMP/samples.txt" "$TMP/meta.json"
    printf 'global:\n  scrape_interval: 15s\nscrape_configs: []\n' >"$TMP/prometheus.yml"
    if ! start_prometheus "$TMP/prometheus.yml" "$TMP/tsdb" --web.enable-remote-write-receiver; then
        fail "seed$seed-prometheus-ready" "$(tail -n 5 "$TMP/prometheus.log")"
        continue
    fi
    check "seed$seed-remote-write" sh -c '"$1" "$2" <"$3"' sh "$RW" "$PROM_URL" "$TMP/samples.txt"
    for path in remote-read promql; do
        "$ENF" plan --rules.file "$RULES" --prometheus.url "$PROM_URL" --at $AT --output json \
            --stats --prometheus.read-path=$path >"$TMP/plan-$path.json" 2>"$TMP/stats-$path.txt"
        check "seed$seed-$path-exit-0" test $? -eq 0
    done
    check "seed$seed-read-paths" grep -q 'read=fine:remote_read,coarse:remote_read$' "$TMP/stats-remote-read.txt"
    SUITE=$SUITE SEED=$seed EDGE=$TMP/edge.txt python3 - "$TMP/plan-remote-read.json" "$TMP/plan-promql.json" \
        "$TMP/meta.json" <<'PY' || TEST_FAILED=$((TEST_FAILED + 1))
import json, os, sys
END = 1700000000 * 1000
RULES = {"fine": (15000, 30000, 7500), "coarse": (60000, 120000, 15000)}  # step, G, R (ms)
raw, pql, meta = (json.load(open(f)) for f in sys.argv[1:4])
suite, seed = os.environ["SUITE"], os.environ["SEED"]

def key(plan):
    return {(d["rule"], d["workload"]["pod"]): (d["decision"], d["reason"]) for d in plan}

a, b = key(raw), key(pql)
same = grey = marker = first = edge = 0
edge_pods = []
bad = []
reasons = {}
for k in sorted(set(a) | set(b)):
    rule, pod = k
    ra, rb = a.get(k), b.get(k)
    reasons[ra] = reasons.get(ra, 0) + 1
    if ra == rb:
        same += 1
        continue
    step, g, r = RULES[rule]
    m = meta.get(pod, {"markers": [], "gaps": []})
    lo = END - 15 * 60000 - step - g
    in_grey = any(g - r < y - x <= g and y >= lo for x, y in m["gaps"])
    ws = END - 15 * 60000
    first_step = m.get("first") is not None and ws - step < m["first"] <= ws
    if ra and rb and rb[0] == "keep" and in_grey and not m["markers"]:
        grey += 1
    elif ra and rb and ra[0] == "keep" and m["markers"]:
        marker += 1
    elif ra and rb and ra[0] == "reclaim" and rb == ("keep", "too_young") and first_step:
        first += 1
        edge_pods.append("%s %s" % (rule, pod))
    elif (ra and rb and rb[0] == "keep" and not m["markers"] and
          any(y - x > g - r and ws - 2 * step < y <= ws for x, y in m["gaps"])):
        edge += 1
        if ra[0] == "reclaim":
            edge_pods.append("%s %s" % (rule, pod))
    else:
        bad.append("%s/%s: raw %s, promql %s, gaps %s, markers %s" % (
            rule, pod, ra, rb, [y - x for x, y in m["gaps"] if y >= lo and y - x > 15000 + 4000],
            m["markers"]))
n = len(set(a) | set(b))
print("%s: %s/seed%s-same-decisions (%d workload decisions: %d identical, %d with a gap within "
      "(G-R, G] that PromQL keeps, %d raw keeps after a staleness marker, %d raw reclaims a "
      "series that began in the window start's step, %d with a gap that ended in that step, "
      "before the window; raw path reasons %s)%s" % (
          "PASS" if not bad else "FAIL", suite, seed, n, same, grey, marker, first, edge,
          ", ".join("%s/%s=%d" % (x[0], x[1], c) for x, c in sorted(reasons.items(), key=str)
                    if x), "" if not bad else "\n  " + "\n  ".join(bad[:20])))
open(os.environ["EDGE"], "w").write("".join(x + "\n" for x in edge_pods))
sys.exit(1 if bad else 0)
PY
    # Where only the raw path reclaims at the window start, explain tells the same story: a
    # reclaim, and no gap marker in the window.
    while read -r rule pod; do
        "$ENF" explain --rules.file "$RULES" --prometheus.url "$PROM_URL" --at $AT --rule "$rule" \
            --workload "pod=\"$pod\"" --prometheus.read-path=remote-read >"$TMP/explain.txt" 2>&1
        check "seed$seed-explain-$rule-$pod" sh -c "grep -q '^  reclaim: ' '$TMP/explain.txt' && ! grep -Eq '^ +[ ^_!]*[_!^][ ^_!]*\$' '$TMP/explain.txt'"
    done <"$TMP/edge.txt"
    stop_pid "$PROM_PID"
done
finish
