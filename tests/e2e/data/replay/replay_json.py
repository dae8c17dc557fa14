"""The output of tests/fakes/replay_dump and of the replay test's `plan` loop, read back.

blocks(path) -> {cycle time (int seconds): [decision records]}: lines `@ <t> ...` each followed
by the JSON array `plan --output json` prints (tests/e2e/replay.sh).
"""
import json


def blocks(path):
    out, cur, buf = {}, None, []
    for line in open(path):
        if line.startswith("@ "):
            if cur is not None:
                out[cur] = json.loads("".join(buf))
            cur, buf = int(float(line.split()[1])), []
        else:
            buf.append(line)
    if cur is not None:
        out[cur] = json.loads("".join(buf))
    return out


def key(d):
    """A decision record's rule and workload, the key both sides are matched on."""
    return (d["rule"], json.dumps(d["workload"], sort_keys=True))
