/*
 * gRPC client for unary calls with an empty request to a server on a Unix socket (the
 * kubelet's pod-resources API): HTTP/2 with prior knowledge and no TLS over libcurl, the
 * grpc-status and grpc-message trailers, and the one length-prefixed message of the answer.
 *
 * A call blocks for up to its timeout. libcurl must have been initialised with
 * curl_global_init() before threads start.
 */
#ifndef GPURECLAIM_GRPC_H
#define GPURECLAIM_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* One call: set the inputs, zero the rest; release with grpc_call_free(). */
struct grpc_call {
    const char *socket_path; /* the server's Unix socket */
    const char *service;     /* "v1.PodResourcesLister" */
    const char *method;      /* "List" */
    const char *name;        /* names the server in messages: "pod-resources" */
    double timeout;          /* seconds, sent as grpc-timeout and enforced locally */
    uint32_t max_message;    /* largest message accepted */
    /* the answer */
    struct sbuf body;
    bool too_big;
    long grpc_status; /* -1 until seen */
    bool status_after_body;
    char grpc_message[256];
    char content_type[128];
};

/*
 * Call /SERVICE/METHOD. 0 with the answer's message in *msg / *msglen (pointing into
 * c->body), or -1 with `err` set: connect failure, timeout, HTTP or gRPC error status, an
 * answer that is not one whole message. A gRPC error reads "<name> '<method>' failed:
 * grpc-status 12 (UNIMPLEMENTED): ...".
 */
int grpc_unary(struct grpc_call *c, const uint8_t **msg, size_t *msglen, char *err, size_t errlen);
void grpc_call_free(struct grpc_call *c);

/*
 * The one Length-Prefixed-Message of a unary answer's body: 0 with *msg / *msglen, or -1
 * with `err` (compressed, longer than `max`, truncated, or bytes after it).
 */
int grpc_unframe(const uint8_t *buf, size_t len, uint32_t max, const uint8_t **msg, size_t *msglen,
                 char *err, size_t errlen);

#endif
