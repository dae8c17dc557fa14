#!/bin/sh
# End-to-end test of the pod-resources client (exporter/podres.c over grpc.c) against a real
# gRPC server.
#
# tests/podres/server.js serves the kubelet pod-resources v1 API with @grpc/grpc-js on a Unix
# socket in a private temp dir; build/fakes/podres_client calls it through the C client and
# prints one line per allocation. The answer (tests/fixtures/podres/mi300x-cpx.json) gives CPX
# partitions of an 8 x MI300X node to pods, with a non-AMD resource to filter, containers
# without devices, pod-level cpu_ids/memory, a DRA claim and fields unknown to kubelet v1
# clients. Then the error paths: gRPC error statuses, answers no gRPC stack would send (no
# status, truncated, compressed, two messages, HTTP 503, HTML), a slow server, a stopped server
# and a stale socket must each give one clear error line.
set -u
. "$(dirname "$0")/../lib.sh"

CLIENT=$(fake_bin podres_client)
SERVER_DIR=$TOP/tests/podres
FIX=$TOP/tests/fixtures/podres

if [ ! -x "$CLIENT" ]; then
    fail setup "missing $CLIENT; run 'make build/fakes/podres_client'"
    exit 1
fi
need_podres_server

# start_server NAME [OPTIONS...]: start server.js on $TMP/NAME.sock, set $SOCK and $SERVER_PID.
start_server() {
    _name=$1; shift
    SOCK=$TMP/$_name.sock
    start_bg "$TMP/$_name.log" node "$SERVER_DIR/server.js" "$SOCK" "$FIX/mi300x-cpx.json" "$@"
    SERVER_PID=$LAST_PID
    for _i in $(seq 1 600); do
        [ -S "$SOCK" ] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    fail "$_name-start" "server did not listen: $(tail -n 3 "$TMP/$_name.log")"
    return 1
}

# expect_error NAME TEXT CLIENT_ARGS...: the client must fail with TEXT in its error line.
expect_error() {
    _name=$1 _text=$2; shift 2
    if "$CLIENT" "$@" >"$TMP/$_name.out" 2>"$TMP/$_name.err"; then
        fail "$_name" "client succeeded"
    elif grep -qF -- "$_text" "$TMP/$_name.err"; then
        pass "$_name"
    else
        fail "$_name" "want '$_text', got '$(cat "$TMP/$_name.err")'"
    fi
}

# ---- a node with CPX partitions ----------------------------------------------------------------
if start_server ok; then
    if "$CLIENT" --prefix=amd.com/ "$SOCK" >"$TMP/list.out" 2>"$TMP/list.err" &&
        diff -u "$FIX/mi300x-cpx.list.expected" "$TMP/list.out" >"$TMP/list.diff"; then
        pass list-amd-mapping
    else
        fail list-amd-mapping "$(cat "$TMP/list.err" "$TMP/list.diff" | head -n 20)"
    fi

    # Without the filter the non-AMD device is there too: filtering, not decoding, dropped it.
    RDMA='alloc ml-train llm-train-0 trainer rdma/hca_shared_devices_a rdma0'
    if "$CLIENT" "$SOCK" >"$TMP/all.out" 2>&1 &&
        grep -qx "$RDMA" "$TMP/all.out" &&
        [ "$(grep -c '^alloc ' "$TMP/all.out")" -eq 17 ]; then
        pass list-unfiltered
    else
        fail list-unfiltered "$(head -n 5 "$TMP/all.out")"
    fi

    if "$CLIENT" --allocatable --prefix=amd.com/ "$SOCK" >"$TMP/alloc.out" 2>"$TMP/alloc.err" &&
        diff -u "$FIX/mi300x-cpx.allocatable.expected" "$TMP/alloc.out" >"$TMP/alloc.diff"; then
        pass allocatable
    else
        fail allocatable "$(cat "$TMP/alloc.err" "$TMP/alloc.diff" | head -n 20)"
    fi

    # libcurl 7.88 hands HTTP/2 trailers to the header callback: grpc-status 0 of a normal
    # answer comes after the body (exporter/grpc.c on_header relies on this).
    if "$CLIENT" --debug "$SOCK" 2>&1 >/dev/null | grep -q "grpc-status in trailers"; then
        pass grpc-status-from-trailers
    else
        fail grpc-status-from-trailers "client did not see grpc-status in the trailers"
    fi

    # The client's --timeout reaches the server as grpc-timeout (grpc-js turns it into a deadline).
    "$CLIENT" --timeout=7 "$SOCK" >/dev/null 2>&1
    left=$(sed -n 's/^List deadline=\([0-9]*\)ms$/\1/p' "$TMP/ok.log" | tail -n 1)
    if [ -n "$left" ] && [ "$left" -gt 6000 ] && [ "$left" -le 7000 ]; then
        pass grpc-timeout-sent
    else
        fail grpc-timeout-sent "server saw deadline '${left:-none}' ms, want about 7000"
    fi
    stop_pid "$SERVER_PID"
