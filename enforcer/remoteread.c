/*
 * Prometheus remote read for the enforcer's raw-sample path (issue 19; docs/remote-read.md):
 * the snappy-compressed ReadRequest, and a push reader of the STREAMED_XOR_CHUNKS answer.
 * Reading raw samples this way costs Prometheus no PromQL evaluation and gives the decision
 * the exact sample times, NaNs, infinities and staleness markers.
 *
 * The answer is a sequence of frames: a uvarint length, the big-endian CRC-32C (Castagnoli)
 * of the data, then the data, one ChunkedReadResponse message: a query index and one series
 * (labels and XOR chunks). A series too big for one frame continues in the next ones with the
 * same labels; once another series starts, the previous one is complete (prompb/remote.proto).
 *
 * Bytes come in whatever pieces libcurl delivers. Whole frames are decoded straight from the
 * caller's buffer; only a frame cut across calls is copied, into a buffer that grows to the
 * largest such frame (bounded by max_frame_bytes). Nothing of a failed answer is returned: the
 * first error is kept and repeated, and rr_stream_finish hands back empty matrices.
 */
#include "remoteread.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <snappy-c.h>

#include "pbwire.h"
#include "util.h"
#include "xorchunk.h"

/* ---- request ------------------------------------------------------------------------------ */

/* prompb field numbers (docs/remote-read.md §10.2, §10.3). */
enum {
    READREQ_QUERIES = 1,
    READREQ_ACCEPTED_RESPONSE_TYPES = 2,
    QUERY_START_MS = 1,
    QUERY_END_MS = 2,
    QUERY_MATCHERS = 3,
    MATCHER_TYPE = 1,
    MATCHER_NAME = 2,
    MATCHER_VALUE = 3,
    RESPONSE_STREAMED_XOR_CHUNKS = 1,
    CHUNKED_SERIES = 1,
    CHUNKED_QUERY_INDEX = 2,
    SERIES_LABELS = 1,
    SERIES_CHUNKS = 2,
    LABEL_NAME = 1,
    LABEL_VALUE = 2,
    CHUNK_TYPE = 3,
    CHUNK_DATA = 4,
    CHUNK_XOR = 1,
};

int rr_encode_request(const struct rr_query *q, size_t nq, char **body, size_t *len, char *err,
                      size_t errlen)
{
    struct sbuf req = {0}, query = {0}, m = {0};
    const uint8_t streamed = RESPONSE_STREAMED_XOR_CHUNKS;

    *body = NULL;
    *len = 0;
    if (nq == 0)
        return err_printf(err, errlen, "remote read request without a query");
    for (size_t i = 0; i < nq; i++) {
        if (q[i].nm == 0 || !q[i].m)
            return err_printf(err, errlen, "remote read query %zu has no matcher", i);
        if (q[i].start_ms > q[i].end_ms)
            return err_printf(err, errlen,
                              "remote read query %zu starts at %lld ms, after its end %lld", i,
                              (long long)q[i].start_ms, (long long)q[i].end_ms);
        for (size_t j = 0; j < q[i].nm; j++) {
            const struct rr_matcher *mt = &q[i].m[j];
            if (!mt->name || !mt->value || !mt->name[0])
                return err_printf(err, errlen,
                                  "remote read query %zu: matcher %zu has no name or value", i, j);
            if ((unsigned)mt->type > RR_NRE)
                return err_printf(err, errlen,
                                  "remote read query %zu: matcher %zu has unknown type %d", i, j,
                                  (int)mt->type);
        }
    }

    /* Zero values are left out, as proto3 encoders do. */
    for (size_t i = 0; i < nq; i++) {
        sbuf_reset(&query);
        if (q[i].start_ms)
            pb_put_uint(&query, QUERY_START_MS, (uint64_t)q[i].start_ms);
        if (q[i].end_ms)
            pb_put_uint(&query, QUERY_END_MS, (uint64_t)q[i].end_ms);
        for (size_t j = 0; j < q[i].nm; j++) {
            const struct rr_matcher *mt = &q[i].m[j];
            sbuf_reset(&m);
            if (mt->type != RR_EQ)
                pb_put_uint(&m, MATCHER_TYPE, (uint64_t)mt->type);
            pb_put_bytes(&m, MATCHER_NAME, mt->name, strlen(mt->name));
            if (mt->value[0])
                pb_put_bytes(&m, MATCHER_VALUE, mt->value, strlen(mt->value));
            pb_put_bytes(&query, QUERY_MATCHERS, m.buf, m.len);
        }
        pb_put_bytes(&req, READREQ_QUERIES, query.buf ? query.buf : "", query.len);
    }
    /* repeated enum, packed as proto3 does by default: only STREAMED_XOR_CHUNKS. */
    pb_put_bytes(&req, READREQ_ACCEPTED_RESPONSE_TYPES, &streamed, 1);
    sbuf_free(&query);
    sbuf_free(&m);

    size_t max = snappy_max_compressed_length(req.len), n = max;
    char *out = xmalloc(max ? max : 1);
    snappy_status st = snappy_compress(req.buf, req.len, out, &n);
    sbuf_free(&req);
    if (st != SNAPPY_OK) {
        free(out);
        return err_printf(err, errlen, "cannot compress the remote read request (snappy status %d)",
                          (int)st);
    }
    *body = out;
    *len = n;
    return 0;
}

