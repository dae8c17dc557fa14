/*
 * A fake Prometheus for the enforcer's tests: serves /api/v1/query and /api/v1/query_range
 * on 127.0.0.1 with one canned behaviour per run, including the faults a real deployment
 * shows (error envelopes with their real status codes, a proxy's HTML error page, invalid or
 * truncated JSON, a slow server, a partial answer with warnings).
 *
 * usage: fake_prom [-E SUBSTR] [-A SUBSTR FILE] [-R FILE] [-H SECONDS] PORT MODE [ARGS]
 *   ok FILE [INSTANT_FILE]  answer FILE for every query (INSTANT_FILE for /api/v1/query)
 *   status CODE             that HTTP status with an HTML body, on every path (a proxy)
 *   noui                    500 "Error opening React index.html: ..." on every path, as a
 *                           Prometheus 3 built without its web UI answers /flags
 *   error TYPE MSG          the error envelope with the status Prometheus uses for TYPE
 *   garbage                 200 with a body that is not JSON
 *   slow SECONDS            sleep, then an empty result
 *   partial                 200 with a matrix and "warnings"
 *   vmpartial               200 with a matrix (or vector) and "isPartial": true, as a
 *                           VictoriaMetrics cluster's vmselect answers with a vmstorage down
 *   truncated               200 with a JSON document cut in the middle
 *   -E SUBSTR               any query containing SUBSTR gets a bad_data error instead
 *   -R FILE                 answer POST /api/v1/read with FILE's bytes as a streamed
 *                           remote-read answer (a capture, or a damaged one)
 *   -H SECONDS              with -R: hold the n-th remote read until the n-th instant query
 *                           (/api/v1/query) has arrived, at most SECONDS, and log which came
 *                           ("read held: instant query arrived" or "read held: timed out"):
 *                           a client that asks the two concurrently is told from one that
 *                           asks them in turn
 *   -A SUBSTR FILE          ok mode: any query containing SUBSTR gets FILE instead (e.g. the
 *                           enforcer's coverage queries, 'present_over_time' and
 *                           'vector(1)'); up to 4, the first match wins
 *
 * In ok mode, the enforcer's raw-coverage and non-finite range queries that no -A matches are
 * answered as Prometheus would if FILE's points were the raw samples: the coverage count and
 * the sub-point count are FILE with every value replaced by "1" (each step fully covered
 * where FILE has a point); the activity query, whose non-finite check
 * `(sum_over_time(X) * 0 != 0) or ...` finds nothing in finite points, gets FILE.
 *
 * PORT 0 picks a free port; "listening on PORT" goes to stdout once the socket is bound.
 * Every request is logged to stderr as "request METHOD PATH BODY" (plus " authorization=..."
 * when that header was sent; a binary body as "(N bytes of binary)") so tests can count
 * requests and check credentials. Other paths (/flags, /api/v1/read) get 404, as from a
 * server that is neither VictoriaMetrics nor offers remote read.
 * SIGTERM or SIGINT stops it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakehttp.h"
#include "util.h"

enum fp_mode {
    FP_OK,
    FP_STATUS,
    FP_NOUI,
    FP_ERROR,
    FP_GARBAGE,
    FP_SLOW,
    FP_PARTIAL,
    FP_VMPARTIAL,
    FP_TRUNCATED
};

static enum fp_mode fp_mode;
static char *fp_body, *fp_instant_body; /* ok mode */
static char *fp_ones_body;              /* ok mode: fp_body with every value "1" */
static unsigned fp_status = 200;        /* status mode, error mode */
static const char *fp_error_type, *fp_error_msg;
static double fp_slow;
static uint64_t fp_port;
static const char *fp_error_on; /* -E */
#define FP_MAX_ALT 4
static const char *fp_alt_on[FP_MAX_ALT]; /* -A, in order */
static char *fp_alt_body[FP_MAX_ALT];
static size_t fp_nalt;
static pthread_mutex_t fp_log_lock = PTHREAD_MUTEX_INITIALIZER;
static char *fp_rr_body; /* -R: the remote-read answer, binary */
static size_t fp_rr_len;
static double fp_hold; /* -H */
static pthread_mutex_t fp_hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fp_hold_cond = PTHREAD_COND_INITIALIZER;
static unsigned fp_instants, fp_held; /* instant queries arrived, remote reads held */

/* -H: wait for an instant query that arrived after the last read held, at most fp_hold
   seconds: each read is paired with its own (one cycle's read and allocation). */
