#!/usr/bin/env python3
"""OpenMetrics history for the enforcer's end-to-end tests and benchmark.

Written for `promtool tsdb create-blocks-from openmetrics`, at a fixed epoch so that the
decisions are the same on every run (prometheus/prometheus docs/storage.md, "Backfilling"): samples every 15 s
ending at END (default 1700000000), timestamps in seconds, families contiguous, `# EOF`.

  gen_history.py scenario OUT      the e2e workloads (see SCENARIO below), 1 h of history
  gen_history.py bench N OUT [S [H]]  N workloads over H seconds (default 1800: the bench rule's
                                   lookback), one sample every S seconds (default 15): pod-i is
                                   busy when i % 10 == 0, else idle

The expected decision of every scenario workload is printed by `gen_history.py expect`
as JSON {rule: {pod: [decision, reason]}}, so the shell test and this file cannot drift.
"""
import json
import math
import sys

END = 1700000000
STEP = 15
BUSY = "gpureclaim:workload_busy:ratio"
DEVICES = "gpureclaim:workload_devices:count"
RESOURCE = "amd.com/gpu"


def idle(_t):
    return 0.01


# name -> (namespace, devices, first sample offset, last sample offset, value(t_offset)),
# offsets in seconds relative to END (negative = before). None as a value = no sample.
def scenario():
    w = {}
    w["idle-a"] = ("ml", 2, -3600, 0, idle)
    w["idle-b"] = ("ml", 4, -3600, 0, lambda t: 0.0)
    w["busy"] = ("ml", 1, -3600, 0, lambda t: 0.6)
    # One 15 s sample at 80 % five minutes ago, idle otherwise.
    w["burst"] = ("ml", 1, -3600, 0, lambda t: 0.8 if t == -300 else 0.01)
    # Idle, but the series only starts 10 minutes ago: not proven idle for 15 minutes.
    w["young"] = ("ml", 1, -600, 0, idle)
    # Idle with no samples for 3 minutes (END-480 .. END-300 exclusive).
    w["gappy"] = ("ml", 1, -3600, 0, lambda t: None if -480 < t < -300 else 0.01)
    # Idle with three NaN samples 10 minutes ago (max_over_time skips a lone NaN).
    w["nan"] = ("ml", 1, -3600, 0, lambda t: math.nan if -600 <= t <= -570 else 0.01)
    # Idle, but stopped reporting two minutes ago.
    w["stale"] = ("ml", 1, -3600, -120, idle)
    # Busy until 20 minutes ago, idle since: reclaimed, idle since END-1185.
    w["went-idle"] = ("ml", 1, -3600, 0, lambda t: 0.7 if t <= -1200 else 0.02)
    # Busy until 10 minutes ago: still inside the window.
    w["cooling"] = ("ml", 1, -3600, 0, lambda t: 0.7 if t <= -600 else 0.02)
    # Just under and exactly at the 10 % threshold.
    w["under"] = ("ml", 1, -3600, 0, lambda t: 0.0999)
    w["at-threshold"] = ("ml", 1, -3600, 0, lambda t: 0.1 if t == -60 else 0.05)
    # Idle in a namespace the rules exempt.
    w["idle-c"] = ("exempt", 1, -3600, 0, idle)
    return w


# What the rules in rules.yaml must decide (rule "always": Always, 10 %, 15m, step 15s;
# rule "pressure": DuringGPUPressure with 2 pending amd.com/gpu devices).
def expect():
    always = {
        "idle-a": ["reclaim", "idle"],
        "idle-b": ["reclaim", "idle"],
        "busy": ["keep", "active"],
        "burst": ["keep", "active"],
        "young": ["keep", "too_young"],
        "gappy": ["keep", "gap"],
        "nan": ["keep", "not_a_number"],
        "stale": ["keep", "stale"],
        "went-idle": ["reclaim", "idle"],
        "cooling": ["keep", "active"],
        "under": ["reclaim", "idle"],
        "at-threshold": ["keep", "active"],
        "idle-c": ["keep", "exempt"],
        "no-activity": ["keep", "no_data"],
    }
    pressure = dict(always)
    # Demand 2: idle-a (2 devices, idle longest, first by name) covers it alone.
    pressure["idle-b"] = ["keep", "not_needed"]
    pressure["went-idle"] = ["keep", "not_needed"]
    pressure["under"] = ["keep", "not_needed"]
    return {"always": always, "pressure": pressure}


