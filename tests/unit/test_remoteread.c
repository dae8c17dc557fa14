/*
 * Unit tests of enforcer/remoteread.c. The request: exact bytes after snappy for a known
 * query, argument errors. The stream reader: answers captured from a real Prometheus 2.42
 * (tests/fixtures/remoteread, see SOURCE there) decoded whole, a byte at a time and in random
 * pieces, compared sample by sample with what Prometheus's PromQL API says the raw samples are;
 * staleness markers, NaN payloads and infinities bit for bit; series split across frames;
 * several queries in one answer; clipping. And every error on frames built here: truncation at
 * every byte, bad CRC, frame and total caps, malformed protobuf, unknown chunk encodings,
 * query index out of range, out-of-order and overlapping chunks, a series coming back, and an
 * error message Prometheus appends to a stream it cannot finish.
 *
 * RR_BENCH=<file> [RR_BENCH_QUERIES=n] instead decodes that capture a few times and prints
 * the throughput (tests/gen/remoteread_capture.py --large writes one).
 */
#include "remoteread.c"

#include <inttypes.h>
#include <time.h>

#include "test.h"
#include "xorenc.h"

#define FIXTURES "tests/fixtures/remoteread/"
#define STALE    UINT64_C(0x7ff0000000000002)
#define GO_NAN   UINT64_C(0x7ff8000000000001)

static uint64_t vbits(const struct point *p)
{
    uint64_t u;
    memcpy(&u, &p->v, 8);
    return u;
}

/* ---- reading a stream in pieces -------------------------------------------------------- */

/*
 * What rr_stream_on_series hands over, copied per query; the callback fails at call `fail_at`
 * (0: never). held: the points the reader held in all at the last call, through its series.
 */
struct collect {
    struct matrix m[8];
    size_t calls, fail_at;
    const struct rr_stream *s;
    size_t max_held;
};

static size_t points_held(const struct rr_stream *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nq; i++)
        for (size_t j = 0; j < s->q[i].m.n; j++)
            n += s->q[i].m.s[j].n;
    return n;
}

static int collect(void *arg, size_t query, const struct series *se, char *err, size_t errlen)
{
    struct collect *c = arg;
    c->calls++;
    size_t held = points_held(c->s);
    if (held > c->max_held)
        c->max_held = held;
    if (c->fail_at && c->calls == c->fail_at)
        return err_printf(err, errlen, "callback refuses series %zu", c->calls);
    struct matrix *m = &c->m[query];
    m->s = xrealloc(m->s, (m->n + 1) * sizeof(*m->s));
    struct series *d = &m->s[m->n++];
    labels_copy(&d->labels, &se->labels);
    d->n = se->n;
    d->p = xmalloc(se->n * sizeof(*d->p));
    memcpy(d->p, se->p, se->n * sizeof(*d->p));
    return 0;
}

/*
 * Feed b[0..len) to a fresh reader in pieces: way 0 whole, 1 a byte at a time, otherwise
 * pseudo-random sizes from 1 to 300 seeded by `way`. clip: NULL or {start, end} per query.
 * With c, series are handed to collect() as they complete.
 */
static int read_stream_with(const uint8_t *b, size_t len, size_t nq, unsigned way,
                            const int64_t *clip, struct collect *c, struct matrix *out, char *err,
                            size_t errlen)
{
    struct rr_stream *s = rr_stream_new(nq, 0, 0);
    uint64_t x = way * 2654435761u + 1;
    size_t off = 0;
    int rc = 0;

    if (c) {
        c->s = s;
        TEST_CHECK_INT(rr_stream_on_series(s, collect, c), 0);
    }
    for (size_t i = 0; clip && i < nq; i++)
        rr_stream_clip(s, i, clip[2 * i], clip[2 * i + 1]);
    while (off < len && rc == 0) {
        size_t n = len - off;
        if (way == 1) {
            n = 1;
        } else if (way > 1) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            n = 1 + x % 300;
            if (n > len - off)
                n = len - off;
        }
        rc = rr_stream_feed(s, b + off, n, err, errlen);
        off += n;
    }
    if (rc == 0)
        rc = rr_stream_finish(s, out, err, errlen);
    else
        rr_stream_finish(s, out, NULL, 0);
    if (len)
        TEST_CHECK_INT(rr_stream_on_series(s, collect, c), -1); /* too late */
    rr_stream_free(s);
    return rc;
}

static int read_stream(const uint8_t *b, size_t len, size_t nq, unsigned way, const int64_t *clip,
                       struct matrix *out, char *err, size_t errlen)
{
    return read_stream_with(b, len, nq, way, clip, NULL, out, err, errlen);
}

static bool matrix_same(const struct matrix *a, const struct matrix *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (!labels_equal(&a->s[i].labels, &b->s[i].labels) || a->s[i].n != b->s[i].n)
            return false;
        for (size_t j = 0; j < a->s[i].n; j++)
            if (a->s[i].p[j].t != b->s[i].p[j].t || vbits(&a->s[i].p[j]) != vbits(&b->s[i].p[j]))
                return false;
    }
    return true;
}

static void matrices_free(struct matrix *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        matrix_free(&m[i]);
}

static const struct series *find(const struct matrix *m, const char *labels)
{
    for (size_t i = 0; i < m->n; i++) {
        char *f = labels_format(&m->s[i].labels);
        bool eq = strcmp(f, labels) == 0;
        free(f);
        if (eq)
            return &m->s[i];
    }
    return NULL;
}

/*
 * Compare with <name>.expected (what /api/v1/query said, staleness markers left out since
 * PromQL never returns them): the same series per query, the same samples bit for bit (NaN
 * only as NaN: the JSON cannot carry its payload). Returns the number of differences.
 */