static void fp_hold_read(void)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)fp_hold;
    pthread_mutex_lock(&fp_hold_lock);
    int rc = 0;
    while (fp_instants <= fp_held && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&fp_hold_cond, &fp_hold_lock, &until);
    bool seen = fp_instants > fp_held;
    fp_held++;
    pthread_mutex_unlock(&fp_hold_lock);
    pthread_mutex_lock(&fp_log_lock);
    fprintf(stderr, "read held: %s\n", seen ? "instant query arrived" : "timed out");
    fflush(stderr);
    pthread_mutex_unlock(&fp_log_lock);
}

static const char fp_empty_matrix[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}";
static const char fp_empty_vector[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}";
static const char fp_partial[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
    "{\"pod\":\"a\"},\"values\":[[1700000000,\"0\"]]}]},\"warnings\":[\"remote read from "
    "'store-1' failed: connection refused\"]}";
/* app/vmselect/prometheus/query_range_response.qtpl (v1.150.0-cluster): isPartial beside status. */
static const char fp_vmpartial[] =
    "{\"status\":\"success\",\"isPartial\":true,\"data\":{\"resultType\":\"matrix\",\"result\":"
    "[{\"metric\":{\"pod\":\"a\"},\"values\":[[1700000000,\"0\"]]}]}}";
static const char fp_vmpartial_vector[] =
    "{\"status\":\"success\",\"isPartial\":true,\"data\":{\"resultType\":\"vector\",\"result\":"
    "[{\"metric\":{\"pod\":\"a\"},\"value\":[1700000000,\"1\"]}]}}";
static const char fp_truncated[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
    "{\"pod\":\"a\"},\"values\":[[1700000000,\"0.5\"],[17000";

/* Status codes of respondError in prometheus web/api/v1/api.go. */
static unsigned fp_error_status(const char *type)
{
    static const struct {
        const char *type;
        unsigned status;
    } map[] = {
        {"bad_data", 400}, {"execution", 422}, {"canceled", 503},    {"timeout", 503},
        {"internal", 500}, {"not_found", 404}, {"unavailable", 503},
    };
    for (size_t i = 0; i < ARRAY_LEN(map); i++)
        if (strcmp(map[i].type, type) == 0)
            return map[i].status;
    return 500;
}

static void fp_json_string(struct sbuf *b, const char *s)
{
    sbuf_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            sbuf_printf(b, "\\%c", c);
        else if (c < 0x20)
            sbuf_printf(b, "\\u%04x", c);
        else
            sbuf_putc(b, (char)c);
    }
    sbuf_putc(b, '"');
}

static char *fp_error_body(const char *type, const char *msg)
{
    struct sbuf b = {0};
    sbuf_puts(&b, "{\"status\":\"error\",\"errorType\":");
    fp_json_string(&b, type);
    sbuf_puts(&b, ",\"error\":");
    fp_json_string(&b, msg);
    sbuf_puts(&b, "}");
    return sbuf_take(&b);
}

/* The decoded value of `name` in a form-urlencoded body; caller frees; NULL if absent. */
static char *fp_form_value(const char *body, const char *name)
{
    size_t nlen = strlen(name);
    for (const char *p = body; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        if (strncmp(p, name, nlen) != 0 || p[nlen] != '=')
            continue;
        struct sbuf v = {0};
        for (const char *s = p + nlen + 1; *s && *s != '&'; s++) {
            if (*s == '+') {
                sbuf_putc(&v, ' ');
            } else if (*s == '%' && hex_value((unsigned char)s[1]) >= 0 &&
                       hex_value((unsigned char)s[2]) >= 0) {
                sbuf_putc(&v, (char)(hex_value((unsigned char)s[1]) * 16 +
                                     hex_value((unsigned char)s[2])));
                s += 2;
            } else {
                sbuf_putc(&v, *s);
            }
        }
        return sbuf_take(&v);
    }
    return NULL;
}

static MHD_RESULT fp_answer(struct MHD_Connection *conn, bool instant, const char *query)
{
    static const char json[] = "application/json";
    if (fp_error_on && query && strstr(query, fp_error_on)) {
        char *msg =
            xasprintf("invalid parameter \"query\": injected failure for '%s'", fp_error_on);
        char *body = fp_error_body("bad_data", msg);
        MHD_RESULT ret = fakehttp_reply(conn, 400, json, body);
        free(body);
        free(msg);
        return ret;
    }
    switch (fp_mode) {
    case FP_OK:
        for (size_t i = 0; i < fp_nalt; i++)
            if (query && strstr(query, fp_alt_on[i]))
                return fakehttp_reply(conn, 200, json, fp_alt_body[i]);
        if (!instant && query &&
            (strstr(query, "present_over_time(") || strstr(query, "count_over_time(vector(1)")))
            return fakehttp_reply(conn, 200, json, fp_ones_body);
        return fakehttp_reply(conn, 200, json,
                              instant && fp_instant_body ? fp_instant_body : fp_body);
    case FP_STATUS: {
        char *html = xasprintf("<html><head><title>%u</title></head><body><h1>%u Bad Gateway"
                               "</h1><hr>nginx</body></html>\n",
                               fp_status, fp_status);
        MHD_RESULT ret = fakehttp_reply(conn, fp_status, "text/html", html);
        free(html);
        return ret;
    }
    case FP_NOUI:
        return fakehttp_reply(conn, 500, "text/plain; charset=utf-8",
                              "Error opening React index.html: open static/mantine-ui/index.html: "
                              "no such file or directory");
    case FP_ERROR: {
        char *body = fp_error_body(fp_error_type, fp_error_msg);
        MHD_RESULT ret = fakehttp_reply(conn, fp_status, json, body);
        free(body);
        return ret;
    }
    case FP_GARBAGE:
        return fakehttp_reply(conn, 200, json, "<<this is not json>> {");
    case FP_SLOW:
        fakehttp_sleep(fp_slow);
        return fakehttp_reply(conn, 200, json, instant ? fp_empty_vector : fp_empty_matrix);
    case FP_PARTIAL:
        return fakehttp_reply(conn, 200, json, fp_partial);
    case FP_VMPARTIAL:
        return fakehttp_reply(conn, 200, json, instant ? fp_vmpartial_vector : fp_vmpartial);
    case FP_TRUNCATED:
        return fakehttp_reply(conn, 200, json, fp_truncated);
    }
    return MHD_NO;
}

static MHD_RESULT fp_handler(struct MHD_Connection *conn, const char *url, const char *method,
                             struct sbuf *body)
{
    if (strcmp(method, "GET") == 0)
        fakehttp_query(conn, body);

    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    pthread_mutex_lock(&fp_log_lock);
    /* A binary body (remote read's snappy protobuf) is logged by its size only. */
    bool text = true;
    for (size_t i = 0; i < body->len && text; i++)
        text = (unsigned char)body->buf[i] >= 0x20 && (unsigned char)body->buf[i] < 0x7f;
    char size[48];
    snprintf(size, sizeof(size), "(%zu bytes of binary)", body->len);
    fprintf(stderr, "request %s %s %s%s%s\n", method, url,
            text ? (body->buf ? body->buf : "") : size, auth ? " authorization=" : "",
            auth ? auth : "");
    fflush(stderr);
    pthread_mutex_unlock(&fp_log_lock);

    if (strcmp(url, "/-/ready") == 0)
        return fakehttp_reply(conn, 200, "text/plain", "Prometheus Server is Ready.\n");
    if (strcmp(url, "/api/v1/query") == 0) {
        pthread_mutex_lock(&fp_hold_lock);
        fp_instants++;
        pthread_cond_broadcast(&fp_hold_cond);
        pthread_mutex_unlock(&fp_hold_lock);
    }
    if (fp_rr_body && strcmp(url, "/api/v1/read") == 0) {
        if (fp_hold > 0)
            fp_hold_read();
        struct MHD_Response *r =
            MHD_create_response_from_buffer(fp_rr_len, fp_rr_body, MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(r, "Content-Type",
                                "application/x-streamed-protobuf; "
                                "proto=prometheus.ChunkedReadResponse");
        MHD_RESULT ret = MHD_queue_response(conn, 200, r);
        MHD_destroy_response(r);
        return ret;
    }
    bool instant = strcmp(url, "/api/v1/query") == 0;
    /* A proxy in front of the server answers every path with its status. */
    if (!instant && strcmp(url, "/api/v1/query_range") != 0 && fp_mode != FP_STATUS &&
        fp_mode != FP_NOUI)
        return fakehttp_reply(conn, 404, "text/plain", "404 page not found\n");
    if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0)
        return fakehttp_reply(conn, 405, "text/plain", "method not allowed\n");

    char *query = fp_form_value(body->buf, "query");
    MHD_RESULT ret = fp_answer(conn, instant, query);
    free(query);
    return ret;
}

static char *fp_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fake_prom: cannot open '%s': %s\n", path, strerror(errno));
        exit(2);
    }
    struct sbuf b = {0};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        sbuf_add(&b, buf, n);
    fclose(f);
    return sbuf_take(&b);
}

