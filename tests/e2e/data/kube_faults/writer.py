#!/usr/bin/env python3
"""The second writer and the crash of tests/e2e/kube_faults.sh: a validating admission webhook.

usage: writer.py PORT CERT KEY ARMDIR LOG KUBE_URL CLUSTER_DIR

The real API server calls it for the enforcer's writes to Deployments (and their /scale) in
the namespaces labelled gpureclaim-test/writer=on: the webhook configuration's matchConditions
pass only the enforcer's ServiceAccount, so the admin's writes made here do not come back.
A write is held here after the server has read the object it changes and before it stores
it, which is what makes these faults deterministic instead of a race with a loop:

  ARMDIR/NAMESPACE.NAME.SUB (SUB the subresource, "-" for the object itself) holds what to do
  with the next such write, once (the file is removed when it is used):
    annotate  another writer (the admin, with the client certificate in CLUSTER_DIR: a merge
              patch straight to KUBE_URL, not kubectl, so that it is done well inside the
              enforcer's --kube.timeout) changes an annotation of the object, then
              the write is allowed: stored with the resourceVersion the enforcer read, it gets
              409 Conflict from the server;
    spec      the other writer changes the pod template instead (the spec moved);
    kill PID  SIGKILL the API server (PID) while it waits for this answer: the write is never
              stored, and the enforcer's request dies with the server. Every `kill` file is
              removed then: the crash happens once, whichever object is written first.

Each request is one line in LOG: "NAMESPACE NAME SUB USER ACTION".
"""
import http.client
import json
import os
import signal
import ssl
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, cert, key, armdir, logpath = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
kube = urllib.parse.urlsplit(sys.argv[6])
cluster = sys.argv[7]
admin = ssl.create_default_context(cafile=os.path.join(cluster, "ca.crt"))
admin.load_cert_chain(os.path.join(cluster, "admin.crt"), os.path.join(cluster, "admin.key"))


def log(line):
    with open(logpath, "a") as f:
        f.write(line + "\n")


def other_writer(ns, name, what):
    if what == "annotate":
        patch = {"metadata": {"annotations": {"gpureclaim-test/other-writer": "wrote-between"}}}
    else:
        patch = {"spec": {"template": {"metadata": {"annotations": {
            "gpureclaim-test/other-writer": "changed-the-spec"}}}}}
    c = http.client.HTTPSConnection(kube.hostname, kube.port, context=admin, timeout=10)
    c.request("PATCH", "/apis/apps/v1/namespaces/%s/deployments/%s" % (ns, name),
              body=json.dumps(patch), headers={"Content-Type": "application/merge-patch+json"})
    r = c.getresponse()
    r.read()
    c.close()
    return "%s status=%d" % (what, r.status)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        req = review["request"]
        ns, name = req.get("namespace", ""), req.get("name", "")
        sub = req.get("subResource") or "-"
        user = req.get("userInfo", {}).get("username", "")
        arm = os.path.join(armdir, "%s.%s.%s" % (ns, name, sub))
        action = "allow"
        try:
            with open(arm) as f:
                what = f.read().split()
            os.unlink(arm)
        except FileNotFoundError:
            what = []
        if req.get("dryRun"):
            what = []
        if what[:1] == ["kill"]:
            for a in os.listdir(armdir):
                p = os.path.join(armdir, a)
                with open(p) as f:
                    if f.read().startswith("kill"):
                        os.unlink(p)
            log("%s %s %s %s kill %s" % (ns, name, sub, user, what[1]))
            os.kill(int(what[1]), signal.SIGKILL)
            return
        if what[:1] in (["annotate"], ["spec"]):
            action = other_writer(ns, name, what[0])
        log("%s %s %s %s %s" % (ns, name, sub, user, action))
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "response": {"uid": req["uid"], "allowed": True}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("listening on %d" % port, flush=True)
srv.serve_forever()