/* ---- CRC-32C ------------------------------------------------------------------------------ */

/* Slicing-by-8 tables of the reflected Castagnoli polynomial, built once. */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

static uint32_t crc32c(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;

    pthread_once(&crc_once, crc_init);
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
            crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^
            crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--)
        c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
    return ~c;
}

/* ---- stream reader ------------------------------------------------------------------------ */

/* A series in the hash set: its index + 1 (0: a free slot) and its labels' hash. */
struct rr_slot {
    size_t idx;
    uint64_t h;
};

/* The series of one query, and where the last of them is being appended. */
struct rr_result {
    struct matrix m;
    size_t cap;                /* series allocated at m.s */
    struct xorchunk_sink sink; /* of m.s[m.n - 1] */
    struct rr_slot *slot;      /* hash set of m's series */
    size_t nslot;              /* a power of two, or 0 */
    bool clip;
    int64_t min_ms, max_ms;
};

struct rr_stream {
    size_t nq, max_frame, max_total;
    struct rr_result *q;
    size_t total;    /* bytes fed */
    size_t consumed; /* bytes of whole frames read */
    size_t frames, samples;
    uint8_t *pend; /* bytes of an unfinished frame */
    size_t npend, cap_pend;
    bool fed, failed;
    rr_series_fn on_series; /* hand each complete series over (rr_stream_on_series) */
    void *arg;
    char msg[512];
};

struct rr_stream *rr_stream_new(size_t nqueries, size_t max_frame_bytes, size_t max_total_bytes)
{
    struct rr_stream *s = xcalloc(1, sizeof(*s));

    s->nq = nqueries;
    /* "No limit" still keeps a frame's length plus its header within size_t. */
    s->max_frame =
        max_frame_bytes && max_frame_bytes < SIZE_MAX / 2 ? max_frame_bytes : SIZE_MAX / 2;
    s->max_total = max_total_bytes ? max_total_bytes : SIZE_MAX;
    s->q = xcalloc(nqueries ? nqueries : 1, sizeof(*s->q));
    return s;
}

int rr_stream_clip(struct rr_stream *s, size_t query, int64_t start_ms, int64_t end_ms)
{
    if (query >= s->nq || s->fed)
        return -1;
    s->q[query].clip = true;
    s->q[query].min_ms = start_ms;
    s->q[query].max_ms = end_ms;
    return 0;
}

int rr_stream_on_series(struct rr_stream *s, rr_series_fn fn, void *arg)
{
    if (s->fed)
        return -1;
    s->on_series = fn;
    s->arg = arg;
    return 0;
}

