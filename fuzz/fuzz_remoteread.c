/*
 * libFuzzer target for enforcer/remoteread.c (with xorchunk.c and common/pbwire.c under it).
 * The first input byte picks what the rest is:
 *   0-2  an answer stream (bytes after the selector: the number of queries, then the stream),
 *        fed once whole and once in pieces of pseudo-random sizes (as libcurl cuts it), which
 *        must agree exactly: both fail with the same message, or both give the same matrices.
 *        On success every series has points, ascending, and labels sorted with unique names.
 *        A third run in pieces hands the series over as they complete (rr_stream_on_series):
 *        the same outcome and message, the same series in the same order, finish's matrices
 *        empty, and at each hand-over the reader holds points of one series per query only.
 *   3    a request: queries and matchers drawn from the bytes, encoded, uncompressed with
 *        snappy and decoded back with pbwire; every field must come back as it went in.
 *   4    samples drawn from the bytes, encoded as XOR chunks in frames of one or more series
 *        (continuations included), read back: exactly the same samples, bit for bit.
 * Seeds: fuzz/corpus/remoteread (the Prometheus captures of tests/fixtures/remoteread).
 */
#include "pbwire.c"
#include "xorchunk.c"
#include "remoteread.c"
#include "series.c"

#include "../tests/unit/xorenc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211u;
    return h | 1;
}

/* What rr_stream_on_series hands over, per query. */
struct collected {
    const struct rr_stream *s;
    struct matrix m[4];
};

static int collect(void *arg, size_t query, const struct series *se, char *err, size_t errlen)
{
    struct collected *c = arg;
    (void)err;
    (void)errlen;
    /* Only the last series of each query may still hold points: the one being read. */
    for (size_t i = 0; i < c->s->nq; i++)
        for (size_t j = 0; j + 1 < c->s->q[i].m.n; j++)
            if (c->s->q[i].m.s[j].n)
                __builtin_trap();
    if (se->n == 0 || query >= c->s->nq)
        __builtin_trap();
    struct series *d = matrix_push(&c->m[query]);
    labels_copy(&d->labels, &se->labels);
    d->p = malloc(se->n * sizeof(*d->p));
    memcpy(d->p, se->p, se->n * sizeof(*d->p));
    d->n = se->n;
    return 0;
}

static int run_with(const uint8_t *p, size_t n, size_t nq, uint64_t cut, struct collected *c,
                    struct matrix *out, char *err, size_t errlen)
{
    struct rr_stream *s = rr_stream_new(nq, 1 << 16, 1 << 20);
    size_t off = 0;
    int rc = 0;
    if (c) {
        c->s = s;
        rr_stream_on_series(s, collect, c);
    }
    while (off < n && rc == 0) {
        size_t k = n - off;
        if (cut) {
            cut ^= cut << 13, cut ^= cut >> 7, cut ^= cut << 17;
            k = 1 + cut % 64;
            if (k > n - off)
                k = n - off;
        }
        /* An exact-size copy of each piece: ASan sees reads past it. */
        uint8_t *piece = malloc(k);
        memcpy(piece, p + off, k);
        rc = rr_stream_feed(s, piece, k, err, errlen);
        free(piece);
        off += k;
    }
    if (rc == 0)
        rc = rr_stream_finish(s, out, err, errlen);
    else if (rr_stream_finish(s, out, NULL, 0) != -1)
        __builtin_trap();
    rr_stream_free(s);
    return rc;
}

static int run(const uint8_t *p, size_t n, size_t nq, uint64_t cut, struct matrix *out, char *err,
               size_t errlen)
{
    return run_with(p, n, nq, cut, NULL, out, err, errlen);
}

static bool same_series(const struct series *x, const struct series *y)
{
    return labels_equal(&x->labels, &y->labels) && x->n == y->n &&
           memcmp(x->p, y->p, x->n * sizeof(*x->p)) == 0;
}

