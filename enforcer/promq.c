/*
 * Prometheus HTTP API client: builds /api/v1/query and /api/v1/query_range requests, sends
 * them through httpc with the client's authentication and TLS settings (promq_http, also
 * used by the raw-sample reads through promq_post), and asks a server whether it is
 * VictoriaMetrics, whose rewritten newest points it checks for.
 *
 * It owns the requests and nothing of the answer's text: libcurl's write callback feeds each
 * chunk, as it arrives, to the answer reader (promjson.c), which reads the tokenizer's events
 * (jsonpush.c) into `struct matrix`. So the body is never held whole (at 100,000 workloads it
 * is some 70 MB), and the cap on an answer (promq_cfg.max_answer_bytes) bounds the parsed
 * data, not the text.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "file.h"
#include "httpc.h"
#include "log.h"
#include "promjson.h"
#include "promq.h"
#include "util.h"

/*
 * Default cap on the parsed data of one answer (series, labels and points as stored; see
 * promq_cfg.max_answer_bytes): a 15-minute window at a 30 s step over 100,000 workloads
 * takes some 70 MB, and a cycle holds about two such answers within 256 MiB.
 */
#define PROMQ_DEFAULT_MAX_ANSWER ((size_t)128 << 20)

struct promq {
    char *url; /* without a trailing slash */
    double timeout;
    char *bearer_file;
    char *basic_user;
    char *basic_pass_file;
    char *ca_file;
    bool insecure;
    size_t max_answer; /* cap on the parsed data of one answer */
    atomic_ulong requests, failures;
    /* What /flags told of a VictoriaMetrics server (promq_vm_probe), read once. */
    pthread_mutex_t vm_lock;
    bool vm_probed, vm;
    atomic_bool vm_warned;
    double vm_latency, vm_max_step; /* -search.latencyOffset, -search.maxStepForPointsAdjustment */
    atomic_int remote_read;         /* promq_remote_read: -1 not tried yet, 0 absent, 1 offered */
    enum promq_read_path read_path;
    bool proofs;
};

