#!/bin/sh
# Memcheck over every unit-test binary and over the exporter serving a few scrapes: any
# invalid access or leak fails. (ASan/UBSan runs are the check-san suite.)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
for t in "$@"; do
    name=$(basename "$t")
    if $VG "$t" >/tmp/vg.$$.log 2>&1; then
        echo "PASS: valgrind/$name"
    else
        echo "FAIL: valgrind/$name"
        tail -30 /tmp/vg.$$.log
    fi
done
rm -f /tmp/vg.$$.log

# The exporter under memcheck: start, scrape each fixture tree's worth of collectors, stop.
for tree in mi300x-cpx broken; do
    dir=$TOP/tests/fixtures/$tree
    [ -d "$dir/sys" ] || continue
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    log=$(mktemp)
    $VG "$TOP/bin/gpureclaim-exporter" --web.listen-address="127.0.0.1:$port" \
        --path.sysfs="$dir/sys" --path.procfs="$dir/proc" --path.devfs="$dir/dev" \
        --log.level=error >"$log" 2>&1 &
    pid=$!
    ok=false
    for _ in $(seq 1 100); do
        curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && { ok=true; break; }
        sleep 0.1
    done
    for _ in 1 2 3; do curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" || ok=false; done
    kill "$pid"
    wait "$pid"
    rc=$?
    if $ok && [ "$rc" -eq 0 ]; then
        echo "PASS: valgrind/exporter-$tree"
    else
        echo "FAIL: valgrind/exporter-$tree (exit $rc)"
        tail -30 "$log"
    fi
    rm -f "$log"
done
