/*
 * A test-only XOR chunk encoder, written from the layout in docs/remote-read.md §10.4 (the TSDB's
 * appender: first timestamp as a zig-zag varint, second as a uvarint delta, then
 * delta-of-delta buckets; values XORed with leading/trailing-zero windows, a new window when
 * the XOR does not fit the previous one, leading zeros capped at 31). The unit tests and fuzz
 * targets build chunks with it, including deliberately broken ones (xorenc_raw_* helpers).
 */
#ifndef GPURECLAIM_XORENC_H
#define GPURECLAIM_XORENC_H

#include <stdint.h>
#include <string.h>

struct xorenc {
    uint8_t b[1 << 16];
    uint64_t nbits; /* including the 16 of the count header */
    unsigned n;     /* samples */
    int64_t t, delta;
    uint64_t v;
    unsigned leading, trailing; /* leading 0xff: no window yet */
};

static inline void xorenc_bits(struct xorenc *e, uint64_t v, unsigned n)
{
    for (unsigned i = n; i-- > 0;) {
        if (e->nbits >= 8 * sizeof(e->b))
            __builtin_trap(); /* a test wrote more than any chunk holds */
        if ((e->nbits & 7) == 0)
            e->b[e->nbits >> 3] = 0; /* bytes are cleared as they are reached */
        if ((v >> i) & 1)
            e->b[e->nbits >> 3] |= (uint8_t)(0x80 >> (e->nbits & 7));
        e->nbits++;
    }
}

static inline void xorenc_uvarint(struct xorenc *e, uint64_t v)
{
    while (v >= 0x80) {
        xorenc_bits(e, (v & 0x7f) | 0x80, 8);
        v >>= 7;
    }
    xorenc_bits(e, v, 8);
}

static inline void xorenc_init(struct xorenc *e)
{
    /* Not a memset of b: 64 KiB per chunk made the fuzz targets crawl. */
    e->b[0] = e->b[1] = 0;
    e->nbits = 16;
    e->n = 0;
    e->t = e->delta = 0;
    e->v = 0;
    e->trailing = 0;
    e->leading = 0xff;
}

static inline void xorenc_value(struct xorenc *e, uint64_t v)
{
    uint64_t x = v ^ e->v;

    if (x == 0) {
        xorenc_bits(e, 0, 1);
        return;
    }
    xorenc_bits(e, 1, 1);
    unsigned lead = (unsigned)__builtin_clzll(x), trail = (unsigned)__builtin_ctzll(x);
    if (lead >= 32)
        lead = 31;
    if (e->leading != 0xff && lead >= e->leading && trail >= e->trailing) {
        xorenc_bits(e, 0, 1);
        xorenc_bits(e, x >> e->trailing, 64 - e->leading - e->trailing);
        return;
    }
    e->leading = lead;
    e->trailing = trail;
    xorenc_bits(e, 1, 1);
    xorenc_bits(e, lead, 5);
    unsigned sig = 64 - lead - trail;
    xorenc_bits(e, sig, 6); /* 64 is written as 0 */
    xorenc_bits(e, x >> trail, sig);
}

static inline int xorenc_fits(int64_t x, unsigned nbits)
{
    return -((INT64_C(1) << (nbits - 1)) - 1) <= x && x <= INT64_C(1) << (nbits - 1);
}

static inline void xorenc_add(struct xorenc *e, int64_t t, uint64_t v)
{
    if (e->n == 0) {
        xorenc_uvarint(e, ((uint64_t)t << 1) ^ (uint64_t)(t >> 63));
        xorenc_bits(e, v, 64);
    } else if (e->n == 1) {
        e->delta = t - e->t;
        xorenc_uvarint(e, (uint64_t)e->delta);
        xorenc_value(e, v);
    } else {
        int64_t d = t - e->t, dod = d - e->delta;
        if (dod == 0)
            xorenc_bits(e, 0, 1);
        else if (xorenc_fits(dod, 14))
            xorenc_bits(e, 2, 2), xorenc_bits(e, (uint64_t)dod, 14);
        else if (xorenc_fits(dod, 17))
            xorenc_bits(e, 6, 3), xorenc_bits(e, (uint64_t)dod, 17);
        else if (xorenc_fits(dod, 20))
            xorenc_bits(e, 14, 4), xorenc_bits(e, (uint64_t)dod, 20);
        else
            xorenc_bits(e, 15, 4), xorenc_bits(e, (uint64_t)dod, 64);
        e->delta = d;
        xorenc_value(e, v);
    }
    e->t = t;
    e->v = v;
    e->n++;
    e->b[0] = (uint8_t)(e->n >> 8);
    e->b[1] = (uint8_t)e->n;
}

/* Bytes of the chunk so far. */
static inline size_t xorenc_len(const struct xorenc *e)
{
    return (size_t)((e->nbits + 7) / 8);
}

#endif