static int compare_expected(const char *path, const struct matrix *m, size_t nq)
{
    char *text = test_read_file(path, NULL);
    int bad = 0;
    long q = -1;
    const struct series *s = NULL;
    size_t j = 0, nseries = 0, seen[16] = {0};

    if (!text) {
        fprintf(stderr, "cannot read '%s'\n", path);
        return 1;
    }
    /* The stale-free view of a decoded series is walked with j, skipping markers. */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        if (strncmp(line, "query ", 6) == 0) {
            q = strtol(line + 6, NULL, 10);
            s = NULL;
            continue;
        }
        if (q < 0 || (size_t)q >= nq) {
            bad++;
            continue;
        }
        if (strncmp(line, "series ", 7) == 0) {
            if (s) {
                while (j < s->n && vbits(&s->p[j]) == STALE)
                    j++;
                if (j != s->n) {
                    fprintf(stderr, "%s: series ends early in the expected file\n", path);
                    bad++;
                }
            }
            s = find(&m[q], line + 7);
            j = 0;
            nseries++;
            seen[q < 16 ? q : 15]++;
            if (!s) {
                fprintf(stderr, "%s: query %ld: no series %s\n", path, q, line + 7);
                bad++;
            }
            continue;
        }
        if (!s)
            continue;
        long long ms;
        char val[32];
        if (sscanf(line, "%lld %31s", &ms, val) != 2) {
            bad++;
            continue;
        }
        while (j < s->n && vbits(&s->p[j]) == STALE)
            j++;
        if (j == s->n) {
            fprintf(stderr, "%s: missing sample %s\n", path, line);
            bad++;
            continue;
        }
        const struct point *p = &s->p[j++];
        bool ok = p->t == (double)ms / 1000.0;
        if (strcmp(val, "NaN") == 0)
            ok = ok && isnan(p->v);
        else
            ok = ok && vbits(p) == strtoull(val, NULL, 16);
        if (!ok) {
            fprintf(stderr, "%s: sample %s decoded as %.3f %016" PRIx64 "\n", path, line, p->t,
                    vbits(p));
            bad++;
        }
    }
    if (s) {
        while (j < s->n && vbits(&s->p[j]) == STALE)
            j++;
        if (j != s->n)
            bad++;
    }
    for (size_t i = 0; i < nq && i < 16; i++) {
        if (seen[i] != m[i].n) {
            fprintf(stderr, "%s: query %zu: %zu series expected, %zu decoded\n", path, i, seen[i],
                    m[i].n);
            bad++;
        }
    }
    free(text);
    return bad;
}

/* The remote-read range from the expected file's header line. */
static void expected_range(const char *path, int64_t *start, int64_t *end)
{
    char *text = test_read_file(path, NULL);
    long long a = 0, b = 0;
    if (text)
        sscanf(text, "# remote read [%lld, %lld]", &a, &b);
    *start = a;
    *end = b;
    free(text);
}

/* Decode fixture `name` with `nq` queries in several chunkings, clipped to its range. */
static int fixture(const char *name, size_t nq, struct matrix *out, size_t *frames)
{
    char path[256], err[512];
    size_t len = 0;
    snprintf(path, sizeof(path), FIXTURES "%s.bin", name);
    uint8_t *b = (uint8_t *)test_read_file(path, &len);
    int64_t clip[16];
    snprintf(path, sizeof(path), FIXTURES "%s.expected", name);
    expected_range(path, &clip[0], &clip[1]);
    for (size_t i = 1; i < nq; i++)
        clip[2 * i] = clip[0], clip[2 * i + 1] = clip[1];

    TEST_CHECK(b != NULL);
    if (!b)
        return -1;
    int rc = read_stream(b, len, nq, 0, clip, out, err, sizeof(err));
    TEST_CHECK_INT(rc, 0);
    if (rc)
        fprintf(stderr, "%s: %s\n", name, err);
    TEST_CHECK_INT(compare_expected(path, out, nq), 0);

    /*
     * Every other way of cutting the stream gives the same matrices, and so do the series
     * handed over one by one (rr_stream_on_series), while finish then returns none.
     */
    for (unsigned way = 1; way < 6; way++) {
        struct matrix again[8];
        TEST_CHECK_INT(read_stream(b, len, nq, way, clip, again, err, sizeof(err)), 0);
        for (size_t i = 0; i < nq; i++)
            TEST_CHECK(matrix_same(&out[i], &again[i]));
        matrices_free(again, nq);
        struct collect c = {0};
        TEST_CHECK_INT(read_stream_with(b, len, nq, way, clip, &c, again, err, sizeof(err)), 0);
        for (size_t i = 0; i < nq; i++) {
            TEST_CHECK(matrix_same(&out[i], &c.m[i]));
            TEST_CHECK_INT(again[i].n, 0);
        }
        matrices_free(again, nq);
        matrices_free(c.m, nq);
    }
    if (frames) {
        struct rr_stream *s = rr_stream_new(nq, 0, 0);
        rr_stream_feed(s, b, len, err, sizeof(err));
        *frames = rr_stream_frames(s);
        rr_stream_free(s);
    }
    free(b);
    return rc;
}

/* ---- the captured answers -------------------------------------------------------------- */

TEST(backfilled_blocks)
{
    struct matrix m[1];
    size_t frames = 0;
    if (fixture("backfill", 1, m, &frames) < 0)
        return;
    TEST_CHECK_INT(m[0].n, 3);
    /* 1024-byte frames: the long series come in several frames, merged into one series. */
    TEST_CHECK(frames > m[0].n + 3);
    const struct series *irr = find(&m[0], "{__name__=\"rr_backfill_gauge\",pod=\"irregular\"}");
    TEST_CHECK(irr != NULL);
    if (irr) {
        TEST_CHECK_INT(irr->n, 900);
        bool nan = false, pinf = false, ninf = false, negzero = false;
        int64_t maxgap = 0, mingap = INT64_MAX;
        for (size_t i = 0; i < irr->n; i++) {
            uint64_t v = vbits(&irr->p[i]);
            nan |= v == GO_NAN; /* "NaN" parsed by Go: math.NaN(), payload 1 */
            pinf |= v == UINT64_C(0x7ff0000000000000);
            ninf |= v == UINT64_C(0xfff0000000000000);
            negzero |= v == UINT64_C(0x8000000000000000);
            if (i) {
                int64_t gap = llround((irr->p[i].t - irr->p[i - 1].t) * 1000);
                maxgap = gap > maxgap ? gap : maxgap;
                mingap = gap < mingap ? gap : mingap;
                TEST_CHECK(gap > 0);
            }
        }
        TEST_CHECK(nan && pinf && ninf && negzero);
        TEST_CHECK(mingap < 1000 && maxgap > 600000); /* irregular */
    }
    matrices_free(m, 1);
}

