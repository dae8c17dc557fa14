/*
 * KFD per-process files: <sysfs>/class/kfd/kfd/proc/<pid>/ (Linux
 * drivers/gpu/drm/amd/amdkfd/kfd_process.c). One directory per process that opened
 * /dev/kfd, named after its lead thread's host PID. This is where ROCm/HIP compute shows up:
 * it bypasses the DRM scheduler, so DRM fdinfo engine time stays 0 for it, while
 * vram_<gpu_id> gives ownership of memory per KFD node (one node per compute partition)
 * and stats_<gpu_id>/cu_occupancy gives an instantaneous activity hint.
 *
 * The name classifier and value parser are pure (and fuzzed); kfdproc_read() walks the
 * directory. A file that is present but malformed leaves its field unknown and sets a bit
 * in `bad` for the caller to log; it is never read as 0.
 */
#ifndef GPURECLAIM_KFDPROC_H
#define GPURECLAIM_KFDPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kfdproc_file {
    KFDPROC_UNKNOWN,
    KFDPROC_PASID,        /* pasid */
    KFDPROC_VRAM,         /* vram_<gpu_id>: bytes */
    KFDPROC_SDMA,         /* sdma_<gpu_id>: cumulative microseconds */
    KFDPROC_CU_OCCUPANCY, /* stats_<gpu_id>/cu_occupancy: CUs in use now */
    KFDPROC_EVICTED_MS,   /* stats_<gpu_id>/evicted_ms: cumulative milliseconds */
    KFDPROC_QUEUE_GPUID,  /* queues/<qid>/gpuid: the gpu_id owning user queue <qid> */
};

/* Bits of kfdproc_gpu.has and .bad */
#define KFDPROC_HAS_VRAM         (1u << 0)
#define KFDPROC_HAS_SDMA         (1u << 1)
#define KFDPROC_HAS_CU_OCCUPANCY (1u << 2)
#define KFDPROC_HAS_EVICTED_MS   (1u << 3)

struct kfdproc_gpu {
    uint32_t gpu_id; /* KFD topology node gpu_id */
    uint64_t vram_bytes;
    uint64_t sdma_us;
    uint64_t evicted_ms;
    uint64_t cu_occupancy;
    unsigned has;    /* KFDPROC_HAS_* known values */
    unsigned bad;    /* KFDPROC_HAS_* files present but malformed */
    unsigned queues; /* user queues whose gpuid names this node */
};

struct kfdproc_proc {
    int pid;
    uint64_t pasid;
    bool has_pasid;
    bool bad_pasid;
    unsigned bad_queues; /* queues/<qid>/gpuid files that were malformed */
    size_t first_gpu;    /* index into kfdproc_list.gpus */
    size_t n_gpus;
};

struct kfdproc_list {
    struct kfdproc_proc *procs;
    size_t n_procs, cap_procs;
    struct kfdproc_gpu *gpus; /* each process's nodes are contiguous */
    size_t n_gpus, cap_gpus;
    bool present; /* the proc directory exists (amdkfd loaded) */
};

/*
 * Classify a path relative to proc/<pid>/ ("vram_1234", "stats_1234/cu_occupancy",
 * "queues/3/gpuid", ...). gpu_id and qid must be canonical decimal (no sign, no leading
 * zero) and fit in 32 bits; `gpu_id` / `qid` may be NULL.
 */
enum kfdproc_file kfdproc_classify(const char *relpath, uint32_t *gpu_id, uint32_t *qid);

/*
 * Parse a file's content: decimal digits, optionally one trailing newline (the queue files
 * have none), nothing else; 0, or -1 for empty, signed, overflowing or trailing garbage.
 */
int kfdproc_parse_value(const char *text, size_t len, uint64_t *out);

/*
 * Read every <sysfs_root>/class/kfd/kfd/proc/<pid>/ into `out`, reusing its arrays (zero
 * it before the first call). A missing proc directory is not an error (present = false).
 * Processes that exit mid-walk are skipped; files that vanish are left unknown without a
 * `bad` bit. Returns 0, or -1 with `err` when the proc directory cannot be read.
 */
int kfdproc_read(const char *sysfs_root, struct kfdproc_list *out, char *err, size_t errlen);

/* The node entry of `proc` for gpu_id, or NULL. */
const struct kfdproc_gpu *kfdproc_find(const struct kfdproc_list *list,
                                       const struct kfdproc_proc *proc, uint32_t gpu_id);

void kfdproc_list_free(struct kfdproc_list *list);

#endif
