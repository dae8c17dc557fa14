#!/bin/sh
# Install every build and test dependency from Debian, and nothing when all are present.
#
# Packages are checked with dpkg-query first so that a machine that already has them pays
# a few milliseconds, not an apt-get run. --no-install-recommends keeps out the 200+ MB that
# prometheus and podman recommend. Tests start their own daemons and never use a system one;
# docker.io's postinst would start the system dockerd unless /usr/sbin/policy-rc.d denies it
# (it exits 101 in the CI image, so nothing starts there). chromium renders `recommend --output
# html` headless in tests/e2e/recommend.sh (chromium-driver: the same build's WebDriver).
set -eu
PKGS="build-essential pkg-config ca-certificates curl git python3 jq \
 libmicrohttpd-dev libdrm-dev libcurl4-openssl-dev libjson-c-dev libyaml-dev \
 libgnutls28-dev libcrypt-dev openssl libre2-dev libsnappy-dev tzdata \
 prometheus prometheus-node-exporter \
 clang libclang-rt-14-dev valgrind clang-format \
 podman runc busybox-static uidmap docker.io \
 victoria-metrics \
 chromium chromium-driver"
missing=""
for p in $PKGS; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in *" installed") ;; *) missing="$missing $p" ;; esac
done
# Node.js runs the gRPC pod-resources test server; any working node is fine.
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
npm_deps() {
    # Test server for the pod-resources client (tests/e2e/podres.sh); versions from the lockfile.
    [ -d tests/podres/node_modules/@grpc/grpc-js ] ||
        npm ci --prefix tests/podres --no-audit --no-fund --loglevel=error
}
if [ -z "$missing" ]; then
    npm_deps
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "deps: missing packages:$missing; run 'make deps' as root" >&2
    exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
npm_deps
