#!/usr/bin/env python3
"""A proxy for the replay test (tests/e2e/replay.sh) that fails one raw read on purpose.

  failproxy.py TARGET_URL N

Listens on a free port of 127.0.0.1 (prints "listening on PORT"), forwards every request to
TARGET_URL, and answers the N-th raw read (POST /api/v1/read or /api/v1/export, counting from
1) with HTTP 503 "injected failure" instead: the server failing half-way through a range.
"""
import http.server
import socketserver
import sys
import urllib.error
import urllib.request

TARGET, FAIL_AT = sys.argv[1].rstrip("/"), int(sys.argv[2])
reads = 0


class Proxy(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def forward(self, body):
        global reads
        if self.command == "POST" and self.path.split("?")[0] in ("/api/v1/read", "/api/v1/export"):
            reads += 1
            if reads == FAIL_AT:
                msg = b"injected failure\n"
                self.send_response(503)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(msg)))
                self.end_headers()
                self.wfile.write(msg)
                return
        req = urllib.request.Request(TARGET + self.path, data=body, method=self.command)
        for k, v in self.headers.items():
            if k.lower() not in ("host", "content-length", "connection"):
                req.add_header(k, v)
        try:
            resp = urllib.request.urlopen(req, timeout=60)
        except urllib.error.HTTPError as e:
            resp = e
        data = resp.read()
        self.send_response(resp.status if hasattr(resp, "status") else resp.code)
        for k, v in resp.headers.items():
            if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.forward(None)

    def do_POST(self):
        self.forward(self.rfile.read(int(self.headers.get("Content-Length", 0))))


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Proxy)
print("listening on %d" % srv.server_address[1], flush=True)
srv.serve_forever()
