#!/bin/sh
# A private Docker daemon for the tests (dockerd(8): --host, --data-root, --exec-root).
#
# Everything lives under one directory the caller owns: data root, exec root (which also
# holds the containerd that dockerd starts for itself), pid file and socket, so tests never
# see or touch the machine's own daemon, containers or images. No iptables, no bridge:
# containers run with --network none. The nofile default ulimit stays below the host hard
# limit (20000), which runc cannot raise; Docker sets no nproc limit, so that is the only
# workaround needed. The image bb:1 is imported from a busybox-static root file system
# through the API (POST /images/create?fromSrc=-), so neither a registry nor a docker CLI
# is needed.
#
# Sourced:   . tests/dockerd.sh; dockerd_start DIR || skip; ...; dockerd_stop
#            sets DOCKERD_SOCK, DOCKERD_PID, DOCKERD_IMAGE; on failure DOCKERD_ERR says why
#            and DOCKERD_SANDBOX=1 when the daemon cannot run in this sandbox at all (a
#            kernel or permission limit, not a mistake of ours).
# Executed:  sh tests/dockerd.sh start DIR   (prints the socket path, exit 0 when ready)
#            sh tests/dockerd.sh stop DIR    (stops the daemon started for DIR, removes state)
# The daemon's PID is kept in DIR/dockerd.pid; dockerd_stop signals only that PID and, if it
# must be killed hard, the containerd it started (its direct child).

. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/rootfs.sh"

DOCKERD_IMAGE=bb:1

# dockerd_api METHOD PATH [CURL ARGS...]: unversioned call on the private socket; prints the
# HTTP status, the body goes to $DOCKERD_DIR/api.out.
dockerd_api() {
    _m=$1
    _p=$2
    shift 2
    curl -s -o "$DOCKERD_DIR/api.out" -w '%{http_code}' --unix-socket "$DOCKERD_SOCK" \
        -X "$_m" "$@" "http://d$_p"
}

# The log lines that mean "this kernel or sandbox does not allow a Docker daemon" rather than
# a wrong flag or a broken test: missing privileges, no overlay/cgroup/namespace support.
dockerd_sandbox_limit() {
    _pat='operation not permitted|permission denied|not supported|no such device'
    _pat="$_pat|cgroup.*(not found|mountpoint)|failed to mount|unshare|seccomp"
    grep -Eqi "$_pat" "$1"
}

# dockerd_start DIR: start the daemon, wait for /_ping, import the image. 0 or 1 with a
# reason in $DOCKERD_ERR.
dockerd_start() {
    DOCKERD_DIR=$1
    DOCKERD_SOCK=$DOCKERD_DIR/docker.sock
    DOCKERD_ERR=
    DOCKERD_SANDBOX=
    if ! command -v dockerd >/dev/null 2>&1; then
        DOCKERD_ERR="dockerd is not installed"
        return 1
    fi
    if ! command -v busybox >/dev/null 2>&1; then
        DOCKERD_ERR="busybox is not installed"
        return 1
    fi
    mkdir -p "$DOCKERD_DIR/data" "$DOCKERD_DIR/exec" "$DOCKERD_DIR/rootfs"
    busybox_tar "$DOCKERD_DIR" || {
        DOCKERD_ERR="cannot build the busybox root file system"
        return 1
    }
    # exec, so that $! is dockerd itself (see tests/podman.sh).
    (
        exec dockerd -H "unix://$DOCKERD_SOCK" --data-root "$DOCKERD_DIR/data" \
            --exec-root "$DOCKERD_DIR/exec" --pidfile "$DOCKERD_DIR/dockerd.pid" \
            --iptables=false --ip6tables=false --bridge=none \
            --default-ulimit nofile=20000:20000
    ) >"$DOCKERD_DIR/dockerd.log" 2>&1 </dev/null &
    DOCKERD_PID=$!
    echo "$DOCKERD_PID" >"$DOCKERD_DIR/started.pid"
    _i=0
    while :; do
        if [ -S "$DOCKERD_SOCK" ] &&
            curl -sf --unix-socket "$DOCKERD_SOCK" -o /dev/null http://d/_ping; then
            break
        fi
        if ! kill -0 "$DOCKERD_PID" 2>/dev/null; then
            wait "$DOCKERD_PID" 2>/dev/null
            DOCKERD_ERR="dockerd exited: $(grep -v '^$' "$DOCKERD_DIR/dockerd.log" | tail -n 1)"
            dockerd_sandbox_limit "$DOCKERD_DIR/dockerd.log" && DOCKERD_SANDBOX=1
            DOCKERD_PID=
            return 1
        fi
        _i=$((_i + 1))
        if [ $_i -ge 600 ]; then
            DOCKERD_ERR="dockerd did not answer /_ping within 60 s"
            return 1
        fi
        sleep 0.1
    done
    _q="fromSrc=-&repo=${DOCKERD_IMAGE%:*}&tag=${DOCKERD_IMAGE#*:}"
    _st=$(dockerd_api POST "/images/create?$_q" \
        -H 'Content-Type: application/x-tar' --data-binary "@$DOCKERD_DIR/bb.tar")
    # The import streams JSON progress with status 200; a failure may still come as 200 with
    # an "error" member, so look for the image afterwards.
    if [ "$_st" != 200 ] || [ "$(dockerd_api GET "/images/$DOCKERD_IMAGE/json")" != 200 ]; then
        DOCKERD_ERR="image import failed: $_st $(head -c 200 "$DOCKERD_DIR/api.out")"
        return 1
    fi
    return 0
}

