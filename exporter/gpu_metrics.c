/*
 * Pure parser of the amdgpu gpu_metrics and xcp_metrics blobs (see gpu_metrics.h).
 *
 * The attribute tables (v1_9, partition v1_1) are walked entry by entry further down
 * (attr_walk); everything else in this comment is about the fixed layouts.
 *
 * Each supported layout is declared below as a C struct with exactly the field order and
 * types of the kernel's struct in kgd_pp_interface.h, so the compiler computes the same
 * natural-alignment offsets as the kernel does; _Static_asserts pin the sizes and key offsets
 * to the tables in docs/kernel-interfaces.md §8.7. A blob is memcpy'd into
 * the struct once its header has selected the layout and its length and structure_size have
 * been checked, then every field is converted to base units with the all-ones "not
 * supported" fill (smu_cmn_init_soft_gpu_metrics in Linux smu_cmn.c) mapped to NaN.
 *
 * The blob is little-endian and read by memcpy, so the host must be little-endian too.
 * Only fields the exporter uses are converted; the structs still carry every kernel field
 * because their positions are what makes the offsets right.
 */
#include "gpu_metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gpu_metrics.c reads little-endian kernel structs with memcpy: port it to big-endian"
#endif

/* kgd_pp_interface.h constants (ROCm/amdgpu @ 0ce779bf). */
#define NUM_HBM_INSTANCES 4
#define NUM_XGMI_LINKS    8
#define MAX_GFX_CLKS      8
#define MAX_CLKS          4
#define NUM_VCN           4
#define NUM_JPEG_ENG      32
#define NUM_JPEG_ENG_V1   40
#define MAX_XCC           8
#define NUM_XCP           8

_Static_assert(GPUM_MAX_XCP == NUM_XCP, "gpu_metrics.h GPUM_MAX_XCP");
_Static_assert(GPUM_MAX_XCC == MAX_XCC, "gpu_metrics.h GPUM_MAX_XCC");
_Static_assert(GPUM_MAX_GFXCLK == MAX_GFX_CLKS, "gpu_metrics.h GPUM_MAX_GFXCLK");
_Static_assert(GPUM_MAX_CLK == MAX_CLKS, "gpu_metrics.h GPUM_MAX_CLK");
_Static_assert(GPUM_NUM_HBM >= NUM_HBM_INSTANCES, "gpu_metrics.h GPUM_NUM_HBM");

struct gpum_header {
    uint16_t structure_size;
    uint8_t format_revision;
    uint8_t content_revision;
};

struct gpum_v1_3 {
    struct gpum_header common_header;
    uint16_t temperature_edge;
    uint16_t temperature_hotspot;
    uint16_t temperature_mem;
    uint16_t temperature_vrgfx;
    uint16_t temperature_vrsoc;
    uint16_t temperature_vrmem;
    uint16_t average_gfx_activity;
    uint16_t average_umc_activity;
    uint16_t average_mm_activity;
    uint16_t average_socket_power;
    uint64_t energy_accumulator;
    uint64_t system_clock_counter;
    uint16_t average_gfxclk_frequency;
    uint16_t average_socclk_frequency;
    uint16_t average_uclk_frequency;
    uint16_t average_vclk0_frequency;
    uint16_t average_dclk0_frequency;
    uint16_t average_vclk1_frequency;
    uint16_t average_dclk1_frequency;
    uint16_t current_gfxclk;
    uint16_t current_socclk;
    uint16_t current_uclk;
    uint16_t current_vclk0;
    uint16_t current_dclk0;
    uint16_t current_vclk1;
    uint16_t current_dclk1;
    uint32_t throttle_status;
    uint16_t current_fan_speed;
    uint16_t pcie_link_width;
    uint16_t pcie_link_speed;
    uint16_t padding;
    uint32_t gfx_activity_acc;
    uint32_t mem_activity_acc;
    uint16_t temperature_hbm[NUM_HBM_INSTANCES];
    uint64_t firmware_timestamp;
    uint16_t voltage_soc;
    uint16_t voltage_gfx;
    uint16_t voltage_mem;
    uint16_t padding1;
    uint64_t indep_throttle_status;
};
_Static_assert(sizeof(struct gpum_v1_3) == 120, "v1_3 size");
_Static_assert(offsetof(struct gpum_v1_3, average_socket_power) == 22, "v1_3 power");
_Static_assert(offsetof(struct gpum_v1_3, energy_accumulator) == 24, "v1_3 energy");
_Static_assert(offsetof(struct gpum_v1_3, current_gfxclk) == 54, "v1_3 gfxclk");
_Static_assert(offsetof(struct gpum_v1_3, pcie_link_speed) == 76, "v1_3 pcie");
_Static_assert(offsetof(struct gpum_v1_3, temperature_hbm) == 88, "v1_3 hbm");
_Static_assert(offsetof(struct gpum_v1_3, indep_throttle_status) == 112, "v1_3 tail");

struct gpum_v1_4 {
    struct gpum_header common_header;
    uint16_t temperature_hotspot;
    uint16_t temperature_mem;
    uint16_t temperature_vrsoc;
    uint16_t curr_socket_power;
    uint16_t average_gfx_activity;
    uint16_t average_umc_activity;
    uint16_t vcn_activity[NUM_VCN];
    uint64_t energy_accumulator;
    uint64_t system_clock_counter;
    uint32_t throttle_status;
    uint32_t gfxclk_lock_status;
    uint16_t pcie_link_width;
    uint16_t pcie_link_speed;
    uint16_t xgmi_link_width;
    uint16_t xgmi_link_speed;
    uint32_t gfx_activity_acc;
    uint32_t mem_activity_acc;
    uint64_t pcie_bandwidth_acc;
    uint64_t pcie_bandwidth_inst;
    uint64_t pcie_l0_to_recov_count_acc;
    uint64_t pcie_replay_count_acc;
    uint64_t pcie_replay_rover_count_acc;
    uint64_t xgmi_read_data_acc[NUM_XGMI_LINKS];
    uint64_t xgmi_write_data_acc[NUM_XGMI_LINKS];
    uint64_t firmware_timestamp;
    uint16_t current_gfxclk[MAX_GFX_CLKS];
    uint16_t current_socclk[MAX_CLKS];
    uint16_t current_vclk0[MAX_CLKS];
    uint16_t current_dclk0[MAX_CLKS];
    uint16_t current_uclk;
    uint16_t padding;
};
_Static_assert(sizeof(struct gpum_v1_4) == 288, "v1_4 size");
_Static_assert(offsetof(struct gpum_v1_4, energy_accumulator) == 24, "v1_4 energy");
_Static_assert(offsetof(struct gpum_v1_4, pcie_link_speed) == 50, "v1_4 pcie");
_Static_assert(offsetof(struct gpum_v1_4, xgmi_write_data_acc) == 168, "v1_4 xgmi");
_Static_assert(offsetof(struct gpum_v1_4, current_gfxclk) == 240, "v1_4 gfxclk");
_Static_assert(offsetof(struct gpum_v1_4, current_uclk) == 280, "v1_4 uclk");

