#!/usr/bin/env python3
"""Build amdgpu gpu_metrics / xcp_metrics blobs for fixtures and tests (stdlib only).

The layouts below repeat the kernel structs of kgd_pp_interface.h field by field (order,
C type, array length), as tabulated in docs/kernel-interfaces.md §8.7, and
compute offsets with natural alignment like gcc on x86_64. At import time every layout's
size and a few key offsets are checked against the reference tables, so a typo in a field
list fails loudly instead of producing a plausible but wrong blob.

A blob starts as all 0xFF bytes and then gets its header, because that is what the kernel's
smu_cmn_init_soft_gpu_metrics() does: every field the SMU does not fill reads as the
all-ones "not supported" sentinel. Only the fields passed to build() are written.

API (kept stable; the fixture-tree generator imports it):

    build(layout, fields) -> bytes
        layout: one of LAYOUT_NAMES ("v1_3", "v1_4", "v1_5", "v1_6_mainline", "v1_6_rocm",
                "v1_7", "v1_8", "partition_v1_0")
        fields: {kernel_field_name: value}
            scalar field  -> int (None keeps the sentinel)
            array field   -> list of int/None; a shorter list fills the first elements
            xcp_stats     -> list of dicts with the xcp struct's field names, e.g.
                             [{"gfx_busy_inst": [40, 41], "gfx_busy_acc": [1000, 1001]}]
            structure_size / format_revision / content_revision may be given to override the
            header (for broken blobs); by default they come from the layout.
        Unknown field names and out-of-range values raise ValueError.

    layout_size(layout) -> int; field_offset(layout, field) -> int;
    header(layout) -> (structure_size, format_revision, content_revision);
    sample_fields(layout) -> dict, the values the CLI writes for that layout.

Attribute tables (gpu_metrics v1_9, partition metrics v1_1; kernel smu_cmn.h
DECLARE_SMU_METRICS_CLASS): header, int32 attr_count, then per field a u64 encoding
(unit << 24 | type << 20 | id << 10 | inst) followed by `inst` packed values, no padding.
Every value not given keeps the all-ones fill, as the kernel's init does.

    build_attr(table, values, fields="sept2025") -> bytes
        table:  "gpu" (gpu_metrics v1_9, header 1.9) or "partition" (xcp_metrics v1_1, 1.1)
        values: {field_name: int or list of int/None}; a shorter list fills the first
                elements (CPX: index 0 only). Unknown names raise ValueError.
        fields: a name of ATTR_LISTS[table] (the SMU 13.0.6 lists, see below) or an explicit
                list of (name, type, inst, unit) with names from ATTR_IDS, types "U8".."S64"
                and units from ATTR_UNITS; "attr_<id>" names an id this module does not know.
    attr_fields(table, fields) -> [(name, type, inst, unit)]
    idle_mi300x_values() -> dict, the values of the real idle MI300X capture
        (GPUDiagnostics.jl test/fixtures; 47 entries, 1150 bytes with the Sept 2025 list)

    ATTR_LISTS["gpu"]:       sept2025 (47 entries, 1150 bytes), u64-counter (accumulation_counter
                             U64, 1154), temps (+ temperature_hbm/aid/xcd, 1218), widened
                             (residencies, activity and NAK counters U64, 1258)
    ATTR_LISTS["partition"]: sept2025 (13 entries, 594 bytes), acc-counter (+ U64
                             accumulation_counter and firmware_timestamp, 626), widened (626,
                             gfx_busy_acc unit NONE)

CLI (deterministic: same bytes on every run):
    gpu_metrics_blob.py --out DIR
        write one sample blob per layout plus broken ones into DIR
    gpu_metrics_blob.py --attr {gpu,partition} [--fields LIST] [--idle-mi300x]
                        [--set NAME=V[,V...]]... --output FILE
        write one attribute table; --idle-mi300x starts from the capture values, --set
        overrides a field (V may be "-" for the all-ones sentinel), e.g.
        --attr partition --fields acc-counter --set gfx_busy_acc=123456 \
            --set accumulation_counter=54536484 --set gfx_busy_inst=0 --output xcp_metrics
    gpu_metrics_blob.py --list-fields {gpu,partition} [--fields LIST]
        print the fields of a list with their encodings
"""

import argparse
import os
import struct
import sys

__all__ = ["LAYOUT_NAMES", "build", "layout_size", "field_offset", "header", "sample_fields",
           "build_attr", "attr_fields", "idle_mi300x_values", "ATTR_LISTS", "ATTR_IDS"]

# kgd_pp_interface.h constants (ROCm/amdgpu @ 0ce779bf).
NUM_HBM_INSTANCES = 4
NUM_XGMI_LINKS = 8
MAX_GFX_CLKS = 8
MAX_CLKS = 4
NUM_VCN = 4
NUM_JPEG_ENG = 32
NUM_JPEG_ENG_V1 = 40
MAX_XCC = 8
NUM_XCP = 8


class _Struct:
    """A C struct: members are (name, struct-format char or _Struct, count)."""

    def __init__(self, name, members):
        self.name = name
        self.fields = {}
        off = 0
        align = 1
        for fname, typ, count in members:
            if isinstance(typ, _Struct):
                esize, ealign = typ.size, typ.align
            else:
                esize = ealign = struct.calcsize("<" + typ)
            off = (off + ealign - 1) // ealign * ealign
            if fname in self.fields:
                raise AssertionError("%s: duplicate field %s" % (name, fname))
            self.fields[fname] = (off, typ, count)
            off += esize * count
            align = max(align, ealign)
        self.align = align
        self.size = (off + align - 1) // align * align


_HEADER = [("structure_size", "H", 1), ("format_revision", "B", 1), ("content_revision", "B", 1)]

_XCP_V1_0 = _Struct(
    "amdgpu_xcp_metrics",
    [
        ("gfx_busy_inst", "I", MAX_XCC),
        ("jpeg_busy", "H", NUM_JPEG_ENG),
        ("vcn_busy", "H", NUM_VCN),
        ("gfx_busy_acc", "Q", MAX_XCC),
    ],
)

