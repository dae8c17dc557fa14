/*
 * Collector "partitions": compute (SPX/DPX/TPX/QPX/CPX) and memory (NPS1/2/4/8) partition
 * modes, every valid compute partition with its DRM nodes and device-plugin id, and the
 * activity of each partition (docs/kernel-interfaces.md §4-5, §8.5).
 *
 * gpureclaim_partition_busy_ratio is the one activity signal the enforcer's rules use. Its
 * source, in order of preference: the partition's own xcp_metrics file (newer kernels);
 * xcp_stats in gpu_metrics (v1_6 ROCm layout and later), averaged over the partition's
 * XCCs; and, for a GPU that is one partition, the whole-device gpu_busy_percent. A
 * partition with none of these has no busy series: it is unknown, not idle. The source used
 * is the activity_source label of gpureclaim_partition_info.
 *
 * Next to that instantaneous gauge, each partition's exact busy accumulator and the
 * accumulation counter it divides by are published as counters (accum.h), from the first
 * source that exists: the xcp_metrics file (v1_0 with the GPU's counter, v1_1 with its
 * own counter when it has one), xcp_stats in gpu_metrics (v1_6 ROCm layout, v1_7, v1_8),
 * or, for a GPU that is one partition, the per-XCC arrays of gpu_metrics v1_9.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "accum.h"
#include "collector.h"
#include "metrics.h"
#include "sysfs.h"

/* Emit a StateSet: one series per mode, 1 for the current one. */
static void modes(struct coll_ctx *ctx, const struct gpu *g, const struct expo_family *f,
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
        expo_put(ctx->e, f, is_cur ? 1 : 0, "gpu", g->pci, "mode", tok, NULL);
    }
    if (!cur_listed)
        expo_put(ctx->e, f, 1, "gpu", g->pci, "mode", cur, NULL);
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

/* The partition's xcp_metrics file, read once per scrape. */
struct xcp_file {
    bool ok;
    double when;
    struct gpu_partition_metrics pm;
};

static void read_xcp(struct coll_ctx *ctx, const struct gpu_part *p, struct xcp_file *x)
{
    x->ok = false;
    if (!p->has_xcp_metrics)
        return;
    unsigned char buf[4096];
    char err[256];
    x->when = mono_now();
    ssize_t n = sysfs_read_bin(buf, sizeof(buf), "%s/xcp/xcp_metrics", p->devdir);
    /* One partition's file is that partition's problem: the collector still reports the
     * others, and this partition falls back to the next source. */
    if (n < 0) {
        coll_device_error(ctx, "xcp_metrics", "cannot read '%s/xcp/xcp_metrics': %s", p->devdir,
                          strerror(errno));
    } else if (gpum_parse_partition(buf, (size_t)n, &x->pm, err, sizeof(err)) < 0) {
        coll_device_error(ctx, "xcp_metrics", "rejected '%s/xcp/xcp_metrics': %s", p->devdir, err);
    } else {
        x->ok = true;
        if (x->pm.partial)
            coll_device_error(ctx, "xcp_metrics",
                              "'%s/xcp/xcp_metrics' read in part: %s after %d of %d attributes",
                              p->devdir, x->pm.partial, x->pm.attrs_parsed, x->pm.attr_count);
    }
}