/*
 * The last series of query `qi` is complete: hand it to the callback and free its points (its
 * labels stay, for the check that a series does not come again). A series without a sample
 * (all clipped, or sent without chunks) is not handed over, as rr_stream_finish drops it.
 */
static int deliver(struct rr_stream *s, size_t qi, char *err, size_t errlen)
{
    struct rr_result *r = &s->q[qi];
    if (!s->on_series || !r->m.n)
        return 0;
    struct series *last = &r->m.s[r->m.n - 1];
    int rc = last->n ? s->on_series(s->arg, qi, last, err, errlen) : 0;
    free(last->p);
    last->p = NULL;
    last->n = 0;
    r->sink.cap = 0;
    return rc;
}

size_t rr_stream_frames(const struct rr_stream *s)
{
    return s->frames;
}

size_t rr_stream_samples(const struct rr_stream *s)
{
    return s->samples;
}

static uint64_t labels_hash(const struct labels *ls)
{
    uint64_t h = 0xcbf29ce484222325u;

    for (size_t i = 0; i < ls->n; i++) {
        for (const char *p = ls->v[i].name; *p; p++)
            h = (h ^ (uint8_t)*p) * 0x100000001b3u;
        h = (h ^ 0xff) * 0x100000001b3u; /* 0xff is never in UTF-8: a separator */
        for (const char *p = ls->v[i].value; *p; p++)
            h = (h ^ (uint8_t)*p) * 0x100000001b3u;
        h = (h ^ 0xfe) * 0x100000001b3u;
    }
    return h;
}

/* Index of the series of r labelled ls, or -1. */
static long find_series(const struct rr_result *r, const struct labels *ls, uint64_t h)
{
    if (!r->nslot)
        return -1;
    for (size_t i = h & (r->nslot - 1);; i = (i + 1) & (r->nslot - 1)) {
        size_t v = r->slot[i].idx;
        if (!v)
            return -1;
        if (r->slot[i].h == h && labels_equal(&r->m.s[v - 1].labels, ls))
            return (long)(v - 1);
    }
}

static void insert_series(struct rr_result *r, size_t idx, uint64_t h)
{
    if (2 * (r->m.n + 1) > r->nslot) {
        size_t n = r->nslot ? 2 * r->nslot : 64;
        struct rr_slot *slot = xcalloc(n, sizeof(*slot));
        for (size_t k = 0; k < r->nslot; k++) {
            if (!r->slot[k].idx)
                continue;
            size_t i = r->slot[k].h & (n - 1);
            while (slot[i].idx)
                i = (i + 1) & (n - 1);
            slot[i] = r->slot[k];
        }
        free(r->slot);
        r->slot = slot;
        r->nslot = n;
    }
    size_t i = h & (r->nslot - 1);
    while (r->slot[i].idx)
        i = (i + 1) & (r->nslot - 1);
    r->slot[i] = (struct rr_slot){idx + 1, h};
}

/* Give back what the growth of the series' points left unused. */
static void shrink(struct rr_result *r)
{
    if (r->m.n && r->sink.cap > r->m.s[r->m.n - 1].n) {
        struct series *last = &r->m.s[r->m.n - 1];
        if (last->n) {
            last->p = xrealloc(last->p, last->n * sizeof(*last->p));
        } else {
            free(last->p);
            last->p = NULL;
        }
        r->sink.cap = last->n;
    }
}

/* One Label message: name and value, pointers into the frame. */
struct raw_label {
    const uint8_t *name, *value;
    size_t nlen, vlen;
};

static int cmp_label(const void *a, const void *b)
{
    return strcmp(((const struct label *)a)->name, ((const struct label *)b)->name);
}