_XCP_V1_1 = _Struct(
    "amdgpu_xcp_metrics_v1_1",
    [
        ("gfx_busy_inst", "I", MAX_XCC),
        ("jpeg_busy", "H", NUM_JPEG_ENG),
        ("vcn_busy", "H", NUM_VCN),
        ("gfx_busy_acc", "Q", MAX_XCC),
        ("gfx_below_host_limit_acc", "Q", MAX_XCC),
    ],
)

_XCP_V1_2 = _Struct(
    "amdgpu_xcp_metrics_v1_2",
    [
        ("gfx_busy_inst", "I", MAX_XCC),
        ("jpeg_busy", "H", NUM_JPEG_ENG_V1),
        ("vcn_busy", "H", NUM_VCN),
        ("gfx_busy_acc", "Q", MAX_XCC),
        ("gfx_below_host_limit_ppt_acc", "Q", MAX_XCC),
        ("gfx_below_host_limit_thm_acc", "Q", MAX_XCC),
        ("gfx_low_utilization_acc", "Q", MAX_XCC),
        ("gfx_below_host_limit_total_acc", "Q", MAX_XCC),
    ],
)

_CLOCKS_V1_4 = [
    ("current_gfxclk", "H", MAX_GFX_CLKS),
    ("current_socclk", "H", MAX_CLKS),
    ("current_vclk0", "H", MAX_CLKS),
    ("current_dclk0", "H", MAX_CLKS),
    ("current_uclk", "H", 1),
]

_PCIE_ACC = [
    ("pcie_bandwidth_acc", "Q", 1),
    ("pcie_bandwidth_inst", "Q", 1),
    ("pcie_l0_to_recov_count_acc", "Q", 1),
    ("pcie_replay_count_acc", "Q", 1),
    ("pcie_replay_rover_count_acc", "Q", 1),
]

_RESIDENCY = [
    ("accumulation_counter", "I", 1),
    ("prochot_residency_acc", "I", 1),
    ("ppt_residency_acc", "I", 1),
    ("socket_thm_residency_acc", "I", 1),
    ("vr_thm_residency_acc", "I", 1),
    ("hbm_thm_residency_acc", "I", 1),
]

_LINKS = [
    ("pcie_link_width", "H", 1),
    ("pcie_link_speed", "H", 1),
    ("xgmi_link_width", "H", 1),
    ("xgmi_link_speed", "H", 1),
    ("gfx_activity_acc", "I", 1),
    ("mem_activity_acc", "I", 1),
]

_HEAD_V1_4 = _HEADER + [
    ("temperature_hotspot", "H", 1),
    ("temperature_mem", "H", 1),
    ("temperature_vrsoc", "H", 1),
    ("curr_socket_power", "H", 1),
    ("average_gfx_activity", "H", 1),
    ("average_umc_activity", "H", 1),
]

_V1_3 = _HEADER + [
    ("temperature_edge", "H", 1),
    ("temperature_hotspot", "H", 1),
    ("temperature_mem", "H", 1),
    ("temperature_vrgfx", "H", 1),
    ("temperature_vrsoc", "H", 1),
    ("temperature_vrmem", "H", 1),
    ("average_gfx_activity", "H", 1),
    ("average_umc_activity", "H", 1),
    ("average_mm_activity", "H", 1),
    ("average_socket_power", "H", 1),
    ("energy_accumulator", "Q", 1),
    ("system_clock_counter", "Q", 1),
    ("average_gfxclk_frequency", "H", 1),
    ("average_socclk_frequency", "H", 1),
    ("average_uclk_frequency", "H", 1),
    ("average_vclk0_frequency", "H", 1),
    ("average_dclk0_frequency", "H", 1),
    ("average_vclk1_frequency", "H", 1),
    ("average_dclk1_frequency", "H", 1),
    ("current_gfxclk", "H", 1),
    ("current_socclk", "H", 1),
    ("current_uclk", "H", 1),
    ("current_vclk0", "H", 1),
    ("current_dclk0", "H", 1),
    ("current_vclk1", "H", 1),
    ("current_dclk1", "H", 1),
    ("throttle_status", "I", 1),
    ("current_fan_speed", "H", 1),
    ("pcie_link_width", "H", 1),
    ("pcie_link_speed", "H", 1),
    ("padding", "H", 1),
    ("gfx_activity_acc", "I", 1),
    ("mem_activity_acc", "I", 1),
    ("temperature_hbm", "H", NUM_HBM_INSTANCES),
    ("firmware_timestamp", "Q", 1),
    ("voltage_soc", "H", 1),
    ("voltage_gfx", "H", 1),
    ("voltage_mem", "H", 1),
    ("padding1", "H", 1),
    ("indep_throttle_status", "Q", 1),
]

_V1_4 = (
    _HEAD_V1_4
    + [
        ("vcn_activity", "H", NUM_VCN),
        ("energy_accumulator", "Q", 1),
        ("system_clock_counter", "Q", 1),
        ("throttle_status", "I", 1),
        ("gfxclk_lock_status", "I", 1),
    ]
    + _LINKS
    + _PCIE_ACC
    + [
        ("xgmi_read_data_acc", "Q", NUM_XGMI_LINKS),
        ("xgmi_write_data_acc", "Q", NUM_XGMI_LINKS),
        ("firmware_timestamp", "Q", 1),
    ]
    + _CLOCKS_V1_4
    + [("padding", "H", 1)]
)

_V1_5 = (
    _HEAD_V1_4
    + [
        ("vcn_activity", "H", NUM_VCN),
        ("jpeg_activity", "H", NUM_JPEG_ENG),
        ("energy_accumulator", "Q", 1),
        ("system_clock_counter", "Q", 1),
        ("throttle_status", "I", 1),
        ("gfxclk_lock_status", "I", 1),
    ]
    + _LINKS
    + _PCIE_ACC
    + [
        ("pcie_nak_sent_count_acc", "I", 1),
        ("pcie_nak_rcvd_count_acc", "I", 1),
        ("xgmi_read_data_acc", "Q", NUM_XGMI_LINKS),
        ("xgmi_write_data_acc", "Q", NUM_XGMI_LINKS),
        ("firmware_timestamp", "Q", 1),
    ]
    + _CLOCKS_V1_4
    + [("padding", "H", 1)]
)

