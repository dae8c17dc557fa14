#!/bin/sh
# A private Podman API service for the tests (podman-system-service(1); image from tests/rootfs.sh).
#
# Everything lives under one directory the caller owns: storage (vfs, so it works on any
# file system, overlay-on-overlay included), run root, containers.conf and the socket, so
# tests never see or touch the machine's own containers and images. The containers.conf
# carries the three workarounds this machine needs (nofile and nproc ulimits below the host
# hard limits, runc because crun refuses hybrid cgroups) since API clients cannot pass
# per-run flags; containers get no network. The image localhost/bb:1 is built from
# busybox-static, so no registry is needed.
#
# Sourced:   . tests/podman.sh; podman_start DIR || skip; ...; podman_stop
#            sets PODMAN_SOCK, PODMAN_PID, PODMAN_IMAGE; podman_cmd runs the CLI on it.
# Executed:  sh tests/podman.sh start DIR   (prints the socket path, exit 0 when ready)
#            sh tests/podman.sh stop DIR    (stops the service started for DIR, removes state)
# The service's PID is kept in DIR/podman.pid; podman_stop kills only that PID.

. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/rootfs.sh"

PODMAN_IMAGE=localhost/bb:1

podman_cmd() {
    CONTAINERS_CONF="$PODMAN_DIR/containers.conf" podman --root "$PODMAN_DIR/storage" \
        --runroot "$PODMAN_DIR/run" --storage-driver vfs --cgroup-manager cgroupfs \
        --events-backend file --tmpdir "$PODMAN_DIR/tmp" "$@"
}

# podman_start DIR: start the service, wait for /_ping, import the image. 0 or 1 with a
# reason in $PODMAN_ERR.
podman_start() {
    PODMAN_DIR=$1
    PODMAN_SOCK=$PODMAN_DIR/podman.sock
    PODMAN_ERR=
    if ! command -v podman >/dev/null 2>&1; then
        PODMAN_ERR="podman is not installed"
        return 1
    fi
    if ! command -v busybox >/dev/null 2>&1; then
        PODMAN_ERR="busybox is not installed"
        return 1
    fi
    mkdir -p "$PODMAN_DIR/storage" "$PODMAN_DIR/run" "$PODMAN_DIR/tmp" "$PODMAN_DIR/rootfs"
    cat >"$PODMAN_DIR/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
netns = "none"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
    busybox_tar "$PODMAN_DIR" || {
        PODMAN_ERR="cannot build the busybox root file system"
        return 1
    }
    if ! podman_cmd import "$PODMAN_DIR/bb.tar" "$PODMAN_IMAGE" >"$PODMAN_DIR/import.log" 2>&1; then
        PODMAN_ERR="podman import failed: $(tail -n 1 "$PODMAN_DIR/import.log")"
        return 1
    fi
    # exec, so that $! is podman itself and podman_stop's kill reaches it (a function run
    # with & would leave podman as the child of a subshell that the kill does not reach).
    (
        CONTAINERS_CONF="$PODMAN_DIR/containers.conf"
        export CONTAINERS_CONF
        exec podman --root "$PODMAN_DIR/storage" --runroot "$PODMAN_DIR/run" \
            --storage-driver vfs --cgroup-manager cgroupfs --events-backend file \
            --tmpdir "$PODMAN_DIR/tmp" system service --time=0 "unix://$PODMAN_SOCK"
    ) >"$PODMAN_DIR/service.log" 2>&1 </dev/null &
    PODMAN_PID=$!
    echo "$PODMAN_PID" >"$PODMAN_DIR/podman.pid"
    _i=0
    while [ $_i -lt 600 ]; do
        if [ -S "$PODMAN_SOCK" ] &&
            curl -sf --unix-socket "$PODMAN_SOCK" -o /dev/null http://d/_ping; then
            return 0
        fi
        if ! kill -0 "$PODMAN_PID" 2>/dev/null; then
            PODMAN_ERR="podman system service exited: $(tail -n 1 "$PODMAN_DIR/service.log")"
            return 1
        fi
        sleep 0.1
        _i=$((_i + 1))
    done
    PODMAN_ERR="podman system service did not answer /_ping within 60 s"
    return 1
}

# podman_stop: remove every container of the private store, stop the service, drop state.
podman_stop() {
    [ -n "${PODMAN_DIR:-}" ] || return 0
    if [ -z "${PODMAN_PID:-}" ] && [ -f "$PODMAN_DIR/podman.pid" ]; then
        PODMAN_PID=$(cat "$PODMAN_DIR/podman.pid")
    fi
    podman_cmd rm -af -t 0 >/dev/null 2>&1
    if [ -n "${PODMAN_PID:-}" ]; then
        kill "$PODMAN_PID" 2>/dev/null
        _i=0
        while kill -0 "$PODMAN_PID" 2>/dev/null && [ $_i -lt 50 ]; do
            sleep 0.1
            _i=$((_i + 1))
        done
        kill -9 "$PODMAN_PID" 2>/dev/null
    fi
    # A container's /dev/shm is a tmpfs under the run root: unmount whatever is left there
    # (only below our own directory) so that the removal below cannot fail half-way.
    umount_below "$PODMAN_DIR"
    rm -rf "$PODMAN_DIR/storage" "$PODMAN_DIR/run" "$PODMAN_DIR/tmp" "$PODMAN_DIR/rootfs" \
        "$PODMAN_DIR/bb.tar" 2>/dev/null
    PODMAN_PID=
}

case "${0##*/}" in
podman.sh)
    case "${1:-}" in
    start)
        [ -n "${2:-}" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
        if podman_start "$2" </dev/null; then
            echo "$PODMAN_SOCK"
            exit 0
        fi
        echo "$PODMAN_ERR" >&2
        podman_stop
        exit 1
        ;;
    stop)
        [ -n "${2:-}" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
        PODMAN_DIR=$2
        podman_stop
        exit 0
        ;;
    *)
        echo "usage: $0 start|stop DIR" >&2
        exit 2
        ;;
    esac
    ;;
esac
