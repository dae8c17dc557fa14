/*
 * Collector "gpu_metrics": the SMU metrics table of each GPU, parsed by gpu_metrics.c and
 * mapped here to base units: activity as ratios, temperatures in celsius, socket power in
 * watts, the energy accumulator as a joules counter, clocks in hertz, PCIe link width and
 * speed, per-XCC busy within each partition (xcp_stats, v1_6 ROCm layout and later), and the
 * driver's accumulators (whole-device GFX busy, throttle residencies and the accumulation
 * counter they are divided by) as process-monotonic counters (accum.h).
 * Fields the SMU marks "not supported" arrive as NaN or absent and are omitted. A GPU whose
 * table cannot be read is counted in gpureclaim_scrape_source_errors; the collector fails
 * only when no GPU's table was read or recognised.
 */
#include <math.h>
#include <stdio.h>

#include "accum.h"
#include "collector.h"
#include "metrics.h"

static void gauge(struct coll_ctx *ctx, const struct expo_family *f, double v, const char *gpu)
{
    if (!isnan(v))
        expo_put(ctx->e, f, v, "gpu", gpu, NULL);
}

static void temp(struct coll_ctx *ctx, const char *gpu, const char *sensor, double v)
{
    if (!isnan(v))
        expo_put(ctx->e, MX(GPU_METRICS_TEMPERATURE_CELSIUS), v, "gpu", gpu, "sensor", sensor,
                 NULL);
}

static void clocks(struct coll_ctx *ctx, const char *gpu, const char *clock, const double *v, int n)
{
    for (int i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        char idx[8];
        snprintf(idx, sizeof(idx), "%d", i);
        expo_put(ctx->e, MX(GPU_METRICS_CLOCK_HERTZ), v[i], "gpu", gpu, "clock", clock, "index",
                 idx, NULL);
    }
}

static const char *const residency_reason[GPUM_RES_N] = {
    [GPUM_RES_PROCHOT] = "prochot",           [GPUM_RES_PPT] = "ppt",
    [GPUM_RES_SOCKET_THM] = "socket_thermal", [GPUM_RES_VR_THM] = "vr_thermal",
    [GPUM_RES_HBM_THM] = "hbm_thermal",
};

/*
 * Whole-device accumulators: one group whose denominator is accumulation_counter and whose
 * numerators are gfx_activity_acc and the five residencies, so that every published
 * numerator advances over exactly the intervals its denominator does. The state lives in
 * accum.c across scrapes because a counter is a sum of deltas between readings: the raw
 * U32 values wrap and restart, and exposing them raw would make Prometheus misread a wrap as
 * a reset and under-state busy time.
 */
static void accumulators(struct coll_ctx *ctx, const char *gpu, const struct gpu_metrics *m,
                         double when)
{
    struct accum_reading r = {.when = when, .den = m->accumulation_counter, .nnum = 1 + GPUM_RES_N};
    r.num[0] = m->gfx_activity_acc;
    for (int k = 0; k < GPUM_RES_N; k++)
        r.num[1 + k] = m->residency[k];
    /* A table read only in part is not fed: its missing fields would look like a field the
     * device does not have. An absent counter drops the baseline, so no interval bridges it. */
    if (m->partial)
        r = (struct accum_reading){.when = when, .nnum = 1 + GPUM_RES_N};
    char key[64];
    snprintf(key, sizeof(key), "%s/gpu", gpu);
    struct accum_totals t;
    if (accum_update(key, &r, &t) < 0 || !t.den_valid)
        return;
    expo_put(ctx->e, MX(GPU_METRICS_ACCUMULATION_TICKS_TOTAL), t.den_total, "gpu", gpu, NULL);
    if (t.num_valid[0])
        expo_put(ctx->e, MX(GPU_METRICS_GFX_ACTIVITY_ACCUMULATOR_TOTAL), t.num_total[0], "gpu", gpu,
                 NULL);
    for (int k = 0; k < GPUM_RES_N; k++)
        if (t.num_valid[1 + k])
            expo_put(ctx->e, MX(GPU_METRICS_THROTTLE_RESIDENCY_ACCUMULATOR_TOTAL),
                     t.num_total[1 + k], "gpu", gpu, "reason", residency_reason[k], NULL);
}