_V1_6_MAINLINE = (
    _HEAD_V1_4
    + [
        ("vcn_activity", "H", NUM_VCN),
        ("jpeg_activity", "H", NUM_JPEG_ENG),
        ("energy_accumulator", "Q", 1),
        ("system_clock_counter", "Q", 1),
    ]
    + _RESIDENCY
    + [("throttle_status", "I", 1), ("gfxclk_lock_status", "I", 1)]
    + _LINKS
    + _PCIE_ACC
    + [
        ("pcie_nak_sent_count_acc", "I", 1),
        ("pcie_nak_rcvd_count_acc", "I", 1),
        ("xgmi_read_data_acc", "Q", NUM_XGMI_LINKS),
        ("xgmi_write_data_acc", "Q", NUM_XGMI_LINKS),
        ("firmware_timestamp", "Q", 1),
    ]
    + _CLOCKS_V1_4
    + [("padding", "H", 1)]
)

_V1_6_ROCM = (
    _HEAD_V1_4
    + [("energy_accumulator", "Q", 1), ("system_clock_counter", "Q", 1)]
    + _RESIDENCY
    + [("gfxclk_lock_status", "I", 1)]
    + _LINKS
    + _PCIE_ACC
    + [
        ("pcie_nak_sent_count_acc", "I", 1),
        ("pcie_nak_rcvd_count_acc", "I", 1),
        ("xgmi_read_data_acc", "Q", NUM_XGMI_LINKS),
        ("xgmi_write_data_acc", "Q", NUM_XGMI_LINKS),
        ("firmware_timestamp", "Q", 1),
    ]
    + _CLOCKS_V1_4
    + [
        ("num_partition", "H", 1),
        ("xcp_stats", _XCP_V1_0, NUM_XCP),
        ("pcie_lc_perf_other_end_recovery", "I", 1),
    ]
)


def _v1_7_like(xcp):
    return (
        _HEAD_V1_4
        + [
            ("mem_max_bandwidth", "Q", 1),
            ("energy_accumulator", "Q", 1),
            ("system_clock_counter", "Q", 1),
        ]
        + _RESIDENCY
        + [("gfxclk_lock_status", "I", 1)]
        + _LINKS
        + _PCIE_ACC
        + [
            ("pcie_nak_sent_count_acc", "I", 1),
            ("pcie_nak_rcvd_count_acc", "I", 1),
            ("xgmi_read_data_acc", "Q", NUM_XGMI_LINKS),
            ("xgmi_write_data_acc", "Q", NUM_XGMI_LINKS),
            ("xgmi_link_status", "H", NUM_XGMI_LINKS),
            ("padding", "H", 1),
            ("firmware_timestamp", "Q", 1),
        ]
        + _CLOCKS_V1_4
        + [
            ("num_partition", "H", 1),
            ("xcp_stats", xcp, NUM_XCP),
            ("pcie_lc_perf_other_end_recovery", "I", 1),
        ]
    )


_PARTITION_V1_0 = _HEADER + [
    ("current_gfxclk", "H", MAX_XCC),
    ("current_socclk", "H", MAX_CLKS),
    ("current_vclk0", "H", MAX_CLKS),
    ("current_dclk0", "H", MAX_CLKS),
    ("current_uclk", "H", 1),
    ("padding", "H", 1),
    ("gfx_busy_inst", "I", MAX_XCC),
    ("jpeg_busy", "H", NUM_JPEG_ENG_V1),
    ("vcn_busy", "H", NUM_VCN),
    ("gfx_busy_acc", "Q", MAX_XCC),
    ("gfx_below_host_limit_ppt_acc", "Q", MAX_XCC),
    ("gfx_below_host_limit_thm_acc", "Q", MAX_XCC),
    ("gfx_low_utilization_acc", "Q", MAX_XCC),
    ("gfx_below_host_limit_total_acc", "Q", MAX_XCC),
]

# name -> (format_revision, content_revision, struct)
_LAYOUTS = {
    "v1_3": (1, 3, _Struct("gpu_metrics_v1_3", _V1_3)),
    "v1_4": (1, 4, _Struct("gpu_metrics_v1_4", _V1_4)),
    "v1_5": (1, 5, _Struct("gpu_metrics_v1_5", _V1_5)),
    "v1_6_mainline": (1, 6, _Struct("gpu_metrics_v1_6 (mainline)", _V1_6_MAINLINE)),
    "v1_6_rocm": (1, 6, _Struct("gpu_metrics_v1_6 (rocm)", _V1_6_ROCM)),
    "v1_7": (1, 7, _Struct("gpu_metrics_v1_7", _v1_7_like(_XCP_V1_1))),
    "v1_8": (1, 8, _Struct("gpu_metrics_v1_8", _v1_7_like(_XCP_V1_2))),
    # The xcp_metrics patch initialises the header with revision 1.0.
    "partition_v1_0": (1, 0, _Struct("amdgpu_partition_metrics_v1_0", _PARTITION_V1_0)),
}

LAYOUT_NAMES = tuple(_LAYOUTS)

# Sizes and offsets from docs/kernel-interfaces.md §8.7.
_EXPECTED = {
    "v1_3": (120, {"average_socket_power": 22, "current_gfxclk": 54, "temperature_hbm": 88,
                   "indep_throttle_status": 112}),
    "v1_4": (288, {"energy_accumulator": 24, "xgmi_write_data_acc": 168, "current_gfxclk": 240,
                   "current_uclk": 280}),
    "v1_5": (360, {"energy_accumulator": 88, "pcie_nak_rcvd_count_acc": 172,
                   "current_gfxclk": 312, "current_uclk": 352}),
    "v1_6_mainline": (384, {"energy_accumulator": 88, "throttle_status": 128,
                            "current_gfxclk": 336, "current_uclk": 376}),
    "v1_6_rocm": (1664, {"gfx_activity_acc": 68, "pcie_bandwidth_acc": 80, "current_gfxclk": 264,
                         "num_partition": 306, "xcp_stats": 312,
                         "pcie_lc_perf_other_end_recovery": 1656}),
    "v1_7": (2208, {"mem_max_bandwidth": 16, "xgmi_link_status": 264, "firmware_timestamp": 288,
                    "num_partition": 338, "xcp_stats": 344,
                    "pcie_lc_perf_other_end_recovery": 2200}),
    "v1_8": (3872, {"current_gfxclk": 296, "num_partition": 338, "xcp_stats": 344,
                    "pcie_lc_perf_other_end_recovery": 3864}),
    "partition_v1_0": (488, {"current_uclk": 44, "gfx_busy_inst": 48, "vcn_busy": 160,
                             "gfx_busy_acc": 168, "gfx_below_host_limit_total_acc": 424}),
}