struct gpum_v1_5 {
    struct gpum_header common_header;
    uint16_t temperature_hotspot;
    uint16_t temperature_mem;
    uint16_t temperature_vrsoc;
    uint16_t curr_socket_power;
    uint16_t average_gfx_activity;
    uint16_t average_umc_activity;
    uint16_t vcn_activity[NUM_VCN];
    uint16_t jpeg_activity[NUM_JPEG_ENG];
    uint64_t energy_accumulator;
    uint64_t system_clock_counter;
    uint32_t throttle_status;
    uint32_t gfxclk_lock_status;
    uint16_t pcie_link_width;
    uint16_t pcie_link_speed;
    uint16_t xgmi_link_width;
    uint16_t xgmi_link_speed;
    uint32_t gfx_activity_acc;
    uint32_t mem_activity_acc;
    uint64_t pcie_bandwidth_acc;
    uint64_t pcie_bandwidth_inst;
    uint64_t pcie_l0_to_recov_count_acc;
    uint64_t pcie_replay_count_acc;
    uint64_t pcie_replay_rover_count_acc;
    uint32_t pcie_nak_sent_count_acc;
    uint32_t pcie_nak_rcvd_count_acc;
    uint64_t xgmi_read_data_acc[NUM_XGMI_LINKS];
    uint64_t xgmi_write_data_acc[NUM_XGMI_LINKS];
    uint64_t firmware_timestamp;
    uint16_t current_gfxclk[MAX_GFX_CLKS];
    uint16_t current_socclk[MAX_CLKS];
    uint16_t current_vclk0[MAX_CLKS];
    uint16_t current_dclk0[MAX_CLKS];
    uint16_t current_uclk;
    uint16_t padding;
};
_Static_assert(sizeof(struct gpum_v1_5) == 360, "v1_5 size");
_Static_assert(offsetof(struct gpum_v1_5, energy_accumulator) == 88, "v1_5 energy");
_Static_assert(offsetof(struct gpum_v1_5, pcie_link_speed) == 114, "v1_5 pcie");
_Static_assert(offsetof(struct gpum_v1_5, xgmi_read_data_acc) == 176, "v1_5 xgmi");
_Static_assert(offsetof(struct gpum_v1_5, current_gfxclk) == 312, "v1_5 gfxclk");
_Static_assert(offsetof(struct gpum_v1_5, current_uclk) == 352, "v1_5 uclk");

/* The v1_6 of Linux @ 00dedab0, before xcp_stats was added. */
struct gpum_v1_6_mainline {
    struct gpum_header common_header;
    uint16_t temperature_hotspot;
    uint16_t temperature_mem;
    uint16_t temperature_vrsoc;
    uint16_t curr_socket_power;
    uint16_t average_gfx_activity;
    uint16_t average_umc_activity;
    uint16_t vcn_activity[NUM_VCN];
    uint16_t jpeg_activity[NUM_JPEG_ENG];
    uint64_t energy_accumulator;
    uint64_t system_clock_counter;
    uint32_t accumulation_counter;
    uint32_t prochot_residency_acc;
    uint32_t ppt_residency_acc;
    uint32_t socket_thm_residency_acc;
    uint32_t vr_thm_residency_acc;
    uint32_t hbm_thm_residency_acc;
    uint32_t throttle_status;
    uint32_t gfxclk_lock_status;
    uint16_t pcie_link_width;
    uint16_t pcie_link_speed;
    uint16_t xgmi_link_width;
    uint16_t xgmi_link_speed;
    uint32_t gfx_activity_acc;
    uint32_t mem_activity_acc;
    uint64_t pcie_bandwidth_acc;
    uint64_t pcie_bandwidth_inst;
    uint64_t pcie_l0_to_recov_count_acc;
    uint64_t pcie_replay_count_acc;
    uint64_t pcie_replay_rover_count_acc;
    uint32_t pcie_nak_sent_count_acc;
    uint32_t pcie_nak_rcvd_count_acc;
    uint64_t xgmi_read_data_acc[NUM_XGMI_LINKS];
    uint64_t xgmi_write_data_acc[NUM_XGMI_LINKS];
    uint64_t firmware_timestamp;
    uint16_t current_gfxclk[MAX_GFX_CLKS];
    uint16_t current_socclk[MAX_CLKS];
    uint16_t current_vclk0[MAX_CLKS];
    uint16_t current_dclk0[MAX_CLKS];
    uint16_t current_uclk;
    uint16_t padding;
};
_Static_assert(sizeof(struct gpum_v1_6_mainline) == 384, "v1_6 mainline size");
_Static_assert(offsetof(struct gpum_v1_6_mainline, throttle_status) == 128, "v1_6m throttle");
_Static_assert(offsetof(struct gpum_v1_6_mainline, pcie_link_speed) == 138, "v1_6m pcie");
_Static_assert(offsetof(struct gpum_v1_6_mainline, current_gfxclk) == 336, "v1_6m gfxclk");
_Static_assert(offsetof(struct gpum_v1_6_mainline, current_uclk) == 376, "v1_6m uclk");

struct gpum_xcp_v1_0 { /* amdgpu_xcp_metrics */
    uint32_t gfx_busy_inst[MAX_XCC];
    uint16_t jpeg_busy[NUM_JPEG_ENG];
    uint16_t vcn_busy[NUM_VCN];
    uint64_t gfx_busy_acc[MAX_XCC];
};
_Static_assert(sizeof(struct gpum_xcp_v1_0) == 168, "xcp v1_0 size");
_Static_assert(offsetof(struct gpum_xcp_v1_0, gfx_busy_acc) == 104, "xcp v1_0 acc");

struct gpum_xcp_v1_1 { /* amdgpu_xcp_metrics_v1_1 */
    uint32_t gfx_busy_inst[MAX_XCC];
    uint16_t jpeg_busy[NUM_JPEG_ENG];
    uint16_t vcn_busy[NUM_VCN];
    uint64_t gfx_busy_acc[MAX_XCC];
    uint64_t gfx_below_host_limit_acc[MAX_XCC];
};
_Static_assert(sizeof(struct gpum_xcp_v1_1) == 232, "xcp v1_1 size");
_Static_assert(offsetof(struct gpum_xcp_v1_1, gfx_busy_acc) == 104, "xcp v1_1 acc");

struct gpum_xcp_v1_2 { /* amdgpu_xcp_metrics_v1_2 */
    uint32_t gfx_busy_inst[MAX_XCC];
    uint16_t jpeg_busy[NUM_JPEG_ENG_V1];
    uint16_t vcn_busy[NUM_VCN];
    uint64_t gfx_busy_acc[MAX_XCC];
    uint64_t gfx_below_host_limit_ppt_acc[MAX_XCC];
    uint64_t gfx_below_host_limit_thm_acc[MAX_XCC];
    uint64_t gfx_low_utilization_acc[MAX_XCC];
    uint64_t gfx_below_host_limit_total_acc[MAX_XCC];
};
_Static_assert(sizeof(struct gpum_xcp_v1_2) == 440, "xcp v1_2 size");
_Static_assert(offsetof(struct gpum_xcp_v1_2, gfx_busy_acc) == 120, "xcp v1_2 acc");

