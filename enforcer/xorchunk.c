/*
 * Decoder of Prometheus XOR chunks (the Gorilla encoding, as the TSDB writes it; layout in
 * docs/remote-read.md §10.4). It exists so that the enforcer can read raw samples through remote
 * read instead of asking PromQL three times for views of them.
 *
 * The bit stream is read most significant bit first. The first timestamp is a zig-zag varint
 * and the second a delta as an unsigned varint, both written bytewise into the bit stream (the
 * TSDB's bstream.writeByte), so they are read 8 bits at a time rather than byte-aligned; from
 * the third sample on a timestamp is a delta-of-delta in one of five buckets. Values are XORed
 * with the previous one and stored as the window of meaningful bits between the leading and
 * trailing zeros, reusing the previous window when the new XOR fits inside it.
 *
 * What the reference reader lets through and we refuse: a timestamp that does not strictly
 * increase (the TSDB never appends one, so it can only be corruption), arithmetic overflow of
 * a timestamp or delta, a timestamp beyond 2^50 ms (where seconds as a double stop being exact), a
 * value window wider than 64 bits, and more than 8 bits left over after the counted samples or
 * padding bits that are not zero (the TSDB's bit writer leaves them zero, and at most one unused
 * byte: bstream.writeByte appends the next byte ahead). The header count is the only authority on
 * how many samples there are, and the format cannot always check it: a sample with the previous
 * delta and value is two zero bits, so a count one too low may leave such a sample in the padding,
 * and one too high may read padding as one. The frame's CRC is what protects the count; otherwise
 * the padding check catches every sample with a set bit left behind.
 */
#include "xorchunk.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

/*
 * Timestamps further than 2^50 ms (year 37,000) from 1970 are refused: up to there, ms / 1000.0
 * keeps distinct milliseconds distinct (and ascending) as doubles and rounds back exactly.
 */
#define XORCHUNK_MAX_MS (INT64_C(1) << 50)

/* A bit cursor over the stream after the 2-byte header. */
struct bits {
    const uint8_t *b;
    size_t len;       /* bytes */
    uint64_t pos, nb; /* bits read, bits in total */
};

/* Eight bytes from byte i, big-endian, zero past the end. */
static inline uint64_t load_be64(const struct bits *r, size_t i)
{
    uint64_t v = 0;

    if (i + 8 <= r->len) {
        memcpy(&v, r->b + i, 8);
        return __builtin_bswap64(v);
    }
    for (size_t k = 0; k < 8; k++)
        v = v << 8 | (i + k < r->len ? r->b[i + k] : 0);
    return v;
}

/* The next n (1..64) bits as an unsigned number; -1 when fewer are left. */
static inline int read_bits(struct bits *r, unsigned n, uint64_t *out)
{
    if (n > r->nb - r->pos)
        return -1;
    size_t i = (size_t)(r->pos >> 3);
    unsigned off = (unsigned)(r->pos & 7);
    uint64_t v = load_be64(r, i) << off;

    if (n + off <= 64) {
        v >>= 64 - n;
    } else {
        /* 58 or more bits starting mid-byte: the last `rest` come from a ninth byte. */
        unsigned rest = n + off - 64;
        v = v >> (64 - n) | (uint64_t)(r->b[i + 8] >> (8 - rest));
    }
    r->pos += n;
    *out = v;
    return 0;
}

static inline int read_bit(struct bits *r, unsigned *bit)
{
    uint64_t v;

    if (read_bits(r, 1, &v) < 0)
        return -1;
    *bit = (unsigned)v;
    return 0;
}

