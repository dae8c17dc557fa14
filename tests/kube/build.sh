#!/bin/sh
# Build the real Kubernetes control plane the kube suites run against, from Go modules through
# the Go module proxy, and cache the binaries outside the work tree keyed by version.
#
# Why from modules: Debian 12 has etcd 3.4 and kubectl 1.20, too old for a current API server
# (docs/real-cluster.md), and the machines reach no release downloads. k8s.io/kubernetes
# resolves its staging modules with `replace => ./staging/...`, which `go install pkg@v`
# refuses, so a wrapper module is generated here that requires it and replaces each staging
# module k8s.io/NAME with its tag v0.X.Y (the list is read from the published go.mod, so it
# stays right for any version). etcd's server module has replace lines too: a second wrapper.
# The four Kubernetes binaries are built in one `go build` so their shared packages compile
# once. A second run finds the binaries and builds nothing.
#
# Prints, at the end, one line per component with its version and where it is; and, when it
# built something, how long that took. Usage: sh tests/kube/build.sh [-q]
set -eu
K8S_VERSION=${K8S_VERSION:-v1.36.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
KSM_VERSION=${KSM_VERSION:-v2.18.0}
# CRDs only (ServiceMonitor, PrometheusRule), read from the module; nothing is built
PO_VERSION=${PO_VERSION:-v0.85.0}
CACHE=${GPURECLAIM_CACHE:-$HOME/.cache/gpureclaim}/kube
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
quiet=${1:-}

say() { [ "$quiet" = -q ] || echo "kube-build: $*" >&2; }
die() { echo "kube-build: $*" >&2; exit 1; }
command -v go >/dev/null 2>&1 || die "'go' not found; the kube suites need Go (>= 1.25)"

now() { date +%s; }
# One build at a time per cache: a second `make check` (or a suite started by hand) beside a
# cold build waits for it, then finds the binaries, instead of building the same in the same
# directories.
mkdir -p "$CACHE"
if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE/.lock"
    flock 9
fi
built=""

# build_k8s: kube-apiserver, kube-controller-manager, kube-scheduler, kubectl of K8S_VERSION.
k8s_dir=$CACHE/kubernetes-$K8S_VERSION
build_k8s() {
    [ -x "$k8s_dir/bin/kube-apiserver" ] && [ -x "$k8s_dir/bin/kubectl" ] &&
        [ -x "$k8s_dir/bin/kube-controller-manager" ] && [ -x "$k8s_dir/bin/kube-scheduler" ] &&
        return 0
    t0=$(now)
    src=$k8s_dir/src
    rm -rf "$src" && mkdir -p "$src" "$k8s_dir/bin"
    say "building kubernetes $K8S_VERSION (cold: many minutes on 2 cores)"
    gomod=$(cd "$src" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
        sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
    [ -f "$gomod" ] || die "no go.mod for 'k8s.io/kubernetes@$K8S_VERSION' from the module proxy"
    staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$gomod")
    [ -n "$staging" ] || die "no staging replace lines in '$gomod'"
    minor=${K8S_VERSION#v1.}
    {
        echo "module gpureclaim.test/kubernetes"
        echo
        echo "go $(sed -n 's/^go \(.*\)/\1/p' "$gomod")"
        echo
        echo "require k8s.io/kubernetes $K8S_VERSION"
        echo
        for m in $staging; do echo "replace $m => $m v0.$minor"; done
        echo
        for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
            echo "tool k8s.io/kubernetes/cmd/$c"
        done
    } >"$src/go.mod"
    (cd "$src" && go mod tidy) || die "go mod tidy failed for the kubernetes wrapper in '$src'"
    major=1
    bdate=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    ld="-s -w"
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$major -X $p.gitMinor=${minor%%.*}"
        ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=$bdate"
    done
    (cd "$src" && go build -trimpath -pgo=off -tags selinux,notest -ldflags "$ld" \
        -o "$k8s_dir/bin/" k8s.io/kubernetes/cmd/kube-apiserver \
        k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler \
        k8s.io/kubernetes/cmd/kubectl) || die "go build of kubernetes $K8S_VERSION failed"
    built="$built kubernetes=$(($(now) - t0))s"
}

# build_wrapped DIR NAME MODULE VERSION PKG [LDFLAGS]: PKG of MODULE@VERSION from a wrapper
# module that requires it. etcd's server module has replace lines (`go install` refuses it);
# `go install` of kube-state-metrics fails as well: it reads the module's version list for
# deprecations, and the proxy answers that list with 403 "This module version is not
# available" while serving the version itself.
build_wrapped() {
    [ -x "$1/bin/$2" ] && return 0
    t0=$(now)
    src=$1/src
    rm -rf "$src" && mkdir -p "$src" "$1/bin"
    say "building $3@$4"
    printf 'module gpureclaim.test/%s\n\ngo 1.25\n\nrequire %s %s\n\ntool %s\n' \
        "$2" "$3" "$4" "$5" >"$src/go.mod"
    (cd "$src" && go mod tidy) || die "go mod tidy failed for the $2 wrapper in '$src'"
    (cd "$src" && go build -trimpath -ldflags "-s -w ${6:-}" -o "$1/bin/$2" "$5") ||
        die "go build of '$5' ($3@$4) failed"
    built="$built $2=$(($(now) - t0))s"
}

# build_plain DIR NAME PKG@VERSION LDFLAGS: a module without replace lines, by go install.
build_plain() {
    [ -x "$1/bin/$2" ] && return 0
    t0=$(now)
    mkdir -p "$1/bin"
    say "building $3"
    GOBIN=$1/bin go install -trimpath -ldflags "-s -w $4" "$3" || die "go install '$3' failed"
    [ -x "$1/bin/$2" ] || die "go install '$3' made no '$1/bin/$2'"
    built="$built $2=$(($(now) - t0))s"
}

etcd_dir=$CACHE/etcd-$ETCD_VERSION
# KUBE_BUILD_ONLY=kubernetes: only the four Kubernetes binaries (to start the longest build
# beside another run of this script)
if [ "${KUBE_BUILD_ONLY:-}" = kubernetes ]; then
    build_k8s
    [ -z "$built" ] || say "built:$built"
    exit 0
fi
build_wrapped "$etcd_dir" etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3
build_plain "$CACHE/kwok-$KWOK_VERSION" kwok "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" \
    "-X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION"
build_wrapped "$CACHE/kube-state-metrics-$KSM_VERSION" kube-state-metrics \
    k8s.io/kube-state-metrics/v2 "$KSM_VERSION" k8s.io/kube-state-metrics/v2 \
    "-X github.com/prometheus/common/version.Version=${KSM_VERSION#v}"
(cd "$CACHE" && go mod download "github.com/prometheus-operator/prometheus-operator@$PO_VERSION") ||
    die "cannot download 'github.com/prometheus-operator/prometheus-operator@$PO_VERSION'"
build_k8s
[ -z "$built" ] || say "built:$built"
# One line a component, read by tests/kube/cluster.sh.
cat >"$CACHE/env-$K8S_VERSION" <<EOT
KUBE_BIN=$k8s_dir/bin
ETCD_BIN=$etcd_dir/bin/etcd
KWOK_BIN=$CACHE/kwok-$KWOK_VERSION/bin/kwok
KSM_BIN=$CACHE/kube-state-metrics-$KSM_VERSION/bin/kube-state-metrics
K8S_VERSION=$K8S_VERSION
ETCD_VERSION=$ETCD_VERSION
KWOK_VERSION=$KWOK_VERSION
KSM_VERSION=$KSM_VERSION
PO_VERSION=$PO_VERSION
EOT
echo "$CACHE/env-$K8S_VERSION"
