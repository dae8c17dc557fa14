#!/usr/bin/env python3
"""Random activity histories for the raw-path / PromQL-path differential test
(tests/e2e/enforcer_differential.sh), at the fixed epoch END.

  gen_random.py SEED N SAMPLES META

SAMPLES is the input of tests/fakes/remote_write (`LABELS TIMESTAMP_MS VALUE` lines, VALUE a
number, NaN, +Inf or `stale` for a staleness marker), so staleness markers reach Prometheus
bit for bit, which OpenMetrics cannot carry. Each of the N workloads (pod w<i>) has one
series rnd_busy_ratio{namespace="rnd",pod=...}, scraped every 15 s with up to 2 s of jitter
over the last 45 minutes, and a random mix of: idle, busy, bursty (single high samples),
counter-like (a ratio that only grows) values; holes of lengths around both rules' tolerated
gaps (30 s and 2 m, and their PromQL resolution grey zones (22.5 s, 30 s] and (105 s, 120 s]);
NaN and +Inf samples; a late start (young), an early stop (stale), and staleness markers
(after a stop, and in the middle followed by a return). Every pod also gets an rnd_devices
sample per 15 s over the last 10 minutes (its allocation).

META is JSON {pod: {"markers": [ms...], "gaps": [[from_ms, to_ms], ...], "first": ms}} with the
raw gaps (between consecutive real samples, markers left out, and from the last one to END)
and the first real sample, for the test to explain the differences the two paths may show.
"""
import json
import random
import sys

END = 1700000000
EVERY = 15
HOLES = [20, 28, 29, 30, 31, 40, 60, 90, 104, 106, 110, 119, 120, 121, 150, 180]


def pod_history(rnd):
    kind = rnd.choice(["idle", "idle", "idle", "busy", "bursty", "counter"])
    start = -2700
    if rnd.random() < 0.1:
        start = -rnd.randint(600, 1000)  # young: about the 15 m window
    stop = 0
    stop_marker = False
    if rnd.random() < 0.12:
        stop = -rnd.choice([10, 20, 40, 100, 130, 200])
        stop_marker = rnd.random() < 0.6
    holes = []
    for _ in range(rnd.choice([0, 0, 1, 1, 2])):
        at = rnd.randint(start + 60, -20)
        holes.append((at, at + rnd.choice(HOLES)))
    mid_marker = None
    if rnd.random() < 0.12:
        mid_marker = rnd.randint(-1200, -30)
    nan_at = rnd.randint(-1500, 0) if rnd.random() < 0.08 else None
    inf_at = rnd.randint(-1500, 0) if rnd.random() < 0.04 else None
    bursts = {rnd.randint(-1500, 0) // EVERY for _ in range(rnd.randint(1, 3))}
    level = {"idle": rnd.choice([0.0, 0.01, 0.05, 0.0999]), "busy": rnd.uniform(0.1, 0.9),
             "bursty": 0.01, "counter": 0.0}[kind]
    growth = rnd.choice([1e-5, 1e-4, 5e-4])
    samples = []
    t = start
    while t <= stop:
        ts = END * 1000 + t * 1000 + rnd.randint(-2000, 2000)
        t_s = ts / 1000.0 - END
        if any(a < t_s < b for a, b in holes) or ts > END * 1000:
            t += EVERY
            continue
        if kind == "counter":
            v = repr(round(growth * (t - start), 9))
        elif kind == "bursty" and t // EVERY in bursts:
            v = "0.8"
        else:
            v = repr(level)
        if nan_at is not None and abs(t - nan_at) < EVERY / 2:
            v = "NaN"
        if inf_at is not None and abs(t - inf_at) < EVERY / 2:
            v = "+Inf"
        if mid_marker is not None and abs(t - mid_marker) < EVERY / 2:
            v = "stale"
        samples.append((ts, v))
        t += EVERY
    if stop_marker and samples:
        last = samples[-1][0]
        if last + 15000 <= END * 1000:
            samples.append((last + 15000, "stale"))
    return samples


def main():
    seed, n, out, meta_out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    rnd = random.Random(seed)
    meta = {}
    with open(out, "w") as f:
        for i in range(n):
            pod = "w%04d" % i
            samples = pod_history(rnd)
            labels = "__name__=rnd_busy_ratio,namespace=rnd,pod=%s" % pod
            for ts, v in samples:
                f.write("%s %d %s\n" % (labels, ts, v))
            real = [ts for ts, v in samples if v != "stale"]
            gaps = [[a, b] for a, b in zip(real, real[1:])]
            if real:
                gaps.append([real[-1], END * 1000])
            meta[pod] = {"markers": [ts for ts, v in samples if v == "stale"], "gaps": gaps,
                         "first": real[0] if real else None}
        for i in range(n):
            labels = "__name__=rnd_devices,namespace=rnd,pod=w%04d" % i
            for t in range(-600, 1, EVERY):
                f.write("%s %d 1\n" % (labels, (END + t) * 1000))
    json.dump(meta, open(meta_out, "w"))


main()
