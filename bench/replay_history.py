#!/usr/bin/env python3
"""A week (or any span) of history for the replay benchmark (bench/replay.sh), in time order.

  replay_history.py WORKLOADS SECONDS END [SEED]

Writes the input of tests/fakes/remote_write on stdout (`LABELS TIMESTAMP_MS VALUE`) in
windows of 10 minutes, every series of a window before the next window, so that a Prometheus
receiving it by remote write always appends at its head (a series written whole, one after
another, would fall behind the head's appendable window after the first). Workload i has
bench_busy_ratio{namespace="bench",pod="w<i>"} every 15 s, busy (0.2 .. 0.9) or idle
(0 .. 0.05) in stretches of 10 minutes to 3 hours, and bench_devices{...,resource=
"amd_com_gpu"} 1 every 60 s: SECONDS / 15 activity samples per workload.
"""
import random
import sys

n, span, end = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
start = end - span
state = []  # per workload: (level, until)
for i in range(n):
    state.append([0.0, start])
names = ["namespace=bench,pod=w%05d" % i for i in range(n)]
out = sys.stdout
WINDOW = 600
for w in range(start, end, WINDOW):
    buf = []
    for i in range(n):
        lv, until = state[i]
        lab = "__name__=bench_busy_ratio," + names[i] + " "
        for t in range(w, min(w + WINDOW, end + 1), 15):
            if t >= until:
                busy = rnd.random() < 0.3
                lv = round(rnd.uniform(0.2, 0.9) if busy else rnd.choice([0.0, 0.01, 0.05]), 3)
                until = t + rnd.randint(600, 10800)
            buf.append("%s%d %r\n" % (lab, t * 1000, lv))
        state[i] = [lv, until]
    for i in range(n):
        lab = "__name__=bench_devices," + names[i] + ",resource=amd_com_gpu "
        for t in range(w, min(w + WINDOW, end + 1), 60):
            buf.append("%s%d 1\n" % (lab, t * 1000))
    out.write("".join(buf))
