/*
 * Raw-sample reads of a selector (rawread.h): the path choice, VictoriaMetrics' export and
 * Prometheus' streamed remote read, each answer parsed as it arrives (vmexport.h,
 * remoteread.h) and never trusted beyond what a complete, well-formed answer says.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "httpc.h"
#include "log.h"
#include "match.h"
#include "rawread.h"
#include "remoteread.h"
#include "util.h"
#include "vmexport.h"

int rawread_path_parse(const char *name, enum promq_read_path *out)
{
    static const char *const names[] = {
        [PROMQ_READ_AUTO] = "auto",
        [PROMQ_READ_REMOTE_READ] = "remote-read",
        [PROMQ_READ_EXPORT] = "export",
        [PROMQ_READ_PROMQL] = "promql",
    };
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (enum promq_read_path)i;
            return 0;
        }
    }
    return -1;
}

const char *rawread_path_label(enum promq_read_path p)
{
    switch (p) {
    case PROMQ_READ_REMOTE_READ:
        return "remote_read";
    case PROMQ_READ_EXPORT:
        return "export";
    default:
        return "promql";
    }
}

int rawread_choose(struct promq *q, enum promq_read_path *path, bool *probe, char *err,
                   size_t errlen)
{
    *probe = false;
    enum promq_read_path forced = promq_read_path(q);
    if (forced != PROMQ_READ_AUTO) {
        *path = forced;
        return 0;
    }
    /* Both answers are kept on the client (promq.h): asked once per server. */
    int vm = promq_is_victoria(q, err, errlen);
    if (vm < 0)
        return -1;
    int rr = promq_remote_read(q);
    if (vm == 1) {
        *path = PROMQ_READ_EXPORT;
    } else if (rr != 0) {
        *path = PROMQ_READ_REMOTE_READ;
        *probe = rr < 0;
    } else {
        *path = PROMQ_READ_PROMQL;
    }
    return 0;
}

/* A sink that feeds a raw reader and keeps the first bytes for an error message. */
struct rawread_sink {
    struct vmx *vmx;      /* export, or */
    struct rr_stream *rr; /* remote read */
    char head[200];
    size_t nhead;
    size_t bytes;
    char err[256];
    int rc;
};

static int rawread_sink(void *arg, const char *data, size_t len)
{
    struct rawread_sink *k = arg;
    size_t room = sizeof(k->head) - 1 - k->nhead;
    size_t n = len < room ? len : room;
    memcpy(k->head + k->nhead, data, n);
    k->nhead += n;
    k->head[k->nhead] = '\0';
    k->bytes += len;
    if (k->rc == 0 && k->vmx)
        k->rc = vmx_feed(k->vmx, data, len, k->err, sizeof(k->err));
    else if (k->rc == 0)
        k->rc = rr_stream_feed(k->rr, data, len, k->err, sizeof(k->err));
    return k->rc;
}