def _self_check():
    assert (_XCP_V1_0.size, _XCP_V1_1.size, _XCP_V1_2.size) == (168, 232, 440)
    assert _XCP_V1_2.fields["gfx_busy_acc"][0] == 120
    assert set(_EXPECTED) == set(_LAYOUTS)
    for name, (size, offsets) in _EXPECTED.items():
        st = _LAYOUTS[name][2]
        assert st.size == size, "%s: size %d, expected %d" % (name, st.size, size)
        for field, off in offsets.items():
            got = st.fields[field][0]
            assert got == off, "%s.%s: offset %d, expected %d" % (name, field, got, off)


_self_check()


def _layout(name):
    try:
        return _LAYOUTS[name]
    except KeyError:
        raise ValueError("unknown layout '%s' (known: %s)" % (name, ", ".join(_LAYOUTS)))


def layout_size(layout):
    """sizeof() of the kernel struct for this layout."""
    return _layout(layout)[2].size


def header(layout):
    """(structure_size, format_revision, content_revision) the kernel writes for this layout."""
    frev, crev, st = _layout(layout)
    return (st.size, frev, crev)


def field_offset(layout, field):
    """Byte offset of a top-level field of the layout."""
    st = _layout(layout)[2]
    if field not in st.fields:
        raise ValueError("layout '%s' has no field '%s'" % (layout, field))
    return st.fields[field][0]


def _put(buf, base, st, fields, where):
    for fname, value in fields.items():
        if fname not in st.fields:
            raise ValueError("%s has no field '%s'" % (where, fname))
        off, typ, count = st.fields[fname]
        path = "%s.%s" % (where, fname)
        if value is None:
            continue
        if count == 1 and not isinstance(typ, _Struct):
            values = [value]
        elif isinstance(value, (list, tuple)):
            values = list(value)
        else:
            raise ValueError("%s is an array of %d: give a list" % (path, count))
        if len(values) > count:
            raise ValueError("%s takes at most %d values, got %d" % (path, count, len(values)))
        for i, v in enumerate(values):
            if v is None:
                continue
            if isinstance(typ, _Struct):
                if not isinstance(v, dict):
                    raise ValueError("%s[%d] must be a dict" % (path, i))
                _put(buf, base + off + i * typ.size, typ, v, "%s[%d]" % (path, i))
                continue
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError("%s: %r is not an integer" % (path, v))
            try:
                struct.pack_into("<" + typ, buf, base + off + i * struct.calcsize(typ), v)
            except struct.error:
                raise ValueError("%s: %d does not fit in '%s'" % (path, v, typ))


def build(layout, fields):
    """Return the blob of `layout` with `fields` set and every other byte 0xFF."""
    frev, crev, st = _layout(layout)
    buf = bytearray(b"\xff" * st.size)
    struct.pack_into("<HBB", buf, 0, st.size, frev, crev)
    _put(buf, 0, st, dict(fields), layout)
    return bytes(buf)


# ---- attribute tables: gpu_metrics v1_9 and partition metrics v1_1 -----------------------------
#
# Ids, types and units from the amd-gfx series "Add definition for gpu_metrics v1.9" (Lijo
# Lazar, 15 Sep 2025: kgd_pp_interface.h AMDGPU_METRICS_ATTR_ID_*, _TYPE_*, _UNIT_*) and the
# SMU 13.0.6 field lists of that series and of later patches (Asad Kamal, 2026: U64
# accumulation_counter, xcp accumulation_counter/firmware_timestamp, aid/xcd/hbm
# temperatures, U32 -> U64 widening).

ATTR_UNITS = {"NONE": 0, "CLOCK_1": 1, "TEMP_1": 2, "POWER_1": 3, "TIME_1": 4, "TIME_2": 5,
              "SPEED_1": 6, "SPEED_2": 7, "BW_1": 8, "DATA_1": 9, "PERCENT": 10}
ATTR_TYPES = {"U8": ("B", 0), "S8": ("b", 1), "U16": ("H", 2), "S16": ("h", 3),
              "U32": ("I", 4), "S32": ("i", 5), "U64": ("Q", 6), "S64": ("q", 7)}
_ID_NAMES = [
    "temperature_hotspot", "temperature_mem", "temperature_vrsoc", "curr_socket_power",
    "average_gfx_activity", "average_umc_activity", "mem_max_bandwidth", "energy_accumulator",
    "system_clock_counter", "accumulation_counter", "prochot_residency_acc",
    "ppt_residency_acc", "socket_thm_residency_acc", "vr_thm_residency_acc",
    "hbm_thm_residency_acc", "gfxclk_lock_status", "pcie_link_width", "pcie_link_speed",
    "xgmi_link_width", "xgmi_link_speed", "gfx_activity_acc", "mem_activity_acc",
    "pcie_bandwidth_acc", "pcie_bandwidth_inst", "pcie_l0_to_recov_count_acc",
    "pcie_replay_count_acc", "pcie_replay_rover_count_acc", "pcie_nak_sent_count_acc",
    "pcie_nak_rcvd_count_acc", "xgmi_read_data_acc", "xgmi_write_data_acc", "xgmi_link_status",
    "firmware_timestamp", "current_gfxclk", "current_socclk", "current_vclk0", "current_dclk0",
    "current_uclk", "num_partition", "pcie_lc_perf_other_end_recovery", "gfx_busy_inst",
    "jpeg_busy", "vcn_busy", "gfx_busy_acc", "gfx_below_host_limit_ppt_acc",
    "gfx_below_host_limit_thm_acc", "gfx_low_utilization_acc", "gfx_below_host_limit_total_acc",
    # appended in Mar 2026, first numbering (a later patch inserted temperature_mid at 49)
    "temperature_hbm", "temperature_aid", "temperature_xcd",
]
ATTR_IDS = {name: i for i, name in enumerate(_ID_NAMES)}

