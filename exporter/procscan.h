/*
 * Process scan: which processes hold GPU file descriptors, whom they belong to, and what
 * DRM fdinfo says about each DRM client. Walks <procfs>/[0-9]*: readlink of every fd/<n>
 * (a target starting with /dev/dri/renderD or /dev/dri/card is a DRM fd, /dev/kfd a KFD
 * fd), fdinfo/<n> for DRM fds (fdinfo_parse) and cgroup (cgroup_parse) for processes that
 * hold any. DRM clients are deduplicated by (drm-client-id, device minor), because dup()ed
 * and SCM_RIGHTS-passed fds show the same client in several fds and processes.
 *
 * Designed for a background thread that rescans every few seconds: the snapshot's arrays
 * are reused between runs (allocation only when a scan is larger than any before), only
 * processes holding GPU fds are read beyond their fd directory, and every file is opened
 * relative to a directory fd. The collector turns the snapshot into per-workload metrics.
 */
#ifndef GPURECLAIM_PROCSCAN_H
#define GPURECLAIM_PROCSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "fdinfo.h"

struct procscan_fd; /* private to procscan.c */

/* One process that holds a DRM or KFD fd. */
struct procscan_proc {
    int pid;
    bool kfd;         /* holds /dev/kfd: ROCm compute, see kfdproc.h */
    unsigned drm_fds; /* DRM fds before deduplication */
    bool has_owner;   /* cgroup file parsed */
    struct cgroup_owner owner;
};

/* One DRM client (struct drm_file), after deduplication. */
struct procscan_client {
    size_t proc;      /* index into procscan.procs of the lowest PID holding it */
    int pid;          /* = procs[proc].pid */
    int fd;           /* lowest fd number of that PID showing it */
    unsigned minor;   /* from the link name: renderD<minor> or card<minor> */
    bool render;      /* render node (renderD) rather than primary node (card) */
    unsigned holders; /* fds, across processes, that showed this client */
    /* Holders sit in processes with different owners (a client passed between pods):
     * attribution to `proc` is then a choice, not a fact. */
    bool shared_owners;
    /* fdinfo parsed with a drm-driver (or old amdgpu) key. Without a drm-client-id (kernels
     * before v5.19) a client cannot be deduplicated and each fd counts as one. */
    bool has_info;
    struct fdinfo info;
};

struct procscan {
    struct procscan_proc *procs;
    size_t n_procs, cap_procs;
    struct procscan_client *clients;
    size_t n_clients, cap_clients;

    unsigned scanned;       /* PID directories looked at */
    unsigned vanished;      /* processes or fds that went away mid-scan (skipped) */
    unsigned denied;        /* fd directories not readable (EACCES: not root) */
    unsigned fdinfo_errors; /* DRM fdinfo without a usable driver key */
    double seconds;         /* duration of the last procscan_run */

    /* private scratch, kept between runs */
    size_t *table; /* dedupe hash: client index + 1, 0 = empty */
    size_t table_cap, table_used;
    int *pids;
    size_t cap_pids;
    struct procscan_fd *fds;
    size_t cap_fds;
    char *buf;
    size_t buf_cap;
};

/*
 * Scan `procfs_root` (the --path.procfs value) into `out`, which must be zeroed before the
 * first run and is overwritten on each run. Returns 0, or -1 with `err` when the root
 * itself cannot be read; per-process problems are counted, never fatal.
 */
int procscan_run(const char *procfs_root, struct procscan *out, char *err, size_t errlen);

/* The process entry for `pid`, or NULL (binary search: procs are sorted by PID). */
const struct procscan_proc *procscan_find_proc(const struct procscan *ps, int pid);

void procscan_free(struct procscan *ps);

#endif
