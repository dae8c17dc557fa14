/*
 * Pure parser of the amdgpu `gpu_metrics` binary blob and of the per-partition
 * `xcp_metrics` blob. No paths, no metric names: bytes in, a struct out.
 *
 * Fixed layouts are chosen by (format_revision, content_revision, structure_size) from the
 * header, because two different v1_6 layouts exist (384 B mainline, 1664 B ROCm with
 * xcp_stats). Supported: v1_3, v1_4, v1_5, v1_6 (both), v1_7, v1_8 and
 * amdgpu_partition_metrics_v1_0; a blob shorter than its structure_size, or whose size does
 * not match the layout of its revision, is rejected with a message. gpu_metrics v1_9 and
 * partition metrics v1_1 are self-describing attribute tables (kernel smu_cmn.h
 * DECLARE_SMU_METRICS_CLASS): they are walked entry by entry and fields are recognised by
 * attribute id, never by offset, so later kernels that widen a type or append fields still
 * parse. The APU layouts (v2_x, v3_0) and v1_0..v1_2 are recognised and not decoded
 * (GPUM_SKIPPED). Fields the SMU does not fill hold the all-ones "not supported" sentinel;
 * they come out as NaN (or an absent accumulator) so that callers omit them instead of
 * reporting 0. Units are converted to base units on the way out.
 */
#ifndef GPURECLAIM_GPU_METRICS_H
#define GPURECLAIM_GPU_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define GPUM_MAX_XCP    8
#define GPUM_MAX_XCC    8
#define GPUM_MAX_GFXCLK 8
#define GPUM_MAX_CLK    4
#define GPUM_NUM_HBM    8 /* v1_3 has 4, v1_9 tables of newer kernels 8 */

/* gpum_parse / gpum_parse_partition return codes besides 0 and -1. */
#define GPUM_SKIPPED (-2) /* a known layout this parser does not decode (APU, v1_0..v1_2) */

/*
 * A raw accumulator as the driver encodes it: `bits` is the width of its type (32 or 64
 * for the kernel's U32/U64; 0 = absent from the layout, or the "not supported" fill). It is
 * kept raw, not converted to double, so that deltas can be taken modulo 2^bits: a U32
 * gfx_activity_acc advancing by 100 per firmware tick wraps in about 12 hours.
 */
struct gpum_acc {
    uint64_t v;
    uint8_t bits;
};

/* Throttle residency accumulators (firmware ticks spent throttled), in this order. */
enum gpum_residency {
    GPUM_RES_PROCHOT,
    GPUM_RES_PPT,
    GPUM_RES_SOCKET_THM,
    GPUM_RES_VR_THM,
    GPUM_RES_HBM_THM,
    GPUM_RES_N
};

/* Every double below is NaN when the field is absent in the layout or not supported. */
struct gpum_xcp {
    double gfx_busy[GPUM_MAX_XCC];              /* ratio 0..1 per XCC within the partition */
    struct gpum_acc gfx_busy_acc[GPUM_MAX_XCC]; /* percent x accumulation ticks */
};

struct gpu_metrics {
    uint16_t structure_size;
    uint8_t format_revision, content_revision;
    const char *layout; /* e.g. "v1_3", "v1_6_mainline", "v1_6_rocm", "v1_8", "v1_9" */
    /* Attribute tables only: what the walk met. partial is NULL, or why the walk stopped
     * early (truncated, unknown type); the fields before that point are still valid. */
    int attr_count, attrs_parsed, attrs_unknown;
    const char *partial;

    double temp_edge, temp_hotspot, temp_mem, temp_vrgfx, temp_vrsoc, temp_vrmem; /* celsius */
    double temp_hbm[GPUM_NUM_HBM];                                                /* celsius */
    double gfx_activity;            /* ratio 0..1 (average_gfx_activity) */
    double umc_activity;            /* ratio 0..1 (average_umc_activity) */
    double mm_activity;             /* ratio 0..1 (v1_3 average_mm_activity) */
    double socket_power;            /* watts (v1_3 average_socket_power, v1_4+ curr_socket_power) */
    double energy;                  /* joules: energy_accumulator x 2^-16 (15.259 uJ units) */
    double gfxclk[GPUM_MAX_GFXCLK]; /* hertz, current_gfxclk (v1_3: index 0 only) */
    double socclk[GPUM_MAX_CLK], vclk0[GPUM_MAX_CLK], dclk0[GPUM_MAX_CLK]; /* hertz */
    double uclk;                                                           /* hertz */
    double pcie_link_width;                                                /* lanes */
    double pcie_link_speed;                                                /* GT/s */
    int num_partition; /* -1: no xcp_stats in the layout, all-ones, or above GPUM_MAX_XCP */
    struct gpum_xcp xcp[GPUM_MAX_XCP];
    /* The accumulators (v1_6 and later): accumulation_counter is the denominator of all of
     * them ("accumulation cycle counter", about one tick per millisecond). */
    struct gpum_acc accumulation_counter;
    struct gpum_acc gfx_activity_acc; /* whole device, percent x ticks */
    struct gpum_acc residency[GPUM_RES_N];
    /* v1_9: per XCC over the whole device (index 0..NUM_XCC-1, not within a partition). */
    double xcc_busy[GPUM_MAX_XCC];
    struct gpum_acc xcc_busy_acc[GPUM_MAX_XCC];
};

/* The per-partition `xcp_metrics` file: amdgpu_partition_metrics v1_0 (fixed) or v1_1
 * (attribute table). Arrays are indexed by XCC within the partition. */
struct gpu_partition_metrics {
    uint16_t structure_size;
    uint8_t format_revision, content_revision;
    const char *layout; /* "partition_v1_0", "partition_v1_1"; NULL on error */
    int attr_count, attrs_parsed, attrs_unknown;
    const char *partial;           /* as in struct gpu_metrics */
    double gfxclk[GPUM_MAX_XCC];   /* hertz */
    double uclk;                   /* hertz */
    double gfx_busy[GPUM_MAX_XCC]; /* ratio 0..1 per XCC of the partition */
    struct gpum_acc gfx_busy_acc[GPUM_MAX_XCC];
    /* v1_1 of newer kernels carries its own counter; absent otherwise (use the GPU's). */
    struct gpum_acc accumulation_counter;
};

/*
 * Parse a gpu_metrics blob of `len` bytes (bytes past structure_size are ignored; `buf`
 * needs no alignment). Returns 0; GPUM_SKIPPED with a reason in err for a layout that is
 * recognised but not decoded ("APU layout 2.2 not decoded"); or -1 with a one-line reason in
 * err (e.g. "truncated: 100 of 120 bytes", "unsupported gpu_metrics revision 1.10",
 * "size 400 does not match v1_5 (360)", "attr_count -1 is negative"). An attribute table
 * cut short, or with an entry of unknown type, returns 0 with what precedes the break and
 * the reason in out->partial, unless nothing at all could be read (-1). `out` is fully
 * initialised even on error: every double NaN, every accumulator absent, num_partition -1,
 * layout NULL. err may be NULL.
 */
int gpum_parse(const void *buf, size_t len, struct gpu_metrics *out, char *err, size_t errlen);

/*
 * Parse an xcp_metrics blob: amdgpu_partition_metrics_v1_0 (header revision 1.0, 488 bytes)
 * or the v1_1 attribute table (header 1.1). Same conventions; e.g. "unsupported xcp_metrics
 * revision 1.2".
 */
int gpum_parse_partition(const void *buf, size_t len, struct gpu_partition_metrics *out, char *err,
                         size_t errlen);

#endif
