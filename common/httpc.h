/*
 * A small blocking HTTP client over libcurl, shared by the Prometheus client (promq.c) and
 * the Kubernetes and Docker/Podman clients.
 *
 * One call is one request on a fresh easy handle, so the module holds no per-connection
 * state and may be used from several threads at once; curl_global_init runs exactly once
 * (pthread_once). Redirects are never followed (an API that redirects is misconfigured and
 * must not receive our bearer token elsewhere). Every transport failure (connect, TLS,
 * timeout, oversized body) is returned as -1 with a message naming the URL or socket; any
 * HTTP status, 4xx and 5xx included, is a successful transfer that the caller interprets.
 */
#ifndef GPURECLAIM_HTTPC_H
#define GPURECLAIM_HTTPC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* Default cap on a response body; larger answers fail rather than exhaust memory. */
#define HTTPC_DEFAULT_MAX_BODY (64u << 20)

struct httpc_req {
    const char *method;         /* "GET" when NULL; "POST", "DELETE", "PATCH", ... */
    const char *url;            /* with a unix socket, the host part is only sent as Host: */
    const char *unix_socket;    /* CURLOPT_UNIX_SOCKET_PATH, or NULL for TCP */
    const char *const *headers; /* "Name: value" lines, `nheaders` of them */
    size_t nheaders;
    const char *body; /* request body (may contain NULs), or NULL */
    size_t body_len;
    double timeout;           /* seconds for the whole request; 0 = 30 s */
    double connect_timeout;   /* seconds; 0 = min(timeout, 10 s) */
    const char *ca_file;      /* CA bundle for https, or NULL for the system store */
    bool insecure;            /* skip TLS peer and host verification */
    const char *bearer_token; /* sent as "Authorization: Bearer ..." when non-NULL */
    const char *basic_user;   /* basic auth when non-NULL, with basic_pass ("" if NULL) */
    const char *basic_pass;
    const char *const *want_headers; /* response header names to keep (case-insensitive) */
    size_t nwant_headers;
    size_t max_body; /* 0 = HTTPC_DEFAULT_MAX_BODY */
    /*
     * When set, the body goes to `sink` as it arrives instead of into resp->body, and
     * max_body does not apply (the sink bounds what it keeps). A non-zero return stops the
     * transfer: httpc_do then returns 0 with resp->stopped set and the status received.
     */
    int (*sink)(void *arg, const char *data, size_t len);
    void *sink_arg;
    /* When non-NULL: the transfer is abandoned (-1, "cancelled") soon after *cancel becomes
       true (libcurl checks about once a second), so a shutdown need not wait a timeout out. */
    const atomic_bool *cancel;
};

struct httpc_header {
    char *name; /* as requested in want_headers */
    char *value;
};

struct httpc_resp {
    long status;                  /* HTTP status of the final response */
    struct sbuf body;             /* NUL-terminated, len bytes */
    struct httpc_header *headers; /* only those named in want_headers, in arrival order */
    size_t nheaders;
    double elapsed; /* seconds the request took */
    bool stopped;   /* the sink stopped the transfer before the body ended */
};

/*
 * Perform one request. `resp` is overwritten (zero-initialise it before the first call,
 * free it with httpc_resp_free). Returns 0 when an HTTP response was received, whatever its
 * status, or -1 with a message in err: "cannot connect to 'URL': Connection refused",
 * "timeout after 2.0 s requesting 'URL'", ...
 */
int httpc_do(const struct httpc_req *req, struct httpc_resp *resp, char *err, size_t errlen);
void httpc_resp_free(struct httpc_resp *resp);
/* Value of the first kept response header `name` (case-insensitive), or NULL. */
const char *httpc_resp_header(const struct httpc_resp *resp, const char *name);

/* Requests attempted and failed (-1) by this process, for metrics. */
unsigned long httpc_requests(void);
unsigned long httpc_failures(void);

/* Append `s` percent-encoded for an application/x-www-form-urlencoded body or a query. */
void httpc_urlencode(struct sbuf *b, const char *s);

#endif
