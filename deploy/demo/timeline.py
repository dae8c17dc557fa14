#!/usr/bin/env python3
"""The demo's narrator: a readable timeline of what happens to each workload, then a summary.

demo.sh starts the processes; this program only watches them, from three sources:

* Prometheus: the recording rule gpureclaim:container_busy:ratio, read as every sample since
  the last poll (a range selector), so a short burst is never missed between two polls. It
  tells when a workload first drops below the threshold and when it becomes active again;
* the enforcer's audit file (JSON lines): notices, actions (stops) and spared workloads, with
  the rule and the reason;
* the Docker/Podman API: container state changes (running -> exited) and exit codes.

Times are printed as mm:ss since --t0 (the start of the demo). On SIGINT/SIGTERM or after
--duration it prints the summary (workload, profile, expected and actual outcome) and exits
0; the summary is also written as JSON to --summary-file for tests.
"""

import argparse
import datetime
import heapq
import http.client
import json
import os
import signal
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

LABEL_DEVICES = "gpureclaim.io/devices"
LABEL_PROFILE = "gpureclaim.io/profile"
LABEL_EXEMPT = "gpureclaim.io/exempt"
RECORD = "gpureclaim:container_busy:ratio"
# What the demo is built to show: the profiles that must be reclaimed and those that must not.
EXPECT_STOPPED = {"idle", "goes-idle"}
# busybox `sleep` as PID 1 has no SIGTERM handler, so a stop ends with the runtime's SIGKILL.
EXIT_CODES = {137: ": SIGKILL after the stop timeout", 143: ": SIGTERM"}


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=5):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.path)
        self.sock = s


def list_containers(sock):
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
        return json.loads(body)
    except (OSError, http.client.HTTPException, ValueError):
        return None


def inspect_exit_code(sock, name):
    try:
        conn = UnixHTTPConnection(sock)
        conn.request("GET", "/v1.41/containers/%s/json" % urllib.parse.quote(name))
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        if resp.status != 200:
            return None
        return json.loads(body).get("State", {}).get("ExitCode")
    except (OSError, http.client.HTTPException, ValueError):
        return None


def prom_range_samples(url, expr):
    """{container_name: [(t, value), ...]} of an instant query on a range selector."""
    q = urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen("%s/api/v1/query?%s" % (url, q), timeout=5) as r:
            d = json.load(r)
    except (OSError, ValueError, urllib.error.URLError):
        return None
    out = {}
    for s in d.get("data", {}).get("result", []):
        name = s.get("metric", {}).get("container_name", "")
        if not name:
            continue
        pts = out.setdefault(name, [])
        for t, v in s.get("values", []):
            try:
                pts.append((float(t), float(v)))
            except ValueError:
                continue
    return out


