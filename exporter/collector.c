/*
 * The collector table, its flags, and the scrape loop (see collector.h).
 *
 * The table is explicit (as chrony's refclock drivers) rather than built by constructors,
 * so the order of collectors, and of their metrics, does not depend on link order.
 */
#include "collector.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrfd.h"
#include "flags.h"
#include "log.h"
#include "metrics.h"
#include "sysfs.h"
#include "util.h"

extern const struct collector coll_devices, coll_gpu_metrics, coll_partitions, coll_amdgpu,
    coll_ownership;

static const struct collector *const collectors[] = {
    &coll_devices, &coll_gpu_metrics, &coll_partitions, &coll_amdgpu, &coll_ownership,
};

#define NCOLL ARRAY_LEN(collectors)

/* The shared GPU discovery (see coll_gpus); defined further down. */
struct gpu_snap;
static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gpu_snap *snap_cur;
static void snap_unref_locked(struct gpu_snap *s);

/* 0 = default, 1 = on, -1 = off */
static int enabled_flag[NCOLL];
static bool disable_defaults;
static bool initialised[NCOLL];

static bool is_enabled(size_t i)
{
    if (enabled_flag[i] != 0)
        return enabled_flag[i] == 1;
    return collectors[i]->default_on && !disable_defaults;
}

/* The row names, "collector.<name>", live as long as the table that points at them. */
static char flag_names[NCOLL][64];

size_t coll_flag_rows(struct flags_def *rows, size_t cap)
{
    if (cap < NCOLL + 1)
        return 0;
    rows[0] = (struct flags_def){.name = "collector.disable-defaults",
                                 .type = FLAGS_BOOL,
                                 .def = "false",
                                 .help = "disable every collector not enabled explicitly"};
    for (size_t i = 0; i < NCOLL; i++) {
        snprintf(flag_names[i], sizeof(flag_names[i]), "collector.%s", collectors[i]->name);
        rows[i + 1] = (struct flags_def){.name = flag_names[i],
                                         .type = FLAGS_BOOL,
                                         .def = collectors[i]->default_on ? "true" : "false",
                                         .help = collectors[i]->help};
    }
    return NCOLL + 1;
}

void coll_flags_apply(const struct flags_def *rows)
{
    disable_defaults = rows[0].num != 0;
    for (size_t i = 0; i < NCOLL; i++)
        enabled_flag[i] = !rows[i + 1].set ? 0 : rows[i + 1].num != 0 ? 1 : -1;
}

int coll_init(const struct coll_cfg *cfg, char *err, size_t errlen)
{
    for (size_t i = 0; i < NCOLL; i++) {
        if (!is_enabled(i))
            continue;
        if (collectors[i]->init && collectors[i]->init(cfg, err, errlen) < 0)
            return -1;
        initialised[i] = true;
        log_info("enabled collector '%s'", collectors[i]->name);
    }
    return 0;
}

void coll_fini(void)
{
    pthread_mutex_lock(&snap_lock);
    snap_unref_locked(snap_cur);
    snap_cur = NULL;
    pthread_mutex_unlock(&snap_lock);
    for (size_t i = NCOLL; i-- > 0;)
        if (initialised[i] && collectors[i]->fini)
            collectors[i]->fini();
}

struct gpu_snap {
    struct gpu_list l;
    int rc;
    char err[256];
    double when;
    char generation[32];
    int refs;
};

static void snap_unref_locked(struct gpu_snap *s)
{
    if (s && --s->refs == 0) {
        gpu_list_free(&s->l);
        free(s);
    }
}

/*
 * Say what discovery found, once: discovery is redone every rediscover interval, and the
 * node's shape is news only when it changes. A node without an AMD GPU is told at info (the
 * exporter runs on every node of a fleet); each AMD GPU that amdgpu does not serve is a
 * warning of its own, cleared when the driver serves it again.
 */
