/*
 * Collector "partitions": compute (SPX/DPX/TPX/QPX/CPX) and memory (NPS1/2/4/8) partition
 * modes, every valid compute partition with its DRM nodes and device-plugin id, and the
 * activity of each partition (gpu-interfaces.md §4-5, §8.5).
 *
 * gpureclaim_partition_busy_ratio is the one activity signal the enforcer's rules use. Its
 * source, in order of preference: the partition's own xcp_metrics file (newer kernels);
 * xcp_stats in gpu_metrics (v1_6 ROCm layout and later), averaged over the partition's
 * XCCs; and, for a GPU that is one partition, the whole-device gpu_busy_percent. A
 * partition with none of these has no busy series: it is unknown, not idle. The source used
 * is the activity_source label of gpureclaim_partition_info.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collector.h"
#include "sysfs.h"

#define M(n) METRIC_PREFIX n

/* Emit a StateSet: one series per mode, 1 for the current one. */
static void modes(struct coll_ctx *ctx, const struct gpu *g, const char *name, const char *help,
                  const char *cur, const char *available)
{
    if (!cur[0])
        return;
    char avail[96];
    str_copy(avail, sizeof(avail), available);
    bool cur_listed = false;
    char *save = NULL;
    for (char *tok = strtok_r(avail, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
        for (char *p = tok; *p; p++)
            *p = (char)toupper((unsigned char)*p);
        bool is_cur = strcmp(tok, cur) == 0;
        cur_listed |= is_cur;
        expo_add(ctx->e, name, EXPO_GAUGE, help, is_cur ? 1 : 0, "gpu", g->pci, "mode", tok, NULL);
    }
    if (!cur_listed)
        expo_add(ctx->e, name, EXPO_GAUGE, help, 1, "gpu", g->pci, "mode", cur, NULL);
}

static double mean_valid(const double *v, int n)
{
    double sum = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!isnan(v[i])) {
            sum += v[i];
            k++;
        }
    }
    /* The SMU reports whole percents; rounding keeps float noise out of the output. */
    return k ? round(sum / k * 1e6) / 1e6 : NAN;
}

static double partition_busy(struct coll_ctx *ctx, size_t gi, const struct gpu *g,
                             const struct gpu_part *p, const char **source)
{
    *source = "none";
    if (p->has_xcp_metrics) {
        unsigned char buf[4096];
        ssize_t n = sysfs_read_bin(buf, sizeof(buf), "%s/xcp/xcp_metrics", p->devdir);
        if (n >= 0) {
            struct gpu_partition_metrics pm;
            char err[256];
            if (gpum_parse_partition(buf, (size_t)n, &pm, err, sizeof(err)) < 0) {
                coll_source_error(ctx, "xcp_metrics", "rejected '%s/xcp/xcp_metrics': %s",
                                  p->devdir, err);
            } else {
                double v = mean_valid(pm.gfx_busy, GPUM_MAX_XCC);
                if (!isnan(v)) {
                    *source = "xcp_metrics";
                    return v;
                }
            }
        } else {
            coll_source_error(ctx, "xcp_metrics", "cannot read '%s/xcp/xcp_metrics': %s", p->devdir,
                              strerror(errno));
        }
    }
    const struct gpu_metrics *m = coll_gpum(ctx, gi);
    if (m && p->index < m->num_partition) {
        double v = mean_valid(m->xcp[p->index].gfx_busy, GPUM_MAX_XCC);
        if (!isnan(v)) {
            *source = "gpu_metrics";
            return v;
        }
    }
    if (g->npart == 1) {
        double v = coll_busy(ctx, gi);
        if (!isnan(v)) {
            *source = "gpu_busy_percent";
            return v;
        }
        if (m && !isnan(m->gfx_activity)) {
            *source = "gpu_metrics";
            return m->gfx_activity;
        }
    }
    return NAN;
}

static int partitions_update(struct coll_ctx *ctx, char *err, size_t errlen)
{
    const struct gpu_list *l = coll_gpus(ctx, err, errlen);
    if (!l)
        return COLL_ERROR;
    for (size_t i = 0; i < l->n; i++) {
        const struct gpu *g = &l->v[i];
        modes(ctx, g, M("gpu_compute_partition_mode"),
              "Compute partition mode of the GPU: 1 for the current mode, 0 for the other "
              "available modes.",
              g->compute_mode, g->compute_modes);
        modes(ctx, g, M("gpu_memory_partition_mode"),
              "Memory partition (NPS) mode of the GPU: 1 for the current mode, 0 for the other "
              "available modes.",
              g->memory_mode, g->memory_modes);
        expo_add(ctx->e, M("gpu_partitions"), EXPO_GAUGE,
                 "Valid compute partitions of the GPU (KFD topology nodes; 1 without KFD).",
                 g->npart, "gpu", g->pci, NULL);
        for (int j = 0; j < g->npart; j++) {
            const struct gpu_part *p = &g->part[j];
            char idx[8], card[24] = "", render[24] = "", node[16] = "", gid[16] = "";
            char xcc[8] = "";
            snprintf(idx, sizeof(idx), "%d", p->index);
            if (p->card >= 0)
                snprintf(card, sizeof(card), "card%d", p->card);
            if (p->render >= 0)
                snprintf(render, sizeof(render), "renderD%d", p->render);
            if (p->kfd_node >= 0)
                snprintf(node, sizeof(node), "%d", p->kfd_node);
            if (p->kfd_gpu_id)
                snprintf(gid, sizeof(gid), "%u", p->kfd_gpu_id);
            if (p->num_xcc >= 0)
                snprintf(xcc, sizeof(xcc), "%d", p->num_xcc);
            const char *source;
            double busy = partition_busy(ctx, i, g, p, &source);
            expo_add(ctx->e, M("partition_info"), EXPO_GAUGE,
                     "A compute partition of a GPU: its DRM nodes, the id the device plugin "
                     "allocates (device_id), its KFD node and the source of its busy ratio.",
                     1, "gpu", g->pci, "partition", idx, "card", card, "render", render,
                     "device_id", p->device_id, "kfd_node", node, "kfd_gpu_id", gid, "xcc_count",
                     xcc, "activity_source", source, NULL);
            if (!isnan(busy))
                expo_add(ctx->e, M("partition_busy_ratio"), EXPO_GAUGE,
                         "Compute busy (0-1) of a partition, averaged over its XCCs; absent "
                         "when the kernel exposes no per-partition activity.",
                         busy, "gpu", g->pci, "partition", idx, NULL);
        }
    }
    if (l->kfd)
        expo_add(ctx->e, M("spare_partition_nodes"), EXPO_GAUGE,
                 "amdgpu XCP render nodes with no KFD topology node: spare nodes the driver "
                 "creates whatever the partition mode, not partitions.",
                 l->spare_nodes, NULL);
    if (l->n == 0) {
        snprintf(err, errlen, "no amdgpu device");
        return COLL_NO_DATA;
    }
    return COLL_OK;
}

const struct collector coll_partitions = {
    .name = "partitions",
    .default_on = true,
    .help = "Partition modes, compute partitions and per-partition busy",
    .update = partitions_update,
};
