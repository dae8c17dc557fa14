/*
 * Collector "ownership": which workload holds each GPU partition and how much of it each
 * workload uses (owners.h has the rules), from the kubelet pod-resources API, a
 * Docker/Podman API, a procfs scan and KFD per-process files.
 *
 * None of these sources is read on the scrape path. dcgm-exporter called pod-resources on
 * every scrape and its scrapes hung and burned cores (NVIDIA/dcgm-exporter#599); a
 * procfs walk costs milliseconds per thousand processes. A background thread refreshes a
 * snapshot every --collector.ownership.refresh-interval seconds and swaps a refcounted
 * pointer; update() only renders the latest snapshot. Each source fails alone: its owners
 * become unknown, gpureclaim_ownership_source_up{source} drops to 0 and the collector
 * reports success 0, while the scrape and the other sources go on. A snapshot older than
 * three intervals means the refresher is stuck: then only the meta series are shown, since
 * stale owners could name a pod that has since released the partition.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "collector.h"
#include "docker.h"
#include "kfdproc.h"
#include "log.h"
#include "metrics.h"
#include "owners.h"
#include "podres.h"
#include "procscan.h"
#include "util.h"

enum { SRC_KUBELET, SRC_RUNTIME, SRC_PROCFS, SRC_KFD, NSRC };
static const char *const src_names[NSRC] = {"kubelet", "runtime", "procfs", "kfd"};

struct own_snap {
    int refs;
    struct owners_snap o;
    double mono;          /* monotonic time the refresh finished */
    double wall;          /* the same as Unix time */
    double duration;      /* seconds the refresh took */
    signed char up[NSRC]; /* -1 not configured, 0 down, 1 up */
    char err[NSRC][256];
};

static struct {
    const struct coll_cfg *cfg;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop, started;
    pthread_t thread;
    struct own_snap *cur;
    /* Used by the refresher thread only. */
    struct procscan ps;
    struct kfdproc_list kfd;
    struct docker *docker;
    struct docker_container *ctrs; /* inspected running containers, by id */
    size_t n_ctrs;
    bool down[NSRC];
} own = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void snap_unref_locked(struct own_snap *s)
{
    if (s && --s->refs == 0) {
        owners_free(&s->o);
        free(s);
    }
}

/*
 * Seconds one call to a source may take: half the interval, at most 5 s, so that a hung
 * kubelet or runtime delays a refresh but cannot make the snapshot look stuck (3 intervals).
 */
static double source_timeout(void)
{
    double t = own.cfg->refresh_interval / 2;
    return t < 0.5 ? 0.5 : t > 5 ? 5 : t;
}

/* Compute units of each partition: KFD simd_count / simd_per_cu (docs/kernel-interfaces.md §6). */
static unsigned *read_cus(const struct gpu_list *l)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += (size_t)l->v[i].npart;
    unsigned *cus = xcalloc(n + 1, sizeof(*cus));
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        for (int j = 0; j < l->v[i].npart; j++, k++) {
            const struct gpu_part *p = &l->v[i].part[j];
            if (p->kfd_node < 0)
                continue;
            char path[1024], line[256];
            snprintf(path, sizeof(path), "%s/class/kfd/kfd/topology/nodes/%d/properties",
                     own.cfg->sysfs, p->kfd_node);
            FILE *f = fopen(path, "re");
            if (!f)
                continue;
            unsigned long long simd = 0, per_cu = 0;
            while (fgets(line, sizeof(line), f)) {
                unsigned long long v;
                if (sscanf(line, "simd_count %llu", &v) == 1)
                    simd = v;
                else if (sscanf(line, "simd_per_cu %llu", &v) == 1)
                    per_cu = v;
            }
            fclose(f);
            if (simd && per_cu)
                cus[k] = (unsigned)(simd / per_cu);
        }
    }
    return cus;
}

/*
 * Refresh the container cache: list running containers, inspect only ids not seen before
 * (names, labels and devices do not change while a container runs), drop ids that are gone.
 */