static char *promq_strdup_opt(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

struct promq *promq_new(const struct promq_cfg *cfg)
{
    struct promq *q = xcalloc(1, sizeof(*q));
    atomic_init(&q->remote_read, -1);
    q->url = xstrdup(cfg->url ? cfg->url : "");
    size_t n = strlen(q->url);
    while (n > 0 && q->url[n - 1] == '/')
        q->url[--n] = '\0';
    q->timeout = cfg->timeout > 0 ? cfg->timeout : 30.0;
    q->bearer_file = promq_strdup_opt(cfg->bearer_file);
    q->basic_user = promq_strdup_opt(cfg->basic_user);
    q->basic_pass_file = promq_strdup_opt(cfg->basic_pass_file);
    q->ca_file = promq_strdup_opt(cfg->ca_file);
    q->insecure = cfg->insecure;
    q->read_path = cfg->read_path;
    q->proofs = cfg->proofs;
    q->max_answer = cfg->max_answer_bytes ? cfg->max_answer_bytes : PROMQ_DEFAULT_MAX_ANSWER;
    pthread_mutex_init(&q->vm_lock, NULL);
    if (q->insecure)
        log_warn("TLS verification of '%s' is disabled", q->url);
    return q;
}

void promq_free(struct promq *q)
{
    if (!q)
        return;
    free(q->url);
    free(q->bearer_file);
    free(q->basic_user);
    free(q->basic_pass_file);
    free(q->ca_file);
    pthread_mutex_destroy(&q->vm_lock);
    free(q);
}

unsigned long promq_requests(const struct promq *q)
{
    return atomic_load(&((struct promq *)q)->requests);
}

unsigned long promq_failures(const struct promq *q)
{
    return atomic_load(&((struct promq *)q)->failures);
}

/* promq_parse accepting the result types `want` (PROMJSON_*), as a query would. */
static int promq_parse_as(const char *body, size_t len, long http_status, unsigned want,
                          struct matrix *out, char *err, size_t errlen)
{
    return promjson_parse(body, len, http_status, want, PROMQ_DEFAULT_MAX_ANSWER, out, err, errlen);
}

int promq_parse(const char *body, size_t len, long http_status, struct matrix *out, char *err,
                size_t errlen)
{
    return promq_parse_as(body, len, http_status, PROMJSON_ANY, out, err, errlen);
}

/* ---- requests ---------------------------------------------------------------------------- */

static void promq_form(struct sbuf *b, const char *name, const char *value)
{
    if (b->len)
        sbuf_putc(b, '&');
    sbuf_puts(b, name);
    sbuf_putc(b, '=');
    httpc_urlencode(b, value);
}

static void promq_form_num(struct sbuf *b, const char *name, double v)
{
    char tmp[64];
    /* Millisecond precision is all Prometheus keeps (marshalTimestamp). */
    snprintf(tmp, sizeof(tmp), "%.3f", v);
    promq_form(b, name, tmp);
}

/* libcurl's write callback: parse as the bytes arrive; stop at a final error. */
static int promq_sink(void *arg, const char *data, size_t len)
{
    return promjson_feed(arg, data, len);
}

/*
 * One request to the server with this client's authentication, TLS settings and timeout,
 * the only place they are applied: the PromQL queries, the /flags probe and the raw-sample
 * reads (promq_post) all go through it. The bearer token and password are re-read from
 * their files on every request. Returns httpc_do's result.
 */
static int promq_http(struct promq *q, struct httpc_req *req, struct httpc_resp *resp, char *err,
                      size_t errlen)
{
    char *token = NULL, *pass = NULL;
    int ret = -1;
    atomic_fetch_add(&q->requests, 1);
    if (q->bearer_file && !(token = secret_read(q->bearer_file, "bearer token", err, errlen)))
        goto out;
    if (q->basic_user && q->basic_pass_file &&
        !(pass = secret_read(q->basic_pass_file, "password", err, errlen)))
        goto out;
    req->timeout = q->timeout;
    req->ca_file = q->ca_file;
    req->insecure = q->insecure;
    req->bearer_token = token;
    req->basic_user = q->basic_user;
    req->basic_pass = pass;
    ret = httpc_do(req, resp, err, errlen);
out:
    secret_free(token);
    secret_free(pass);
    return ret;
}

static int promq_request(struct promq *q, const char *path, const struct sbuf *form, unsigned want,
                         struct matrix *out, char *err, size_t errlen)
{
    char *url = xasprintf("%s%s", q->url, path);
    struct httpc_resp resp = {0};
    struct promjson *ans = promjson_new(want, q->max_answer);
    int ret = -1;

    *out = (struct matrix){0};

    static const char *const headers[] = {
        "Content-Type: application/x-www-form-urlencoded",
        "Accept: application/json",
    };
    struct httpc_req req = {
        .method = "POST",
        .url = url,
        .headers = headers,
        .nheaders = ARRAY_LEN(headers),
        .body = form->buf,
        .body_len = form->len,
        .sink = promq_sink,
        .sink_arg = ans,
    };
    if (promq_http(q, &req, &resp, err, errlen) < 0)
        goto out;
    ret = promjson_finish(ans, resp.status, out, err, errlen);
    log_debug("prometheus %s %s: HTTP %ld, %zu bytes%s, %.3f s%s", path, form->buf, resp.status,
              promjson_fed(ans), resp.stopped ? " (stopped)" : "", resp.elapsed,
              ret < 0 ? " (failed)" : "");
out:
    if (ret < 0)
        atomic_fetch_add(&q->failures, 1);
    httpc_resp_free(&resp);
    promjson_free(ans);
    free(url);
    return ret;
}

int promq_post(struct promq *q, const char *path, const char *const *headers, size_t nheaders,
               const char *body, size_t len, int (*sink)(void *, const char *, size_t), void *arg,
               long *status, char *ctype, size_t ctlen, char *err, size_t errlen)
{
    static const char *const want[] = {"Content-Type"};
    char *url = xasprintf("%s%s", q->url, path);
    struct httpc_resp resp = {0};
    struct httpc_req req = {
        .method = "POST",
        .url = url,
        .headers = headers,
        .nheaders = nheaders,
        .body = body,
        .body_len = len,
        .sink = sink,
        .sink_arg = arg,
        .want_headers = want,
        .nwant_headers = 1,
    };
    int ret = promq_http(q, &req, &resp, err, errlen);
    *status = ret == 0 ? resp.status : 0;
    if (ctype) {
        const char *ct = ret == 0 ? httpc_resp_header(&resp, "Content-Type") : NULL;
        snprintf(ctype, ctlen, "%s", ct ? ct : "");
    }
    if (ret == 0)
        log_debug("prometheus %s: HTTP %ld, %zu-byte request%s, %.3f s", path, resp.status, len,
                  resp.stopped ? " (stopped)" : "", resp.elapsed);
    if (ret < 0)
        atomic_fetch_add(&q->failures, 1);
    httpc_resp_free(&resp);
    free(url);
    return ret;
}

const char *promq_url(const struct promq *q)
{
    return q->url;
}

size_t promq_max_answer(const struct promq *q)
{
    return q->max_answer;
}

void promq_count_failure(struct promq *q)
{
    atomic_fetch_add(&q->failures, 1);
}

/* ---- VictoriaMetrics' rewritten newest points ----------------------------------------------- */

/*
 * A Go duration ("30s", "1m0s", "500ms", "0s") in seconds, or -1. VictoriaMetrics prints
 * its duration flags this way at /flags.
 */
static double promq_go_duration(const char *s, size_t n)
{
    static const struct {
        const char *unit;
        double sec;
    } units[] = {{"ns", 1e-9}, {"us", 1e-6}, {"\xc2\xb5s", 1e-6}, {"ms", 1e-3},
                 {"s", 1},     {"m", 60},    {"h", 3600}};
    double total = 0;
    size_t i = 0;
    if (n == 0)
        return -1;
    while (i < n) {
        size_t j = i;
        while (j < n && ((s[j] >= '0' && s[j] <= '9') || s[j] == '.'))
            j++;
        double v;
        if (j == i || !promjson_decimal(s + i, j - i, &v))
            return -1;
        size_t k = j;
        while (k < n && !(s[k] >= '0' && s[k] <= '9') && s[k] != '.')
            k++;
        size_t u = 0;
        while (u < ARRAY_LEN(units) &&
               !(strlen(units[u].unit) == k - j && memcmp(units[u].unit, s + j, k - j) == 0))
            u++;
        if (u == ARRAY_LEN(units))
            return v == 0 && k == j && k == n ? 0 : -1;
        total += v * units[u].sec;
        i = k;
    }
    return total;
}

/* The value of `-name="value"` in a /flags listing, as a duration; `def` when absent. */
static double promq_vm_flag(const char *body, const char *name, double def)
{
    size_t n = strlen(name);
    for (const char *p = body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (p[0] != '-' || strncmp(p + 1, name, n) != 0 || p[1 + n] != '=')
            continue;
        const char *v = p + 2 + n, *e = strchr(v, '\n');
        size_t len = e ? (size_t)(e - v) : strlen(v);
        if (len >= 2 && v[0] == '"' && v[len - 1] == '"')
            v++, len -= 2;
        double d = promq_go_duration(v, len);
        /* Unreadable: assume the worst (the rewrite happens). */
        return d < 0 ? (def > 3600 ? def : 3600) : d;
    }
    return def;
}

/*
 * VictoriaMetrics' vmselect rewrites the newest points of a range answer: points within
 * -search.latencyOffset (30 s by default) of its clock take the value of the point before
 * them when the step is below -search.maxStepForPointsAdjustment (1m by default), because
 * their data may be incomplete (VictoriaMetrics app/vmselect/prometheus/prometheus.go,
 * adjustLastPoints). A workload that turned busy in the last 30 s then reads idle, and one
 * that stopped reporting reads fresh. Its /flags page lists the flags set on its command
 * line ("-search.latencyOffset=\"0s\""); Prometheus answers it with its web UI. Read once;
 * a server that cannot be reached, or answers 5xx, is asked again next time.
 */
static int promq_vm_probe(struct promq *q, char *err, size_t errlen)
{
    pthread_mutex_lock(&q->vm_lock);
    if (q->vm_probed) {
        pthread_mutex_unlock(&q->vm_lock);
        return 0;
    }
    char *url = xasprintf("%s/flags", q->url);
    struct httpc_resp resp = {0};
    int ret = -1;
    struct httpc_req req = {
        .url = url,
        .max_body = 1u << 20,
    };
    if (promq_http(q, &req, &resp, err, errlen) < 0)
        goto out;
    /*
     * A server error says nothing of what the server is: ask again next time. Except one:
     * Prometheus serves /flags from its web UI, and one built without the UI's assets (as from
     * its Go module) answers 500 "Error opening React index.html: ..." every time
     * (web/web.go, serveReactApp, prometheus/prometheus v0.316.0). That is Prometheus, not
     * VictoriaMetrics, and asking again would fail every range query for good.
     */
    static const char no_ui[] = "Error opening React index.html";
    bool prom_no_ui = resp.status == 500 && resp.body.len >= strlen(no_ui) &&
                      memcmp(resp.body.buf, no_ui, strlen(no_ui)) == 0;
    if (resp.status >= 500 && !prom_no_ui) {
        snprintf(err, errlen, "'%s/flags' answered HTTP %ld", q->url, resp.status);
        goto out;
    }
    ret = 0;
    q->vm_probed = true;
    q->vm = resp.status == 200 && resp.body.len > 0 && resp.body.buf[0] == '-';
    if (q->vm) {
        q->vm_latency = promq_vm_flag(resp.body.buf, "search.latencyOffset", 30);
        q->vm_max_step = promq_vm_flag(resp.body.buf, "search.maxStepForPointsAdjustment", 60);
    }
out:
    if (ret < 0)
        atomic_fetch_add(&q->failures, 1);
    pthread_mutex_unlock(&q->vm_lock);
    httpc_resp_free(&resp);
    free(url);
    return ret;
}

enum promq_read_path promq_read_path(const struct promq *q)
{
    return q->read_path;
}

bool promq_proofs(const struct promq *q)
{
    return q->proofs;
}

int promq_remote_read(const struct promq *q)
{
    return atomic_load(&((struct promq *)q)->remote_read);
}

void promq_set_remote_read(struct promq *q, int offered)
{
    atomic_store(&q->remote_read, offered ? 1 : 0);
}

int promq_is_victoria(struct promq *q, char *err, size_t errlen)
{
    if (promq_vm_probe(q, err, errlen) < 0)
        return -1;
    return q->vm ? 1 : 0;
}

/*
 * Refuse a range query whose newest points VictoriaMetrics would rewrite (see
 * promq_vm_probe): its answer would be data that does not exist. Only queries ending near
 * the present are concerned; history at a fixed epoch (tests) never is.
 */
static int promq_vm_check(struct promq *q, double end, double step, char *err, size_t errlen)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double wall = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    if (end < wall - 3600)
        return 0;
    if (promq_vm_probe(q, err, errlen) < 0)
        return 0; /* unreachable: the query itself will say so */
    /* Said once, where it matters: rules reading raw samples never send range queries. */
    if (q->vm && q->vm_latency > 0 && !atomic_exchange(&q->vm_warned, true))
        log_warn("'%s' is VictoriaMetrics with -search.latencyOffset=%gs: range queries "
                 "with a step under %gs ending within %gs of now fail; start it with "
                 "-search.latencyOffset=0s",
                 q->url, q->vm_latency, q->vm_max_step, q->vm_latency);
    /* A minute of clock skew between us and the server counts as near. */
    if (q->vm && q->vm_latency > 0 && step < q->vm_max_step && end > wall - q->vm_latency - 60) {
        snprintf(err, errlen,
                 "VictoriaMetrics at '%s' replaces the points of the last %gs of a range answer "
                 "with older values (-search.latencyOffset) when the step is under %gs: start it "
                 "with -search.latencyOffset=0s",
                 q->url, q->vm_latency, q->vm_max_step);
        atomic_fetch_add(&q->failures, 1);
        return -1;
    }
    return 0;
}

