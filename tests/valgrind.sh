#!/bin/sh
# Memcheck over every unit-test binary and over the exporter serving a few scrapes: any
# invalid access or leak fails. (ASan/UBSan runs are the check-san suite.)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --suppressions=$TOP/tests/valgrind.supp"
# The unit tests are CPU-bound under memcheck and independent of each other: run one per core
# (xargs calls this script back with --one), then print the results in the given order.
if [ "${1:-}" = --one ]; then
    name=$(basename "$2")
    # test_proof's random differential runs 2,000 histories natively (about 1 s) and 80 s
    # under memcheck: 200 walk the same code for memory errors; the native and sanitizer runs
    # keep the full count.
    PROOF_ITER=${PROOF_ITER:-200}
    # Likewise test_recfast's 24 random histories took 274 s under memcheck: TEST_QUICK runs
    # a few of each differential test's histories (test_reps in tests/unit/test.h).
    TEST_QUICK=${TEST_QUICK-1}
    export PROOF_ITER TEST_QUICK
    if $VG "$2" >"$3/$name.log" 2>&1; then
        echo "PASS: valgrind/$name" >"$3/$name.out"
    else
        { echo "FAIL: valgrind/$name"; tail -30 "$3/$name.log"; } >"$3/$name.out"
    fi
    exit 0
fi
out=$(mktemp -d)
printf '%s\n' "$@" | xargs -P "${JOBS:-$(nproc 2>/dev/null || echo 2)}" -I{} sh "$0" --one {} "$out"
for t in "$@"; do
    name=$(basename "$t")
    cat "$out/$name.out" 2>/dev/null || echo "FAIL: valgrind/$name (did not run)"
done
rm -rf "$out"

# The exporter under memcheck: start, scrape each fixture tree's worth of collectors, stop.
for tree in mi300x-cpx broken; do
    dir=$TOP/tests/fixtures/$tree
    [ -d "$dir/sys" ] || continue
    port=$(python3 "$TOP/tests/free_port.py")
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

# The exporter with --web.config.file: HTTPS, basic auth, a reload that restarts the TLS
# listener (new certificate) and one that only changes users; then stop.
if command -v openssl >/dev/null 2>&1; then
    d=$(mktemp -d)
    for n in a b; do
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
            -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 -keyout "$d/$n.key" \
            -out "$d/$n.crt" 2>/dev/null
    done
    hash=$(python3 -c 'import crypt; print(crypt.crypt("pw", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))' 2>/dev/null)
    cp "$d/a.crt" "$d/tls.crt" && cp "$d/a.key" "$d/tls.key"
    printf 'tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\nbasic_auth_users:\n  u: %s\n' \
        "'$hash'" >"$d/web.yml"
    port=$(python3 "$TOP/tests/free_port.py")
    $VG "$TOP/bin/gpureclaim-exporter" --web.listen-address="127.0.0.1:$port" \
        --web.config.file="$d/web.yml" --path.sysfs="$TOP/tests/fixtures/mi300x-cpx/sys" \
        --path.procfs="$TOP/tests/fixtures/mi300x-cpx/proc" --no-collector.ownership \
        --log.level=error >"$d/log" 2>&1 &
    pid=$!
    url="https://127.0.0.1:$port"
    ok=false
    for _ in $(seq 1 200); do
        curl -sfk -o /dev/null "$url/healthz" && { ok=true; break; }
        sleep 0.1
    done
    for _ in 1 2; do curl -sfk -u u:pw -o /dev/null "$url/metrics" || ok=false; done
    curl -sk -o /dev/null "$url/metrics" # 401
    cp "$d/b.crt" "$d/tls.crt" && cp "$d/b.key" "$d/tls.key"
    # Wait (up to 60 s: valgrind is slow) for each reload to be served, not a fixed time.
    want=$(openssl x509 -in "$d/b.crt" -noout -fingerprint -sha256)
    served=false
    for _ in $(seq 1 300); do
        [ "$(openssl s_client -connect "127.0.0.1:$port" </dev/null 2>/dev/null |
            openssl x509 -noout -fingerprint -sha256 2>/dev/null)" = "$want" ] &&
            { served=true; break; }
        sleep 0.2
    done
    $served || { echo "valgrind: the exporter did not serve the new certificate in 60 s"; ok=false; }
    printf 'basic_auth_users:\n  v: %s\n' "'$hash'" >"$d/web.yml"
    served=false
    for _ in $(seq 1 300); do
        curl -sf -u v:pw -o /dev/null "http://127.0.0.1:$port/metrics" && { served=true; break; }
        sleep 0.2
    done
    $served || { echo "valgrind: the exporter did not serve plain HTTP with user v in 60 s"; ok=false; }
    kill "$pid"
    wait "$pid"
    rc=$?
    if $ok && [ "$rc" -eq 0 ]; then
        echo "PASS: valgrind/exporter-web-config"
    else
        echo "FAIL: valgrind/exporter-web-config (exit $rc)"
        tail -30 "$d/log"
    fi
    rm -rf "$d"
fi