static int runtime_refresh(char *err, size_t errlen)
{
    if (!own.docker) {
        struct docker_cfg dc = {.socket = own.cfg->runtime_socket, .timeout = source_timeout()};
        own.docker = docker_new(&dc);
    }
    struct docker_container *list;
    size_t n;
    if (docker_list(own.docker, NULL, false, &list, &n, err, errlen) != DOCKER_OK) {
        /* A runtime that is down names no owner: forget what it said before. */
        docker_containers_free(own.ctrs, own.n_ctrs);
        own.ctrs = NULL;
        own.n_ctrs = 0;
        return -1;
    }
    struct docker_container *next = xcalloc(n + 1, sizeof(*next));
    size_t m = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < own.n_ctrs && strcmp(own.ctrs[k].id, list[i].id) != 0)
            k++;
        if (k < own.n_ctrs) {
            next[m++] = own.ctrs[k];
            memset(&own.ctrs[k], 0, sizeof(own.ctrs[k]));
            continue;
        }
        char e[256];
        int r = docker_inspect(own.docker, list[i].id, &next[m], e, sizeof(e));
        if (r == DOCKER_OK)
            m++;
        else if (r != DOCKER_GONE && rc == 0) {
            snprintf(err, errlen, "%s", e); /* retried at the next refresh */
            rc = -1;
        }
    }
    docker_containers_free(own.ctrs, own.n_ctrs);
    docker_containers_free(list, n);
    own.ctrs = next;
    own.n_ctrs = m;
    return rc;
}

static void source_result(struct own_snap *s, int src, int rc, const char *err)
{
    s->up[src] = rc == 0;
    if (rc == 0) {
        if (own.down[src])
            log_info("ownership source '%s' is up again", src_names[src]);
        own.down[src] = false;
        return;
    }
    str_copy(s->err[src], sizeof(s->err[src]), err);
    /* The scrape warns once per message (coll_source_error); here only the transition. */
    if (!own.down[src])
        log_debug("ownership source '%s' is down: %s", src_names[src], err);
    own.down[src] = true;
}

static struct own_snap *refresh(void)
{
    const struct coll_cfg *cfg = own.cfg;
    double t0 = mono_now();
    struct own_snap *s = xcalloc(1, sizeof(*s));
    char err[256];
    int rc;

    struct coll_ctx ctx = {.cfg = cfg};
    struct gpu_list none = {0};
    const struct gpu_list *gl = coll_gpus(&ctx, err, sizeof(err));
    if (!gl) {
        log_debug("ownership refresh without GPUs: %s", err);
        gl = &none;
    }
    unsigned *cus = read_cus(gl);

    struct podres_list pods = {0};
    s->up[SRC_KUBELET] = -1;
    if (cfg->pod_resources_socket && cfg->pod_resources_socket[0]) {
        struct stat st;
        if (stat(cfg->pod_resources_socket, &st) < 0) {
            snprintf(err, sizeof(err), "cannot use pod-resources socket '%s': %s",
                     cfg->pod_resources_socket, strerror(errno));
            rc = -1;
        } else {
            rc = podres_list(cfg->pod_resources_socket, source_timeout(), &pods, err, sizeof(err));
            if (rc == 0)
                podres_filter_prefix(&pods, "amd.com/");
        }
        source_result(s, SRC_KUBELET, rc, err);
    }

    rc = procscan_run(cfg->procfs, &own.ps, err, sizeof(err));
    source_result(s, SRC_PROCFS, rc, err);
    bool have_procs = rc == 0;

    rc = kfdproc_read(cfg->sysfs, &own.kfd, err, sizeof(err));
    source_result(s, SRC_KFD, rc, err);
    bool have_kfd = rc == 0;

    s->up[SRC_RUNTIME] = -1;
    if (cfg->runtime_socket && cfg->runtime_socket[0]) {
        rc = runtime_refresh(err, sizeof(err));
        source_result(s, SRC_RUNTIME, rc, err);
    }

    struct owners_input in = {
        .gpus = gl,
        .cus = cus,
        .pods = s->up[SRC_KUBELET] == 1 ? &pods : NULL,
        .procs = have_procs ? &own.ps : NULL,
        .kfd = have_kfd ? &own.kfd : NULL,
        .containers = own.ctrs,
        .n_containers = own.n_ctrs,
        .per_process = cfg->per_process,
    };
    owners_build(&in, &s->o);
    if (s->o.unknown_alloc_ids)
        log_debug("ownership: %u pod-resources device ids name no partition of this node",
                  s->o.unknown_alloc_ids);
    if (s->o.unknown_runtime_ids)
        log_debug("ownership: %u container device paths or ids name no partition",
                  s->o.unknown_runtime_ids);
    podres_free(&pods);
    free(cus);
    coll_ctx_release(&ctx);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s->wall = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    s->mono = mono_now();
    s->duration = s->mono - t0;
    s->refs = 1;
    return s;
}