/* The first line of an error body, for a message. */
static void rawread_head_line(char *head)
{
    for (char *p = head; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = '\0';
}

/*
 * The raw samples of `sel` over [start, end] from VictoriaMetrics' /api/v1/export, which
 * takes `match[]`, `start` and `end` (seconds) as form fields like its query API
 * (VictoriaMetrics app/vmselect/prometheus/prometheus.go, ExportHandler).
 */
static int rawread_export(struct promq *q, const char *sel, double start, double end,
                          struct matrix *out, size_t *bytes, char *err, size_t errlen)
{
    struct sbuf form = {0};
    char num[64];
    sbuf_puts(&form, "match%5B%5D=");
    httpc_urlencode(&form, sel);
    snprintf(num, sizeof(num), "&start=%.3f&end=%.3f", start, end);
    sbuf_puts(&form, num);
    static const char *const headers[] = {
        "Content-Type: application/x-www-form-urlencoded",
        "Accept: application/json",
    };
    struct rawread_sink k = {.vmx = vmx_new(promq_max_answer(q))};
    long status = 0;
    int ret = promq_post(q, "/api/v1/export", headers, ARRAY_LEN(headers), form.buf, form.len,
                         rawread_sink, &k, &status, NULL, 0, err, errlen);
    *out = (struct matrix){0};
    *bytes = k.bytes;
    if (ret == 0 && status != 200) {
        rawread_head_line(k.head);
        snprintf(err, errlen, "export: HTTP %ld from '/api/v1/export': %.120s", status, k.head);
        ret = -1;
    } else if (ret == 0 && k.rc != 0) {
        snprintf(err, errlen, "export: %s", k.err);
        ret = -1;
    } else if (ret == 0 && vmx_finish(k.vmx, out, k.err, sizeof(k.err)) < 0) {
        snprintf(err, errlen, "export: %s", k.err);
        ret = -1;
    }
    if (ret < 0 && status)
        promq_count_failure(q);
    vmx_free(k.vmx);
    sbuf_free(&form);
    return ret;
}

/* The caller's series callback, and what it was handed, behind rr_stream_on_series. */
struct rawread_each {
    rawread_series_fn fn;
    void *arg;
    size_t samples;
};

static int rawread_on_series(void *arg, size_t query, const struct series *s, char *err,
                             size_t errlen)
{
    (void)query;
    struct rawread_each *e = arg;
    e->samples += s->n;
    return e->fn(e->arg, s, err, errlen);
}

/*
 * The raw samples of `sel` over [start, end] by Prometheus remote read (POST /api/v1/read, a
 * snappy-compressed ReadRequest accepting only STREAMED_XOR_CHUNKS; prometheus/prometheus
 * storage/remote/codec.go and web/api/v1/api.go, remoteRead). An answer of 404, 405 or 501,
 * or a 200 that is not the streamed type (a server too old to stream), means the server
 * does not offer it: RAWREAD_ABSENT, and the caller uses PromQL. Anything else that is not
 * a complete stream is an error. With `each`, each series goes to its callback as soon as it
 * is complete and *out stays empty.
 */
static enum rawread_rc rawread_remote(struct promq *q, const char *sel, double start, double end,
                                      struct rawread_each *each, struct matrix *out, size_t *bytes,
                                      char *err, size_t errlen)
{
    struct matcher *ms = NULL;
    size_t nm = 0;
    *out = (struct matrix){0};
    if (match_parse_selector(sel, &ms, &nm, err, errlen) < 0)
        return RAWREAD_ERROR;
    struct rr_matcher *rm = xcalloc(nm, sizeof(*rm));
    static const enum rr_match_type types[] = {
        [MATCH_EQ] = RR_EQ, [MATCH_NE] = RR_NEQ, [MATCH_RE] = RR_RE, [MATCH_NRE] = RR_NRE};
    enum rawread_rc ret = RAWREAD_ERROR;
    for (size_t i = 0; i < nm; i++) {
        if (strlen(ms[i].value) != ms[i].value_len) {
            snprintf(err, errlen, "label '%s' of the selector holds a NUL byte", ms[i].name);
            goto out;
        }
        rm[i] = (struct rr_matcher){types[ms[i].op], ms[i].name, ms[i].value};
    }
    int64_t s_ms = llround(start * 1000.0), e_ms = llround(end * 1000.0);
    struct rr_query rq = {.start_ms = s_ms, .end_ms = e_ms, .m = rm, .nm = nm};
    char *body = NULL;
    size_t blen = 0;
    if (rr_encode_request(&rq, 1, &body, &blen, err, errlen) < 0)
        goto out;
    static const char *const headers[] = {
        "Content-Type: " RR_CONTENT_TYPE,
        "Content-Encoding: " RR_CONTENT_ENCODING,
        RR_VERSION_HEADER,
    };
    size_t cap = promq_max_answer(q);
    struct rawread_sink k = {.rr = rr_stream_new(1, cap, cap)};
    rr_stream_clip(k.rr, 0, s_ms, e_ms);
    if (each)
        rr_stream_on_series(k.rr, rawread_on_series, each);
    long status = 0;
    char ctype[128] = "";
    int rc = promq_post(q, "/api/v1/read", headers, ARRAY_LEN(headers), body, blen, rawread_sink,
                        &k, &status, ctype, sizeof(ctype), err, errlen);
    free(body);
    *bytes = k.bytes;
    if (rc < 0) {
        ret = RAWREAD_ERROR;
    } else if (status == 404 || status == 405 || status == 501 ||
               (status == 200 &&
                strncmp(ctype, RR_STREAM_CONTENT_TYPE, strlen(RR_STREAM_CONTENT_TYPE)) != 0)) {
        snprintf(err, errlen, "HTTP %ld%s%s", status, ctype[0] ? ", " : "", ctype);
        ret = RAWREAD_ABSENT;
    } else if (status != 200) {
        rawread_head_line(k.head);
        snprintf(err, errlen, "remote read: HTTP %ld from '/api/v1/read': %.120s", status, k.head);
        promq_count_failure(q);
    } else if (k.rc != 0) {
        snprintf(err, errlen, "remote read: %s", k.err);
        promq_count_failure(q);
    } else if (rr_stream_finish(k.rr, out, k.err, sizeof(k.err)) < 0) {
        snprintf(err, errlen, "remote read: %s", k.err);
        promq_count_failure(q);
    } else {
        ret = RAWREAD_OK;
    }
    rr_stream_free(k.rr);
out:
    free(rm);
    match_free_all(ms, nm);
    return ret;
}

static size_t rawread_count(const struct matrix *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        n += m->s[i].n;
    return n;
}

enum rawread_rc rawread_read(struct promq *q, enum promq_read_path path, bool probe,
                             const char *sel, double start, double end, rawread_series_fn fn,
                             void *arg, struct matrix *out, size_t *samples, size_t *bytes,
                             char *err, size_t errlen)
{
    size_t nbytes = 0, nsamples = 0;
    enum rawread_rc got;
    if (path == PROMQ_READ_EXPORT) {
        got = rawread_export(q, sel, start, end, out, &nbytes, err, errlen) == 0 ? RAWREAD_OK
                                                                                 : RAWREAD_ERROR;
        nsamples = rawread_count(out);
        /* Lines of one series need not be consecutive: handed over once the answer is whole. */
        for (size_t i = 0; got == RAWREAD_OK && fn && i < out->n; i++) {
            char e[256] = "";
            if (fn(arg, &out->s[i], e, sizeof(e)) < 0) {
                snprintf(err, errlen, "export: %s", e);
                got = RAWREAD_ERROR;
            }
        }
        if (fn)
            matrix_free(out);
    } else {
        struct rawread_each each = {.fn = fn, .arg = arg};
        got = rawread_remote(q, sel, start, end, fn ? &each : NULL, out, &nbytes, err, errlen);
        nsamples = fn ? each.samples : rawread_count(out);
        if (got == RAWREAD_ABSENT && probe) {
            /* Asked once per server: the answer says it has no (streamed) remote read. */
            log_debug("'%s' does not offer streamed remote read (%s): rules with a selector as "
                      "activity use the PromQL plan",
                      promq_url(q), err);
            promq_set_remote_read(q, 0);
        } else if (got == RAWREAD_ABSENT) {
            snprintf(err, errlen, "the server does not offer streamed remote read");
            promq_count_failure(q);
            got = RAWREAD_ERROR;
        } else if (got == RAWREAD_OK && probe) {
            promq_set_remote_read(q, 1);
        }
    }
    if (samples)
        *samples = nsamples;
    if (bytes)
        *bytes = nbytes;
    return got;
}
