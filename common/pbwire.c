/*
 * Reader of the protobuf wire format for messages from a peer that may be newer than us, or
 * broken: the kubelet adds fields to its pod-resources messages every few releases
 * (kubernetes/kubelet pkg/apis/podresources/v1/api.proto; docs/kernel-interfaces.md §10.2).
 *
 * Unknown fields of every wire type are skipped (groups included, up to the caller's depth
 * limit), repeated int64 is accepted packed and unpacked, a known field that arrives with an
 * unexpected wire type is treated as unknown (what the reference protobuf runtimes do), and
 * of a singular field sent twice the last value wins. Everything else is strict: varints
 * longer than 10 bytes or above 2^64, lengths past the end of their message, truncated
 * fixed-width fields, field number 0 and wire types 6/7 are errors, as are kept strings that
 * are too long, contain NUL or are not UTF-8 (they become Prometheus labels).
 *
 * The writers at the end produce what a request needs (the remote-read ReadRequest), nothing
 * more: varints, keys and length-delimited fields. Moved here from exporter/ when the
 * enforcer started speaking protobuf to Prometheus.
 */
#include "pbwire.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"

int pb_fail(struct pb_dec *d, const char *msg, const uint8_t *at, const char *fmt, ...)
{
    char why[200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    if (d->err && d->errlen)
        snprintf(d->err, d->errlen, "malformed '%s' at byte %zu: %s", msg, (size_t)(at - d->base),
                 why);
    return -1;
}

/* 0, -1 if the input ends inside the varint, -2 if it is longer than 10 bytes or above 2^64. */
int pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;

    for (unsigned i = 0; i < 10; i++) {
        if (p == end)
            return -1;
        uint8_t b = *p++;
        /* The 10th byte holds only bit 63; anything more overflows 64 bits. */
        if (i == 9 && b > 1)
            return -2;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return 0;
        }
    }
    return -2;
}

static int pb_skip_group(struct pb_dec *d, struct pb_reader *r, uint32_t num, const uint8_t *at);

/*
 * Read the next field of r, consuming its payload (a group is skipped whole). 1 with *f
 * filled, 0 at the end of the message, -1 on malformed input. An end-group key is returned to
 * the caller, which alone knows whether a group is open.
 */
static int pb_next(struct pb_dec *d, struct pb_reader *r, struct pb_field *f)
{
    uint64_t key;
    int rc;

    if (r->p == r->end)
        return 0;
    f->at = r->p;
    rc = pb_varint(&r->p, r->end, &key);
    if (rc < 0)
        return pb_fail(d, r->msg, f->at, rc == -1 ? "truncated field key" : "field key overflows");
    if (key > UINT32_MAX)
        return pb_fail(d, r->msg, f->at, "field number %llu out of range",
                       (unsigned long long)(key >> 3));
    f->num = (uint32_t)(key >> 3);
    f->wire = (unsigned)(key & 7);
    if (f->num == 0)
        return pb_fail(d, r->msg, f->at, "field number 0");

    switch (f->wire) {
    case PB_VARINT:
        rc = pb_varint(&r->p, r->end, &f->u);
        if (rc < 0)
            return pb_fail(d, r->msg, f->at, "%s varint in field %u",
                           rc == -1 ? "truncated" : "overflowing", f->num);
        return 1;
    case PB_I64:
    case PB_I32: {
        size_t w = f->wire == PB_I64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < w)
            return pb_fail(d, r->msg, f->at, "truncated fixed%zu in field %u", 8 * w, f->num);
        f->u = 0;
        for (size_t i = 0; i < w; i++)
            f->u |= (uint64_t)r->p[i] << (8 * i);
        r->p += w;
        return 1;
    }
    case PB_LEN: {
        uint64_t n;
        rc = pb_varint(&r->p, r->end, &n);
        if (rc < 0)
            return pb_fail(d, r->msg, f->at, "%s length in field %u",
                           rc == -1 ? "truncated" : "overflowing", f->num);
        if (n > (uint64_t)(r->end - r->p))
            return pb_fail(d, r->msg, f->at, "length %llu of field %u runs past the end (%zu left)",
                           (unsigned long long)n, f->num, (size_t)(r->end - r->p));
        f->data = r->p;
        f->len = (size_t)n;
        r->p += n;
        return 1;
    }
    case PB_SGROUP:
        if (pb_skip_group(d, r, f->num, f->at) < 0)
            return -1;
        return 1;
    case PB_EGROUP:
        return 1;
    default:
        return pb_fail(d, r->msg, f->at, "invalid wire type %u in field %u", f->wire, f->num);
    }
}