_SEPT2025_GPU = [
    ("temperature_hotspot", "U16", 1, "TEMP_1"), ("temperature_mem", "U16", 1, "TEMP_1"),
    ("temperature_vrsoc", "U16", 1, "TEMP_1"), ("curr_socket_power", "U16", 1, "POWER_1"),
    ("average_gfx_activity", "U16", 1, "PERCENT"), ("average_umc_activity", "U16", 1, "PERCENT"),
    ("mem_max_bandwidth", "U64", 1, "BW_1"), ("energy_accumulator", "U64", 1, "NONE"),
    ("system_clock_counter", "U64", 1, "TIME_1"), ("accumulation_counter", "U32", 1, "NONE"),
    ("prochot_residency_acc", "U32", 1, "NONE"), ("ppt_residency_acc", "U32", 1, "NONE"),
    ("socket_thm_residency_acc", "U32", 1, "NONE"), ("vr_thm_residency_acc", "U32", 1, "NONE"),
    ("hbm_thm_residency_acc", "U32", 1, "NONE"), ("gfxclk_lock_status", "U32", 1, "NONE"),
    ("pcie_link_width", "U16", 1, "NONE"), ("pcie_link_speed", "U16", 1, "SPEED_2"),
    ("xgmi_link_width", "U16", 1, "NONE"), ("xgmi_link_speed", "U16", 1, "SPEED_1"),
    ("gfx_activity_acc", "U32", 1, "PERCENT"), ("mem_activity_acc", "U32", 1, "PERCENT"),
    ("pcie_bandwidth_acc", "U64", 1, "PERCENT"), ("pcie_bandwidth_inst", "U64", 1, "BW_1"),
    ("pcie_l0_to_recov_count_acc", "U64", 1, "NONE"), ("pcie_replay_count_acc", "U64", 1, "NONE"),
    ("pcie_replay_rover_count_acc", "U64", 1, "NONE"),
    ("pcie_nak_sent_count_acc", "U32", 1, "NONE"), ("pcie_nak_rcvd_count_acc", "U32", 1, "NONE"),
    ("xgmi_read_data_acc", "U64", 8, "DATA_1"), ("xgmi_write_data_acc", "U64", 8, "DATA_1"),
    ("xgmi_link_status", "U16", 8, "NONE"), ("firmware_timestamp", "U64", 1, "TIME_2"),
    ("current_gfxclk", "U16", 8, "CLOCK_1"), ("current_socclk", "U16", 4, "CLOCK_1"),
    ("current_vclk0", "U16", 4, "CLOCK_1"), ("current_dclk0", "U16", 4, "CLOCK_1"),
    ("current_uclk", "U16", 1, "CLOCK_1"), ("pcie_lc_perf_other_end_recovery", "U32", 1, "NONE"),
    ("gfx_busy_inst", "U32", 8, "PERCENT"), ("jpeg_busy", "U16", 40, "PERCENT"),
    ("vcn_busy", "U16", 4, "PERCENT"), ("gfx_busy_acc", "U64", 8, "PERCENT"),
    ("gfx_below_host_limit_ppt_acc", "U64", 8, "NONE"),
    ("gfx_below_host_limit_thm_acc", "U64", 8, "NONE"),
    ("gfx_low_utilization_acc", "U64", 8, "NONE"),
    ("gfx_below_host_limit_total_acc", "U64", 8, "NONE"),
]


def _retype(fields, changes):
    """A copy of `fields` with {name: (type or None, unit or None)} applied."""
    out = []
    for name, typ, inst, unit in fields:
        t, u = changes.get(name, (None, None))
        out.append((name, t or typ, inst, u or unit))
    return out


_U64_COUNTER_GPU = _retype(_SEPT2025_GPU, {"accumulation_counter": ("U64", None)})
_TEMPS_GPU = _U64_COUNTER_GPU + [("temperature_hbm", "U16", 8, "TEMP_1"),
                                 ("temperature_aid", "U16", 4, "TEMP_1"),
                                 ("temperature_xcd", "U16", 8, "TEMP_1")]
_WIDENED_GPU = _retype(_TEMPS_GPU, dict(
    [(n, ("U64", None)) for n in ("prochot_residency_acc", "ppt_residency_acc",
                                  "socket_thm_residency_acc", "vr_thm_residency_acc",
                                  "hbm_thm_residency_acc", "pcie_nak_sent_count_acc",
                                  "pcie_nak_rcvd_count_acc", "pcie_lc_perf_other_end_recovery")]
    + [(n, ("U64", "NONE")) for n in ("gfx_activity_acc", "mem_activity_acc")]
    + [(n, (None, "NONE")) for n in ("pcie_bandwidth_acc", "gfx_busy_acc")]))

# The partition table carries the GPU table's per-XCC and clock fields, in the same order.
_PART_FIELDS = ("current_gfxclk", "current_socclk", "current_vclk0", "current_dclk0",
                "current_uclk", "gfx_busy_inst", "jpeg_busy", "vcn_busy", "gfx_busy_acc",
                "gfx_below_host_limit_ppt_acc", "gfx_below_host_limit_thm_acc",
                "gfx_low_utilization_acc", "gfx_below_host_limit_total_acc")
_SEPT2025_PART = [f for f in _SEPT2025_GPU if f[0] in _PART_FIELDS]
_ACC_COUNTER_PART = _SEPT2025_PART + [("accumulation_counter", "U64", 1, "NONE"),
                                      ("firmware_timestamp", "U64", 1, "TIME_2")]
_WIDENED_PART = _retype(_ACC_COUNTER_PART, {"gfx_busy_acc": (None, "NONE")})

ATTR_LISTS = {
    "gpu": {"sept2025": _SEPT2025_GPU, "u64-counter": _U64_COUNTER_GPU, "temps": _TEMPS_GPU,
            "widened": _WIDENED_GPU},
    "partition": {"sept2025": _SEPT2025_PART, "acc-counter": _ACC_COUNTER_PART,
                  "widened": _WIDENED_PART},
}
_ATTR_HEADER = {"gpu": (1, 9), "partition": (1, 1)}
# (entries, bytes) of each list, from the reference's arithmetic: a typo in a list fails here.
_ATTR_EXPECTED = {
    ("gpu", "sept2025"): (47, 1150), ("gpu", "u64-counter"): (47, 1154),
    ("gpu", "temps"): (50, 1218), ("gpu", "widened"): (50, 1258),
    ("partition", "sept2025"): (13, 594), ("partition", "acc-counter"): (15, 626),
    ("partition", "widened"): (15, 626),
}


