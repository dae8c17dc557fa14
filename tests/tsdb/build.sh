#!/bin/sh
# tests/tsdb/build.sh: builds the newer time-series servers the decision suites also run on
# (Prometheus 3.x, VictoriaMetrics single-node, Thanos) from Go modules through the Go module
# proxy, so a test never depends on a binary installed by hand. Binaries are cached outside the
# work tree keyed by version: ${GPURECLAIM_CACHE:-$HOME/.cache/gpureclaim}/tsdb/<name>-<version>/.
# A second run finds them and builds nothing. Prints where each binary is and how long a cold
# build took. Versions are pinned here (and named in every suite's output); see docs/tests.md.
#
# usage: tests/tsdb/build.sh [prometheus|vm|thanos|all]   (default all: Prometheus and
#        VictoriaMetrics; Thanos only when named, its cold build being too long for make check
#        on a new machine: docs/tsdb-engines.md)
#        tests/tsdb/build.sh --path NAME   prints the cached binary's path, builds nothing
set -eu

# Prometheus 3.x: the module github.com/prometheus/prometheus numbers release 3.N.M v0.3NN.M.
PROM3_MODVER=${PROM3_MODVER:-v0.316.0}
# VictoriaMetrics: v1.152.0 and later say `go 1.27.x` in go.mod, which the installed Go 1.26
# refuses under GOTOOLCHAIN=local, so the VictoriaMetrics build alone runs under the approved
# toolchain go1.27.3, which the go command takes from the module proxy like any module (76 MB,
# once per machine). v1.153.0 is the newest release known to resolve with it (v1.154.x adds a
# replace directive and was not tried). The proxy refuses every `vX.Y.Z-cluster` version and the
# `cluster` branch (403 "This module version is not available"), so vminsert, vmselect and
# vmstorage cannot be built here (docs/tsdb-engines.md).
VM_MODVER=${VM_MODVER:-v1.153.0}
VM_GOTOOLCHAIN=${VM_GOTOOLCHAIN:-go1.27.3}
# Thanos (a distributed engine: Query in front of sidecars beside Prometheus): v0.42.5 says
# `go 1.26.10`, newer than the installed 1.26.8, so it too builds under go1.27.3. Its go.mod has
# replace directives (kingpin, gomemcache, galaxycache, ...) that a wrapper module would drop, so
# it builds inside a copy of its own module as the proxy serves it, with its go.sum.
THANOS_MODVER=${THANOS_MODVER:-v0.42.5}
THANOS_GOTOOLCHAIN=${THANOS_GOTOOLCHAIN:-go1.27.3}

CACHE=${GPURECLAIM_CACHE:-$HOME/.cache/gpureclaim}/tsdb
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

prom3_version() { echo "$PROM3_MODVER" | sed -E 's/^v0\.3([0-9][0-9])\.([0-9]+).*/3.\1.\2/; s/^3\.0/3./'; }

# path NAME: where NAME's binary is (or will be) cached
path() {
    case $1 in
    prometheus | promtool) echo "$CACHE/prometheus-$(prom3_version)/$1" ;;
    victoria-metrics) echo "$CACHE/victoria-metrics-$VM_MODVER/victoria-metrics" ;;
    vminsert | vmselect | vmstorage) echo "$CACHE/vmcluster-$VM_MODVER/$1" ;;
    thanos) echo "$CACHE/thanos-$THANOS_MODVER/thanos" ;;
    *) echo "build.sh: unknown binary '$1'" >&2; return 1 ;;
    esac
}