# dockerd_stop: force-remove every container of the private daemon (so that their
# containerd shims exit), stop the daemon, unmount what is left below DIR, drop state.
dockerd_stop() {
    [ -n "${DOCKERD_DIR:-}" ] || return 0
    if [ -z "${DOCKERD_PID:-}" ] && [ -f "$DOCKERD_DIR/started.pid" ]; then
        DOCKERD_PID=$(cat "$DOCKERD_DIR/started.pid")
    fi
    if [ -n "${DOCKERD_PID:-}" ] && kill -0 "$DOCKERD_PID" 2>/dev/null; then
        if [ "$(dockerd_api GET '/containers/json?all=1' 2>/dev/null)" = 200 ]; then
            python3 -c 'import json,sys
for c in json.load(open(sys.argv[1])): print(c["Id"])' "$DOCKERD_DIR/api.out" 2>/dev/null |
                while read -r _id; do
                    dockerd_api DELETE "/containers/$_id?force=1" >/dev/null 2>&1
                done
        fi
        # dockerd's own children (its containerd) in case SIGTERM is not enough.
        _kids=$(ps -o pid= --ppid "$DOCKERD_PID" 2>/dev/null)
        kill "$DOCKERD_PID" 2>/dev/null
        _i=0
        while kill -0 "$DOCKERD_PID" 2>/dev/null && [ $_i -lt 150 ]; do
            sleep 0.1
            _i=$((_i + 1))
        done
        if kill -0 "$DOCKERD_PID" 2>/dev/null; then
            kill -9 "$DOCKERD_PID" 2>/dev/null
            for _k in $_kids; do kill -9 "$_k" 2>/dev/null; done
        fi
        wait "$DOCKERD_PID" 2>/dev/null
    fi
    umount_below "$DOCKERD_DIR"
    rm -rf "$DOCKERD_DIR/data" "$DOCKERD_DIR/exec" "$DOCKERD_DIR/rootfs" \
        "$DOCKERD_DIR/bb.tar" 2>/dev/null
    DOCKERD_PID=
}

case "${0##*/}" in
dockerd.sh)
    case "${1:-}" in
    start)
        [ -n "${2:-}" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
        if dockerd_start "$2" </dev/null; then
            echo "$DOCKERD_SOCK"
            exit 0
        fi
        echo "$DOCKERD_ERR" >&2
        dockerd_stop
        exit 1
        ;;
    stop)
        [ -n "${2:-}" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
        DOCKERD_DIR=$2
        dockerd_stop
        exit 0
        ;;
    *)
        echo "usage: $0 start|stop DIR" >&2
        exit 2
        ;;
    esac
    ;;
esac