def _attr_id(name):
    if name in ATTR_IDS:
        return ATTR_IDS[name]
    if name.startswith("attr_") and name[5:].isdigit() and int(name[5:]) < 1024:
        return int(name[5:])
    raise ValueError("unknown attribute '%s'" % name)


def attr_encoding(name, typ, inst, unit):
    """The u64 encoding of one entry (AMDGPU_METRICS_ENC_ATTR)."""
    if typ not in ATTR_TYPES or unit not in ATTR_UNITS or not 0 <= inst < 1024:
        raise ValueError("bad entry %r" % ((name, typ, inst, unit),))
    return ATTR_UNITS[unit] << 24 | ATTR_TYPES[typ][1] << 20 | _attr_id(name) << 10 | inst


def attr_fields(table, fields="sept2025"):
    """The (name, type, inst, unit) list of `table` for a list name (or the list itself)."""
    if table not in ATTR_LISTS:
        raise ValueError("unknown table '%s' (gpu, partition)" % table)
    if isinstance(fields, str):
        if fields not in ATTR_LISTS[table]:
            raise ValueError("unknown %s list '%s' (known: %s)"
                             % (table, fields, ", ".join(ATTR_LISTS[table])))
        return list(ATTR_LISTS[table][fields])
    return list(fields)


def build_attr(table, values, fields="sept2025"):
    """An attribute table with `values` set and every other value all-ones."""
    flist = attr_fields(table, fields)
    names = [f[0] for f in flist]
    for name in values:
        if name not in names:
            raise ValueError("%s list has no field '%s'" % (table, name))
    body = bytearray()
    for name, typ, inst, unit in flist:
        fmt, _ = ATTR_TYPES[typ]
        width = struct.calcsize(fmt)
        body += struct.pack("<Q", attr_encoding(name, typ, inst, unit))
        vals = values.get(name)
        if vals is None:
            vals = []
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) > inst:
            raise ValueError("%s takes at most %d values, got %d" % (name, inst, len(vals)))
        for i in range(inst):
            v = vals[i] if i < len(vals) else None
            if v is None:
                body += b"\xff" * width
                continue
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError("%s: %r is not an integer" % (name, v))
            try:
                body += struct.pack("<" + fmt, v)
            except struct.error:
                raise ValueError("%s: %d does not fit in %s" % (name, v, typ))
    frev, crev = _ATTR_HEADER[table]
    size = 8 + len(body)
    if size > 0xFFFF:
        raise ValueError("table of %d bytes does not fit structure_size" % size)
    return struct.pack("<HBBi", size, frev, crev, len(flist)) + bytes(body)


def idle_mi300x_values():
    """Values of the idle MI300X v1_9 capture (SR-IOV VF, ROCm 7.2.4, DKMS 6.16.13) that its
    tests assert; fields the tests do not state get synthetic values (marked below)."""
    return {
        "temperature_hotspot": 42, "temperature_mem": 37, "curr_socket_power": 194,
        "average_gfx_activity": 0, "average_umc_activity": 0, "mem_max_bandwidth": 5325,
        "accumulation_counter": 54536484, "prochot_residency_acc": 0,
        "ppt_residency_acc": 633093, "socket_thm_residency_acc": 0, "vr_thm_residency_acc": 0,
        "hbm_thm_residency_acc": 0,
        "current_gfxclk": [2098, 2100, 2110, 2105, 2103, 2109, 2105, 2115],
        "gfx_busy_inst": [1, 0, 0, 0, 0, 0, 0, 0],
        # synthetic (not stated by the capture's tests)
        "temperature_vrsoc": 39, "energy_accumulator": 2771093504,
        "system_clock_counter": 917318456000000, "gfxclk_lock_status": 0,
        "pcie_link_width": 16, "pcie_link_speed": 320, "current_uclk": 1300,
        "current_socclk": [1100, 1100, 1100, 1100], "firmware_timestamp": 5453648400000,
        "gfx_activity_acc": 6544378, "gfx_busy_acc": [654437, 1, 2, 3, 4, 5, 6, 7],
        "gfx_below_host_limit_ppt_acc": [633093] * 8,
    }


def _attr_self_check():
    for (table, name), (entries, size) in _ATTR_EXPECTED.items():
        blob = build_attr(table, {}, name)
        got = (struct.unpack_from("<i", blob, 4)[0], len(blob))
        assert got == (entries, size), "%s/%s: %r, expected %r" % (table, name, got,
                                                                   (entries, size))
    # The first 18 bytes the reference infers for the idle capture.
    idle = build_attr("gpu", idle_mi300x_values())
    assert idle[:18] == bytes.fromhex("7E0401092F00000001002002000000002A00"), idle[:18].hex()


_attr_self_check()


# ---- samples for the CLI and the unit tests ---------------------------------------------------
#
# Every field gets a distinct value per layout so that a wrong offset or a swapped field shows
# up as a wrong number rather than as a coincidental match. tests/unit/test_gpu_metrics.c holds
# the same values (converted to base units); change both together.

