#!/usr/bin/env python3
"""Scenarios of the per-device, raw-sample judgment (issue 11) for any Prometheus-compatible
TSDB, with the decisions rules-judge.yaml must make on them.

  gen_judge.py openmetrics OUT   the history for `promtool tsdb create-blocks-from openmetrics`
  gen_judge.py expect            {rule: {pod: [decision, reason]}} as JSON ("*" = either
                                 decision: the workload is checked for consistency only)

Format of SCENARIOS (reuse it for another backend, e.g. VictoriaMetrics' import):
  pod -> (rule, series), series = [(extra_labels, samples)], samples = a list of
  (offset_seconds, value) relative to END; value is a float, math.nan for a NaN sample, or
  None for no sample. Every series of a pod also has labels namespace="judge", pod=<pod>;
  `rule` "raw" series go to METRIC_RAW (a plain selector rule), "expr" and "join" ones to
  METRIC_EXPR (rules whose activity is an expression), unless extra_labels names another
  metric as "__name__" ("join" pods' METRIC_HELD: the devices a pod holds, which the join
  rule's expression joins on). Every pod also gets one JUDGE_DEVICES sample per 15 s over
  the last 10 minutes (its allocation). All samples are 15 s apart unless a hole says
  otherwise; history starts at END - 3600.
"""
import json
import math
import sys

END = 1700000000
EVERY = 15
METRIC_RAW = "judge_gpu_busy_ratio"
METRIC_EXPR = "judge_expr_busy_ratio"
METRIC_HELD = "judge_expr_held"
DEVICES = "judge_devices"


def run(value=0.01, start=-3600, stop=0, holes=(), special=None):
    """Samples every 15 s from start to stop (inclusive); none strictly inside a hole
    (a, b); special maps an offset to its value."""
    out = []
    for off in range(start, stop + 1, EVERY):
        if any(a < off < b for a, b in holes):
            continue
        out.append((off, (special or {}).get(off, value)))
    return out


SCENARIOS = {
    # GPU0 at 90 % went silent 17 minutes ago; its idle neighbour must not hide that.
    "silent-gpu": ("raw", [({"gpu_id": "0"}, run(0.9, stop=-1020)), ({"gpu_id": "1"}, run())]),
    # GPU0 silent for 5 minutes inside the window, next to an idle GPU1.
    "gpu-hole": ("raw", [({"gpu_id": "0"}, run(holes=[(-500, -200)])), ({"gpu_id": "1"}, run())]),
    # Last raw sample 3 minutes old: the 1-minute grid's last point (END-120) covers it.
    "stale-3m": ("raw", [({"gpu_id": "0"}, run(stop=-180))]),
    # Last raw sample 90 s old: within toleratedGap (2m) less the resolution (15 s).
    "fresh-90s": ("raw", [({"gpu_id": "0"}, run(stop=-90))]),
    # One NaN sample among numbers inside a step (max_over_time alone skips it).
    "nan-step": ("raw", [({"gpu_id": "0"}, run(special={-300: math.nan}))]),
    # Samples at END-510 and END-360: 150 s apart, one missing point on the 1-minute grid.
    "hole-150s": ("raw", [({"gpu_id": "0"}, run(holes=[(-510, -360)]))]),
    # Samples at END-495 and END-405: a 90 s hole, one grid point without a sample: tolerated.
    "hole-90s": ("raw", [({"gpu_id": "0"}, run(holes=[(-495, -405)]))]),
    "idle": ("raw", [({"gpu_id": "0"}, run()), ({"gpu_id": "1"}, run(0.02))]),
    # The expression rules: their result's inner selectors look back 5 minutes on
    # Prometheus, so a 6-minute hole shrinks to about one minute and a 4-minute one, or a
    # stop 3 minutes ago, is invisible in it. The raw samples of the selectors are judged
    # instead (issue 24 §4): each keeps as it would with a selector rule.
    "expr-hole-6m": ("expr", [({"gpu_id": "0"}, run(holes=[(-600, -240)]))]),
    "expr-hole-4m": ("expr", [({"gpu_id": "0"}, run(holes=[(-600, -360)]))]),
    "expr-stale-3m": ("expr", [({"gpu_id": "0"}, run(stop=-180))]),
    # One of two devices silent for 4 minutes: max by pod shows the other one throughout.
    "expr-gpu-hole-4m": ("expr", [({"gpu_id": "0"}, run(holes=[(-600, -360)])),
                                  ({"gpu_id": "1"}, run())]),
    "expr-hole-90s": ("expr", [({"gpu_id": "0"}, run(holes=[(-495, -405)]))]),
    "expr-idle": ("expr", [({"gpu_id": "0"}, run())]),
    # The join rule: `and on (namespace, pod, gpu_id)` the devices the pod holds. GPU1 at
    # 90 % has no held series (a selector missing for one device): the join drops it and
    # the result shows only idle GPU0.
    "expr-join-missing": ("join", [({"gpu_id": "0"}, run()), ({"gpu_id": "1"}, run(0.9)),
                                   ({"gpu_id": "0", "__name__": METRIC_HELD}, run(1))]),
    # The held series of GPU1 stopped 3 minutes ago; its lookback still joins GPU1 for 5.
    "expr-join-held-stale": ("join", [({"gpu_id": "0"}, run()), ({"gpu_id": "1"}, run()),
                                      ({"gpu_id": "0", "__name__": METRIC_HELD}, run(1)),
                                      ({"gpu_id": "1", "__name__": METRIC_HELD},
                                       run(1, stop=-180))]),
    "expr-join-idle": ("join", [({"gpu_id": "0"}, run()), ({"gpu_id": "1"}, run()),
                                ({"gpu_id": "0", "__name__": METRIC_HELD}, run(1)),
                                ({"gpu_id": "1", "__name__": METRIC_HELD}, run(1))]),
}

