#!/usr/bin/env python3
"""Build amdgpu gpu_metrics / xcp_metrics blobs for fixtures and tests (stdlib only).

The layouts below repeat the kernel structs of kgd_pp_interface.h field by field (order,
C type, array length), as tabulated in shared/reference/gpu-interfaces.md section 8.7, and
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

CLI: python3 tests/gen/gpu_metrics_blob.py --out DIR writes one sample blob per layout plus
broken ones into DIR (deterministic: same bytes on every run).
"""

import argparse
import os
import struct
import sys

__all__ = ["LAYOUT_NAMES", "build", "layout_size", "field_offset", "header", "sample_fields"]

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

# Sizes and offsets from shared/reference/gpu-interfaces.md section 8.7.
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
    files["broken_partition_revision.bin"] = _with_header(files["partition_v1_0.bin"], crev=1)
    return files


def main(argv=None):
    ap = argparse.ArgumentParser(description="write sample gpu_metrics blobs")
    ap.add_argument("--out", required=True, help="directory to write the blobs into")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for name, blob in sorted(sample_files().items()):
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(blob)
    return 0


if __name__ == "__main__":
    sys.exit(main())