TEST(scraped_head_with_staleness)
{
    struct matrix m[1];
    if (fixture("scrape", 1, m, NULL) < 0)
        return;
    TEST_CHECK_INT(m[0].n, 3);
    const struct series *flap = NULL, *gauge = NULL;
    for (size_t i = 0; i < m[0].n; i++) {
        const char *name = labels_get(&m[0].s[i].labels, "__name__");
        if (name && strcmp(name, "rr_scrape_flap") == 0)
            flap = &m[0].s[i];
        if (name && strcmp(name, "rr_scrape_gauge") == 0)
            gauge = &m[0].s[i];
    }
    TEST_CHECK(flap && gauge);
    if (!flap || !gauge)
        return matrices_free(m, 1);
    /* Vanished twice: two staleness markers, each after a sample and before the return. */
    size_t stale = 0, first = SIZE_MAX;
    for (size_t i = 0; i < flap->n; i++) {
        if (vbits(&flap->p[i]) == STALE) {
            stale++;
            TEST_CHECK(i > 0 && vbits(&flap->p[i - 1]) != STALE);
            if (first == SIZE_MAX)
                first = i;
        }
    }
    TEST_CHECK_INT(stale, 2);
    TEST_CHECK_INT(first, 4);                          /* scrapes 1-4, then gone */
    TEST_CHECK(vbits(&flap->p[flap->n - 1]) == STALE); /* gone at the end too */
    bool nan = false, inf = false;
    for (size_t i = 0; i < gauge->n; i++) {
        nan |= vbits(&gauge->p[i]) == GO_NAN;
        inf |= vbits(&gauge->p[i]) == UINT64_C(0x7ff0000000000000);
    }
    TEST_CHECK(nan && inf);
    TEST_CHECK(labels_get(&gauge->labels, "instance") != NULL);
    matrices_free(m, 1);
}

