#!/usr/bin/env python3
"""OpenMetrics history for tests/e2e/backtest.sh: five workloads over 4 h 5 min of 15 s
samples ending at END (1700000000), for `promtool tsdb create-blocks-from openmetrics`.

The backtest runs from END-3h to END every 5 minutes (37 cycles). Offsets below are seconds
relative to END. With rules-a.yaml (Always, 10 %, idle timer 30m, no notice period) the
known answer is:

  ml/idle   2 GPUs, idle throughout: reclaimed at -10800, never back: 2 x 3 h = 6 GPU-hours
  ml/busy   1 GPU at 60 %: never reclaimed
  ml/back   1 GPU, busy until -9105, idle, busy again from -5400: reclaimed at -7200 (the
            first cycle whose 30 min window holds no busy point), back at -5400 after 30m
            (a return within 1h): 0.5 GPU-hours
  ml/gone   4 GPUs, idle, all series end at -3630: reclaimed at -10800; the last cycle that
            sees its allocation is -3600: 4 x 2 h = 8 GPU-hours
  dev/late  1 GPU, idle, busy from -6000 to -5000, idle again: reclaimed at -10800, back at
            -6000 after 1h20m (not within 1h), reclaimed again at -3000 and away until END:
            4800 s + 3000 s = 2.1667 GPU-hours
  rule A: 5 workloads, 5 reclaims, 16.67 GPU-hours, 1 return within 1h of 2, median 30m.

With rules-p.yaml (DuringGPUPressure, 10 %, 30m, scope pq), three idle 1-GPU workloads
pq/p1..p3 and one pod pq/waiter pending for 1 amd.com/gpu from -7200 to -3600: one reclaim
when the demand appears (-7200), then none, as the GPU it freed went to the waiter (the
history, where nothing was freed, still shows it waiting for an hour).

With rules-b.yaml (the same with an idle timer of 1h): ml/back is never idle for 1 h
(3,690 s between its busy spells, but no cycle falls in the 90 s where the window fits),
dev/late's second reclaim comes at -1200: 4 reclaims, 6 + 8 + 4800/3600 + 1200/3600 = 15.67
GPU-hours, no return within 1h. Only in A: ml/back at -7200 and dev/late at -3000; only in
B: dev/late at -1200.
"""
import sys

END = 1700000000
START = -14700
STEP = 15
BUSY = "gpureclaim:workload_busy:ratio"
DEVICES = "gpureclaim:workload_devices:count"


def back(t):
    return 0.5 if t <= -9105 or t >= -5400 else 0.01


def late(t):
    return 0.7 if -6000 <= t <= -5000 else 0.01


# (namespace, pod, devices, last offset, activity(offset))
WORKLOADS = [
    ("ml", "idle", 2, 0, lambda t: 0.01),
    ("ml", "busy", 1, 0, lambda t: 0.6),
    ("ml", "back", 1, 0, back),
    ("ml", "gone", 4, -3630, lambda t: 0.01),
    ("dev", "late", 1, 0, late),
    ("pq", "p1", 1, 0, lambda t: 0.01),
    ("pq", "p2", 1, 0, lambda t: 0.02),
    ("pq", "p3", 1, 0, lambda t: 0.03),
]
# kube-state-metrics: pq/waiter pending for one amd.com/gpu from -7200 to -3600.
WAITER = range(-7200, -3600 + 1, STEP)


def main():
    out = open(sys.argv[1], "w") if len(sys.argv) > 1 else sys.stdout
    out.write("# TYPE %s gauge\n" % BUSY)
    for ns, pod, _dev, last, f in WORKLOADS:
        head = '%s{namespace="%s",pod="%s"} ' % (BUSY, ns, pod)
        out.write("".join("%s%g %d\n" % (head, f(t), END + t)
                          for t in range(START, last + 1, STEP)))
    out.write("# TYPE %s gauge\n" % DEVICES)
    for ns, pod, dev, last, _f in WORKLOADS:
        head = '%s{namespace="%s",pod="%s",resource="amd.com/gpu"} %d ' % (DEVICES, ns, pod, dev)
        out.write("".join("%s%d\n" % (head, END + t) for t in range(START, last + 1, STEP)))
    out.write("# TYPE kube_pod_container_resource_requests gauge\n")
    head = ('kube_pod_container_resource_requests{namespace="pq",pod="waiter",container="main",'
            'resource="amd_com_gpu",unit="integer"} 1 ')
    out.write("".join("%s%d\n" % (head, END + t) for t in WAITER))
    out.write("# TYPE kube_pod_status_unschedulable gauge\n")
    head = 'kube_pod_status_unschedulable{namespace="pq",pod="waiter"} 1 '
    out.write("".join("%s%d\n" % (head, END + t) for t in WAITER))
    out.write("# EOF\n")


if __name__ == "__main__":
    main()
