#!/usr/bin/env python3
"""Capture real remote-read answers (STREAMED_XOR_CHUNKS) from a real Prometheus.

    python3 tests/gen/remoteread_capture.py --out tests/fixtures/remoteread
    python3 tests/gen/remoteread_capture.py --large 20000 --out build/remoteread-large

Starts the Debian `prometheus` (2.42) on 127.0.0.1 with a temporary TSDB holding
  * backfilled blocks (promtool tsdb create-blocks-from openmetrics): irregular timestamps
    covering every delta-of-delta bucket, NaN, +Inf, -Inf, -0, repeats, counters;
  * a few seconds of scrapes of a tiny exporter run here, whose series `rr_scrape_flap`
    vanishes twice (Prometheus then writes the staleness marker 0x7ff0000000000002) and whose
    `rr_scrape_explicit` carries explicit, irregular timestamps,
then POSTs ReadRequests accepting only STREAMED_XOR_CHUNKS (encoded here by hand and
compressed through libsnappy with ctypes: independent of enforcer/remoteread.c) and saves
every answer byte for byte (<name>.bin) with what Prometheus's own PromQL API says the raw
samples are (<name>.expected: range selectors, which leave out staleness markers). With
--large N only one big answer of N series is written (for the decode throughput figure).
The frame cap is 1024 bytes (--storage.remote.read-max-bytes-in-frame) so that long series
are split across frames, as they are at the default 1 MiB with more data.
"""
import argparse
import ctypes
import http.server
import json
import math
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

FRAME_BYTES = 1024


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


# ---- protobuf, by hand (prompb/remote.proto, types.proto) ----

def uvarint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field_varint(num, v):
    return uvarint(num << 3) + uvarint(v)


def field_bytes(num, b):
    return uvarint(num << 3 | 2) + uvarint(len(b)) + b


def matcher(typ, name, value):
    return field_varint(1, typ) + field_bytes(2, name.encode()) + field_bytes(3, value.encode())


def query(start_ms, end_ms, matchers):
    b = field_varint(1, start_ms) + field_varint(2, end_ms)
    for m in matchers:
        b += field_bytes(3, matcher(*m))
    return b


def read_request(queries):
    b = b"".join(field_bytes(1, q) for q in queries)
    return b + field_bytes(2, b"\x01")  # accepted_response_types: [STREAMED_XOR_CHUNKS], packed


_snappy = ctypes.CDLL("libsnappy.so.1")


def snappy(data):
    n = ctypes.c_size_t(_snappy.snappy_max_compressed_length(ctypes.c_size_t(len(data))))
    out = ctypes.create_string_buffer(n.value)
    if _snappy.snappy_compress(data, ctypes.c_size_t(len(data)), out, ctypes.byref(n)) != 0:
        raise RuntimeError("snappy_compress failed")
    return out.raw[: n.value]


# ---- data ----

def fmt_value(v):
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(v)