TEST(several_queries)
{
    struct matrix m[4];
    if (fixture("multi", 4, m, NULL) < 0)
        return;
    TEST_CHECK_INT(m[0].n, 1);
    TEST_CHECK_INT(m[1].n, 0); /* matches nothing */
    TEST_CHECK_INT(m[2].n, 2); /* pod!="steady" */
    TEST_CHECK_INT(m[3].n, 1);
    if (m[0].n)
        TEST_CHECK_STR(labels_get(&m[0].s[0].labels, "__name__"), "rr_scrape_flap");
    for (size_t i = 0; i < m[2].n; i++)
        TEST_CHECK(strcmp(labels_get(&m[2].s[i].labels, "pod"), "steady") != 0);
    matrices_free(m, 4);

    /* Told there is one query, the reader refuses the second query's frames. */
    char err[512];
    size_t len = 0;
    uint8_t *b = (uint8_t *)test_read_file(FIXTURES "multi.bin", &len);
    TEST_CHECK_INT(read_stream(b, len, 1, 0, NULL, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "query index 2 out of range (1 query asked)");
    TEST_CHECK_INT(m[0].n, 0);
    free(b);
}

TEST(clip_to_the_window)
{
    char err[512];
    size_t len = 0, blen = 0;
    uint8_t *b = (uint8_t *)test_read_file(FIXTURES "window.bin", &len);
    uint8_t *bb = (uint8_t *)test_read_file(FIXTURES "backfill.bin", &blen);
    char *r = test_read_file(FIXTURES "window.range", NULL);
    long long lo = 0, hi = 0;
    TEST_CHECK(b && bb && r && sscanf(r, "%lld %lld", &lo, &hi) == 2);
    if (!b || !bb || !r)
        return;
    struct matrix win[1], clipped[1];
    int64_t clip[2] = {lo, hi};
    /*
     * Prometheus 2.42 re-encodes the chunks that stick out of the range asked
     * (tsdb/querier.go, trimFront/trimBack): the answer for the window holds only its samples.
     * Clipping the whole series read earlier to the same window must give exactly those.
     */
    TEST_CHECK_INT(read_stream(b, len, 1, 0, NULL, win, err, sizeof(err)), 0);
    TEST_CHECK_INT(read_stream(bb, blen, 1, 7, clip, clipped, err, sizeof(err)), 0);
    TEST_CHECK_INT(win[0].n, 1);
    const struct series *c =
        find(&clipped[0], "{__name__=\"rr_backfill_gauge\",pod=\"irregular\"}");
    TEST_CHECK(c != NULL);
    if (win[0].n == 1 && c) {
        const struct series *w = &win[0].s[0];
        TEST_CHECK(w->n > 100);
        TEST_CHECK_INT(c->n, w->n);
        for (size_t i = 0; i < w->n && i < c->n; i++)
            TEST_CHECK(w->p[i].t == c->p[i].t && vbits(&w->p[i]) == vbits(&c->p[i]));
        TEST_CHECK(llround(w->p[0].t * 1000) >= lo && llround(w->p[w->n - 1].t * 1000) <= hi);
    }
    /* steady and the counter end within the first hours: no sample left, no series. */
    TEST_CHECK_INT(clipped[0].n, 1);
    matrices_free(clipped, 1);

    /* A window with no sample at all: the series is dropped, not returned empty. */
    int64_t none[2] = {0, 1};
    TEST_CHECK_INT(read_stream(bb, blen, 1, 0, none, clipped, err, sizeof(err)), 0);
    TEST_CHECK_INT(clipped[0].n, 0);
    matrices_free(win, 1);
    struct rr_stream *s = rr_stream_new(1, 0, 0);
    TEST_CHECK_INT(rr_stream_clip(s, 1, 0, 1), -1);
    rr_stream_free(s);
    free(b);
    free(bb);
    free(r);
}

/* ---- errors, on frames built here -------------------------------------------------------- */

struct chunk_spec {
    uint64_t type;
    const uint8_t *data;
    size_t len;
};

/* A frame with arbitrary data and a correct CRC. */
static void raw_frame(struct sbuf *st, const void *data, size_t len)
{
    pb_put_varint(st, len);
    uint32_t crc = crc32c(data, len);
    char be[4] = {(char)(crc >> 24), (char)(crc >> 16), (char)(crc >> 8), (char)crc};
    sbuf_add(st, be, 4);
    sbuf_add(st, data, len);
}

/* Append one frame: query index qi, one series with the label pairs and chunks given. */
static void add_frame(struct sbuf *stream, int64_t qi, const char *const *lv, size_t nlv,
                      const struct chunk_spec *c, size_t nc)
{
    struct sbuf msg = {0}, ser = {0}, sub = {0};
    for (size_t i = 0; i + 1 < nlv; i += 2) {
        sbuf_reset(&sub);
        pb_put_bytes(&sub, LABEL_NAME, lv[i], strlen(lv[i]));
        pb_put_bytes(&sub, LABEL_VALUE, lv[i + 1], strlen(lv[i + 1]));
        pb_put_bytes(&ser, SERIES_LABELS, sub.buf, sub.len);
    }
    for (size_t i = 0; i < nc; i++) {
        sbuf_reset(&sub);
        pb_put_uint(&sub, 1, 0);
        pb_put_uint(&sub, 2, 0);
        pb_put_uint(&sub, CHUNK_TYPE, c[i].type);
        pb_put_bytes(&sub, CHUNK_DATA, c[i].data, c[i].len);
        pb_put_bytes(&ser, SERIES_CHUNKS, sub.buf, sub.len);
    }
    pb_put_bytes(&msg, CHUNKED_SERIES, ser.buf ? ser.buf : "", ser.len);
    if (qi)
        pb_put_uint(&msg, CHUNKED_QUERY_INDEX, (uint64_t)qi);
    raw_frame(stream, msg.buf, msg.len);
    sbuf_free(&msg);
    sbuf_free(&ser);
    sbuf_free(&sub);
}

/* A chunk of samples at t0, t0 + step, ... with values 1, 2, ... */
static struct chunk_spec mkchunk(struct xorenc *e, int64_t t0, int64_t step, int n)
{
    xorenc_init(e);
    for (int i = 0; i < n; i++) {
        double v = i + 1;
        uint64_t u;
        memcpy(&u, &v, 8);
        xorenc_add(e, t0 + step * i, u);
    }
    return (struct chunk_spec){CHUNK_XOR, e->b, xorenc_len(e)};
}

static const char *const LA[] = {"__name__", "x", "pod", "a"};
static const char *const LB[] = {"pod", "b", "__name__", "x"}; /* unsorted on purpose */

/* Two series, the first split over two frames, in a stream of 3 frames. */
static void good_stream(struct sbuf *st, struct xorenc *e)
{
    struct chunk_spec c;
    c = mkchunk(e, 1000, 1000, 3);
    add_frame(st, 0, LA, 4, &c, 1);
    c = mkchunk(e, 4000, 1000, 3);
    add_frame(st, 0, LA, 4, &c, 1);
    c = mkchunk(e, 1000, 1000, 2);
    add_frame(st, 0, LB, 4, &c, 1);
}

static int feed_all(const struct sbuf *st, size_t nq, size_t max_frame, size_t max_total,
                    struct matrix *m, char *err, size_t errlen)
{
    struct rr_stream *s = rr_stream_new(nq, max_frame, max_total);
    int rc = rr_stream_feed(s, st->buf, st->len, err, errlen);
    if (rc == 0)
        rc = rr_stream_finish(s, m, err, errlen);
    else
        rr_stream_finish(s, m, NULL, 0);
    rr_stream_free(s);
    return rc;
}

TEST(built_stream_merges_frames)
{
    struct xorenc *e = malloc(sizeof(*e));
    struct sbuf st = {0};
    struct matrix m[1];
    char err[512];
    good_stream(&st, e);
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), 0);
    TEST_CHECK_INT(m[0].n, 2);
    if (m[0].n == 2) {
        TEST_CHECK_INT(m[0].s[0].n, 6);
        TEST_CHECK_DBL(m[0].s[0].p[5].t, 6.0, 0);
        char *f = labels_format(&m[0].s[1].labels);
        TEST_CHECK_STR(f, "{__name__=\"x\",pod=\"b\"}");
        free(f);
    }
    matrices_free(m, 1);
    sbuf_free(&st);
    free(e);
}

