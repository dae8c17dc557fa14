/*
 * KFD per-process files (see kfdproc.h). Owns the file names and units of
 * kfd_process.c's sysfs tree and the walk over it; mapping gpu_id to a device or partition
 * (KFD topology) and to metrics is the collector's job.
 *
 * Units come from the kernel: vram_<gpu_id> is "%llu" bytes; sdma_<gpu_id> is printed in
 * microseconds (the SDMA counter runs at 100 MHz and is divided by SDMA_ACTIVITY_DIVISOR,
 * kfd_priv.h); evicted_ms is jiffies64_to_msecs; cu_occupancy is "%d" of CUs in use right
 * now; queues/<qid>/gpuid is "%u" without a newline. The walk uses openat() relative to
 * each directory so that a rescan every few seconds builds no path strings per file.
 */
#include "kfdproc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "util.h"

/* Canonical decimal that fits 32 bits: "0" or [1-9][0-9]*, no sign. */
static bool parse_id(const char *s, size_t n, uint32_t *out)
{
    if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

enum kfdproc_file kfdproc_classify(const char *relpath, uint32_t *gpu_id, uint32_t *qid)
{
    uint32_t id, q;
    const char *rest, *slash;

    if (strcmp(relpath, "pasid") == 0)
        return KFDPROC_PASID;
    if (str_has_prefix(relpath, "vram_") || str_has_prefix(relpath, "sdma_")) {
        rest = relpath + 5;
        if (!parse_id(rest, strlen(rest), &id))
            return KFDPROC_UNKNOWN;
        if (gpu_id)
            *gpu_id = id;
        return relpath[0] == 'v' ? KFDPROC_VRAM : KFDPROC_SDMA;
    }
    if (str_has_prefix(relpath, "stats_")) {
        rest = relpath + 6;
        slash = strchr(rest, '/');
        if (!slash || !parse_id(rest, (size_t)(slash - rest), &id))
            return KFDPROC_UNKNOWN;
        enum kfdproc_file kind;
        if (strcmp(slash + 1, "cu_occupancy") == 0)
            kind = KFDPROC_CU_OCCUPANCY;
        else if (strcmp(slash + 1, "evicted_ms") == 0)
            kind = KFDPROC_EVICTED_MS;
        else
            return KFDPROC_UNKNOWN;
        if (gpu_id)
            *gpu_id = id;
        return kind;
    }
    if (str_has_prefix(relpath, "queues/")) {
        rest = relpath + 7;
        slash = strchr(rest, '/');
        if (!slash || !parse_id(rest, (size_t)(slash - rest), &q) || strcmp(slash + 1, "gpuid"))
            return KFDPROC_UNKNOWN;
        if (qid)
            *qid = q;
        return KFDPROC_QUEUE_GPUID;
    }
    return KFDPROC_UNKNOWN;
}

int kfdproc_parse_value(const char *text, size_t len, uint64_t *out)
{
    if (len > 0 && text[len - 1] == '\n')
        len--;
    if (len == 0)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return -1;
        unsigned d = (unsigned)(text[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/*
 * Read a small file relative to `dirfd`. 0 with the value, -1 with errno: ENOENT/ESRCH
 * when it (or its process) is gone, EINVAL for content that does not parse.
 */
static int read_value(int dirfd, const char *rel, uint64_t *out)
{
    char buf[64];
    /* a full buffer is longer than any number: malformed below */
    ssize_t r = fdio_read_at(dirfd, rel, buf, sizeof(buf), true);
    if (r < 0)
        return -1;
    size_t n = (size_t)r;
    if (n == sizeof(buf) || kfdproc_parse_value(buf, n, out) < 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static bool gone(int e)
{
    return e == ENOENT || e == ESRCH;
}

static struct kfdproc_gpu *gpu_entry(struct kfdproc_list *l, struct kfdproc_proc *p,
                                     uint32_t gpu_id)
{
    for (size_t i = p->first_gpu; i < p->first_gpu + p->n_gpus; i++)
        if (l->gpus[i].gpu_id == gpu_id)
            return &l->gpus[i];
    if (l->n_gpus == l->cap_gpus) {
        l->cap_gpus = l->cap_gpus ? 2 * l->cap_gpus : 16;
        l->gpus = xrealloc(l->gpus, l->cap_gpus * sizeof(*l->gpus));
    }
    struct kfdproc_gpu *g = &l->gpus[l->n_gpus++];
    memset(g, 0, sizeof(*g));
    g->gpu_id = gpu_id;
    p->n_gpus++;
    return g;
}

/* Store one value file's result in the node entry. */
static void take_value(struct kfdproc_list *l, struct kfdproc_proc *p, int dirfd, const char *rel,
                       uint32_t gpu_id, unsigned bit)
{
    uint64_t v;
    int rc = read_value(dirfd, rel, &v);
    if (rc < 0 && gone(errno))
        return;
    struct kfdproc_gpu *g = gpu_entry(l, p, gpu_id);
    if (rc < 0) {
        g->bad |= bit;
        return;
    }
    g->has |= bit;
    switch (bit) {
    case KFDPROC_HAS_VRAM:
        g->vram_bytes = v;
        break;
    case KFDPROC_HAS_SDMA:
        g->sdma_us = v;
        break;
    case KFDPROC_HAS_CU_OCCUPANCY:
        g->cu_occupancy = v;
        break;
    case KFDPROC_HAS_EVICTED_MS:
        g->evicted_ms = v;
        break;
    }
}

static void read_queues(struct kfdproc_list *l, struct kfdproc_proc *p, int pidfd)
{
    int qfd = openat(pidfd, "queues", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (qfd < 0)
        return;
    DIR *d = fdopendir(qfd);
    if (!d) {
        close(qfd);
        return;
    }
    struct dirent *de;
    char rel[300];
    while ((de = readdir(d)) != NULL) {
        uint32_t qid, gpu_id;
        uint64_t v;
        snprintf(rel, sizeof(rel), "queues/%s/gpuid", de->d_name);
        if (kfdproc_classify(rel, NULL, &qid) != KFDPROC_QUEUE_GPUID)
            continue;
        if (read_value(pidfd, rel, &v) < 0) {
            if (!gone(errno))
                p->bad_queues++;
            continue;
        }
        if (v > UINT32_MAX) {
            p->bad_queues++;
            continue;
        }
        gpu_id = (uint32_t)v;
        gpu_entry(l, p, gpu_id)->queues++;
    }
    closedir(d);
}

/* Read one proc/<pid>/ directory; false when the process went away before it was opened. */
static bool read_pid(struct kfdproc_list *l, int procfd, const char *name, int pid)
{
    int pidfd = openat(procfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pidfd < 0)
        return false;
    DIR *d = fdio_opendir_dup(pidfd);
    if (!d) {
        close(pidfd);
        return false;
    }
    if (l->n_procs == l->cap_procs) {
        l->cap_procs = l->cap_procs ? 2 * l->cap_procs : 16;
        l->procs = xrealloc(l->procs, l->cap_procs * sizeof(*l->procs));
    }
    struct kfdproc_proc *p = &l->procs[l->n_procs++];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->first_gpu = l->n_gpus;

    struct dirent *de;
    char rel[300];
    while ((de = readdir(d)) != NULL) {
        uint32_t gpu_id;
        uint64_t v;
        switch (kfdproc_classify(de->d_name, &gpu_id, NULL)) {
        case KFDPROC_PASID:
            if (read_value(pidfd, "pasid", &v) == 0) {
                p->pasid = v;
                p->has_pasid = true;
            } else if (!gone(errno)) {
                p->bad_pasid = true;
            }
            continue;
        case KFDPROC_VRAM:
            take_value(l, p, pidfd, de->d_name, gpu_id, KFDPROC_HAS_VRAM);
            continue;
        case KFDPROC_SDMA:
            take_value(l, p, pidfd, de->d_name, gpu_id, KFDPROC_HAS_SDMA);
            continue;
        default:
            break;
        }
        if (strcmp(de->d_name, "queues") == 0) {
            read_queues(l, p, pidfd);
            continue;
        }
        snprintf(rel, sizeof(rel), "%s/cu_occupancy", de->d_name);
        if (kfdproc_classify(rel, &gpu_id, NULL) == KFDPROC_CU_OCCUPANCY) {
            take_value(l, p, pidfd, rel, gpu_id, KFDPROC_HAS_CU_OCCUPANCY);
            snprintf(rel, sizeof(rel), "%s/evicted_ms", de->d_name);
            take_value(l, p, pidfd, rel, gpu_id, KFDPROC_HAS_EVICTED_MS);
        }
    }
    closedir(d);
    close(pidfd);
    /* Every KFD process has a pasid file: nothing readable means it exited during the walk. */
    if (!p->has_pasid && !p->bad_pasid && p->n_gpus == 0 && p->bad_queues == 0) {
        l->n_procs--;
        return false;
    }
    return true;
}

static int cmp_proc(const void *a, const void *b)
{
    const struct kfdproc_proc *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static int cmp_gpu(const void *a, const void *b)
{
    const struct kfdproc_gpu *x = a, *y = b;
    return (x->gpu_id > y->gpu_id) - (x->gpu_id < y->gpu_id);
}

int kfdproc_read(const char *sysfs_root, struct kfdproc_list *out, char *err, size_t errlen)
{
    out->n_procs = 0;
    out->n_gpus = 0;
    out->present = false;

    char path[4096];
    int n = snprintf(path, sizeof(path), "%s/class/kfd/kfd/proc", sysfs_root);
    if (n < 0 || (size_t)n >= sizeof(path)) {
        if (err && errlen)
            snprintf(err, errlen, "path too long: '%s'", sysfs_root);
        return -1;
    }
    int procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (procfd < 0) {
        if (errno == ENOENT)
            return 0;
        if (err && errlen)
            snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    DIR *d = fdio_opendir_dup(procfd);
    if (!d) {
        if (err && errlen)
            snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        close(procfd);
        return -1;
    }
    out->present = true;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        uint32_t pid;
        if (!parse_id(de->d_name, strlen(de->d_name), &pid) || pid == 0 || pid > INT32_MAX)
            continue;
        read_pid(out, procfd, de->d_name, (int)pid);
    }
    closedir(d);
    close(procfd);

    /* readdir order is arbitrary; sorted output keeps metrics and tests stable */
    if (out->n_procs)
        qsort(out->procs, out->n_procs, sizeof(*out->procs), cmp_proc);
    for (size_t i = 0; i < out->n_procs; i++)
        if (out->procs[i].n_gpus > 1)
            qsort(out->gpus + out->procs[i].first_gpu, out->procs[i].n_gpus, sizeof(*out->gpus),
                  cmp_gpu);
    return 0;
}

const struct kfdproc_gpu *kfdproc_find(const struct kfdproc_list *list,
                                       const struct kfdproc_proc *proc, uint32_t gpu_id)
{
    for (size_t i = proc->first_gpu; i < proc->first_gpu + proc->n_gpus; i++)
        if (list->gpus[i].gpu_id == gpu_id)
            return &list->gpus[i];
    return NULL;
}

void kfdproc_list_free(struct kfdproc_list *list)
{
    free(list->procs);
    free(list->gpus);
    memset(list, 0, sizeof(*list));
}
