#!/bin/sh
# Rules loader benchmark: wall time and peak RSS of `gpureclaim-enforcer check` on generated
# files: 160,000 rules (~10 MB, over the 4 MiB cap: refused at once), 62,000 rules (3.9 MB,
# just under the cap), one rule with 100,000 keys, and one identity of 100,000 labels.
# Before duplicates were hashed the first took 73 s (827 s on the shared CI machine) and the
# third 11 s (53 s). ENF=path benchmarks another build. Numbers, not a pass/fail test.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
ENF=${ENF:-$TOP/bin/gpureclaim-enforcer}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 - "$TMP" <<'PY'
import sys
d = sys.argv[1]
head = "apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n"
rule = "- name: rule-%d\n  threshold: 10\n  idleTimer: 15m\n  step: 1m\n"
for name, n in (("rules-160k", 160000), ("rules-62k", 62000)):
    with open("%s/%s.yaml" % (d, name), "w") as f:
        f.write(head + "".join(rule % i for i in range(n)))
wide = head + "- name: wide\n  threshold: 10\n  idleTimer: 15m\n"
with open(d + "/keys-100k.yaml", "w") as f:
    f.write(wide + "".join("  k%d: 1\n" % i for i in range(100000)))
with open(d + "/identity-100k.yaml", "w") as f:
    f.write(wide + "  identity:\n" + "".join("  - l%d\n" % i for i in range(100000)))
PY
echo "== rules loader: gpureclaim-enforcer check on generated files =="
for f in rules-160k rules-62k keys-100k identity-100k; do
    bytes=$(wc -c <"$TMP/$f.yaml")
    /usr/bin/time -f '%e %U %S %M' -o "$TMP/time" "$ENF" check "$TMP/$f.yaml" >"$TMP/out" 2>&1
    set -- $(tail -n 1 "$TMP/time")
    printf '%-14s %9s bytes: %6s s wall, %5s s user, %5s s sys, peak RSS %7s KiB, %s\n' \
        "$f" "$bytes" "$1" "$2" "$3" "$4" \
        "$(tail -n 1 "$TMP/out" | sed "s|$TMP/||" | cut -c1-60)"
done
echo "machine load: $(cut -d' ' -f1-3 /proc/loadavg)"
