/*
 * Collector "devices": per-GPU identity, busy, memory, temperature and power from the amdgpu
 * sysfs files of each PCI device (docs/kernel-interfaces.md §2-3).
 *
 * Every value is optional: a missing file is simply not reported, and a file that exists but
 * holds garbage is reported as a source error and skipped, never as 0. hwmon units are
 * converted to base units (millidegrees -> celsius, microwatts -> watts).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collector.h"
#include "metrics.h"
#include "sysfs.h"

/* Read an optional integer file: missing -> false silently, malformed -> source error. */
static bool read_num(struct coll_ctx *ctx, const char *dir, const char *file, double *out)
{
    uint64_t v;
    if (sysfs_read_u64(&v, "%s/%s", dir, file) == 0) {
        *out = (double)v;
        return true;
    }
    if (errno != ENOENT)
        coll_source_error(ctx, file, "cannot parse '%s/%s': %s", dir, file,
                          errno == EINVAL ? "not a number" : strerror(errno));
    return false;
}

static const struct {
    const char *total, *used, *pool;
} pools[] = {
    {"mem_info_vram_total", "mem_info_vram_used", "vram"},
    {"mem_info_vis_vram_total", "mem_info_vis_vram_used", "vis_vram"},
    {"mem_info_gtt_total", "mem_info_gtt_used", "gtt"},
};

static void hwmon(struct coll_ctx *ctx, const struct gpu *g)
{
    if (!g->hwmon[0])
        return;
    for (int i = 0; i < g->ntemp; i++) {
        char file[32];
        double v;
        snprintf(file, sizeof(file), "temp%d_input", g->temp[i].index);
        if (read_num(ctx, g->hwmon, file, &v))
            expo_put(ctx->e, MX(GPU_TEMPERATURE_CELSIUS), v / 1000.0, "gpu", g->pci, "sensor",
                     g->temp[i].label, NULL);
    }
    double p;
    if (g->has_power_input && read_num(ctx, g->hwmon, "power1_input", &p))
        expo_put(ctx->e, MX(GPU_POWER_WATTS), p / 1e6, "gpu", g->pci, NULL);
    if (g->has_power_average && read_num(ctx, g->hwmon, "power1_average", &p))
        expo_put(ctx->e, MX(GPU_AVERAGE_POWER_WATTS), p / 1e6, "gpu", g->pci, NULL);
}

/*
 * What discovery found on the node as a whole: the counts are published even when they are 0
 * (a node without an AMD GPU says so rather than going silent), and each AMD GPU that amdgpu
 * does not serve is named. Without a listing of bus/pci/devices there is no unserved series:
 * the exporter does not know, and does not say 0.
 */
static void discovery(struct coll_ctx *ctx, const struct gpu_list *l)
{
    int parts = 0;
    for (size_t i = 0; i < l->n; i++)
        parts += l->v[i].npart;
    expo_put(ctx->e, MX(GPUS_DISCOVERED), (double)l->n, NULL);
    expo_put(ctx->e, MX(PARTITIONS_DISCOVERED), parts, NULL);
    if (!l->pci_known)
        return;
    for (size_t i = 0; i < l->nunserved; i++) {
        const struct gpu_unserved *u = &l->unserved[i];
        expo_put(ctx->e, MX(GPU_UNSERVED), 1, "gpu", u->pci, "pci_id", u->pci_id, "driver",
                 u->driver, NULL);
    }
}

static int devices_update(struct coll_ctx *ctx, char *err, size_t errlen)
{
    const struct gpu_list *l = coll_gpus(ctx, err, errlen);
    if (!l)
        return COLL_ERROR;
    for (size_t i = 0; i < l->nproblems; i++)
        coll_source_error(ctx, "uevent", "%s", l->problems[i].what);
    for (size_t i = 0; i < l->n; i++) {
        const struct gpu *g = &l->v[i];
        char card[24], render[24];
        snprintf(card, sizeof(card), "card%d", g->card);
        if (g->render >= 0)
            snprintf(render, sizeof(render), "renderD%d", g->render);
        else
            render[0] = '\0';
        expo_put(ctx->e, MX(GPU_INFO), 1, "gpu", g->pci, "card", card, "render", render, "pci_id",
                 g->pci_id, "product_name", g->product, "unique_id", g->unique_id,
                 "compute_partition", g->compute_mode, "memory_partition", g->memory_mode, NULL);
        double v = coll_busy(ctx, i);
        if (!isnan(v))
            expo_put(ctx->e, MX(GPU_BUSY_RATIO), v, "gpu", g->pci, NULL);
        if (read_num(ctx, g->devdir, "mem_busy_percent", &v))
            expo_put(ctx->e, MX(GPU_MEMORY_BUSY_RATIO), v / 100.0, "gpu", g->pci, NULL);
        for (size_t k = 0; k < ARRAY_LEN(pools); k++) {
            if (read_num(ctx, g->devdir, pools[k].total, &v))
                expo_put(ctx->e, MX(GPU_MEMORY_TOTAL_BYTES), v, "gpu", g->pci, "pool",
                         pools[k].pool, NULL);
            if (read_num(ctx, g->devdir, pools[k].used, &v))
                expo_put(ctx->e, MX(GPU_MEMORY_USED_BYTES), v, "gpu", g->pci, "pool", pools[k].pool,
                         NULL);
        }
        hwmon(ctx, g);
    }
    discovery(ctx, l);
    if (l->n == 0 && l->nproblems == 0 && !l->pci_known) {
        /* class/drm has no amdgpu device and bus/pci/devices could not be listed: whether
         * this node should have GPUs is unknown, which is not a success. */
        snprintf(err, errlen,
                 "no amdgpu device under '%s/class/drm', and '%s/bus/pci/devices' "
                 "cannot be listed",
                 ctx->cfg->sysfs, ctx->cfg->sysfs);
        return COLL_NO_DATA;
    }
    return COLL_OK;
}

const struct collector coll_devices = {
    .name = "devices",
    .default_on = true,
    .help = "Per-GPU identity, busy, memory, temperature and power from amdgpu sysfs",
    .update = devices_update,
};