# gobuild DIR VERSION LDFLAGS PKG OUT: builds PKG at VERSION in a throw-away wrapper module in
# DIR/wrap (a module's own replace directives, which stop `go install pkg@version`, never matter
# there, and nothing lands in the work tree)
gobuild() {
    dir=$1 ver=$2 ldflags=$3 pkg=$4 out=$5
    mkdir -p "$dir/wrap"
    [ -f "$dir/wrap/go.mod" ] || (cd "$dir/wrap" && go mod init gpureclaim-tsdb-wrap 2>/dev/null) || return 1
    (cd "$dir/wrap" && go get "$pkg@$ver" && nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$out.tmp" "$pkg") &&
        mv "$out.tmp" "$out"
}

build_prometheus() {
    v=$(prom3_version) dir=$CACHE/prometheus-$v
    if [ -x "$dir/prometheus" ] && [ -x "$dir/promtool" ]; then
        echo "prometheus $v: cached at $dir"
        return 0
    fi
    t0=$(date +%s)
    cv=github.com/prometheus/common/version
    ld="-s -w -X $cv.Version=$v -X $cv.Revision=$PROM3_MODVER -X $cv.Branch=module-proxy -X $cv.BuildUser=gpureclaim -X $cv.BuildDate=$(date -u +%Y%m%d-%H:%M:%S)"
    # remove_all_sd leaves out the cloud service discoveries (plugins/*.go), most of the build;
    # the tests configure static targets only (file and HTTP discovery stay, plugins/minimum.go).
    for b in prometheus promtool; do
        GOFLAGS="$GOFLAGS -tags=remove_all_sd" gobuild "$dir" "$PROM3_MODVER" "$ld" \
            "github.com/prometheus/prometheus/cmd/$b" "$dir/$b" || {
            echo "build.sh: cannot build prometheus $v ('$b')" >&2
            return 1
        }
    done
    echo "prometheus $v: built in $(($(date +%s) - t0)) s (cold) at $dir"
}

build_vm() {
    dir=$CACHE/victoria-metrics-$VM_MODVER
    if [ -x "$dir/victoria-metrics" ]; then
        echo "victoria-metrics $VM_MODVER: cached at $dir"
        return 0
    fi
    t0=$(date +%s)
    ld="-s -w -X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-metrics-$VM_MODVER"
    GOTOOLCHAIN=$VM_GOTOOLCHAIN gobuild "$dir" "$VM_MODVER" "$ld" \
        github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics "$dir/victoria-metrics" || {
        echo "build.sh: cannot build victoria-metrics $VM_MODVER" >&2
        return 1
    }
    echo "victoria-metrics $VM_MODVER: built in $(($(date +%s) - t0)) s (cold) at $dir"
}

build_thanos() {
    dir=$CACHE/thanos-$THANOS_MODVER mod=github.com/thanos-io/thanos
    if [ -x "$dir/thanos" ]; then
        echo "thanos $THANOS_MODVER: cached at $dir"
        return 0
    fi
    t0=$(date +%s)
    cv=github.com/prometheus/common/version
    ld="-s -w -X $cv.Version=${THANOS_MODVER#v} -X $cv.Revision=$THANOS_MODVER -X $cv.Branch=module-proxy -X $cv.BuildUser=gpureclaim -X $cv.BuildDate=$(date -u +%Y%m%d-%H:%M:%S)"
    # The tags of its release build (.promu.yml): built without slicelabels, its gRPC codec
    # (pkg/extgrpc) reads Prometheus' labels as slices while they are strings, and the sidecar
    # panics on its first Info call ("makeslice: len out of range").
    # The module cache is read-only: copy the module (source, go.mod with its replaces, go.sum).
    mkdir -p "$dir"
    src=$(cd "$dir" && GOTOOLCHAIN=$THANOS_GOTOOLCHAIN GOFLAGS=-mod=mod go mod download -json "$mod@$THANOS_MODVER" |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p') && [ -n "$src" ] && rm -rf "$dir/src" &&
        cp -r "$src" "$dir/src" && chmod -R u+w "$dir/src" &&
        (cd "$dir/src" && GOTOOLCHAIN=$THANOS_GOTOOLCHAIN nice -n 10 go build -mod=mod -trimpath \
            -tags netgo,slicelabels -ldflags "$ld" \
            -o "$dir/thanos.tmp" ./cmd/thanos) && mv "$dir/thanos.tmp" "$dir/thanos" && rm -rf "$dir/src" || {
        echo "build.sh: cannot build thanos $THANOS_MODVER" >&2
        return 1
    }
    echo "thanos $THANOS_MODVER: built in $(($(date +%s) - t0)) s (cold) at $dir"
}

case ${1:-all} in
--path) path "$2" ;;
prometheus) build_prometheus ;;
vm) build_vm ;;
thanos) build_thanos ;;
all)
    build_prometheus
    build_vm
    ;;
*) echo "usage: tests/tsdb/build.sh [prometheus|vm|thanos|all] | --path NAME" >&2; exit 2 ;;
esac
