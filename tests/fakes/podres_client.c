/*
 * Command-line front end of exporter/podres.c for the end-to-end test: calls the kubelet
 * pod-resources API on a Unix socket and prints one line per allocation, so that a shell test
 * can diff what the C client decoded from a real gRPC server against an expected mapping.
 *
 *   podres_client [--timeout=SECONDS] [--prefix=amd.com/] [--allocatable] [--debug] SOCKET
 *
 * List prints "alloc NAMESPACE POD CONTAINER RESOURCE DEVICE_ID" per device and
 * "claim NAMESPACE POD CONTAINER CLAIM_NAMESPACE/CLAIM_NAME DRIVER POOL DEVICE" per DRA claim
 * resource; --allocatable prints "device RESOURCE DEVICE_ID". Empty strings print as "-".
 * On failure the error goes to stderr and the exit status is 1.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "podres.h"
#include "util.h"

static const char *show(const char *s)
{
    return *s ? s : "-";
}

int main(int argc, char **argv)
{
    const char *socket_path = NULL, *prefix = NULL;
    double timeout = 5;
    int allocatable = 0;
    struct podres_list list;
    char err[512];
    int rc;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (str_has_prefix(a, "--timeout=")) {
            if (parse_double(a + 10, &timeout) < 0) {
                fprintf(stderr, "podres_client: invalid timeout '%s'\n", a + 10);
                return 2;
            }
        } else if (str_has_prefix(a, "--prefix=")) {
            prefix = a + 9;
        } else if (!strcmp(a, "--allocatable")) {
            allocatable = 1;
        } else if (!strcmp(a, "--debug")) {
            log_set_level("debug");
        } else if (a[0] == '-' || socket_path) {
            fprintf(stderr, "usage: podres_client [--timeout=S] [--prefix=P] [--allocatable] "
                            "[--debug] SOCKET\n");
            return 2;
        } else {
            socket_path = a;
        }
    }
    if (!socket_path) {
        fprintf(stderr, "podres_client: missing SOCKET\n");
        return 2;
    }

    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (allocatable)
        rc = podres_allocatable(socket_path, timeout, &list, err, sizeof(err));
    else
        rc = podres_list(socket_path, timeout, &list, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "podres_client: %s\n", err);
        curl_global_cleanup();
        return 1;
    }
    if (prefix)
        podres_filter_prefix(&list, prefix);
    for (size_t i = 0; i < list.n_allocs; i++) {
        const struct podres_alloc *a = &list.allocs[i];
        if (allocatable)
            printf("device %s %s\n", show(a->resource), show(a->device_id));
        else
            printf("alloc %s %s %s %s %s\n", show(a->namespace), show(a->pod), show(a->container),
                   show(a->resource), show(a->device_id));
    }
    for (size_t i = 0; i < list.n_claims; i++) {
        const struct podres_claim *c = &list.claims[i];
        printf("claim %s %s %s %s/%s %s %s %s\n", show(c->namespace), show(c->pod),
               show(c->container), show(c->claim_namespace), show(c->claim_name),
               show(c->driver_name), show(c->pool_name), show(c->device_name));
    }
    podres_free(&list);
    curl_global_cleanup();
    return 0;
}
