/*
 * Collector "amdgpu": asks the driver directly through libdrm_amdgpu ioctls (GPU load
 * sensor, VRAM/GTT heaps and usage, device identity) on each GPU's render node under
 * --path.devfs, as a cross-check of and a fallback for the sysfs values.
 *
 * Opening a render node needs the device node (and, in a container, the device cgroup
 * permission). Where none can be opened — every machine without a GPU, including CI — the
 * collector reports no data (scrape_collector_success 0) and logs that once; it never
 * fails the scrape. The mapping from the ioctl result structures to metrics is a separate
 * pure function so that it is tested without a device.
 */
#include <amdgpu.h>
#include <amdgpu_drm.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "log.h"
#include "metrics.h"

/* What one device answered; each part is optional because each ioctl may fail alone. */
struct amdgpu_sample {
    bool has_load;
    uint32_t load_percent;
    bool has_vram_usage, has_gtt_usage;
    uint64_t vram_usage, gtt_usage;
    bool has_mem;
    struct drm_amdgpu_memory_info mem;
    bool has_info;
    struct amdgpu_gpu_info info;
};

static void map_sample(const struct amdgpu_sample *s, const char *gpu, struct expo *e)
{
    if (s->has_info) {
        char asic[16], rev[16], family[16];
        snprintf(asic, sizeof(asic), "0x%04x", s->info.asic_id);
        snprintf(rev, sizeof(rev), "%u", s->info.chip_rev);
        snprintf(family, sizeof(family), "%u", s->info.family_id);
        expo_put(e, MX(AMDGPU_DEVICE_INFO), 1, "gpu", gpu, "asic_id", asic, "chip_rev", rev,
                 "family_id", family, NULL);
        if (s->info.max_engine_clk)
            expo_put(e, MX(AMDGPU_MAX_ENGINE_CLOCK_HERTZ), (double)s->info.max_engine_clk * 1e3,
                     "gpu", gpu, NULL);
    }
    if (s->has_load)
        expo_put(e, MX(AMDGPU_GPU_BUSY_RATIO), s->load_percent / 100.0, "gpu", gpu, NULL);
    if (s->has_vram_usage)
        expo_put(e, MX(AMDGPU_MEMORY_USED_BYTES), (double)s->vram_usage, "gpu", gpu, "pool", "vram",
                 NULL);
    if (s->has_gtt_usage)
        expo_put(e, MX(AMDGPU_MEMORY_USED_BYTES), (double)s->gtt_usage, "gpu", gpu, "pool", "gtt",
                 NULL);
    if (s->has_mem) {
        const struct {
            const struct drm_amdgpu_heap_info *h;
            const char *pool;
        } heaps[] = {
            {&s->mem.vram, "vram"},
            {&s->mem.cpu_accessible_vram, "vis_vram"},
            {&s->mem.gtt, "gtt"},
        };
        for (size_t i = 0; i < ARRAY_LEN(heaps); i++)
            expo_put(e, MX(AMDGPU_MEMORY_TOTAL_BYTES), (double)heaps[i].h->total_heap_size, "gpu",
                     gpu, "pool", heaps[i].pool, NULL);
    }
}

static int query(int fd, struct amdgpu_sample *s)
{
    uint32_t major, minor;
    amdgpu_device_handle dev;
    if (amdgpu_device_initialize(fd, &major, &minor, &dev) != 0)
        return -1;
    memset(s, 0, sizeof(*s));
    s->has_load = amdgpu_query_sensor_info(dev, AMDGPU_INFO_SENSOR_GPU_LOAD,
                                           sizeof(s->load_percent), &s->load_percent) == 0;
    s->has_vram_usage =
        amdgpu_query_info(dev, AMDGPU_INFO_VRAM_USAGE, sizeof(s->vram_usage), &s->vram_usage) == 0;
    s->has_gtt_usage =
        amdgpu_query_info(dev, AMDGPU_INFO_GTT_USAGE, sizeof(s->gtt_usage), &s->gtt_usage) == 0;
    s->has_mem = amdgpu_query_info(dev, AMDGPU_INFO_MEMORY, sizeof(s->mem), &s->mem) == 0;
    s->has_info = amdgpu_query_gpu_info(dev, &s->info) == 0;
    amdgpu_device_deinitialize(dev);
    return 0;
}

static int amdgpu_update(struct coll_ctx *ctx, char *err, size_t errlen)
{
    const struct gpu_list *l = coll_gpus(ctx, err, errlen);
    if (!l)
        return COLL_ERROR;
    size_t opened = 0;
    char first_err[256] = "";
    for (size_t i = 0; i < l->n; i++) {
        const struct gpu *g = &l->v[i];
        if (g->render < 0)
            continue;
        char path[512];
        snprintf(path, sizeof(path), "%s/dri/renderD%d", ctx->cfg->devfs, g->render);
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            if (!first_err[0])
                snprintf(first_err, sizeof(first_err), "cannot open '%s': %s", path,
                         strerror(errno));
            continue;
        }
        struct amdgpu_sample s;
        if (query(fd, &s) == 0) {
            opened++;
            map_sample(&s, g->pci, ctx->e);
        } else if (!first_err[0]) {
            snprintf(first_err, sizeof(first_err), "'%s' is not an amdgpu device", path);
        }
        close(fd);
    }
    if (opened == 0 && coll_no_gpu(l))
        return COLL_OK; /* nothing to open on a node without a served AMD GPU */
    if (opened == 0) {
        snprintf(err, errlen, "%s", first_err[0] ? first_err : "no amdgpu render node");
        log_cond("collector amdgpu unavailable", LOG_INFO,
                 "amdgpu ioctl collector unavailable: %s (sysfs values are still reported)", err);
        return COLL_NO_DATA;
    }
    log_cond_clear("collector amdgpu unavailable");
    return COLL_OK;
}

const struct collector coll_amdgpu = {
    .name = "amdgpu",
    .default_on = true,
    .help = "Load, memory and identity queried through libdrm_amdgpu ioctls on --path.devfs",
    .update = amdgpu_update,
};
