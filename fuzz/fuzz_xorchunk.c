/*
 * libFuzzer target for enforcer/xorchunk.c, the decoder of Prometheus XOR chunks. The first
 * input byte picks the sink's state (a previous sample to come after, a clip window); the rest
 * is the chunk. Beyond memory errors it traps on broken promises: on failure the series is as
 * before and there is a message; on success the samples strictly ascend, are as many as the
 * header counts (unclipped), and survive a round trip through the test encoder
 * (tests/unit/xorenc.h) bit for bit. Seeds: fuzz/corpus/xorchunk (chunks from the Prometheus
 * captures in tests/fixtures/remoteread and hand-made edge cases).
 */
#include "xorchunk.c"
#include "series.c"

#include <math.h>

#include "../tests/unit/xorenc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct xorenc enc;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    const uint8_t *c = data + 1;
    size_t n = size - 1;
    /* An exact-size copy, so that ASan sees any read past the end. */
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, c, n);

    struct series s = {0};
    struct xorchunk_sink k = {.s = &s};
    char err[256] = "";
    if (mode & 1) {
        k.has_last = true;
        k.last_ms = (int64_t)(mode >> 2) * 1000 - 20000;
    }
    if (mode & 2) {
        k.clip = true;
        k.min_ms = 0;
        k.max_ms = (int64_t)mode * 100000;
    }
    int64_t last0 = k.last_ms;
    bool has0 = k.has_last;
    int rc = xorchunk_decode(copy, n, &k, err, sizeof(err));

    if (rc < 0) {
        if (s.n != 0 || !err[0] || k.last_ms != last0 || k.has_last != has0)
            __builtin_trap();
    } else {
        if (rc != 0)
            __builtin_trap();
        int count = xorchunk_count(copy, n);
        if (count < 0 || (!k.clip && s.n != (size_t)count) || s.n > (size_t)count)
            __builtin_trap();
        for (size_t i = 1; i < s.n; i++)
            if (!(s.p[i].t > s.p[i - 1].t))
                __builtin_trap();
        /* Up to 8 KiB of chunk re-encodes within xorenc's 64 KiB (13 bits more a sample). */
        if (!k.clip && count > 0 && n <= 8192) {
            /* Decoded samples re-encoded and decoded again: the same bits. */
            xorenc_init(&enc);
            for (size_t i = 0; i < s.n; i++) {
                uint64_t v;
                memcpy(&v, &s.p[i].v, 8);
                int64_t ms = llround(s.p[i].t * 1000);
                xorenc_add(&enc, ms, v);
            }
            struct series s2 = {0};
            struct xorchunk_sink k2 = {.s = &s2};
            if (xorchunk_decode(enc.b, xorenc_len(&enc), &k2, err, sizeof(err)) != 0 || s2.n != s.n)
                __builtin_trap();
            for (size_t i = 0; i < s.n; i++)
                if (s2.p[i].t != s.p[i].t || memcmp(&s2.p[i].v, &s.p[i].v, 8) != 0)
                    __builtin_trap();
            series_free(&s2);
        }
    }
    series_free(&s);
    free(copy);
    return 0;
}