static void log_discovery(const struct coll_cfg *cfg, const struct gpu_snap *s)
{
    const struct gpu_list *l = &s->l;
    if (s->rc < 0) {
        log_cond("gpu discovery", LOG_WARN, "cannot discover GPUs: %s", s->err);
    } else if (l->n == 0 && l->pci_known && l->amd_pci == 0) {
        log_cond("gpu discovery", LOG_INFO,
                 "no AMD GPU on this node: no display or accelerator device of vendor 0x1002 "
                 "under '%s/bus/pci/devices'; reporting 0 GPUs",
                 cfg->sysfs);
    } else {
        int parts = 0;
        for (size_t i = 0; i < l->n; i++)
            parts += l->v[i].npart;
        log_cond("gpu discovery", LOG_INFO,
                 "found %zu amdgpu GPUs with %d partitions, %zu AMD GPUs on the PCI bus not "
                 "served by amdgpu%s",
                 l->n, parts, l->nunserved,
                 l->pci_known ? "" : " (unknown: the PCI bus cannot be listed)");
    }
    if (s->rc < 0)
        return; /* unknown: the GPUs said to be unserved are neither cleared nor restated */
    for (size_t i = 0; i < l->nunserved; i++) {
        const struct gpu_unserved *u = &l->unserved[i];
        char key[64];
        snprintf(key, sizeof(key), "gpu unserved %s", u->pci);
        if (u->driver[0])
            log_cond(key, LOG_WARN,
                     "AMD GPU '%s' (%s) is not served by amdgpu: it has no DRM device and is "
                     "bound to '%s'",
                     u->pci, u->pci_id, u->driver);
        else
            log_cond(key, LOG_WARN,
                     "AMD GPU '%s' (%s) is not served by amdgpu: it has no DRM device and no "
                     "driver is bound (amdgpu not loaded, or its probe failed)",
                     u->pci, u->pci_id);
    }
    /* The ones not restated by this discovery are served again (or gone): cleared. */
    log_cond_sweep("gpu unserved ");
}

static struct gpu_snap *snap_get(const struct coll_cfg *cfg)
{
    char gen[32];
    if (sysfs_read_str(gen, sizeof(gen), "%s/class/kfd/kfd/topology/generation_id", cfg->sysfs) < 0)
        gen[0] = '\0';
    double now = mono_now();
    pthread_mutex_lock(&snap_lock);
    struct gpu_snap *s = snap_cur;
    bool fresh = s && now - s->when < cfg->rediscover_interval && strcmp(s->generation, gen) == 0;
    if (fresh) {
        s->refs++;
        pthread_mutex_unlock(&snap_lock);
        return s;
    }
    pthread_mutex_unlock(&snap_lock);
    /* Discover outside the lock: a slow sysfs must not stall scrapes holding a snapshot.
     * Descriptors kept from the old topology are dropped first: a new discovery is the
     * moment a device may have gone or changed (attrfd.c re-checks each read as well). */
    attrfd_flush();
    s = xcalloc(1, sizeof(*s));
    attrfd_suspend();
    s->rc = gpu_discover(cfg->sysfs, &s->l, s->err, sizeof(s->err));
    attrfd_resume();
    s->when = now;
    str_copy(s->generation, sizeof(s->generation), gen);
    log_discovery(cfg, s);
    s->refs = 2; /* the cache and the caller */
    pthread_mutex_lock(&snap_lock);
    snap_unref_locked(snap_cur);
    snap_cur = s;
    pthread_mutex_unlock(&snap_lock);
    return s;
}

const struct gpu_list *coll_gpus(struct coll_ctx *ctx, char *err, size_t errlen)
{
    if (!ctx->snap)
        ctx->snap = snap_get(ctx->cfg);
    if (ctx->snap->rc < 0) {
        if (err)
            snprintf(err, errlen, "%s", ctx->snap->err);
        return NULL;
    }
    return &ctx->snap->l;
}

bool coll_no_gpu(const struct gpu_list *l)
{
    return l->n == 0 && l->nproblems == 0 && l->pci_known;
}