TEST(truncated_everywhere)
{
    struct xorenc *e = malloc(sizeof(*e));
    struct sbuf st = {0};
    struct matrix m[1];
    char err[512];
    good_stream(&st, e);

    /* Frame boundaries: where a cut is a shorter but well-formed stream (HTTP says the rest). */
    size_t bounds[8], nb = 0, off = 0;
    while (off < st.len) {
        const uint8_t *p = (const uint8_t *)st.buf + off;
        uint64_t size;
        pb_varint(&p, (const uint8_t *)st.buf + st.len, &size);
        off = (size_t)(p - (const uint8_t *)st.buf) + 4 + size;
        bounds[nb++] = off;
    }
    TEST_CHECK_INT(nb, 3);
    for (size_t cut = 1; cut < st.len; cut++) {
        bool boundary = false;
        for (size_t i = 0; i < nb; i++)
            boundary |= bounds[i] == cut;
        struct sbuf part = {0};
        sbuf_add(&part, st.buf, cut);
        err[0] = '\0';
        int rc = feed_all(&part, 1, 0, 0, m, err, sizeof(err));
        TEST_CHECK_INT(rc, boundary ? 0 : -1);
        if (!boundary) {
            TEST_CHECK_CONTAINS(err, "remote read answer truncated");
            TEST_CHECK_INT(m[0].n, 0);
        }
        matrices_free(m, 1);
        sbuf_free(&part);
    }
    free(e);
    sbuf_free(&st);
}

/*
 * Prometheus's read handler, failing after frames were sent (status 200 already), appends
 * http.Error's text to the stream: the message says what the server said, whether the text
 * is shorter than the frame its first byte announces (the end of the stream) or longer (the
 * CRC), and the answer still fails. Seen with Prometheus 2.42 and its out-of-order head in
 * e2e-enforcer_incremental (the message was "answer truncated" before).
 */
TEST(server_error_after_frames)
{
    struct xorenc *e = malloc(sizeof(*e));
    struct sbuf st = {0};
    struct matrix m[1];
    char err[512];
    static const char *const texts[] = {
        /* 'c' announces 99 bytes: 82 come, the stream ends */
        "cannot populate chunk 1234567890 from block 01ARZ3NDEKTSV4RRFFQ69G5FAV: not found\n",
        /* 'e' announces 101 bytes: more come, the CRC fails */
        "expanding series: cannot populate chunk 8 from block 01ARZ3NDEKTSV4RRFFQ69G5FAV: not "
        "found (and a longer explanation that runs past the announced frame)\n",
    };
    for (size_t i = 0; i < ARRAY_LEN(texts); i++) {
        good_stream(&st, e);
        sbuf_add(&st, texts[i], strlen(texts[i]));
        err[0] = '\0';
        TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
        TEST_CHECK_CONTAINS(err,
                            "remote read answer ended with the server's error after frame 3: ");
        TEST_CHECK_CONTAINS(err, "cannot populate chunk");
        TEST_CHECK(strchr(err, '\n') == NULL);
        TEST_CHECK_INT(m[0].n, 0);
        /* fed a byte at a time: the same */
        struct rr_stream *s = rr_stream_new(1, 0, 0);
        int rc = 0;
        for (size_t b = 0; b < st.len && rc == 0; b++)
            rc = rr_stream_feed(s, st.buf + b, 1, err, sizeof(err));
        if (rc == 0)
            rc = rr_stream_finish(s, m, err, sizeof(err));
        else
            rr_stream_finish(s, m, NULL, 0);
        TEST_CHECK_INT(rc, -1);
        TEST_CHECK_CONTAINS(err, "the server's error after frame 3: ");
        TEST_CHECK_INT(m[0].n, 0);
        rr_stream_free(s);
        sbuf_free(&st);
    }
    /* A binary tail is no text: still "truncated" */
    good_stream(&st, e);
    sbuf_add(&st, "\x20\x01\x02\x03\x04\x05\n", 7);
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "remote read answer truncated");
    sbuf_free(&st);
    free(e);
}