/* The v1_6 of ROCm/amdgpu @ 0ce779bf, with xcp_stats (and without throttle_status). */
struct gpum_v1_6_rocm {
    struct gpum_header common_header;
    uint16_t temperature_hotspot;
    uint16_t temperature_mem;
    uint16_t temperature_vrsoc;
    uint16_t curr_socket_power;
    uint16_t average_gfx_activity;
    uint16_t average_umc_activity;
    uint64_t energy_accumulator;
    uint64_t system_clock_counter;
    uint32_t accumulation_counter;
    uint32_t prochot_residency_acc;
    uint32_t ppt_residency_acc;
    uint32_t socket_thm_residency_acc;
    uint32_t vr_thm_residency_acc;
    uint32_t hbm_thm_residency_acc;
    uint32_t gfxclk_lock_status;
    uint16_t pcie_link_width;
    uint16_t pcie_link_speed;
    uint16_t xgmi_link_width;
    uint16_t xgmi_link_speed;
    uint32_t gfx_activity_acc;
    uint32_t mem_activity_acc;
    uint64_t pcie_bandwidth_acc;
    uint64_t pcie_bandwidth_inst;
    uint64_t pcie_l0_to_recov_count_acc;
    uint64_t pcie_replay_count_acc;
    uint64_t pcie_replay_rover_count_acc;
    uint32_t pcie_nak_sent_count_acc;
    uint32_t pcie_nak_rcvd_count_acc;
    uint64_t xgmi_read_data_acc[NUM_XGMI_LINKS];
    uint64_t xgmi_write_data_acc[NUM_XGMI_LINKS];
    uint64_t firmware_timestamp;
    uint16_t current_gfxclk[MAX_GFX_CLKS];
    uint16_t current_socclk[MAX_CLKS];
    uint16_t current_vclk0[MAX_CLKS];
    uint16_t current_dclk0[MAX_CLKS];
    uint16_t current_uclk;
    uint16_t num_partition;
    struct gpum_xcp_v1_0 xcp_stats[NUM_XCP];
    uint32_t pcie_lc_perf_other_end_recovery;
};
_Static_assert(sizeof(struct gpum_v1_6_rocm) == 1664, "v1_6 rocm size");
_Static_assert(offsetof(struct gpum_v1_6_rocm, energy_accumulator) == 16, "v1_6r energy");
_Static_assert(offsetof(struct gpum_v1_6_rocm, pcie_link_speed) == 62, "v1_6r pcie");
_Static_assert(offsetof(struct gpum_v1_6_rocm, pcie_bandwidth_acc) == 80, "v1_6r bw");
_Static_assert(offsetof(struct gpum_v1_6_rocm, current_gfxclk) == 264, "v1_6r gfxclk");
_Static_assert(offsetof(struct gpum_v1_6_rocm, num_partition) == 306, "v1_6r num_partition");
_Static_assert(offsetof(struct gpum_v1_6_rocm, xcp_stats) == 312, "v1_6r xcp_stats");
_Static_assert(offsetof(struct gpum_v1_6_rocm, pcie_lc_perf_other_end_recovery) == 1656,
               "v1_6r tail");

/* v1_7 and v1_8 differ only in the xcp_stats element type. */
#define GPUM_V1_7_BODY(xcp_type)                                                                   \
    struct gpum_header common_header;                                                              \
    uint16_t temperature_hotspot;                                                                  \
    uint16_t temperature_mem;                                                                      \
    uint16_t temperature_vrsoc;                                                                    \
    uint16_t curr_socket_power;                                                                    \
    uint16_t average_gfx_activity;                                                                 \
    uint16_t average_umc_activity;                                                                 \
    uint64_t mem_max_bandwidth;                                                                    \
    uint64_t energy_accumulator;                                                                   \
    uint64_t system_clock_counter;                                                                 \
    uint32_t accumulation_counter;                                                                 \
    uint32_t prochot_residency_acc;                                                                \
    uint32_t ppt_residency_acc;                                                                    \
    uint32_t socket_thm_residency_acc;                                                             \
    uint32_t vr_thm_residency_acc;                                                                 \
    uint32_t hbm_thm_residency_acc;                                                                \
    uint32_t gfxclk_lock_status;                                                                   \
    uint16_t pcie_link_width;                                                                      \
    uint16_t pcie_link_speed;                                                                      \
    uint16_t xgmi_link_width;                                                                      \
    uint16_t xgmi_link_speed;                                                                      \
    uint32_t gfx_activity_acc;                                                                     \
    uint32_t mem_activity_acc;                                                                     \
    uint64_t pcie_bandwidth_acc;                                                                   \
    uint64_t pcie_bandwidth_inst;                                                                  \
    uint64_t pcie_l0_to_recov_count_acc;                                                           \
    uint64_t pcie_replay_count_acc;                                                                \
    uint64_t pcie_replay_rover_count_acc;                                                          \
    uint32_t pcie_nak_sent_count_acc;                                                              \
    uint32_t pcie_nak_rcvd_count_acc;                                                              \
    uint64_t xgmi_read_data_acc[NUM_XGMI_LINKS];                                                   \
    uint64_t xgmi_write_data_acc[NUM_XGMI_LINKS];                                                  \
    uint16_t xgmi_link_status[NUM_XGMI_LINKS];                                                     \
    uint16_t padding;                                                                              \
    uint64_t firmware_timestamp;                                                                   \
    uint16_t current_gfxclk[MAX_GFX_CLKS];                                                         \
    uint16_t current_socclk[MAX_CLKS];                                                             \
    uint16_t current_vclk0[MAX_CLKS];                                                              \
    uint16_t current_dclk0[MAX_CLKS];                                                              \
    uint16_t current_uclk;                                                                         \
    uint16_t num_partition;                                                                        \
    xcp_type xcp_stats[NUM_XCP];                                                                   \
    uint32_t pcie_lc_perf_other_end_recovery

struct gpum_v1_7 {
    GPUM_V1_7_BODY(struct gpum_xcp_v1_1);
};
_Static_assert(sizeof(struct gpum_v1_7) == 2208, "v1_7 size");
_Static_assert(offsetof(struct gpum_v1_7, mem_max_bandwidth) == 16, "v1_7 bandwidth");
_Static_assert(offsetof(struct gpum_v1_7, energy_accumulator) == 24, "v1_7 energy");
_Static_assert(offsetof(struct gpum_v1_7, pcie_link_speed) == 70, "v1_7 pcie");
_Static_assert(offsetof(struct gpum_v1_7, xgmi_link_status) == 264, "v1_7 xgmi status");
_Static_assert(offsetof(struct gpum_v1_7, firmware_timestamp) == 288, "v1_7 fw timestamp");
_Static_assert(offsetof(struct gpum_v1_7, current_gfxclk) == 296, "v1_7 gfxclk");
_Static_assert(offsetof(struct gpum_v1_7, num_partition) == 338, "v1_7 num_partition");
_Static_assert(offsetof(struct gpum_v1_7, xcp_stats) == 344, "v1_7 xcp_stats");
_Static_assert(offsetof(struct gpum_v1_7, pcie_lc_perf_other_end_recovery) == 2200, "v1_7 tail");