const struct gpu_metrics *coll_gpum(struct coll_ctx *ctx, size_t i)
{
    const struct gpu_list *l = coll_gpus(ctx, NULL, 0);
    if (!l || i >= l->n)
        return NULL;
    if (!ctx->gm) {
        ctx->gm = xcalloc(l->n, sizeof(*ctx->gm));
        ctx->gm_state = xcalloc(l->n, sizeof(*ctx->gm_state));
        ctx->gm_when = xcalloc(l->n, sizeof(*ctx->gm_when));
    }
    if (ctx->gm_state[i] == COLL_GPUM_NOT_READ) {
        /*
         * Newer kernels serve up to 128 KiB, read() to EOF and never with one stdio fread.
         * Every layout this parser knows is under 4 KiB, so 16 KiB on the stack is enough
         * and avoids a 128 KiB malloc (an mmap/munmap pair) per GPU per scrape.
         */
        unsigned char buf[16384];
        ctx->gm_when[i] = mono_now();
        ssize_t n = sysfs_read_bin(buf, sizeof(buf), "%s/gpu_metrics", l->v[i].devdir);
        char err[256];
        int rc;
        ctx->gm_state[i] = COLL_GPUM_UNUSABLE;
        /* One GPU's table is that GPU's problem: the others are still reported. */
        if (n < 0) {
            if (errno != ENOENT)
                coll_device_error(ctx, "gpu_metrics", "cannot read '%s/gpu_metrics': %s",
                                  l->v[i].devdir, strerror(errno));
        } else if ((rc = gpum_parse(buf, (size_t)n, &ctx->gm[i], err, sizeof(err))) ==
                   GPUM_SKIPPED) {
            log_debug("skipped '%s/gpu_metrics': %s", l->v[i].devdir, err);
            ctx->gm_state[i] = COLL_GPUM_SKIPPED;
        } else if (rc < 0) {
            coll_device_error(ctx, "gpu_metrics", "rejected '%s/gpu_metrics': %s", l->v[i].devdir,
                              err);
            /* The header's revision, kept for coll_gpum_has_attr_table (the parser resets
             * its output on error). */
            if (n >= 4) {
                ctx->gm[i].format_revision = buf[2];
                ctx->gm[i].content_revision = buf[3];
            }
        } else {
            ctx->gm_state[i] = COLL_GPUM_PARSED;
            const struct gpu_metrics *m = &ctx->gm[i];
            if (m->partial)
                coll_device_error(ctx, "gpu_metrics",
                                  "'%s/gpu_metrics' read in part: %s after %d of %d attributes "
                                  "(%zd of %u bytes)",
                                  l->v[i].devdir, m->partial, m->attrs_parsed, m->attr_count, n,
                                  m->structure_size);
        }
    }
    return ctx->gm_state[i] == COLL_GPUM_PARSED ? &ctx->gm[i] : NULL;
}

bool coll_gpum_has_attr_table(struct coll_ctx *ctx, size_t i)
{
    coll_gpum(ctx, i);
    if (!ctx->gm || ctx->gm_state[i] == COLL_GPUM_NOT_READ || ctx->gm_state[i] == COLL_GPUM_SKIPPED)
        return false;
    const struct gpu_metrics *m = &ctx->gm[i];
    return m->format_revision == 1 && m->content_revision >= 9;
}

double coll_gpum_when(const struct coll_ctx *ctx, size_t i)
{
    return ctx->gm_when && ctx->gm_state && ctx->gm_state[i] != COLL_GPUM_NOT_READ ? ctx->gm_when[i]
                                                                                   : 0;
}

double coll_busy(struct coll_ctx *ctx, size_t i)
{
    const struct gpu_list *l = coll_gpus(ctx, NULL, 0);
    if (!l || i >= l->n)
        return NAN;
    if (!ctx->busy) {
        ctx->busy = xmalloc(l->n * sizeof(*ctx->busy));
        for (size_t k = 0; k < l->n; k++)
            ctx->busy[k] = -1;
    }
    if (ctx->busy[i] < 0) {
        uint64_t pct;
        ctx->busy[i] = NAN;
        if (sysfs_read_u64(&pct, "%s/gpu_busy_percent", l->v[i].devdir) == 0)
            ctx->busy[i] = (double)pct / 100.0;
        else if (errno != ENOENT)
            coll_source_error(ctx, "gpu_busy_percent", "cannot parse '%s/gpu_busy_percent': %s",
                              l->v[i].devdir, errno == EINVAL ? "not a number" : strerror(errno));
    }
    return ctx->busy[i];
}

