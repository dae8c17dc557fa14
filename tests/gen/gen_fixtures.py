#!/usr/bin/env python3
"""Generate the exporter's sysfs fixture trees under tests/fixtures (stdlib only, deterministic).

The exporter must be tested against layouts no developer machine has: 8 x MI300X in CPX mode,
spare XCP render nodes in SPX, per-partition xcp_metrics files, both XCP platform-device
naming forms, and deliberately broken cards. Writing such trees by hand drifts: a busy value
in gpu_busy_percent stops matching the gpu_metrics blob, or a render minor stops matching KFD
topology. This script builds every tree from one table of values, writes the value tables into
each tree's GENERATED.md from the same data, and can verify that what is committed is exactly
what it would write.

Real captures (read from --captures, default tests/fixtures/real) are copied verbatim where a
tree is "built around" them; everything else is generated. gpu_metrics and xcp_metrics blobs
come from gpu_metrics_blob.py in this directory.

usage:
    gen_fixtures.py OUTDIR            (re)write the trees into OUTDIR (tests/fixtures)
    gen_fixtures.py --check OUTDIR    regenerate into a temp dir and compare with OUTDIR

A tree's root may later hold proc/ and dev/ written by others: this script owns only the
top-level entries it generates (sys/, GENERATED.md and, for procfs-drm, the copied notes), and
both writing and checking touch nothing else.
"""

import argparse
import os
import shutil
import stat
import sys
import tempfile
import zlib

sys.dont_write_bytecode = True  # keep tests/gen free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_metrics_blob  # noqa: E402  (needs the sys.path entry above)

GIB = 1 << 30
MIB = 1 << 20
DRM_MAJOR = 226
RENDER_BASE = 128

# ---- tree model -------------------------------------------------------------------------------


class Tree:
    """An in-memory fixture tree: relative path -> ("file", bytes) or ("link", target)."""

    def __init__(self, name):
        self.name = name
        self.entries = {}

    def add(self, path, kind, value):
        if path in self.entries:
            raise ValueError("%s: duplicate entry '%s'" % (self.name, path))
        self.entries[path] = (kind, value)

    def file(self, path, data):
        if isinstance(data, str):
            data = data.encode()
        self.add(path, "file", data)

    def line(self, path, value):
        """A sysfs attribute: the value followed by a newline, as the kernel prints it."""
        self.file(path, "%s\n" % (value,))

    def link(self, path, target):
        self.add(path, "link", target)

    def rel_link(self, path, target_path):
        """A symlink at `path` to the tree path `target_path`, written relative like sysfs.

        kernfs (kernfs_get_target_path) climbs to an ancestor of the target's parent, so the
        target's own name is always spelled out: a DRM node's `device` reads
        `../../../0000:05:00.0`, never `../..`. Tools take the BDF from the link's last part.
        """
        up = os.path.relpath(os.path.dirname(target_path), os.path.dirname(path))
        name = os.path.basename(target_path)
        self.link(path, name if up == "." else up + "/" + name)

    def validate(self):
        """Every link must resolve inside the tree; nothing may be written through a link."""
        dirs = set()
        for path in self.entries:
            parts = path.split("/")
            for i in range(1, len(parts)):
                prefix = "/".join(parts[:i])
                if prefix in self.entries:
                    raise ValueError("%s: '%s' is used as a directory" % (self.name, prefix))
                dirs.add(prefix)
        for path, (kind, value) in self.entries.items():
            if kind != "link":
                continue
            dest = os.path.normpath(os.path.join(os.path.dirname(path), value))
            if dest not in dirs and self.entries.get(dest, ("link",))[0] != "file":
                raise ValueError("%s: link '%s' -> '%s' does not resolve"
                                 % (self.name, path, value))


def write_tree(tree, root):
    tops = sorted({p.split("/")[0] for p in tree.entries})
    for top in tops:
        full = os.path.join(root, top)
        if os.path.islink(full) or os.path.isfile(full):
            os.unlink(full)
        elif os.path.isdir(full):
            shutil.rmtree(full)
    for path, (kind, value) in sorted(tree.entries.items()):
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if kind == "file":
            with open(full, "wb") as f:
                f.write(value)
        else:
            os.symlink(value, full)


def read_tree(root, tops):
    """Read the committed entries below the given top-level names (directories are implicit)."""
    entries = {}

    def scan(rel):
        full = os.path.join(root, rel)
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(st.st_mode):
            entries[rel] = ("link", os.readlink(full))
        elif stat.S_ISDIR(st.st_mode):
            for name in sorted(os.listdir(full)):
                scan(rel + "/" + name)
        elif stat.S_ISREG(st.st_mode):
            with open(full, "rb") as f:
                entries[rel] = ("file", f.read())
        else:
            entries[rel] = ("other", oct(st.st_mode))

    for top in tops:
        scan(top)
    return entries


def diff_entries(want, have, limit=10):
    """Differences between generated (`want`) and committed (`have`) entries, first `limit`."""
    out = []
    for path in sorted(set(want) | set(have)):
        w, h = want.get(path), have.get(path)
        if w == h:
            continue
        if h is None:
            out.append("missing (generated but not committed): %s" % path)
        elif w is None:
            out.append("extra (committed but not generated): %s" % path)
        elif w[0] != h[0]:
            out.append("type differs: %s (committed %s, generated %s)" % (path, h[0], w[0]))
        elif w[0] == "link":
            out.append("symlink target differs: %s (committed '%s', generated '%s')"
                       % (path, h[1], w[1]))
        else:
            at = next((i for i, (a, b) in enumerate(zip(w[1], h[1])) if a != b),
                      min(len(w[1]), len(h[1])))
            out.append("content differs: %s (committed %d bytes, generated %d bytes, first "
                       "difference at byte %d)" % (path, len(h[1]), len(w[1]), at))
        if len(out) >= limit:
            break
    return out


# ---- helpers ----------------------------------------------------------------------------------


def round_half_up(num, den):
    """num/den rounded half up; Python's round() would round 12.5 to 12."""
    return (2 * num + den) // (2 * den)


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def parse_properties(data):
    """KFD `properties`: one `key value` per line -> ordered dict of strings."""
    props = {}
    for line in data.decode().splitlines():
        key, _, value = line.partition(" ")
        props[key] = value
    return props


def edit_properties(data, changes):
    """Replace values of existing keys, keeping order and every other byte."""
    lines = data.decode().split("\n")
    seen = set()
    for i, line in enumerate(lines):
        key = line.partition(" ")[0]
        if key in changes:
            lines[i] = "%s %s" % (key, changes[key])
            seen.add(key)
    missing = set(changes) - seen
    if missing:
        raise ValueError("properties lack keys: %s" % ", ".join(sorted(missing)))
    return "\n".join(lines).encode()


def kfd_gpu_id(unique_id, location_id, used):
    """A 16-bit gpu_id, like the kernel's hash (kfd_topology.c) but from a documented formula.

    crc32("<unique_id>:<location_id>") & 0xffff, bumped by one while it is 0 or already used.
    """
    gid = zlib.crc32(("%d:%d" % (unique_id, location_id)).encode()) & 0xFFFF
    while gid == 0 or gid in used:
        gid = (gid + 1) & 0xFFFF
    used.add(gid)
    return gid


class Captures:
    """Paths of the real captures this generator reads."""

    def __init__(self, root):
        self.root = root
        self.procfs = os.path.join(root, "procfs-sys-drm")
        self.kfd_cpx = os.path.join(root, "kfd-topology", "mi300x-cpx", "topology")
        self.h200 = os.path.join(root, "pci-nvidia-h200-vm")

    def missing(self):
        return [p for p in (self.procfs, self.kfd_cpx, self.h200) if not os.path.isdir(p)]

    def cpx_nodes(self):
        """{node number: properties bytes} of the MI300X CPX capture."""
        ndir = os.path.join(self.kfd_cpx, "nodes")
        return {int(n): read_bytes(os.path.join(ndir, n, "properties"))
                for n in os.listdir(ndir)}


# ---- sysfs building blocks --------------------------------------------------------------------

MI300X = {
    "device": 0x74A1, "subsys": (0x1002, 0x74A1), "class": 0x120000,
    "product": "AMD Instinct MI300X", "vram_total": 206158430208,
}
# Used only in the broken tree: a GPU without compute partitions.
MI210 = {
    "device": 0x740F, "subsys": (0x1002, 0x0C34), "class": 0x038000,
    "product": "AMD Instinct MI210", "vram_total": 68702699520,
}


def pci_dir(bdf):
    return "sys/devices/pci0000:00/" + bdf


def pci_uevent(bdf, ident, driver="amdgpu"):
    dev = ident["device"]
    sv, sd = ident["subsys"]
    cls = ident["class"]
    return ("DRIVER=%s\nPCI_CLASS=%X\nPCI_ID=1002:%04X\nPCI_SUBSYS_ID=%04X:%04X\n"
            "PCI_SLOT_NAME=%s\nMODALIAS=pci:v00001002d%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X\n"
            % (driver, cls, dev, sv, sd, bdf, dev, sv, sd, cls >> 16, (cls >> 8) & 0xFF,
               cls & 0xFF))