static void check_matrix(const struct matrix *m)
{
    for (size_t i = 0; i < m->n; i++) {
        const struct series *s = &m->s[i];
        if (s->n == 0)
            __builtin_trap();
        for (size_t j = 1; j < s->n; j++)
            if (!(s->p[j].t > s->p[j - 1].t))
                __builtin_trap();
        for (size_t j = 1; j < s->labels.n; j++)
            if (strcmp(s->labels.v[j - 1].name, s->labels.v[j].name) >= 0)
                __builtin_trap();
    }
}

static void fuzz_stream(const uint8_t *p, size_t n)
{
    if (n < 1)
        return;
    size_t nq = 1 + p[0] % 4;
    struct matrix a[4], b[4];
    char ea[600] = "", eb[600] = "";
    int ra = run(p + 1, n - 1, nq, 0, a, ea, sizeof(ea));
    int rb = run(p + 1, n - 1, nq, hash(p, n), b, eb, sizeof(eb));
    struct collected col = {0};
    struct matrix e[4];
    char ec[600] = "";
    int rc = run_with(p + 1, n - 1, nq, hash(p, n) * 3, &col, e, ec, sizeof(ec));
    if (ra != rb || ra != rc)
        __builtin_trap();
    for (size_t i = 0; i < nq; i++)
        if (e[i].n)
            __builtin_trap();
    if (ra < 0) {
        /* The message may say how far the stream got, which is the same either way. */
        if (strcmp(ea, eb) != 0 || strcmp(ea, ec) != 0 || !ea[0])
            __builtin_trap();
        for (size_t i = 0; i < nq; i++) {
            if (a[i].n || b[i].n)
                __builtin_trap();
            matrix_free(&col.m[i]);
        }
        return;
    }
    for (size_t i = 0; i < nq; i++) {
        check_matrix(&a[i]);
        if (a[i].n != b[i].n || a[i].n != col.m[i].n)
            __builtin_trap();
        for (size_t j = 0; j < a[i].n; j++)
            if (!same_series(&a[i].s[j], &b[i].s[j]) || !same_series(&a[i].s[j], &col.m[i].s[j]))
                __builtin_trap();
        matrix_free(&a[i]);
        matrix_free(&b[i]);
        matrix_free(&col.m[i]);
    }
}

/* ---- request round trip ---------------------------------------------------------------- */

struct cursor {
    const uint8_t *p, *end;
};

static uint8_t take(struct cursor *c)
{
    return c->p < c->end ? *c->p++ : 0;
}

/* A NUL-free string of up to 15 bytes. */
static char *take_str(struct cursor *c, char *buf)
{
    size_t n = take(c) % 16, i;
    for (i = 0; i < n; i++)
        buf[i] = (char)(take(c) | 1);
    buf[i] = '\0';
    return buf;
}

struct want {
    const struct rr_query *q;
    size_t nq, qi, mi;
};

static int check_matcher(struct pb_dec *d, struct pb_reader *r, const struct pb_field *f,
                         const struct rr_matcher *m)
{
    struct pb_reader sub;
    struct pb_field g;
    uint64_t type = 0;
    size_t nlen = 0, vlen = 0;
    const uint8_t *name = NULL, *value = NULL;
    int rc;
    if (pb_enter(d, r, f, "LabelMatcher", &sub) < 0)
        __builtin_trap();
    while ((rc = pb_field_next(d, &sub, &g)) > 0) {
        if (g.num == 1 && g.wire == PB_VARINT)
            type = g.u;
        else if (g.num == 2 && g.wire == PB_LEN)
            name = g.data, nlen = g.len;
        else if (g.num == 3 && g.wire == PB_LEN)
            value = g.data, vlen = g.len;
        else
            __builtin_trap();
    }
    pb_leave(d);
    if (rc < 0 || type != (uint64_t)m->type || nlen != strlen(m->name) ||
        vlen != strlen(m->value) || (nlen && memcmp(name, m->name, nlen)) ||
        (vlen && memcmp(value, m->value, vlen)))
        __builtin_trap();
    return 0;
}