/* Go's binary.ReadUvarint over the bit stream: 0, -1 truncated, -2 overflowing 64 bits. */
static int read_uvarint(struct bits *r, uint64_t *out)
{
    uint64_t v = 0, byte;

    for (unsigned i = 0; i < 10; i++) {
        if (read_bits(r, 8, &byte) < 0)
            return -1;
        if (i == 9 && byte > 1)
            return -2;
        v |= (byte & 0x7f) << (7 * i);
        if (!(byte & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -2;
}

int xorchunk_count(const uint8_t *data, size_t len)
{
    if (len < 2)
        return -1;
    return data[0] << 8 | data[1];
}

/* The XOR of the next value with the previous one (0 when unchanged), updating the window. */
static int read_xor(struct bits *r, unsigned *leading, unsigned *trailing, uint64_t *x,
                    const char **why)
{
    unsigned bit;
    uint64_t v, sig;

    if (read_bit(r, &bit) < 0)
        goto truncated;
    if (!bit) {
        *x = 0;
        return 0;
    }
    if (read_bit(r, &bit) < 0)
        goto truncated;
    if (bit) {
        /* A new window: 5 bits of leading zeros, 6 of meaningful bits (0 meaning 64). */
        if (read_bits(r, 5, &v) < 0 || read_bits(r, 6, &sig) < 0)
            goto truncated;
        if (sig == 0)
            sig = 64;
        if (v + sig > 64) {
            *why = "value window wider than 64 bits";
            return -1;
        }
        *leading = (unsigned)v;
        *trailing = (unsigned)(64 - v - sig);
    }
    sig = 64 - *leading - *trailing;
    if (read_bits(r, (unsigned)sig, &v) < 0)
        goto truncated;
    *x = v << *trailing; /* trailing <= 63: the window has at least one bit */
    return 0;
truncated:
    *why = "bit stream ends inside a value";
    return -1;
}

/* Room for `more` points after the k->s->n there are, growing by half at least. */
static void reserve(struct xorchunk_sink *k, size_t more)
{
    size_t need = k->s->n + more;

    if (need <= k->cap)
        return;
    size_t cap = k->cap + k->cap / 2;
    if (cap < need)
        cap = need;
    k->s->p = xrealloc(k->s->p, cap * sizeof(*k->s->p));
    k->cap = cap;
}

int xorchunk_decode(const uint8_t *data, size_t len, struct xorchunk_sink *k, char *err,
                    size_t errlen)
{
    struct series *s = k->s;
    size_t n0 = s->n;
    bool has_last0 = k->has_last;
    int64_t last0 = k->last_ms;
    int count = xorchunk_count(data, len);
    struct bits r = {0};
    int64_t t = 0, delta = 0;
    uint64_t vbits = 0, u;
    unsigned leading = 0, trailing = 0;
    const char *why = NULL;
    int i, rc;

    if (count < 0)
        return err_printf(err, errlen, "XOR chunk of %zu bytes has no sample count", len);
    r.b = data + 2;
    r.len = len - 2;
    r.nb = (uint64_t)(len - 2) * 8;
    reserve(k, (size_t)count);

    for (i = 0; i < count; i++) {
        uint64_t x;
        int64_t prev = t;

        if (i == 0) {
            rc = read_uvarint(&r, &u);
            if (rc < 0) {
                why = rc == -1 ? "bit stream ends inside the first timestamp"
                               : "first timestamp overflows 64 bits";
                goto bad;
            }
            t = (int64_t)(u >> 1) ^ -(int64_t)(u & 1); /* zig-zag */
            if (read_bits(&r, 64, &vbits) < 0) {
                why = "bit stream ends inside the first value";
                goto bad;
            }
        } else {
            if (i == 1) {
                rc = read_uvarint(&r, &u);
                if (rc < 0) {
                    why = rc == -1 ? "bit stream ends inside the second timestamp"
                                   : "timestamp delta overflows 64 bits";
                    goto bad;
                }
                delta = (int64_t)u;
            } else {
                /* Delta of delta: 0, 10+14 bits, 110+17, 1110+20 or 1111+64. */
                unsigned ones = 0, bit = 1, sz;
                int64_t dod;
                while (ones < 4) {
                    if (read_bit(&r, &bit) < 0) {
                        why = "bit stream ends inside a timestamp";
                        goto bad;
                    }
                    if (!bit)
                        break;
                    ones++;
                }
                static const unsigned width[] = {0, 14, 17, 20, 64};
                sz = width[ones];
                if (sz == 0) {
                    dod = 0;
                } else {
                    if (read_bits(&r, sz, &u) < 0) {
                        why = "bit stream ends inside a timestamp";
                        goto bad;
                    }
                    if (sz < 64 && u > (UINT64_C(1) << (sz - 1)))
                        u -= UINT64_C(1) << sz; /* two's complement in sz bits */
                    dod = (int64_t)u;
                }
                if (__builtin_add_overflow(delta, dod, &delta)) {
                    why = "timestamp delta overflows";
                    goto bad;
                }
            }
            if (delta == 0) {
                err_printf(err, errlen,
                           "XOR chunk sample %d of %d: timestamp repeats the previous one", i + 1,
                           count);
                goto restore;
            }
            if (delta < 0) {
                err_printf(err, errlen,
                           "XOR chunk sample %d of %d: timestamp goes backwards by %llu ms", i + 1,
                           count, (unsigned long long)(UINT64_C(0) - (uint64_t)delta));
                goto restore;
            }
            if (__builtin_add_overflow(prev, delta, &t)) {
                why = "timestamp overflows";
                goto bad;
            }
            if (read_xor(&r, &leading, &trailing, &x, &why) < 0)
                goto bad;
            vbits ^= x;
        }
        if (t > XORCHUNK_MAX_MS || t < -XORCHUNK_MAX_MS) {
            err_printf(err, errlen,
                       "XOR chunk sample %d of %d: timestamp %lld ms is beyond 2^50 ms", i + 1,
                       count, (long long)t);
            goto restore;
        }
        if (k->has_last && t <= k->last_ms) {
            err_printf(err, errlen,
                       "out-of-order sample: %lld ms is not after the previous sample at %lld ms",
                       (long long)t, (long long)k->last_ms);
            goto restore;
        }
        k->has_last = true;
        k->last_ms = t;
        if (!k->clip || (t >= k->min_ms && t <= k->max_ms)) {
            struct point *p = &s->p[s->n++];
            p->t = (double)t / 1000.0;
            memcpy(&p->v, &vbits, sizeof(p->v)); /* bit-exact: NaN payloads are data */
        }
    }
    /*
     * The TSDB's bit writer appends the next byte after each whole byte it writes, so a
     * stream can end in one unused byte: up to 8 bits of padding, all zero.
     */
    if (r.nb - r.pos > 8) {
        err_printf(err, errlen, "XOR chunk has %llu bits after its %d samples",
                   (unsigned long long)(r.nb - r.pos), count);
        goto restore;
    }
    if (r.nb > r.pos && read_bits(&r, (unsigned)(r.nb - r.pos), &u) == 0 && u != 0) {
        err_printf(err, errlen, "XOR chunk has bits set after its %d samples", count);
        goto restore;
    }
    return 0;

bad:
    err_printf(err, errlen, "XOR chunk sample %d of %d: %s", i + 1, count, why);
restore:
    /* Undo this chunk: the caller sees the series as before it, or as nothing at all. */
    s->n = n0;
    k->has_last = has_last0;
    k->last_ms = last0;
    return -1;
}