def pci_device_files(bdf, ident, v):
    """Files of an amdgpu PCI device directory; `v` holds the per-GPU values."""
    files = {
        "uevent": pci_uevent(bdf, ident),
        "vendor": "0x1002\n",
        "device": "0x%04x\n" % ident["device"],
        "subsystem_vendor": "0x%04x\n" % ident["subsys"][0],
        "subsystem_device": "0x%04x\n" % ident["subsys"][1],
        "class": "0x%06x\n" % ident["class"],
        "unique_id": "%016x\n" % v["unique_id"],
        "product_name": ident["product"] + "\n",
        "serial_number": v["serial"] + "\n",
        "gpu_busy_percent": "%d\n" % v["gpu_busy"],
        "mem_busy_percent": "%d\n" % v["mem_busy"],
        "mem_info_vram_total": "%d\n" % ident["vram_total"],
        "mem_info_vram_used": "%d\n" % v["vram_used"],
        "mem_info_vis_vram_total": "%d\n" % ident["vram_total"],
        "mem_info_vis_vram_used": "%d\n" % v["vram_used"],
        "mem_info_gtt_total": "%d\n" % GTT_TOTAL,
        "mem_info_gtt_used": "%d\n" % v["gtt_used"],
        "numa_node": "%d\n" % v["numa_node"],
    }
    return files


def add_files(tree, base, files):
    for name, data in sorted(files.items()):
        tree.file(base + "/" + name, data)


def add_drm_node(tree, devdir, name, minor):
    """A DRM minor below `devdir`/drm with class and dev/char links, as drm_sysfs.c creates."""
    node = devdir + "/drm/" + name
    tree.line(node + "/dev", "%d:%d" % (DRM_MAJOR, minor))
    tree.file(node + "/uevent", "MAJOR=%d\nMINOR=%d\nDEVNAME=dri/%s\nDEVTYPE=drm_minor\n"
              % (DRM_MAJOR, minor, name))
    tree.rel_link(node + "/device", devdir)
    tree.rel_link("sys/class/drm/" + name, node)
    tree.rel_link("sys/dev/char/%d:%d" % (DRM_MAJOR, minor), node)


def add_drm_pair(tree, devdir, card):
    add_drm_node(tree, devdir, "card%d" % card, card)
    add_drm_node(tree, devdir, "renderD%d" % (RENDER_BASE + card), RENDER_BASE + card)


def add_pci_gpu(tree, bdf, files, card):
    devdir = pci_dir(bdf)
    add_files(tree, devdir, files)
    tree.rel_link("sys/bus/pci/devices/" + bdf, devdir)
    add_drm_pair(tree, devdir, card)
    return devdir


def add_hwmon(tree, devdir, index, files):
    hdir = "%s/hwmon/hwmon%d" % (devdir, index)
    add_files(tree, hdir, files)
    tree.rel_link(hdir + "/device", devdir)
    tree.rel_link("sys/class/hwmon/hwmon%d" % index, hdir)


def xcp_platform_name(n, old_naming):
    return ("amdgpu_xcp.%d" if old_naming else "amdgpu_xcp_%d") % n


def add_xcp_device(tree, n, card, old_naming):
    """Partition platform device N (amdxcp) with its card/renderD pair; returns its dir."""
    name = xcp_platform_name(n, old_naming)
    devdir = "sys/devices/platform/" + name
    # The old form registers name "amdgpu_xcp" with id N, so the modalias has no number;
    # the new form registers "amdgpu_xcp_N" with id -1.
    modalias = "amdgpu_xcp" if old_naming else name
    tree.line(devdir + "/uevent", "MODALIAS=platform:" + modalias)
    add_drm_pair(tree, devdir, card)
    return devdir


def mi300_hwmon_files(v, average=True, inst=False):
    files = {
        "name": "amdgpu\n",
        "temp2_input": "%d\n" % (v["hotspot"] * 1000),
        "temp2_label": "junction\n",
        "temp3_input": "%d\n" % (v["mem_temp"] * 1000),
        "temp3_label": "mem\n",
    }
    if average:
        files["power1_average"] = "%d\n" % v["power_average_uw"]
    if inst:
        files["power1_input"] = "%d\n" % v["power_input_uw"]
    return files


def add_kfd_common(tree, caps):
    topo = "sys/class/kfd/kfd/topology"
    tree.file(topo + "/generation_id", read_bytes(os.path.join(caps.kfd_cpx, "generation_id")))
    tree.file(topo + "/system_properties",
              read_bytes(os.path.join(caps.kfd_cpx, "system_properties")))
    return topo


def add_kfd_node(tree, topo, n, props, gpu_id, mem_bytes=None):
    tree.file("%s/nodes/%d/properties" % (topo, n), props)
    tree.line("%s/nodes/%d/gpu_id" % (topo, n), gpu_id)
    tree.file("%s/nodes/%d/name" % (topo, n), b"")
    if mem_bytes is not None:
        tree.file("%s/nodes/%d/mem_banks/0/properties" % (topo, n), mem_bank_properties(mem_bytes))


def mem_bank_properties(size):
    """A KFD memory bank `properties` file (kfd_topology.c prints these keys); values other than
    size_in_bytes are plausible MI300X values, not read from hardware."""
    return ("heap_type 1\nsize_in_bytes %d\nflags 0\nwidth 8192\nmem_clk_max %d\n"
            % (size, UCLK)).encode()


MEM_BANK_NOTE = (
    "* `nodes/<n>/mem_banks/0/properties` for every GPU node (the capture has `mem_banks_count 1` "
    "but no bank files): `heap_type 1`, `size_in_bytes` = the partition's memory (192 GiB divided "
    "by the NPS mode's number of memory partitions), `flags 0`, `width 8192`, `mem_clk_max "
    "1300`. Generated, UNCONFIRMED on hardware.\n")


GTT_TOTAL = 512 * GIB
CPX_CAPTURE_NOTE = ("`tests/fixtures/real/kfd-topology/mi300x-cpx/` (ROCm/k8s-device-plugin "
                    "`testdata/topo-mi300-cpx/`, Apache-2.0; see that folder's SOURCE.md)")
DRM_NODE_NOTE = (
    "Every DRM node directory `<device>/drm/<node>/` holds `dev` (`226:<minor>`), `uevent` "
    "(`MAJOR=226`, `MINOR=<minor>`, `DEVNAME=dri/<node>`, `DEVTYPE=drm_minor`) and `device`, a "
    "relative symlink to its device directory. `sys/class/drm/<node>` and "
    "`sys/dev/char/226:<minor>` are relative symlinks to the node directory; "
    "`sys/bus/pci/devices/<BDF>` links to the PCI device and `sys/class/hwmon/hwmon<k>` to the "
    "hwmon directory (which has a `device` link back). `driver` and `subsystem` links, `power/` "
    "and the PCI bridge hierarchy of a real system are not generated.\n")


def pci_device_note(ident):
    return (
        "PCI device files: `uevent` (`DRIVER=amdgpu`, `PCI_CLASS=%X`, `PCI_ID=1002:%04X`, "
        "`PCI_SUBSYS_ID=%04X:%04X`, `PCI_SLOT_NAME`, `MODALIAS`), `vendor` 0x1002, `device` "
        "0x%04x, `subsystem_vendor`, `subsystem_device`, `class` 0x%06x, `unique_id` (16 hex "
        "digits; `%%016x` of the KFD unique_id where there is KFD), `product_name` \"%s\", "
        "`serial_number`, `gpu_busy_percent`, "
        "`mem_busy_percent`, `mem_info_vram_total` = `mem_info_vis_vram_total` = %d, "
        "`mem_info_vram_used` = `mem_info_vis_vram_used`, `mem_info_gtt_total` %d, "
        "`mem_info_gtt_used`, `numa_node`. The PCI class and subsystem ids are assumptions "
        "(UNCONFIRMED on hardware).\n"
        % (ident["class"], ident["device"], ident["subsys"][0], ident["subsys"][1],
           ident["device"], ident["class"], ident["product"], ident["vram_total"], GTT_TOTAL))


# ---- tree 1: procfs-drm -----------------------------------------------------------------------


def build_procfs_drm(caps):
    tree = Tree("procfs-drm")
    src = os.path.join(caps.procfs, "sys")
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames
                                        if os.path.islink(os.path.join(dirpath, d))]):
            full = os.path.join(dirpath, name)
            rel = "sys/" + os.path.relpath(full, src)
            if os.path.islink(full):
                tree.link(rel, os.readlink(full))
            else:
                tree.file(rel, read_bytes(full))
    note = ("> Copy of `tests/fixtures/real/procfs-sys-drm/%s`, written by `tests/gen/gen_fixtures.py`."
            " The tree `sys/` next to this file is a verbatim copy of that capture's `sys/`.\n\n")
    for doc in ("SOURCE.md", "SYMLINKS.md"):
        tree.file(doc, (note % doc).encode() + read_bytes(os.path.join(caps.procfs, doc)))

    card0 = "sys/class/drm/card0/device/"
    keys = ["gpu_busy_percent", "mem_busy_percent", "mem_info_vram_total", "mem_info_vram_used",
            "mem_info_vis_vram_total", "mem_info_vis_vram_used", "mem_info_gtt_total",
            "mem_info_gtt_used", "mem_info_vram_vendor", "power_dpm_force_performance_level",
            "unique_id", "product_name", "serial_number"]
    rows = []
    for k in keys:
        ent = tree.entries.get(card0 + k)
        rows.append(("`%s`" % k, "(absent)" if ent is None else
                     ("`%s`" % ent[1].decode().strip() if ent[1].strip() else "(empty)")))
    uevent = tree.entries[card0 + "uevent"][1].decode()
    md = ["# procfs-drm: what is generated\n",
          "Nothing. `sys/` is a byte-for-byte copy of the real capture "
          "`tests/fixtures/real/procfs-sys-drm/sys` (prometheus/procfs `testdata/fixtures.ttar`, "
          "Apache-2.0); `SOURCE.md` and `SYMLINKS.md` are copies of that capture's notes with a "
          "one-line header. `tests/gen/gen_fixtures.py --check` verifies all three.\n",
          "## What the exporter should report\n",
          "* `card0`: amdgpu (`uevent` has `DRIVER=amdgpu`, `PCI_ID=1002:687F`, slot "
          "`0000:09:00.0`), Vega 10 class, no partition files, no `gpu_metrics`, no `hwmon/`.\n"
          "* `card1`: i915 (`DRIVER=i915`) with two connectors: must be skipped by an amdgpu "
          "filter.\n"
          "* `device` is a plain directory here (not a symlink), and there are no `renderD*`, "
          "`sys/dev/char` or KFD entries: the exporter must work with the class path alone.\n",
          "card0 values (read from the copied files when this document was generated):\n",
          md_table(["file", "value"], rows),
          "card0 `uevent`:\n\n```\n" + uevent + "```\n"]
    tree.file("GENERATED.md", "\n".join(md))
    return tree


