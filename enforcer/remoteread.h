/*
 * Prometheus remote read, the pure parts (docs/remote-read.md): the request body a client
 * POSTs to /api/v1/read, and an incremental reader of the STREAMED_XOR_CHUNKS answer that
 * turns it into one struct matrix per query. No I/O: the caller sends the body and feeds the
 * reader the bytes as they arrive (enforcer/fetch.c with libcurl).
 *
 * The answer decides reclaims, so it is read strictly: a stream cut inside a frame, a frame
 * whose CRC does not match, a frame or a total over the caller's caps, malformed protobuf, a
 * chunk encoding other than XOR, a query index that was not asked, a series that comes back
 * after another one, and samples that overlap or go backwards all fail the whole answer with
 * a message. A series is never shortened to what could be read.
 */
#ifndef GPURECLAIM_REMOTEREAD_H
#define GPURECLAIM_REMOTEREAD_H

#include <stddef.h>
#include <stdint.h>

#include "series.h"

/* prompb LabelMatcher.Type, same numbers. */
enum rr_match_type { RR_EQ = 0, RR_NEQ = 1, RR_RE = 2, RR_NRE = 3 };

struct rr_matcher {
    enum rr_match_type type;
    const char *name, *value;
};

/* One selector over [start_ms, end_ms] (Unix milliseconds, both inclusive). */
struct rr_query {
    int64_t start_ms, end_ms;
    const struct rr_matcher *m;
    size_t nm; /* at least one */
};

/* Content-Type and Content-Encoding of the request, and the header naming the protocol. */
#define RR_CONTENT_TYPE     "application/x-protobuf"
#define RR_CONTENT_ENCODING "snappy"
#define RR_VERSION_HEADER   "X-Prometheus-Remote-Read-Version: 0.1.0"
/* Content-Type of a streamed answer: anything else (a SAMPLES answer, an error page) is not. */
#define RR_STREAM_CONTENT_TYPE                                                                     \
    "application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse"

/*
 * The body of POST /api/v1/read for `nq` queries: a ReadRequest accepting only
 * STREAMED_XOR_CHUNKS, snappy-compressed. 0 with *body (malloc'd, caller frees) and *len, or
 * -1 with a message in err (no query, no matcher, start after end, a NULL string, an unknown
 * matcher type).
 */
int rr_encode_request(const struct rr_query *q, size_t nq, char **body, size_t *len, char *err,
                      size_t errlen);

struct rr_stream;

/*
 * A reader for the answer to a request of `nqueries` queries. A frame whose data is over
 * max_frame_bytes, or a stream over max_total_bytes in all, fails (0: no limit).
 */
struct rr_stream *rr_stream_new(size_t nqueries, size_t max_frame_bytes, size_t max_total_bytes);

/*
 * Optional: keep only samples of query `query` with start_ms <= t <= end_ms (a chunk holds
 * whatever the TSDB stored around the range asked; every sample is still decoded and
 * checked). Call before the first rr_stream_feed; -1 when `query` is out of range.
 */
int rr_stream_clip(struct rr_stream *s, size_t query, int64_t start_ms, int64_t end_ms);

/*
 * A series handed over complete: `s` (labels sorted, points ascending, t in seconds, as in
 * rr_stream_finish) is only lent for the call; the reader frees its points after it. 0, or -1
 * with a message in err, which fails the whole answer.
 */
typedef int (*rr_series_fn)(void *arg, size_t query, const struct series *s, char *err,
                            size_t errlen);

/*
 * Optional: hand each series to `fn` as soon as it is complete (when another series of the
 * same query begins, since the frames of one series are consecutive, or at rr_stream_finish)
 * instead of keeping it for rr_stream_finish, so that the reader holds the raw samples of one
 * series per query at a time. Series without a sample are not handed over. Every check is
 * kept (a series that comes again after another one still fails, its labels are kept for
 * that); a failure after some series were handed over fails the answer all the same, and the
 * caller must then drop what it built from them. rr_stream_finish then leaves out[] empty.
 * Call before the first rr_stream_feed; -1 otherwise.
 */
int rr_stream_on_series(struct rr_stream *s, rr_series_fn fn, void *arg);

/*
 * The next `len` bytes of the answer, cut anywhere. 0, or -1 with a message in err; after a
 * failure every later call fails with the same message.
 */
int rr_stream_feed(struct rr_stream *s, const void *buf, size_t len, char *err, size_t errlen);

/*
 * End of the answer: out[0..nqueries-1] receive the series of each query (in the order they
 * came, labels sorted, points ascending, t = ms / 1000.0, v bit for bit as stored: NaN
 * payloads such as the staleness marker 0x7ff0000000000002 are kept), to be released with
 * matrix_free. -1 with a message in err (and every out[i] empty) when the stream failed or
 * ends inside a frame. Series left without a sample by rr_stream_clip are dropped.
 */
int rr_stream_finish(struct rr_stream *s, struct matrix *out, char *err, size_t errlen);

/* Frames and samples read so far (for logs and metrics). */
size_t rr_stream_frames(const struct rr_stream *s);
size_t rr_stream_samples(const struct rr_stream *s);

void rr_stream_free(struct rr_stream *s);

#endif
