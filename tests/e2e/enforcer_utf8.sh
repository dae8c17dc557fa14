#!/bin/sh
# End to end on Prometheus 3 (issue 34): a history whose label names have dots
# (k8s.namespace.name, k8s.pod.name) and whose metric names have dots gives, through `plan`
# on both read paths, the decisions the same history with legacy names gives. Quoted names
# ({"a.b"}, by ("a.b")) are Prometheus 3 syntax, so this suite runs on TSDB_GEN=current
# whatever the caller asked (docs/tsdb-engines.md, "UTF-8 names").
TSDB_GEN=current
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data
ENF=$BIN/gpureclaim-enforcer
RW=$(fake_bin remote_write)
AT=1700000000

require prometheus python3 "$ENF" "$RW"
server_versions

python3 "$DATA/enforcer/gen_history.py" scenario "$TMP/history.om"
printf 'global:\n  scrape_interval: 15s\nscrape_configs: []\n' >"$TMP/prometheus.yml"

for names in underscore dotted; do
    python3 "$DATA/utf8/om_to_rw.py" "$TMP/history.om" "$TMP/samples-$names.txt" $names
    rm -rf "$TMP/tsdb-$names"
    mkdir -p "$TMP/tsdb-$names"
    if ! start_prometheus "$TMP/prometheus.yml" "$TMP/tsdb-$names" --web.enable-remote-write-receiver; then
        fail "$names-prometheus-ready" "$(tail -n 5 "$TMP/prometheus.log")"
        continue
    fi
    check "$names-remote-write" sh -c '"$1" "$2" <"$3"' sh "$RW" "$PROM_URL" "$TMP/samples-$names.txt"
    for path in remote-read promql; do
        "$ENF" plan --rules.file "$DATA/utf8/rules-$names.yaml" --prometheus.url "$PROM_URL" \
            --at $AT --output json --stats --prometheus.read-path=$path \
            >"$TMP/plan-$names-$path.json" 2>"$TMP/stats-$names-$path.txt"
        check "$names-$path-exit-0" test $? -eq 0
    done
    stop_pid "$PROM_PID"
done
check dotted-read-remote grep -q 'read=always:remote_read$' "$TMP/stats-dotted-remote-read.txt"
check dotted-read-promql grep -q 'read=always:promql$' "$TMP/stats-dotted-promql.txt"

# Same rule, workload (dotted names mapped back), decision, reason, idleSince and samples.
for path in remote-read promql; do
    SUITE=$SUITE python3 - "$TMP/plan-underscore-$path.json" "$TMP/plan-dotted-$path.json" $path <<'PY' ||
import json, sys
BACK = {"k8s.namespace.name": "namespace", "k8s.pod.name": "pod"}
def key(plan):
    out = {}
    for d in json.load(open(plan)):
        w = tuple(sorted((BACK.get(k, k), v) for k, v in d["workload"].items()))
        out[(d["rule"], w)] = (d["decision"], d["reason"], d.get("idleSince"),
                               (d.get("window") or {}).get("samples"))
    return out
a, b = key(sys.argv[1]), key(sys.argv[2])
reclaim = sum(1 for v in a.values() if v[0] == "reclaim")
ok = a == b and len(a) >= 10 and reclaim >= 1
print("%s: %s/%s-same-decisions (%d workloads, %d reclaim, %d equal)" %
      ("PASS" if ok else "FAIL", __import__("os").environ["SUITE"], sys.argv[3], len(a), reclaim,
       sum(1 for k in a if b.get(k) == a[k])))
for k in sorted(set(a) | set(b)):
    if a.get(k) != b.get(k):
        print("  %s: underscore %s, dotted %s" % (k, a.get(k), b.get(k)), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
        TEST_FAILED=$((TEST_FAILED + 1))
done

finish