TEST(crc_and_caps)
{
    struct xorenc *e = malloc(sizeof(*e));
    struct sbuf st = {0};
    struct matrix m[1];
    char err[512];
    good_stream(&st, e);

    /* Any flipped bit after the first length varint: CRC (or, in a length, another error). */
    for (size_t i = 1; i < st.len; i++) {
        st.buf[i] ^= 0x10;
        TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
        TEST_CHECK_INT(m[0].n, 0);
        st.buf[i] ^= 0x10;
    }
    st.buf[st.len - 1] ^= 1;
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "remote read frame 3 at byte");
    TEST_CHECK_CONTAINS(err, "CRC-32C");
    st.buf[st.len - 1] ^= 1;

    /* CRC-32C check value (RFC 3720 B.4 lists 0xe3069283 for "123456789"). */
    TEST_CHECK(crc32c((const uint8_t *)"123456789", 9) == 0xe3069283u);

    /* Frame cap: the first frame is over 30 bytes; said before its data arrives. */
    struct rr_stream *s = rr_stream_new(1, 30, 0);
    TEST_CHECK_INT(rr_stream_feed(s, st.buf, 1, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "remote read frame 1 at byte 0:");
    TEST_CHECK_CONTAINS(err, "over the limit of 30");
    /* A failed reader keeps failing with the same message. */
    char err2[512];
    TEST_CHECK_INT(rr_stream_feed(s, st.buf + 1, 1, err2, sizeof(err2)), -1);
    TEST_CHECK_STR(err2, err);
    TEST_CHECK_INT(rr_stream_finish(s, m, err2, sizeof(err2)), -1);
    TEST_CHECK_STR(err2, err);
    TEST_CHECK_INT(m[0].n, 0);
    rr_stream_free(s);

    /* Total cap: counted over every byte fed. */
    TEST_CHECK_INT(feed_all(&st, 1, 0, st.len - 1, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "remote read answer over the limit of");
    TEST_CHECK_INT(feed_all(&st, 1, 0, st.len, m, err, sizeof(err)), 0);
    matrices_free(m, 1);
    /* Without a cap, a length that would overflow with its header is still refused. */
    struct sbuf huge = {0};
    pb_put_varint(&huge, UINT64_MAX - 2);
    TEST_CHECK_INT(feed_all(&huge, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "18446744073709551613 bytes, over the limit of 9223372036854775807");
    sbuf_free(&huge);
    /* A frame length of 11 varint bytes. */
    struct sbuf bad = {0};
    sbuf_add(&bad, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
    TEST_CHECK_INT(feed_all(&bad, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "frame length overflows 64 bits");
    sbuf_free(&bad);
    sbuf_free(&st);
    free(e);
}

TEST(malformed_and_unknown)
{
    struct xorenc *e = malloc(sizeof(*e));
    struct sbuf st = {0};
    struct matrix m[2];
    char err[512];
    struct chunk_spec c;

    raw_frame(&st, "\x0a\x05\x0a\x03", 4); /* a series whose length runs past the frame */
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "remote read frame 1 at byte 0: malformed 'ChunkedReadResponse'");
    sbuf_reset(&st);
    raw_frame(&st, "\x0a\x04\x0a\x02\x12\x00", 6); /* a label without a name */
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "empty label name");
    sbuf_reset(&st);
    raw_frame(&st, "\x0a\x06\x0a\x04\x0a\x02\xc3\x28", 8); /* a name that is not UTF-8 */
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "not valid UTF-8");
    sbuf_reset(&st);

    const char *const dup[] = {"a", "1", "a", "2"};
    c = mkchunk(e, 0, 1, 2);
    add_frame(&st, 0, dup, 4, &c, 1);
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "label 'a' appears twice");
    sbuf_reset(&st);

    /* Unknown encodings, named by number. */
    for (uint64_t type = 0; type < 5; type++) {
        if (type == CHUNK_XOR)
            continue;
        c = mkchunk(e, 0, 1, 2);
        c.type = type;
        sbuf_reset(&st);
        add_frame(&st, 0, LA, 4, &c, 1);
        TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
        char want[64];
        snprintf(want, sizeof(want), "chunk encoding %llu (", (unsigned long long)type);
        TEST_CHECK_CONTAINS(err, want);
        TEST_CHECK_CONTAINS(err, "series {__name__=\"x\",pod=\"a\"}");
    }
    TEST_CHECK_CONTAINS(err, "chunk encoding 4 (not known to Prometheus 2.42) is not XOR (1)");

    /* Query index out of range, including negative. */
    sbuf_reset(&st);
    c = mkchunk(e, 0, 1, 2);
    add_frame(&st, 2, LA, 4, &c, 1);
    TEST_CHECK_INT(feed_all(&st, 2, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "query index 2 out of range (2 queries asked)");
    sbuf_reset(&st);
    add_frame(&st, -1, LA, 4, &c, 1);
    TEST_CHECK_INT(feed_all(&st, 2, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "query index -1 out of range");
    sbuf_reset(&st);
    add_frame(&st, 1, LA, 4, &c, 1);
    TEST_CHECK_INT(feed_all(&st, 2, 0, 0, m, err, sizeof(err)), 0);
    TEST_CHECK_INT(m[0].n, 0);
    TEST_CHECK_INT(m[1].n, 1);
    matrices_free(m, 2);

    /* A broken chunk inside: the series and the chunk's error are named. */
    sbuf_reset(&st);
    c = mkchunk(e, 0, 1, 3);
    c.len--;
    add_frame(&st, 0, LA, 4, &c, 1);
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "series {__name__=\"x\",pod=\"a\"}: XOR chunk sample 3 of 3");
    sbuf_free(&st);
    free(e);
}

TEST(order_and_repeats)
{
    struct xorenc *e = malloc(sizeof(*e)), *e2 = malloc(sizeof(*e2));
    struct sbuf st = {0};
    struct matrix m[1];
    char err[512];
    struct chunk_spec c[2];

    /* Overlapping chunks in one frame. */
    c[0] = mkchunk(e, 1000, 1000, 5);
    c[1] = mkchunk(e2, 3000, 1000, 5);
    add_frame(&st, 0, LA, 4, c, 2);
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "out-of-order sample: 3000 ms is not after the previous sample at "
                             "5000 ms");
    TEST_CHECK_INT(m[0].n, 0);

    /* A continuation frame going back in time. */
    sbuf_reset(&st);
    c[0] = mkchunk(e, 10000, 1000, 3);
    add_frame(&st, 0, LA, 4, c, 1);
    c[0] = mkchunk(e, 5000, 1000, 3);
    add_frame(&st, 0, LA, 4, c, 1);
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "remote read frame 2");
    TEST_CHECK_CONTAINS(err, "out-of-order sample: 5000 ms");

    /* A series that comes back after another one began. */
    sbuf_reset(&st);
    c[0] = mkchunk(e, 1000, 1000, 3);
    add_frame(&st, 0, LA, 4, c, 1);
    add_frame(&st, 0, LB, 4, c, 1);
    c[0] = mkchunk(e, 9000, 1000, 3);
    add_frame(&st, 0, LA, 4, c, 1);
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "remote read frame 3");
    TEST_CHECK_CONTAINS(err, "series {__name__=\"x\",pod=\"a\"} comes again after another "
                             "series began");

    /*
     * Prometheus 2.42 answers an error during a streamed read with http.Error after the frames
     * already sent: the text must not pass for the end of the answer.
     */
    sbuf_reset(&st);
    add_frame(&st, 0, LA, 4, c, 1);
    sbuf_puts(&st, "expanding series: context deadline exceeded\n");
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "remote read");
    TEST_CHECK_INT(m[0].n, 0);

    /* An empty answer (nothing matched) is a success with no series. */
    sbuf_reset(&st);
    TEST_CHECK_INT(feed_all(&st, 1, 0, 0, m, err, sizeof(err)), 0);
    TEST_CHECK_INT(m[0].n, 0);
    sbuf_free(&st);
    free(e);
    free(e2);
}

