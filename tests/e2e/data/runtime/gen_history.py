#!/usr/bin/env python3
"""OpenMetrics history for tests/e2e/runtime_actions.sh: 2 h of 15 s samples ending at END.

Containers (label container_name): idle-a, idle-b, idle-c at 1-2 % busy, busy-d at 80 %,
bursty-e idle except one 90 % sample 5 minutes before END, exempt-f idle (its container
carries gpureclaim.io/exempt=true). Each holds one amd.com/gpu. With EXTRA, the samples go
on for EXTRA seconds after END (the same values), for evaluations after END.
usage: gen_history.py END OUT [EXTRA]
"""
import sys

end = int(sys.argv[1])
out = sys.argv[2]
start = end - 2 * 3600
last = end + (int(sys.argv[3]) if len(sys.argv) > 3 else 0)
names = {
    "idle-a": lambda t: 0.01,
    "idle-b": lambda t: 0.02,
    "idle-c": lambda t: 0.0,
    "busy-d": lambda t: 0.8,
    "bursty-e": lambda t: 0.9 if t == end - 300 else 0.01,
    "exempt-f": lambda t: 0.0,
}
with open(out, "w") as f:
    f.write("# HELP gpureclaim:container_busy:ratio Busy share of the container's GPUs.\n")
    f.write("# TYPE gpureclaim:container_busy:ratio gauge\n")
    for name, fn in names.items():
        for t in range(start, last + 1, 15):
            f.write('gpureclaim:container_busy:ratio{container_name="%s"} %g %d\n' % (name, fn(t), t))
    f.write("# HELP gpureclaim:container_devices:count GPUs held by the container.\n")
    f.write("# TYPE gpureclaim:container_devices:count gauge\n")
    for name in names:
        for t in range(start, last + 1, 15):
            f.write('gpureclaim:container_devices:count{container_name="%s",resource="amd.com/gpu"} 1 %d\n'
                    % (name, t))
    f.write("# EOF\n")