/*
 * `body` with each sample value (a JSON string after a ',' and before a ']', blanks allowed:
 * `[1700000000, "0.5"]`) replaced by "1"; caller frees.
 */
static char *fp_ones(const char *body)
{
    struct sbuf b = {0};
    char prev = 0; /* last non-blank character outside strings */
    for (const char *p = body; *p;) {
        if (*p != '"') {
            if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r')
                prev = *p;
            sbuf_putc(&b, *p++);
            continue;
        }
        const char *e = p + 1;
        while (*e && *e != '"')
            e += (*e == '\\' && e[1]) ? 2 : 1;
        const char *after = *e ? e + 1 : e;
        while (*after == ' ' || *after == '\n' || *after == '\t' || *after == '\r')
            after++;
        if (prev == ',' && *after == ']')
            sbuf_puts(&b, "\"1\"");
        else
            sbuf_add(&b, p, (size_t)(e - p) + (*e ? 1 : 0));
        prev = '"';
        p = *e ? e + 1 : e;
    }
    return sbuf_take(&b);
}

static void fp_usage(void)
{
    fprintf(stderr,
            "usage: fake_prom [-E SUBSTR] [-A SUBSTR FILE] [-R FILE] [-H SECONDS] PORT ok FILE "
            "[INSTANT_FILE] | status CODE | "
            "error TYPE MSG | garbage | slow SECONDS | partial | vmpartial | truncated\n");
    exit(2);
}