/* Series handed over as they complete: what is held, and failures after some were handed over. */
TEST(series_callback)
{
    struct xorenc *e = malloc(sizeof(*e));
    struct sbuf st = {0};
    struct matrix m[2];
    char err[512];
    struct chunk_spec c;

    /* A (6 points over 2 frames) is handed over when B begins; B at the end. */
    good_stream(&st, e);
    struct collect col = {0};
    TEST_CHECK_INT(
        read_stream_with((const uint8_t *)st.buf, st.len, 1, 0, NULL, &col, m, err, sizeof(err)),
        0);
    TEST_CHECK_INT(col.calls, 2);
    TEST_CHECK_INT(m[0].n, 0);
    TEST_CHECK_INT(col.m[0].n, 2);
    if (col.m[0].n == 2) {
        TEST_CHECK_INT(col.m[0].s[0].n, 6);
        TEST_CHECK_INT(col.m[0].s[1].n, 2);
        char *f = labels_format(&col.m[0].s[1].labels);
        TEST_CHECK_STR(f, "{__name__=\"x\",pod=\"b\"}");
        free(f);
    }
    /* When B is handed over, A's points are gone: one series' points at a time. */
    TEST_CHECK_INT(col.max_held, 6);
    matrices_free(col.m, 1);

    /* Byte by byte: the same. */
    col = (struct collect){0};
    TEST_CHECK_INT(
        read_stream_with((const uint8_t *)st.buf, st.len, 1, 1, NULL, &col, m, err, sizeof(err)),
        0);
    TEST_CHECK_INT(col.calls, 2);
    TEST_CHECK_INT(col.max_held, 6);
    matrices_free(col.m, 1);

    /* The callback fails on the second series (at finish): the answer fails, with its message. */
    col = (struct collect){.fail_at = 2};
    TEST_CHECK_INT(
        read_stream_with((const uint8_t *)st.buf, st.len, 1, 0, NULL, &col, m, err, sizeof(err)),
        -1);
    TEST_CHECK_CONTAINS(err, "callback refuses series 2");
    TEST_CHECK_INT(m[0].n, 0);
    matrices_free(col.m, 1);

    /* ... or on the first, while frames are read: the feed fails, later feeds too. */
    col = (struct collect){.fail_at = 1};
    TEST_CHECK_INT(
        read_stream_with((const uint8_t *)st.buf, st.len, 1, 1, NULL, &col, m, err, sizeof(err)),
        -1);
    TEST_CHECK_CONTAINS(err, "remote read frame 3");
    TEST_CHECK_CONTAINS(err, "callback refuses series 1");
    TEST_CHECK_INT(col.calls, 1);
    TEST_CHECK_INT(m[0].n, 0);
    matrices_free(col.m, 1);

    /*
     * Cut inside C's frame after A was handed over (B is complete only once C's frame is
     * whole): the answer fails all the same.
     */
    static const char *const LC[] = {"__name__", "x", "pod", "c"};
    c = mkchunk(e, 1000, 1000, 4);
    add_frame(&st, 0, LC, 4, &c, 1);
    col = (struct collect){0};
    TEST_CHECK_INT(read_stream_with((const uint8_t *)st.buf, st.len - 3, 1, 0, NULL, &col, m, err,
                                    sizeof(err)),
                   -1);
    TEST_CHECK_CONTAINS(err, "remote read answer truncated");
    TEST_CHECK_INT(col.calls, 1);
    TEST_CHECK_INT(m[0].n, 0);
    matrices_free(col.m, 1);

    /* A series that comes back after it was handed over still fails. */
    sbuf_reset(&st);
    c = mkchunk(e, 1000, 1000, 3);
    add_frame(&st, 0, LA, 4, &c, 1);
    add_frame(&st, 0, LB, 4, &c, 1);
    c = mkchunk(e, 9000, 1000, 3);
    add_frame(&st, 0, LA, 4, &c, 1);
    col = (struct collect){0};
    TEST_CHECK_INT(
        read_stream_with((const uint8_t *)st.buf, st.len, 1, 0, NULL, &col, m, err, sizeof(err)),
        -1);
    TEST_CHECK_CONTAINS(err, "comes again after another series began");
    TEST_CHECK_INT(col.calls, 1); /* refused before B would be handed over */
    matrices_free(col.m, 1);

    /* Two queries interleaved: each query's series is complete when its next one begins. */
    sbuf_reset(&st);
    c = mkchunk(e, 1000, 1000, 3);
    add_frame(&st, 0, LA, 4, &c, 1);
    add_frame(&st, 1, LA, 4, &c, 1);
    c = mkchunk(e, 4000, 1000, 2);
    add_frame(&st, 0, LA, 4, &c, 1);
    add_frame(&st, 1, LB, 4, &c, 1);
    col = (struct collect){0};
    TEST_CHECK_INT(
        read_stream_with((const uint8_t *)st.buf, st.len, 2, 0, NULL, &col, m, err, sizeof(err)),
        0);
    TEST_CHECK_INT(col.calls, 3);
    TEST_CHECK_INT(col.m[0].n, 1);
    TEST_CHECK_INT(col.m[1].n, 2);
    if (col.m[0].n == 1)
        TEST_CHECK_INT(col.m[0].s[0].n, 5);
    matrices_free(col.m, 2);
    matrices_free(m, 2);
    sbuf_free(&st);
    free(e);
}

/* ---- the request -------------------------------------------------------------------------- */