/* Read the labels of a ChunkedSeries into ls (sorted, names unique). */
static int read_labels(struct pb_dec *d, const struct pb_field *sf, struct labels *ls)
{
    struct pb_reader r = {sf->data, sf->data + sf->len, "ChunkedSeries"};
    struct pb_field f, g;
    struct raw_label *raw = NULL;
    struct label *lab = NULL;
    size_t n = 0, bytes = 0;
    char *strs = NULL;
    int rc;

    while ((rc = pb_field_next(d, &r, &f)) > 0) {
        if (f.num != SERIES_LABELS || f.wire != PB_LEN)
            continue;
        struct pb_reader lr;
        struct raw_label l = {(const uint8_t *)"", (const uint8_t *)"", 0, 0};
        if (pb_enter(d, &r, &f, "Label", &lr) < 0)
            goto fail;
        while ((rc = pb_field_next(d, &lr, &g)) > 0) {
            if (g.num == LABEL_NAME || g.num == LABEL_VALUE) {
                rc = pb_string(d, &lr, &g, g.num == LABEL_NAME ? "name" : "value", SIZE_MAX);
                if (rc < 0)
                    goto fail;
                if (rc == 0)
                    continue;
                if (g.num == LABEL_NAME) {
                    l.name = g.data;
                    l.nlen = g.len;
                } else {
                    l.value = g.data;
                    l.vlen = g.len;
                }
            }
        }
        if (rc < 0)
            goto fail;
        pb_leave(d);
        if (!l.nlen) {
            pb_fail(d, "Label", f.at, "empty label name");
            goto fail;
        }
        raw = xgrow(raw, n, sizeof(*raw));
        raw[n++] = l;
        bytes += l.nlen + l.vlen + 2;
    }
    if (rc < 0)
        goto fail;

    /* NUL-terminated copies, sorted by name; the TSDB sends them sorted, we do not rely on it. */
    strs = xmalloc(bytes ? bytes : 1);
    lab = xmalloc((n ? n : 1) * sizeof(*lab));
    char *p = strs;
    for (size_t i = 0; i < n; i++) {
        lab[i].name = memcpy(p, raw[i].name, raw[i].nlen);
        p[raw[i].nlen] = '\0';
        p += raw[i].nlen + 1;
        lab[i].value = memcpy(p, raw[i].value, raw[i].vlen);
        p[raw[i].vlen] = '\0';
        p += raw[i].vlen + 1;
    }
    qsort(lab, n, sizeof(*lab), cmp_label);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(lab[i - 1].name, lab[i].name) == 0) {
            pb_fail(d, "ChunkedSeries", sf->data, "label '%s' appears twice", lab[i].name);
            goto fail;
        }
    }
    labels_from(ls, lab, n);
    free(raw);
    free(lab);
    free(strs);
    return 0;
fail:
    free(raw);
    free(lab);
    free(strs);
    return -1;
}

static const char *encoding_name(uint64_t e)
{
    switch (e) {
    case 0:
        return "unknown";
    case 2:
        return "histogram";
    case 3:
        return "float histogram";
    default:
        return "not known to Prometheus 2.42";
    }
}

/* The chunks of one ChunkedSeries, appended to the last series of r. */
static int read_chunks(struct rr_stream *s, struct rr_result *r, struct pb_dec *d,
                       const struct pb_field *sf)
{
    struct pb_reader sr = {sf->data, sf->data + sf->len, "ChunkedSeries"};
    struct pb_field f, g;
    int rc;

    r->sink.s = &r->m.s[r->m.n - 1];
    while ((rc = pb_field_next(d, &sr, &f)) > 0) {
        if (f.num != SERIES_CHUNKS || f.wire != PB_LEN)
            continue;
        struct pb_reader cr;
        uint64_t type = 0;
        const uint8_t *data = NULL;
        size_t len = 0;
        if (pb_enter(d, &sr, &f, "Chunk", &cr) < 0)
            return -1;
        while ((rc = pb_field_next(d, &cr, &g)) > 0) {
            if (g.num == CHUNK_TYPE && g.wire == PB_VARINT)
                type = g.u;
            else if (g.num == CHUNK_DATA && g.wire == PB_LEN) {
                data = g.data;
                len = g.len;
            }
        }
        if (rc < 0)
            return -1;
        pb_leave(d);
        if (type != CHUNK_XOR) {
            char *name = labels_format(&r->sink.s->labels);
            err_printf(d->err, d->errlen,
                       "series %s: chunk encoding %llu (%s) is not XOR (1), the only one read",
                       name, (unsigned long long)type, encoding_name(type));
            free(name);
            return -1;
        }
        size_t before = r->sink.s->n;
        char why[256];
        if (xorchunk_decode(data, len, &r->sink, why, sizeof(why)) < 0) {
            char *name = labels_format(&r->sink.s->labels);
            err_printf(d->err, d->errlen, "series %s: %s", name, why);
            free(name);
            return -1;
        }
        s->samples += r->sink.s->n - before;
    }
    return rc;
}