struct gpum_v1_8 {
    GPUM_V1_7_BODY(struct gpum_xcp_v1_2);
};
_Static_assert(sizeof(struct gpum_v1_8) == 3872, "v1_8 size");
_Static_assert(offsetof(struct gpum_v1_8, current_uclk) == 336, "v1_8 uclk");
_Static_assert(offsetof(struct gpum_v1_8, num_partition) == 338, "v1_8 num_partition");
_Static_assert(offsetof(struct gpum_v1_8, xcp_stats) == 344, "v1_8 xcp_stats");
_Static_assert(offsetof(struct gpum_v1_8, pcie_lc_perf_other_end_recovery) == 3864, "v1_8 tail");

struct gpum_partition_v1_0 { /* amdgpu_partition_metrics_v1_0 */
    struct gpum_header common_header;
    uint16_t current_gfxclk[MAX_XCC];
    uint16_t current_socclk[MAX_CLKS];
    uint16_t current_vclk0[MAX_CLKS];
    uint16_t current_dclk0[MAX_CLKS];
    uint16_t current_uclk;
    uint16_t padding;
    uint32_t gfx_busy_inst[MAX_XCC];
    uint16_t jpeg_busy[NUM_JPEG_ENG_V1];
    uint16_t vcn_busy[NUM_VCN];
    uint64_t gfx_busy_acc[MAX_XCC];
    uint64_t gfx_below_host_limit_ppt_acc[MAX_XCC];
    uint64_t gfx_below_host_limit_thm_acc[MAX_XCC];
    uint64_t gfx_low_utilization_acc[MAX_XCC];
    uint64_t gfx_below_host_limit_total_acc[MAX_XCC];
};
_Static_assert(sizeof(struct gpum_partition_v1_0) == 488, "partition v1_0 size");
_Static_assert(offsetof(struct gpum_partition_v1_0, current_uclk) == 44, "partition uclk");
_Static_assert(offsetof(struct gpum_partition_v1_0, gfx_busy_inst) == 48, "partition busy");
_Static_assert(offsetof(struct gpum_partition_v1_0, vcn_busy) == 160, "partition vcn");
_Static_assert(offsetof(struct gpum_partition_v1_0, gfx_busy_acc) == 168, "partition acc");

/* ---- conversions: the all-ones fill of each width means "not supported" ------------------ */

static double u16v(uint16_t v)
{
    return v == UINT16_MAX ? NAN : (double)v;
}

static double u32v(uint32_t v)
{
    return v == UINT32_MAX ? NAN : (double)v;
}

/*
 * Zero where the kernel documents all-ones as "not supported". The all-ones fill covers only
 * fields the driver never writes; a field it copies from the firmware's metrics table on a
 * board without that sensor or counter holds the firmware's 0 (inferred from the per-ASIC
 * get_gpu_metrics functions, which copy firmware fields unconditionally). The RDNA3 v1_3
 * capture (MangoHud tests/gpu_metrics) shows both kinds: all-ones gfx_activity_acc and HBM
 * temperatures, and 0 for current_vclk0/dclk0/vclk1/dclk1, while its energy_accumulator and
 * VR temperatures are real there. Per field:
 *  - temperatures: 0 C cannot be read on a powered GPU (its own dissipation keeps every
 *    sensor above ambient), so 0 is a missing sensor and is omitted;
 *  - socket power: an operating GPU never draws 0 W, 0 is a missing sensor;
 *  - clocks: 0 is an ungated-but-unpopulated slot or a gated engine; neither is a frequency
 *    (GPUDiagnostics.jl drops 0 gfx clock slots too), omitted;
 *  - PCIe width/speed: a trained link is never 0 lanes or 0 GT/s;
 *  - energy_accumulator: energy since boot is never 0 once the GPU has run; firmware that
 *    does not count leaves 0 and a counter stuck at 0 would read as "no power drawn";
 *  - accumulation_counter: a counter of ticks since boot is never 0 on a running GPU; 0 is
 *    firmware that does not fill it, omitted;
 *  - the busy accumulators (gfx_activity_acc, gfx_busy_acc): every layout that carries them
 *    (v1_6..v1_9, partition v1_0/v1_1) is SMU 13.0.6's, whose get_gpu_metrics fills what it
 *    does not support with all-ones (smu_cmn_init_soft_gpu_metrics, and the per-XCC arrays
 *    it leaves unfilled), so 0 is a real reading: a partition that has not run a wave since
 *    the driver loaded, the most common thing to reclaim. Reading it as unknown would keep
 *    such a partition forever. (Accumulator groups drop intervals where a value is missing,
 *    accum.h, so a later all-ones does not bridge a 0 into idle time.);
 *  - activity gauges and throttle residencies: 0 is a real reading (idle, never throttled;
 *    the MI300X captures read 0 residency for prochot and thermal) and is kept.
 */
static double u16nz(uint16_t v)
{
    return v == 0 ? NAN : u16v(v);
}

static struct gpum_acc acc_u32(uint32_t v, bool zero_is_absent)
{
    struct gpum_acc a = {v, 32};
    if (v == UINT32_MAX || (zero_is_absent && v == 0))
        a.bits = 0;
    return a;
}

static struct gpum_acc acc_u64(uint64_t v, bool zero_is_absent)
{
    struct gpum_acc a = {v, 64};
    if (v == UINT64_MAX || (zero_is_absent && v == 0))
        a.bits = 0;
    return a;
}

/* Unit conversions; NaN stays NaN through them. */
#define RATIO(pct) ((pct) / 100.0) /* percent -> 0..1 */
#define HZ(mhz)    ((mhz)*1e6)     /* MHz -> Hz */
#define GTS(deci)  ((deci) / 10.0) /* 0.1 GT/s -> GT/s */

/* energy_accumulator counts 15.259 uJ, i.e. 2^-16 J; 0 is "not counted" (see above). */
static double energy_j(uint64_t v)
{
    return v == UINT64_MAX || v == 0 ? NAN : ldexp((double)v, -16);
}

static void nan_fill(double *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = NAN;
}

#define NAN_FILL(arr)  nan_fill((arr), sizeof(arr) / sizeof((arr)[0]))
#define ACC_CLEAR(arr) memset((arr), 0, sizeof(arr))

static void clocks_u16(double *dst, const uint16_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = HZ(u16nz(src[i]));
}

