#!/usr/bin/env python3
"""Late samples for the incremental-run differential test (tests/e2e/enforcer_incremental.sh).

  lag.py SEED SAMPLES FIRST OUT_DIR

SAMPLES is gen_replay.py's history (`LABELS TIMESTAMP_MS VALUE`). Some rp_busy_ratio series
lag: a third of their samples arrive LAG seconds after their time, after later samples of the
same series (out of order: Prometheus needs out_of_order_time_window), 20 s (inside the run's
30 s read overlap: the next cycle reads them again and puts them in place) or 300 s (beyond
it: only a full read, or the re-proof, sees them). Every other sample arrives at its time. Writes OUT_DIR/initial.txt
(what has arrived by FIRST, Unix seconds), OUT_DIR/arrivals.txt (`ARRIVAL_MS LINE`, the rest,
in series order then time order, so that remote write keeps each series in order) and
OUT_DIR/lags.txt (`pod card lag` for each lagging series).
"""
import random
import sys

seed, path, first, out = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
rnd = random.Random(seed * 7919)
lag_of = {}
initial = open(out + "/initial.txt", "w")
arrivals = open(out + "/arrivals.txt", "w")
for line in open(path):
    labels = line.split(" ", 1)[0]
    if labels not in lag_of:
        lag = 0
        if "__name__=rp_busy_ratio" in labels:
            x = rnd.random()
            lag = 20 if x < 0.15 else 300 if x < 0.25 else 0
        lag_of[labels] = lag
    ts = int(line.split()[1])
    arrive = ts + lag_of[labels] * 1000 if rnd.random() < 0.34 else ts
    if arrive <= first * 1000:
        initial.write(line)
    else:
        arrivals.write("%d %s" % (arrive, line))
with open(out + "/lags.txt", "w") as f:
    for labels, lag in sorted(lag_of.items()):
        if lag:
            d = dict(kv.split("=", 1) for kv in labels.split(","))
            f.write("%s %s %d\n" % (d["pod"], d["card"], lag))
