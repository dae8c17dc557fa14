#!/bin/sh
# deploy/: (a) every kustomization builds with `kubectl kustomize` and the result has what the
# manifests promise (read-only host mounts, probes, dropped capabilities, the rules ConfigMap,
# the PrometheusRule equal to rules/prometheus/); the copies made by deploy/kubernetes/sync.sh
# are current; (b) `systemd-analyze verify` accepts the units; (c) every flag in the manifests,
# units, env examples and Containerfiles is in the program's --help; the Containerfiles'
# runtime stages install the libraries the binaries link.
. "$(dirname "$0")/../lib.sh"

K=$TOP/deploy/kubernetes
CHECK="python3 $TOP/tests/dashboards/deploy_check.py"

# ---- (a) kustomize ----------------------------------------------------------------------------
check sync-current sh "$K/sync.sh" --check
check enforcer-accepts-configmap-rules "$BIN/gpureclaim-enforcer" check "$K/enforcer/rules.yaml"

if ! have_kubectl; then
    fail kubectl "kubectl not installed and apt-get could not install kubernetes-client"
elif ! kubectl kustomize --help >/dev/null 2>&1; then
    fail kubectl "this kubectl has no 'kustomize' command"
else
    for d in "" exporter enforcer prometheus-rules web-tls; do
        name=kustomize-${d:-all}
        if kubectl kustomize "$K/$d" >"$TMP/$name.yaml" 2>"$TMP/$name.err"; then
            pass "$name"
        else
            fail "$name" "$(head -n 3 "$TMP/$name.err")"
        fi
    done
    [ -s "$TMP/kustomize-all.yaml" ] && { $CHECK manifests "$TMP/kustomize-all.yaml" ||
        TEST_FAILED=$((TEST_FAILED + 1)); }
fi

# ---- (b) systemd units ------------------------------------------------------------------------
if command -v systemd-analyze >/dev/null 2>&1; then
    # verify insists that ExecStart= exists: point it at the built binaries.
    mkdir -p "$TMP/units"
    for u in "$TOP"/deploy/systemd/*.service; do
        sed "s#/usr/local/bin/#$BIN/#" "$u" >"$TMP/units/$(basename "$u")"
        if systemd-analyze verify "$TMP/units/$(basename "$u")" >"$TMP/verify.log" 2>&1 &&
            ! grep -q . "$TMP/verify.log"; then
            pass "systemd-verify-$(basename "$u" .service)"
        else
            fail "systemd-verify-$(basename "$u" .service)" "$(head -n 5 "$TMP/verify.log")"
        fi
    done
else
    echo "note: systemd-analyze not installed, unit verification skipped"
fi

# ---- (c) flags and runtime libraries -----------------------------------------------------------
"$BIN/gpureclaim-exporter" --help >"$TMP/exporter.help" 2>&1
"$BIN/gpureclaim-enforcer" --help >"$TMP/enforcer.help" 2>&1
$CHECK flags "$TMP/exporter.help" "$TMP/enforcer.help" \
    "$K/exporter/daemonset.yaml" "$K/enforcer/deployment.yaml" \
    "$K/web-tls/exporter-patch.yaml" "$K/web-tls/enforcer-patch.yaml" \
    "$TOP"/deploy/systemd/*.service "$TOP"/deploy/systemd/*.env.example \
    "$TOP"/deploy/containers/Containerfile.* || TEST_FAILED=$((TEST_FAILED + 1))

# Debian packages of the shared libraries each binary needs directly (libc is in the base).
needed_packages() {
    for lib in $(objdump -p "$1" 2>/dev/null | awk '/NEEDED/ {print $2}'); do
        path=$(ldd "$1" | awk -v l="$lib" '$1 == l {print $3}')
        [ -n "$path" ] || continue
        pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null ||
              dpkg -S "${path#/usr}" 2>/dev/null)
        pkg=${pkg%%:*}
        case $pkg in libc6 | "") ;; *) echo "$pkg" ;; esac
    done | sort -u
}
if command -v dpkg >/dev/null 2>&1 && command -v objdump >/dev/null 2>&1; then
    for p in exporter enforcer; do
        $CHECK libs "$TOP/deploy/containers/Containerfile.$p" \
            $(needed_packages "$BIN/gpureclaim-$p") || TEST_FAILED=$((TEST_FAILED + 1))
    done
else
    echo "note: dpkg or objdump missing, runtime library check skipped"
fi
finish
