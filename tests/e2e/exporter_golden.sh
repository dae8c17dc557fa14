#!/bin/sh
# Golden end-to-end test of the exporter, in node_exporter's manner: start the binary on
# 127.0.0.1 against each fixture tree, fetch /metrics, drop the series whose values change
# from run to run (durations, build version), and diff with tests/golden/<tree>.prom.
# UPDATE_GOLDEN=1 rewrites the golden files instead. Every output is also linted with
# `promtool check metrics`, and the HTTP contract is checked once (Content-Type, /, /healthz,
# 404, HEAD, concurrent scrapes).
. "$(dirname "$0")/../lib.sh"

EXPORTER=$BIN/gpureclaim-exporter
TREES="procfs-drm mi300x-cpx mi300x-cpx-v19 mi300x-spx mi300x-dpx broken node-no-drm node-empty-drm
    node-nvidia-drm node-amd-unserved"

filter() {
    grep -v -e '^gpureclaim_scrape_collector_duration_seconds' -e '^gpureclaim_exporter_build_info'
}

lint() { # RAW OUT
    promtool check metrics <"$1" >"$2" 2>&1
}

start_exporter() { # TREE
    port=$(free_port)
    start_bg "$TMP/exporter-$1.log" "$EXPORTER" --web.listen-address="127.0.0.1:$port" \
        --path.sysfs="$TOP/tests/fixtures/$1/sys" --path.procfs="$TOP/tests/fixtures/$1/proc" \
        --path.devfs="$TOP/tests/fixtures/$1/dev" --no-collector.ownership --log.level=debug
    EXP_PID=$LAST_PID
    URL="http://127.0.0.1:$port"
    wait_http "$URL/healthz" 60
}

for tree in $TREES; do
    if [ ! -d "$TOP/tests/fixtures/$tree/sys" ]; then
        fail "golden-$tree" "fixture tree missing"
        continue
    fi
    if ! start_exporter "$tree"; then
        fail "golden-$tree" "exporter did not start"
        continue
    fi
    curl -s "$URL/metrics" >"$TMP/$tree.raw"
    filter <"$TMP/$tree.raw" >"$TMP/$tree.prom"
    golden="$TOP/tests/golden/$tree.prom"
    if [ -n "${UPDATE_GOLDEN:-}" ]; then
        cp "$TMP/$tree.prom" "$golden"
        echo "updated $golden"
    fi
    if diff -u "$golden" "$TMP/$tree.prom" >"$TMP/$tree.diff" 2>&1; then
        pass "golden-$tree"
    else
        head -40 "$TMP/$tree.diff"
        fail "golden-$tree"
    fi
    if lint "$TMP/$tree.raw" "$TMP/$tree.lint"; then
        pass "promtool-$tree"
    else
        cat "$TMP/$tree.lint"
        fail "promtool-$tree"
    fi
    # A second scrape must give the same deterministic output (no state leaks between scrapes).
    curl -s "$URL/metrics" | filter >"$TMP/$tree.again"
    check "stable-$tree" cmp -s "$TMP/$tree.prom" "$TMP/$tree.again"
    stop_pid "$EXP_PID"
done

# HTTP contract, on the MI300X tree.
start_exporter mi300x-cpx || { fail http-start; exit 1; }
ct=$(curl -s -o /dev/null -w '%{content_type}' "$URL/metrics")
check content-type [ "$ct" = "text/plain; version=0.0.4; charset=utf-8" ]
check landing-page sh -c "curl -sf '$URL/' | grep -q '/metrics'"
check healthz sh -c "curl -sf '$URL/healthz' | grep -qx ok"
check not-found [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/nope")" = 404 ]
check post-refused [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/metrics")" = 405 ]
check head-ok [ "$(curl -s -o /dev/null -w '%{http_code}' -I "$URL/metrics")" = 200 ]
# Twenty concurrent scrapes: each one complete and identical to the golden file.
i=0
pids=""
while [ $i -lt 20 ]; do
    curl -s --max-time 10 "$URL/metrics" >"$TMP/conc.$i" &
    pids="$pids $!"
    i=$((i + 1))
done
wait_ok=true
for p in $pids; do wait "$p" || wait_ok=false; done
i=0
while [ $i -lt 20 ]; do
    filter <"$TMP/conc.$i" | cmp -s - "$TOP/tests/golden/mi300x-cpx.prom" || wait_ok=false
    i=$((i + 1))
done
check concurrent-scrapes $wait_ok
# A client that connects and sends nothing must not block other scrapes.
python3 -c "
import socket,time,sys
s=socket.create_connection(('127.0.0.1',int(sys.argv[1]))); time.sleep(3)" "${URL##*:}" &
slow=$!
check scrape-beside-idle-client sh -c "curl -sf --max-time 2 '$URL/metrics' >/dev/null"
kill $slow 2>/dev/null; wait $slow 2>/dev/null
check version-flag sh -c "'$EXPORTER' --version | grep -q gpureclaim-exporter"
check unknown-flag-refused sh -c "! '$EXPORTER' --bogus 2>/dev/null"
check unknown-collector-refused sh -c "! '$EXPORTER' --collector.bogus 2>/dev/null"
check no-literal-sys-proc sh -c "! grep -nE '\"/(sys|proc)/' '$TOP'/exporter/*.c"
finish
