/*
 * Prometheus HTTP API answers read as they arrive: the JSON events of jsonpush.h turned into
 * `struct matrix` (a range query's matrix, an instant query's vector or scalar), or refused
 * with a message (the error envelope, HTTP errors, malformed JSON, a wrong result type,
 * warnings of a partial answer, points out of order, an answer over the cap). The client
 * (promq.c) feeds it from libcurl's write callback; tests and fuzzing feed it directly.
 */
#ifndef GPURECLAIM_PROMJSON_H
#define GPURECLAIM_PROMJSON_H

#include <stdbool.h>
#include <stddef.h>

#include "series.h"

/* Result types an answer may have, as a mask of what the caller accepts. */
#define PROMJSON_MATRIX 1u
#define PROMJSON_VECTOR 2u
#define PROMJSON_SCALAR 4u
#define PROMJSON_ANY    (PROMJSON_MATRIX | PROMJSON_VECTOR | PROMJSON_SCALAR)

struct promjson;

/*
 * A reader of one answer accepting the result types `want`, its parsed data (series, labels
 * and points as stored) capped at `max` bytes.
 */
struct promjson *promjson_new(unsigned want, size_t max);
void promjson_free(struct promjson *a);
/* Feed the next `n` bytes; -1 once the rest cannot change the outcome (stop the transfer). */
int promjson_feed(struct promjson *a, const char *buf, size_t n);
/* Bytes fed so far. */
size_t promjson_fed(const struct promjson *a);
/*
 * The answer has ended with HTTP status `http_status`: fill `out` (one allocation of points
 * per series) and return 0, or return -1 with a message in err and `out` empty.
 */
int promjson_finish(struct promjson *a, long http_status, struct matrix *out, char *err,
                    size_t errlen);
/* new, one feed of the whole body, finish and free: one pass, O(len). */
int promjson_parse(const char *body, size_t len, long http_status, unsigned want, size_t max,
                   struct matrix *out, char *err, size_t errlen);

/*
 * A VictoriaMetrics cluster's vmselect answers `"isPartial": true` when a vmstorage node did not
 * answer and -search.denyPartialResponse is off (its default): the answer lacks that node's
 * series, so it is refused like a warning (docs/tsdb-engines.md).
 */
#define PROMJSON_PARTIAL_MSG                                                                       \
    "partial answer: the server marked it isPartial (a VictoriaMetrics vmstorage node did not "    \
    "answer; vmselect's -search.denyPartialResponse turns this into an error)"

/*
 * The server's setting an error message `msg` is about, as ", over the server's FLAG" in
 * `buf`, or "" when it names none that is known.
 */
void promjson_error_hint(const char *msg, char *buf, size_t n);

/*
 * `[+-]digits[.digits]` of at most 15 digits in `n` bytes, exactly as strtod reads it; false
 * for any other shape (the caller then refuses it or takes a slower path).
 */
bool promjson_decimal(const char *s, size_t n, double *out);

#endif
