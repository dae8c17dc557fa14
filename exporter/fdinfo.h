/*
 * DRM fdinfo parser: the text of /proc/<pid>/fdinfo/<fd> for a DRM file descriptor, as
 * specified by Linux Documentation/gpu/drm-usage-stats.rst and printed by amdgpu_fdinfo.c.
 *
 * Pure: text in, struct out, no file system and no metrics, so it is unit-tested on real
 * captures and fuzzed. Values are checked strictly (engine time must end in " ns", sizes in
 * nothing, " KiB" or " MiB"); a line that breaks the rules is skipped and counted in
 * `malformed`, and the field stays unknown (its has-bit clear) instead of becoming 0.
 *
 * Keys read: drm-driver, drm-pdev, drm-client-id, pasid, drm-engine-<e>,
 * drm-engine-capacity-<e>, drm-{total,shared,resident,purgeable,active}-<region>, the
 * deprecated drm-memory-<region> (kept apart, see FDINFO_MEM_LEGACY), the amd-* memory keys,
 * and the v5.14-v5.18 amdgpu keys "pdev", "vram mem", "gtt mem", "cpu mem" (unit " kB").
 * The per-ring percentages of that old format ("gfx0:  0.00%") are ignored: they are a
 * kernel-side average over an unknown window, not a counter.
 */
#ifndef GPURECLAIM_FDINFO_H
#define GPURECLAIM_FDINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FDINFO_MAX_ENGINES 16
#define FDINFO_MAX_REGIONS 16
#define FDINFO_NAME_MAX    24 /* engine/region name incl. NUL ("mmioremap" is the longest seen) */

struct fdinfo_engine {
    char name[FDINFO_NAME_MAX];
    uint64_t busy_ns;  /* drm-engine-<name>, cumulative */
    uint64_t capacity; /* drm-engine-capacity-<name>, engine instances */
    bool has_busy, has_capacity;
};

enum fdinfo_mem_kind {
    FDINFO_MEM_TOTAL,
    FDINFO_MEM_SHARED,
    FDINFO_MEM_RESIDENT,
    FDINFO_MEM_PURGEABLE,
    FDINFO_MEM_ACTIVE,
    /* drm-memory-<region> (and the old "<region> mem"): deprecated alias of resident, but
     * between mainline a2529f67e2ed and its fix it also counted evicted buffers, so it is
     * stored apart and the caller chooses (see fdinfo_resident_bytes). */
    FDINFO_MEM_LEGACY,
    FDINFO_MEM_KINDS
};

struct fdinfo_region {
    char name[FDINFO_NAME_MAX]; /* "vram", "gtt", "cpu", ... */
    uint64_t bytes[FDINFO_MEM_KINDS];
    unsigned has; /* bit (1u << kind) set when bytes[kind] is known */
};

enum fdinfo_amd {
    FDINFO_AMD_VISIBLE_VRAM, /* amd-memory-visible-vram */
    FDINFO_AMD_EVICTED_VRAM,
    FDINFO_AMD_EVICTED_VISIBLE_VRAM,
    FDINFO_AMD_REQUESTED_VRAM,
    FDINFO_AMD_REQUESTED_VISIBLE_VRAM,
    FDINFO_AMD_REQUESTED_GTT,
    FDINFO_AMD_KEYS
};

struct fdinfo {
    char driver[32]; /* drm-driver */
    char pdev[32];   /* drm-pdev or old "pdev": the parent GPU's PCI slot, even for partitions */
    uint64_t client_id;
    uint64_t pasid;
    bool has_driver, has_pdev, has_client_id, has_pasid;
    bool legacy_format; /* v5.14-v5.18 keys were seen ("pdev", "vram mem") */

    struct fdinfo_engine engines[FDINFO_MAX_ENGINES];
    unsigned n_engines;
    struct fdinfo_region regions[FDINFO_MAX_REGIONS];
    unsigned n_regions;

    uint64_t amd[FDINFO_AMD_KEYS]; /* bytes */
    unsigned amd_has;              /* bit (1u << enum fdinfo_amd) */

    unsigned malformed; /* lines skipped: no ':', bad number, bad unit, duplicate key */
    unsigned dropped;   /* well-formed engine/region lines beyond the fixed capacity */
};

/*
 * Parse `len` bytes of fdinfo text (need not be NUL-terminated; the last line may lack its
 * newline). `out` is fully overwritten. Returns 0 when the text has a drm-driver key or the
 * old amdgpu "pdev" key, -1 otherwise ("no 'drm-driver' key"); `out` is filled either way.
 */
int fdinfo_parse(const char *text, size_t len, struct fdinfo *out, char *err, size_t errlen);

/* Busy time of engine `name`; false when the key was absent or malformed. */
bool fdinfo_engine_ns(const struct fdinfo *fi, const char *name, uint64_t *ns);

/* One memory figure for `region`; false when unknown. */
bool fdinfo_mem_bytes(const struct fdinfo *fi, const char *region, enum fdinfo_mem_kind kind,
                      uint64_t *bytes);

/*
 * Resident bytes of `region`: drm-resident-<region> when printed, else the legacy
 * drm-memory-<region> (kernels before the drm_print_memory_stats conversion print only
 * that). False when neither is known.
 */
bool fdinfo_resident_bytes(const struct fdinfo *fi, const char *region, uint64_t *bytes);

#endif