TEST(request_bytes)
{
    const struct rr_matcher ms[] = {
        {RR_EQ, "__name__", "gpu_busy"}, {RR_NEQ, "pod", ""}, {RR_RE, "ns", "ml-.*"}};
    const struct rr_query q[] = {{1700000000000, 1700001800000, ms, 3}, {-5, 0, ms, 1}};
    char *body, err[256];
    size_t len = 0;
    TEST_CHECK_INT(rr_encode_request(q, 2, &body, &len, err, sizeof(err)), 0);

    size_t n;
    TEST_CHECK(snappy_uncompressed_length(body, len, &n) == SNAPPY_OK);
    char *raw = malloc(n);
    TEST_CHECK(snappy_uncompress(body, len, raw, &n) == SNAPPY_OK);
    /*
     * Written out by hand from prompb/remote.proto and types.proto:
     * ReadRequest.queries (1) = Query {start (1), end (2), matchers (3) = LabelMatcher {type
     * (1, left out when EQ), name (2), value (3, left out when empty)}}, then
     * accepted_response_types (2), packed: [1].
     */
    static const uint8_t
        want
            [] =
                {
                    0x0a, 0x3c,                               /* queries, 60 bytes */
                    0x08, 0x80, 0xd0, 0x95, 0xff, 0xbc, 0x31, /* start 1700000000000 */
                    0x10, 0xc0, 0xbe, 0x83, 0x80, 0xbd, 0x31, /* end 1700001800000 */
                    0x1a, 0x14, 0x12, 0x08, '_',  '_',  'n',  'a',  'm',  'e',  '_',
                    '_',                                                       /* __name__ */
                    0x1a, 0x08, 'g',  'p',  'u',  '_',  'b',  'u',  's',  'y', /* ="gpu_busy" */
                    0x1a, 0x07, 0x08, 0x01, 0x12, 0x03, 'p',  'o',  'd',       /* pod!="" */
                    0x1a, 0x0d, 0x08, 0x02, 0x12, 0x02, 'n',  's',  0x1a, 0x05, 'm',
                    'l',  '-',  '.',  '*',  0x0a, 0x21, /* the second query */
                    0x08, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* start -5 */
                    0x1a, 0x14, 0x12, 0x08, '_',  '_',  'n',  'a',  'm',  'e',  '_',
                    '_', /* end 0 left out */
                    0x1a, 0x08, 'g',  'p',  'u',  '_',  'b',  'u',  's',  'y',  0x12,
                    0x01, 0x01, /* accepted_response_types:
                                   [STREAMED_XOR_CHUNKS]
                                 */
                };
    TEST_CHECK_INT(n, sizeof(want));
    TEST_CHECK(n == sizeof(want) && memcmp(raw, want, n) == 0);
    free(raw);
    free(body);
}

TEST(request_errors)
{
    const struct rr_matcher ok[] = {{RR_EQ, "__name__", "x"}};
    const struct rr_matcher noname[] = {{RR_EQ, NULL, "x"}};
    const struct rr_matcher badtype[] = {{(enum rr_match_type)7, "a", "x"}};
    char *body = (char *)"unchanged", err[256];
    size_t len = 9;
    struct rr_query q = {0, 10, ok, 1};

    TEST_CHECK_INT(rr_encode_request(&q, 0, &body, &len, err, sizeof(err)), -1);
    TEST_CHECK_STR(err, "remote read request without a query");
    TEST_CHECK(body == NULL && len == 0);
    q.nm = 0;
    TEST_CHECK_INT(rr_encode_request(&q, 1, &body, &len, err, sizeof(err)), -1);
    TEST_CHECK_STR(err, "remote read query 0 has no matcher");
    q = (struct rr_query){11, 10, ok, 1};
    TEST_CHECK_INT(rr_encode_request(&q, 1, &body, &len, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "starts at 11 ms, after its end 10");
    q = (struct rr_query){0, 10, noname, 1};
    TEST_CHECK_INT(rr_encode_request(&q, 1, &body, &len, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "matcher 0 has no name or value");
    q = (struct rr_query){0, 10, badtype, 1};
    TEST_CHECK_INT(rr_encode_request(&q, 1, &body, &len, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "unknown type 7");
    TEST_CHECK(body == NULL);
}

/* ---- throughput ------------------------------------------------------------------------- */

static int bench(const char *path)
{
    size_t len = 0,
           nq = getenv("RR_BENCH_QUERIES") ? strtoul(getenv("RR_BENCH_QUERIES"), NULL, 10) : 1;
    uint8_t *b = (uint8_t *)test_read_file(path, &len);
    char err[512];
    double best = 1e9, best_cpu = 1e9;
    size_t samples = 0, series = 0;
    if (!b || nq == 0 || nq > 64) {
        fprintf(stderr, "cannot read '%s'\n", path);
        return 1;
    }
    for (int round = 0; round < 5; round++) {
        struct timespec t0, t1, c0, c1;
        struct matrix m[64];
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        struct rr_stream *s = rr_stream_new(nq, 0, 0);
        /* 16 KiB pieces, as libcurl's write callback hands them over. */
        int rc = 0;
        for (size_t off = 0; off < len && rc == 0; off += 16384)
            rc =
                rr_stream_feed(s, b + off, len - off < 16384 ? len - off : 16384, err, sizeof(err));
        if (rc == 0)
            rc = rr_stream_finish(s, m, err, sizeof(err));
        samples = rr_stream_samples(s);
        rr_stream_free(s);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        if (rc) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        series = 0;
        for (size_t i = 0; i < nq; i++)
            series += m[i].n;
        matrices_free(m, nq);
        double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
        best = dt < best ? dt : best;
        best_cpu = cpu < best_cpu ? cpu : best_cpu;
    }
    printf("%s: %zu bytes, %zu series, %zu samples; best of 5: wall %.3f s (%.1f M samples/s, "
           "%.0f MB/s), CPU %.3f s (%.1f M samples/s)\n",
           path, len, series, samples, best, (double)samples / best / 1e6, (double)len / best / 1e6,
           best_cpu, (double)samples / best_cpu / 1e6);
    free(b);
    return 0;
}

int main(void)
{
    if (getenv("RR_BENCH"))
        return bench(getenv("RR_BENCH"));
    RUN(backfilled_blocks);
    RUN(scraped_head_with_staleness);
    RUN(several_queries);
    RUN(clip_to_the_window);
    RUN(built_stream_merges_frames);
    RUN(truncated_everywhere);
    RUN(server_error_after_frames);
    RUN(crc_and_caps);
    RUN(malformed_and_unknown);
    RUN(order_and_repeats);
    RUN(series_callback);
    RUN(request_bytes);
    RUN(request_errors);
    return test_done();
}
