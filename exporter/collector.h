/*
 * The collector interface, the one table of collectors, and the scrape that runs them.
 *
 * As in node_exporter, each collector lives in its own file behind a small vtable, is
 * switched with --collector.<name> / --no-collector.<name>, and is reported with
 * gpureclaim_scrape_collector_success and _duration_seconds; a failing collector never fails
 * the scrape. A scrape context is private to one request, so concurrent scrapes share
 * nothing but the read-only configuration and what collectors cache behind their own locks.
 */
#ifndef GPURECLAIM_COLLECTOR_H
#define GPURECLAIM_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "expo.h"
#include "gpu.h"
#include "gpu_metrics.h"

/* Configuration shared by all collectors; read-only once the exporter runs. */
struct coll_cfg {
    const char *sysfs;  /* --path.sysfs */
    const char *procfs; /* --path.procfs */
    const char *devfs;  /* --path.devfs */
    const char *pod_resources_socket;
    const char *runtime_socket;
    double refresh_interval;    /* seconds between background refreshes of owner data */
    double rediscover_interval; /* seconds a GPU discovery is reused (KFD changes end it) */
    bool per_process;           /* --collector.ownership.per-process: add pid series */
};

/* What coll_gpum found for one GPU in this scrape. */
enum coll_gpum_state {
    COLL_GPUM_NOT_READ = 0, /* not asked for yet (zeroed allocation) */
    COLL_GPUM_PARSED,       /* parsed: coll_gpum returns it */
    COLL_GPUM_UNUSABLE,     /* absent, unreadable or rejected */
    COLL_GPUM_SKIPPED,      /* a layout recognised and skipped on purpose (APU, pre-v1_3) */
};

/* Per-scrape state handed to every collector. */
struct coll_ctx {
    const struct coll_cfg *cfg;
    struct expo *e;
    const char *collector; /* name of the collector running now */
    int errors;            /* source errors reported by the running collector */
    struct {
        char source[48];
        int count;
    } src_err[16]; /* per source kind, emitted after the collector runs */
    int nsrc_err;
    struct gpu_snap *snap;          /* the GPU discovery this scrape uses (shared, refcounted) */
    struct gpu_metrics *gm;         /* per GPU, parsed on first use */
    enum coll_gpum_state *gm_state; /* per GPU */
    double *gm_when;                /* per GPU: monotonic time its gpu_metrics was read */
    double *busy; /* per GPU gpu_busy_percent as a ratio: -1 not read, NaN absent */
};

/* Return codes of update(): data collected, failure, or nothing to collect here. */
#define COLL_OK      0
#define COLL_ERROR   (-1)
#define COLL_NO_DATA 1

struct collector {
    const char *name;
    bool default_on;
    const char *help;
    /* Optional: called once at start (e.g. to start a background refresher). */
    int (*init)(const struct coll_cfg *cfg, char *err, size_t errlen);
    int (*update)(struct coll_ctx *ctx, char *err, size_t errlen);
    /* Optional: called once at exit, in reverse table order. */
    void (*fini)(void);
};

struct flags_def;
/*
 * The collector flags as rows of the exporter's flag table (flags.h): first
 * --collector.disable-defaults, then --collector.<name> (a boolean, so --no-collector.<name>
 * too) for each collector, defaulting to whether it is on by default. Fills `rows` (room for
 * cap rows) and returns how many, or 0 when cap is too small.
 */
size_t coll_flag_rows(struct flags_def *rows, size_t cap);
/* Take the parsed values of the rows coll_flag_rows filled (before coll_init). */
void coll_flags_apply(const struct flags_def *rows);
int coll_init(const struct coll_cfg *cfg, char *err, size_t errlen);
void coll_fini(void);
/* Release what a scrape context holds (its GPU snapshot, parsed blobs). */
void coll_ctx_release(struct coll_ctx *ctx);
/* Run every enabled collector into `e` and add the scrape meta metrics. */
void coll_scrape(const struct coll_cfg *cfg, struct expo *e);

/*
 * The GPUs of this scrape, or NULL with a message in err when discovery cannot tell whether
 * the node has any (see gpu_discover: an absent class/drm with a listed PCI bus is a node
 * without GPUs, not an error). Discovery walks every DRM node, the PCI bus and KFD topology,
 * so it is shared between scrapes and redone after --gpu.rediscover-interval or as soon as
 * KFD's topology generation_id changes (a partition mode change renumbers the nodes). What
 * it found is logged once per change (log_cond), not per scrape.
 */
const struct gpu_list *coll_gpus(struct coll_ctx *ctx, char *err, size_t errlen);

/*
 * Whether discovery proved that no GPU is here for a collector to read: no amdgpu device, no
 * broken card, and bus/pci/devices was listed (so the absence is known, not assumed). A
 * collector then succeeds with nothing to report; the devices collector says whether the
 * node has no AMD GPU at all or one that amdgpu does not serve.
 */
bool coll_no_gpu(const struct gpu_list *l);

/*
 * The parsed gpu_metrics blob of GPU `i` of coll_gpus(), read and parsed at most once per
 * scrape (two collectors use it). NULL when the file is absent or was rejected; a rejected
 * blob is reported once as a source error of the collector that read it first.
 */
const struct gpu_metrics *coll_gpum(struct coll_ctx *ctx, size_t i);

/*
 * Whether GPU `i` serves a gpu_metrics attribute table (revision 1.9 or later), parsed or
 * not: such a table has busy accumulators, so an instantaneous gauge must not stand in for
 * them while they cannot be read.
 */
bool coll_gpum_has_attr_table(struct coll_ctx *ctx, size_t i);

/* Monotonic time at which coll_gpum read GPU `i`'s table (0 if it was not read). */
double coll_gpum_when(const struct coll_ctx *ctx, size_t i);

/*
 * gpu_busy_percent of GPU `i` as a ratio, read at most once per scrape (two collectors use
 * it, and two SMU reads could disagree); NaN when absent or malformed (reported once).
 */
double coll_busy(struct coll_ctx *ctx, size_t i);

/*
 * Report a problem with one source (a malformed file, a rejected blob): logged at warn the
 * first time for this key and at debug afterwards, and counted in
 * gpureclaim_scrape_source_errors{collector,source}. `source` is a short kind such as
 * "gpu_busy_percent"; the message names the path.
 */
void coll_source_error(struct coll_ctx *ctx, const char *source, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * The same for a problem confined to one device (one GPU's unreadable table) while the
 * collector still reports the others: counted and logged alike, but it does not set
 * gpureclaim_scrape_collector_success to 0, so one odd GPU does not fire a
 * collector-failing alert for the whole node.
 */
void coll_device_error(struct coll_ctx *ctx, const char *source, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