EXPECT = {
    "raw": {
        "silent-gpu": ["keep", "stale"],
        "gpu-hole": ["keep", "gap"],
        "stale-3m": ["keep", "stale"],
        "fresh-90s": ["reclaim", "idle"],
        "nan-step": ["keep", "not_a_number"],
        "hole-150s": ["keep", "gap"],
        "hole-90s": ["reclaim", "idle"],
        "idle": ["reclaim", "idle"],
    },
    "expr": {
        "expr-hole-6m": ["keep", "gap"],
        "expr-hole-4m": ["keep", "gap"],
        "expr-stale-3m": ["keep", "stale"],
        "expr-gpu-hole-4m": ["keep", "gap"],
        "expr-hole-90s": ["reclaim", "idle"],
        "expr-idle": ["reclaim", "idle"],
    },
    "join": {
        "expr-join-missing": ["keep", "no_data"],
        "expr-join-held-stale": ["keep", "stale"],
        "expr-join-idle": ["reclaim", "idle"],
    },
}


def fmt(v):
    return "NaN" if math.isnan(v) else repr(v)


def write_openmetrics(out):
    families = {METRIC_RAW: [], METRIC_EXPR: [], METRIC_HELD: []}
    for pod, (rule, series) in SCENARIOS.items():
        for extra, samples in series:
            labels = dict(extra, namespace="judge", pod=pod)
            metric = labels.pop("__name__", METRIC_RAW if rule == "raw" else METRIC_EXPR)
            ls = ",".join('%s="%s"' % (k, labels[k]) for k in sorted(labels))
            families[metric].append((ls, samples))
    # A family's samples together, and each series' samples in time order (OpenMetrics).
    for metric, series in families.items():
        out.write("# TYPE %s gauge\n" % metric)
        for ls, samples in series:
            for off, v in samples:
                if v is not None:
                    out.write("%s{%s} %s %d\n" % (metric, ls, fmt(v), END + off))
    out.write("# TYPE %s gauge\n" % DEVICES)
    for pod in SCENARIOS:
        for off in range(-600, 1, EVERY):
            out.write('%s{namespace="judge",pod="%s",resource="amd.com/gpu"} 1 %d\n'
                      % (DEVICES, pod, END + off))
    out.write("# EOF\n")


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "expect":
        json.dump(EXPECT, sys.stdout, indent=1, sort_keys=True)
        print()
    elif len(sys.argv) == 3 and sys.argv[1] == "openmetrics":
        with open(sys.argv[2], "w") as f:
            write_openmetrics(f)
    else:
        sys.exit("usage: gen_judge.py expect | openmetrics OUT")


if __name__ == "__main__":
    main()
