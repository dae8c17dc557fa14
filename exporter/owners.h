/*
 * Workload ownership of GPUs and compute partitions: who holds each partition (kubelet
 * pod-resources allocations, container runtime devices, processes with open render nodes or
 * KFD memory) and how much of what it holds each workload uses (KFD cu_occupancy, VRAM,
 * SDMA and eviction time; DRM fdinfo engine time and resident memory).
 *
 * owners_build() is pure: it turns the results of the sources (already read by the caller,
 * in a background thread) into a self-contained snapshot that a scrape only renders. A
 * source that is down is passed as NULL and its owners are simply unknown; nothing is
 * guessed in their place.
 *
 * Attribution of a process on a partition, in order: the pod-resources owner of the
 * partition when it has exactly one (unless the process's cgroup shows it runs outside
 * Kubernetes, e.g. a monitoring tool on the host); else the runtime container whose id is
 * the process's cgroup container id; else only that container id (possibly ""). A DRM
 * client seen in several processes (dup()ed or passed fds) counts once, for the lowest PID
 * (procscan.h).
 */
#ifndef GPURECLAIM_OWNERS_H
#define GPURECLAIM_OWNERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "docker.h"
#include "fdinfo.h"
#include "gpu.h"
#include "kfdproc.h"
#include "podres.h"
#include "procscan.h"

/* Container label naming device ids explicitly, comma-separated ("amdgpu_xcp_3,0000:05:00.0"). */
#define OWNERS_DEVICES_LABEL "gpureclaim.io/devices"

enum owners_source {
    OWNERS_KUBELET, /* pod-resources allocation (device plugin or DRA claim) */
    OWNERS_RUNTIME, /* container devices (HostConfig.Devices) or the devices label */
    OWNERS_PROCESS, /* a process on the partition whose owner is not otherwise known */
};

/* One compute partition, copied from the GPU discovery so the snapshot stands alone. */
struct owners_part {
    char gpu[16];       /* PCI address of the GPU */
    char partition[8];  /* partition index, as in the partition metrics */
    char device_id[48]; /* device-plugin id */
    uint32_t kfd_gpu_id;
    unsigned cus; /* compute units of the partition, 0 if unknown */
};

/* Labels of a workload; never NULL, "" when unknown. Strings belong to the snapshot. */
struct owners_who {
    const char *namespace, *pod, *container, *container_id, *container_name;
};

struct owners_owner {
    size_t part; /* index into owners_snap.parts */
    enum owners_source source;
    const char *resource; /* "amd.com/cpx_nps4", a DRA driver name, or "" */
    struct owners_who who;
};

/* Bits of owners_use.has */
#define OWNERS_HAS_CU        (1u << 0)
#define OWNERS_HAS_VRAM      (1u << 1)
#define OWNERS_HAS_SDMA      (1u << 2)
#define OWNERS_HAS_EVICTED   (1u << 3)
#define OWNERS_HAS_PROCESSES (1u << 4)

struct owners_engine {
    char name[FDINFO_NAME_MAX];
    uint64_t ns;
};

struct owners_region {
    char name[FDINFO_NAME_MAX];
    uint64_t bytes; /* resident */
};

/* Use of one partition by one workload (pid 0) or one process (pid > 0). */
struct owners_use {
    size_t part;
    int pid;
    struct owners_who who;
    unsigned processes;
    uint64_t cu_occupancy, vram_bytes, sdma_us, evicted_ms;
    unsigned has; /* OWNERS_HAS_* known values */
    unsigned n_engines, n_regions;
    struct owners_engine engines[FDINFO_MAX_ENGINES];
    struct owners_region regions[FDINFO_MAX_REGIONS];
};

struct owners_snap {
    struct owners_part *parts;
    size_t n_parts;
    struct owners_owner *owners;
    size_t n_owners, cap_owners;
    struct owners_use *uses; /* per workload */
    size_t n_uses, cap_uses;
    struct owners_use *procs; /* per process, only with per_process */
    size_t n_procs, cap_procs;

    /* For the log: ids that name no partition of this node. */
    unsigned unknown_alloc_ids;   /* pod-resources device ids and DRA device names */
    unsigned unknown_runtime_ids; /* device paths or label ids of containers */
    unsigned shared_clients;      /* DRM clients held by processes of different owners */

    /* private */
    char **strs;
    size_t n_strs, cap_strs;
    size_t *table; /* workload lookup: index + 1 into uses, 0 = empty */
    size_t table_cap;
};

struct owners_input {
    const struct gpu_list *gpus;
    /* Compute units per partition in discovery order (GPU by GPU, partition by partition);
     * NULL or 0 entries when unknown. */
    const unsigned *cus;
    const struct podres_list *pods;            /* NULL: kubelet source down or not configured */
    const struct procscan *procs;              /* NULL: procfs scan failed */
    const struct kfdproc_list *kfd;            /* NULL: KFD process files unreadable */
    const struct docker_container *containers; /* inspected (devices filled); may be NULL */
    size_t n_containers;
    bool per_process; /* also fill owners_snap.procs */
};

/* Build `out` (zero it first; owners_free() before reuse). Cannot fail. */
void owners_build(const struct owners_input *in, struct owners_snap *out);

void owners_free(struct owners_snap *s);

/* "kubelet", "runtime" or "process". */
const char *owners_source_name(enum owners_source s);

#endif