static void fuzz_request(const uint8_t *p, size_t n)
{
    struct cursor c = {p, p + n};
    struct rr_query q[4];
    struct rr_matcher m[4][4];
    char strs[4][4][2][16];
    size_t nq = take(&c) % 5;
    for (size_t i = 0; i < nq; i++) {
        uint64_t a = 0, b = 0;
        for (int k = 0; k < 8; k++)
            a = a << 8 | take(&c), b = b << 8 | take(&c);
        q[i].start_ms = (int64_t)a;
        q[i].end_ms = (int64_t)b;
        q[i].nm = take(&c) % 5;
        q[i].m = m[i];
        for (size_t j = 0; j < q[i].nm; j++) {
            m[i][j].type = (enum rr_match_type)(take(&c) % 5);
            m[i][j].name = take_str(&c, strs[i][j][0]);
            m[i][j].value = take_str(&c, strs[i][j][1]);
        }
    }
    char *body = NULL, err[256] = "";
    size_t len = 0;
    int rc = rr_encode_request(q, nq, &body, &len, err, sizeof(err));

    bool valid = nq > 0;
    for (size_t i = 0; i < nq; i++) {
        valid = valid && q[i].nm > 0 && q[i].start_ms <= q[i].end_ms;
        for (size_t j = 0; j < q[i].nm; j++)
            valid = valid && m[i][j].type <= RR_NRE && m[i][j].name[0];
    }
    if ((rc == 0) != valid || (rc < 0 && (!err[0] || body || len)))
        __builtin_trap();
    if (rc < 0)
        return;

    size_t rawlen;
    if (snappy_uncompressed_length(body, len, &rawlen) != SNAPPY_OK)
        __builtin_trap();
    char *raw = malloc(rawlen ? rawlen : 1);
    if (snappy_uncompress(body, len, raw, &rawlen) != SNAPPY_OK)
        __builtin_trap();
    struct pb_dec d = {(const uint8_t *)raw, err, sizeof(err), 0, 8, NULL};
    struct pb_reader r = {(const uint8_t *)raw, (const uint8_t *)raw + rawlen, "ReadRequest"};
    struct pb_field f, g;
    size_t qi = 0, types = 0;
    while ((rc = pb_field_next(&d, &r, &f)) > 0) {
        if (f.num == 2) {
            /* accepted_response_types: exactly [STREAMED_XOR_CHUNKS], packed. */
            if (f.wire != PB_LEN || f.len != 1 || f.data[0] != 1)
                __builtin_trap();
            types++;
            continue;
        }
        if (f.num != 1 || f.wire != PB_LEN || qi >= nq)
            __builtin_trap();
        struct pb_reader qr;
        int64_t start = 0, end = 0;
        size_t mi = 0;
        pb_enter(&d, &r, &f, "Query", &qr);
        while ((rc = pb_field_next(&d, &qr, &g)) > 0) {
            if (g.num == 1 && g.wire == PB_VARINT)
                start = (int64_t)g.u;
            else if (g.num == 2 && g.wire == PB_VARINT)
                end = (int64_t)g.u;
            else if (g.num == 3 && g.wire == PB_LEN && mi < q[qi].nm)
                check_matcher(&d, &qr, &g, &q[qi].m[mi++]);
            else
                __builtin_trap();
        }
        pb_leave(&d);
        if (rc < 0 || start != q[qi].start_ms || end != q[qi].end_ms || mi != q[qi].nm)
            __builtin_trap();
        qi++;
    }
    if (rc < 0 || qi != nq || types != 1)
        __builtin_trap();
    free(raw);
    free(body);
}

/* ---- samples through frames ------------------------------------------------------------ */

static struct xorenc enc;