static int promq_series_cmp(const void *a, const void *b)
{
    const struct series *const *x = a, *const *y = b;
    return labels_compare(&(*x)->labels, &(*y)->labels);
}

/*
 * A range answer without metric names. The enforcer's range queries are all functions of
 * selectors, whose results Prometheus gives without __name__; VictoriaMetrics 1.79 keeps it
 * for some (max_over_time) and not others (present_over_time), so series of two queries
 * about one workload would not match. Two series that differ only by name are an error, as
 * Prometheus makes it ("vector cannot contain metrics with the same labelset").
 */
static int promq_drop_names(struct matrix *m, char *err, size_t errlen)
{
    bool any = false;
    for (size_t i = 0; i < m->n; i++) {
        struct labels *ls = &m->s[i].labels;
        size_t k = 0;
        while (k < ls->n && strcmp(ls->v[k].name, "__name__") != 0)
            k++;
        if (k == ls->n)
            continue;
        any = true;
        struct label small[16], *v = ls->n <= 16 ? small : xmalloc(ls->n * sizeof(*v));
        memcpy(v, ls->v, k * sizeof(*v));
        memcpy(v + k, ls->v + k + 1, (ls->n - k - 1) * sizeof(*v));
        struct labels out;
        labels_from(&out, v, ls->n - 1);
        if (v != small)
            free(v);
        labels_free(ls);
        *ls = out;
    }
    if (!any || m->n < 2)
        return 0;
    const struct series **idx = xmalloc(m->n * sizeof(*idx));
    for (size_t i = 0; i < m->n; i++)
        idx[i] = &m->s[i];
    qsort(idx, m->n, sizeof(*idx), promq_series_cmp);
    int ret = 0;
    for (size_t i = 1; i < m->n && ret == 0; i++) {
        if (labels_equal(&idx[i - 1]->labels, &idx[i]->labels)) {
            char *l = labels_format(&idx[i]->labels);
            snprintf(err, errlen,
                     "prometheus answer: two series differ only in their metric name: %.160s", l);
            free(l);
            ret = -1;
        }
    }
    free(idx);
    return ret;
}

