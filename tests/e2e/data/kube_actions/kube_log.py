#!/usr/bin/env python3
"""Print fake_kube's request log as one line per request, for tests/e2e/kube_actions.sh.

usage: kube_log.py LOG FROM OBJECTS.json...
Lines FROM (0-based) to the end of LOG. Each request becomes
  METHOD PATH[?QUERY] [CONTENT-TYPE] BODY
where uids of the objects in OBJECTS.json are written @Kind/name (in bodies and queries),
a resourceVersion precondition is written @rv (its value is the fake's revision counter;
fake_kube answers 409 to a stale one, which the transcript then shows),
the notice annotation (a JSON document of its own) is summarised as
<notice RULE ACTION at ACTAT> (with " acted" once it records the action), and an Event as <Event TYPE REASON Kind/name action=ACTION>,
its name and timestamps being wall-clock.
"""
import json
import sys


def uid_names(paths):
    names = {}
    for p in paths:
        for o in json.load(open(p))["items"]:
            names[o["metadata"]["uid"]] = "@%s/%s" % (o["kind"], o["metadata"]["name"])
    return names


def rename(v, names):
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k == "gpureclaim.io/reclaim-notice" and isinstance(x, str):
                n = json.loads(x)
                x = "<notice %s %s at %s%s>" % (n["rule"], n["action"], n["actAt"],
                                                 " acted" if "actedAt" in n else "")
            out[k] = "@rv" if k == "resourceVersion" and isinstance(x, str) else rename(x, names)
        return out
    if isinstance(v, list):
        return [rename(x, names) for x in v]
    if isinstance(v, str):
        return names.get(v, v)
    return v


def main():
    log, start, names = sys.argv[1], int(sys.argv[2]), uid_names(sys.argv[3:])
    lines = open(log).read().splitlines()[start:]
    for line in lines:
        o = json.loads(line)
        query = o["query"]
        for uid, name in names.items():
            query = query.replace(uid, name)
        out = [o["method"], o["path"] + ("?" + query if query else "")]
        if o["content_type"]:
            out.append("[%s]" % o["content_type"])
        b = o["body"]
        if isinstance(b, dict) and b.get("kind") == "Event":
            inv = b["involvedObject"]
            b = "<Event %s %s %s/%s action=%s>" % (b["type"], b["reason"], inv["kind"],
                                                  inv["name"], b.get("action"))
            out.append(b)
        elif b is not None:
            out.append(json.dumps(rename(b, names), separators=(",", ":")))
        print(" ".join(out))


main()
