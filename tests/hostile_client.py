#!/usr/bin/env python3
"""Hostile HTTP clients for tests/e2e/web_hostile.sh (loopback only, bounded, stops itself).

  slow      COUNT connections that each send a request line and then one header line every
            INTERVAL seconds, never finishing the request (slowloris); a connection the
            server closes is opened again 0.2 s later, so the pressure stays constant.
  malformed a few clients that send, in turn, garbage bytes, a 100 KB request line and a
            1 MB header, read whatever answer comes, and start over.

Source addresses are spread over --sources (127.0.0.x: all of 127/8 is loopback on Linux),
so a test can play one hostile host or many. Everything stops after --duration seconds
(at most 120). Prints one summary line: opened, closed_by_server, connect_errors.
"""
import argparse
import os
import selectors
import signal
import socket
import sys
import threading
import time

MAX_COUNT = 1000
MAX_DURATION = 120


def loopback(addr):
    return addr.startswith("127.") or addr == "::1"


def connect(host, port, source):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.setblocking(False)
    try:
        s.connect((host, port))
    except BlockingIOError:
        pass
    return s


def run_slow(args, sources, stats):
    sel = selectors.DefaultSelector()
    end = time.monotonic() + args.duration
    conns = {}  # socket -> [next_send_time, started, lines_sent, index]
    reopen = []  # (time, index): closed connections opened again after a short pause

    def open_one(i):
        try:
            s = connect(args.host, args.port, sources[i % len(sources)])
        except OSError:
            stats["connect_errors"] += 1
            return
        stats["opened"] += 1
        conns[s] = [time.monotonic(), False, 0, i]
        sel.register(s, selectors.EVENT_READ)

    for i in range(args.count):
        open_one(i)
    # Say once when the server has met every one of the connections (it sent its request line,
    # or the server closed it): the test waits for this instead of a fixed time.
    met = set()
    ready = False
    while time.monotonic() < end:
        if not ready and len(met) >= args.count:
            ready = True
            print("ready: %d connections met the server" % len(met), flush=True)
        now = time.monotonic()
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:  # closed by the server (or refused): open another one
                i = conns.pop(s)[3]
                sel.unregister(s)
                s.close()
                stats["closed_by_server"] += 1
                met.add(i)
                reopen.append((now + 0.2, i))
        for t, i in [r for r in reopen if r[0] <= now]:
            reopen.remove((t, i))
            open_one(i)
        for s, st in list(conns.items()):
            if now < st[0]:
                continue
            line = b"GET / HTTP/1.1\r\nHost: x\r\n" if not st[1] else b"X-Slow-%d: a\r\n" % st[2]
            try:
                s.send(line)
                st[1] = True
                st[2] += 1
                met.add(st[3])
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                pass  # the read side sees the close and reopens
            st[0] = now + args.interval
    for s in conns:
        s.close()


def malformed_worker(args, sources, stats, idx, end):
    payloads = [
        b"\x16\x03\x01garbage\x00\xff\r\n\r\n",
        b"GET /" + b"a" * 100 * 1024 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 1024 * 1024 + b"\r\n\r\n",
        b"\r\n\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
    ]
    n = idx
    while time.monotonic() < end:
        p = payloads[n % len(payloads)]
        n += 1
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((sources[idx % len(sources)], 0))
            s.settimeout(5)
            s.connect((args.host, args.port))
            stats["opened"] += 1
            try:
                s.sendall(p)
                while s.recv(65536):
                    pass
            except OSError:
                pass
            stats["closed_by_server"] += 1
            s.close()
        except OSError:
            stats["connect_errors"] += 1
            time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["slow", "malformed"])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--interval", type=float, default=3.0)
    ap.add_argument("--duration", type=float, default=45)
    ap.add_argument("--sources", default="127.0.0.2", help="comma-separated source addresses")
    args = ap.parse_args()
    sources = args.sources.split(",")
    if not loopback(args.host) or not all(loopback(s) for s in sources):
        sys.exit("hostile_client: loopback addresses only")
    args.count = min(args.count, MAX_COUNT)
    args.duration = min(args.duration, MAX_DURATION)
    stats = {"opened": 0, "closed_by_server": 0, "connect_errors": 0}

    def on_term(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        run(args, sources, stats)
    except KeyboardInterrupt:
        pass
    print("%s: opened=%d closed_by_server=%d connect_errors=%d" %
          (args.mode, stats["opened"], stats["closed_by_server"], stats["connect_errors"]),
          flush=True)
    os._exit(0)  # do not wait for malformed-request threads blocked in recv


def run(args, sources, stats):
    if args.mode == "slow":
        run_slow(args, sources, stats)
    else:
        end = time.monotonic() + args.duration
        ts = [threading.Thread(target=malformed_worker, args=(args, sources, stats, i, end),
                               daemon=True)
              for i in range(min(args.count, 8))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()


if __name__ == "__main__":
    main()
