/*
 * Client for the kubelet pod-resources API v1 (docs/kernel-interfaces.md §10): which pod and
 * container holds which device, the only authoritative source for mapping AMD GPUs and CPX
 * partitions to workloads when processes are invisible (containers in other PID namespaces, no KFD
 * access).
 *
 * The kubelet serves gRPC on a Unix socket. Rather than pulling in a gRPC and protobuf runtime
 * for two unary calls with empty requests, this module speaks gRPC over HTTP/2 with libcurl
 * (prior knowledge, no TLS; grpc.c) and decodes the two response messages with a small, strict
 * protobuf reader (pbwire.c) that skips unknown fields, since kubelet adds fields every few
 * releases.
 *
 * A call blocks for up to `timeout` seconds. Never call it on the scrape path: dcgm-exporter
 * did, and its scrapes hung and burned cores (NVIDIA/dcgm-exporter#599). Refresh a cached
 * list from a background loop instead. Thread-safe; libcurl must have been initialised with
 * curl_global_init() before threads start.
 */
#ifndef GPURECLAIM_PODRES_H
#define GPURECLAIM_PODRES_H

#include <stddef.h>
#include <stdint.h>

/* Largest gRPC message accepted; a real List answer of a full node is a few hundred KiB. */
#define PODRES_MAX_MESSAGE (64u << 20)
/* Longest kept string (names, resource names, device ids); Kubernetes names are <= 253. */
#define PODRES_MAX_STRING 4096
/* Most allocations plus claims kept from one response; bounds memory for a hostile answer. */
#define PODRES_MAX_ENTRIES 65536
/* Deepest nesting of sub-messages and groups accepted. */
#define PODRES_MAX_DEPTH 16

/*
 * One device of one container: a ContainerDevices entry with N device ids gives N entries.
 * For GetAllocatableResources the namespace, pod and container are "".
 */
struct podres_alloc {
    const char *namespace;
    const char *pod;
    const char *container;
    const char *resource;  /* e.g. "amd.com/gpu", "amd.com/cpx_nps4" */
    const char *device_id; /* PCI BDF "0000:05:00.0" (GPU or partition 0) or "amdgpu_xcp_<N>" */
};

/* One DRA claim resource (ContainerResources.dynamic_resources[].claim_resources[]). */
struct podres_claim {
    const char *namespace;
    const char *pod;
    const char *container;
    const char *claim_namespace;
    const char *claim_name;
    const char *driver_name; /* e.g. "gpu.amd.com" */
    const char *pool_name;
    const char *device_name; /* e.g. "gpu-8-136" */
};

/*
 * A decoded response. Zero-initialise or let a podres_ function fill it; release with
 * podres_free(). Strings are owned by the list and shared between entries of the same pod,
 * container or resource; never NULL (absent fields are "").
 */
struct podres_list {
    struct podres_alloc *allocs;
    size_t n_allocs;
    struct podres_claim *claims;
    size_t n_claims;
    /* private */
    size_t cap_allocs, cap_claims;
    char **strs;
    size_t n_strs, cap_strs;
};

/*
 * Call /v1.PodResourcesLister/List on the Unix socket `socket_path` with a deadline of `timeout`
 * seconds (sent as grpc-timeout and enforced locally). 0 and a filled `out`, or -1 with `err`
 * set (connect failure, timeout, HTTP or gRPC error status, malformed response) and `out`
 * empty. A gRPC error reads "pod-resources 'List' failed: grpc-status 12 (UNIMPLEMENTED): ...".
 */
int podres_list(const char *socket_path, double timeout, struct podres_list *out, char *err,
                size_t errlen);

/* As podres_list for /v1.PodResourcesLister/GetAllocatableResources: devices only. */
int podres_allocatable(const char *socket_path, double timeout, struct podres_list *out, char *err,
                       size_t errlen);

/*
 * Decode a serialized ListPodResourcesResponse / AllocatableResourcesResponse (the message
 * bytes, without the gRPC prefix). Pure: no I/O. 0, or -1 with `err` and `out` left empty.
 */
int podres_decode_list(const uint8_t *buf, size_t len, struct podres_list *out, char *err,
                       size_t errlen);
int podres_decode_allocatable(const uint8_t *buf, size_t len, struct podres_list *out, char *err,
                              size_t errlen);

/*
 * Keep only allocations whose resource name starts with `prefix` (e.g. "amd.com/"), in order.
 * DRA claims are left alone: their driver is named differently ("gpu.amd.com").
 */
void podres_filter_prefix(struct podres_list *list, const char *prefix);

/* Release everything `list` owns and zero it; safe on a zeroed or already freed list. */
void podres_free(struct podres_list *list);

#endif