static double partition_busy(struct coll_ctx *ctx, size_t gi, const struct gpu *g,
                             const struct gpu_part *p, const struct xcp_file *x,
                             const char **source)
{
    *source = "none";
    if (x->ok) {
        double v = mean_valid(x->pm.gfx_busy, GPUM_MAX_XCC);
        if (!isnan(v)) {
            *source = "xcp_metrics";
            return v;
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

/* Which file each accumulator group reads; a change of source restarts the group. */
enum acc_src { SRC_XCP_OWN = 1, SRC_XCP_GPU_COUNTER, SRC_XCP_STATS, SRC_V1_9_DEVICE };

/*
 * The partition's busy accumulators (per XCC within the partition) and their counter. n is
 * the partition's XCC count from KFD; without KFD (n unknown) the 8 slots are read and the
 * populated ones used.
 */
static bool partition_accumulators(struct coll_ctx *ctx, size_t gi, const struct gpu *g,
                                   const struct gpu_part *p, const struct xcp_file *x,
                                   const char *idx)
{
    int n = p->num_xcc >= 1 && p->num_xcc <= GPUM_MAX_XCC ? p->num_xcc : GPUM_MAX_XCC;
    bool n_known = n == p->num_xcc;
    const struct gpu_metrics *m = coll_gpum(ctx, gi);
    struct accum_reading r = {.nnum = n};
    const struct gpum_acc *acc = NULL;
    /*
     * The source is chosen by what exists (a file, a layout with the arrays), not by whether
     * its values are valid this time: an accumulator that turns all-ones must reach the
     * group, so that the interval around it is discarded rather than bridged.
     */
    if (x->ok) {
        acc = x->pm.gfx_busy_acc;
        r.when = x->when;
        if (x->pm.accumulation_counter.bits) {
            r.den = x->pm.accumulation_counter;
            r.den_src = SRC_XCP_OWN;
        } else if (m) {
            /* v1_0 (and v1_1 before its counter was added): the parent GPU's counter, read
             * in the same scrape; the two files are read a few microseconds apart. */
            r.den = m->accumulation_counter;
            r.den_src = SRC_XCP_GPU_COUNTER;
        }
    } else if (m && p->index < m->num_partition) {
        acc = m->xcp[p->index].gfx_busy_acc;
        r.when = coll_gpum_when(ctx, gi);
        r.den = m->accumulation_counter;
        r.den_src = SRC_XCP_STATS;
    } else if (m && g->npart == 1 && strcmp(m->layout, "v1_9") == 0) {
        /*
         * v1_9 indexes per-XCC arrays over the whole device; only a GPU that is a single
         * partition maps them to a partition without knowing the driver's XCC masks.
         */
        acc = m->xcc_busy_acc;
        r.when = coll_gpum_when(ctx, gi);
        r.den = m->accumulation_counter;
        r.den_src = SRC_V1_9_DEVICE;
    }
    if (!acc)
        return false;
    char key[64];
    snprintf(key, sizeof(key), "%s/partition/%s", g->pci, idx);
    bool any = false;
    for (int i = 0; i < n; i++) {
        r.num[i] = acc[i];
        any |= acc[i].bits != 0;
    }
    /*
     * Firmware without per-XCC metrics leaves every slot all-ones: a tick series without a
     * busy series would hide the whole-GPU gfx_activity_acc branch of the recording rule
     * and leave the device unknown forever. The source is used once a slot has been valid.
     */
    if (!any && !accum_seen(key))
        return false;
    /* A reading from a table read only in part (either file) is not fed: an absent counter
     * drops the group's baseline, so no interval bridges the gap. */
    if ((x->ok && x->pm.partial) || (m && m->partial && r.den_src != SRC_XCP_OWN))
        r = (struct accum_reading){.when = r.when, .nnum = n, .den_src = r.den_src};
    struct accum_totals t;
    if (accum_update(key, &r, &t) < 0 || !t.den_valid)
        return false;
    expo_put(ctx->e, MX(PARTITION_ACCUMULATION_TICKS_TOTAL), t.den_total, "gpu", g->pci,
             "partition", idx, NULL);
    double sum = 0;
    int valid = 0;
    for (int i = 0; i < n; i++) {
        if (!t.num_valid[i])
            continue;
        sum += t.num_total[i];
        valid++;
        /* With one XCC (CPX) the per-XCC series would repeat the partition's: 64 series of
         * an 8-GPU node for nothing. */
        if (n_known && n == 1)
            continue;
        char xs[8];
        snprintf(xs, sizeof(xs), "%d", i);
        expo_put(ctx->e, MX(GPU_METRICS_XCC_GFX_BUSY_ACCUMULATOR_TOTAL), t.num_total[i], "gpu",
                 g->pci, "partition", idx, "xcc", xs, NULL);
    }
    /* One XCC without a value makes the partition's mean unknown: omitted, never partial. */
    if (!(valid > 0 && (!n_known || valid == n)))
        return false;
    expo_put(ctx->e, MX(PARTITION_GFX_BUSY_ACCUMULATOR_TOTAL), sum / valid, "gpu", g->pci,
             "partition", idx, NULL);
    return true;
}

/*
 * Whether the partition's source has a busy accumulator, published this scrape or not: an
 * xcp_metrics file (every revision has gfx_busy_acc), a gpu_metrics attribute table
 * (revision 1.9 and later, parsed or not), or a group that has seen a busy value.
 */
static bool has_accumulator(struct coll_ctx *ctx, size_t gi, const struct gpu *g,
                            const struct gpu_part *p, const struct xcp_file *x, const char *idx)
{
    if (coll_gpum_has_attr_table(ctx, gi))
        return true;
    if (p->has_xcp_metrics) {
        if (!x->ok || x->pm.accumulation_counter.bits)
            return true;
        /* Without a counter of its own the file's accumulators divide by the GPU's, which
         * the v1_3..v1_5 layouts do not have: they can never be published, so the gauge
         * is the partition's only signal. An unreadable GPU table may be a counter missing
         * for a while: withheld. */
        const struct gpu_metrics *m = coll_gpum(ctx, gi);
        return !m || !(strcmp(m->layout, "v1_3") == 0 || strcmp(m->layout, "v1_4") == 0 ||
                       strcmp(m->layout, "v1_5") == 0);
    }
    char key[64];
    snprintf(key, sizeof(key), "%s/partition/%s", g->pci, idx);
    return accum_seen(key);
}

static int partitions_update(struct coll_ctx *ctx, char *err, size_t errlen)
{
    const struct gpu_list *l = coll_gpus(ctx, err, errlen);
    if (!l)
        return COLL_ERROR;
    for (size_t i = 0; i < l->n; i++) {
        const struct gpu *g = &l->v[i];
        modes(ctx, g, MX(GPU_COMPUTE_PARTITION_MODE), g->compute_mode, g->compute_modes);
        modes(ctx, g, MX(GPU_MEMORY_PARTITION_MODE), g->memory_mode, g->memory_modes);
        expo_put(ctx->e, MX(GPU_PARTITIONS), g->npart, "gpu", g->pci, NULL);
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
            struct xcp_file x;
            read_xcp(ctx, p, &x);
            double busy = partition_busy(ctx, i, g, p, &x, &source);
            /*
             * While a source that has accumulators cannot publish them (a counter missing, a
             * table unreadable or cut short), the instantaneous gauge is withheld: the
             * recording rule would fall back to it, and it aliases short bursts to 0 - the
             * signal the accumulators replace. Unknown keeps the workload.
             */
            bool acc = partition_accumulators(ctx, i, g, p, &x, idx);
            if (!acc && has_accumulator(ctx, i, g, p, &x, idx)) {
                busy = NAN;
                source = "none";
            }
            expo_put(ctx->e, MX(PARTITION_INFO), 1, "gpu", g->pci, "partition", idx, "card", card,
                     "render", render, "device_id", p->device_id, "kfd_node", node, "kfd_gpu_id",
                     gid, "xcc_count", xcc, "activity_source", source, NULL);
            if (!isnan(busy))
                expo_put(ctx->e, MX(PARTITION_BUSY_RATIO), busy, "gpu", g->pci, "partition", idx,
                         NULL);
            if (p->mem_bytes >= 0)
                expo_put(ctx->e, MX(PARTITION_MEMORY_TOTAL_BYTES), (double)p->mem_bytes, "gpu",
                         g->pci, "partition", idx, NULL);
        }
    }
    if (l->kfd)
        expo_put(ctx->e, MX(SPARE_PARTITION_NODES), l->spare_nodes, NULL);
    if (l->n == 0 && !coll_no_gpu(l)) {
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
    .fini = accum_reset,
};