_SAMPLES = {
    "v1_3": {
        "temperature_edge": 41, "temperature_hotspot": 52, "temperature_mem": 43,
        "temperature_vrgfx": 44, "temperature_vrsoc": 45, "temperature_vrmem": 46,
        "average_gfx_activity": 37, "average_umc_activity": 12, "average_mm_activity": 3,
        "average_socket_power": 187, "energy_accumulator": 3 * 65536 + 32768,
        "current_gfxclk": 2100, "current_socclk": 1200, "current_uclk": 1000,
        "current_vclk0": 900, "current_dclk0": 800, "pcie_link_width": 16,
        "pcie_link_speed": 160, "temperature_hbm": [61, 62, 63, 64],
    },
    "v1_4": {
        "temperature_hotspot": 71, "temperature_mem": 72, "temperature_vrsoc": 73,
        "curr_socket_power": 401, "average_gfx_activity": 55, "average_umc_activity": 21,
        "energy_accumulator": 1000 * 65536, "current_gfxclk": [1700, 1701, 1702, 1703],
        "current_socclk": [1100, 1101], "current_vclk0": [1300], "current_dclk0": [1400],
        "current_uclk": 1600, "pcie_link_width": 16, "pcie_link_speed": 320,
    },
    "v1_5": {
        "temperature_hotspot": 74, "temperature_mem": 75, "temperature_vrsoc": 76,
        "curr_socket_power": 550, "average_gfx_activity": 0, "average_umc_activity": 1,
        "energy_accumulator": 1 << 40, "current_gfxclk": [2100] * 8,
        "current_socclk": [1200, 1201, 1202, 1203], "current_vclk0": [1300, 1301],
        "current_dclk0": [1400, 1401], "current_uclk": 1300, "pcie_link_width": 8,
        "pcie_link_speed": 250,
    },
    "v1_6_mainline": {
        "temperature_hotspot": 77, "temperature_mem": 78, "temperature_vrsoc": 79,
        "curr_socket_power": 610, "average_gfx_activity": 99, "average_umc_activity": 2,
        "energy_accumulator": 123456789, "current_gfxclk": [2000, 2001],
        "current_socclk": [1000], "current_vclk0": [900], "current_dclk0": [950],
        "current_uclk": 1250, "pcie_link_width": 4, "pcie_link_speed": 80,
    },
    # A single SPX GPU: one partition holding all eight XCCs.
    "v1_6_rocm": {
        "temperature_hotspot": 81, "temperature_mem": 82, "temperature_vrsoc": 83,
        "curr_socket_power": 650, "average_gfx_activity": 100, "average_umc_activity": 30,
        "energy_accumulator": 2 * 65536, "current_gfxclk": [2100, 2099, 2098, 2097],
        "current_socclk": [1100], "current_vclk0": [1300], "current_dclk0": [1400],
        "current_uclk": 1300, "pcie_link_width": 16, "pcie_link_speed": 320,
        "num_partition": 1,
        "xcp_stats": [{"gfx_busy_inst": [10, 20, 30, 40, 50, 60, 70, 80],
                       "gfx_busy_acc": [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000]}],
    },
    # DPX: two partitions of four XCCs. xcp_stats[2] holds stale data beyond num_partition
    # that a parser must not report.
    "v1_7": {
        "temperature_hotspot": 84, "temperature_mem": 85, "temperature_vrsoc": 86,
        "curr_socket_power": 700, "average_gfx_activity": 50, "average_umc_activity": 40,
        "energy_accumulator": 5 * 65536, "current_gfxclk": [1900] * 8,
        "current_socclk": [1100] * 4, "current_vclk0": [1300] * 4, "current_dclk0": [1400] * 4,
        "current_uclk": 1300, "pcie_link_width": 16, "pcie_link_speed": 320,
        "num_partition": 2,
        "xcp_stats": [
            {"gfx_busy_inst": [11, 12, 13, 14], "gfx_busy_acc": [110, 120, 130, 140]},
            {"gfx_busy_inst": [21, 22, 23, 24], "gfx_busy_acc": [210, 220, 230, 240]},
            {"gfx_busy_inst": [99], "gfx_busy_acc": [999]},
        ],
    },
    # CPX: eight partitions of one XCC each; xcp 3 has its busy value unsupported.
    "v1_8": {
        "temperature_hotspot": 87, "temperature_mem": 88, "temperature_vrsoc": 89,
        "curr_socket_power": 750, "average_gfx_activity": 25, "average_umc_activity": 5,
        "energy_accumulator": 7 * 65536 + 16384, "current_gfxclk": [2100 - i for i in range(8)],
        "current_socclk": [1100, 1101, 1102, 1103], "current_vclk0": [1300, 1301, 1302, 1303],
        "current_dclk0": [1400, 1401, 1402, 1403], "current_uclk": 1300,
        "pcie_link_width": 16, "pcie_link_speed": 320, "num_partition": 8,
        "xcp_stats": [
            {"gfx_busy_inst": [None if i == 3 else 5 + 10 * i],
             "gfx_busy_acc": [1000 * (i + 1)]}
            for i in range(8)
        ],
    },
    "partition_v1_0": {
        "current_gfxclk": [2100, 2101, 2102, 2103], "current_socclk": [1100],
        "current_vclk0": [1300], "current_dclk0": [1400], "current_uclk": 1300,
        "gfx_busy_inst": [33, 44, 55, 66], "gfx_busy_acc": [3300, 4400, 5500, 6600],
    },
}
assert set(_SAMPLES) == set(_LAYOUTS)


def sample_fields(layout):
    """The fields the CLI writes for `layout` (a fresh copy)."""
    import copy

    _layout(layout)
    return copy.deepcopy(_SAMPLES[layout])


def _with_header(blob, size=None, frev=None, crev=None):
    b = bytearray(blob)
    s, f, c = struct.unpack_from("<HBB", b, 0)
    struct.pack_into("<HBB", b, 0, s if size is None else size, f if frev is None else frev,
                     c if crev is None else crev)
    return bytes(b)


def _pad(blob, n):
    return blob + b"\xff" * (n - len(blob))


def sample_files():
    """name -> bytes for everything the CLI writes."""
    files = {}
    for name in LAYOUT_NAMES:
        files["%s.bin" % name] = build(name, _SAMPLES[name])
    v1_5 = files["v1_5.bin"]
    # Valid header, no field supported: everything must come out as unknown.
    files["sentinel_v1_8.bin"] = build("v1_8", {})
    files["sentinel_v1_6_rocm.bin"] = build("v1_6_rocm", {})
    # Broken blobs, each must be rejected.
    files["broken_truncated_v1_5.bin"] = v1_5[:200]
    files["broken_truncated_v1_8.bin"] = files["v1_8.bin"][:3871]
    files["broken_header_only.bin"] = v1_5[:4]
    files["broken_size_v1_5.bin"] = _pad(_with_header(v1_5, size=400), 400)
    files["broken_size_v1_6.bin"] = _pad(_with_header(files["v1_6_rocm.bin"][:1000], size=1000),
                                         1000)
    files["broken_size_v1_5_120.bin"] = _with_header(v1_5[:120], size=120, crev=5)
    files["broken_revision_1_9.bin"] = _with_header(_pad(v1_5, 400), size=400, crev=9)
    files["broken_revision_4_0.bin"] = _with_header(v1_5, frev=4, crev=0)
    files["broken_all_ones.bin"] = b"\xff" * 4096
    files["broken_partition_size.bin"] = _with_header(files["partition_v1_0.bin"], size=480)
    files["broken_partition_revision.bin"] = _with_header(files["partition_v1_0.bin"], crev=2)
    files.update(_attr_sample_files())
    return files


