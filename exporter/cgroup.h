/*
 * Workload ownership from the content of /proc/<pid>/cgroup: container id, Kubernetes pod
 * UID and QoS class, and the container runtime, for cgroup v1, v2 and hybrid layouts and
 * both the cgroupfs and the systemd cgroup drivers.
 *
 * Pure: text in, struct out. The exporter uses it to aggregate per-process GPU usage to a
 * pod or container (metrics carry no PID labels); the pod UID is what the enforcer acts on.
 * Anything not recognised stays unknown: no container id is invented from a path that only
 * looks like one.
 */
#ifndef GPURECLAIM_CGROUP_H
#define GPURECLAIM_CGROUP_H

#include <stdbool.h>
#include <stddef.h>

enum cgroup_runtime {
    CGROUP_RUNTIME_NONE,       /* no container id in the path */
    CGROUP_RUNTIME_UNKNOWN,    /* a bare 64-hex id (cgroupfs kubelet): containerd or docker */
    CGROUP_RUNTIME_CONTAINERD, /* cri-containerd-<id>.scope, <slice>:cri-containerd:<id> */
    CGROUP_RUNTIME_CRIO,       /* crio-<id>[.scope] */
    CGROUP_RUNTIME_DOCKER,     /* docker-<id>.scope, /docker/<id> */
    CGROUP_RUNTIME_PODMAN,     /* libpod-<id>[.scope] */
};

enum cgroup_qos {
    CGROUP_QOS_UNKNOWN,
    CGROUP_QOS_GUARANTEED, /* pod cgroup directly under kubepods */
    CGROUP_QOS_BURSTABLE,
    CGROUP_QOS_BESTEFFORT,
};

/* Bits of cgroup_owner.layout */
#define CGROUP_LAYOUT_V1 1u /* "N:controllers:path" lines with N > 0 */
#define CGROUP_LAYOUT_V2 2u /* a "0::path" line; both bits = hybrid */

struct cgroup_owner {
    char container_id[65]; /* 64 lower-case hex digits */
    /*
     * Dashed UUID (systemd slices write it with '_', which is turned back into '-'), or the
     * 32-hex config hash that kubelet uses as the UID of a static pod, kept as printed.
     */
    char pod_uid[37];
    bool has_container_id, has_pod_uid;
    bool in_kubernetes; /* a pod cgroup under kubepods was found */
    bool conmon;        /* a conmon monitor scope (CRI-O, podman): not a container */
    enum cgroup_runtime runtime;
    enum cgroup_qos qos;
    unsigned layout;    /* CGROUP_LAYOUT_* bits seen */
    unsigned malformed; /* lines without "id:controllers:path" shape */
};

/*
 * Parse /proc/<pid>/cgroup text (`len` bytes, NUL not needed). Each line's path is read
 * and the most informative one wins (container id and pod UID over a bare "/"); on a tie
 * the v2 line is preferred. Returns 0 when at least one well-formed line was seen (even if
 * it names no container), -1 for empty or entirely malformed text. `out` is always filled.
 */
int cgroup_parse(const char *text, size_t len, struct cgroup_owner *out);

/* "containerd", "cri-o", "docker", "podman", "unknown" or "none". */
const char *cgroup_runtime_name(enum cgroup_runtime rt);
/* "Guaranteed", "Burstable", "BestEffort" (Kubernetes spelling) or "unknown". */
const char *cgroup_qos_name(enum cgroup_qos qos);

#endif