static void fp_parse_args(int argc, char **argv)
{
    int i = 1;
    for (;;) {
        if (i + 1 < argc && strcmp(argv[i], "-E") == 0) {
            fp_error_on = argv[i + 1];
            i += 2;
        } else if (i + 1 < argc && strcmp(argv[i], "-R") == 0) {
            fp_rr_body = fp_read_file(argv[i + 1]);
            FILE *f = fopen(argv[i + 1], "rb");
            fseek(f, 0, SEEK_END);
            fp_rr_len = (size_t)ftell(f);
            fclose(f);
            i += 2;
        } else if (i + 1 < argc && strcmp(argv[i], "-H") == 0) {
            fp_hold = atof(argv[i + 1]);
            i += 2;
        } else if (i + 2 < argc && strcmp(argv[i], "-A") == 0 && fp_nalt < FP_MAX_ALT) {
            fp_alt_on[fp_nalt] = argv[i + 1];
            fp_alt_body[fp_nalt++] = fp_read_file(argv[i + 2]);
            i += 3;
        } else {
            break;
        }
    }
    if (argc - i < 2)
        fp_usage();
    const char *mode = argv[i + 1];
    int nargs = argc - i - 2;
    char **args = argv + i + 2;
    if (strcmp(mode, "ok") == 0 && (nargs == 1 || nargs == 2)) {
        fp_mode = FP_OK;
        fp_body = fp_read_file(args[0]);
        fp_ones_body = fp_ones(fp_body);
        if (nargs == 2)
            fp_instant_body = fp_read_file(args[1]);
    } else if (strcmp(mode, "status") == 0 && nargs == 1) {
        fp_mode = FP_STATUS;
        fp_status = (unsigned)atoi(args[0]);
        if (fp_status < 100 || fp_status > 599)
            fp_usage();
    } else if (strcmp(mode, "error") == 0 && nargs == 2) {
        fp_mode = FP_ERROR;
        fp_error_type = args[0];
        fp_error_msg = args[1];
        fp_status = fp_error_status(args[0]);
    } else if (strcmp(mode, "noui") == 0 && nargs == 0) {
        fp_mode = FP_NOUI;
    } else if (strcmp(mode, "garbage") == 0 && nargs == 0) {
        fp_mode = FP_GARBAGE;
    } else if (strcmp(mode, "slow") == 0 && nargs == 1) {
        fp_mode = FP_SLOW;
        if (parse_double(args[0], &fp_slow) < 0 || fp_slow < 0)
            fp_usage();
    } else if (strcmp(mode, "vmpartial") == 0 && nargs == 0) {
        fp_mode = FP_VMPARTIAL;
    } else if (strcmp(mode, "partial") == 0 && nargs == 0) {
        fp_mode = FP_PARTIAL;
    } else if (strcmp(mode, "truncated") == 0 && nargs == 0) {
        fp_mode = FP_TRUNCATED;
    } else {
        fp_usage();
    }
    if (parse_u64(argv[i], &fp_port) < 0 || fp_port > 65535)
        fp_usage();
}

int main(int argc, char **argv)
{
    fp_parse_args(argc, argv);
    int rc = fakehttp_serve("fake_prom", (uint16_t)fp_port, fp_handler);
    free(fp_body);
    free(fp_ones_body);
    for (size_t i = 0; i < fp_nalt; i++)
        free(fp_alt_body[i]);
    free(fp_instant_body);
    return rc;
}