# ---- tree 2: mi300x-cpx -----------------------------------------------------------------------

# Busy percent per partition (CPX: one XCC per partition). Each row is one physical GPU, in
# location_id order. The point of each row is in CPX_BUSY_WHY.
CPX_BUSY = [
    [0, 0, 0, 0, 0, 0, 0, 0],
    [100, 100, 100, 100, 100, 100, 100, 100],
    [0, 100, 37, 0, 0, 0, 0, 0],
    [100, 0, 0, 0, 0, 0, 0, 0],
    [0, 100, 100, 100, 100, 100, 100, 100],
    [37, 12, 55, 3, 99, 64, 1, 80],
    [37, 37, 37, 37, 37, 37, 37, 37],
    [0, 0, 0, 0, 0, 0, 0, 37],
]
CPX_BUSY_WHY = [
    "whole GPU idle: every partition reclaimable",
    "whole GPU busy: nothing reclaimable",
    "mixed: one busy, one mid, six idle partitions",
    "only partition 0 busy: an exporter that reads partition 0 only calls it busy; mean 12.5 "
    "rounds half up to 13",
    "partition 0 idle, 1..7 busy: a partition-0-only exporter wrongly calls it idle; mean 87.5 "
    "-> 88",
    "eight distinct values, including 1 % and 99 % near thresholds",
    "uniform mid load",
    "only partition 7 busy: the generated KFD node 65 (absent from the capture) is the busy one",
]
CPX_MEM_BUSY = [0, 83, 21, 9, 64, 47, 30, 7]
CPX_VRAM_USED_MIB = [272, 184320, 98304, 24576, 153600, 61440, 36864, 12288]
CPX_HOTSPOT = [38, 81, 57, 49, 74, 61, 55, 42]
CPX_MEM_TEMP = [35, 70, 50, 44, 66, 54, 49, 38]
CPX_POWER_W = [140, 745, 410, 300, 620, 480, 390, 160]
GFXCLK_BUSY, GFXCLK_IDLE, UCLK = 2100, 500, 1300


def gpu_values(g, unique_id, busy, mem_busy, vram_mib, hotspot, mem_temp, power_w, numa):
    v = {
        "unique_id": unique_id,
        "serial": "SYNTH%07d" % g,
        "gpu_busy": round_half_up(sum(busy), len(busy)),
        "mem_busy": mem_busy,
        "vram_used": vram_mib * MIB,
        "gtt_used": (g + 1) * 11 * MIB,
        "numa_node": numa,
        "hotspot": hotspot,
        "mem_temp": mem_temp,
        "power_w": power_w,
        "power_average_uw": power_w * 1000000,
        "power_input_uw": power_w * 1000000,
        "energy": (g + 1) * 1000000000,
    }
    return v


def metrics_common(v, xcc_busy):
    return {
        "temperature_hotspot": v["hotspot"],
        "temperature_mem": v["mem_temp"],
        "curr_socket_power": v["power_w"],
        "average_gfx_activity": v["gpu_busy"],
        "average_umc_activity": v["mem_busy"],
        "energy_accumulator": v["energy"],
        "current_gfxclk": [GFXCLK_BUSY if b > 0 else GFXCLK_IDLE for b in xcc_busy],
        "current_uclk": UCLK,
    }


def cpx_gpus(caps):
    """Group the capture's GPU nodes by physical GPU and add the missing partition node."""
    nodes = caps.cpx_nodes()
    gpus = {}
    for n, data in sorted(nodes.items()):
        p = parse_properties(data)
        if p["simd_count"] == "0":
            continue
        gpus.setdefault(int(p["unique_id"]), []).append((int(p["location_id"]), n, data))
    order = sorted(gpus.values(), key=lambda parts: min(parts)[0])
    if len(order) != 8:
        raise ValueError("capture has %d GPUs, expected 8" % len(order))
    generated = []
    last = sorted(order[-1])
    if len(last) == 7:
        # The capture lacks partition 7 of the last GPU: derive it from partition 6.
        loc, n, data = last[-1]
        p = parse_properties(data)
        new_n = max(nodes) + 1
        new_props = edit_properties(data, {
            "location_id": loc + 1,
            "drm_render_minor": int(p["drm_render_minor"]) + 1,
            "simd_id_base": int(p["simd_id_base"]) + 40,
        })
        last.append((loc + 1, new_n, new_props))
        nodes[new_n] = new_props
        generated.append(new_n)
    order[-1] = last
    return nodes, [sorted(parts) for parts in order], generated


# gpu_metrics v1_9 variant of mi300x-cpx: the accumulators. Raw values are what a driver that
# has run for a while holds; the exporter's counters start at 0 whatever they are. A busy
# accumulator of 0 reads as "not filled" (unknown), so every partition has a nonzero one.
V19_COUNTER0 = 54536484
V19_NO_ACC = (2, 5)      # GPU 2 partition 5: gfx_busy_acc all-ones -> no accumulator series
V19_GPU_COUNTER_ONLY = 7  # GPU 7's xcp_metrics use the Sept 2025 list: no counter of their own


def v19_counter(g):
    return V19_COUNTER0 + 1000 * g


def v19_busy_acc(g, p, busy):
    # lifetime average busy (busy + 3) % of the counter, per XCC
    return v19_counter(g) * (busy + 3)


def v19_gpu_table(v, busy, g):
    counter = v19_counter(g)
    acc = [v19_busy_acc(g, p, b) for p, b in enumerate(busy)]
    if V19_NO_ACC[0] == g:
        acc[V19_NO_ACC[1]] = None
    return gpu_metrics_blob.build_attr("gpu", {
        "temperature_hotspot": v["hotspot"], "temperature_mem": v["mem_temp"],
        "temperature_vrsoc": v["hotspot"] - 3, "curr_socket_power": v["power_w"],
        "average_gfx_activity": v["gpu_busy"], "average_umc_activity": v["mem_busy"],
        "energy_accumulator": v["energy"], "accumulation_counter": counter,
        "prochot_residency_acc": 0, "ppt_residency_acc": counter // (g + 2),
        "socket_thm_residency_acc": 0, "vr_thm_residency_acc": 0,
        "hbm_thm_residency_acc": 17 * g,
        "pcie_link_width": 16, "pcie_link_speed": 320,
        # U32 in this list: the driver's value has wrapped, as a real one does within hours
        "gfx_activity_acc": round_half_up(sum(a for a in acc if a), 8) % (1 << 32),
        "current_gfxclk": [GFXCLK_BUSY if b > 0 else GFXCLK_IDLE for b in busy],
        "current_uclk": UCLK, "gfx_busy_inst": busy, "gfx_busy_acc": acc,
    })


def v19_partition_table(g, p, busy):
    acc = None if (g, p) == V19_NO_ACC else v19_busy_acc(g, p, busy)
    vals = {"current_gfxclk": [GFXCLK_BUSY if busy > 0 else GFXCLK_IDLE],
            "current_uclk": UCLK, "gfx_busy_inst": [busy], "gfx_busy_acc": [acc]}
    if g == V19_GPU_COUNTER_ONLY:
        return gpu_metrics_blob.build_attr("partition", vals, "sept2025")
    vals["accumulation_counter"] = v19_counter(g) + p
    vals["firmware_timestamp"] = 100000 * (v19_counter(g) + p)
    return gpu_metrics_blob.build_attr("partition", vals, "acc-counter")