def backfill_text(base_ms, rng):
    """OpenMetrics for promtool. Timestamps are whole milliseconds written in seconds."""
    lines = ["# TYPE rr_backfill_gauge gauge"]
    # pod="irregular": every delta-of-delta bucket (0, 14, 17, 20 and 64 bits, both signs),
    # special values, repeats and values needing a new XOR window.
    t = base_ms
    delta = 15000
    specials = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 5e-324, 1.7976931348623157e308]
    v = 0.5
    for i in range(900):
        r = rng.random()
        if r < 0.4:
            pass  # dod 0
        elif r < 0.7:
            delta += rng.randint(-5000, 5000)  # 14 bits
        elif r < 0.8:
            delta += rng.choice([-1, 1]) * rng.randint(9000, 60000)  # 17 bits
        elif r < 0.9:
            delta += rng.randint(70000, 500000)  # 20 bits
        else:
            delta += rng.randint(600000, 3000000)  # 64 bits
        delta = max(1, min(delta, 3600000))
        if delta > 1000000:
            delta = rng.randint(1, 30000)  # and back down: large negative dods
        t += delta
        r = rng.random()
        if r < 0.05:
            v = rng.choice(specials)
        elif r < 0.35:
            pass  # repeat
        elif r < 0.7:
            v = round(rng.random(), 2)
        else:
            v = rng.uniform(-1e6, 1e6)
        lines.append('rr_backfill_gauge{pod="irregular"} %s %d.%03d' % (fmt_value(v), t // 1000, t % 1000))
    end_ms = t
    for i in range(300):
        tt = base_ms + 15000 * i
        lines.append('rr_backfill_gauge{pod="steady"} 0 %d.%03d' % (tt // 1000, tt % 1000))
    lines.append("# TYPE rr_backfill_total counter")
    c = 0
    for i in range(250):
        tt = base_ms + 15000 * i + rng.randint(-200, 200)
        c += rng.randint(0, 100000)
        lines.append('rr_backfill_total{pod="c",zone="z"} %d %d.%03d' % (c, tt // 1000, tt % 1000))
    lines.append("# EOF")
    return "\n".join(lines) + "\n", end_ms


def large_text(base_ms, nseries, nsamples, rng):
    lines = ["# TYPE rr_large gauge"]
    for s in range(nseries):
        busy = rng.random() < 0.5
        for i in range(nsamples):
            t = base_ms + 15000 * i + rng.randint(0, 40)  # scrape jitter
            v = round(rng.random(), 4) if busy else 0
            lines.append('rr_large{namespace="ns%d",pod="pod-%06d",gpu="%d"} %s %d.%03d'
                         % (s % 50, s, s % 8, v, t // 1000, t % 1000))
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


class Exporter(http.server.BaseHTTPRequestHandler):
    scrapes = 0
    explicit_ms = 0
    rng = random.Random(7)

    def do_GET(self):
        cls = Exporter
        cls.scrapes += 1
        n = cls.scrapes
        out = ["# TYPE rr_scrape_gauge gauge"]
        v = cls.rng.choice(["0", "0.25", "1", "NaN", "+Inf", "0.125"])
        out.append('rr_scrape_gauge{pod="p0"} %s' % v)
        # Present in scrapes 1-4 and 8-10, absent otherwise: two staleness markers.
        if n <= 4 or 8 <= n <= 10:
            out.append("# TYPE rr_scrape_flap gauge")
            out.append('rr_scrape_flap{pod="p1"} %d' % n)
        now = int(time.time() * 1000)
        cls.explicit_ms = max(cls.explicit_ms + 1, now - cls.rng.randint(0, 700))
        out.append("# TYPE rr_scrape_explicit gauge")
        out.append('rr_scrape_explicit{pod="p2"} %d %d' % (n, cls.explicit_ms))
        body = ("\n".join(out) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def labels_key(metric):
    return "{" + ",".join('%s="%s"' % (k, metric[k]) for k in sorted(metric)) + "}"


def expected_from_promql(base, queries):
    """What PromQL says the raw samples are: one range-selector query per remote-read query."""
    out = []
    for qi, (promql, at_s, rng_s) in enumerate(queries):
        out.append("query %d" % qi)
        if promql is None:
            continue
        url = base + "/api/v1/query?" + urllib.parse.urlencode(
            {"query": "%s[%ds]" % (promql, rng_s), "time": "%.3f" % at_s})
        res = json.load(urllib.request.urlopen(url))
        assert res["status"] == "success", res
        for s in sorted(res["data"]["result"], key=lambda s: labels_key(s["metric"])):
            out.append("series " + labels_key(s["metric"]))
            for ts, val in s["values"]:
                ms = round(float(ts) * 1000)
                f = float(val)
                bits = "NaN" if math.isnan(f) else "%016x" % struct.unpack("<Q", struct.pack("<d", f))[0]
                out.append("%d %s" % (ms, bits))
    return "\n".join(out) + "\n"


def post_read(base, queries):
    body = snappy(read_request(queries))
    req = urllib.request.Request(base + "/api/v1/read", data=body, method="POST", headers={
        "Content-Type": "application/x-protobuf",
        "Content-Encoding": "snappy",
        "X-Prometheus-Remote-Read-Version": "0.1.0",
    })
    with urllib.request.urlopen(req) as r:
        ct = r.headers.get("Content-Type")
        assert ct.startswith("application/x-streamed-protobuf"), ct
        return r.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--large", type=int, default=0, help="series in one big answer instead")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(19)
    tmp = tempfile.mkdtemp(prefix="rr-capture-")
    prom = None
    server = None
    try:
        now_ms = int(time.time() * 1000)
        # The backfill must end hours before now: the head refuses samples older than the
        # newest block (it would drop the scrapes).
        base_ms = (now_ms - 48 * 3600 * 1000) // 1000 * 1000
        data = os.path.join(tmp, "data")
        om = os.path.join(tmp, "backfill.om")
        if args.large:
            with open(om, "w") as f:
                f.write(large_text(base_ms, args.large, 120, rng))
            end_ms = base_ms + 15000 * 120
        else:
            text, end_ms = backfill_text(0, random.Random(19))
            base_ms = (now_ms - 3 * 3600 * 1000 - end_ms) // 1000 * 1000
            text, end_ms = backfill_text(base_ms, rng)
            with open(om, "w") as f:
                f.write(text)
        subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", "-q", om, data],
                       check=True)

        eport = free_port()
        server = http.server.ThreadingHTTPServer(("127.0.0.1", eport), Exporter)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n"
                    "scrape_configs:\n  - job_name: rr\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % eport)
        pport = free_port()
        base = "http://127.0.0.1:%d" % pport
        log = open(os.path.join(tmp, "prometheus.log"), "w")
        prom = subprocess.Popen(
            ["prometheus", "--config.file=" + cfg, "--storage.tsdb.path=" + data,
             "--web.listen-address=127.0.0.1:%d" % pport, "--storage.tsdb.retention.time=10y",
             "--storage.remote.read-max-bytes-in-frame=%d" % FRAME_BYTES],
            stdout=log, stderr=subprocess.STDOUT)
        for _ in range(300):
            try:
                urllib.request.urlopen(base + "/-/ready")
                break
            except Exception:
                time.sleep(0.1)
        else:
            sys.exit("prometheus did not become ready; log in " + log.name)

        far_past = base_ms - 3600 * 1000
        if args.large:
            q = [query(far_past, end_ms + 3600 * 1000, [(0, "__name__", "rr_large")])]
            blob = post_read(base, q)
            with open(os.path.join(args.out, "large.bin"), "wb") as f:
                f.write(blob)
            print("large.bin: %d bytes, %d series x 120 samples" % (len(blob), args.large))
            return

        while Exporter.scrapes < 14:
            time.sleep(0.2)
        time.sleep(1.5)  # the last scrape's samples are committed
        t_end = int(time.time() * 1000)
        at_s = t_end / 1000.0
        span_s = (t_end - far_past) // 1000 + 1

        captures = {
            # One query: the backfilled blocks, long series split across frames.
            "backfill": [('{__name__=~"rr_backfill_.*"}', [(2, "__name__", "rr_backfill_.*")])],
            # The head block: scraped series with staleness markers and explicit timestamps.
            "scrape": [('{__name__=~"rr_scrape_.*"}', [(2, "__name__", "rr_scrape_.*")])],
            # Several queries in one request, one of them matching nothing, other matcher types.
            "multi": [
                ('{__name__="rr_scrape_flap"}', [(0, "__name__", "rr_scrape_flap")]),
                ('{__name__="rr_nothing"}', [(0, "__name__", "rr_nothing")]),
                ('{__name__=~"rr_backfill_.*",pod!="steady",zone!~"x.*"}',
                 [(2, "__name__", "rr_backfill_.*"), (1, "pod", "steady"), (3, "zone", "x.*")]),
                ('{__name__="rr_scrape_gauge"}', [(0, "__name__", "rr_scrape_gauge")]),
            ],
        }
        for name, qs in captures.items():
            blob = post_read(base, [query(far_past, t_end, m) for _, m in qs])
            with open(os.path.join(args.out, name + ".bin"), "wb") as f:
                f.write(blob)
            exp = expected_from_promql(base, [(p, at_s, span_s) for p, _ in qs])
            with open(os.path.join(args.out, name + ".expected"), "w") as f:
                f.write("# remote read [%d, %d] ms; PromQL range selectors at %.3f over %ds\n"
                        % (far_past, t_end, at_s, span_s) + exp)
            print("%s.bin: %d bytes" % (name, len(blob)))
        # A narrower window (the backfill's second half): chunks still carry samples outside.
        mid = (base_ms + end_ms) // 2
        blob = post_read(base, [query(mid, end_ms, [(0, "__name__", "rr_backfill_gauge"),
                                                    (0, "pod", "irregular")])])
        with open(os.path.join(args.out, "window.bin"), "wb") as f:
            f.write(blob)
        with open(os.path.join(args.out, "window.range"), "w") as f:
            f.write("%d %d\n" % (mid, end_ms))
        print("window.bin: %d bytes, range [%d, %d]" % (len(blob), mid, end_ms))
    finally:
        if prom:
            prom.terminate()
            prom.wait()
        if server:
            server.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
