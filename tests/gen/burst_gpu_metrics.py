#!/usr/bin/env python3
"""Advance one partition's activity accumulators as if it were busy in short bursts.

For tests/e2e/exporter_burst.sh: the partition computes for BURST seconds at the start of every
PERIOD seconds (busy fraction BURST/PERIOD) while every instantaneous busy field of the blob
reads 0, the pattern a 15 s scrape of an instantaneous gauge calls idle. About once a second
this rewrites a copy of an amdgpu gpu_metrics file (v1_8 layout, tests/gen/gpu_metrics_blob.py)
with values computed from the time since start, so they do not drift with the sleep:

    accumulation_counter          base + 1000 ticks/s (about 1 tick/ms, as on MI300X)
    xcp_stats[P].gfx_busy_acc[0]  busy ticks x 100 (percent x ticks)
    gfx_activity_acc              the same divided by the GPU's partitions (whole-GPU mean)
    xcp_stats[P].gfx_busy_inst[0], average_gfx_activity: 0

so Δgfx_busy_acc / Δaccumulation_counter / 100 over any window is the busy fraction of that
window. Each write goes to a temporary name in the same directory and is renamed into place, so
a reader sees the old or the new blob, never half of one.

usage: burst_gpu_metrics.py --file PATH --partition P [--busy-seconds 1] [--period 5]
                            [--interval 1] [--ready FILE]
--ready is created after the first write. Stops on SIGTERM/SIGINT. Standard library only.
"""

import argparse
import os
import signal
import struct
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_metrics_blob  # noqa: E402  (needs the sys.path entry above)

LAYOUT = "v1_8"
NUM_XCP = 8
TICKS_PER_SECOND = 1000
COUNTER_BASE = 54536484  # the accumulation counter of a real idle MI300X capture
ACC_BASE = 1000000


def busy_ticks(ticks, burst, period):
    """Busy ticks in [0, ticks] when each period of `period` ticks starts with `burst` busy
    ones. Integer ticks, so the accumulator never advances more than 100 per counter tick (the
    exporter discards such an interval as impossible)."""
    whole, rest = divmod(ticks, period)
    return whole * burst + min(rest, burst)


def offsets(partition):
    """Byte offsets of the fields this writer changes (v1_8: xcp_stats of 8 equal elements)."""
    off = lambda f: gpu_metrics_blob.field_offset(LAYOUT, f)  # noqa: E731
    start = off("xcp_stats")
    elem = (off("pcie_lc_perf_other_end_recovery") - start) // NUM_XCP
    xcp = start + partition * elem
    return {
        "counter": off("accumulation_counter"),
        "gfx_activity_acc": off("gfx_activity_acc"),
        "average_gfx_activity": off("average_gfx_activity"),
        "busy_inst": xcp,  # gfx_busy_inst[0]: the first member of the element
        "busy_acc": xcp + 120,  # gfx_busy_acc[0] (amdgpu_xcp_metrics_v1_2, checked below)
    }


def write_atomic(path, data):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--file", required=True, help="the gpu_metrics file to rewrite (v1_8)")
    ap.add_argument("--partition", type=int, required=True, help="xcp_stats index (0..7)")
    ap.add_argument("--busy-seconds", type=float, default=1.0)
    ap.add_argument("--period", type=float, default=5.0)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--ready", help="file to create after the first write")
    a = ap.parse_args(argv)
    if not 0 <= a.partition < NUM_XCP or not 0 <= a.busy_seconds <= a.period or a.period <= 0:
        ap.error("need 0 <= partition < 8 and 0 <= busy-seconds <= period")
    path = os.path.realpath(a.file)
    with open(path, "rb") as f:
        blob = bytearray(f.read())
    size, frev, crev = gpu_metrics_blob.header(LAYOUT)
    if struct.unpack_from("<HBB", blob, 0) != (size, frev, crev) or len(blob) != size:
        sys.exit("burst_gpu_metrics: '%s' is not a %s gpu_metrics blob" % (path, LAYOUT))
    o = offsets(a.partition)
    assert o["busy_acc"] - o["busy_inst"] == 120  # gpu_metrics_blob's own layout check agrees

    stop = []
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: stop.append(1))
    burst = round(a.busy_seconds * TICKS_PER_SECOND)
    period = round(a.period * TICKS_PER_SECOND)
    t0 = time.monotonic()
    ready = False
    while not stop:
        ticks = int((time.monotonic() - t0) * TICKS_PER_SECOND)
        counter = COUNTER_BASE + ticks
        acc = ACC_BASE + 100 * busy_ticks(ticks, burst, period)
        struct.pack_into("<I", blob, o["counter"], counter & 0xFFFFFFFF)
        struct.pack_into("<Q", blob, o["busy_acc"], acc)
        struct.pack_into("<I", blob, o["gfx_activity_acc"], (acc // NUM_XCP) & 0xFFFFFFFF)
        struct.pack_into("<I", blob, o["busy_inst"], 0)
        struct.pack_into("<H", blob, o["average_gfx_activity"], 0)
        write_atomic(path, bytes(blob))
        if not ready and a.ready:
            open(a.ready, "w").close()
            ready = True
        # Sleep to the next whole interval since start, so writes stay about 1 s apart.
        n = int((time.monotonic() - t0) / a.interval) + 1
        time.sleep(max(0.0, t0 + n * a.interval - time.monotonic()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
