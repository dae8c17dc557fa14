#!/bin/sh
# Hostile clients must not starve /metrics, on both servers (common/httpd.c).
#
# For each binary: 300 slowloris clients (tests/hostile_client.py: a request line, then one
# header line every 3 s, reconnecting when closed; half from one host 127.0.0.2, half spread
# over 15 more loopback addresses) and a few clients sending malformed requests (garbage, a
# 100 KB request line, a 1 MB header) run for the whole test, while a well-behaved client
# scrapes /metrics once a second for 40 s from 127.0.0.1: every scrape must answer 200 within
# 5 s. Then the refusals must show in gpureclaim_http_connections_refused_total, and a single
# client that trickles a header forever must be cut at --web.read-header-timeout, and the
# malformed requests must get their 414/431 (or no answer) while the server stays up.
# HOSTILE_SCRAPES (default 40) shortens the run when debugging.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/enforcer
EXPORTER=$BIN/gpureclaim-exporter
ENF=$BIN/gpureclaim-enforcer
FAKE=${FAKE_PROM:-$(fake_bin fake_prom)}
HOSTILE=$TOP/tests/hostile_client.py
SCRAPES=${HOSTILE_SCRAPES:-40}
require python3 curl "$EXPORTER" "$ENF" "$FAKE"

SOURCES=""
for i in $(seq 3 17); do SOURCES="$SOURCES,127.0.0.2,127.0.0.$i"; done
SOURCES=${SOURCES#,}

start_exporter() { # PORT EXTRA_FLAGS...
    _p=$1; shift
    start_bg "$TMP/exporter-$_p.log" "$EXPORTER" --web.listen-address="127.0.0.1:$_p" \
        --path.sysfs="$TOP/tests/fixtures/mi300x-cpx/sys" \
        --path.procfs="$TOP/tests/fixtures/mi300x-cpx/proc" \
        --path.devfs="$TOP/tests/fixtures/mi300x-cpx/dev" --no-collector.ownership "$@"
    SRV_PID=$LAST_PID
    wait_http "http://127.0.0.1:$_p/healthz" 60
}

start_enforcer() { # PORT EXTRA_FLAGS...
    _p=$1; shift
    start_bg "$TMP/enforcer-$_p.log" "$ENF" run --rules.file "$TMP/rules.yaml" \
        --prometheus.url "http://127.0.0.1:$FAKE_PORT" --enforce.interval=5s \
        --web.listen-address "127.0.0.1:$_p" --at 1700000000 --state.file "$TMP/state-$_p.json" \
        --audit.file "$TMP/audit-$_p.jsonl" "$@"
    SRV_PID=$LAST_PID
    wait_http "http://127.0.0.1:$_p/healthz" 60
}

# scrape_under_attack NAME PORT: hostile clients against PORT while scraping it.
scrape_under_attack() {
    _sn=$1 _port=$2
    _url="http://127.0.0.1:$_port/metrics"
    _dur=$((SCRAPES + 15))
    start_bg "$TMP/slow-$_sn.log" python3 "$HOSTILE" slow --port "$_port" --count 300 \
        --interval 3 --duration "$_dur" --sources "$SOURCES"
    _slow=$LAST_PID
    start_bg "$TMP/bad-$_sn.log" python3 "$HOSTILE" malformed --port "$_port" --count 4 \
        --duration "$_dur" --sources 127.0.0.40,127.0.0.41
    _bad=$LAST_PID
    # every one of the 300 connections has met the server (the client says so), up to 60 s
    _ready() { grep -q '^ready:' "$TMP/slow-$_sn.log"; }
    wait_for 60 _ready || echo "note: $SUITE: $_sn: the slow connections were not all open in 60 s"
    _ok=0 _failed=0 _codes=""
    for _i in $(seq 1 "$SCRAPES"); do
        _code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$_url")
        if [ "$_code" = 200 ]; then _ok=$((_ok + 1)); else
            _failed=$((_failed + 1))
            _codes="$_codes $_code"
        fi
        sleep 1
    done
    echo "$_sn: $_ok of $SCRAPES scrapes answered 200, $_failed failed (codes:$_codes)"
    curl -s --max-time 5 "$_url" >"$TMP/metrics-$_sn.txt"
    stop_pid "$_slow"
    stop_pid "$_bad"
    cat "$TMP/slow-$_sn.log" "$TMP/bad-$_sn.log"
    grep -E '^gpureclaim_http_connections_refused_total' "$TMP/metrics-$_sn.txt"
    check "$_sn-every-scrape-200" [ "$_failed" -eq 0 ]
    check "$_sn-per-ip-refusals-counted" grep -Eq \
        '^gpureclaim_http_connections_refused_total\{reason="per_ip_limit"\} [1-9]' \
        "$TMP/metrics-$_sn.txt"
}

# trickle_cut NAME PORT: one client trickling header bytes is closed within the header
# timeout (2 s here) plus slack, although it is never idle for the 30 s idle timeout.
trickle_cut() {
    _t=$(python3 - "$2" <<'EOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), source_address=("127.0.0.50", 0))
s.settimeout(0.5)
t0 = time.monotonic()
s.send(b"GET /metrics HTTP/1.1\r\n")
while time.monotonic() - t0 < 20:
    try:
        s.send(b"X-a: b\r\n")
        if s.recv(100) == b"":
            break
    except socket.timeout:
        continue
    except OSError:
        break
print("%.1f" % (time.monotonic() - t0))
EOF
)
    echo "$1: trickling client closed after ${_t} s"
    check "$1-header-timeout" python3 -c "import sys; sys.exit(0 if float('$_t') < 5 else 1)"
    check "$1-header-timeout-counted" sh -c "curl -s 'http://127.0.0.1:$2/metrics' | grep -Eq \
        '^gpureclaim_http_connections_refused_total\{reason=\"header_timeout\"\} [1-9]'"
}

# malformed_answers NAME PORT: oversized requests get libmicrohttpd's 414/431, garbage gets no
# 200, and the server still answers afterwards.
malformed_answers() {
    _r=$(python3 - "$2" <<'EOF'
import socket, sys
port = int(sys.argv[1])
out = []
for p in [b"GET /" + b"a" * 100 * 1024 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
          b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 1024 * 1024 + b"\r\n\r\n",
          b"\x16\x03\x01\x00\xffgarbage\r\n\r\n"]:
    s = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.60", 0))
    s.settimeout(5)
    try:
        s.sendall(p)
    except OSError:
        pass
    try:
        line = s.recv(4096).split(b"\r\n")[0].decode("latin-1")
    except OSError:
        line = ""
    out.append(line.split(" ")[1] if line.startswith("HTTP/") else "none")
    s.close()
print(" ".join(out))
EOF
)
    echo "$1: malformed requests answered: $_r"
    set -- "$1" "$2" $_r
    check "$1-long-request-line-414" [ "$3" = 414 ]
    check "$1-huge-header-431" [ "$4" = 431 ]
    check "$1-garbage-not-200" [ "$5" != 200 ]
    check "$1-alive-after-malformed" [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
        "http://127.0.0.1:$2/metrics")" = 200 ]
}

# --- exporter -----------------------------------------------------------------------------
port=$(free_port)
if start_exporter "$port"; then
    scrape_under_attack exporter "$port"
    stop_pid "$SRV_PID"
else
    fail exporter-start "$(tail -n 3 "$TMP/exporter-$port.log")"
fi
port=$(free_port)
if start_exporter "$port" --web.read-header-timeout=2s; then
    trickle_cut exporter "$port"
    malformed_answers exporter "$port"
    stop_pid "$SRV_PID"
else
    fail exporter-start-header-timeout "$(tail -n 3 "$TMP/exporter-$port.log")"
fi
check exporter-no-raw-mhd-stderr sh -c "! grep -vh '^ts=' '$TMP'/exporter-*.log | grep -q ."

# --- enforcer -----------------------------------------------------------------------------
python3 "$DATA/gen_matrix.py" "$TMP/range.json" "$TMP/instant.json"
cp "$DATA/rules-always.yaml" "$TMP/rules.yaml"
if ! start_fake_http "$TMP/fake.log" "$FAKE" 0 ok "$TMP/range.json" "$TMP/instant.json"; then
    fail setup "fake_prom did not start"
    exit 1
fi
port=$(free_port)
if start_enforcer "$port"; then
    scrape_under_attack enforcer "$port"
    stop_pid "$SRV_PID"
else
    fail enforcer-start "$(tail -n 3 "$TMP/enforcer-$port.log")"
fi
port=$(free_port)
if start_enforcer "$port" --web.read-header-timeout=2s; then
    trickle_cut enforcer "$port"
    malformed_answers enforcer "$port"
    stop_pid "$SRV_PID"
else
    fail enforcer-start-header-timeout "$(tail -n 3 "$TMP/enforcer-$port.log")"
fi
finish