static void *refresher(void *arg)
{
    for (;;) {
        struct own_snap *s = refresh();
        pthread_mutex_lock(&own.lock);
        snap_unref_locked(own.cur);
        own.cur = s;
        double t = mono_now() + own.cfg->refresh_interval;
        struct timespec ts = mono_timespec(t);
        /* Any error ends the wait too: an EINVAL deadline must not become a busy loop. */
        int rc = 0;
        while (!own.stop && rc == 0)
            rc = pthread_cond_timedwait(&own.cond, &own.lock, &ts);
        bool stop = own.stop;
        pthread_mutex_unlock(&own.lock);
        if (stop)
            return NULL;
    }
}

static int ownership_init(const struct coll_cfg *cfg, char *err, size_t errlen)
{
    if (!(cfg->refresh_interval > 0)) {
        snprintf(err, errlen, "invalid ownership refresh interval %g", cfg->refresh_interval);
        return -1;
    }
    own.cfg = cfg;
    own.stop = false;
    mono_cond_init(&own.cond);
    int rc = pthread_create(&own.thread, NULL, refresher, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the ownership refresher: %s", strerror(rc));
        pthread_cond_destroy(&own.cond);
        return -1;
    }
    own.started = true;
    return 0;
}

static void ownership_fini(void)
{
    if (!own.started)
        return;
    pthread_mutex_lock(&own.lock);
    own.stop = true;
    pthread_cond_signal(&own.cond);
    pthread_mutex_unlock(&own.lock);
    pthread_join(own.thread, NULL);
    pthread_cond_destroy(&own.cond);
    pthread_mutex_lock(&own.lock);
    snap_unref_locked(own.cur);
    own.cur = NULL;
    pthread_mutex_unlock(&own.lock);
    procscan_free(&own.ps);
    kfdproc_list_free(&own.kfd);
    docker_containers_free(own.ctrs, own.n_ctrs);
    own.ctrs = NULL;
    own.n_ctrs = 0;
    docker_free(own.docker);
    own.docker = NULL;
    own.started = false;
}

/* ---- rendering ---------------------------------------------------------------------------- */

#define WHO_LABELS 7 /* gpu, partition, namespace, pod, container, container_id, container_name */

static size_t use_labels(const char **lab, const struct owners_snap *o, const struct owners_use *u,
                         const char *pid)
{
    const struct owners_part *p = &o->parts[u->part];
    const char *v[] = {"gpu",
                       p->gpu,
                       "partition",
                       p->partition,
                       "namespace",
                       u->who.namespace,
                       "pod",
                       u->who.pod,
                       "container",
                       u->who.container,
                       "container_id",
                       u->who.container_id,
                       "container_name",
                       u->who.container_name};
    memcpy(lab, v, sizeof(v));
    size_t n = WHO_LABELS;
    if (pid) {
        lab[2 * n] = "pid";
        lab[2 * n + 1] = pid;
        n++;
    }
    return n;
}

/* The families of one kind of use: per workload, or per process
 * (--collector.ownership.per-process). */
struct use_families {
    const struct expo_family *cu, *cu_ratio, *vram, *sdma, *evicted, *engine, *memory, *processes;
};

static const struct use_families workload_families = {
    MX(WORKLOAD_CU_OCCUPANCY),
    MX(WORKLOAD_CU_OCCUPANCY_RATIO),
    MX(WORKLOAD_VRAM_BYTES),
    MX(WORKLOAD_SDMA_SECONDS_TOTAL),
    MX(WORKLOAD_EVICTED_SECONDS_TOTAL),
    MX(WORKLOAD_ENGINE_SECONDS_TOTAL),
    MX(WORKLOAD_MEMORY_BYTES),
    MX(WORKLOAD_PROCESSES),
};

static const struct use_families process_families = {
    MX(PROCESS_CU_OCCUPANCY),
    MX(PROCESS_CU_OCCUPANCY_RATIO),
    MX(PROCESS_VRAM_BYTES),
    MX(PROCESS_SDMA_SECONDS_TOTAL),
    MX(PROCESS_EVICTED_SECONDS_TOTAL),
    MX(PROCESS_ENGINE_SECONDS_TOTAL),
    MX(PROCESS_MEMORY_BYTES),
    NULL,
};