static int gpu_metrics_update(struct coll_ctx *ctx, char *err, size_t errlen)
{
    const struct gpu_list *l = coll_gpus(ctx, err, errlen);
    if (!l)
        return COLL_ERROR;
    size_t found = 0;
    for (size_t i = 0; i < l->n; i++) {
        const struct gpu_metrics *m = coll_gpum(ctx, i);
        if (!m) {
            /* An APU or pre-v1_3 table was recognised and skipped on purpose (debug log). */
            if (ctx->gm_state && ctx->gm_state[i] == COLL_GPUM_SKIPPED)
                found++;
            continue;
        }
        found++;
        const char *gpu = l->v[i].pci;
        char rev[16], size[16];
        snprintf(rev, sizeof(rev), "%u.%u", m->format_revision, m->content_revision);
        snprintf(size, sizeof(size), "%u", m->structure_size);
        expo_put(ctx->e, MX(GPU_METRICS_INFO), 1, "gpu", gpu, "revision", rev, "layout", m->layout,
                 "structure_size", size, NULL);
        gauge(ctx, MX(GPU_METRICS_GFX_ACTIVITY_RATIO), m->gfx_activity, gpu);
        gauge(ctx, MX(GPU_METRICS_UMC_ACTIVITY_RATIO), m->umc_activity, gpu);
        gauge(ctx, MX(GPU_METRICS_MM_ACTIVITY_RATIO), m->mm_activity, gpu);
        gauge(ctx, MX(GPU_METRICS_SOCKET_POWER_WATTS), m->socket_power, gpu);
        if (!isnan(m->energy))
            expo_put(ctx->e, MX(GPU_METRICS_ENERGY_JOULES_TOTAL), m->energy, "gpu", gpu, NULL);
        temp(ctx, gpu, "edge", m->temp_edge);
        temp(ctx, gpu, "hotspot", m->temp_hotspot);
        temp(ctx, gpu, "mem", m->temp_mem);
        temp(ctx, gpu, "vrgfx", m->temp_vrgfx);
        temp(ctx, gpu, "vrsoc", m->temp_vrsoc);
        temp(ctx, gpu, "vrmem", m->temp_vrmem);
        for (int h = 0; h < GPUM_NUM_HBM; h++) {
            char s[8];
            snprintf(s, sizeof(s), "hbm%d", h);
            temp(ctx, gpu, s, m->temp_hbm[h]);
        }
        clocks(ctx, gpu, "gfx", m->gfxclk, GPUM_MAX_GFXCLK);
        clocks(ctx, gpu, "soc", m->socclk, GPUM_MAX_CLK);
        clocks(ctx, gpu, "vclk0", m->vclk0, GPUM_MAX_CLK);
        clocks(ctx, gpu, "dclk0", m->dclk0, GPUM_MAX_CLK);
        clocks(ctx, gpu, "uclk", &m->uclk, 1);
        gauge(ctx, MX(GPU_METRICS_PCIE_LINK_WIDTH), m->pcie_link_width, gpu);
        gauge(ctx, MX(GPU_METRICS_PCIE_LINK_SPEED_TRANSFERS_PER_SECOND), m->pcie_link_speed * 1e9,
              gpu);
        accumulators(ctx, gpu, m, coll_gpum_when(ctx, i));
        for (int p = 0; p < m->num_partition && p < GPUM_MAX_XCP; p++) {
            for (int x = 0; x < GPUM_MAX_XCC; x++) {
                if (isnan(m->xcp[p].gfx_busy[x]))
                    continue;
                char ps[8], xs[8];
                snprintf(ps, sizeof(ps), "%d", p);
                snprintf(xs, sizeof(xs), "%d", x);
                expo_put(ctx->e, MX(GPU_METRICS_XCC_BUSY_RATIO), m->xcp[p].gfx_busy[x], "gpu", gpu,
                         "partition", ps, "xcc", xs, NULL);
            }
        }
    }
    if (found == 0 && ctx->errors == 0 && !coll_no_gpu(l)) {
        snprintf(err, errlen, "no readable gpu_metrics file");
        return COLL_NO_DATA;
    }
    return COLL_OK;
}

const struct collector coll_gpu_metrics = {
    .name = "gpu_metrics",
    .default_on = true,
    .help = "Activity, temperatures, power, energy and clocks from the binary gpu_metrics table",
    .update = gpu_metrics_update,
    .fini = accum_reset,
};