static void fuzz_roundtrip(const uint8_t *p, size_t n)
{
    struct cursor c = {p, p + n};
    struct sbuf st = {0}, msg = {0}, ser = {0}, sub = {0};
    /* Up to 3 series; each is 1-3 frames of 1-2 chunks of 0-40 samples. */
    size_t nseries = 1 + take(&c) % 3, total[3] = {0};
    int64_t ts[3][240];
    uint64_t vs[3][240];
    int64_t t = 1700000000000;
    for (size_t si = 0; si < nseries; si++) {
        char name[2] = {(char)('a' + si), 0};
        size_t nframes = 1 + take(&c) % 3;
        for (size_t fi = 0; fi < nframes; fi++) {
            sbuf_reset(&ser);
            sbuf_reset(&sub);
            pb_put_bytes(&sub, LABEL_NAME, "s", 1);
            pb_put_bytes(&sub, LABEL_VALUE, name, 1);
            pb_put_bytes(&ser, SERIES_LABELS, sub.buf, sub.len);
            size_t nchunks = 1 + take(&c) % 2;
            for (size_t ci = 0; ci < nchunks; ci++) {
                size_t ns = take(&c) % 41;
                xorenc_init(&enc);
                for (size_t k = 0; k < ns && total[si] < 240; k++) {
                    uint8_t sel = take(&c);
                    t += 1 + (sel & 0x80 ? (int64_t)take(&c) << 12 : (sel & 0x3f) * 250);
                    uint64_t v = 0;
                    if (sel & 0x40)
                        for (int b = 0; b < 8; b++)
                            v = v << 8 | take(&c);
                    else
                        v = total[si] ? vs[si][total[si] - 1] : 0;
                    xorenc_add(&enc, t, v);
                    ts[si][total[si]] = t;
                    vs[si][total[si]++] = v;
                }
                sbuf_reset(&sub);
                pb_put_uint(&sub, CHUNK_TYPE, CHUNK_XOR);
                pb_put_bytes(&sub, CHUNK_DATA, enc.b, xorenc_len(&enc));
                pb_put_bytes(&ser, SERIES_CHUNKS, sub.buf, sub.len);
            }
            sbuf_reset(&msg);
            pb_put_bytes(&msg, CHUNKED_SERIES, ser.buf, ser.len);
            pb_put_varint(&st, msg.len);
            uint32_t crc = crc32c((const uint8_t *)msg.buf, msg.len);
            char be[4] = {(char)(crc >> 24), (char)(crc >> 16), (char)(crc >> 8), (char)crc};
            sbuf_add(&st, be, 4);
            sbuf_add(&st, msg.buf, msg.len);
        }
    }
    struct matrix m[1];
    char err[600];
    if (run((const uint8_t *)st.buf, st.len, 1, hash(p, n), m, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        __builtin_trap();
    }
    size_t k = 0;
    for (size_t si = 0; si < nseries; si++) {
        if (!total[si])
            continue; /* a series without samples is dropped */
        if (k >= m[0].n || m[0].s[k].n != total[si])
            __builtin_trap();
        for (size_t j = 0; j < total[si]; j++) {
            if (m[0].s[k].p[j].t != (double)ts[si][j] / 1000.0 ||
                memcmp(&m[0].s[k].p[j].v, &vs[si][j], 8) != 0)
                __builtin_trap();
        }
        k++;
    }
    if (k != m[0].n)
        __builtin_trap();
    matrix_free(&m[0]);
    sbuf_free(&st);
    sbuf_free(&msg);
    sbuf_free(&ser);
    sbuf_free(&sub);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    switch (data[0] % 5) {
    case 0:
    case 1:
    case 2:
        fuzz_stream(data + 1, size - 1);
        break;
    case 3:
        fuzz_request(data + 1, size - 1);
        break;
    case 4:
        fuzz_roundtrip(data + 1, size - 1);
        break;
    }
    return 0;
}
