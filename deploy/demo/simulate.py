#!/usr/bin/env python3
"""Simulated GPU activity for the demo: a live copy of the 8 x MI300X CPX fixture tree.

The exporter reads sysfs from --path.sysfs, so a GPU node can be faked by a directory whose
files change over time. This program copies tests/fixtures/mi300x-cpx to --root and then, every
--interval seconds, rewrites each GPU's binary `gpu_metrics` (v1_8: per-partition busy in
xcp_stats[p].gfx_busy_inst[0], plus average_gfx_activity and the XCC clocks) and its
`gpu_busy_percent` (the mean of its 8 partitions). Each file is written under a temporary
name and renamed into place, so a scrape reads either the old or the new file, never half.

Who uses which partition comes from the container runtime, as it would on a real node: every
container labelled `gpureclaim.io/devices=<id>[,<id>...]` owns those partitions and its
`gpureclaim.io/profile` label picks the activity schedule. Device ids are the exporter's:
`0000:BB:00.0` for partition 0 of a GPU and `amdgpu_xcp_<N>` for the others. A container that
is not running has released its partitions, which drop to 0 %. Without a runtime, --workload
NAME=PROFILE:ID[,ID...] declares the same statically (for trying the simulator alone), and
--workloads-file names a JSON list of {"name", "profile", "devices", "running"} read again at
every sample: `make demo-kube` (kube_node.py) writes it from the pods the cluster runs and the
devices it gave them, as a kubelet's device manager would.

Profiles (busy percent per sample; t = seconds since the simulator started):
    busy        70-95
    idle        0-3
    bursty      0-3, with a 60 % burst every 60 s starting at t = 30 s; the burst lasts two
                samples so that a scrape every `interval` cannot fall between them
    goes-idle   70-95 for t < 60 s (--goes-idle-after), then 0-3
    exempt      0-3 (the container's exempt label, not its activity, protects it)
Partitions nobody owns stay at 0 %.

Python 3 standard library only; tests/gen/gpu_metrics_blob.py supplies the blob layout.
"""

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import socket
import struct
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests", "gen"))
import gpu_metrics_blob  # noqa: E402  (needs the sys.path entry above)

LAYOUT = "v1_8"
NUM_PARTITIONS = 8
GFXCLK_BUSY = 2100
GFXCLK_IDLE = 500
BURST_PERIOD = 60.0
BURST_FIRST = 30.0
BURST_PERCENT = 60
GOES_IDLE_AFTER = 60.0
PROFILES = ("busy", "idle", "bursty", "goes-idle", "exempt")
LABEL_DEVICES = "gpureclaim.io/devices"
LABEL_PROFILE = "gpureclaim.io/profile"

# ---- the fixture tree ---------------------------------------------------------------------------


class Gpu:
    """One PCI GPU of the tree: its device directory and the busy value of each partition."""

    def __init__(self, bdf, devdir, base_card):
        self.bdf = bdf
        self.devdir = devdir
        self.base_card = base_card
        self.busy = [0] * NUM_PARTITIONS
        with open(os.path.join(devdir, "gpu_metrics"), "rb") as f:
            self.blob = bytearray(f.read())
        size, frev, crev = gpu_metrics_blob.header(LAYOUT)
        got = struct.unpack_from("<HBB", self.blob, 0)
        if got != (size, frev, crev):
            raise ValueError("'%s': gpu_metrics header %s is not %s" % (devdir, got, LAYOUT))


def card_numbers(drmdir):
    try:
        names = os.listdir(drmdir)
    except FileNotFoundError:
        return []
    return sorted(int(n[4:]) for n in names if n.startswith("card") and n[4:].isdigit())