/* One ChunkedReadResponse. */
static int read_frame(struct rr_stream *s, const uint8_t *data, size_t len, char *err,
                      size_t errlen)
{
    struct pb_dec d = {data, err, errlen, 0, 8, NULL};
    struct pb_reader r = {data, data + len, "ChunkedReadResponse"};
    struct pb_field f;
    uint64_t qi = 0;
    int rc;

    /* The query index may follow the series it applies to: find it first. */
    while ((rc = pb_field_next(&d, &r, &f)) > 0) {
        if (f.num == CHUNKED_QUERY_INDEX && f.wire == PB_VARINT)
            qi = f.u;
    }
    if (rc < 0)
        return -1;
    if (qi >= s->nq)
        return err_printf(err, errlen, "query index %lld out of range (%zu %s asked)",
                          (long long)qi, s->nq, s->nq == 1 ? "query" : "queries");
    struct rr_result *q = &s->q[qi];

    r.p = data;
    while ((rc = pb_field_next(&d, &r, &f)) > 0) {
        if (f.num != CHUNKED_SERIES || f.wire != PB_LEN)
            continue;
        struct labels ls;
        if (pb_enter(&d, &r, &f, "ChunkedSeries", &(struct pb_reader){0}) < 0)
            return -1;
        rc = read_labels(&d, &f, &ls);
        if (rc < 0)
            return -1;
        if (q->m.n && labels_equal(&q->m.s[q->m.n - 1].labels, &ls)) {
            labels_free(&ls); /* the series goes on from the previous frame */
        } else {
            uint64_t h = labels_hash(&ls);
            if (find_series(q, &ls, h) >= 0) {
                char *name = labels_format(&ls);
                err_printf(err, errlen, "series %s comes again after another series began", name);
                free(name);
                labels_free(&ls);
                return -1;
            }
            if (deliver(s, (size_t)qi, err, errlen) < 0) {
                labels_free(&ls);
                return -1;
            }
            shrink(q);
            if (q->m.n == q->cap) {
                q->cap = q->cap ? 2 * q->cap : 16;
                q->m.s = xrealloc(q->m.s, q->cap * sizeof(*q->m.s));
            }
            q->m.s[q->m.n] = (struct series){ls, NULL, 0};
            insert_series(q, q->m.n, h);
            q->m.n++;
            q->sink =
                (struct xorchunk_sink){.clip = q->clip, .min_ms = q->min_ms, .max_ms = q->max_ms};
        }
        if (read_chunks(s, q, &d, &f) < 0)
            return -1;
        pb_leave(&d);
    }
    return rc;
}

static int stream_fail(struct rr_stream *s, char *err, size_t errlen)
{
    s->failed = true;
    if (err && errlen)
        str_copy(err, errlen, s->msg);
    return -1;
}

/*
 * An error after the first frame cannot change the status (200 is sent): Prometheus's read
 * handler then calls http.Error, which appends its text, one line, to the stream
 * (docs/remote-read.md). Read as a frame, that text fails on its CRC or on the end of the
 * stream; what the server said is what an SRE needs, so the message gives it. True when
 * p[0..n) is printable text (ending in a newline when `whole`, the stream's end): `out` gets
 * it, without the newline, cut to fit. The answer fails either way: only the message differs.
 */
