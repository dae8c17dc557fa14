#!/bin/sh
# --web.config.file end to end (common/httpd.c, common/webcfg.c), with a test CA made here by
# openssl: HTTPS with basic auth (right, wrong and missing credentials: 200/401/401 with
# WWW-Authenticate; /healthz open), configured headers, plain HTTP to the TLS port refused,
# certificate rotation without restart (new connections see the new certificate, scrapes keep
# answering), a broken new file keeps the last good one (reload_success 0) until fixed,
# unknown keys refused at start with file:line:col, mutual TLS on the enforcer with a client
# certificate, without one and with one from another CA, and a real Prometheus scraping the
# exporter with scheme https, tls_config and basic_auth.
. "$(dirname "$0")/../lib.sh"

EXPORTER=$BIN/gpureclaim-exporter
ENF=$BIN/gpureclaim-enforcer
DATA=$TOP/tests/e2e/data/enforcer
FAKE=${FAKE_PROM:-$(fake_bin fake_prom)}
require openssl curl python3 prometheus "$EXPORTER" "$ENF" "$FAKE"
P=$TMP/pki
mkdir -p "$P"

# --- a test CA, two server certificates (for rotation), client certificates ----------------
newkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
ca() { # NAME
    newkey "$P/$1.key"
    openssl req -x509 -new -key "$P/$1.key" -out "$P/$1.crt" -days 2 -subj "/CN=$1" 2>/dev/null
}
leaf() { # NAME CA EXT
    newkey "$P/$1.key"
    openssl req -new -key "$P/$1.key" -out "$P/$1.csr" -subj "/CN=$1" 2>/dev/null
    printf '%s\n' "$3" >"$P/$1.ext"
    openssl x509 -req -in "$P/$1.csr" -CA "$P/$2.crt" -CAkey "$P/$2.key" -CAcreateserial \
        -out "$P/$1.crt" -days 2 -extfile "$P/$1.ext" 2>/dev/null
}
SRV_EXT="subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
CLI_EXT="extendedKeyUsage=clientAuth"
ca testca
ca otherca
leaf server1 testca "$SRV_EXT"
leaf server2 testca "$SRV_EXT"
leaf client testca "$CLI_EXT"
leaf intruder otherca "$CLI_EXT"
if [ ! -s "$P/server2.crt" ] || [ ! -s "$P/intruder.crt" ]; then
    fail setup "openssl could not make the test certificates"
    exit 1
