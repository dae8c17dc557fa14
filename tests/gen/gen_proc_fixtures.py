#!/usr/bin/env python3
"""Generate the process-side fixtures of the ownership collector (stdlib only, deterministic).

On the 8 x MI300X CPX tree (tests/fixtures/mi300x-cpx) this writes:

  proc/<pid>/{fd/<n>, fdinfo/<n>, cgroup, comm}   processes holding render nodes and /dev/kfd
  sys-kfd-proc/<pid>/...                          KFD per-process files (vram_<gpu_id>, ...)
  GENERATED-proc.md                               what every process does, and the expected
                                                  per-workload values
and tests/fixtures/podres/mi300x-cpx-owners.json: tests/fixtures/podres/mi300x-cpx.json plus
one pod that shares a partition with another.

The KFD entries belong under <sysfs>/class/kfd/kfd/proc/, but tests/gen/gen_fixtures.py owns
the whole sys/ tree of the fixture (its --check flags any extra file there and a rewrite
would delete it), so they are kept beside it and tests copy the sys tree and this directory
into a temporary root (tests/e2e/ownership.sh). gpu_ids and render minors are read from the
generated sys tree, so the two generators cannot drift apart silently.

usage:
    gen_proc_fixtures.py FIXTURES              (re)write the files (FIXTURES = tests/fixtures)
    gen_proc_fixtures.py --check FIXTURES      regenerate into a temp dir and compare
    gen_proc_fixtures.py --bench N M OUT SYS   a synthetic procfs of N processes, M of them
                                               holding render nodes of the tree at SYS
                                               (bench/ownership.sh); writes OUT/proc and
                                               OUT/kfd-proc
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_fixtures import read_tree  # noqa: E402  (needs the sys.path entry above)

TREE = "mi300x-cpx"
OWNED = ["proc", "sys-kfd-proc", "GENERATED-proc.md"]
PODRES_SRC = "podres/mi300x-cpx.json"
PODRES_OUT = "podres/mi300x-cpx-owners.json"
KIB = 1024
MIB = 1 << 20
GIB = 1 << 30


# ---- the node, read from the generated sys tree --------------------------------------------


def read_partitions(sysroot):
    """[(gpu, partition, bdf, render, card, gpu_id, device_id)] in GPU/partition order."""
    nodes = os.path.join(sysroot, "class/kfd/kfd/topology/nodes")
    parts = []
    for n in sorted(os.listdir(nodes), key=int):
        props = {}
        with open(os.path.join(nodes, n, "properties")) as f:
            for line in f:
                k, _, v = line.strip().partition(" ")
                props[k] = v
        if int(props.get("simd_count", "0")) == 0:
            continue
        with open(os.path.join(nodes, n, "gpu_id")) as f:
            gpu_id = int(f.read())
        loc = int(props["location_id"])
        bdf = "%04x:%02x:%02x.0" % (int(props["domain"]), (loc >> 8) & 0xFF, (loc >> 3) & 0x1F)
        parts.append([bdf, loc & 7, int(props["drm_render_minor"]), gpu_id])
    bdfs = sorted({p[0] for p in parts})
    out = []
    for bdf, p, render, gpu_id in sorted(parts, key=lambda x: (x[0], x[1])):
        g = bdfs.index(bdf)
        dev = bdf if p == 0 else "amdgpu_xcp_%d" % (7 * g + p - 1)
        out.append({"gpu": g, "part": p, "bdf": bdf, "render": render, "card": render - 128,
                    "gpu_id": gpu_id, "device_id": dev})
    return out


def cid(name):
    return hashlib.sha256(name.encode()).hexdigest()


def uid(name):
    h = hashlib.sha256(("pod:" + name).encode()).hexdigest()
    return "%s-%s-4%s-8%s-%s" % (h[:8], h[8:12], h[13:16], h[17:20], h[20:32])


# ---- file formats ---------------------------------------------------------------------------


def drm_size(v):
    """drm_fdinfo_print_size(): no unit for 0 or odd sizes, else KiB or MiB (§9.1)."""
    units = ["", " KiB", " MiB"]
    u = 0
    while u < 2 and v != 0 and v % 1024 == 0:
        v //= 1024
        u += 1
    return "%d%s" % (v, units[u])


def fdinfo_new(c, ino):
    """After the drm_print_memory_stats conversion (docs/kernel-interfaces.md §9.2, §9.3)."""
    lines = ["pos:\t0", "flags:\t02100002", "mnt_id:\t24", "ino:\t%d" % ino,
             "drm-driver:\tamdgpu", "drm-client-id:\t%d" % c["client"],
             "drm-pdev:\t%s" % c["pdev"], "pasid:\t%d" % c["pasid"]]
    mem = {"cpu": 0, "gtt": c.get("gtt", 0), "vram": c.get("vram", 0)}
    for r in ("cpu", "gtt", "vram"):
        for k in ("total", "shared", "active", "resident", "purgeable"):
            v = mem[r] if k in ("total", "resident") else 0
            lines.append("drm-%s-%s:\t%s" % (k, r, drm_size(v)))
    lines += ["drm-memory-vram:\t%d KiB" % (mem["vram"] // KIB),
              "drm-memory-gtt: \t%d KiB" % (mem["gtt"] // KIB),
              "drm-memory-cpu: \t0 KiB",
              "amd-evicted-vram:\t0 KiB",
              "amd-requested-vram:\t%d KiB" % (mem["vram"] // KIB),
              "amd-requested-gtt:\t%d KiB" % (mem["gtt"] // KIB)]
    for e, ns in sorted(c.get("engines", {}).items()):
        if ns:
            lines.append("drm-engine-%s:\t%d ns" % (e, ns))
    return "\n".join(lines) + "\n"


def fdinfo_old(c, ino):
    """About v6.4 until the conversion (Linux @ 0604aa87): legacy drm-memory-* keys only."""
    vram, gtt = c.get("vram", 0), c.get("gtt", 0)
    lines = ["pos:\t0", "flags:\t02100002", "mnt_id:\t24", "ino:\t%d" % ino,
             "pasid:\t%d" % c["pasid"], "drm-driver:\tamdgpu", "drm-pdev:\t%s" % c["pdev"],
             "drm-client-id:\t%d" % c["client"],
             "drm-memory-vram:\t%d KiB" % (vram // KIB),
             "drm-memory-gtt: \t%d KiB" % (gtt // KIB),
             "drm-memory-cpu: \t0 KiB",
             "amd-memory-visible-vram:\t0 KiB",
             "amd-evicted-vram:\t0 KiB",
             "amd-evicted-visible-vram:\t0 KiB",
             "amd-requested-vram:\t%d KiB" % (vram // KIB),
             "amd-requested-visible-vram:\t0 KiB",
             "amd-requested-gtt:\t%d KiB" % (gtt // KIB)]
    for e, ns in sorted(c.get("engines", {}).items()):
        if ns:
            lines.append("drm-engine-%s:\t%d ns" % (e, ns))
    return "\n".join(lines) + "\n"


V1_CONTROLLERS = ["blkio", "cpu,cpuacct", "cpuset", "devices", "freezer", "hugetlb", "memory",
                  "net_cls,net_prio", "perf_event", "pids"]


def cgroup_text(shape, pod=None, container=None, qos="burstable"):
    if shape == "k8s-systemd-v2":
        u = uid(pod).replace("-", "_")
        return ("0::/kubepods.slice/kubepods-%s.slice/kubepods-%s-pod%s.slice/"
                "cri-containerd-%s.scope\n" % (qos, qos, u, cid(container)))
    if shape == "k8s-cgroupfs-v1":
        path = "/kubepods/%s/pod%s/%s" % (qos, uid(pod), cid(container))
        return "".join("%d:%s:%s\n" % (12 - i, c, path) for i, c in enumerate(V1_CONTROLLERS)) + \
            "1:name=systemd:%s\n" % path
    if shape == "docker-v2":
        return "0::/system.slice/docker-%s.scope\n" % cid(container)
    if shape == "podman-v1":
        path = "/libpod_parent/libpod-%s" % cid(container)
        return "".join("%d:%s:%s\n" % (12 - i, c, path) for i, c in enumerate(V1_CONTROLLERS))
    if shape == "host-v2":
        return "0::/user.slice/user-1000.slice/session-3.scope\n"
    raise ValueError(shape)


# ---- the scene ------------------------------------------------------------------------------

PODS = {  # pod -> (namespace, container, cgroup shape)
    "llm-train-0": ("ml-train", "trainer", "k8s-systemd-v2"),
    "llm-train-1": ("ml-train", "trainer", "k8s-cgroupfs-v1"),
    "notebook-alice": ("research", "jupyter", "k8s-systemd-v2"),
    "sweep-17": ("batch", "worker", "k8s-systemd-v2"),
}


def scene(parts):
    """The processes: list of dicts; fds reference partitions as (gpu, part)."""
    P = {(p["gpu"], p["part"]): p for p in parts}

    def gpu_ids(g):
        return [P[(g, p)]["gpu_id"] for p in range(8) if (g, p) in P]

    procs = []

    def proc(pid, comm, cg, fds, kfd=None, note=""):
        procs.append({"pid": pid, "comm": comm, "cgroup": cg, "fds": fds, "kfd": kfd or {},
                      "note": note})

    def kfd_entry(vram=0, sdma_us=0, cu=0, evicted_ms=0, queues=0, cu_file=True):
        return {"vram": vram, "sdma": sdma_us, "cu": cu, "evicted": evicted_ms,
                "queues": queues, "cu_file": cu_file}

    # GPU 0, llm-train-0 (all 8 partitions, idle GPU): two ranks, 4 partitions each. Rank 0
    # also holds a dup()ed fd (same client) and a non-DRM fd. ROCm: no engine time.
    for rank in range(2):
        pid = 4101 + rank
        fds = {3: ("kfd",), 4: ("other", "pipe:[73%d1]" % rank), 5: ("other", "/dev/null")}
        kfd = {}
        for i in range(4):
            part = (0, 4 * rank + i)
            fds[10 + i] = ("render", part, {"era": "new", "client": 100 + 4 * rank + i,
                                            "vram": (2 + i) * GIB, "gtt": 6 * MIB})
            kfd[P[part]["gpu_id"]] = kfd_entry(vram=(2 + i) * GIB, sdma_us=120000 * (i + 1),
                                               queues=1)
        for g in gpu_ids(0):
            kfd.setdefault(g, kfd_entry())  # a container sees all 8 partitions it was given
        if rank == 0:
            fds[20] = ("dup", 10)
        proc(pid, "python3", cgroup_text("k8s-systemd-v2", "llm-train-0", "llm-train-0/trainer"),
             fds, kfd, "llm-train-0 rank %d: partitions %d..%d%s" %
             (rank, 4 * rank, 4 * rank + 3, "; fd 20 is a dup of fd 10" if rank == 0 else ""))

    # GPU 1, llm-train-1 (partitions 0..3, busy): one process, older kernel fdinfo, cgroup v1,
    # KFD waves on all 38 CUs of each partition.
    fds = {3: ("kfd",), 7: ("other", "socket:[88120]")}
    kfd = {}
    for i in range(4):
        fds[30 + i] = ("render", (1, i), {"era": "old", "client": 200 + i, "vram": 40 * GIB,
                                          "gtt": 12 * MIB, "engines": {"dma": 150000000}})
        kfd[P[(1, i)]["gpu_id"]] = kfd_entry(vram=40 * GIB, sdma_us=9000000, cu=38,
                                             evicted_ms=1500, queues=2)
    proc(4201, "torchrun", cgroup_text("k8s-cgroupfs-v1", "llm-train-1", "llm-train-1/trainer"),
         fds, kfd, "llm-train-1: partitions 0..3 of GPU 1, old-era fdinfo, cgroup v1")

    # GPU 1 partitions 4, 5: not allocated, yet used by a plain Docker container and by a
    # host tool that passed its fd to a helper (same drm-client-id in both processes).
    proc(4301, "stress", cgroup_text("docker-v2", container="docker/stress"),
         {3: ("render", (1, 4), {"era": "new", "client": 300, "vram": 512 * MIB,
                                 "gtt": 2 * MIB, "engines": {"gfx": 4000000000}})},
         {}, "a Docker container on the unallocated partition 4 of GPU 1")
    proc(4400, "vkcube", cgroup_text("host-v2"),
         {4: ("render", (1, 5), {"era": "new", "client": 400, "vram": 64 * MIB, "gtt": 3 * MIB,
                                 "engines": {"gfx": 2500000000, "dma": 1000000}}),
          6: ("card", (1, 5), {"era": "new", "client": 401}),
          8: ("other", "anon_inode:[eventfd]")},
         {}, "a host process on the unallocated partition 5 of GPU 1 (render and card node)")
    proc(4401, "vkhelper", cgroup_text("host-v2"),
         {5: ("passed", 4400, 4), 9: ("other", "/var/log/helper.log")},
         {}, "got fd 4 of 4400 over SCM_RIGHTS: same client, counted once, for 4400")

    # GPU 2 partition 7 (amdgpu_xcp_20): allocated to notebook-alice and notebook-carol.
    kfd = {P[(2, 7)]["gpu_id"]: kfd_entry(vram=8 * GIB, sdma_us=3000, cu=0, evicted_ms=20)}
    proc(4501, "ipykernel", cgroup_text("k8s-systemd-v2", "notebook-alice", "notebook-alice/jupyter"),
         {3: ("kfd",), 11: ("render", (2, 7), {"era": "new", "client": 500, "vram": 8 * GIB,
                                               "gtt": 4 * MIB})},
         kfd, "notebook-alice on the partition it shares with notebook-carol")

    # GPU 5, sweep-17 (partitions 1, 2): one process with a render node, one through KFD only.
    kfd = {P[(5, 1)]["gpu_id"]: kfd_entry(vram=3 * GIB, sdma_us=777000, cu=5, evicted_ms=0,
                                          queues=1)}
    proc(4601, "sweep", cgroup_text("k8s-systemd-v2", "sweep-17", "sweep-17/worker"),
         {3: ("kfd",), 12: ("render", (5, 1), {"era": "new", "client": 600, "vram": 3 * GIB,
                                               "gtt": 2 * MIB})},
         kfd, "sweep-17 on partition 1 of GPU 5")
    kfd = {P[(5, 2)]["gpu_id"]: kfd_entry(vram=1 * GIB, sdma_us=1000, cu=21, queues=1,
                                          cu_file=True),
           P[(5, 1)]["gpu_id"]: kfd_entry()}
    proc(4602, "sweep", cgroup_text("k8s-systemd-v2", "sweep-17", "sweep-17/worker"),
         {3: ("kfd",)}, kfd, "sweep-17 on partition 2 of GPU 5 through /dev/kfd only")

    # A podman container that opened /dev/kfd only and allocated nothing (rocminfo-like).
    kfd = {g: kfd_entry() for p in parts for g in [p["gpu_id"]]}
    proc(4700, "rocminfo", cgroup_text("podman-v1", container="podman/rocminfo"),
         {3: ("kfd",)}, kfd, "opened /dev/kfd, allocated nothing: uses no partition")
    # Processes without GPU fds, which the scan must pass over.
    proc(1, "systemd", "0::/init.scope\n", {0: ("other", "/dev/null")}, {}, "no GPU fd")
    proc(4800, "sshd", cgroup_text("host-v2"),
         {3: ("other", "socket:[1]"), 4: ("other", "/dev/dri/by-path")}, {}, "no GPU fd")
    return procs


def resolve_fds(procs, P):
    """Fill each fd with its link target and fdinfo text (dup/passed copy another fd)."""
    by_pid = {p["pid"]: p for p in procs}
    ino = 9000
    for p in procs:
        p["links"], p["fdinfo"] = {}, {}
    for p in procs:
        for fd, spec in sorted(p["fds"].items()):
            kind = spec[0]
            if kind in ("render", "card"):
                part, c = P[spec[1]], dict(spec[2])
                node = "renderD%d" % part["render"] if kind == "render" else "card%d" % part["card"]
                c.setdefault("pasid", 32768 + p["pid"] % 1000)
                c["pdev"] = part["bdf"]  # every partition's fdinfo names the parent GPU (§1.2)
                ino += 1
                text = fdinfo_old(c, ino) if c["era"] == "old" else fdinfo_new(c, ino)
                p["links"][fd] = "/dev/dri/" + node
                p["fdinfo"][fd] = text
            elif kind == "kfd":
                p["links"][fd] = "/dev/kfd"
                p["fdinfo"][fd] = "pos:\t0\nflags:\t02\nmnt_id:\t24\nino:\t1\n"
            elif kind == "other":
                p["links"][fd] = spec[1]
    for p in procs:
        for fd, spec in sorted(p["fds"].items()):
            if spec[0] == "dup":
                src, sfd = p, spec[1]
            elif spec[0] == "passed":
                src, sfd = by_pid[spec[1]], spec[2]
            else:
                continue
            p["links"][fd] = src["links"][sfd]
            p["fdinfo"][fd] = src["fdinfo"][sfd]


def write_scene(fixtures, procs, P):
    root = os.path.join(fixtures, TREE)
    for name in ("proc", "sys-kfd-proc"):
        shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    for p in procs:
        d = os.path.join(root, "proc", str(p["pid"]))
        os.makedirs(os.path.join(d, "fd"))
        os.makedirs(os.path.join(d, "fdinfo"))
        write(os.path.join(d, "cgroup"), p["cgroup"])
        write(os.path.join(d, "comm"), p["comm"] + "\n")
        for fd, target in sorted(p["links"].items()):
            os.symlink(target, os.path.join(d, "fd", str(fd)))
            write(os.path.join(d, "fdinfo", str(fd)),
                  p["fdinfo"].get(fd, "pos:\t0\nflags:\t02\nmnt_id:\t24\nino:\t1\n"))
        if p["kfd"]:
            write_kfd(os.path.join(root, "sys-kfd-proc", str(p["pid"])), p)


def write_kfd(d, p):
    os.makedirs(d)
    write(os.path.join(d, "pasid"), "%d\n" % (32768 + p["pid"] % 1000))
    qid = 0
    for gpu_id, k in sorted(p["kfd"].items()):
        write(os.path.join(d, "vram_%d" % gpu_id), "%d\n" % k["vram"])
        write(os.path.join(d, "sdma_%d" % gpu_id), "%d\n" % k["sdma"])
        s = os.path.join(d, "stats_%d" % gpu_id)
        os.makedirs(s)
        write(os.path.join(s, "evicted_ms"), "%d\n" % k["evicted"])
        if k["cu_file"]:
            write(os.path.join(s, "cu_occupancy"), "%d\n" % k["cu"])
        for _ in range(k["queues"]):
            q = os.path.join(d, "queues", str(qid))
            os.makedirs(q)
            write(os.path.join(q, "gpuid"), "%d" % gpu_id)  # no newline (kfd_process.c)
            write(os.path.join(q, "size"), "%d" % (1 << 20))
            write(os.path.join(q, "type"), "0")
            qid += 1


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def podres_owners(fixtures):
    with open(os.path.join(fixtures, PODRES_SRC)) as f:
        data = json.load(f)
    data["list"]["pod_resources"].append(
        {"name": "notebook-carol", "namespace": "research",
         "containers": [{"name": "jupyter",
                         "devices": [{"resource_name": "amd.com/cpx_nps4",
                                      "device_ids": ["amdgpu_xcp_20"],
                                      "topology": {"nodes": [{"ID": "0"}]}}]}]})
    return json.dumps(data, indent=1) + "\n"


def doc(procs, P):
    out = ["# mi300x-cpx: processes, KFD process files and a shared allocation\n\n",
           "Written by `tests/gen/gen_proc_fixtures.py`; do not edit by hand (rerun it with "
           "`tests/fixtures` as argument; `--check` verifies). Synthetic: no public capture of "
           "MI300 fdinfo or `/sys/class/kfd/kfd/proc` exists (docs/kernel-interfaces.md §7, §9.3).\n\n",
           "* `proc/<pid>/`: `fd/<n>` symlinks (`/dev/dri/renderD<minor>`, `/dev/dri/card<minor>`, "
           "`/dev/kfd`, pipes, sockets), `fdinfo/<n>` in two kernel eras (`new`: after the "
           "drm_print_memory_stats conversion, with `drm-resident-*`; `old`: about v6.4, "
           "`drm-memory-*` and `amd-*` only, SPACE+TAB after `drm-memory-gtt:`), `cgroup` "
           "(kubelet systemd driver on cgroup v2 with containerd, kubelet cgroupfs driver on "
           "cgroup v1, Docker on v2, Podman on v1, a host session), `comm`. `drm-pdev` is the "
           "parent GPU for every partition.\n",
           "* `sys-kfd-proc/<pid>/`: KFD per-process files, to be placed at "
           "`<sysfs>/class/kfd/kfd/proc/` (gen_fixtures.py owns `sys/`): `pasid`, "
           "`vram_<gpu_id>`, `sdma_<gpu_id>` (µs), `stats_<gpu_id>/{evicted_ms,cu_occupancy}`, "
           "`queues/<qid>/{gpuid,size,type}` (no trailing newline). gpu_ids are read from "
           "`sys/class/kfd/kfd/topology/nodes/*/gpu_id`.\n",
           "* `../podres/mi300x-cpx-owners.json`: `mi300x-cpx.json` plus pod "
           "`research/notebook-carol` (container `jupyter`) allocated `amdgpu_xcp_20`, which "
           "`research/notebook-alice` holds too.\n\n",
           "## Processes\n\n",
           "| pid | comm | cgroup | fds | KFD (gpu_id: vram, sdma µs, cu, evicted ms, queues) | why |\n",
           "|---|---|---|---|---|---|\n"]
    for p in procs:
        fds = ", ".join("%d→%s" % (fd, t) for fd, t in sorted(p["links"].items()))
        kfd = "; ".join("%d: %d, %d, %s, %d, %d" % (g, k["vram"], k["sdma"],
                                                     k["cu"] if k["cu_file"] else "-",
                                                     k["evicted"], k["queues"])
                        for g, k in sorted(p["kfd"].items())
                        if k["vram"] or k["queues"] or k["cu"])
        if p["kfd"] and not kfd:
            kfd = "%d gpu_ids, all zero" % len(p["kfd"])
        cg = p["cgroup"].splitlines()[0]
        out.append("| %d | %s | `%s` | %s | %s | %s |\n" % (p["pid"], p["comm"], cg, fds,
                                                           kfd or "-", p["note"]))
    out += ["\n## Container ids and pod UIDs\n\n",
            "Container id = sha256 of the name below; pod UID = a UUID from sha256 of "
            "`pod:<name>`.\n\n| name | id |\n|---|---|\n"]
    for n in sorted({"llm-train-0/trainer", "llm-train-1/trainer", "notebook-alice/jupyter",
                     "sweep-17/worker", "docker/stress", "podman/rocminfo"}):
        out.append("| %s | `%s` |\n" % (n, cid(n)))
    for n in sorted(PODS):
        out.append("| pod %s | `%s` |\n" % (n, uid(n)))
    out += ["\n## Expected ownership (with mi300x-cpx-owners.json)\n\n",
            "* GPU 0 (`0000:05:00.0`), all 8 partitions: `ml-train/llm-train-0` (kubelet); used "
            "by 4101 (p0..3) and 4102 (p4..7), VRAM 2..5 GiB per partition; fd 20 of 4101 is "
            "not a second client.\n",
            "* GPU 1 p0..3: `ml-train/llm-train-1`, 4201: cu_occupancy 38 = 38/38 CUs (ratio 1), "
            "40 GiB VRAM, dma engine 0.15 s, resident VRAM from `drm-memory-vram` (old era).\n",
            "* GPU 1 p4: no allocation; process owner with the container id of `docker/stress` "
            "(container_name too when the runtime source knows it). GPU 1 p5: no allocation; "
            "process owner with empty labels (host), gfx 2.5 s from the render client; the card "
            "client adds a second DRM client; 4401's passed fd is not counted again.\n",
            "* GPU 2 p7 (`amdgpu_xcp_20`): owners `notebook-alice` and `notebook-carol` "
            "(kubelet, shared), so 4501 is attributed by container id only, as a process "
            "owner; both pods show zero use.\n",
            "* GPU 4 p0 (`0000:85:00.0`): `research/notebook-bob`, never opened: zero use.\n",
            "* GPU 5 p1: `batch/sweep-17`, 4601, cu 5/38; p2: 4602 through KFD only, cu 21/38.\n",
            "* GPU 7 p0: DRA claim `gpu-56-184` of `dra-test/dra-infer` (resource `gpu.amd.com`).\n",
            "* 4700 (opened /dev/kfd, every gpu_id zero), 1 and 4800: no partition.\n"]
    return "".join(out)


def generate(fixtures, outdir):
    """Write everything for `fixtures` (read) into `outdir` (same layout)."""
    parts = read_partitions(os.path.join(fixtures, TREE, "sys"))
    P = {(p["gpu"], p["part"]): p for p in parts}
    procs = scene(parts)
    resolve_fds(procs, P)
    os.makedirs(os.path.join(outdir, TREE), exist_ok=True)
    os.makedirs(os.path.join(outdir, "podres"), exist_ok=True)
    write_scene(outdir, procs, P)
    write(os.path.join(outdir, TREE, "GENERATED-proc.md"), doc(procs, P))
    write(os.path.join(outdir, PODRES_OUT), podres_owners(fixtures))


def check(fixtures):
    tops = [TREE + "/" + o for o in OWNED] + [PODRES_OUT]
    with tempfile.TemporaryDirectory(prefix="gen_proc_fixtures.") as tmp:
        generate(fixtures, tmp)
        want, have = read_tree(tmp, tops), read_tree(fixtures, tops)
    diffs = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
    if diffs:
        print("FAIL: fixtures/%s-proc (%d entries differ; rerun tests/gen/gen_proc_fixtures.py)"
              % (TREE, len(diffs)))
        for d in diffs[:20]:
            print("    " + d)
        return 1
    print("PASS: fixtures/%s-proc (%d entries)" % (TREE, len(want)))
    return 0


# ---- benchmark procfs ---------------------------------------------------------------------


def bench(n, m, out, sysroot):
    """n processes, m of them (spread evenly) with a render node and a KFD entry."""
    parts = read_partitions(sysroot)
    for name in ("proc", "kfd-proc"):
        shutil.rmtree(os.path.join(out, name), ignore_errors=True)
    step = max(1, n // max(m, 1))
    held = 0
    for i in range(n):
        pid = 10000 + i
        d = os.path.join(out, "proc", str(pid))
        os.makedirs(os.path.join(d, "fd"))
        os.makedirs(os.path.join(d, "fdinfo"))
        links = {0: "/dev/null", 1: "pipe:[%d]" % pid, 2: "socket:[%d]" % pid}
        gpu = held < m and i % step == 0
        if gpu:
            part = parts[held % len(parts)]
            # As on a real node, a partition's processes belong to the pod it is allocated to.
            pod = "pod-%d" % (held % len(parts) % 50)
            write(os.path.join(d, "cgroup"), cgroup_text("k8s-systemd-v2", pod, pod + "/c"))
            links[3] = "/dev/kfd"
            links[4] = "/dev/dri/renderD%d" % part["render"]
            c = {"client": 1000 + held, "pasid": 40000 + held, "pdev": part["bdf"],
                 "vram": GIB, "gtt": 2 * MIB, "engines": {"gfx": held * 1000}}
            write(os.path.join(d, "fdinfo", "4"), fdinfo_new(c, 50000 + held))
            write(os.path.join(d, "fdinfo", "3"), "pos:\t0\nflags:\t02\nmnt_id:\t24\nino:\t1\n")
            write_kfd(os.path.join(out, "kfd-proc", str(pid)),
                      {"pid": pid, "kfd": {part["gpu_id"]: {
                          "vram": GIB, "sdma": held, "cu": held % 38, "evicted": 0,
                          "queues": 1, "cu_file": True}}})
            held += 1
        else:
            write(os.path.join(d, "cgroup"), cgroup_text("host-v2"))
        for fd, t in links.items():
            os.symlink(t, os.path.join(d, "fd", str(fd)))
    return held


def main(argv=None):
    ap = argparse.ArgumentParser(description="Generate the ownership process fixtures.")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--bench", nargs=4, metavar=("N", "M", "OUT", "SYS"))
    ap.add_argument("fixtures", nargs="?", help="fixture directory, normally tests/fixtures")
    args = ap.parse_args(argv)
    if args.bench:
        n, m, out, sysroot = args.bench
        held = bench(int(n), int(m), out, sysroot)
        print("wrote %s: %s processes, %d holding render nodes" % (out, n, held))
        return 0
    if not args.fixtures:
        ap.error("FIXTURES is required")
    if args.check:
        return check(args.fixtures)
    generate(args.fixtures, args.fixtures)
    print("wrote %s/%s/{%s} and %s/%s" % (args.fixtures, TREE, ",".join(OWNED), args.fixtures,
                                         PODRES_OUT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