static void gpum_reset(struct gpu_metrics *o)
{
    memset(o, 0, sizeof(*o));
    o->temp_edge = o->temp_hotspot = o->temp_mem = NAN;
    o->temp_vrgfx = o->temp_vrsoc = o->temp_vrmem = NAN;
    NAN_FILL(o->temp_hbm);
    o->gfx_activity = o->umc_activity = o->mm_activity = NAN;
    o->socket_power = o->energy = NAN;
    NAN_FILL(o->gfxclk);
    NAN_FILL(o->socclk);
    NAN_FILL(o->vclk0);
    NAN_FILL(o->dclk0);
    o->uclk = o->pcie_link_width = o->pcie_link_speed = NAN;
    o->num_partition = -1;
    for (size_t i = 0; i < GPUM_MAX_XCP; i++)
        NAN_FILL(o->xcp[i].gfx_busy); /* the accumulators are absent (bits 0) from memset */
    NAN_FILL(o->xcc_busy);
}

__attribute__((format(printf, 3, 4))) static void seterr(char *err, size_t errlen, const char *fmt,
                                                         ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- per-layout decoding -------------------------------------------------------------------- */

static void decode_v1_3(const struct gpum_v1_3 *m, struct gpu_metrics *o)
{
    /*
     * v1_3 temperatures are plain degrees: the real MangoHud blob (a Radeon, header 120/1/3)
     * reads temperature_edge 36 and hotspot 49, which MangoHud reports as 36 C.
     */
    o->temp_edge = u16nz(m->temperature_edge);
    o->temp_hotspot = u16nz(m->temperature_hotspot);
    o->temp_mem = u16nz(m->temperature_mem);
    o->temp_vrgfx = u16nz(m->temperature_vrgfx);
    o->temp_vrsoc = u16nz(m->temperature_vrsoc);
    o->temp_vrmem = u16nz(m->temperature_vrmem);
    for (size_t i = 0; i < NUM_HBM_INSTANCES; i++)
        o->temp_hbm[i] = u16nz(m->temperature_hbm[i]);
    o->gfx_activity = RATIO(u16v(m->average_gfx_activity));
    o->umc_activity = RATIO(u16v(m->average_umc_activity));
    o->mm_activity = RATIO(u16v(m->average_mm_activity));
    o->socket_power = u16nz(m->average_socket_power);
    o->energy = energy_j(m->energy_accumulator);
    o->gfxclk[0] = HZ(u16nz(m->current_gfxclk));
    o->socclk[0] = HZ(u16nz(m->current_socclk));
    o->vclk0[0] = HZ(u16nz(m->current_vclk0));
    o->dclk0[0] = HZ(u16nz(m->current_dclk0));
    o->uclk = HZ(u16nz(m->current_uclk));
    o->pcie_link_width = u16nz(m->pcie_link_width);
    o->pcie_link_speed = GTS(u16nz(m->pcie_link_speed));
    /* gfx_activity_acc exists in v1_3 but without accumulation_counter it has no
     * denominator, so it is not decoded. */
}

/* The fields v1_4 and every later discrete layout share by name and type. */
#define DECODE_V1_4_COMMON(m, o)                                                                   \
    do {                                                                                           \
        (o)->temp_hotspot = u16nz((m)->temperature_hotspot);                                       \
        (o)->temp_mem = u16nz((m)->temperature_mem);                                               \
        (o)->temp_vrsoc = u16nz((m)->temperature_vrsoc);                                           \
        (o)->socket_power = u16nz((m)->curr_socket_power);                                         \
        (o)->gfx_activity = RATIO(u16v((m)->average_gfx_activity));                                \
        (o)->umc_activity = RATIO(u16v((m)->average_umc_activity));                                \
        (o)->energy = energy_j((m)->energy_accumulator);                                           \
        (o)->pcie_link_width = u16nz((m)->pcie_link_width);                                        \
        (o)->pcie_link_speed = GTS(u16nz((m)->pcie_link_speed));                                   \
        clocks_u16((o)->gfxclk, (m)->current_gfxclk, MAX_GFX_CLKS);                                \
        clocks_u16((o)->socclk, (m)->current_socclk, MAX_CLKS);                                    \
        clocks_u16((o)->vclk0, (m)->current_vclk0, MAX_CLKS);                                      \
        clocks_u16((o)->dclk0, (m)->current_dclk0, MAX_CLKS);                                      \
        (o)->uclk = HZ(u16nz((m)->current_uclk));                                                  \
    } while (0)

/* The accumulators of v1_6 (both layouts) and later: all U32 in the fixed layouts. */
#define DECODE_ACC(m, o)                                                                           \
    do {                                                                                           \
        (o)->accumulation_counter = acc_u32((m)->accumulation_counter, true);                      \
        (o)->gfx_activity_acc = acc_u32((m)->gfx_activity_acc, false);                             \
        (o)->residency[GPUM_RES_PROCHOT] = acc_u32((m)->prochot_residency_acc, false);             \
        (o)->residency[GPUM_RES_PPT] = acc_u32((m)->ppt_residency_acc, false);                     \
        (o)->residency[GPUM_RES_SOCKET_THM] = acc_u32((m)->socket_thm_residency_acc, false);       \
        (o)->residency[GPUM_RES_VR_THM] = acc_u32((m)->vr_thm_residency_acc, false);               \
        (o)->residency[GPUM_RES_HBM_THM] = acc_u32((m)->hbm_thm_residency_acc, false);             \
    } while (0)

/*
 * Per-XCP busy (smu_v13_0_6_ppt.c): num_partition XCPs are filled, each with its XCCs at
 * indices counted within the partition; the rest keeps the all-ones fill or stale data, so
 * only the first num_partition entries are read. A num_partition above NUM_XCP cannot come
 * from the driver and is treated like the sentinel rather than trusted.
 */
#define DECODE_XCP(m, o)                                                                           \
    do {                                                                                           \
        if ((m)->num_partition == UINT16_MAX || (m)->num_partition > NUM_XCP)                      \
            break;                                                                                 \
        (o)->num_partition = (m)->num_partition;                                                   \
        for (size_t x_ = 0; x_ < (m)->num_partition; x_++) {                                       \
            for (size_t c_ = 0; c_ < MAX_XCC; c_++) {                                              \
                (o)->xcp[x_].gfx_busy[c_] = RATIO(u32v((m)->xcp_stats[x_].gfx_busy_inst[c_]));     \
                (o)->xcp[x_].gfx_busy_acc[c_] =                                                    \
                    acc_u64((m)->xcp_stats[x_].gfx_busy_acc[c_], false);                           \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static void decode_v1_4(const struct gpum_v1_4 *m, struct gpu_metrics *o)
{
    DECODE_V1_4_COMMON(m, o);
}

static void decode_v1_5(const struct gpum_v1_5 *m, struct gpu_metrics *o)
{
    DECODE_V1_4_COMMON(m, o);
}

static void decode_v1_6_mainline(const struct gpum_v1_6_mainline *m, struct gpu_metrics *o)
{
    DECODE_V1_4_COMMON(m, o);
    DECODE_ACC(m, o);
}

static void decode_v1_6_rocm(const struct gpum_v1_6_rocm *m, struct gpu_metrics *o)
{
    DECODE_V1_4_COMMON(m, o);
    DECODE_ACC(m, o);
    DECODE_XCP(m, o);
}

static void decode_v1_7(const struct gpum_v1_7 *m, struct gpu_metrics *o)
{
    DECODE_V1_4_COMMON(m, o);
    DECODE_ACC(m, o);
    DECODE_XCP(m, o);
}

static void decode_v1_8(const struct gpum_v1_8 *m, struct gpu_metrics *o)
{
    DECODE_V1_4_COMMON(m, o);
    DECODE_ACC(m, o);
    DECODE_XCP(m, o);
}

/*
 * Every layout is copied into this union so that the decoders read aligned, typed fields
 * whatever the alignment of the caller's buffer.
 */
union gpum_any {
    struct gpum_v1_3 v1_3;
    struct gpum_v1_4 v1_4;
    struct gpum_v1_5 v1_5;
    struct gpum_v1_6_mainline v1_6_mainline;
    struct gpum_v1_6_rocm v1_6_rocm;
    struct gpum_v1_7 v1_7;
    struct gpum_v1_8 v1_8;
};

enum gpum_kind { K_V1_3, K_V1_4, K_V1_5, K_V1_6_MAINLINE, K_V1_6_ROCM, K_V1_7, K_V1_8 };

struct gpum_layout {
    const char *name;
    uint8_t content_revision;
    uint16_t size;
    enum gpum_kind kind;
};

/* Discrete (format_revision 1) layouts; two sizes exist for content_revision 6. */
static const struct gpum_layout gpum_layouts[] = {
    {"v1_3", 3, sizeof(struct gpum_v1_3), K_V1_3},
    {"v1_4", 4, sizeof(struct gpum_v1_4), K_V1_4},
    {"v1_5", 5, sizeof(struct gpum_v1_5), K_V1_5},
    {"v1_6_mainline", 6, sizeof(struct gpum_v1_6_mainline), K_V1_6_MAINLINE},
    {"v1_6_rocm", 6, sizeof(struct gpum_v1_6_rocm), K_V1_6_ROCM},
    {"v1_7", 7, sizeof(struct gpum_v1_7), K_V1_7},
    {"v1_8", 8, sizeof(struct gpum_v1_8), K_V1_8},
};

#define N_LAYOUTS (sizeof(gpum_layouts) / sizeof(gpum_layouts[0]))

/* "v1_5 (360)" or "v1_6 (384 or 1664)": what a size mismatch message lists. */
static void expected_sizes(uint8_t crev, char *buf, size_t buflen)
{
    size_t n = (size_t)snprintf(buf, buflen, "v1_%u (", crev);
    const char *sep = "";
    for (size_t i = 0; i < N_LAYOUTS && n < buflen; i++) {
        if (gpum_layouts[i].content_revision != crev)
            continue;
        n += (size_t)snprintf(buf + n, buflen - n, "%s%u", sep, gpum_layouts[i].size);
        sep = " or ";
    }
    if (n < buflen)
        snprintf(buf + n, buflen - n, ")");
}

static int read_header(const void *buf, size_t len, struct gpum_header *h, char *err, size_t errlen)
{
    if (!buf || len < sizeof(*h)) {
        seterr(err, errlen, "truncated: %zu of %zu bytes", buf ? len : 0, sizeof(*h));
        return -1;
    }
    memcpy(h, buf, sizeof(*h));
    return 0;
}

/* ---- attribute tables: gpu_metrics v1_9, partition metrics v1_1 ----------------------------- */

/*
 * Wire format (kernel smu_cmn.h DECLARE_SMU_METRICS_CLASS, kgd_pp_interface.h
 * AMDGPU_METRICS_ENC_ATTR, amd-gfx "Add definition for gpu_metrics v1.9", Sept 2025): the
 * 4-byte header, a C int attr_count, then attr_count entries back to back, each a u64
 * encoding followed by `inst` values of the encoded type, with no padding. encoding =
 * unit << 24 | type << 20 | id << 10 | inst. Nothing is at a fixed offset: a later kernel
 * widened accumulation_counter to U64 and appended temperature arrays, which moved every
 * field after them. So entries are recognised by id only and decoded by their own type.
 */
#define ATTR_HDR     8 /* header + attr_count */
#define ATTR_ENC     8
#define ATTR_MIN_ENT (ATTR_ENC + 1) /* an entry has at least one value of at least 1 byte */

enum attr_type { T_U8, T_S8, T_U16, T_S16, T_U32, T_S32, T_U64, T_S64, T_MAX };

static const uint8_t attr_width[T_MAX] = {1, 1, 2, 2, 4, 4, 8, 8};

/* Units that change a field's scale; others are ignored (an unknown unit is not an error). */
#define UNIT_SPEED_1 6 /* GT/s */
#define UNIT_SPEED_2 7 /* 0.1 GT/s */

/* Attribute ids (AMDGPU_METRICS_ATTR_ID_*) the exporter reads. */
enum attr_id {
    A_TEMP_HOTSPOT = 0,
    A_TEMP_MEM = 1,
    A_TEMP_VRSOC = 2,
    A_SOCKET_POWER = 3,
    A_GFX_ACTIVITY = 4,
    A_UMC_ACTIVITY = 5,
    A_ENERGY = 7,
    A_ACC_COUNTER = 9,
    A_PROCHOT_RES = 10, /* 10..14: prochot, ppt, socket_thm, vr_thm, hbm_thm residency */
    A_HBM_THM_RES = 14,
    A_PCIE_WIDTH = 16,
    A_PCIE_SPEED = 17,
    A_GFX_ACTIVITY_ACC = 20,
    A_GFXCLK = 33,
    A_SOCCLK = 34,
    A_VCLK0 = 35,
    A_DCLK0 = 36,
    A_UCLK = 37,
    A_GFX_BUSY_INST = 40,
    A_GFX_BUSY_ACC = 43,
    A_TEMP_HBM = 48,
    /* Ids 49..51 were renumbered between two kernel patches (MID inserted before AID), so
     * their meaning depends on the kernel: they are skipped. The newest list ends at 103. */
    A_LAST_KNOWN = 103,
};

struct attr {
    unsigned unit, type, id, inst;
    const unsigned char *val; /* inst values of attr_width[type] bytes, unaligned */
};

/* Element i as an unsigned integer; false for the all-ones (signed: -1) sentinel or a
 * negative signed value, which no field the exporter reads can hold. */
static bool attr_uint(const struct attr *a, unsigned i, uint64_t *v, uint8_t *bits)
{
    unsigned w = attr_width[a->type];
    uint64_t raw = 0;
    memcpy(&raw, a->val + (size_t)i * w, w); /* little-endian host: low bytes first */
    uint64_t ones = w == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * w)) - 1;
    if (raw == ones)
        return false;
    *bits = (uint8_t)(8 * w);
    if (a->type & 1) { /* signed: sign-extend; a counter cannot be negative */
        if (raw >> (8 * w - 1))
            return false;
        *bits = (uint8_t)(8 * w - 1);
    }
    *v = raw;
    return true;
}

static double attr_num(const struct attr *a, unsigned i)
{
    uint64_t v;
    uint8_t bits;
    return attr_uint(a, i, &v, &bits) ? (double)v : NAN;
}

static double attr_nz(const struct attr *a, unsigned i) /* 0 means "no sensor", see u16nz */
{
    double v = attr_num(a, i);
    return v == 0 ? NAN : v;
}

static struct gpum_acc attr_acc(const struct attr *a, unsigned i, bool zero_is_absent)
{
    struct gpum_acc r = {0, 0};
    if (!attr_uint(a, i, &r.v, &r.bits) || (zero_is_absent && r.v == 0))
        r.bits = 0;
    return r;
}

/* Up to `n` elements of an array field; the rest of a longer array is skipped. */
#define ATTR_EACH(a, n, i) for (unsigned i = 0; i < (a)->inst && i < (n); i++)

static void attr_clocks(const struct attr *a, double *dst, unsigned n) /* MHz -> Hz */
{
    ATTR_EACH(a, n, i)
    dst[i] = HZ(attr_nz(a, i));
}

static void attr_ratios(const struct attr *a, double *dst, unsigned n) /* percent -> 0..1 */
{
    ATTR_EACH(a, n, i)
    dst[i] = RATIO(attr_num(a, i));
}

static void attr_accs(const struct attr *a, struct gpum_acc *dst, unsigned n)
{
    ATTR_EACH(a, n, i)
    dst[i] = attr_acc(a, i, false); /* busy accumulators: 0 is real (see u16nz) */
}

typedef void (*attr_apply_fn)(void *out, const struct attr *a);

struct attr_walk {
    int attr_count, parsed, unknown;
    const char *partial;
};

/*
 * Walk an attribute table of `len` bytes whose header says `structure_size` and call
 * `apply` for each complete entry. Returns 0, or -1 with err for a table whose count is
 * corrupt or of which nothing could be read.
 */
static int attr_walk(const unsigned char *buf, size_t len, uint16_t structure_size,
                     attr_apply_fn apply, void *out, struct attr_walk *w, char *err, size_t errlen)
{
    static const char *const truncated = "truncated";
    memset(w, 0, sizeof(*w));
    if (structure_size < ATTR_HDR) {
        seterr(err, errlen, "structure_size %u is smaller than an attribute table header",
               structure_size);
        return -1;
    }
    if (len < ATTR_HDR) {
        seterr(err, errlen, "truncated: %zu of %u bytes", len, structure_size);
        return -1;
    }
    int32_t count;
    memcpy(&count, buf + 4, sizeof(count));
    /* The count is a C int; every entry takes at least 9 bytes of the claimed size. */
    if (count < 0 || (size_t)count > (size_t)(structure_size - ATTR_HDR) / ATTR_MIN_ENT) {
        seterr(err, errlen, "attr_count %d does not fit structure_size %u", (int)count,
               structure_size);
        return -1;
    }
    w->attr_count = count;
    size_t n = len < structure_size ? len : structure_size, off = ATTR_HDR;
    /* Duplicate ids do not occur in kernel lists; the first one wins. */
    uint64_t seen[1024 / 64] = {0};
    for (int k = 0; k < count; k++) {
        uint64_t enc;
        if (n - off < ATTR_ENC) {
            w->partial = truncated;
            break;
        }
        memcpy(&enc, buf + off, sizeof(enc));
        struct attr a = {
            .unit = (unsigned)(enc >> 24) & 0xFF,
            .type = (unsigned)(enc >> 20) & 0xF,
            .id = (unsigned)(enc >> 10) & 0x3FF,
            .inst = (unsigned)enc & 0x3FF,
        };
        if (a.type >= T_MAX) { /* width unknowable: nothing after this can be located */
            w->partial = "attribute of unknown type";
            break;
        }
        size_t payload = (size_t)a.inst * attr_width[a.type];
        if (n - off - ATTR_ENC < payload) {
            w->partial = truncated;
            break;
        }
        a.val = buf + off + ATTR_ENC;
        off += ATTR_ENC + payload;
        if (a.inst == 0)
            continue; /* no value: nothing to apply (the kernel never emits it) */
        uint64_t bit = UINT64_C(1) << (a.id % 64);
        if (seen[a.id / 64] & bit)
            continue;
        seen[a.id / 64] |= bit;
        if (a.id > A_LAST_KNOWN)
            w->unknown++;
        apply(out, &a);
        w->parsed++;
    }
    /* Entries that fit are kept, but a file shorter than it says it is was cut short. */
    if (!w->partial && len < structure_size)
        w->partial = truncated;
    if (w->partial && w->parsed == 0) {
        seterr(err, errlen, "no attribute readable (%s at byte %zu of %zu)", w->partial, off, n);
        return -1;
    }
    /* An empty table (attr_count 0, or only entries without values) is not a reading: a
     * success here would be a GPU with every field absent and nothing to say why. */
    if (w->parsed == 0) {
        seterr(err, errlen, "no attribute with a value (attr_count %d)", (int)count);
        return -1;
    }
    return 0;
}

static void apply_gpu(void *outp, const struct attr *a)
{
    struct gpu_metrics *o = outp;
    switch (a->id) {
    case A_TEMP_HOTSPOT:
        o->temp_hotspot = attr_nz(a, 0);
        break;
    case A_TEMP_MEM:
        o->temp_mem = attr_nz(a, 0);
        break;
    case A_TEMP_VRSOC:
        o->temp_vrsoc = attr_nz(a, 0);
        break;
    case A_SOCKET_POWER:
        o->socket_power = attr_nz(a, 0);
        break;
    case A_GFX_ACTIVITY:
        o->gfx_activity = RATIO(attr_num(a, 0));
        break;
    case A_UMC_ACTIVITY:
        o->umc_activity = RATIO(attr_num(a, 0));
        break;
    case A_ENERGY: {
        struct gpum_acc e = attr_acc(a, 0, true);
        o->energy = e.bits ? ldexp((double)e.v, -16) : NAN;
        break;
    }
    case A_ACC_COUNTER:
        o->accumulation_counter = attr_acc(a, 0, true);
        break;
    case A_GFX_ACTIVITY_ACC:
        o->gfx_activity_acc = attr_acc(a, 0, false);
        break;
    case A_PCIE_WIDTH:
        o->pcie_link_width = attr_nz(a, 0);
        break;
    case A_PCIE_SPEED:
        o->pcie_link_speed = a->unit == UNIT_SPEED_1 ? attr_nz(a, 0) : GTS(attr_nz(a, 0));
        break;
    case A_GFXCLK:
        attr_clocks(a, o->gfxclk, GPUM_MAX_GFXCLK);
        break;
    case A_SOCCLK:
        attr_clocks(a, o->socclk, GPUM_MAX_CLK);
        break;
    case A_VCLK0:
        attr_clocks(a, o->vclk0, GPUM_MAX_CLK);
        break;
    case A_DCLK0:
        attr_clocks(a, o->dclk0, GPUM_MAX_CLK);
        break;
    case A_UCLK:
        attr_clocks(a, &o->uclk, 1);
        break;
    case A_GFX_BUSY_INST:
        attr_ratios(a, o->xcc_busy, GPUM_MAX_XCC);
        break;
    case A_GFX_BUSY_ACC:
        attr_accs(a, o->xcc_busy_acc, GPUM_MAX_XCC);
        break;
    case A_TEMP_HBM:
        ATTR_EACH(a, GPUM_NUM_HBM, i)
        o->temp_hbm[i] = attr_nz(a, i);
        break;
    default:
        if (a->id >= A_PROCHOT_RES && a->id <= A_HBM_THM_RES)
            o->residency[a->id - A_PROCHOT_RES] = attr_acc(a, 0, false);
        break;
    }
}

static void apply_partition(void *outp, const struct attr *a)
{
    struct gpu_partition_metrics *o = outp;
    switch (a->id) {
    case A_GFXCLK:
        attr_clocks(a, o->gfxclk, GPUM_MAX_XCC);
        break;
    case A_UCLK:
        attr_clocks(a, &o->uclk, 1);
        break;
    case A_GFX_BUSY_INST:
        attr_ratios(a, o->gfx_busy, GPUM_MAX_XCC);
        break;
    case A_GFX_BUSY_ACC:
        attr_accs(a, o->gfx_busy_acc, GPUM_MAX_XCC);
        break;
    case A_ACC_COUNTER:
        o->accumulation_counter = attr_acc(a, 0, true);
        break;
    default:
        break;
    }
}

/* The revisions that are recognised but not decoded (see gpu_metrics.h). */
static bool skipped_revision(const struct gpum_header *h)
{
    return h->format_revision == 2 || h->format_revision == 3 ||
           (h->format_revision == 1 && h->content_revision <= 2);
}

int gpum_parse(const void *buf, size_t len, struct gpu_metrics *out, char *err, size_t errlen)
{
    struct gpum_header h;

    gpum_reset(out);
    if (read_header(buf, len, &h, err, errlen) < 0)
        return -1;
    out->structure_size = h.structure_size;
    out->format_revision = h.format_revision;
    out->content_revision = h.content_revision;

    if (skipped_revision(&h)) {
        seterr(err, errlen, "%s layout %u.%u not decoded",
               h.format_revision == 1 ? "discrete" : "APU", h.format_revision, h.content_revision);
        return GPUM_SKIPPED;
    }
    if (h.format_revision == 1 && h.content_revision == 9) {
        struct attr_walk w;
        if (attr_walk(buf, len, h.structure_size, apply_gpu, out, &w, err, errlen) < 0) {
            gpum_reset(out);
            return -1;
        }
        out->attr_count = w.attr_count;
        out->attrs_parsed = w.parsed;
        out->attrs_unknown = w.unknown;
        out->partial = w.partial;
        out->layout = "v1_9";
        return 0;
    }
    bool known_rev = false;
    const struct gpum_layout *lay = NULL;
    if (h.format_revision == 1) {
        for (size_t i = 0; i < N_LAYOUTS; i++) {
            if (gpum_layouts[i].content_revision != h.content_revision)
                continue;
            known_rev = true;
            if (gpum_layouts[i].size == h.structure_size)
                lay = &gpum_layouts[i];
        }
    }
    if (!known_rev) {
        seterr(err, errlen, "unsupported gpu_metrics revision %u.%u", h.format_revision,
               h.content_revision);
        return -1;
    }
    if (len < h.structure_size) {
        seterr(err, errlen, "truncated: %zu of %u bytes", len, h.structure_size);
        return -1;
    }
    if (!lay) {
        char want[64];
        expected_sizes(h.content_revision, want, sizeof(want));
        seterr(err, errlen, "size %u does not match %s", h.structure_size, want);
        return -1;
    }

    /* The union is ~4 KiB; static storage would make the parser non-reentrant. */
    union gpum_any m;
    memcpy(&m, buf, lay->size);
    switch (lay->kind) {
    case K_V1_3:
        decode_v1_3(&m.v1_3, out);
        break;
    case K_V1_4:
        decode_v1_4(&m.v1_4, out);
        break;
    case K_V1_5:
        decode_v1_5(&m.v1_5, out);
        break;
    case K_V1_6_MAINLINE:
        decode_v1_6_mainline(&m.v1_6_mainline, out);
        break;
    case K_V1_6_ROCM:
        decode_v1_6_rocm(&m.v1_6_rocm, out);
        break;
    case K_V1_7:
        decode_v1_7(&m.v1_7, out);
        break;
    case K_V1_8:
        decode_v1_8(&m.v1_8, out);
        break;
    }
    out->layout = lay->name;
    return 0;
}

static void partition_reset(struct gpu_partition_metrics *o)
{
    memset(o, 0, sizeof(*o));
    NAN_FILL(o->gfxclk);
    o->uclk = NAN;
    NAN_FILL(o->gfx_busy);
}

int gpum_parse_partition(const void *buf, size_t len, struct gpu_partition_metrics *out, char *err,
                         size_t errlen)
{
    struct gpum_header h;
    struct gpum_partition_v1_0 m;

    partition_reset(out);
    if (read_header(buf, len, &h, err, errlen) < 0)
        return -1;
    out->structure_size = h.structure_size;
    out->format_revision = h.format_revision;
    out->content_revision = h.content_revision;

    /* v1_1 is the attribute table (smu_v13_0_6_partition_metrics_init(xcp_metrics, 1, 1)). */
    if (h.format_revision == 1 && h.content_revision == 1) {
        struct attr_walk w;
        if (attr_walk(buf, len, h.structure_size, apply_partition, out, &w, err, errlen) < 0) {
            partition_reset(out);
            return -1;
        }
        out->attr_count = w.attr_count;
        out->attrs_parsed = w.parsed;
        out->attrs_unknown = w.unknown;
        out->partial = w.partial;
        out->layout = "partition_v1_1";
        return 0;
    }
    /* The xcp_metrics patch writes the header with smu_cmn_init_partition_metrics(p, 1, 0). */
    if (h.format_revision != 1 || h.content_revision != 0) {
        seterr(err, errlen, "unsupported xcp_metrics revision %u.%u", h.format_revision,
               h.content_revision);
        return -1;
    }
    if (len < h.structure_size) {
        seterr(err, errlen, "truncated: %zu of %u bytes", len, h.structure_size);
        return -1;
    }
    if (h.structure_size != sizeof(m)) {
        seterr(err, errlen, "size %u does not match partition_v1_0 (%zu)", h.structure_size,
               sizeof(m));
        return -1;
    }

    memcpy(&m, buf, sizeof(m));
    clocks_u16(out->gfxclk, m.current_gfxclk, MAX_XCC);
    out->uclk = HZ(u16v(m.current_uclk));
    for (size_t i = 0; i < MAX_XCC; i++) {
        out->gfx_busy[i] = RATIO(u32v(m.gfx_busy_inst[i]));
        out->gfx_busy_acc[i] = acc_u64(m.gfx_busy_acc[i], false);
    }
    out->layout = "partition_v1_0";
    return 0;
}