/* A range query, keeping `__name__` when `names`, with a per-query lookback when > 0. */
static int promq_range_as(struct promq *q, const char *expr, double start, double end, double step,
                          bool names, double lookback, struct matrix *out, char *err, size_t errlen)
{
    if (!isfinite(start) || !isfinite(end) || !isfinite(step) || step <= 0 || end < start) {
        *out = (struct matrix){0};
        snprintf(err, errlen, "invalid range [%.3f, %.3f] with step %g", start, end, step);
        return -1;
    }
    if (promq_vm_check(q, end, step, err, errlen) < 0) {
        *out = (struct matrix){0};
        return -1;
    }
    struct sbuf form = {0};
    promq_form(&form, "query", expr);
    promq_form_num(&form, "start", start);
    promq_form_num(&form, "end", end);
    promq_form_num(&form, "step", step);
    promq_form_num(&form, "timeout", q->timeout);
    if (lookback > 0) {
        promq_form_num(&form, "lookback_delta", lookback);
        promq_form_num(&form, "max_lookback", lookback);
    }
    /* VictoriaMetrics: not from its response cache, which may predate late samples. */
    promq_form(&form, "nocache", "1");
    /*
     * Thanos Query: an error, not an answer without the series of a store that failed or
     * timed out (its default, --query.partial-response, answers with a warning instead, which
     * promjson refuses too); others ignore the parameter (docs/tsdb-engines.md).
     */
    promq_form(&form, "partial_response", "false");
    int ret = promq_request(q, "/api/v1/query_range", &form, PROMJSON_MATRIX, out, err, errlen);
    sbuf_free(&form);
    if (ret == 0 && !names && promq_drop_names(out, err, errlen) < 0) {
        matrix_free(out);
        atomic_fetch_add(&q->failures, 1);
        ret = -1;
    }
    return ret;
}

