#!/usr/bin/env python3
"""Advance one partition's activity accumulators as if it were busy in short bursts.

For tests/e2e/exporter_burst.sh: the partition computes for BURST seconds at the start of every
PERIOD seconds (busy fraction BURST/PERIOD) while every instantaneous busy field reads 0, the
pattern a 15 s scrape of an instantaneous gauge calls idle. About once a second this rewrites
copies of amdgpu metrics files with values computed from the time since start (so they do not
drift with the sleep), patching only the fields below and keeping every other byte:

    accumulation_counter     base + 1000 ticks/s (about 1 tick/ms, as on MI300X)
    gfx_busy_acc             base + 100 x busy ticks (percent x ticks) for the partition's XCC
    gfx_activity_acc         the same divided by the GPU's 8 partitions (whole-GPU mean)
    firmware_timestamp       counter x 100000 (10 ns units), where the table has it
    gfx_busy_inst, average_gfx_activity: 0

so Δgfx_busy_acc / Δaccumulation_counter / 100 over any window is the busy fraction of that
window. Busy time is counted in whole ticks, so an accumulator never advances more than 100 per
counter tick (the exporter discards such an interval as impossible).

Files (the layout is read from each file's header, tests/gen/gpu_metrics_blob.py):
  --gpu-metrics  the GPU's gpu_metrics: v1_8 (the partition's XCC is xcp_stats[P].*[0]) or a
                 v1_9 attribute table (per-XCC arrays over the device: CPX, XCC P)
  --xcp-metrics  optional, the partition's own xcp_metrics v1_1 attribute table (XCC 0)
Each write goes to a temporary name in the same directory and is renamed into place, so a
reader sees the old or the new file, never half of one.

usage: burst_gpu_metrics.py --gpu-metrics PATH [--xcp-metrics PATH] --partition P
                            [--busy-seconds 1] [--period 5] [--interval 1] [--ready FILE]
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
import gpu_metrics_blob as gmb  # noqa: E402  (needs the sys.path entry above)

NUM_XCP = 8
TICKS_PER_SECOND = 1000
COUNTER_BASE = 54536484  # the accumulation counter of a real idle MI300X capture
ACC_BASE = 1000000  # nonzero: the exporter reads a busy accumulator of 0 as "not filled"
_WIDTH_FMT = {v[1]: v[0] for v in gmb.ATTR_TYPES.values()}  # type code -> struct format


def busy_ticks(ticks, burst, period):
    """Busy ticks in [0, ticks] when each period of `period` ticks starts with `burst`."""
    whole, rest = divmod(ticks, period)
    return whole * burst + min(rest, burst)


class Blob:
    """A metrics file in memory and where its fields are: {name: (struct format, offset, n)}."""

    def __init__(self, path):
        self.path = os.path.realpath(path)
        with open(self.path, "rb") as f:
            self.data = bytearray(f.read())
        self.fields = {}
        size, frev, crev = struct.unpack_from("<HBB", self.data, 0)
        if (size, frev, crev) == gmb.header("v1_8") and len(self.data) == size:
            off = lambda f: gmb.field_offset("v1_8", f)  # noqa: E731
            start = off("xcp_stats")
            elem = (off("pcie_lc_perf_other_end_recovery") - start) // NUM_XCP
            self.xcp = (start, elem)
            for name, fmt in (("accumulation_counter", "I"), ("gfx_activity_acc", "I"),
                              ("average_gfx_activity", "H")):
                self.fields[name] = (fmt, off(name), 1)
        elif frev == 1 and crev in (9, 1):
            self.xcp = None
            self._walk()
        else:
            raise ValueError("'%s': header %d.%d is neither v1_8 nor an attribute table"
                             % (self.path, frev, crev))

    def _walk(self):
        """Entries of an attribute table by id (the exporter's parser rules, simplified)."""
        names = {i: n for n, i in gmb.ATTR_IDS.items()}
        count = struct.unpack_from("<i", self.data, 4)[0]
        off = 8
        for _ in range(count):
            enc = struct.unpack_from("<Q", self.data, off)[0]
            fmt = _WIDTH_FMT[(enc >> 20) & 0xF]
            inst = enc & 0x3FF
            name = names.get((enc >> 10) & 0x3FF)
            if name:
                self.fields[name] = (fmt, off + 8, inst)
            off += 8 + inst * struct.calcsize(fmt)

    def set(self, name, value, index=0):
        """Set element `index` of a field (modulo its width); absent fields are skipped."""
        if name not in self.fields:
            return
        fmt, off, n = self.fields[name]
        if index >= n:
            raise ValueError("'%s': %s has %d elements" % (self.path, name, n))
        width = struct.calcsize(fmt)
        struct.pack_into("<" + fmt, self.data, off + index * width, value % (1 << (8 * width)))

    def set_xcp(self, partition, inst, acc):
        """v1_8: xcp_stats[partition].gfx_busy_inst[0] and .gfx_busy_acc[0]."""
        start, elem = self.xcp
        base = start + partition * elem
        struct.pack_into("<I", self.data, base, inst)  # gfx_busy_inst: the first member
        struct.pack_into("<Q", self.data, base + 120, acc)  # gfx_busy_acc (xcp v1_2)

    def write(self):
        tmp = "%s.tmp.%d" % (self.path, os.getpid())
        with open(tmp, "wb") as f:
            f.write(self.data)
        os.replace(tmp, self.path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu-metrics", required=True)
    ap.add_argument("--xcp-metrics")
    ap.add_argument("--partition", type=int, required=True, help="0..7")
    ap.add_argument("--busy-seconds", type=float, default=1.0)
    ap.add_argument("--period", type=float, default=5.0)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--ready", help="file to create after the first write")
    a = ap.parse_args(argv)
    if not 0 <= a.partition < NUM_XCP or not 0 <= a.busy_seconds <= a.period or a.period <= 0:
        ap.error("need 0 <= partition < 8 and 0 <= busy-seconds <= period")
    try:
        gpu = Blob(a.gpu_metrics)
        xcp = Blob(a.xcp_metrics) if a.xcp_metrics else None
    except (OSError, ValueError, KeyError, struct.error) as e:
        sys.exit("burst_gpu_metrics: %s" % e)

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
        gpu.set("accumulation_counter", counter)
        gpu.set("gfx_activity_acc", acc // NUM_XCP)
        gpu.set("average_gfx_activity", 0)
        if gpu.xcp:
            gpu.set_xcp(a.partition, 0, acc)
        else:
            gpu.set("gfx_busy_inst", 0, a.partition)
            gpu.set("gfx_busy_acc", acc, a.partition)
        if xcp:
            xcp.set("accumulation_counter", counter)
            xcp.set("firmware_timestamp", counter * 100000)
            xcp.set("gfx_busy_inst", 0)
            xcp.set("gfx_busy_acc", acc)
            xcp.write()
        gpu.write()
        if not ready and a.ready:
            open(a.ready, "w").close()
            ready = True
        # Sleep to the next whole interval since start, so writes stay about 1 s apart.
        n = int((time.monotonic() - t0) / a.interval) + 1
        time.sleep(max(0.0, t0 + n * a.interval - time.monotonic()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
