/*
 * Unit tests of enforcer/xorchunk.c: chunks built by hand (bytes written out bit by bit) and
 * by the test encoder (xorenc.h) for every timestamp bucket and value window, special values
 * kept bit for bit, and every error: truncation at each length, bytes and bits left over, a
 * wrong count, timestamps that repeat, go backwards or overflow, a window over 64 bits, and
 * samples not after those already in the series. Real chunks from Prometheus are decoded in
 * test_remoteread.c.
 */
#include "xorchunk.c"

#include "test.h"
#include "xorenc.h"

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* Decode into a fresh series; returns the result code, the series in *s. */
static int decode(const uint8_t *b, size_t len, struct series *s, char *err, size_t errlen)
{
    struct xorchunk_sink k = {.s = s};
    memset(s, 0, sizeof(*s));
    return xorchunk_decode(b, len, &k, err, errlen);
}

TEST(empty_and_single)
{
    struct series s;
    char err[256];
    const uint8_t empty[] = {0, 0};
    TEST_CHECK_INT(decode(empty, 2, &s, err, sizeof(err)), 0);
    TEST_CHECK_INT(s.n, 0);
    series_free(&s);

    /*
     * One sample, written out by hand: count 1; t = 1500 ms as zig-zag varint 3000 =
     * 0xb8 0x17; value 2.0 = 0x4000000000000000.
     */
    const uint8_t one[] = {0x00, 0x01, 0xb8, 0x17, 0x40, 0, 0, 0, 0, 0, 0, 0};
    TEST_CHECK_INT(decode(one, sizeof(one), &s, err, sizeof(err)), 0);
    TEST_CHECK_INT(s.n, 1);
    TEST_CHECK_DBL(s.p[0].t, 1.5, 0);
    TEST_CHECK_DBL(s.p[0].v, 2.0, 0);
    series_free(&s);

    /* A negative first timestamp (before 1970): zig-zag 1 is -1 ms. */
    const uint8_t neg[] = {0x00, 0x01, 0x01, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
    TEST_CHECK_INT(decode(neg, sizeof(neg), &s, err, sizeof(err)), 0);
    TEST_CHECK_INT(s.n, 1);
    TEST_CHECK_DBL(s.p[0].t, -0.001, 0);
    TEST_CHECK_DBL(s.p[0].v, 1.0, 0);
    series_free(&s);

    TEST_CHECK_INT(decode(one, 1, &s, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "no sample count");
    TEST_CHECK_INT(xorchunk_count(one, 1), -1);
    TEST_CHECK_INT(xorchunk_count(one, 2), 1);
}

TEST(two_samples_by_hand)
{
    /*
     * count 2; t0 = 0 (varint 0x00); v0 = 1.0 (0x3ff0...); delta 15000 ms as uvarint
     * 0x98 0x75; then v1 = 3.0 (0x4008...): XOR 0x7ff8... has 1 leading zero, 51 trailing,
     * 12 meaningful bits: '1' (changed) '1' (new window) 00001 (leading) 001100 (12)
     * 111111111111 (the bits), then 7 bits of padding: 0xc2 0x67 0xff 0x80.
     */
    const uint8_t c[] = {0x00, 0x02, 0x00, 0x3f, 0xf0, 0,    0,    0,   0,
                         0,    0,    0x98, 0x75, 0xc2, 0x67, 0xff, 0x80};
    struct series s;
    char err[256];
    TEST_CHECK_INT(decode(c, sizeof(c), &s, err, sizeof(err)), 0);
    TEST_CHECK_INT(s.n, 2);
    if (s.n == 2) {
        TEST_CHECK_DBL(s.p[0].t, 0, 0);
        TEST_CHECK_DBL(s.p[0].v, 1.0, 0);
        TEST_CHECK_DBL(s.p[1].t, 15.0, 0);
        TEST_CHECK_DBL(s.p[1].v, 3.0, 0);
    }
    series_free(&s);

    /* The same chunk from the test encoder: the encoder agrees with the hand-written bytes. */
    struct xorenc *e = malloc(sizeof(*e));
    xorenc_init(e);
    xorenc_add(e, 0, bits_of(1.0));
    xorenc_add(e, 15000, bits_of(3.0));
    TEST_CHECK_INT(xorenc_len(e), sizeof(c));
    TEST_CHECK(memcmp(e->b, c, sizeof(c)) == 0);
    free(e);
}

/* Encode n samples, decode, compare bit for bit. */
static void roundtrip(const int64_t *t, const uint64_t *v, size_t n)
{
    struct xorenc *e = malloc(sizeof(*e));
    struct series s;
    char err[256] = "";
    xorenc_init(e);
    for (size_t i = 0; i < n; i++)
        xorenc_add(e, t[i], v[i]);
    int rc = decode(e->b, xorenc_len(e), &s, err, sizeof(err));
    TEST_CHECK_INT(rc, 0);
    if (rc)
        fprintf(stderr, "  %s\n", err);
    TEST_CHECK_INT(s.n, n);
    for (size_t i = 0; i < s.n && i < n; i++) {
        uint64_t got;
        memcpy(&got, &s.p[i].v, 8);
        if (s.p[i].t != (double)t[i] / 1000.0 || got != v[i]) {
            fprintf(stderr, "  sample %zu: %.3f %016llx, want %lld %016llx\n", i, s.p[i].t,
                    (unsigned long long)got, (long long)t[i], (unsigned long long)v[i]);
            TEST_CHECK(0);
            break;
        }
    }
    series_free(&s);
    free(e);
}

TEST(every_bucket_and_window)
{
    /* Deltas whose delta-of-delta needs 0, 14, 17, 20 and 64 bits, both signs, bucket edges. */
    static const int64_t dod[] = {0,       1,      -1,      8192,    -8191,    8193,
                                  -8192,   65536,  -65535,  65537,   -65536,   524288,
                                  -524287, 524289, -524288, 3600000, -3600000, 0};
    int64_t t[64], delta = 15000;
    uint64_t v[64];
    size_t n = 0;
    t[n] = 1700000000000;
    v[n++] = bits_of(0.5);
    t[n] = t[0] + delta;
    v[n++] = bits_of(0.5);
    delta += 3600000; /* leave room for the negative ones */
    for (size_t i = 0; i < ARRAY_LEN(dod); i++) {
        delta += dod[i];
        t[n] = t[n - 1] + delta;
        v[n] = bits_of((double)i * 1.25);
        n++;
    }
    roundtrip(t, v, n);

    /* Values: NaN payloads, the staleness marker, infinities, -0, subnormals, repeats. */
    static const uint64_t vals[] = {
        0x7ff0000000000002, /* staleness marker */
        0x7ff8000000000001, /* Go's math.NaN() */
        0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000000, 0xfff0000000000000,
        0x8000000000000000, 0x0000000000000000, 0x0000000000000001, 0x7fefffffffffffff,
        0x7fefffffffffffff, 0x3ff0000000000000, 0x3ff0000000000001, 0x3ff0000000000003,
        0xbff0000000000000, 0x7ff0000000000002, 0x3fd0000000000000, 0x3fd0000000000000,
        0x4059000000000000, 0xffffffffffffffff, 0x0000000000000000, 0x8000000000000001};
    for (size_t i = 0; i < ARRAY_LEN(vals); i++) {
        t[i] = 1000 * (int64_t)i + (int64_t)(i * i % 7);
        v[i] = vals[i];
    }
    roundtrip(t, v, ARRAY_LEN(vals));

    /* 120 samples (a full TSDB chunk) of pseudo-random values and jittered times. */
    int64_t tt[120];
    uint64_t vv[120];
    uint64_t x = 88172645463325252u;
    for (size_t i = 0; i < 120; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        tt[i] = 15000 * (int64_t)i + (int64_t)(x % 50);
        vv[i] = i % 3 ? bits_of((double)(x % 10000) / 100.0) : x;
    }
    roundtrip(tt, vv, 120);
}

/* A valid chunk of 5 samples for the error tests. */
static size_t sample_chunk(uint8_t *out)
{
    struct xorenc *e = malloc(sizeof(*e));
    xorenc_init(e);
    xorenc_add(e, 1000, bits_of(1.0));
    xorenc_add(e, 16000, bits_of(2.5));
    xorenc_add(e, 31000, bits_of(2.5));
    xorenc_add(e, 47001, bits_of(-7.0));
    xorenc_add(e, 62000, 0x7ff0000000000002);
    size_t n = xorenc_len(e);
    memcpy(out, e->b, n);
    free(e);
    return n;
}

TEST(truncated_and_overlong)
{
    uint8_t c[64], d[64];
    size_t n = sample_chunk(c);
    struct series s;
    char err[256];

    TEST_CHECK_INT(decode(c, n, &s, err, sizeof(err)), 0);
    TEST_CHECK_INT(s.n, 5);
    series_free(&s);
    /* Every shorter length fails, and leaves nothing in the series. */
    for (size_t len = 0; len < n; len++) {
        err[0] = '\0';
        TEST_CHECK_INT(decode(c, len, &s, err, sizeof(err)), -1);
        TEST_CHECK_INT(s.n, 0);
        TEST_CHECK(err[0] != '\0');
        series_free(&s);
    }
    decode(c, n - 1, &s, err, sizeof(err));
    TEST_CHECK_CONTAINS(err, "sample 5 of 5");
    series_free(&s);

    /*
     * One zero byte more is what the TSDB writes when the last sample ends on a byte boundary
     * (its writer appends a byte ahead): accepted (below). Two are overlong, and so is one
     * with a bit set.
     */
    memcpy(d, c, n);
    d[n] = 0;
    d[n + 1] = 0;
    TEST_CHECK_INT(decode(d, n + 2, &s, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "bits after its 5 samples");
    series_free(&s);
    d[n] = 0x80;
    TEST_CHECK_INT(decode(d, n + 1, &s, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "after its 5 samples");
    series_free(&s);
    /* Aligned: one sample is 8 + 64 bits; the byte after it is the writer's spare. */
    const uint8_t spare[] = {0, 1, 0x02, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0};
    TEST_CHECK_INT(decode(spare, sizeof(spare), &s, err, sizeof(err)), 0);
    TEST_CHECK_INT(s.n, 1);
    series_free(&s);

    /*
     * The count too high: the stream ends early. (By one or two, zero padding bits could read
     * as samples with the same delta and value, 2 bits each: the format cannot tell; the
     * frame's CRC is what protects the count.) One too low: the rest is left over.
     */
    memcpy(d, c, n);
    d[1] = 13;
    TEST_CHECK_INT(decode(d, n, &s, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "of 13: bit stream ends");
    series_free(&s);
    d[1] = 4;
    TEST_CHECK_INT(decode(d, n, &s, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "after its 4 samples");
    series_free(&s);

    /* A set padding bit after the last sample. */
    memcpy(d, c, n);
    struct xorenc *e = malloc(sizeof(*e));
    xorenc_init(e);
    xorenc_add(e, 1000, bits_of(1.0));
    xorenc_add(e, 2000, bits_of(1.0));
    TEST_CHECK(e->nbits % 8 != 0); /* there is padding to spoil */
    e->b[xorenc_len(e) - 1] |= 1;
    TEST_CHECK_INT(decode(e->b, xorenc_len(e), &s, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "bits set after its 2 samples");
    series_free(&s);
    free(e);
}

TEST(timestamps_must_increase)
{
    struct xorenc *e = malloc(sizeof(*e));
    struct series s;
    char err[256];

    /* Second sample at the same time as the first. */
    xorenc_init(e);
    xorenc_add(e, 5000, bits_of(1));
    xorenc_add(e, 5000, bits_of(2));
    TEST_CHECK_INT(decode(e->b, xorenc_len(e), &s, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "sample 2 of 2: timestamp repeats the previous one");
    series_free(&s);

    /* Backwards at the second sample (a negative delta as uvarint) and at a later one. */
    xorenc_init(e);
    xorenc_add(e, 5000, bits_of(1));
    xorenc_add(e, 4000, bits_of(2));
    TEST_CHECK_INT(decode(e->b, xorenc_len(e), &s, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "sample 2 of 2: timestamp goes backwards by 1000 ms");
    series_free(&s);
    xorenc_init(e);
    xorenc_add(e, 5000, bits_of(1));
    xorenc_add(e, 6000, bits_of(2));
    xorenc_add(e, 7000, bits_of(3));
    xorenc_add(e, 6500, bits_of(4));
    TEST_CHECK_INT(decode(e->b, xorenc_len(e), &s, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "sample 4 of 4: timestamp goes backwards by 500 ms");
    TEST_CHECK_INT(s.n, 0);
    series_free(&s);

    /* Beyond 2^50 ms, where t as double seconds would stop telling milliseconds apart. */
    xorenc_init(e);
    xorenc_add(e, INT64_C(1) << 50, bits_of(1));
    TEST_CHECK_INT(decode(e->b, xorenc_len(e), &s, err, sizeof(err)), 0);
    series_free(&s);
    xorenc_add(e, (INT64_C(1) << 50) + 1, bits_of(1));
    TEST_CHECK_INT(decode(e->b, xorenc_len(e), &s, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "sample 2 of 2: timestamp 1125899906842625 ms is beyond 2^50 ms");
    series_free(&s);
    xorenc_init(e);
    xorenc_add(e, -(INT64_C(1) << 50) - 1, bits_of(1));
    TEST_CHECK_INT(decode(e->b, xorenc_len(e), &s, err, sizeof(err)), -1);
    series_free(&s);

    /* Delta-of-delta in the 64-bit bucket, written by hand: the delta, then t, overflow. */
    for (int which = 0; which < 2; which++) {
        xorenc_init(e);
        xorenc_add(e, 0, bits_of(1));
        xorenc_add(e, 1000, bits_of(1));
        xorenc_bits(e, 15, 4);
        xorenc_bits(e, (uint64_t)(INT64_MAX - (which ? 1000 : 500)), 64);
        xorenc_bits(e, 0, 1);
        e->b[1] = 3;
        TEST_CHECK_INT(decode(e->b, xorenc_len(e), &s, err, sizeof(err)), -1);
        TEST_CHECK_CONTAINS(err, which ? "sample 3 of 3: timestamp overflows"
                                       : "sample 3 of 3: timestamp delta overflows");
        series_free(&s);
    }
    free(e);
}

TEST(malformed_bits)
{
    struct series s;
    char err[256];

    /* First timestamp: a varint of 11 bytes. */
    uint8_t c[32] = {0, 1};
    memset(c + 2, 0xff, 11);
    TEST_CHECK_INT(decode(c, 13, &s, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "first timestamp overflows 64 bits");
    series_free(&s);

    /* A new value window of 31 leading zeros and 40 meaningful bits: 71 > 64. */
    struct xorenc *e = malloc(sizeof(*e));
    xorenc_init(e);
    xorenc_add(e, 0, 0);
    xorenc_uvarint(e, 1000);
    xorenc_bits(e, 3, 2);
    xorenc_bits(e, 31, 5);
    xorenc_bits(e, 40, 6);
    xorenc_bits(e, 0, 40);
    e->b[1] = 2;
    TEST_CHECK_INT(decode(e->b, xorenc_len(e), &s, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "value window wider than 64 bits");
    series_free(&s);

    /* Reusing a window before any was set reads all 64 bits (as the TSDB's reader does). */
    xorenc_init(e);
    xorenc_add(e, 0, 0);
    xorenc_uvarint(e, 1000);
    xorenc_bits(e, 2, 2);
    xorenc_bits(e, 0x7ff0000000000002, 64);
    e->b[1] = 2;
    TEST_CHECK_INT(decode(e->b, xorenc_len(e), &s, err, sizeof(err)), 0);
    TEST_CHECK_INT(s.n, 2);
    if (s.n == 2)
        TEST_CHECK(bits_of(s.p[1].v) == 0x7ff0000000000002);
    series_free(&s);
    free(e);
}

TEST(sink_order_and_clip)
{
    uint8_t c[64];
    size_t n = sample_chunk(c); /* 1000 .. 62000 ms */
    struct series s = {0};
    struct xorchunk_sink k = {.s = &s};
    char err[256];

    TEST_CHECK_INT(xorchunk_decode(c, n, &k, err, sizeof(err)), 0);
    TEST_CHECK_INT(s.n, 5);
    TEST_CHECK(k.has_last && k.last_ms == 62000);
    /* The same chunk again: its first sample is not after the series' last. */
    TEST_CHECK_INT(xorchunk_decode(c, n, &k, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "out-of-order sample: 1000 ms is not after the previous sample at "
                             "62000 ms");
    TEST_CHECK_INT(s.n, 5);
    TEST_CHECK(k.last_ms == 62000);
    /* A chunk that starts after the last sample is appended. */
    struct xorenc *e = malloc(sizeof(*e));
    xorenc_init(e);
    xorenc_add(e, 62001, bits_of(9));
    xorenc_add(e, 70000, bits_of(10));
    TEST_CHECK_INT(xorchunk_decode(e->b, xorenc_len(e), &k, err, sizeof(err)), 0);
    TEST_CHECK_INT(s.n, 7);
    TEST_CHECK(k.cap >= s.n);
    series_free(&s);

    /* Clipped to [16000, 47001]: 3 samples kept, the others still decoded and checked. */
    k = (struct xorchunk_sink){.s = &s, .clip = true, .min_ms = 16000, .max_ms = 47001};
    TEST_CHECK_INT(xorchunk_decode(c, n, &k, err, sizeof(err)), 0);
    TEST_CHECK_INT(s.n, 3);
    TEST_CHECK_DBL(s.p[0].t, 16.0, 0);
    TEST_CHECK_DBL(s.p[2].t, 47.001, 0);
    TEST_CHECK(k.last_ms == 62000);
    series_free(&s);
    free(e);
}

int main(void)
{
    RUN(empty_and_single);
    RUN(two_samples_by_hand);
    RUN(every_bucket_and_window);
    RUN(truncated_and_overlong);
    RUN(timestamps_must_increase);
    RUN(malformed_bits);
    RUN(sink_order_and_clip);
    return test_done();
}