static bool server_text(const uint8_t *p, size_t n, bool whole, char *out, size_t outlen)
{
    if (n < 5 || (whole && p[n - 1] != '\n'))
        return false;
    for (size_t i = 0; i < n; i++)
        if ((p[i] < 0x20 || p[i] > 0x7e) && p[i] != '\n' && p[i] != '\t' && p[i] != '\r')
            return false;
    while (n && (p[n - 1] == '\n' || p[n - 1] == '\r'))
        n--;
    snprintf(out, outlen, "%.*s", (int)(n < 300 ? n : 300), (const char *)p);
    return true;
}

/*
 * Read whole frames from p[0..n): returns the bytes consumed (a frame cut at the end is left),
 * or -1 after stream_fail.
 */
static long read_frames(struct rr_stream *s, const uint8_t *p, size_t n, char *err, size_t errlen)
{
    size_t off = 0;

    while (off < n) {
        const uint8_t *q = p + off;
        uint64_t size;
        int rc = pb_varint(&q, p + n, &size);
        if (rc == -1)
            break;
        if (rc == -2) {
            snprintf(s->msg, sizeof(s->msg),
                     "remote read frame %zu at byte %zu: frame length overflows 64 bits",
                     s->frames + 1, s->consumed);
            return stream_fail(s, err, errlen);
        }
        if (size > s->max_frame) {
            snprintf(s->msg, sizeof(s->msg),
                     "remote read frame %zu at byte %zu: %llu bytes, over the limit of %zu",
                     s->frames + 1, s->consumed, (unsigned long long)size, s->max_frame);
            return stream_fail(s, err, errlen);
        }
        size_t hdr = (size_t)(q - (p + off));
        if ((size_t)(p + n - q) < 4 || (size_t)(p + n - q) - 4 < size)
            break;
        uint32_t want = (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
        const uint8_t *data = q + 4;
        uint32_t got = crc32c(data, (size_t)size);
        char text[320];
        /* the frame's own bytes only: the same whichever way the stream was cut */
        if (got != want &&
            server_text(p + off, hdr + 4 + (size_t)size, false, text, sizeof(text))) {
            snprintf(s->msg, sizeof(s->msg),
                     "remote read answer ended with the server's error after frame %zu: %s",
                     s->frames, text);
            return stream_fail(s, err, errlen);
        }
        if (got != want) {
            snprintf(s->msg, sizeof(s->msg),
                     "remote read frame %zu at byte %zu: CRC-32C 0x%08x does not match "
                     "0x%08x of its %llu bytes",
                     s->frames + 1, s->consumed, want, got, (unsigned long long)size);
            return stream_fail(s, err, errlen);
        }
        char why[400];
        if (read_frame(s, data, (size_t)size, why, sizeof(why)) < 0) {
            snprintf(s->msg, sizeof(s->msg), "remote read frame %zu at byte %zu: %s", s->frames + 1,
                     s->consumed, why);
            return stream_fail(s, err, errlen);
        }
        s->frames++;
        off += hdr + 4 + (size_t)size;
        s->consumed += hdr + 4 + (size_t)size;
    }
    return (long)off;
}

static void pend_add(struct rr_stream *s, const uint8_t *p, size_t n)
{
    if (n == 0)
        return;
    if (s->npend + n > s->cap_pend) {
        size_t cap = s->cap_pend ? s->cap_pend : 4096;
        while (cap < s->npend + n)
            cap *= 2;
        s->pend = xrealloc(s->pend, cap);
        s->cap_pend = cap;
    }
    memcpy(s->pend + s->npend, p, n);
    s->npend += n;
}

int rr_stream_feed(struct rr_stream *s, const void *buf, size_t len, char *err, size_t errlen)
{
    const uint8_t *p = buf;
    long used;

    if (s->failed)
        return stream_fail(s, err, errlen);
    s->fed = true;
    if (len > s->max_total - s->total) {
        snprintf(s->msg, sizeof(s->msg), "remote read answer over the limit of %zu bytes",
                 s->max_total);
        return stream_fail(s, err, errlen);
    }
    s->total += len;

    /*
     * Complete the frame left unfinished by the last call, a little at a time: copy just
     * enough bytes for its header, then for the whole frame, so that the bytes after it are
     * read in place.
     */
    while (s->npend && len) {
        const uint8_t *q = s->pend;
        uint64_t size;
        int rc = pb_varint(&q, s->pend + s->npend, &size);
        size_t want;
        if (rc == -1) {
            want = 1; /* the length itself is cut: one byte more */
        } else {
            size_t hdr = (size_t)(q - s->pend);
            if (rc == -2 || size > s->max_frame)
                want = 0; /* read_frames says what is wrong */
            else
                want = hdr + 4 + (size_t)size - s->npend;
        }
        size_t take = want < len ? want : len;
        pend_add(s, p, take);
        p += take;
        len -= take;
        used = read_frames(s, s->pend, s->npend, err, errlen);
        if (used < 0)
            return -1;
        if ((size_t)used == s->npend)
            s->npend = 0;
        else if (want == 0)
            break; /* cannot happen: read_frames failed */
    }
    if (!len)
        return 0;
    used = read_frames(s, p, len, err, errlen);
    if (used < 0)
        return -1;
    pend_add(s, p + used, len - (size_t)used);
    return 0;
}

static void results_free(struct rr_stream *s)
{
    for (size_t i = 0; i < s->nq; i++) {
        matrix_free(&s->q[i].m);
        free(s->q[i].slot);
        s->q[i].slot = NULL;
        s->q[i].nslot = 0;
        s->q[i].cap = 0;
    }
}

int rr_stream_finish(struct rr_stream *s, struct matrix *out, char *err, size_t errlen)
{
    for (size_t i = 0; i < s->nq; i++)
        out[i] = (struct matrix){0};
    char text[320];
    if (!s->failed && s->npend && server_text(s->pend, s->npend, true, text, sizeof(text))) {
        snprintf(s->msg, sizeof(s->msg),
                 "remote read answer ended with the server's error after frame %zu: %s", s->frames,
                 text);
        s->failed = true;
    }
    if (!s->failed && s->npend) {
        snprintf(s->msg, sizeof(s->msg),
                 "remote read answer truncated: it ends %zu bytes into frame %zu (byte %zu)",
                 s->npend, s->frames + 1, s->consumed);
        s->failed = true;
    }
    for (size_t i = 0; i < s->nq && !s->failed; i++) {
        char why[400];
        if (deliver(s, i, why, sizeof(why)) < 0) {
            snprintf(s->msg, sizeof(s->msg), "remote read answer: %s", why);
            s->failed = true;
        }
    }
    if (s->failed) {
        results_free(s);
        return stream_fail(s, err, errlen);
    }
    for (size_t i = 0; i < s->nq; i++) {
        struct rr_result *r = &s->q[i];
        size_t k = 0;
        shrink(r);
        /* A series with no sample (all clipped, or sent without chunks) is not a series. */
        for (size_t j = 0; j < r->m.n; j++) {
            if (r->m.s[j].n)
                r->m.s[k++] = r->m.s[j];
            else
                series_free(&r->m.s[j]);
        }
        r->m.n = k;
        if (!k) {
            free(r->m.s);
            r->m.s = NULL;
        }
        out[i] = r->m;
        r->m = (struct matrix){0};
        free(r->slot);
        r->slot = NULL;
        r->nslot = 0;
        r->cap = 0;
    }
    /* The stream is used up: a second finish gives empty results, not the same series twice. */
    s->failed = true;
    snprintf(s->msg, sizeof(s->msg), "remote read answer already finished");
    return 0;
}

void rr_stream_free(struct rr_stream *s)
{
    if (!s)
        return;
    results_free(s);
    free(s->q);
    free(s->pend);
    free(s);
}