def build_mi300x_cpx(caps, v19=False):
    tree = Tree("mi300x-cpx-v19" if v19 else "mi300x-cpx")
    nodes, gpus, generated = cpx_gpus(caps)
    topo = add_kfd_common(tree, caps)
    used = set()
    gpu_ids = {}
    for n in sorted(nodes):
        p = parse_properties(nodes[n])
        gid = 0 if p["simd_count"] == "0" else kfd_gpu_id(int(p["unique_id"]),
                                                            int(p["location_id"]), used)
        gpu_ids[n] = gid
        add_kfd_node(tree, topo, n, nodes[n], gid,
                     None if p["simd_count"] == "0" else MI300X["vram_total"] // 4)

    part_rows, gpu_rows, metric_rows = [], [], []
    for g, parts in enumerate(gpus):
        loc0, _, data0 = parts[0]
        props0 = parse_properties(data0)
        unique_id = int(props0["unique_id"])
        bus = loc0 >> 8
        bdf = "0000:%02x:00.0" % bus
        busy = CPX_BUSY[g]
        v = gpu_values(g, unique_id, busy, CPX_MEM_BUSY[g], CPX_VRAM_USED_MIB[g], CPX_HOTSPOT[g],
                       CPX_MEM_TEMP[g], CPX_POWER_W[g], 0 if g < 4 else 1)
        if g == 0:
            # Both power files on GPU 0, with different values, so a test sees which was read.
            v["power_input_uw"] = v["power_average_uw"] + 2000000
        files = pci_device_files(bdf, MI300X, v)
        files["current_compute_partition"] = "CPX\n"
        files["available_compute_partition"] = "SPX, DPX, QPX, CPX\n"
        files["current_memory_partition"] = "NPS4\n"
        files["available_memory_partition"] = "NPS1, NPS4\n"
        fields = metrics_common(v, busy)
        fields["num_partition"] = 8
        fields["xcp_stats"] = [{"gfx_busy_inst": [b]} for b in busy]
        if v19:
            files["gpu_metrics"] = v19_gpu_table(v, busy, g)
            files["xcp/xcp_metrics"] = v19_partition_table(g, 0, busy[0])
        else:
            files["gpu_metrics"] = gpu_metrics_blob.build("v1_8", fields)
        devdir = add_pci_gpu(tree, bdf, files, 8 * g)
        add_hwmon(tree, devdir, g, mi300_hwmon_files(v, average=(g % 2 == 0 or g == 0),
                                                     inst=(g % 2 == 1 or g == 0)))
        for p, (loc, n, data) in enumerate(parts):
            props = parse_properties(data)
            card = 8 * g + p
            if (loc & 7) != p or int(props["drm_render_minor"]) != RENDER_BASE + card:
                raise ValueError("node %d: location_id %d / minor %s do not fit GPU %d "
                                 "partition %d" % (n, loc, props["drm_render_minor"], g, p))
            if p == 0:
                where = "PCI `%s`" % bdf
            else:
                xdir = add_xcp_device(tree, 7 * g + p - 1, card, old_naming=False)
                where = "`%s`" % xdir[len("sys/devices/"):]
                if v19:
                    tree.file(xdir + "/xcp/xcp_metrics", v19_partition_table(g, p, busy[p]))
            part_rows.append((g, bdf, p, str(n) + (" (generated)" if n in generated else ""),
                              loc, gpu_ids[n], "card%d" % card, "renderD%d" % (RENDER_BASE + card),
                              where, busy[p]))
        gpu_rows.append((g, bdf, "%016x" % unique_id, v["serial"], v["gpu_busy"], v["mem_busy"],
                         v["vram_used"], v["gtt_used"], v["numa_node"], "hwmon%d" % g,
                         v["hotspot"] * 1000, v["mem_temp"] * 1000,
                         v["power_average_uw"] if (g % 2 == 0 or g == 0) else "absent",
                         v["power_input_uw"] if (g % 2 == 1 or g == 0) else "absent"))
        metric_rows.append((g, v["hotspot"], v["mem_temp"], v["power_w"], v["gpu_busy"],
                            v["mem_busy"], v["energy"],
                            "/".join(str(c) for c in fields["current_gfxclk"]),
                            " ".join(str(b) for b in busy)))

    busy_rows = [(g, bdf_row[1]) + tuple(CPX_BUSY[g]) + (gpu_rows[g][4], CPX_BUSY_WHY[g])
                 for g, bdf_row in enumerate(gpu_rows)]
    gen_nodes = ", ".join(str(n) for n in generated)
    md = [
        "# mi300x-cpx: 8 x MI300X, CPX + NPS4 (64 partitions)\n",
        "Written by `tests/gen/gen_fixtures.py`; do not edit by hand (`make fixtures` rewrites, "
        "`make check-fixtures` verifies).\n",
        "## Real and generated files\n",
        "Copied verbatim from the real capture %s: `sys/class/kfd/kfd/topology/generation_id`, "
        "`system_properties` and `nodes/0..64/properties` (io_links are not copied).\n"
        % CPX_CAPTURE_NOTE,
        "Generated (everything else):\n",
        "* `sys/class/kfd/kfd/topology/nodes/%s/properties`: the partition node missing from the "
        "capture (last GPU, partition 7), copied from node 64 with `location_id` +1 (58631), "
        "`drm_render_minor` +1 (191) and `simd_id_base` +40 (the capture's step between "
        "partitions); same `unique_id` and `hive_id` as its GPU.\n" % gen_nodes,
        "* `nodes/<n>/gpu_id` for every node: 0 on CPU nodes; on GPU nodes "
        "`crc32(\"<unique_id>:<location_id>\") & 0xffff`, bumped by one while 0 or taken "
        "(values in the table below). The capture has no gpu_id files.\n",
        "* `nodes/<n>/name`: empty for every node, as in the single-GPU capture.\n",
        "* all of `sys/devices/`, `sys/class/drm/`, `sys/class/hwmon/`, `sys/bus/pci/devices/`, "
        "`sys/dev/char/`.\n",
        "## Layout\n",
        "GPU g is the g-th unique_id in `location_id` order; BDF `0000:BB:00.0` with "
        "`BB = location_id >> 8`. Partition p (= `location_id & 7`) of GPU g is `card(8g+p)` / "
        "`renderD(128+8g+p)`; its render minor equals the KFD node's `drm_render_minor`. "
        "Partition 0 is the PCI device itself (`sys/devices/pci0000:00/<BDF>/drm/`); partitions "
        "1..7 are platform devices `sys/devices/platform/amdgpu_xcp_<7g+p-1>/drm/` (new naming, "
        "underscore). The platform devices' `uevent` holds only `MODALIAS=platform:amdgpu_xcp_<N>`"
        ": the real content is unknown (guess; amdxcp registers the platform device without "
        "binding a platform driver, so no `DRIVER=` line is assumed).\n",
        DRM_NODE_NOTE,
        pci_device_note(MI300X),
        "Partition files on every PCI device: `current_compute_partition` CPX, "
        "`available_compute_partition` `SPX, DPX, QPX, CPX`, `current_memory_partition` NPS4, "
        "`available_memory_partition` `NPS1, NPS4`.\n",
        "### Partitions\n",
        md_table(["GPU", "BDF", "partition", "KFD node", "location_id", "gpu_id", "card",
                  "render", "device dir", "busy %"], part_rows),
        "## Busy pattern (percent per partition)\n",
        "`gpu_busy_percent` and gpu_metrics `average_gfx_activity` are the mean of the GPU's 8 "
        "partitions rounded half up. Partition busy appears only in gpu_metrics "
        "`xcp_stats[p].gfx_busy_inst[0]`.\n",
        md_table(["GPU", "BDF", "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7",
                  "gpu_busy_percent", "why"], busy_rows),
        "## Per-GPU sysfs values\n",
        "Common: `mem_info_vram_total` = `mem_info_vis_vram_total` = 206158430208 (192 GiB), "
        "`mem_info_gtt_total` = %d. `mem_info_vis_vram_used` = `mem_info_vram_used`. hwmon "
        "`name` is `amdgpu`; no `temp1_*` (hidden on MI300); `temp2_label` `junction`, "
        "`temp3_label` `mem`; temperatures in millidegrees, power in microwatts. "
        "`power1_average` exists on even GPUs, `power1_input` on odd GPUs, both on GPU 0 (with "
        "different values).\n" % GTT_TOTAL,
        md_table(["GPU", "BDF", "unique_id", "serial_number", "gpu_busy_percent",
                  "mem_busy_percent", "mem_info_vram_used", "mem_info_gtt_used", "numa_node",
                  "hwmon", "temp2_input", "temp3_input", "power1_average", "power1_input"],
                 gpu_rows),
        "## gpu_metrics (v1_8, 3872 bytes, header 3872/1/8)\n",
        "Set fields: `temperature_hotspot`, `temperature_mem` (°C), `curr_socket_power` (W), "
        "`average_gfx_activity`, `average_umc_activity` (%%), `energy_accumulator` (15.259 µJ "
        "units), `current_gfxclk[0..7]` (MHz: %d for a busy XCC, %d for an idle one), "
        "`current_uclk` %d, `num_partition` 8, `xcp_stats[p].gfx_busy_inst[0]` = busy of "
        "partition p. Every other field, including `gfx_busy_inst[1..7]` and all "
        "`gfx_busy_acc`, is the all-ones sentinel (CPX has one XCC per partition).\n"
        % (GFXCLK_BUSY, GFXCLK_IDLE, UCLK),
        md_table(["GPU", "temperature_hotspot", "temperature_mem", "curr_socket_power",
                  "average_gfx_activity", "average_umc_activity", "energy_accumulator",
                  "current_gfxclk", "xcp_stats[0..7].gfx_busy_inst[0]"], metric_rows),
        "## KFD memory banks\n",
        MEM_BANK_NOTE.replace("the partition's memory (192 GiB divided by the NPS mode's number "
                              "of memory partitions)", "%d (192 GiB / 4, NPS4)"
                              % (MI300X["vram_total"] // 4)),
    ]
    if v19:
        md = v19_markdown(md, gpus)
    tree.file("GENERATED.md", "\n".join(md))
    return tree


def v19_markdown(md, gpus):
    """mi300x-cpx's document with its gpu_metrics section replaced by the v1_9 one."""
    md = list(md)
    md[0] = ("# mi300x-cpx-v19: 8 x MI300X, CPX + NPS4 (64 partitions), gpu_metrics v1_9 and "
             "xcp_metrics v1_1\n")
    md.insert(1, "The same tree as `mi300x-cpx` (same KFD nodes, DRM nodes, sysfs values and busy "
              "pattern) as a current driver (ROCm 7.2, amdgpu DKMS 6.16) serves it: "
              "`gpu_metrics` is the v1_9 attribute table and every partition has an "
              "`xcp/xcp_metrics` file in the v1_1 attribute format (below). No `proc/`.\n")
    start = next(i for i, x in enumerate(md) if x.startswith("## gpu_metrics (v1_8"))
    rows = []
    for g in range(len(gpus)):
        busy = CPX_BUSY[g]
        rows.append((g, v19_counter(g), v19_counter(g) // (g + 2), 17 * g,
                     " ".join("-" if (g, p) == V19_NO_ACC else str(v19_busy_acc(g, p, b))
                              for p, b in enumerate(busy)),
                     "GPU's" if g == V19_GPU_COUNTER_ONLY else
                     "own: %d + p" % v19_counter(g)))
    md[start:start + 3] = [
        "## gpu_metrics (v1_9, SMU 13.0.6 Sept 2025 list, 47 entries, 1150 bytes)\n",
        "Written by `gpu_metrics_blob.build_attr(\"gpu\", ...)`. Set: `temperature_hotspot`, "
        "`temperature_mem`, `temperature_vrsoc` (hotspot - 3), `curr_socket_power`, "
        "`average_gfx_activity`, `average_umc_activity`, `energy_accumulator` (as in mi300x-cpx), "
        "`accumulation_counter` (U32), `prochot_residency_acc` 0, `ppt_residency_acc`, "
        "`socket_thm_residency_acc` 0, `vr_thm_residency_acc` 0, `hbm_thm_residency_acc`, "
        "`pcie_link_width` 16, `pcie_link_speed` 320 (32 GT/s), `gfx_activity_acc` (mean of the "
        "XCC accumulators, half up, modulo 2^32: the U32 field has wrapped), `current_gfxclk[8]`, `current_uclk`, `gfx_busy_inst[8]` and "
        "`gfx_busy_acc[8]` per XCC over the whole device (XCC p = partition p in CPX). Every other "
        "value is all-ones.\n",
        "## xcp_metrics (v1_1)\n",
        "One per partition at `<device dir>/xcp/xcp_metrics` (the PCI device for partition 0, "
        "`amdgpu_xcp_<N>` for 1..7): `current_gfxclk[0]`, `current_uclk`, `gfx_busy_inst[0]` = "
        "busy of the partition, `gfx_busy_acc[0]` (table below); GPUs 0..6 use the list with "
        "`accumulation_counter` (GPU counter + partition index) and `firmware_timestamp` "
        "(15 entries, 626 bytes); GPU %d uses the Sept 2025 list without them (13 entries, 594 "
        "bytes), so its partitions divide by the GPU's counter. GPU %d partition %d has "
        "`gfx_busy_acc` all-ones: no accumulator series for that partition.\n"
        % (V19_GPU_COUNTER_ONLY, V19_NO_ACC[0], V19_NO_ACC[1]),
        md_table(["GPU", "accumulation_counter", "ppt_residency_acc", "hbm_thm_residency_acc",
                  "gfx_busy_acc of partitions 0..7 (= counter x (busy + 3))",
                  "xcp_metrics counter"], rows),
    ]
    return md


# ---- trees 3 and 4: single MI300X in SPX and DPX ----------------------------------------------


def single_gpu_kfd(tree, caps, num_xcc, n_parts):
    """CPU node 0 (copied) + n_parts GPU nodes derived from capture node 2 (GPU 0, part 0)."""
    nodes = caps.cpx_nodes()
    topo = add_kfd_common(tree, caps)
    add_kfd_node(tree, topo, 0, nodes[0], 0)
    base = parse_properties(nodes[2])
    unique_id, loc0 = int(base["unique_id"]), int(base["location_id"])
    used, rows = set(), []
    for p in range(n_parts):
        props = edit_properties(nodes[2], {
            "num_xcc": num_xcc,
            "simd_count": 152 * num_xcc,
            "location_id": loc0 + p,
            "drm_render_minor": RENDER_BASE + p,
            "simd_id_base": int(base["simd_id_base"]) + 40 * num_xcc * p,
        })
        gid = kfd_gpu_id(unique_id, loc0 + p, used)
        add_kfd_node(tree, topo, 1 + p, props, gid, MI300X["vram_total"])
        rows.append((1 + p, loc0 + p, RENDER_BASE + p, num_xcc, 152 * num_xcc, gid))
    kfd_md = [
        "KFD topology: `generation_id`, `system_properties` and node 0 `properties` are copied "
        "from the real capture %s. GPU nodes are generated from capture node 2 (GPU 0, partition "
        "0, `unique_id` %d) with `num_xcc`, `simd_count` (152 per XCC), `location_id`, "
        "`drm_render_minor` and `simd_id_base` (+40 per XCC) changed; `gpu_id` (crc32 formula, "
        "see mi300x-cpx/GENERATED.md; CPU node 0) and empty `name` files are generated for all "
        "nodes.\n" % (CPX_CAPTURE_NOTE, unique_id),
        md_table(["KFD node", "location_id", "drm_render_minor", "num_xcc", "simd_count",
                  "gpu_id"], rows),
        MEM_BANK_NOTE.replace("the partition's memory (192 GiB divided by the NPS mode's number "
                              "of memory partitions)", "%d (192 GiB, NPS1)" % MI300X["vram_total"]),
    ]
    return unique_id, loc0 >> 8, kfd_md


def build_mi300x_spx(caps):
    tree = Tree("mi300x-spx")
    unique_id, bus, kfd_md = single_gpu_kfd(tree, caps, num_xcc=8, n_parts=1)
    bdf = "0000:%02x:00.0" % bus
    xcc = [10, 20, 30, 40, 50, 60, 70, 80]
    v = gpu_values(0, unique_id, xcc, 33, 65536, 60, 52, 550, 0)
    files = pci_device_files(bdf, MI300X, v)
    files["current_compute_partition"] = "SPX\n"
    files["available_compute_partition"] = "SPX, DPX, QPX, CPX\n"
    files["current_memory_partition"] = "NPS1\n"
    files["available_memory_partition"] = "NPS1, NPS4\n"
    fields = metrics_common(v, xcc)
    fields["num_partition"] = 1
    fields["xcp_stats"] = [{"gfx_busy_inst": xcc}]
    files["gpu_metrics"] = gpu_metrics_blob.build("v1_6_rocm", fields)
    devdir = add_pci_gpu(tree, bdf, files, 0)
    add_hwmon(tree, devdir, 0, mi300_hwmon_files(v))
    rows = [(0, "PCI `%s`" % bdf, "card0", "renderD128", "yes (KFD node 1)")]
    for n in range(7):
        xdir = add_xcp_device(tree, n, n + 1, old_naming=True)
        rows.append((n + 1, "`%s`" % xdir[len("sys/devices/"):], "card%d" % (n + 1),
                     "renderD%d" % (RENDER_BASE + n + 1), "no (spare: no KFD node)"))
    md = [
        "# mi300x-spx: one MI300X, SPX + NPS1, old XCP naming, 7 spare render nodes\n",
        "Written by `tests/gen/gen_fixtures.py`; do not edit by hand.\n",
        "## Real and generated files\n",
    ] + kfd_md + [
        "Everything under `sys/devices/`, `sys/class/drm/`, `sys/class/hwmon/`, "
        "`sys/bus/pci/devices/` and `sys/dev/char/` is generated.\n",
        "## Layout\n",
        "The driver allocates the 7 extra XCP DRM devices whatever the mode, so in SPX they exist "
        "but are not partitions: only render minor 128 appears in KFD `drm_render_minor`. They "
        "use the OLD platform-device naming `amdgpu_xcp.<N>` (dot); their `uevent` is "
        "`MODALIAS=platform:amdgpu_xcp` (old form: name `amdgpu_xcp`, id N; a guess, real "
        "content unknown). The exporter must report exactly one partition.\n",
        DRM_NODE_NOTE,
        md_table(["#", "device dir", "card", "render", "valid partition"], rows),
        pci_device_note(MI300X),
        "## Values\n",
        md_table(["file", "value"], [
            ("`current_compute_partition`", "SPX"),
            ("`available_compute_partition`", "`SPX, DPX, QPX, CPX`"),
            ("`current_memory_partition`", "NPS1"),
            ("`available_memory_partition`", "`NPS1, NPS4`"),
            ("`unique_id`", "%016x" % unique_id),
            ("`serial_number`", v["serial"]),
            ("`gpu_busy_percent`", "%d (mean of the 8 XCCs)" % v["gpu_busy"]),
            ("`mem_busy_percent`", v["mem_busy"]),
            ("`mem_info_vram_used`", v["vram_used"]),
            ("`mem_info_gtt_used`", v["gtt_used"]),
            ("`numa_node`", v["numa_node"]),
            ("`hwmon/hwmon0/temp2_input` (junction)", v["hotspot"] * 1000),
            ("`hwmon/hwmon0/temp3_input` (mem)", v["mem_temp"] * 1000),
            ("`hwmon/hwmon0/power1_average`", v["power_average_uw"]),
            ("`hwmon/hwmon0/power1_input`", "absent"),
        ]),
        "## gpu_metrics (v1_6 ROCm layout, 1664 bytes, header 1664/1/6)\n",
        md_table(["field", "value"], [
            ("temperature_hotspot", v["hotspot"]), ("temperature_mem", v["mem_temp"]),
            ("curr_socket_power", v["power_w"]), ("average_gfx_activity", v["gpu_busy"]),
            ("average_umc_activity", v["mem_busy"]), ("energy_accumulator", v["energy"]),
            ("current_gfxclk[0..7]", "2100 each"), ("current_uclk", UCLK),
            ("num_partition", 1),
            ("xcp_stats[0].gfx_busy_inst[0..7]", " ".join(str(b) for b in xcc)),
            ("xcp_stats[1..7]", "all-ones sentinel"),
        ]),
        "Every field not listed is the all-ones sentinel. The single partition's busy is the mean "
        "of its 8 XCCs, %d.\n" % v["gpu_busy"],
    ]
    tree.file("GENERATED.md", "\n".join(md))
    return tree


def build_mi300x_dpx(caps):
    tree = Tree("mi300x-dpx")
    unique_id, bus, kfd_md = single_gpu_kfd(tree, caps, num_xcc=4, n_parts=2)
    bdf = "0000:%02x:00.0" % bus
    part_xcc = [[0, 0, 0, 0], [100, 90, 80, 74]]
    all_xcc = part_xcc[0] + part_xcc[1]
    v = gpu_values(0, unique_id, all_xcc, 41, 98304, 58, 50, 480, 0)
    files = pci_device_files(bdf, MI300X, v)
    files["current_compute_partition"] = "DPX\n"
    files["available_compute_partition"] = "SPX, DPX, QPX, CPX\n"
    files["current_memory_partition"] = "NPS1\n"
    files["available_memory_partition"] = "NPS1, NPS4\n"
    fields = metrics_common(v, all_xcc)
    files["gpu_metrics"] = gpu_metrics_blob.build("v1_5", fields)
    files["xcp/xcp_metrics"] = gpu_metrics_blob.build("partition_v1_0", {
        "current_gfxclk": [GFXCLK_BUSY if b else GFXCLK_IDLE for b in part_xcc[0]],
        "current_uclk": UCLK, "gfx_busy_inst": part_xcc[0]})
    devdir = add_pci_gpu(tree, bdf, files, 0)
    add_hwmon(tree, devdir, 0, mi300_hwmon_files(v, average=True, inst=True))
    rows = [(0, "PCI `%s`" % bdf, "card0", "renderD128", "partition 0 (KFD node 1)",
             "`%s/xcp/xcp_metrics`" % devdir)]
    for n in range(7):
        xdir = add_xcp_device(tree, n, n + 1, old_naming=False)
        if n == 0:
            tree.file(xdir + "/xcp/xcp_metrics", gpu_metrics_blob.build("partition_v1_0", {
                "current_gfxclk": [GFXCLK_BUSY if b else GFXCLK_IDLE for b in part_xcc[1]],
                "current_uclk": UCLK, "gfx_busy_inst": part_xcc[1]}))
        rows.append((n + 1, "`%s`" % xdir[len("sys/devices/"):], "card%d" % (n + 1),
                     "renderD%d" % (RENDER_BASE + n + 1),
                     "partition 1 (KFD node 2)" if n == 0 else "spare (no KFD node)",
                     "`%s/xcp/xcp_metrics`" % xdir if n == 0 else "absent"))
    part_means = [round_half_up(sum(x), len(x)) for x in part_xcc]
    md = [
        "# mi300x-dpx: one MI300X, DPX + NPS1, newer kernel (xcp_metrics files)\n",
        "Written by `tests/gen/gen_fixtures.py`; do not edit by hand.\n",
        "## Real and generated files\n",
    ] + kfd_md + [
        "Everything under `sys/devices/`, `sys/class/drm/`, `sys/class/hwmon/`, "
        "`sys/bus/pci/devices/` and `sys/dev/char/` is generated.\n",
        "## Layout\n",
        "Two partitions of 4 XCCs. gpu_metrics is v1_5 (no `xcp_stats`), so per-partition busy "
        "comes only from the `xcp_metrics` files (`amdgpu_partition_metrics_v1_0`, 488 bytes, "
        "header 488/1/0). The path of that file is derived from the amd-gfx patch, "
        "UNCONFIRMED. Platform devices use the NEW naming `amdgpu_xcp_<N>`; `amdgpu_xcp_1..6` "
        "are spare nodes with no KFD node and no `xcp/` directory (the attribute is visible only "
        "for a valid XCP). Platform `uevent` is `MODALIAS=platform:amdgpu_xcp_<N>` (guess).\n",
        DRM_NODE_NOTE,
        md_table(["#", "device dir", "card", "render", "role", "xcp_metrics"], rows),
        pci_device_note(MI300X),
        "## Values\n",
        md_table(["file", "value"], [
            ("`current_compute_partition`", "DPX"),
            ("`available_compute_partition`", "`SPX, DPX, QPX, CPX`"),
            ("`current_memory_partition`", "NPS1"),
            ("`available_memory_partition`", "`NPS1, NPS4`"),
            ("`unique_id`", "%016x" % unique_id),
            ("`serial_number`", v["serial"]),
            ("`gpu_busy_percent`", "%d (mean of all 8 XCCs)" % v["gpu_busy"]),
            ("`mem_busy_percent`", v["mem_busy"]),
            ("`mem_info_vram_used`", v["vram_used"]),
            ("`mem_info_gtt_used`", v["gtt_used"]),
            ("`numa_node`", v["numa_node"]),
            ("`hwmon/hwmon0/temp2_input` (junction)", v["hotspot"] * 1000),
            ("`hwmon/hwmon0/temp3_input` (mem)", v["mem_temp"] * 1000),
            ("`hwmon/hwmon0/power1_average`", v["power_average_uw"]),
            ("`hwmon/hwmon0/power1_input`", v["power_input_uw"]),
        ]),
        "## gpu_metrics (v1_5, 360 bytes, header 360/1/5)\n",
        md_table(["field", "value"], [
            ("temperature_hotspot", v["hotspot"]), ("temperature_mem", v["mem_temp"]),
            ("curr_socket_power", v["power_w"]), ("average_gfx_activity", v["gpu_busy"]),
            ("average_umc_activity", v["mem_busy"]), ("energy_accumulator", v["energy"]),
            ("current_gfxclk[0..7]", "/".join(str(c) for c in fields["current_gfxclk"])),
            ("current_uclk", UCLK),
        ]),
        "## xcp_metrics (partition_v1_0)\n",
        md_table(["partition", "gfx_busy_inst[0..3]", "gfx_busy_inst[4..7]", "partition busy "
                  "(mean, half up)", "current_gfxclk[0..3]", "current_uclk"],
                 [(p, " ".join(str(b) for b in x), "sentinel", part_means[p],
                   "/".join(str(GFXCLK_BUSY if b else GFXCLK_IDLE) for b in x), UCLK)
                  for p, x in enumerate(part_xcc)]),
        "Every field not listed is the all-ones sentinel (including `gfx_busy_acc`).\n",
    ]
    tree.file("GENERATED.md", "\n".join(md))
    return tree


# ---- tree 5: broken ---------------------------------------------------------------------------


def mi210_values(card, busy):
    return {
        "unique_id": 0x5EED000000000000 + card,
        "serial": "SYNTHB%06d" % card,
        "gpu_busy": busy,
        "mem_busy": busy // 2,
        "vram_used": (card + 1) * GIB,
        "gtt_used": (card + 1) * 3 * MIB,
        "numa_node": 0,
        "edge": 40 + card,
        "hotspot": 50 + card,
        "mem_temp": 45 + card,
        "power_w": 100 + 10 * card,
    }


def mi210_metrics(v):
    return gpu_metrics_blob.build("v1_3", {
        "temperature_edge": v["edge"], "temperature_hotspot": v["hotspot"],
        "temperature_mem": v["mem_temp"], "average_gfx_activity": v["gpu_busy"],
        "average_umc_activity": v["mem_busy"], "average_socket_power": v["power_w"],
        "current_gfxclk": 1700, "current_uclk": 1600,
    })


def mi210_hwmon(v):
    return {
        "name": "amdgpu\n",
        "temp1_input": "%d\n" % (v["edge"] * 1000), "temp1_label": "edge\n",
        "temp2_input": "%d\n" % (v["hotspot"] * 1000), "temp2_label": "junction\n",
        "temp3_input": "%d\n" % (v["mem_temp"] * 1000), "temp3_label": "mem\n",
        "power1_average": "%d\n" % (v["power_w"] * 1000000),
    }


# card -> (busy, what is wrong, what the exporter should do)
BROKEN = [
    (0, 20, "`gpu_metrics` truncated: a v1_3 blob (header says 120 bytes) cut to 64 bytes",
     "reject the blob with a clear log message naming the file and both sizes; emit no "
     "gpu_metrics-derived sample for card0; still emit the sysfs and hwmon values"),
    (1, 30, "`gpu_metrics` size does not match its revision: header 120/1/4 (a v1_3 body "
     "labelled content revision 4, whose struct is 288 bytes), file 120 bytes",
     "reject as an unknown layout (revision 1.4 with size 120); emit no gpu_metrics-derived "
     "sample for card1; still emit the sysfs and hwmon values"),
    (2, 55, "`device/uevent` missing (the device dir has only `vendor`, `device` and "
     "`gpu_busy_percent` 55)",
     "skip card2 (driver unknown) with a log message; emit nothing for it (in particular not "
     "busy 55); every other card is still reported (node_exporter fails the whole collector "
     "here)"),
    (3, 40, "nothing: a complete, valid card right after the bad card2", "report all values"),
    (4, 50, "`gpu_busy_percent` is `abc\\n`, `mem_info_vram_used` is empty; no `gpu_metrics`",
     "skip those two samples with a log message (not 0); emit every other value of card4"),
    (5, None, "only `device/uevent` (`DRIVER=amdgpu`); every other device file, hwmon and "
     "gpu_metrics absent",
     "recognise an amdgpu card and emit no value samples for it (an info/identity series "
     "from uevent is fine); no errors beyond debug logs for absent optional files"),
    (6, 60, "hwmon `temp2_input` is `N/A\\n` (non-numeric); `temp1_input`, `temp3_input` and "
     "`power1_average` are valid; no `gpu_metrics` (so hwmon is the only temperature source)",
     "skip only the junction temperature sample, with a log message; emit the rest"),
    (10, 70, "nothing: valid card with a two-digit name",
     "report it (node_exporter's `card[0-9]` glob misses it)"),
    (11, 80, "nothing: valid card with a two-digit name", "report it"),
    (12, 15, "`gpu_metrics` is an APU table (v2_2, the real MangoHud capture "
     "`tests/fixtures/gpu_metrics/real/gpu_metrics_apu`), e.g. an iGPU next to Instinct cards",
     "skip that table with a debug line (not an error): the gpu_metrics collector still "
     "succeeds; emit the sysfs and hwmon values"),
]
APU_BLOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                        "gpu_metrics", "real", "gpu_metrics_apu")


def build_broken(caps):
    del caps
    tree = Tree("broken")
    rows, value_rows = [], []
    for card, busy, wrong, expect in BROKEN:
        bdf = "0000:%02x:00.0" % (0x10 + card)
        v = mi210_values(card, busy or 0)
        files = pci_device_files(bdf, MI210, v)
        files["gpu_metrics"] = mi210_metrics(v)
        hw = mi210_hwmon(v)
        if card == 0:
            files["gpu_metrics"] = files["gpu_metrics"][:64]
        elif card == 1:
            files["gpu_metrics"] = gpu_metrics_blob.build("v1_3", {
                "content_revision": 4, "average_gfx_activity": busy,
                "temperature_hotspot": v["hotspot"]})
        elif card == 2:
            files = {"vendor": files["vendor"], "device": files["device"],
                     "gpu_busy_percent": files["gpu_busy_percent"]}
            hw = None
        elif card == 4:
            files["gpu_busy_percent"] = "abc\n"
            files["mem_info_vram_used"] = ""
            # No blob either: sysfs is then the only source, so "no busy sample" is exact.
            del files["gpu_metrics"]
        elif card == 5:
            files = {"uevent": files["uevent"]}
            hw = None
        elif card == 6:
            hw["temp2_input"] = "N/A\n"
            del files["gpu_metrics"]
        elif card == 12:
            files["gpu_metrics"] = read_bytes(APU_BLOB)
        devdir = add_pci_gpu(tree, bdf, files, card)
        if hw is not None:
            add_hwmon(tree, devdir, card, hw)
        rows.append(("card%d" % card, "renderD%d" % (RENDER_BASE + card), bdf, wrong, expect))
        if card not in (2, 5):
            value_rows.append((
                "card%d" % card, "`abc`" if card == 4 else v["gpu_busy"], v["mem_busy"],
                "(empty)" if card == 4 else v["vram_used"], v["gtt_used"],
                "%016x" % v["unique_id"], "hwmon%d" % card, v["edge"] * 1000,
                "`N/A`" if card == 6 else v["hotspot"] * 1000, v["mem_temp"] * 1000,
                v["power_w"] * 1000000,
                {0: "truncated", 1: "rejected (1.4/120)", 4: "absent",
                 6: "absent", 12: "APU v2_2 (real)"}.get(card, "valid v1_3")))
    md = [
        "# broken: inputs that must give clear errors and no wrong values\n",
        "Written by `tests/gen/gen_fixtures.py`; do not edit by hand. Everything here is "
        "generated. There is deliberately no KFD topology (`sys/class/kfd` absent): the exporter "
        "must work without it. Cards 7..9 are absent on purpose: cards are found by listing "
        "`class/drm`, not by counting.\n",
        "All devices are AMD Instinct MI210 (`1002:740F`, no compute partitions, gpu_metrics "
        "v1_3) as PCI devices `sys/devices/pci0000:00/0000:<0x10+N>:00.0/` with `cardN` and "
        "`renderD(128+N)`.\n",
        "Checked: node_exporter 1.5.0 (`--collector.drm`) on this tree fails the whole drm "
        "collector (`open .../card2/device/uevent: no such file or directory`) and never looks "
        "at card10/card11; its hwmon collector reports the 7 hwmon chips.\n",
        DRM_NODE_NOTE,
        pci_device_note(MI210),
        "## Cases\n",
        md_table(["card", "render", "BDF", "what is wrong", "what the exporter must do"], rows),
        "## Values of the cards that have them\n",
        "`mem_info_vram_total` = `mem_info_vis_vram_total` = %d on every card with files; "
        "`mem_info_vis_vram_used` = `mem_info_vram_used` (on card4, whose `mem_info_vram_used` "
        "is empty, `mem_info_vis_vram_used` is a valid %d). hwmon: `temp1` edge, `temp2` "
        "junction, `temp3` mem (millidegrees), `power1_average` "
        "(microwatts). Valid gpu_metrics blobs are v1_3 with `temperature_edge`, "
        "`temperature_hotspot`, `temperature_mem` = the hwmon values / 1000, "
        "`average_gfx_activity` = busy, `average_umc_activity` = mem busy, "
        "`average_socket_power` = power in W, `current_gfxclk` 1700, `current_uclk` 1600; the "
        "card1 blob sets only `average_gfx_activity` 30 and `temperature_hotspot` 51.\n"
        % (MI210["vram_total"], mi210_values(4, 0)["vram_used"]),
        md_table(["card", "gpu_busy_percent", "mem_busy_percent", "mem_info_vram_used",
                  "mem_info_gtt_used", "unique_id", "hwmon", "temp1_input", "temp2_input",
                  "temp3_input", "power1_average", "gpu_metrics"], value_rows),
    ]
    tree.file("GENERATED.md", "\n".join(md))
    return tree


# ---- trees 7-10: nodes the exporter was not built for -----------------------------------------

# The exporter is installed on every node of a fleet. These four trees are the shapes of a node
# without a served AMD GPU, all built around the real PCI bus of an NVIDIA H200 VM (no DRM
# subsystem at all; tests/fixtures/real/pci-nvidia-h200-vm/SOURCE.md).
DRM_VERSION = "drm 1.1.0 20060810"  # what /sys/class/drm/version reads on every kernel since 2.6
H200_GPU_BDF = "0000:00:06.0"
# Generated AMD functions added to the H200 bus for the unserved tree: (BDF, device, class,
# driver or None, why).
UNSERVED_AMD = [
    ("0000:00:07.0", 0x74A1, 0x120000, None,
     "MI300X with no driver bound (amdgpu not loaded, or its probe failed): unserved"),
    ("0000:00:08.0", 0x74A1, 0x120000, "vfio-pci",
     "MI300X bound to vfio-pci (passed through): unserved, driver label `vfio-pci`"),
    ("0000:00:09.0", 0xAB38, 0x040300, "snd_hda_intel",
     "AMD HDMI audio function (class 0x0403): not a GPU, not counted"),
]


def add_h200_bus(tree, caps):
    """The captured PCI functions, as plain directories like the capture (vendor, device,
    class) with `driver` made a real relative symlink to a bus/pci/drivers directory."""
    src = os.path.join(caps.h200, "sys", "bus", "pci", "devices")
    drivers = set()
    for bdf in sorted(os.listdir(src)):
        for name in sorted(os.listdir(os.path.join(src, bdf))):
            data = read_bytes(os.path.join(src, bdf, name))
            rel = "sys/bus/pci/devices/%s/%s" % (bdf, name)
            if name == "driver":
                target = data.decode().strip()
                tree.link(rel, target)
                drivers.add(os.path.basename(target))
            else:
                tree.file(rel, data)
    return drivers


def add_drivers(tree, drivers):
    for d in sorted(drivers):
        tree.file("sys/bus/pci/drivers/%s/bind" % d, "")


def node_markdown(name, what, rows_extra=None):
    md = ["# %s: a node without a served AMD GPU\n" % name,
          "Written by `tests/gen/gen_fixtures.py`; do not edit by hand. `sys/bus/pci/devices/` is "
          "the real PCI bus of an NVIDIA H200 VM (`tests/fixtures/real/pci-nvidia-h200-vm`, "
          "copied: `vendor`, `device`, `class`; each `driver` text of the capture made a "
          "relative symlink to a generated `sys/bus/pci/drivers/<name>/` directory). Everything "
          "else below is generated.\n",
          what]
    if rows_extra:
        md.append(rows_extra)
    return "\n".join(md)


def build_node_no_drm(caps):
    tree = Tree("node-no-drm")
    add_drivers(tree, add_h200_bus(tree, caps))
    tree.file("GENERATED.md", node_markdown(
        "node-no-drm",
        "Nothing is added: there is no `sys/class/drm` (as on the captured host, whose NVIDIA "
        "driver registers no DRM device without `nvidia-drm`). The exporter must say once that "
        "the node has no AMD GPU, publish 0 GPUs and 0 partitions, and report every collector "
        "successful.\n"))
    return tree


def build_node_empty_drm(caps):
    tree = Tree("node-empty-drm")
    add_drivers(tree, add_h200_bus(tree, caps))
    tree.line("sys/class/drm/version", DRM_VERSION)
    tree.file("GENERATED.md", node_markdown(
        "node-empty-drm",
        "Added: `sys/class/drm/` with only its `version` file (`%s`), as a kernel with the DRM "
        "core loaded and no DRM device shows it. Expected as node-no-drm.\n" % DRM_VERSION))
    return tree


def build_node_nvidia_drm(caps):
    tree = Tree("node-nvidia-drm")
    add_drivers(tree, add_h200_bus(tree, caps))
    tree.line("sys/class/drm/version", DRM_VERSION)
    dev = "sys/bus/pci/devices/" + H200_GPU_BDF
    tree.file(dev + "/uevent", "DRIVER=nvidia\nPCI_CLASS=30200\nPCI_ID=10DE:2335\n"
              "PCI_SLOT_NAME=%s\n" % H200_GPU_BDF)
    for name, minor in (("card0", 0), ("renderD128", 128)):
        node = dev + "/drm/" + name
        tree.line(node + "/dev", "%d:%d" % (DRM_MAJOR, minor))
        tree.rel_link(node + "/device", dev)
        tree.rel_link("sys/class/drm/" + name, node)
    tree.file("GENERATED.md", node_markdown(
        "node-nvidia-drm",
        "Added: the H200 (`%s`) as `nvidia-drm` shows it: `sys/class/drm/card0` and "
        "`renderD128` whose `device` links to the PCI function, and a `uevent` with "
        "`DRIVER=nvidia`; `sys/class/drm/version`. The card is not amdgpu's and the node has "
        "no AMD GPU: expected as node-no-drm.\n" % H200_GPU_BDF))
    return tree


def build_node_amd_unserved(caps):
    tree = Tree("node-amd-unserved")
    drivers = add_h200_bus(tree, caps)
    rows = []
    for bdf, device, cls, driver, why in UNSERVED_AMD:
        base = "sys/bus/pci/devices/" + bdf
        tree.line(base + "/vendor", "0x1002")
        tree.line(base + "/device", "0x%04x" % device)
        tree.line(base + "/class", "0x%06x" % cls)
        if driver:
            tree.link(base + "/driver", "../../drivers/" + driver)
            drivers.add(driver)
        rows.append((bdf, "1002:%04X" % device, "0x%06x" % cls, driver or "(none)", why))
    add_drivers(tree, drivers)
    tree.file("GENERATED.md", node_markdown(
        "node-amd-unserved",
        "Added (generated): three AMD PCI functions next to the H200, and no `sys/class/drm` "
        "(amdgpu is not loaded). The exporter must name each unserved GPU "
        "(`gpureclaim_gpu_unserved`) and warn once per GPU; 0 GPUs discovered; collectors "
        "successful (the unserved alert, not the collector alert, says what is wrong).\n",
        md_table(["BDF", "PCI id", "class", "driver", "what the exporter must do"], rows)))
    return tree


# ---- README and driver ------------------------------------------------------------------------

README = """\
# Fixture trees

Each tree is a root directory with `sys/` (pass it as `--path.sysfs`); `proc/` and `dev/` may be
added next to it by other generators. `tests/gen/gen_fixtures.py` writes `sys/`, `GENERATED.md`
(precise tables of every value the tests assert) and, for procfs-drm, the copied capture notes.
Do not edit those by hand. Regenerate with `make fixtures` (`python3 tests/gen/gen_fixtures.py
tests/fixtures`) and verify with `make check-fixtures` (`... --check tests/fixtures`, which
regenerates into a temporary directory and compares file sets, contents and symlink targets).
The generator reads the real captures from `tests/fixtures/real/` (copies of `shared/fixtures`
with their SOURCE.md; `--captures DIR` to change). Not written by this generator:
`gpu_metrics/` (`tests/gen/gpu_metrics_blob.py`: real MangoHud blobs and generated ones),
`fdinfo/` (`real/`: two transcribed amdgpu samples with SOURCE.md; `generated/`: one
hand-written text per kernel era, GENERATED.md), `podres/` (the pod-resources allocation the
gRPC test server answers, GENERATED.md) and `real/`. `mi300x-cpx/proc/`, `mi300x-cpx/sys-kfd-proc/`,
`mi300x-cpx/GENERATED-proc.md` and `podres/mi300x-cpx-owners.json` (processes, KFD process
entries and pod allocations for the ownership collector) are written by
`tests/gen/gen_proc_fixtures.py`.

**procfs-drm/**: real. A verbatim copy of the prometheus/procfs amdgpu capture (Vega 10 `card0`
plus an i915 `card1`, `device` as a plain directory); provenance in
[procfs-drm/SOURCE.md](procfs-drm/SOURCE.md), nothing is generated
([GENERATED.md](procfs-drm/GENERATED.md) lists the expected card0 values).

**mi300x-cpx/**: 8 x MI300X in CPX + NPS4, 64 partitions. The KFD topology `properties` of nodes
0..64 are real (ROCm/k8s-device-plugin capture, see
[real/kfd-topology/mi300x-cpx/SOURCE.md](real/kfd-topology/mi300x-cpx/SOURCE.md)); the missing 64th partition node, `gpu_id`
and `name` files and all of the amdgpu sysfs (PCI devices, `amdgpu_xcp_<N>` platform devices,
DRM nodes and links, hwmon, v1_8 gpu_metrics with per-partition busy) are generated to match it.
The busy pattern (idle, busy and mixed partitions) is in [GENERATED.md](mi300x-cpx/GENERATED.md).

**mi300x-cpx-v19/**: the same 8 x MI300X CPX node as a current driver serves it: gpu_metrics v1_9
attribute tables and per-partition `xcp/xcp_metrics` v1_1 files, with accumulators (busy, throttle
residencies, accumulation counter), PCIe link and KFD memory banks
([GENERATED.md](mi300x-cpx-v19/GENERATED.md)). No `proc/`.

**mi300x-spx/**: one MI300X in SPX + NPS1 with the 7 spare XCP render nodes under the old
`amdgpu_xcp.<N>` naming, which must not count as partitions; v1_6 (ROCm layout) gpu_metrics with
8 XCCs in one partition. KFD `properties` derived from the real CPX capture; the rest generated
([GENERATED.md](mi300x-spx/GENERATED.md)).

**mi300x-dpx/**: one MI300X in DPX + NPS1 on a newer kernel: v1_5 gpu_metrics without per-XCP
data, per-partition `xcp/xcp_metrics` files, new `amdgpu_xcp_<N>` naming with 6 spare nodes.
KFD `properties` derived from the real CPX capture; the rest generated
([GENERATED.md](mi300x-dpx/GENERATED.md)).

**broken/**: fully generated. Truncated and mis-sized gpu_metrics, non-numeric and empty
attributes, a card with only `uevent`, a card without `device/uevent` followed by valid cards, a
non-numeric hwmon temperature, two-digit `card10`/`card11`, and no KFD topology. Each case and
the expected exporter behaviour is in [GENERATED.md](broken/GENERATED.md).

**remoteread/**: real. Prometheus 2.42 remote-read answers (STREAMED_XOR_CHUNKS) captured by
`tests/gen/remoteread_capture.py`, with what PromQL said the raw samples are; provenance and
contents in [remoteread/SOURCE.md](remoteread/SOURCE.md). Not regenerated by `make fixtures`
(a capture has new timestamps every run).

**node-no-drm/**, **node-empty-drm/**, **node-nvidia-drm/**, **node-amd-unserved/**: nodes without
a served AMD GPU, built around the real PCI bus of an NVIDIA H200 VM
([real/pci-nvidia-h200-vm/SOURCE.md](real/pci-nvidia-h200-vm/SOURCE.md)): no `class/drm`; an
empty one; the H200 as an `nvidia-drm` card; and generated AMD functions with no DRM device (one
with no driver, one bound to `vfio-pci`, one HDMI audio function that is not a GPU). Each
tree's GENERATED.md says what is generated and what the exporter must do.
"""

BUILDERS = [
    ("procfs-drm", build_procfs_drm),
    ("mi300x-cpx", build_mi300x_cpx),
    ("mi300x-cpx-v19", lambda caps: build_mi300x_cpx(caps, v19=True)),
    ("mi300x-spx", build_mi300x_spx),
    ("mi300x-dpx", build_mi300x_dpx),
    ("broken", build_broken),
    ("node-no-drm", build_node_no_drm),
    ("node-empty-drm", build_node_empty_drm),
    ("node-nvidia-drm", build_node_nvidia_drm),
    ("node-amd-unserved", build_node_amd_unserved),
]


def build_all(caps):
    trees = []
    for name, fn in BUILDERS:
        tree = fn(caps)
        tree.validate()
        trees.append(tree)
    return trees


def write_all(trees, outdir):
    os.makedirs(outdir, exist_ok=True)
    for tree in trees:
        write_tree(tree, os.path.join(outdir, tree.name))
    with open(os.path.join(outdir, "README.md"), "w") as f:
        f.write(README)


def check(trees, outdir):
    failed = 0
    with tempfile.TemporaryDirectory(prefix="gen_fixtures.") as tmp:
        write_all(trees, tmp)
        items = [(t.name, sorted({p.split("/")[0] for p in t.entries})) for t in trees]
        items.append(("README.md", None))
        for name, tops in items:
            if tops is None:
                want = read_tree(tmp, [name])
                have = read_tree(outdir, [name])
            else:
                want = read_tree(os.path.join(tmp, name), tops)
                have = read_tree(os.path.join(outdir, name), tops)
            diffs = diff_entries(want, have)
            if diffs:
                failed += 1
                print("FAIL: fixtures/%s" % name)
                for d in diffs:
                    print("    " + d)
            else:
                print("PASS: fixtures/%s (%d entries)" % (name, len(want)))
    if failed:
        print("%d fixture tree(s) differ; run 'make fixtures' and review the diff" % failed)
    return 1 if failed else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="Generate or check the sysfs fixture trees.")
    ap.add_argument("--check", action="store_true",
                    help="compare OUTDIR with a fresh generation instead of writing it")
    ap.add_argument("--captures", default=os.environ.get("GPURECLAIM_CAPTURES", os.path.join(
                        os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "real")),
                    help="directory of the real captures (default: %(default)s)")
    ap.add_argument("outdir", help="fixture directory, normally tests/fixtures")
    args = ap.parse_args(argv)

    caps = Captures(args.captures)
    missing = caps.missing()
    if missing:
        print("FAIL: fixtures (cannot read captures: %s)" % ", ".join(missing))
        return 1
    trees = build_all(caps)
    if args.check:
        return check(trees, args.outdir)
    write_all(trees, args.outdir)
    for tree in trees:
        print("wrote %s/%s (%d entries)" % (args.outdir, tree.name, len(tree.entries)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
