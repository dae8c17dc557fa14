/*
 * Prometheus HTTP API client: /api/v1/query and /api/v1/query_range over libcurl, with
 * results parsed into `struct matrix` as they arrive by a purpose-built strict parser
 * (promjson.h over the JSON tokenizer jsonpush.h; checked against json-c, which it
 * replaced, in tests and fuzzing).
 *
 * Requests are POSTed as application/x-www-form-urlencoded so long rule expressions never
 * hit URL limits, `time` or `start`/`end` are always explicit (tests evaluate history at a
 * fixed epoch), and every failure (connect, timeout, HTTP status, the error envelope's
 * errorType/error, malformed JSON, a result of the wrong type, or warnings that signal a
 * partial answer) is returned as an error with a message: never as an empty result.
 */
#ifndef GPURECLAIM_PROMQ_H
#define GPURECLAIM_PROMQ_H

#include <stdbool.h>
#include <stddef.h>

#include "series.h"

/*
 * How a rule whose activity is a plain selector reads its raw samples from this server
 * (docs/promql-plan.md §5.7; rawread.h chooses by it):
 *   AUTO         remote read where the server offers it, VictoriaMetrics' export on
 *                VictoriaMetrics, else the PromQL plan; asked once per server;
 *   REMOTE_READ  always remote read (a server without it fails those rules' queries);
 *   EXPORT       always /api/v1/export;
 *   PROMQL       always the PromQL plan.
 * Rules whose activity is an expression always use the PromQL plan.
 */
enum promq_read_path {
    PROMQ_READ_AUTO = 0,
    PROMQ_READ_REMOTE_READ,
    PROMQ_READ_EXPORT,
    PROMQ_READ_PROMQL
};

struct promq_cfg {
    const char *url;         /* base URL, e.g. http://127.0.0.1:9090 */
    double timeout;          /* seconds for the whole request; also sent as `timeout` */
    const char *bearer_file; /* file holding a bearer token, re-read on every request */
    const char *basic_user;  /* basic auth user (password from basic_pass_file) */
    const char *basic_pass_file;
    const char *ca_file; /* CA bundle for https */
    bool insecure;       /* skip TLS verification (logged as a warning) */
    /*
     * Cap on what one answer may hold once parsed (series, labels, points; 0 = 128 MiB).
     * Answers are parsed as they arrive, so the raw text is never held whole; an answer
     * over the cap fails with a message naming the cap, never a partial result.
     */
    size_t max_answer_bytes;
    enum promq_read_path read_path; /* --prometheus.read-path (rawread_path_parse) */
    /* Fold raw samples into per-series proofs (plan, run) rather than per-step grids
       (explain, whose sparkline draws them, and the backtest's per-cycle source): fetch.h. */
    bool proofs;
};

struct promq;

struct promq *promq_new(const struct promq_cfg *cfg);
void promq_free(struct promq *q);

/*
 * Range query; `out` is a matrix whose series carry no `__name__` (see promq_drop_names:
 * Prometheus drops it for functions, VictoriaMetrics keeps it for some). Returns 0 or -1
 * with a message in err.
 */
int promq_range(struct promq *q, const char *expr, double start, double end, double step,
                struct matrix *out, char *err, size_t errlen);
/*
 * The same with a per-query lookback of `lookback` seconds (none when 0), sent both as
 * Prometheus' `lookback_delta` (honoured since v2.43.0, ignored before) and VictoriaMetrics'
 * `max_lookback`; each server ignores the other's (docs/promql-plan.md §5.8).
 */
int promq_range_lookback(struct promq *q, const char *expr, double start, double end, double step,
                         double lookback, struct matrix *out, char *err, size_t errlen);
/*
 * Range query whose series keep `__name__` where the server gives it: on Prometheus, the
 * point at each step is then exactly the instant query at that time, labels included
 * (replay.c slices the instant series of many cycles out of one such query).
 */
int promq_range_named(struct promq *q, const char *expr, double start, double end, double step,
                      struct matrix *out, char *err, size_t errlen);
/* Instant query at `t`; `out` holds one point per series (scalars become one series). */
int promq_instant(struct promq *q, const char *expr, double t, struct matrix *out, char *err,
                  size_t errlen);

/*
 * POST `body` to the server's base URL + `path` with the client's authentication, TLS
 * settings and timeout (the same code as the PromQL queries), `headers` added. The answer
 * goes to `sink` as it arrives (a non-zero return stops the transfer); `*status` gets the
 * HTTP status and `ctype` (when not NULL) the answer's Content-Type ("" when none). For the
 * raw-sample reads (rawread.c), which parse and cap the answer themselves (promq_max_answer).
 * Returns 0 when an HTTP answer came, whatever its status, else -1 with a message in err; the
 * caller judges the status and calls promq_count_failure on a bad one.
 */
int promq_post(struct promq *q, const char *path, const char *const *headers, size_t nheaders,
               const char *body, size_t len, int (*sink)(void *, const char *, size_t), void *arg,
               long *status, char *ctype, size_t ctlen, char *err, size_t errlen);
/* The read path the client was configured with (promq_cfg.read_path). */
enum promq_read_path promq_read_path(const struct promq *q);
/* Whether raw samples are folded into proofs (promq_cfg.proofs). */
bool promq_proofs(const struct promq *q);
/* The base URL, without a trailing slash. */
const char *promq_url(const struct promq *q);
/* The cap on the parsed data of one answer (promq_cfg.max_answer_bytes or its default). */
size_t promq_max_answer(const struct promq *q);
/* Count a failed request that promq_post returned as an HTTP answer. */
void promq_count_failure(struct promq *q);
/*
 * 1 when the server is VictoriaMetrics (its /flags page, read once per client), 0 when it is
 * not, -1 with a message when it could not be asked (asked again next time).
 */
int promq_is_victoria(struct promq *q, char *err, size_t errlen);
/*
 * Whether the server answers remote read with streamed chunks, as the fetch layer found out
 * (it tries once per client): -1 not tried yet, 0 absent, 1 offered. Kept on the client, so
 * that a new client (another server, or a new client at a freed one's address) asks anew.
 */
int promq_remote_read(const struct promq *q);
void promq_set_remote_read(struct promq *q, int offered);

/* HTTP requests made and failed since promq_new (for metrics and the benchmark). */
unsigned long promq_requests(const struct promq *q);
unsigned long promq_failures(const struct promq *q);

/*
 * Pure parser of one API answer (exposed for tests and fuzzing): `http_status` is the HTTP
 * code, `body`/`len` the payload (need not end in NUL). Fills `out` on success, one
 * allocation of points per series. The same push parser the client feeds chunk by chunk as
 * the answer arrives, given the whole body at once: one pass, O(len).
 */
int promq_parse(const char *body, size_t len, long http_status, struct matrix *out, char *err,
                size_t errlen);

#endif