def discover(sysfs):
    """Map device ids to (Gpu, partition) from the tree, using card(8g+p) (GENERATED.md)."""
    gpus = []
    pci = os.path.join(sysfs, "bus", "pci", "devices")
    for bdf in sorted(os.listdir(pci)):
        devdir = os.path.realpath(os.path.join(pci, bdf))
        cards = card_numbers(os.path.join(devdir, "drm"))
        if cards and os.path.exists(os.path.join(devdir, "gpu_metrics")):
            gpus.append(Gpu(bdf, devdir, cards[0]))
    devices = {g.bdf: (g, 0) for g in gpus}
    platform = os.path.join(sysfs, "devices", "platform")
    for name in sorted(os.listdir(platform)) if os.path.isdir(platform) else []:
        if not name.startswith("amdgpu_xcp_"):
            continue
        for card in card_numbers(os.path.join(platform, name, "drm")):
            for g in gpus:
                if 0 < card - g.base_card < NUM_PARTITIONS:
                    devices[name] = (g, card - g.base_card)
    return gpus, devices


def write_atomic(path, data):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def xcp_busy_offset(p):
    """Offset of xcp_stats[p].gfx_busy_inst[0]: the array's first member, 8 equal elements."""
    start = gpu_metrics_blob.field_offset(LAYOUT, "xcp_stats")
    end = gpu_metrics_blob.field_offset(LAYOUT, "pcie_lc_perf_other_end_recovery")
    return start + p * ((end - start) // NUM_PARTITIONS)


def write_gpu(g):
    mean = (sum(g.busy) * 2 + NUM_PARTITIONS) // (2 * NUM_PARTITIONS)  # rounded half up
    struct.pack_into("<H", g.blob, gpu_metrics_blob.field_offset(LAYOUT, "average_gfx_activity"),
                     mean)
    clk = gpu_metrics_blob.field_offset(LAYOUT, "current_gfxclk")
    for p, b in enumerate(g.busy):
        struct.pack_into("<I", g.blob, xcp_busy_offset(p), b)
        struct.pack_into("<H", g.blob, clk + 2 * p, GFXCLK_BUSY if b > 0 else GFXCLK_IDLE)
    write_atomic(os.path.join(g.devdir, "gpu_metrics"), bytes(g.blob))
    write_atomic(os.path.join(g.devdir, "gpu_busy_percent"), b"%d\n" % mean)


# ---- workloads ----------------------------------------------------------------------------------


class Workload:
    def __init__(self, name, profile, devices, running=True):
        self.name = name
        self.profile = profile
        self.devices = devices
        self.running = running


def parse_workload(spec):
    try:
        name, rest = spec.split("=", 1)
        profile, devs = rest.split(":", 1)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not NAME=PROFILE:ID[,ID...]" % spec)
    if profile not in PROFILES:
        raise argparse.ArgumentTypeError("unknown profile '%s' (known: %s)"
                                         % (profile, ", ".join(PROFILES)))
    return Workload(name, profile, [d for d in devs.split(",") if d])


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=5):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.path)
        self.sock = s


def runtime_workloads(sock):
    """Every container with a devices label, running or not; None when the API fails."""
    filters = json.dumps({"label": [LABEL_DEVICES]})
    url = "/v1.41/containers/json?all=true&filters=" + urllib.parse.quote(filters)
    try:
        conn = UnixHTTPConnection(sock)
        conn.request("GET", url)
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        if resp.status != 200:
            return None
        items = json.loads(body)
    except (OSError, http.client.HTTPException, ValueError):
        return None
    out = []
    for c in items:
        labels = c.get("Labels") or {}
        names = c.get("Names") or ["?"]
        profile = labels.get(LABEL_PROFILE, "idle")
        devs = [d.strip() for d in labels.get(LABEL_DEVICES, "").split(",") if d.strip()]
        out.append(Workload(names[0].lstrip("/"), profile, devs, c.get("State") == "running"))
    return out


def file_workloads(path):
    """The workloads of --workloads-file; None when it cannot be read or parsed."""
    try:
        with open(path) as f:
            items = json.load(f)
        return [Workload(str(w["name"]), w["profile"] if w.get("profile") in PROFILES else "idle",
                         [str(d) for d in w.get("devices", [])], bool(w.get("running", True)))
                for w in items]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def busy_percent(rng, profile, t, tick, goes_idle_after=GOES_IDLE_AFTER):
    busy = rng.randint(70, 95)
    idle = rng.randint(0, 3)
    if profile == "busy":
        return busy
    if profile == "goes-idle":
        return busy if t < goes_idle_after else idle
    if profile == "bursty" and t >= BURST_FIRST:
        # Two samples from the first tick at or after each burst start.
        since = (t - BURST_FIRST) % BURST_PERIOD
        if since < 2 * tick:
            return BURST_PERCENT
    return idle


