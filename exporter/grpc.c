/*
 * gRPC over HTTP/2 with libcurl on a Unix socket, for unary calls with an empty request: the
 * kubelet's pod-resources API (podres.c) is the one server. Rather than a gRPC C runtime,
 * the largest dependency the exporter would have for two calls, libcurl speaks HTTP/2 with
 * prior knowledge (no TLS), the status comes from the grpc-status header or trailer and the
 * answer is checked to be exactly one uncompressed length-prefixed message.
 */
#include "grpc.h"

#include <curl/curl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "log.h"
#include "util.h"

static void grpc_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void grpc_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/*
 * A unary response body is exactly one Length-Prefixed-Message: compressed flag 0 (we send no
 * grpc-accept-encoding, so a compressed answer is a server bug), a 4-byte big-endian length,
 * the message. Anything before a complete message or after it is an error.
 */
int grpc_unframe(const uint8_t *buf, size_t len, uint32_t max, const uint8_t **msg, size_t *msglen,
                 char *err, size_t errlen)
{
    uint32_t n;

    if (len == 0) {
        grpc_err(err, errlen, "response has no gRPC message");
        return -1;
    }
    if (len < 5) {
        grpc_err(err, errlen, "truncated gRPC message prefix (%zu of 5 bytes)", len);
        return -1;
    }
    if (buf[0] != 0) {
        grpc_err(err, errlen, "gRPC message has compressed flag %u; compression not supported",
                 buf[0]);
        return -1;
    }
    n = (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 | buf[4];
    if (n > max) {
        grpc_err(err, errlen, "gRPC message of %u bytes exceeds the limit of %u", n, max);
        return -1;
    }
    if (len - 5 < n) {
        grpc_err(err, errlen, "truncated gRPC message (%zu of %u bytes)", len - 5, n);
        return -1;
    }
    if (len - 5 > n) {
        grpc_err(err, errlen, "%zu unexpected bytes after the gRPC message", len - 5 - n);
        return -1;
    }
    *msg = buf + 5;
    *msglen = n;
    return 0;
}

/* ---- transport ---------------------------------------------------------------------------- */

static const char *const grpc_codes[] = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

/* Decode grpc-message (percent-encoded UTF-8); control characters become '?'. */
static void pct_decode(char *dst, size_t cap, const char *src, size_t n)
{
    size_t o = 0;

    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c == '%' && i + 2 < n && hex_value((unsigned char)src[i + 1]) >= 0 &&
            hex_value((unsigned char)src[i + 2]) >= 0) {
            c = (unsigned char)(hex_value((unsigned char)src[i + 1]) << 4 |
                                hex_value((unsigned char)src[i + 2]));
            i += 2;
        }
        dst[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    dst[o] = '\0';
}

static void copy_value(char *dst, size_t cap, const char *v, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

/*
 * libcurl calls this for every header line of the response, and (verified against the
 * @grpc/grpc-js test server with libcurl 7.88.1 and nghttp2 1.52) also for the HTTP/2
 * trailers, after the body: grpc-status arrives here whether the server sends it in the
 * trailers (normal answers) or in the only HEADERS frame (Trailers-Only error answers).
 */
static size_t on_header(char *line, size_t size, size_t nmemb, void *arg)
{
    struct grpc_call *c = arg;
    size_t len = size * nmemb, nlen, vlen;
    const char *colon = memchr(line, ':', len), *v;

    if (!colon || colon == line)
        return len;
    nlen = (size_t)(colon - line);
    v = colon + 1;
    vlen = len - nlen - 1;
    while (vlen && (*v == ' ' || *v == '\t'))
        v++, vlen--;
    while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
        vlen--;

    if (nlen == 11 && !strncasecmp(line, "grpc-status", 11)) {
        char num[16];
        uint64_t st;
        copy_value(num, sizeof(num), v, vlen);
        /* A status we cannot read is reported as UNKNOWN, as gRPC clients do. */
        c->grpc_status = parse_u64(num, &st) == 0 && st <= INT32_MAX ? (long)st : 2;
        c->status_after_body = c->body.len > 0;
    } else if (nlen == 12 && !strncasecmp(line, "grpc-message", 12)) {
        pct_decode(c->grpc_message, sizeof(c->grpc_message), v, vlen);
    } else if (nlen == 12 && !strncasecmp(line, "content-type", 12)) {
        copy_value(c->content_type, sizeof(c->content_type), v, vlen);
    }
    return len;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    struct grpc_call *c = arg;
    size_t len = size * nmemb;

    if (c->body.len + len > (size_t)c->max_message + 5) {
        c->too_big = true;
        return 0; /* makes curl fail with CURLE_WRITE_ERROR */
    }
    sbuf_add(&c->body, data, len);
    return len;
}

static bool grpc_content_type(const char *ct)
{
    size_t n = strlen("application/grpc");

    return !strncasecmp(ct, "application/grpc", n) &&
           (ct[n] == '\0' || ct[n] == '+' || ct[n] == ';');
}

int grpc_unary(struct grpc_call *c, const uint8_t **msg, size_t *msglen, char *err, size_t errlen)
{
    const char *socket_path = c->socket_path, *method = c->method, *api = c->name;
    double timeout = c->timeout;
    static const char empty_request[5] = {0};
    char url[256], tmo[48], curl_err[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs = NULL;
    CURL *h;
    CURLcode rc;
    long http = 0, os_errno = 0;
    int ret = -1;

    c->grpc_status = -1; /* until a header or trailer carries it */
    if (!socket_path || !*socket_path ||
        strlen(socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        grpc_err(err, errlen, "invalid %s socket path '%s'", api, socket_path ? socket_path : "");
        return -1;
    }
    if (!(timeout > 0 && timeout <= 86400)) {
        grpc_err(err, errlen, "invalid %s timeout %g", api, timeout);
        return -1;
    }
    const curl_version_info_data *ver = curl_version_info(CURLVERSION_NOW);
    if (!(ver->features & CURL_VERSION_HTTP2) || !(ver->features & CURL_VERSION_UNIX_SOCKETS)) {
        grpc_err(err, errlen, "libcurl %s lacks HTTP/2 or Unix socket support", ver->version);
        return -1;
    }
    h = curl_easy_init();
    if (!h) {
        grpc_err(err, errlen, "cannot initialise libcurl");
        return -1;
    }

    long ms = (long)ceil(timeout * 1000);
    snprintf(url, sizeof(url), "http://localhost/%s/%s", c->service, method);
    /* grpc-timeout allows at most 8 digits; milliseconds cover 27 hours. */
    snprintf(tmo, sizeof(tmo), "grpc-timeout: %ldm", ms);
    hdrs = curl_slist_append(hdrs, "content-type: application/grpc");
    hdrs = curl_slist_append(hdrs, "te: trailers");
    hdrs = curl_slist_append(hdrs, tmo);
    hdrs = curl_slist_append(hdrs, "Accept:");
    if (!hdrs) {
        grpc_err(err, errlen, "out of memory building request headers");
        goto out;
    }

    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, socket_path);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, empty_request);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)sizeof(empty_request));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "gpureclaim");
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, c);

    rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    if (rc == CURLE_COULDNT_CONNECT) {
        char eb[128];
        grpc_err(err, errlen, "cannot connect to %s socket '%s': %s", api, socket_path,
                 os_errno ? strerror_r((int)os_errno, eb, sizeof(eb)) : curl_err);
        goto out;
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        grpc_err(err, errlen, "%s '%s' timed out after %g s", api, method, timeout);
        goto out;
    }
    if (c->too_big) {
        grpc_err(err, errlen, "%s '%s' answer exceeds %u bytes", api, method, c->max_message);
        goto out;
    }
    if (rc != CURLE_OK) {
        grpc_err(err, errlen, "%s '%s' request on '%s' failed: %s", api, method, socket_path,
                 *curl_err ? curl_err : curl_easy_strerror(rc));
        goto out;
    }
    if (c->grpc_status > 0) {
        const char *name = (size_t)c->grpc_status < ARRAY_LEN(grpc_codes)
                               ? grpc_codes[c->grpc_status]
                               : "unknown code";
        grpc_err(err, errlen, "%s '%s' failed: grpc-status %ld (%s)%s%s", api, method,
                 c->grpc_status, name, *c->grpc_message ? ": " : "", c->grpc_message);
        goto out;
    }
    if (http != 200) {
        grpc_err(err, errlen, "%s '%s' failed: HTTP status %ld", api, method, http);
        goto out;
    }
    if (!grpc_content_type(c->content_type)) {
        grpc_err(err, errlen, "%s '%s' answered content-type '%s', not gRPC", api, method,
                 c->content_type);
        goto out;
    }
    char why[160];
    if (grpc_unframe((const uint8_t *)c->body.buf, c->body.len, c->max_message, msg, msglen, why,
                     sizeof(why)) < 0) {
        grpc_err(err, errlen, "%s '%s' answer: %s", api, method, why);
        goto out;
    }
    /*
     * No grpc-status at all: libcurl 7.88 does deliver trailers (see on_header), so this is a
     * server or proxy that dropped them. The gRPC spec asks clients to synthesize a status;
     * we accept the answer because the length prefix proves the one message of a unary call
     * arrived whole, which is all a status of OK would add, and mapping data that is complete
     * is better than none. Anything incomplete was rejected by grpc_unframe above.
     */
    if (c->grpc_status < 0)
        log_debug("%s '%s' answer has no grpc-status; accepting its complete message", api, method);
    ret = 0;
out:
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    return ret;
}

void grpc_call_free(struct grpc_call *c)
{
    sbuf_free(&c->body);
}
