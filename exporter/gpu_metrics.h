/*
 * Pure parser of the amdgpu `gpu_metrics` binary blob and of the per-partition
 * `xcp_metrics` blob. No paths, no metric names: bytes in, a struct out.
 *
 * The layout is chosen by (format_revision, content_revision, structure_size) from the
 * header, because two different v1_6 layouts exist (384 B mainline, 1664 B ROCm with
 * xcp_stats). Supported: v1_3, v1_4, v1_5, v1_6 (both), v1_7, v1_8 and
 * amdgpu_partition_metrics_v1_0. A blob shorter than its structure_size, or whose size does
 * not match the layout of its revision, is rejected with a message. Fields the SMU does not
 * fill hold the all-ones "not supported" sentinel; they come out as NaN so that callers omit
 * them instead of reporting 0. Units are converted to base units on the way out.
 */
#ifndef GPURECLAIM_GPU_METRICS_H
#define GPURECLAIM_GPU_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define GPUM_MAX_XCP    8
#define GPUM_MAX_XCC    8
#define GPUM_MAX_GFXCLK 8
#define GPUM_MAX_CLK    4
#define GPUM_NUM_HBM    4

/* Every double below is NaN when the field is absent in the layout or not supported. */
struct gpum_xcp {
    double gfx_busy[GPUM_MAX_XCC];     /* ratio 0..1 per XCC within the partition (gfx_busy_inst) */
    double gfx_busy_acc[GPUM_MAX_XCC]; /* accumulated busy, raw firmware units */
};

struct gpu_metrics {
    uint16_t structure_size;
    uint8_t format_revision, content_revision;
    const char *layout; /* e.g. "v1_3", "v1_6_mainline", "v1_6_rocm", "v1_8" */

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
};

/* amdgpu_partition_metrics_v1_0, the per-partition `xcp_metrics` file. */
struct gpu_partition_metrics {
    uint16_t structure_size;
    uint8_t format_revision, content_revision;
    double gfxclk[GPUM_MAX_XCC];   /* hertz */
    double uclk;                   /* hertz */
    double gfx_busy[GPUM_MAX_XCC]; /* ratio 0..1 per XCC of the partition */
    double gfx_busy_acc[GPUM_MAX_XCC];
};

/*
 * Parse a gpu_metrics blob of `len` bytes (bytes past structure_size are ignored; `buf`
 * needs no alignment). Returns 0, or -1 with a one-line reason in err (e.g. "truncated: 100
 * of 120 bytes", "unsupported gpu_metrics revision 1.9", "unsupported gpu_metrics revision
 * 2.2 (APU layout)", "size 400 does not match v1_5 (360)"). `out` is fully initialised even
 * on error: every double NaN, num_partition -1, layout NULL. err may be NULL.
 */
int gpum_parse(const void *buf, size_t len, struct gpu_metrics *out, char *err, size_t errlen);

/*
 * Parse an xcp_metrics blob (amdgpu_partition_metrics_v1_0, header revision 1.0, 488 bytes).
 * Same conventions; e.g. "unsupported xcp_metrics revision 1.1".
 */
int gpum_parse_partition(const void *buf, size_t len, struct gpu_partition_metrics *out, char *err,
                         size_t errlen);

#endif
