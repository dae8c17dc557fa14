#!/usr/bin/env python3
"""Random histories of a few hours for the replay equality test (tests/e2e/replay.sh).

  gen_replay.py SEED N SAMPLES [OPENMETRICS]

SAMPLES is the input of tests/fakes/remote_write (`LABELS TIMESTAMP_MS VALUE`, VALUE a number,
NaN, +Inf or `stale`; in time order by windows of 10 minutes), OPENMETRICS (optional) the same history as Prometheus text with
millisecond timestamps for VictoriaMetrics' /api/v1/import/prometheus, without staleness
markers and NaN samples (it drops NaN at ingestion). The history ends at END and starts 4 hours
before it. Each of the N pods (pod w<i>, namespace rp) lives over a random part of it and has
one or two series rp_busy_ratio{card=...} scraped every 15 s with up to 2 s of jitter, whose
activity alternates idle and busy stretches of 3 to 50 minutes, with single bursts, holes
around the rules' tolerated gaps and longer, NaN and +Inf samples, and staleness markers
(after a stop, and in the middle followed by a return); rp_devices{resource="amd_com_gpu"} is
its allocation while it lives, and rp_pending{resource="amd_com_gpu"} the demand, stepping
between 0 and 4 with holes of its own. Cycles of the test fall every 2 minutes over the last
100 minutes, so every idle timer of rules-replay.yaml finds a history before it. END is
1700000000 unless the environment's REPLAY_END says otherwise (the backtest's differential
test puts one history across a DST change).
"""
import os
import random
import sys

END = int(os.environ.get("REPLAY_END", "1700000000"))
SPAN = 4 * 3600
EVERY = 15
HOLES = [20, 28, 31, 45, 60, 90, 119, 121, 150, 240, 600]


def activity(rnd, start, stop):
    segs = []
    t = start
    while t < stop:
        n = rnd.randint(180, 3000)
        busy = rnd.random() < 0.4
        level = rnd.uniform(0.1, 0.9) if busy else rnd.choice([0.0, 0.01, 0.05, 0.0999])
        segs.append((t, t + n, level))
        t += n
    holes = []
    for _ in range(rnd.choice([0, 0, 1, 2, 3])):
        at = rnd.randint(start, max(start, stop - 30))
        holes.append((at, at + rnd.choice(HOLES)))
    bursts = {rnd.randint(start, stop) // EVERY for _ in range(rnd.randint(0, 4))}
    nan_at = rnd.randint(start, stop) if rnd.random() < 0.1 else None
    inf_at = rnd.randint(start, stop) if rnd.random() < 0.05 else None
    mid_marker = rnd.randint(start, stop) if rnd.random() < 0.1 else None
    out = []
    t = start
    while t <= stop:
        ts = (END + t) * 1000 + rnd.randint(-2000, 2000)
        t_s = ts / 1000.0 - END
        if any(a < t_s < b for a, b in holes) or ts > END * 1000 or ts < (END - SPAN) * 1000:
            t += EVERY
            continue
        v = next((repr(l) for a, b, l in segs if a <= t < b), "0.0")
        if t // EVERY in bursts:
            v = "0.8"
        if nan_at is not None and abs(t - nan_at) < EVERY / 2:
            v = "NaN"
        if inf_at is not None and abs(t - inf_at) < EVERY / 2:
            v = "+Inf"
        if mid_marker is not None and abs(t - mid_marker) < EVERY / 2:
            v = "stale"
        out.append((ts, v))
        t += EVERY
    return out


def main():
    seed, n = int(sys.argv[1]), int(sys.argv[2])
    rnd = random.Random(seed)
    series = []  # (labels dict, [(ts_ms, value)])
    for i in range(n):
        pod = "w%04d" % i
        start = -SPAN if rnd.random() < 0.6 else -rnd.randint(3600, SPAN)
        stop = 0 if rnd.random() < 0.75 else -rnd.randint(60, 5400)
        stop = max(stop, start + 600)  # lives at least 10 minutes
        cards = 2 if rnd.random() < 0.2 else 1
        for c in range(cards):
            s = activity(rnd, start, stop)
            if s and stop < 0 and rnd.random() < 0.6 and s[-1][0] + 15000 <= END * 1000:
                s.append((s[-1][0] + 15000, "stale"))
            series.append(({"__name__": "rp_busy_ratio", "namespace": "rp", "pod": pod,
                            "card": str(c)}, s))
        alloc_stop = min(0, stop + rnd.choice([0, 0, 60, 300]))
        series.append(({"__name__": "rp_devices", "namespace": "rp", "pod": pod,
                        "resource": "amd_com_gpu"},
                       [((END + t) * 1000, str(cards)) for t in range(start, alloc_stop + 1, EVERY)]))
    pending, t, level = [], -SPAN, 0
    while t <= 0:
        if rnd.random() < 0.02:
            level = rnd.choice([0, 0, 1, 2, 4])
        if rnd.random() < 0.01:
            t += rnd.choice([60, 400])  # a hole: no demand known
            continue
        pending.append(((END + t) * 1000, str(level)))
        t += EVERY
    series.append(({"__name__": "rp_pending", "resource": "amd_com_gpu"}, pending))
    # In windows of 10 minutes, every series of a window before the next: Prometheus takes
    # remote-written samples only near its head (a series written whole after another that
    # reached END would be out of bounds once the head has been compacted).
    with open(sys.argv[3], "w") as f:
        names = [",".join("%s=%s" % kv for kv in sorted(l.items())) for l, _ in series]
        pos = [0] * len(series)
        for w in range((END - SPAN) * 1000, END * 1000 + 1, 600000):
            for i, (_, samples) in enumerate(series):
                while pos[i] < len(samples) and samples[pos[i]][0] < w + 600000:
                    f.write("%s %d %s\n" % (names[i], samples[pos[i]][0], samples[pos[i]][1]))
                    pos[i] += 1
    if len(sys.argv) > 4:
        with open(sys.argv[4], "w") as f:
            for labels, samples in series:
                name = labels["__name__"]
                ls = ",".join('%s="%s"' % kv for kv in sorted(labels.items()) if kv[0] != "__name__")
                for ts, v in samples:
                    if v not in ("stale", "NaN"):
                        f.write("%s{%s} %s %d\n" % (name, ls, v, ts))


main()