fi
HASH=$(python3 -c 'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))' 2>/dev/null)
case "$HASH" in '$2b$10$'*) ;; *) fail setup "no bcrypt hash from python3 crypt: '$HASH'"; exit 1 ;; esac
# The toolkit's documentation makes hashes with htpasswd, which writes $2y$.
HASH_Y=\$2y\$${HASH#\$2b\$}

cp "$P/server1.crt" "$TMP/server.crt"
cp "$P/server1.key" "$TMP/server.key"
cat >"$TMP/web.yml" <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  min_version: TLS12
basic_auth_users:
  alice: '$HASH_Y'
http_server_config:
  headers:
    X-Frame-Options: deny
EOF

start_exporter() { # PORT CONFIG
    start_bg "$TMP/exporter.log" "$EXPORTER" --web.listen-address="127.0.0.1:$1" \
        --web.config.file="$2" --path.sysfs="$TOP/tests/fixtures/mi300x-cpx/sys" \
        --path.procfs="$TOP/tests/fixtures/mi300x-cpx/proc" \
        --path.devfs="$TOP/tests/fixtures/mi300x-cpx/dev" --no-collector.ownership
    EXP_PID=$LAST_PID
}
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
https_ready() { # URL
    for _i in $(seq 1 600); do
        [ "$(code --cacert "$P/testca.crt" "$1/healthz")" = 200 ] && return 0
        sleep 0.1
    done
    return 1
}
subject() { # PORT: CN of the certificate the server presents now
    openssl s_client -connect "127.0.0.1:$1" -servername localhost </dev/null 2>/dev/null |
        openssl x509 -noout -subject 2>/dev/null | sed 's/.*CN *= *//'
}

# --- exporter: HTTPS + basic auth ---------------------------------------------------------
PORT=$(free_port)
URL="https://127.0.0.1:$PORT"
start_exporter "$PORT" "$TMP/web.yml"
if ! https_ready "$URL"; then
    fail exporter-https-start "$(tail -n 5 "$TMP/exporter.log")"
    exit 1
fi
C="--cacert $P/testca.crt"
check auth-right-200 [ "$(code $C -u alice:s3cret "$URL/metrics")" = 200 ]
check auth-wrong-401 [ "$(code $C -u alice:wrong "$URL/metrics")" = 401 ]
check auth-unknown-user-401 [ "$(code $C -u mallory:s3cret "$URL/metrics")" = 401 ]
check auth-missing-401 [ "$(code $C "$URL/metrics")" = 401 ]
check auth-www-authenticate sh -c "curl -s -D - -o /dev/null $C '$URL/metrics' |
    grep -qi '^www-authenticate: basic'"
check healthz-open [ "$(code $C "$URL/healthz")" = 200 ]
check header-configured sh -c "curl -s -D - -o /dev/null $C -u alice:s3cret '$URL/metrics' |
    grep -qi '^x-frame-options: deny'"
check plain-http-refused [ "$(code "http://127.0.0.1:$PORT/metrics")" != 200 ]
check tls11-refused sh -c "! curl -s -o /dev/null $C --tls-max 1.1 '$URL/healthz'"
check password-not-logged sh -c "! grep -q -e s3cret -e wrong '$TMP/exporter.log'"
curl -s $C -u alice:s3cret "$URL/metrics" >"$TMP/m1.txt"
check reload-success-metric grep -q '^gpureclaim_web_config_reload_success 1$' "$TMP/m1.txt"

# --- rotation: new connections see the new certificate, scrapes keep answering -------------
check serves-server1 [ "$(subject "$PORT")" = server1 ]
(
    for _i in $(seq 1 30); do
        code $C -u alice:s3cret "$URL/metrics"
        echo
        sleep 0.2
    done
) >"$TMP/during-rotation.txt" &
loop=$!
sleep 1
# As a Kubernetes Secret volume or cert-manager would: new files, renamed into place.
cp "$P/server2.crt" "$TMP/server.crt.new" && cp "$P/server2.key" "$TMP/server.key.new"
mv "$TMP/server.key.new" "$TMP/server.key" && mv "$TMP/server.crt.new" "$TMP/server.crt"
rotated=false
for _i in $(seq 1 600); do
    [ "$(subject "$PORT")" = server2 ] && { rotated=true; break; }
    sleep 0.1
done
check rotation-new-cert $rotated
wait $loop
check rotation-no-failed-scrape sh -c "! grep -v '^200$' '$TMP/during-rotation.txt' | grep -q ."

# --- a broken file keeps the last good one -------------------------------------------------
cp "$TMP/web.yml" "$TMP/web.good"
printf 'basic_auth_users:\n  alice: %s\nbogus_key: 1\n' "'$HASH'" >"$TMP/web.yml"
reload_is() { curl -s $C -u alice:s3cret "$URL/metrics" | grep -q "^gpureclaim_web_config_reload_success $1\$"; }
wait_for 60 reload_is 0
check broken-keeps-tls-and-auth [ "$(code $C -u alice:s3cret "$URL/metrics")" = 200 ]
check broken-keeps-auth [ "$(code $C "$URL/metrics")" = 401 ]
check broken-reload-metric sh -c "curl -s $C -u alice:s3cret '$URL/metrics' |
    grep -q '^gpureclaim_web_config_reload_success 0$'"
check broken-logged-with-position grep -q "web.yml:3:1: unknown key 'bogus_key'" "$TMP/exporter.log"
cp "$TMP/web.good" "$TMP/web.yml"
touch "$TMP/web.yml"
wait_for 60 reload_is 1
check fixed-reload-metric sh -c "curl -s $C -u alice:s3cret '$URL/metrics' |
    grep -q '^gpureclaim_web_config_reload_success 1$'"

# --- a real Prometheus scrapes it with https, tls_config and basic_auth ---------------------
printf 's3cret' >"$TMP/prom-password"
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpureclaim
    scheme: https
    tls_config:
      ca_file: $P/testca.crt
      server_name: localhost
    basic_auth:
      username: alice
      password_file: $TMP/prom-password
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
if start_prometheus "$TMP/prometheus.yml" "$TMP/tsdb"; then
    up=""
    for _i in $(seq 1 180); do
        up=$(prom_query 'up{job="gpureclaim"}' | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2>/dev/null)
        [ "$up" = 1 ] && break
        sleep 0.5
    done
    check prometheus-https-basic-auth-up [ "$up" = 1 ]
    n=$(prom_query 'count(gpureclaim_partition_info)' | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "0")' 2>/dev/null)
    check prometheus-got-series [ "${n:-0}" != 0 ]
else
    fail prometheus-start "$(tail -n 5 "$TMP/prometheus.log")"
fi
stop_pid "$EXP_PID"

# --- the example of deploy/kubernetes/web-tls loads, and refuses everyone until edited -------
sed -e "s#/etc/gpureclaim-tls/tls.crt#$P/server1.crt#" -e "s#/etc/gpureclaim-tls/tls.key#$P/server1.key#" \
    "$TOP/deploy/kubernetes/web-tls/web-config.yml" >"$TMP/deploy-web.yml"
PORT=$(free_port)
start_exporter "$PORT" "$TMP/deploy-web.yml"
if https_ready "https://127.0.0.1:$PORT"; then
    check deploy-example-refuses [ "$(code $C -u prometheus:prometheus \
        "https://127.0.0.1:$PORT/metrics")" = 401 ]
    check deploy-example-header sh -c "curl -s -D - -o /dev/null $C \
        'https://127.0.0.1:$PORT/metrics' | grep -qi '^x-content-type-options: nosniff'"
else
    fail deploy-example-loads "$(tail -n 3 "$TMP/exporter.log")"
fi
stop_pid "$EXP_PID"

# --- unknown key at start: file:line:col ---------------------------------------------------
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  clientauth: x\n' \
    >"$TMP/bad.yml"
"$EXPORTER" --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/bad.yml" \
    --path.sysfs="$TOP/tests/fixtures/mi300x-cpx/sys" >"$TMP/bad.out" 2>&1
rc=$?
check unknown-key-exits [ "$rc" -ne 0 ]
check unknown-key-position grep -q "bad.yml:4:3: unknown key 'clientauth' in 'tls_server_config'" \
    "$TMP/bad.out"
"$ENF" run --rules.file "$DATA/rules-always.yaml" --web.listen-address=127.0.0.1:0 \
    --web.config.file="$TMP/bad.yml" >"$TMP/bad-enf.out" 2>&1
check enforcer-unknown-key-exits [ $? -ne 0 ]
check enforcer-unknown-key-position grep -q "bad.yml:4:3: unknown key" "$TMP/bad-enf.out"

# --- enforcer: mutual TLS ------------------------------------------------------------------
python3 "$DATA/gen_matrix.py" "$TMP/range.json" "$TMP/instant.json"
if ! start_fake_http "$TMP/fake.log" "$FAKE" 0 ok "$TMP/range.json" "$TMP/instant.json"; then
    fail setup "fake_prom did not start"
    exit 1
fi
cat >"$TMP/mtls.yml" <<EOF
tls_server_config:
  cert_file: $P/server1.crt
  key_file: $P/server1.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $P/testca.crt
EOF
PORT=$(free_port)
URL="https://127.0.0.1:$PORT"
start_bg "$TMP/enforcer.log" "$ENF" run --rules.file "$DATA/rules-always.yaml" \
    --prometheus.url "http://127.0.0.1:$FAKE_PORT" --enforce.interval=5s --at 1700000000 \
    --web.listen-address "127.0.0.1:$PORT" --web.config.file "$TMP/mtls.yml" \
    --state.file "$TMP/state.json" --audit.file "$TMP/audit.jsonl"
ok=false
for _i in $(seq 1 600); do
    [ "$(code $C --cert "$P/client.crt" --key "$P/client.key" "$URL/healthz")" = 200 ] &&
        { ok=true; break; }
    sleep 0.1
done
check mtls-with-client-cert $ok
check mtls-metrics-with-client-cert sh -c "curl -sf $C --cert '$P/client.crt' \
    --key '$P/client.key' '$URL/metrics' | grep -q '^gpureclaim_enforcer_build_info'"
check mtls-without-client-cert [ "$(code $C "$URL/metrics")" != 200 ]
check mtls-other-ca-cert [ "$(code $C --cert "$P/intruder.crt" --key "$P/intruder.key" \
    "$URL/metrics")" != 200 ]
check mtls-refusals-counted sh -c "curl -s $C --cert '$P/client.crt' --key '$P/client.key' \
    '$URL/metrics' | grep -Eq '^gpureclaim_http_connections_refused_total\{reason=\"client_certificate\"\} [1-9]'"
finish