static void render_use(struct expo *e, const struct owners_snap *o, const struct owners_use *u,
                       const struct use_families *fm)
{
    const char *lab[2 * (WHO_LABELS + 2)];
    char pid[16];
    if (u->pid > 0)
        snprintf(pid, sizeof(pid), "%d", u->pid);
    size_t n = use_labels(lab, o, u, u->pid > 0 ? pid : NULL);
    if (u->has & OWNERS_HAS_CU) {
        expo_putv(e, fm->cu, (double)u->cu_occupancy, lab, n);
        unsigned cus = o->parts[u->part].cus;
        if (cus)
            expo_putv(e, fm->cu_ratio, (double)u->cu_occupancy / cus, lab, n);
    }
    if (u->has & OWNERS_HAS_VRAM)
        expo_putv(e, fm->vram, (double)u->vram_bytes, lab, n);
    if (u->has & OWNERS_HAS_SDMA)
        expo_putv(e, fm->sdma, (double)u->sdma_us / 1e6, lab, n);
    if (u->has & OWNERS_HAS_EVICTED)
        expo_putv(e, fm->evicted, (double)u->evicted_ms / 1e3, lab, n);
    if (fm->processes && (u->has & OWNERS_HAS_PROCESSES))
        expo_putv(e, fm->processes, (double)u->processes, lab, n);
    const char *lx[2 * (WHO_LABELS + 3)];
    memcpy(lx, lab, 2 * n * sizeof(*lab));
    for (unsigned i = 0; i < u->n_engines; i++) {
        lx[2 * n] = "engine";
        lx[2 * n + 1] = u->engines[i].name;
        expo_putv(e, fm->engine, (double)u->engines[i].ns / 1e9, lx, n + 1);
    }
    for (unsigned i = 0; i < u->n_regions; i++) {
        lx[2 * n] = "region";
        lx[2 * n + 1] = u->regions[i].name;
        expo_putv(e, fm->memory, (double)u->regions[i].bytes, lx, n + 1);
    }
}

static void render(struct expo *e, const struct owners_snap *o)
{
    for (size_t i = 0; i < o->n_owners; i++) {
        const struct owners_owner *w = &o->owners[i];
        const struct owners_part *p = &o->parts[w->part];
        expo_put(e, MX(OWNER_INFO), 1, "gpu", p->gpu, "partition", p->partition, "device_id",
                 p->device_id, "resource", w->resource, "namespace", w->who.namespace, "pod",
                 w->who.pod, "container", w->who.container, "container_id", w->who.container_id,
                 "container_name", w->who.container_name, "source", owners_source_name(w->source),
                 NULL);
    }
    for (size_t i = 0; i < o->n_uses; i++)
        render_use(e, o, &o->uses[i], &workload_families);
    for (size_t i = 0; i < o->n_procs; i++)
        render_use(e, o, &o->procs[i], &process_families);
}

static int ownership_update(struct coll_ctx *ctx, char *err, size_t errlen)
{
    pthread_mutex_lock(&own.lock);
    struct own_snap *s = own.cur;
    if (s)
        s->refs++;
    pthread_mutex_unlock(&own.lock);
    if (!s) {
        snprintf(err, errlen, "the first ownership refresh has not finished");
        return COLL_NO_DATA;
    }
    struct expo *e = ctx->e;
    expo_put(e, MX(OWNERSHIP_REFRESH_TIMESTAMP_SECONDS), s->wall, NULL);
    expo_put(e, MX(OWNERSHIP_REFRESH_DURATION_SECONDS), s->duration, NULL);
    for (int i = 0; i < NSRC; i++) {
        if (s->up[i] < 0)
            continue;
        expo_put(e, MX(OWNERSHIP_SOURCE_UP), s->up[i], "source", src_names[i], NULL);
        if (s->up[i] == 0)
            coll_source_error(ctx, src_names[i], "%s", s->err[i]);
    }
    double interval = ctx->cfg->refresh_interval;
    if (mono_now() - s->mono > 3 * interval)
        coll_source_error(ctx, "refresher",
                          "ownership data is older than 3 refresh intervals (%g s): the "
                          "refresher is stuck",
                          interval);
    else
        render(e, &s->o);
    pthread_mutex_lock(&own.lock);
    snap_unref_locked(s);
    pthread_mutex_unlock(&own.lock);
    return COLL_OK;
}

const struct collector coll_ownership = {
    .name = "ownership",
    .default_on = true,
    .help = "Workload owning each partition and its use (kubelet, runtime, procfs, KFD)",
    .init = ownership_init,
    .update = ownership_update,
    .fini = ownership_fini,
};
