#!/usr/bin/env python3
"""A generated history of three kinds of GPU workload, for the numbers of the README's
"Choosing thresholds with backtest" (the backtest of the shipped example rules on it) and
for tests/e2e/backtest.sh. Deterministic (seeded), 60 s samples over DAYS days (default 3)
ending at END (2023-11-03T00:00:00Z, a Friday; before the history of gen.py, so that both
fit in one TSDB), OpenMetrics for `promtool tsdb
create-blocks-from openmetrics`.

  notebooks/nb-0..7        1 GPU each. Working sessions in the day (Europe: 07-17 UTC) of
                           1-3 h, in which the owner reads, thinks or is in a meeting for
                           10-45 minutes at a time (activity 0-3 %) between bursts of work
                           (30-90 %); idle from the evening to the next morning (1 %).
  inference/infer-0..3     1 GPU each. A served model: 1-4 % between requests, short request
                           peaks (15-60 %) several times an hour in the day, a few an hour at
                           night; never stops serving.
  training/train-J-K       4 GPUs each. Jobs J of 8-20 h at 70-98 %, with a checkpoint or
                           data-loading dip (0-3 %) of 10-40 minutes every 2-4 h; a job ends
                           (its series end) and the next starts 1-3 h later (K counts them).

usage: gen_types.py OUT [DAYS]
"""
import random
import sys

END = 1698969600
STEP = 60
BUSY = "gpureclaim:workload_busy:ratio"
DEVICES = "gpureclaim:workload_devices:count"


def hour_utc(t):
    return (t % 86400) / 3600.0


def notebook(rng, start, end):
    """(t -> value) for a notebook pod alive over the whole history."""
    vals = {}
    t = start
    while t < end:
        h = hour_utc(t)
        if 7 <= h < 17 and rng.random() < 0.5:
            # a working session of 1-3 h: work bursts and pauses
            s_end = t + rng.randint(60, 180) * 60
            while t < s_end and t < end:
                work = rng.randint(5, 40) * 60
                for u in range(t, min(t + work, end), STEP):
                    vals[u] = rng.uniform(0.3, 0.9)
                t += work
                pause = rng.randint(10, 45) * 60
                for u in range(t, min(t + pause, end), STEP):
                    vals[u] = rng.uniform(0.0, 0.03)
                t += pause
        else:
            for u in range(t, min(t + 1800, end), STEP):
                vals[u] = 0.01
            t += 1800
    return vals


def inference(rng, start, end):
    vals = {}
    for t in range(start, end, STEP):
        h = hour_utc(t)
        per_hour = 6 if 7 <= h < 20 else 2
        if rng.random() < per_hour / 60.0:
            vals[t] = rng.uniform(0.15, 0.6)
        else:
            vals[t] = rng.uniform(0.01, 0.04)
    return vals


def training_jobs(rng, start, end, slot):
    """[(name, {t: value})] for the jobs of one slot."""
    jobs = []
    t = start + rng.randint(0, 4) * 3600
    k = 0
    while t < end:
        length = rng.randint(8, 20) * 3600
        vals = {}
        u = t
        next_dip = u + rng.randint(2, 4) * 3600
        while u < min(t + length, end):
            if u >= next_dip:
                dip = rng.randint(10, 40) * 60
                for w in range(u, min(u + dip, t + length, end), STEP):
                    vals[w] = rng.uniform(0.0, 0.03)
                u += dip
                next_dip = u + rng.randint(2, 4) * 3600
                continue
            vals[u] = rng.uniform(0.7, 0.98)
            u += STEP
        jobs.append(("train-%d-%d" % (slot, k), vals))
        k += 1
        t += length + rng.randint(1, 3) * 3600
    return jobs


def main():
    days = float(sys.argv[2]) if len(sys.argv) > 2 else 3
    start = END - int(days * 86400)
    start -= start % STEP
    rng = random.Random(25)
    series = []  # (namespace, pod, devices, {t: v})
    for i in range(8):
        series.append(("notebooks", "nb-%d" % i, 1, notebook(rng, start, END)))
    for i in range(4):
        series.append(("inference", "infer-%d" % i, 1, inference(rng, start, END)))
    for slot in range(4):
        for name, vals in training_jobs(rng, start, END, slot):
            series.append(("training", name, 4, vals))
    with open(sys.argv[1], "w") as out:
        out.write("# TYPE %s gauge\n" % BUSY)
        for ns, pod, _dev, vals in series:
            head = '%s{namespace="%s",pod="%s"} ' % (BUSY, ns, pod)
            out.write("".join("%s%.4f %d\n" % (head, vals[t], t) for t in sorted(vals)))
        out.write("# TYPE %s gauge\n" % DEVICES)
        for ns, pod, dev, vals in series:
            head = '%s{namespace="%s",pod="%s",resource="amd.com/gpu"} %d ' % (DEVICES, ns, pod,
                                                                              dev)
            out.write("".join("%s%d\n" % (head, t) for t in sorted(vals)))
        out.write("# EOF\n")


if __name__ == "__main__":
    main()
