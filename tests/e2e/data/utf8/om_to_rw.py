#!/usr/bin/env python3
"""OpenMetrics history (gen_history.py) as tests/fakes/remote_write input, optionally with
Prometheus 3 names: `om_to_rw.py IN OUT [dotted]`. With `dotted`, the labels namespace and pod
become k8s.namespace.name and k8s.pod.name and the metric names' ':' and '_' become '.'."""
import re
import sys

LINE = re.compile(r'^([^{\s]+)\{([^}]*)\} (\S+) (\d+)$')
PAIR = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="([^"]*)"')
RENAME = {"namespace": "k8s.namespace.name", "pod": "k8s.pod.name"}

src, dst = sys.argv[1], sys.argv[2]
dotted = len(sys.argv) > 3 and sys.argv[3] == "dotted"
with open(src) as f, open(dst, "w") as out:
    for line in f:
        m = LINE.match(line.strip())
        if not m:
            continue
        name, labels, value, ts = m.groups()
        pairs = PAIR.findall(labels)
        if dotted:
            name = name.replace(":", ".").replace("_", ".")
            pairs = [(RENAME.get(k, k), v) for k, v in pairs]
        for k, v in pairs:
            if "," in v or "=" in v:
                sys.exit("om_to_rw.py: a value with ',' or '=' cannot be written: %r" % v)
        text = ",".join(["__name__=" + name] + ["%s=%s" % kv for kv in pairs])
        out.write("%s %d %s\n" % (text, int(ts) * 1000, value))