fi

# ---- gRPC error statuses -----------------------------------------------------------------------
if start_server unimplemented --fail=UNIMPLEMENTED; then
    # The server's grpc-message is percent-encoded on the wire ("100%25 fake, %C3%A9tat").
    want="pod-resources 'List' failed: grpc-status 12 (UNIMPLEMENTED): "
    want="${want}List refused by test server: 100% fake, état 12"
    expect_error grpc-unimplemented "$want" "$SOCK"
    stop_pid "$SERVER_PID"
fi
if start_server unavailable --fail=UNAVAILABLE; then
    expect_error grpc-unavailable "pod-resources 'List' failed: grpc-status 14 (UNAVAILABLE)" \
        "$SOCK"
    stop_pid "$SERVER_PID"
fi

# ---- broken servers and proxies (bare HTTP/2, not grpc-js) -------------------------------------
# A whole message without grpc-status is accepted (see grpc_unary); the rest are errors.
if start_server raw-no-status --raw=no-status; then
    if "$CLIENT" --prefix=amd.com/ "$SOCK" >"$TMP/nostatus.out" 2>"$TMP/nostatus.err" &&
        diff -u "$FIX/mi300x-cpx.list.expected" "$TMP/nostatus.out" >"$TMP/nostatus.diff"; then
        pass raw-no-status-accepted
    else
        fail raw-no-status-accepted "$(cat "$TMP/nostatus.err" "$TMP/nostatus.diff" | head -n 5)"
    fi
    stop_pid "$SERVER_PID"
fi
for case in "truncated|truncated gRPC message (" \
    "compressed|gRPC message has compressed flag 1" \
    "two-messages|unexpected bytes after the gRPC message" \
    "http-503|pod-resources 'List' failed: HTTP status 503" \
    "html|answered content-type 'text/html', not gRPC"; do
    mode=${case%%|*}
    if start_server "raw-$mode" --raw="$mode"; then
        expect_error "raw-$mode" "${case#*|}" --timeout=5 "$SOCK"
        stop_pid "$SERVER_PID"
    fi
done

# ---- a server slower than the deadline ---------------------------------------------------------
# Either side may end the call first: curl's local timeout, or grpc-js answering
# DEADLINE_EXCEEDED when the deadline we sent passes. Both must come back in about 0.5 s.
DEADLINE='failed: grpc-status 4 \(DEADLINE_EXCEEDED\)'
if start_server slow --delay-ms=5000; then
    t0=$(date +%s%N)
    "$CLIENT" --timeout=0.5 "$SOCK" >/dev/null 2>"$TMP/slow.err"
    rc=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    if [ "$rc" -ne 0 ] && [ "$ms" -lt 2500 ] &&
        grep -qE "pod-resources 'List' (timed out after 0.5 s|$DEADLINE)" "$TMP/slow.err"; then
        pass timeout
    else
        fail timeout "rc $rc after $ms ms: $(cat "$TMP/slow.err")"
    fi
    stop_pid "$SERVER_PID"
fi

# ---- no server ---------------------------------------------------------------------------------
# grpc-js unlinks its socket file when it stops, so the path is gone.
CONNECT="cannot connect to pod-resources socket"
expect_error stopped-server "$CONNECT '$TMP/slow.sock': No such file" --timeout=2 "$TMP/slow.sock"

# A socket file nobody listens on, as after a kubelet crash.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$TMP/stale.sock"
expect_error stale-socket "$CONNECT '$TMP/stale.sock': Connection refused" --timeout=2 \
    "$TMP/stale.sock"

finish