def _attr_sample_files():
    """Attribute tables: the idle MI300X capture, every later list, and the broken cases the
    capture's tests assert (120-byte cut, type >= 8, id 1023) plus ours."""
    files = {}
    idle_vals = idle_mi300x_values()
    idle = build_attr("gpu", idle_vals)
    files["v1_9_idle_mi300x.bin"] = idle
    files["v1_9_u64_counter.bin"] = build_attr("gpu", idle_vals, "u64-counter")
    temps = dict(idle_vals, temperature_hbm=[40, 41, 42, 43, 44, 45, 46, 47],
                 temperature_aid=[50, 51, 52, 53], temperature_xcd=[60, 61, 62, 63])
    files["v1_9_temps.bin"] = build_attr("gpu", temps, "temps")
    files["v1_9_widened.bin"] = build_attr("gpu", dict(temps, gfx_activity_acc=1 << 40,
                                                       ppt_residency_acc=1 << 33), "widened")
    files["v1_9_cut120.bin"] = idle[:120]
    files["v1_9_cut8.bin"] = idle[:8]
    b = bytearray(idle)
    b[10] |= 0x80  # entry 0 type nibble 8 + 2 = 10: width unknowable
    files["v1_9_type_ge8.bin"] = bytes(b)
    b = bytearray(idle)
    enc = struct.unpack_from("<Q", b, 8)[0] | (0x3FF << 10)
    struct.pack_into("<Q", b, 8, enc)
    files["v1_9_id1023.bin"] = bytes(b)
    b = bytearray(idle)
    struct.pack_into("<i", b, 4, -1)
    files["broken_v1_9_negative_count.bin"] = bytes(b)
    b = bytearray(idle)
    struct.pack_into("<i", b, 4, 1000)
    files["broken_v1_9_count_too_big.bin"] = bytes(b)
    # One XCC per partition (CPX), the list before and after the counter was added.
    cpx = {"current_gfxclk": [2100], "current_uclk": 1300, "gfx_busy_inst": [37],
           "gfx_busy_acc": [123456789]}
    files["partition_v1_1.bin"] = build_attr("partition", cpx)
    files["partition_v1_1_acc.bin"] = build_attr(
        "partition", dict(cpx, accumulation_counter=54536484, firmware_timestamp=5453648400000),
        "acc-counter")
    return files


def _parse_set(text):
    name, sep, vals = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError("--set wants NAME=V[,V...], got '%s'" % text)
    out = []
    for v in vals.split(","):
        v = v.strip()
        out.append(None if v == "-" else int(v, 0))
    return name, out if len(out) > 1 else out[0]


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Write amdgpu gpu_metrics / xcp_metrics blobs (fixed layouts and v1_9 / "
        "partition v1_1 attribute tables). Output is deterministic.",
        epilog="Field names are the kernel's (kgd_pp_interface.h); --list-fields shows them. "
        "Unset values keep the all-ones 'not supported' fill. Examples:\n"
        "  %(prog)s --out tests/fixtures/gpu_metrics/generated\n"
        "  %(prog)s --attr gpu --idle-mi300x --output gpu_metrics\n"
        "  %(prog)s --attr partition --fields acc-counter --set gfx_busy_inst=0 \\\n"
        "      --set gfx_busy_acc=123456 --set accumulation_counter=54536484 --output xcp_metrics",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", metavar="DIR", help="write every sample blob into DIR")
    mode.add_argument("--attr", choices=sorted(ATTR_LISTS),
                      help="write one attribute table: gpu (gpu_metrics v1_9) or partition "
                      "(xcp_metrics v1_1)")
    mode.add_argument("--list-fields", choices=sorted(ATTR_LISTS), metavar="TABLE",
                      help="print the fields of an attribute table list and exit")
    ap.add_argument("--fields", default="sept2025",
                    help="field list: gpu %s; partition %s (default %%(default)s)"
                    % ("/".join(ATTR_LISTS["gpu"]), "/".join(ATTR_LISTS["partition"])))
    ap.add_argument("--idle-mi300x", action="store_true",
                    help="start from the idle MI300X capture values (gpu table only)")
    ap.add_argument("--set", type=_parse_set, action="append", default=[], metavar="NAME=V",
                    help="set a field; V is an integer, a comma-separated list for an array "
                    "(a shorter list fills the first elements), '-' for the sentinel")
    ap.add_argument("--output", metavar="FILE", help="file for --attr ('-' for stdout)")
    args = ap.parse_args(argv)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for name, blob in sorted(sample_files().items()):
            with open(os.path.join(args.out, name), "wb") as f:
                f.write(blob)
        return 0
    if args.list_fields:
        off = 8
        for name, typ, inst, unit in attr_fields(args.list_fields, args.fields):
            enc = attr_encoding(name, typ, inst, unit)
            print("%5d 0x%08X id %3d %-34s %s x %-2d %s" % (off, enc, _attr_id(name), name, typ,
                                                            inst, unit))
            off += 8 + inst * struct.calcsize(ATTR_TYPES[typ][0])
        print("total %d bytes" % off)
        return 0
    if not args.output:
        ap.error("--attr needs --output FILE")
    values = {}
    if args.idle_mi300x:
        if args.attr != "gpu":
            ap.error("--idle-mi300x applies to --attr gpu")
        values = idle_mi300x_values()
    for name, v in args.set:
        values[name] = v
    try:
        blob = build_attr(args.attr, values, args.fields)
    except ValueError as e:
        ap.error(str(e))
    if args.output == "-":
        sys.stdout.buffer.write(blob)
    else:
        with open(args.output, "wb") as f:
            f.write(blob)
    return 0


if __name__ == "__main__":
    sys.exit(main())