def fmt_dur(seconds):
    seconds = int(round(seconds))
    if seconds % 60 == 0 and seconds >= 60:
        return "%dm" % (seconds // 60)
    if seconds >= 60:
        return "%dm%02ds" % (seconds // 60, seconds % 60)
    return "%ds" % seconds


def audit_name(ev):
    """The container name of an audit event (its identity labels)."""
    wl = ev.get("workload")
    if isinstance(wl, dict):
        return wl.get("container_name") or ",".join("%s=%s" % kv for kv in sorted(wl.items()))
    return "?"


def audit_time(value, fallback):
    """Unix seconds of an RFC 3339 time such as "2026-11-21T08:40:49Z"."""
    if not isinstance(value, str):
        return fallback
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return fallback


class Workload:
    def __init__(self, name, profile, devices, exempt):
        self.name = name
        self.profile = profile
        self.devices = devices
        self.exempt = exempt
        self.state = None
        self.below_since = None  # epoch of the first sample of the current run below threshold
        self.last_t = 0.0        # newest Prometheus sample handled
        self.seen = False
        self.bursts = 0
        self.notices = 0
        self.spared = []
        self.stopped_at = None   # when the runtime first showed it not running
        self.decided_at = None   # the enforcer's cycle that stopped it
        self.stopped_by = None
        self.exit_code = None


class Timeline:
    def __init__(self, args):
        self.a = args
        self.t0 = args.t0
        self.w = {}
        self.audit_pos = 0
        self.audit_buf = b""
        self.first_data = False
        self.width = 16
        self.pending = []
        self.seq = 0

    def stamp(self, t):
        r = max(0, int(t - self.t0))
        return "%02d:%02d" % (r // 60, r % 60)

    def say(self, t, name, text):
        self.seq += 1
        heapq.heappush(self.pending, (t, self.seq, "[%s] %-*s %s" % (self.stamp(t), self.width,
                                                                      name, text)))

    def flush(self, upto):
        """Print the lines stamped up to `upto`, in time order.

        The sources report late by different amounts: the enforcer writes a cycle's audit
        lines, stamped with the cycle's start, only after its API calls (a stop waits for
        the container to exit), and Prometheus samples arrive a scrape later. Holding each
        line for --delay seconds lets the timeline read in order."""
        while self.pending and self.pending[0][0] <= upto:
            print(heapq.heappop(self.pending)[2], flush=True)

    def get(self, name):
        if name not in self.w:
            self.w[name] = Workload(name, "?", [], False)
        return self.w[name]

    # -- container runtime ----------------------------------------------------------------

    def poll_runtime(self, now):
        items = list_containers(self.a.runtime_socket) if self.a.runtime_socket else None
        if items is None:
            return
        for c in items:
            name = (c.get("Names") or ["?"])[0].lstrip("/")
            labels = c.get("Labels") or {}
            w = self.w.get(name)
            if w is None:
                w = self.w[name] = Workload(
                    name, labels.get(LABEL_PROFILE, "?"),
                    [d for d in labels.get(LABEL_DEVICES, "").split(",") if d],
                    labels.get(LABEL_EXEMPT) == "true")
                self.width = max(self.width, len(name))
            state = c.get("State", "?")
            # Transitional states (stopping, ...) are not worth a line of their own.
            if state != w.state and state in ("running", "exited", "paused", "dead"):
                if w.state is not None:
                    text = "container %s" % state
                    if state == "exited":
                        w.exit_code = inspect_exit_code(self.a.runtime_socket, name)
                        if w.exit_code is not None:
                            text += " (exit code %s%s)" % (w.exit_code, EXIT_CODES.get(
                                w.exit_code, ""))
                    self.say(now, name, text)
                    if state != "running" and w.stopped_at is None:
                        w.stopped_at = now
                w.state = state

    # -- Prometheus -------------------------------------------------------------------------

    def poll_prometheus(self, now):
        got = prom_range_samples(self.a.prometheus_url, "%s[30s]" % RECORD)
        if got is None:
            return
        thr = self.a.threshold
        for name, pts in sorted(got.items()):
            w = self.get(name)
            for t, v in sorted(pts):
                if t <= w.last_t:
                    continue
                w.last_t = t
                if not self.first_data:
                    self.first_data = True
                    self.seq += 1
                    heapq.heappush(self.pending, (t, self.seq, "[%s] Prometheus has the first "
                                                  "activity samples (recording rule %s)"
                                                  % (self.stamp(t), RECORD)))
                first = not w.seen
                w.seen = True
                if v < thr:
                    if w.below_since is None:
                        w.below_since = t
                        self.say(t, name, "%s %.0f%%, below %g%%: idle timer starts"
                                 % ("first sample" if first else "activity", v * 100,
                                    thr * 100))
                elif first:
                    self.say(t, name, "first sample %.0f%%: active" % (v * 100))
                elif w.below_since is not None:
                    w.bursts += 1
                    self.say(t, name, "active again (%.0f%%) after %s below %g%%: idle timer "
                             "restarts" % (v * 100, fmt_dur(t - w.below_since), thr * 100))
                    w.below_since = None

    # -- audit file -------------------------------------------------------------------------

    def poll_audit(self, now):
        path = self.a.audit_file
        if not path:
            return
        try:
            with open(path, "rb") as f:
                f.seek(self.audit_pos)
                data = f.read()
        except FileNotFoundError:
            return
        self.audit_pos += len(data)
        self.audit_buf += data
        *lines, self.audit_buf = self.audit_buf.split(b"\n")
        for line in lines:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if isinstance(ev, dict):
                self.audit_event(ev, now)

    def audit_event(self, ev, now):
        """One line of the enforcer's audit file (enforcer/audit.h)."""
        kind = ev.get("event", "?")
        name = audit_name(ev)
        w = self.get(name)
        t = audit_time(ev.get("time"), now)
        rule = ev.get("rule", "?")
        result = ev.get("result") or ""
        message = ev.get("message") or ""
        win = ev.get("window") or {}
        stats = ""
        if isinstance(win.get("max"), (int, float)) and isinstance(win.get("mean"), (int, float)):
            stats = "; max %.0f%%, mean %.1f%%" % (win["max"] * 100, win["mean"] * 100)
        since = "idle since %s " % self.stamp(w.below_since) if w.below_since else "idle "
        if kind == "action":
            act = ev.get("action") or "?"
            done = {"stop": "STOPPED", "delete": "DELETED", "evict": "EVICTED",
                    "suspend": "SUSPENDED", "scaleToZero": "SCALED TO ZERO"}.get(act, act.upper())
            if result in ("ok", "gone"):
                if w.stopped_by is None:
                    w.stopped_by = rule
                    w.decided_at = t
                self.say(t, name, "%s(below %g%% for %s%s)  -> %s by rule %s" % (
                    since, self.a.threshold * 100, fmt_dur(self.a.idle_timer), stats, done, rule))
            else:
                self.say(t, name, "%s FAILED by rule %s: %s %s" % (act, rule, result, message))
        elif kind == "notice":
            act_after = audit_time(ev.get("act_after"), t)
            # With noticePeriod 0s the action follows in the same cycle: its line says it all.
            if act_after > t:
                w.notices += 1
                self.say(t, name, "NOTICE from rule %s: %s will happen at %s unless it is "
                         "active again" % (rule, ev.get("action", "?"), self.stamp(act_after)))
        elif kind in ("spared", "skipped"):
            if kind == "skipped" and result == "exempt":
                text = "SPARED by rule %s: %s (%s, below %g%% for %s)" % (
                    rule, message, since.strip(), self.a.threshold * 100,
                    fmt_dur(self.a.idle_timer))
            elif kind == "spared":
                text = "SPARED by rule %s: active again, notice withdrawn" % rule
            else:
                text = "not acted on by rule %s (%s): %s" % (rule, result, message)
            w.spared.append(message or result)
            self.say(t, name, text)
        elif kind == "dry_run":
            self.say(t, name, "DRY RUN: rule %s would %s it%s" % (rule, ev.get("action", "?"),
                                                                 stats))

    # -- summary ----------------------------------------------------------------------------

    def overdue(self, w):
        """True when an idle workload has been below the threshold well past its timer (the
        enforcer needs up to a step and a cycle after the timer runs out)."""
        return (w.below_since is not None
                and self.end - w.below_since > self.a.idle_timer + self.a.grace)

    def summary(self):
        self.end = time.time()
        rows = []
        for name in sorted(self.w):
            w = self.w[name]
            expected = "stopped" if w.profile in EXPECT_STOPPED else "running"
            verdict = None
            if w.stopped_at is not None or w.decided_at is not None:
                outcome = "stopped at %s" % self.stamp(w.decided_at or w.stopped_at)
                if w.stopped_by:
                    outcome += " by %s" % w.stopped_by
                actual = "stopped"
            else:
                outcome = "running"
                actual = "running"
                if expected == "stopped" and not self.overdue(w):
                    # The demo ended before this workload's idle timer could run out.
                    verdict = "not yet"
                    if w.below_since is None:
                        outcome += ", still active"
                    else:
                        outcome += ", idle for %s of %s" % (fmt_dur(self.end - w.below_since),
                                                            fmt_dur(self.a.idle_timer))
                elif w.spared:
                    outcome += ", spared (%s)" % w.spared[0]
                elif w.bursts:
                    outcome += ", %d burst%s reset the timer" % (w.bursts,
                                                                 "" if w.bursts == 1 else "s")
            if verdict is None:
                verdict = "ok" if expected == actual else "UNEXPECTED"
            rows.append({"workload": name, "profile": w.profile, "devices": w.devices,
                         "exempt": w.exempt, "expected": expected, "actual": actual,
                         "outcome": outcome, "stopped_by": w.stopped_by,
                         "exit_code": w.exit_code, "verdict": verdict})
        ow = max([len("OUTCOME")] + [len(r["outcome"]) for r in rows])
        print("")
        print("Summary")
        print("  %-*s %-10s %-*s %-9s %s" % (self.width, "WORKLOAD", "PROFILE", ow, "OUTCOME",
                                             "EXPECTED", "VERDICT"))
        for r in rows:
            print("  %-*s %-10s %-*s %-9s %s" % (self.width, r["workload"], r["profile"], ow,
                                                 r["outcome"], r["expected"], r["verdict"]))
        if self.a.summary_file:
            tmp = self.a.summary_file + ".tmp"
            with open(tmp, "w") as f:
                json.dump(rows, f, indent=1, sort_keys=True)
            os.replace(tmp, self.a.summary_file)
        sys.stdout.flush()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t0", type=float, default=time.time(), help="epoch of the demo's start")
    ap.add_argument("--prometheus-url", required=True)
    ap.add_argument("--runtime-socket")
    ap.add_argument("--audit-file")
    ap.add_argument("--threshold", type=float, default=0.10, help="ratio, e.g. 0.10")
    ap.add_argument("--idle-timer", type=float, default=120, help="seconds, for the text only")
    ap.add_argument("--duration", type=float, default=0,
                    help="seconds after --t0 to stop (0: until SIGINT/SIGTERM)")
    ap.add_argument("--grace", type=float, default=30,
                    help="seconds past the idle timer by which an idle workload must be stopped")
    ap.add_argument("--poll", type=float, default=2.0)
    ap.add_argument("--delay", type=float, default=10,
                    help="seconds each timeline line is held so that lines print in order")
    ap.add_argument("--summary-file")
    args = ap.parse_args(argv)

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
    tl = Timeline(args)
    tl.poll_runtime(time.time())
    print("Workloads (podman containers)", flush=True)
    for name in sorted(tl.w):
        w = tl.w[name]
        print("  %-*s %-10s %s%s" % (tl.width, name, w.profile, ",".join(w.devices),
                                     "  (label %s=true)" % LABEL_EXEMPT if w.exempt else ""))
    print("", flush=True)
    while not stopping:
        now = time.time()
        tl.poll_runtime(now)
        tl.poll_prometheus(now)
        tl.poll_audit(now)
        tl.flush(now - args.delay)
        if args.duration and now - args.t0 >= args.duration:
            break
        end = time.time() + args.poll
        while not stopping and time.time() < end:
            time.sleep(0.1)
    # One last look, so that a stop just before the end is in the summary.
    now = time.time()
    tl.poll_audit(now)
    tl.poll_runtime(now)
    tl.flush(float("inf"))
    tl.summary()
    return 0


if __name__ == "__main__":
    sys.exit(main())
