#!/usr/bin/env python3
"""A proxy in front of Prometheus for tests/e2e/backtest.sh, on 127.0.0.1 at a free port:
the "server error half-way" of a backtest. Every request is forwarded, except the PromQL
queries (/api/v1/query, /api/v1/query_range) evaluated at a time (`time`, or a range's
`end`) in [FROM, TO], which get Prometheus' own 503 error envelope.

usage: failproxy.py UPSTREAM FROM TO   (prints "listening on PORT" once bound)
"""
import http.server
import sys
import urllib.error
import urllib.parse
import urllib.request

upstream, fail_from, fail_to = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])


class Handler(http.server.BaseHTTPRequestHandler):
    def forward(self, body):
        path = urllib.parse.urlsplit(self.path)
        params = urllib.parse.parse_qs(path.query)
        if body and self.headers.get("Content-Type", "").startswith(
                "application/x-www-form-urlencoded"):
            params.update(urllib.parse.parse_qs(body.decode()))
        at = params.get("time", params.get("end", [None]))[0]
        if path.path in ("/api/v1/query", "/api/v1/query_range") and at is not None \
                and fail_from <= float(at) <= fail_to:
            out = b'{"status":"error","errorType":"unavailable","error":"injected outage"}'
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
        req = urllib.request.Request(upstream + self.path, data=body, method=self.command)
        for k in ("Content-Type", "Content-Encoding", "Accept", "Accept-Encoding",
                  "X-Prometheus-Remote-Read-Version"):
            if self.headers.get(k):
                req.add_header(k, self.headers[k])
        try:
            resp = urllib.request.urlopen(req, timeout=30)
            status, headers, out = resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as e:
            status, headers, out = e.code, e.headers, e.read()
        self.send_response(status)
        for k in ("Content-Type", "Content-Encoding"):
            if headers.get(k):
                self.send_header(k, headers[k])
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def do_GET(self):
        self.forward(None)

    def do_POST(self):
        self.forward(self.rfile.read(int(self.headers.get("Content-Length", "0"))))

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("listening on %d" % server.server_address[1], flush=True)
server.serve_forever()
