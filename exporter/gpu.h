/*
 * Discovery of amdgpu devices and their compute partitions from sysfs and KFD topology.
 *
 * Every DRM card under class/drm (card10 and above too) whose device is driven by amdgpu
 * is a GPU, keyed by its PCI address. Partitions come from KFD topology: each KFD GPU node
 * is one partition, its drm_render_minor names the partition's render node and its
 * domain/location_id the parent PCI device (function bits = partition index). XCP render
 * nodes without a KFD node are the spare nodes the driver creates in SPX and are not
 * partitions. Without KFD topology a GPU is reported as one partition (index 0).
 *
 * Discovery also records what does not change while the driver is loaded (names, which
 * hwmon sensors and xcp_metrics files exist), so that a scrape reads only values.
 *
 * The exporter runs on every node of a fleet, most of them without an AMD GPU, and a node
 * without amdgpu has no class/drm to tell why. So discovery also lists bus/pci/devices for
 * AMD display and accelerator functions (vendor 0x1002, class 0x03xxxx or 0x12xxxx): none
 * means the node has no AMD GPU (a fact, not an error); one with no DRM node of amdgpu is
 * a GPU the driver does not serve (not loaded, not bound, or probe failed), which is what
 * an operator must hear about.
 */
#ifndef GPURECLAIM_GPU_H
#define GPURECLAIM_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GPU_MAX_PART 8

struct gpu_part {
    int index;            /* partition index within the GPU (0 = the PCI device's own nodes) */
    int card;             /* cardN, -1 if no card node was found */
    int render;           /* render minor (renderD<minor>), -1 if unknown */
    char device_id[48];   /* id the device plugin uses: PCI address, or amdgpu_xcp_N */
    char devdir[512];     /* resolved device directory (PCI dir or XCP platform dir) */
    int kfd_node;         /* KFD topology node, -1 without KFD */
    uint32_t kfd_gpu_id;  /* KFD gpu_id, 0 if unknown */
    int num_xcc;          /* XCCs in the partition, -1 if unknown */
    bool has_xcp_metrics; /* <devdir>/xcp/xcp_metrics exists */
    int64_t mem_bytes;    /* sum of the KFD node's mem_banks size_in_bytes, -1 if unknown */
};

#define GPU_MAX_TEMP 8

struct gpu_temp {
    int index;      /* N of tempN_input */
    char label[32]; /* lower-cased tempN_label, or "tempN" */
};

struct gpu {
    char pci[16];       /* "0000:05:00.0" */
    char pci_id[16];    /* "1002:74A1" from uevent PCI_ID, "" if absent */
    int card;           /* primary card number */
    int render;         /* primary render minor, -1 if not found */
    char devdir[512];   /* <sysfs>/class/drm/cardN/device (as a path under the root) */
    char product[96];   /* product_name, "" if absent */
    char unique_id[32]; /* unique_id, "" if absent */
    char hwmon[640];    /* the device's hwmon directory, "" if none */
    /* Partition modes: a mode change re-creates the KFD nodes (new generation_id), so these
     * are as current as the discovery. "" when the file is absent. */
    char compute_mode[16], memory_mode[16];
    char compute_modes[96], memory_modes[96]; /* available_*_partition, as the driver lists */
    int ntemp;
    struct gpu_temp temp[GPU_MAX_TEMP];
    bool has_power_input, has_power_average;
    int npart;
    struct gpu_part part[GPU_MAX_PART];
};

/* A card that could not be used, for the collector to report. */
struct gpu_problem {
    char card[32];
    char what[160];
};

/* An AMD display or accelerator PCI function that no amdgpu DRM node belongs to. */
struct gpu_unserved {
    char pci[16];    /* "0000:05:00.0", the name under bus/pci/devices */
    char pci_id[16]; /* "1002:74A1" from the vendor and device files */
    char driver[32]; /* the bound driver ("vfio-pci", "radeon"), "" when none is bound */
};

struct gpu_list {
    struct gpu *v;
    size_t n;
    struct gpu_problem *problems;
    size_t nproblems;
    bool kfd;        /* KFD topology was found */
    int spare_nodes; /* amdgpu XCP render nodes without a KFD node */
    bool has_drm;    /* class/drm exists */
    bool pci_known;  /* bus/pci/devices was listed: amd_pci and unserved are exact */
    size_t amd_pci;  /* AMD display/accelerator PCI functions found there */
    struct gpu_unserved *unserved;
    size_t nunserved;
};

/*
 * Discover GPUs under `sysfs`. Returns 0, even with zero GPUs: a node whose class/drm is
 * absent but whose bus/pci/devices lists no AMD GPU has none, and that is not an error.
 * Returns -1 with a message when neither can tell: class/drm cannot be opened (for another
 * reason than its absence), or it is absent and bus/pci/devices cannot be listed either.
 * Problems with single cards go to out->problems.
 */
int gpu_discover(const char *sysfs, struct gpu_list *out, char *err, size_t errlen);
void gpu_list_free(struct gpu_list *l);
/* Find the GPU and partition holding render minor `minor`; false if none. */
bool gpu_find_render(const struct gpu_list *l, int minor, const struct gpu **g,
                     const struct gpu_part **p);
/* Find by device-plugin id (PCI address or amdgpu_xcp_N, case-insensitive). */
bool gpu_find_device_id(const struct gpu_list *l, const char *id, const struct gpu **g,
                        const struct gpu_part **p);

#endif