static void source_problem(struct coll_ctx *ctx, bool fails, const char *source, const char *fmt,
                           va_list ap) __attribute__((format(printf, 4, 0)));

void coll_source_error(struct coll_ctx *ctx, const char *source, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    source_problem(ctx, true, source, fmt, ap);
    va_end(ap);
}

void coll_device_error(struct coll_ctx *ctx, const char *source, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    source_problem(ctx, false, source, fmt, ap);
    va_end(ap);
}

static void source_problem(struct coll_ctx *ctx, bool fails, const char *source, const char *fmt,
                           va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (fails)
        ctx->errors++;
    int i = 0;
    while (i < ctx->nsrc_err && strcmp(ctx->src_err[i].source, source) != 0)
        i++;
    if (i == ctx->nsrc_err && i < (int)ARRAY_LEN(ctx->src_err)) {
        str_copy(ctx->src_err[i].source, sizeof(ctx->src_err[i].source), source);
        ctx->src_err[i].count = 0;
        ctx->nsrc_err++;
    }
    if (i < ctx->nsrc_err)
        ctx->src_err[i].count++;
    /* A source problem repeats on every scrape until it is fixed: one condition per
     * collector and message, cleared by the sweep after a run that no longer reports it. */
    char key[600];
    snprintf(key, sizeof(key), "collector %s: %s", ctx->collector, msg);
    log_cond(key, LOG_WARN, "collector '%s': %s", ctx->collector, msg);
}

void coll_scrape(const struct coll_cfg *cfg, struct expo *e)
{
    struct coll_ctx ctx = {.cfg = cfg, .e = e};
    expo_put(e, MX(EXPORTER_BUILD_INFO), 1, "version", GPURECLAIM_VERSION, NULL);
    for (size_t i = 0; i < NCOLL; i++) {
        if (!is_enabled(i))
            continue;
        const struct collector *c = collectors[i];
        char err[512] = "";
        ctx.collector = c->name;
        ctx.errors = 0;
        ctx.nsrc_err = 0;
        double t0 = mono_now();
        int rc = c->update(&ctx, err, sizeof(err));
        double dt = mono_now() - t0;
        bool ok = rc == COLL_OK && ctx.errors == 0;
        char key[64];
        snprintf(key, sizeof(key), "collector %s", c->name);
        if (rc == COLL_ERROR)
            log_cond(key, LOG_WARN, "collector '%s' failed: %s", c->name, err);
        else
            log_cond_clear(key);
        if (rc == COLL_NO_DATA)
            log_debug("collector '%s' found no data: %s", c->name, err);
        snprintf(key, sizeof(key), "collector %s: ", c->name);
        log_cond_sweep(key);
        for (int k = 0; k < ctx.nsrc_err; k++)
            expo_put(e, MX(SCRAPE_SOURCE_ERRORS), ctx.src_err[k].count, "collector", c->name,
                     "source", ctx.src_err[k].source, NULL);
        expo_put(e, MX(SCRAPE_COLLECTOR_DURATION_SECONDS), dt, "collector", c->name, NULL);
        expo_put(e, MX(SCRAPE_COLLECTOR_SUCCESS), ok ? 1 : 0, "collector", c->name, NULL);
    }
    coll_ctx_release(&ctx);
}

void coll_ctx_release(struct coll_ctx *ctx)
{
    if (ctx->snap) {
        pthread_mutex_lock(&snap_lock);
        snap_unref_locked(ctx->snap);
        pthread_mutex_unlock(&snap_lock);
        ctx->snap = NULL;
    }
    free(ctx->gm);
    free(ctx->gm_state);
    free(ctx->gm_when);
    free(ctx->busy);
    ctx->gm = NULL;
    ctx->gm_state = NULL;
    ctx->gm_when = NULL;
    ctx->busy = NULL;
}