int promq_range(struct promq *q, const char *expr, double start, double end, double step,
                struct matrix *out, char *err, size_t errlen)
{
    return promq_range_as(q, expr, start, end, step, false, 0, out, err, errlen);
}

int promq_range_lookback(struct promq *q, const char *expr, double start, double end, double step,
                         double lookback, struct matrix *out, char *err, size_t errlen)
{
    return promq_range_as(q, expr, start, end, step, false, lookback, out, err, errlen);
}

int promq_range_named(struct promq *q, const char *expr, double start, double end, double step,
                      struct matrix *out, char *err, size_t errlen)
{
    return promq_range_as(q, expr, start, end, step, true, 0, out, err, errlen);
}

int promq_instant(struct promq *q, const char *expr, double t, struct matrix *out, char *err,
                  size_t errlen)
{
    if (!isfinite(t)) {
        *out = (struct matrix){0};
        snprintf(err, errlen, "invalid evaluation time %g", t);
        return -1;
    }
    struct sbuf form = {0};
    promq_form(&form, "query", expr);
    promq_form_num(&form, "time", t);
    promq_form_num(&form, "timeout", q->timeout);
    promq_form(&form, "nocache", "1");
    promq_form(&form, "partial_response", "false"); /* as in promq_range_as */
    int ret = promq_request(q, "/api/v1/query", &form, PROMJSON_VECTOR | PROMJSON_SCALAR, out, err,
                            errlen);
    sbuf_free(&form);
    return ret;
}