def fmt(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return repr(v) if isinstance(v, float) else str(v)


def write_scenario(out):
    w = scenario()
    out.write("# HELP %s Busy ratio of the GPUs allocated to a workload.\n" % BUSY)
    out.write("# TYPE %s gauge\n" % BUSY)
    for pod, (ns, _dev, first, last, value) in w.items():
        for off in range(first, last + 1, STEP):
            v = value(off)
            if v is None:
                continue
            out.write('%s{namespace="%s",pod="%s"} %s %d\n' % (BUSY, ns, pod, fmt(v), END + off))
    out.write("# HELP %s GPU devices allocated to a workload.\n" % DEVICES)
    out.write("# TYPE %s gauge\n" % DEVICES)
    pods = list(w.items()) + [("no-activity", ("ml", 1, -3600, 0, None))]
    for pod, (ns, dev, first, last, _value) in pods:
        for off in range(max(first, -600), last + 1, STEP):
            out.write('%s{namespace="%s",pod="%s",resource="%s"} %d %d\n'
                      % (DEVICES, ns, pod, RESOURCE, dev, END + off))
    # kube-state-metrics: one pending pod asking for 2 GPUs, one pending pod without GPUs.
    out.write("# TYPE kube_pod_container_resource_requests gauge\n")
    for pod, res, n in (("waiting", "amd_com_gpu", 2), ("waiting-cpu", "cpu", 4)):
        for off in range(-600, 1, STEP):
            out.write('kube_pod_container_resource_requests{namespace="ml",pod="%s",'
                      'container="main",resource="%s",unit="integer"} %d %d\n'
                      % (pod, res, n, END + off))
    out.write("# TYPE kube_pod_status_unschedulable gauge\n")
    for pod in ("waiting", "waiting-cpu"):
        for off in range(-600, 1, STEP):
            out.write('kube_pod_status_unschedulable{namespace="ml",pod="%s"} 1 %d\n'
                      % (pod, END + off))
    out.write("# EOF\n")


def write_bench(n, out, interval=STEP, history=1800):
    # One write per series: 100,000 workloads over 30 minutes at 15 s are some 12 million
    # lines. The history must start at least 3 minutes before the 15-minute window, so that the
    # raw samples of its first step (and the step before) exist: a workload is only proven idle
    # from its first covered step.
    offs = range(-history, 1, interval)
    out.write("# TYPE %s gauge\n" % BUSY)
    for i in range(n):
        head = '%s{namespace="ns%d",pod="pod-%05d"} %s ' % (
            BUSY, i % 100, i, 0.5 if i % 10 == 0 else 0.01)
        out.write("".join("%s%d\n" % (head, END + off) for off in offs))
    out.write("# TYPE %s gauge\n" % DEVICES)
    for i in range(n):
        head = '%s{namespace="ns%d",pod="pod-%05d",resource="%s"} 1 ' % (
            DEVICES, i % 100, i, RESOURCE)
        out.write("".join("%s%d\n" % (head, END + off) for off in range(-240, 1, 60)))
    out.write("# EOF\n")


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "expect":
        json.dump(expect(), sys.stdout, indent=1, sort_keys=True)
        print()
    elif len(sys.argv) == 3 and sys.argv[1] == "scenario":
        with open(sys.argv[2], "w") as f:
            write_scenario(f)
    elif len(sys.argv) in (4, 5, 6) and sys.argv[1] == "bench":
        with open(sys.argv[3], "w") as f:
            write_bench(int(sys.argv[2]), f, int(sys.argv[4]) if len(sys.argv) >= 5 else STEP,
                        int(sys.argv[5]) if len(sys.argv) == 6 else 1800)
    else:
        sys.exit("usage: gen_history.py expect | scenario OUT | bench N OUT [S [H]]")


if __name__ == "__main__":
    main()
