#!/usr/bin/env python3
"""A webhook receiver for tests/e2e/notify.sh, on 127.0.0.1 at a free port.

Prints "listening on PORT" once bound (what tests/lib.sh's start_fake_http waits for) and
appends every POST to LOG as one JSON line {"path", "content_type", "body"}. Mode "ok":
the first FAILS requests get HTTP 500, later ones 200. Mode "hang": requests are read and
never answered (the connection stays open until the receiver is stopped).
"""
import http.server
import json
import sys
import threading

log_path, mode = sys.argv[1], sys.argv[2]
fails = int(sys.argv[3]) if len(sys.argv) > 3 else 0
lock = threading.Lock()
count = 0
stop = threading.Event()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global count
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            count += 1
            n = count
            with open(log_path, "a") as f:
                f.write(json.dumps({"path": self.path,
                                    "content_type": self.headers.get("Content-Type"),
                                    "body": body.decode()}) + "\n")
        if mode == "hang":
            stop.wait()
            return
        status = 500 if n <= fails else 200
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, fmt, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print("listening on %d" % server.server_address[1], flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