# ---- main loop ----------------------------------------------------------------------------------


def copy_tree(fixture, root):
    if os.path.exists(root) and os.listdir(root):
        raise SystemExit("simulate: '%s' exists and is not empty" % root)
    os.makedirs(root, exist_ok=True)
    for top in os.listdir(fixture):
        src = os.path.join(fixture, top)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(root, top), symlinks=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixture", default=os.path.join(TOP, "tests", "fixtures", "mi300x-cpx"),
                    help="fixture tree to copy (default: tests/fixtures/mi300x-cpx)")
    ap.add_argument("--root", required=True,
                    help="where to put the live copy (must not exist or be empty); the "
                         "exporter's --path.sysfs is ROOT/sys")
    ap.add_argument("--interval", type=float, default=2.0, help="seconds between samples")
    ap.add_argument("--runtime-socket", help="Docker/Podman API socket to read workloads from")
    ap.add_argument("--workload", type=parse_workload, action="append", default=[],
                    help="NAME=PROFILE:ID[,ID...], a static workload (repeatable)")
    ap.add_argument("--workloads-file",
                    help="JSON list of workloads, read again at every sample")
    ap.add_argument("--goes-idle-after", type=float, default=GOES_IDLE_AFTER,
                    help="seconds a goes-idle workload is busy (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="random seed of the busy values")
    ap.add_argument("--samples", type=int, default=0, help="stop after N samples (0: never)")
    ap.add_argument("--ready-file", help="created once the tree exists and has its first sample")
    ap.add_argument("--status-file", help="JSON written every sample: workload -> busy percent")
    args = ap.parse_args(argv)

    copy_tree(args.fixture, args.root)
    gpus, devices = discover(os.path.join(args.root, "sys"))
    if not gpus:
        raise SystemExit("simulate: no GPU with gpu_metrics in '%s'" % args.fixture)
    for w in args.workload:
        for d in w.devices:
            if d not in devices:
                raise SystemExit("simulate: workload '%s': unknown device '%s'" % (w.name, d))

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
    rngs = {}
    warned = set()
    workloads = list(args.workload)
    t0 = time.monotonic()
    n = 0
    while not stopping:
        t = time.monotonic() - t0
        if args.runtime_socket:
            got = runtime_workloads(args.runtime_socket)
            if got is not None:
                workloads = got
            # A failed request keeps the last known owners: an API hiccup must not make every
            # workload look idle for a sample.
        elif args.workloads_file:
            got = file_workloads(args.workloads_file)
            if got is not None:
                workloads = got
        for g in gpus:
            g.busy = [0] * NUM_PARTITIONS
        status = {}
        for w in workloads:
            rng = rngs.setdefault(w.name, random.Random("%d/%s" % (args.seed, w.name)))
            values = []
            for d in w.devices:
                if d not in devices:
                    if (w.name, d) not in warned:
                        warned.add((w.name, d))
                        print("simulate: workload '%s': unknown device '%s'" % (w.name, d),
                              file=sys.stderr)
                    continue
                g, p = devices[d]
                v = (busy_percent(rng, w.profile, t, args.interval, args.goes_idle_after)
                     if w.running else 0)
                g.busy[p] = max(g.busy[p], v)
                values.append(v)
            status[w.name] = {"profile": w.profile, "running": w.running, "busy": values}
        for g in gpus:
            write_gpu(g)
        if args.status_file:
            write_atomic(args.status_file, json.dumps({"t": round(t, 1), "workloads": status},
                                                      sort_keys=True).encode() + b"\n")
        n += 1
        if n == 1 and args.ready_file:
            write_atomic(args.ready_file, b"ready\n")
        if args.samples and n >= args.samples:
            break
        # Sleep to the next multiple of the interval so samples do not drift.
        next_t = t0 + n * args.interval
        while not stopping and time.monotonic() < next_t:
            time.sleep(min(0.2, max(0.0, next_t - time.monotonic())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
