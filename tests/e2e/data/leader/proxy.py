#!/usr/bin/env python3
"""A TCP proxy on 127.0.0.1 that a test can cut, to partition one enforcer from the API.

usage: proxy.py TARGET_PORT CUT_FILE
Prints "listening on PORT" once bound. While CUT_FILE exists every connection, open or new,
is closed at once, as a network partition would leave the client with nothing. Bounded: it
stops by itself after 10 minutes, and on SIGTERM.
"""
import os
import selectors
import signal
import socket
import sys
import threading
import time

target, cut = int(sys.argv[1]), sys.argv[2]
deadline = time.monotonic() + 600
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))


def pipe(a, b):
    sel = selectors.DefaultSelector()
    sel.register(a, selectors.EVENT_READ, b)
    sel.register(b, selectors.EVENT_READ, a)
    try:
        while not os.path.exists(cut) and time.monotonic() < deadline:
            for key, _ in sel.select(0.1):
                data = key.fileobj.recv(65536)
                if not data:
                    return
                key.data.sendall(data)
    except OSError:
        pass
    finally:
        a.close()
        b.close()


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(64)
srv.settimeout(0.2)
print("listening on %d" % srv.getsockname()[1], flush=True)
while time.monotonic() < deadline:
    try:
        c, _ = srv.accept()
    except socket.timeout:
        continue
    if os.path.exists(cut):
        c.close()
        continue
    try:
        u = socket.create_connection(("127.0.0.1", target))
    except OSError:
        c.close()
        continue
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