/* Skip a (deprecated, proto2) group up to its matching end-group key. */
static int pb_skip_group(struct pb_dec *d, struct pb_reader *r, uint32_t num, const uint8_t *at)
{
    struct pb_field f;
    int rc;

    if (d->depth >= d->max_depth)
        return pb_fail(d, r->msg, at, "nesting deeper than %d levels", d->max_depth);
    d->depth++;
    while ((rc = pb_next(d, r, &f)) > 0) {
        if (f.wire != PB_EGROUP)
            continue;
        d->depth--;
        if (f.num != num)
            return pb_fail(d, r->msg, f.at, "end-group %u inside group %u", f.num, num);
        return 0;
    }
    if (rc == 0)
        return pb_fail(d, r->msg, at, "unterminated group %u", num);
    return -1;
}

/* Next field of a message body: as pb_next, but an end-group key here has no open group. */
int pb_field_next(struct pb_dec *d, struct pb_reader *r, struct pb_field *f)
{
    int rc = pb_next(d, r, f);

    if (rc > 0 && f->wire == PB_EGROUP)
        return pb_fail(d, r->msg, f->at, "end-group %u without a group", f->num);
    return rc;
}

/* Open the payload of a LEN field as the message `name`; pair with pb_leave(). */
int pb_enter(struct pb_dec *d, const struct pb_reader *parent, const struct pb_field *f,
             const char *name, struct pb_reader *sub)
{
    if (d->depth >= d->max_depth)
        return pb_fail(d, parent->msg, f->at, "nesting deeper than %d levels", d->max_depth);
    d->depth++;
    sub->p = f->data;
    sub->end = f->data + f->len;
    sub->msg = name;
    return 0;
}

void pb_leave(struct pb_dec *d)
{
    d->depth--;
}

/* A string field we keep: bounded, NUL-free UTF-8. A non-LEN wire type is an unknown field. */
int pb_string(struct pb_dec *d, const struct pb_reader *r, const struct pb_field *f,
              const char *field, size_t max)
{
    if (f->wire != PB_LEN)
        return 0;
    if (f->len > max)
        return pb_fail(d, r->msg, f->at, "'%s' is longer than %zu bytes", field, max);
    if (memchr(f->data, 0, f->len) || !utf8_valid(f->data, f->len))
        return pb_fail(d, r->msg, f->at, "'%s' is not valid UTF-8 or contains NUL", field);
    return 1;
}

/* repeated int64 (cpu_ids): one varint, or a packed run of varints that must end exactly. */
int pb_int64s(struct pb_dec *d, const struct pb_reader *r, const struct pb_field *f,
              const char *field)
{
    const uint8_t *p, *end;
    uint64_t v;
    int rc;

    if (f->wire != PB_LEN)
        return 0; /* unpacked (already read) or an unknown wire type (already skipped) */
    p = f->data;
    end = f->data + f->len;
    while (p < end) {
        rc = pb_varint(&p, end, &v);
        if (rc < 0)
            return pb_fail(d, r->msg, f->at, "%s varint in packed '%s'",
                           rc == -1 ? "truncated" : "overflowing", field);
    }
    return 0;
}

/* Walk a message we do not keep anything from, checking its known sub-messages. */
int pb_walk(struct pb_dec *d, const struct pb_reader *parent, const struct pb_field *f,
            const char *name, pb_field_fn fn)
{
    struct pb_reader r;
    struct pb_field g;
    int rc;

    if (f->wire != PB_LEN)
        return 0;
    if (pb_enter(d, parent, f, name, &r) < 0)
        return -1;
    while ((rc = pb_field_next(d, &r, &g)) > 0) {
        if (fn && fn(d, &r, &g) < 0)
            return -1;
    }
    pb_leave(d);
    return rc;
}

void pb_put_varint(struct sbuf *b, uint64_t v)
{
    char buf[10];
    size_t n = 0;

    while (v >= 0x80) {
        buf[n++] = (char)(v | 0x80);
        v >>= 7;
    }
    buf[n++] = (char)v;
    sbuf_add(b, buf, n);
}

void pb_put_key(struct sbuf *b, uint32_t num, unsigned wire)
{
    pb_put_varint(b, (uint64_t)num << 3 | (wire & 7));
}

void pb_put_uint(struct sbuf *b, uint32_t num, uint64_t v)
{
    pb_put_key(b, num, PB_VARINT);
    pb_put_varint(b, v);
}

void pb_put_bytes(struct sbuf *b, uint32_t num, const void *data, size_t len)
{
    pb_put_key(b, num, PB_LEN);
    pb_put_varint(b, len);
    sbuf_add(b, data, len);
}
