/*
 * kubelet pod-resources v1 client: gRPC over HTTP/2 with libcurl on a Unix socket, and a small
 * protobuf decoder for ListPodResourcesResponse and AllocatableResourcesResponse.
 *
 * Why not protobuf-c and grpc: both responses are read-only trees of strings and ints, the
 * requests are empty, and a gRPC C runtime would be the largest dependency of the exporter. The
 * hand-written, fuzzed decoder below is smaller than the generated code would be.
 *
 * The decoder follows the protobuf wire rules that matter for a kubelet that is newer than us
 * (docs/kernel-interfaces.md §10.2): unknown fields of every wire type are skipped (groups
 * included, up to PODRES_MAX_DEPTH), repeated int64 is accepted packed and unpacked, a known field
 * that arrives with an unexpected wire type is treated as unknown (what the reference protobuf
 * runtimes do), and of a singular field sent twice the last value wins. Everything else is
 * strict: varints longer than 10 bytes or above 2^64, lengths past the end of their message,
 * truncated fixed-width fields, field number 0 and wire types 6/7 are errors, as are kept
 * strings that are too long, contain NUL or are not UTF-8 (they become Prometheus labels).
 *
 * Memory stays proportional to the input: strings are copied once per owning message (a pod's
 * name is shared by all its devices) and only when an entry refers to them, and the number of
 * entries is capped at PODRES_MAX_ENTRIES.
 */
#include "podres.h"

#include <curl/curl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "log.h"
#include "utf8.h"
#include "util.h"

static void podres_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void podres_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- result list -------------------------------------------------------------------------- */

void podres_free(struct podres_list *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->n_strs; i++)
        free(list->strs[i]);
    free(list->strs);
    free(list->allocs);
    free(list->claims);
    memset(list, 0, sizeof(*list));
}

void podres_filter_prefix(struct podres_list *list, const char *prefix)
{
    size_t kept = 0;

    for (size_t i = 0; i < list->n_allocs; i++) {
        if (str_has_prefix(list->allocs[i].resource, prefix))
            list->allocs[kept++] = list->allocs[i];
    }
    list->n_allocs = kept;
}

/* Copy n bytes (already checked: no NUL) into a string owned by the list. */
static const char *list_own(struct podres_list *l, const uint8_t *p, size_t n)
{
    if (n == 0)
        return "";
    if (l->n_strs == l->cap_strs) {
        l->cap_strs = l->cap_strs ? 2 * l->cap_strs : 32;
        l->strs = xrealloc(l->strs, l->cap_strs * sizeof(*l->strs));
    }
    char *s = xmalloc(n + 1);
    memcpy(s, p, n);
    s[n] = '\0';
    l->strs[l->n_strs++] = s;
    return s;
}

/* ---- protobuf reader ---------------------------------------------------------------------- */

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_SGROUP = 3, PB_EGROUP = 4, PB_I32 = 5 };

/* A string field seen in the input, copied into the list only when an entry needs it. */
struct pstr {
    const uint8_t *p;
    size_t n;
    const char *s;
};

struct dec {
    const uint8_t *base; /* start of the whole message, for byte offsets in errors */
    struct podres_list *out;
    char *err;
    size_t errlen;
    int depth;
};

struct pb_reader {
    const uint8_t *p, *end;
    const char *msg; /* message type, for errors */
};

struct pb_field {
    uint32_t num;
    unsigned wire;
    uint64_t u;          /* value of VARINT, I64, I32 */
    const uint8_t *data; /* payload of LEN */
    size_t len;
    const uint8_t *at; /* where the key starts */
};

/* Who an entry belongs to; empty for AllocatableResourcesResponse. */
struct owner {
    struct pstr ns, pod, container;
};

static const char *pstr_get(struct podres_list *l, struct pstr *ps)
{
    if (!ps->s)
        ps->s = list_own(l, ps->p, ps->n);
    return ps->s;
}

static int dec_fail(struct dec *d, const char *msg, const uint8_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int dec_fail(struct dec *d, const char *msg, const uint8_t *at, const char *fmt, ...)
{
    char why[200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    podres_err(d->err, d->errlen, "malformed '%s' at byte %zu: %s", msg, (size_t)(at - d->base),
               why);
    return -1;
}

/* 0, -1 if the input ends inside the varint, -2 if it is longer than 10 bytes or above 2^64. */
static int pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
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

static int pb_skip_group(struct dec *d, struct pb_reader *r, uint32_t num, const uint8_t *at);

/*
 * Read the next field of r, consuming its payload (a group is skipped whole). 1 with *f
 * filled, 0 at the end of the message, -1 on malformed input. An end-group key is returned to
 * the caller, which alone knows whether a group is open.
 */
static int pb_next(struct dec *d, struct pb_reader *r, struct pb_field *f)
{
    uint64_t key;
    int rc;

    if (r->p == r->end)
        return 0;
    f->at = r->p;
    rc = pb_varint(&r->p, r->end, &key);
    if (rc < 0)
        return dec_fail(d, r->msg, f->at, rc == -1 ? "truncated field key" : "field key overflows");
    if (key > UINT32_MAX)
        return dec_fail(d, r->msg, f->at, "field number %llu out of range",
                        (unsigned long long)(key >> 3));
    f->num = (uint32_t)(key >> 3);
    f->wire = (unsigned)(key & 7);
    if (f->num == 0)
        return dec_fail(d, r->msg, f->at, "field number 0");

    switch (f->wire) {
    case PB_VARINT:
        rc = pb_varint(&r->p, r->end, &f->u);
        if (rc < 0)
            return dec_fail(d, r->msg, f->at, "%s varint in field %u",
                            rc == -1 ? "truncated" : "overflowing", f->num);
        return 1;
    case PB_I64:
    case PB_I32: {
        size_t w = f->wire == PB_I64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < w)
            return dec_fail(d, r->msg, f->at, "truncated fixed%zu in field %u", 8 * w, f->num);
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
            return dec_fail(d, r->msg, f->at, "%s length in field %u",
                            rc == -1 ? "truncated" : "overflowing", f->num);
        if (n > (uint64_t)(r->end - r->p))
            return dec_fail(d, r->msg, f->at,
                            "length %llu of field %u runs past the end (%zu left)",
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
        return dec_fail(d, r->msg, f->at, "invalid wire type %u in field %u", f->wire, f->num);
    }
}

/* Skip a (deprecated, proto2) group up to its matching end-group key. */
static int pb_skip_group(struct dec *d, struct pb_reader *r, uint32_t num, const uint8_t *at)
{
    struct pb_field f;
    int rc;

    if (d->depth >= PODRES_MAX_DEPTH)
        return dec_fail(d, r->msg, at, "nesting deeper than %d levels", PODRES_MAX_DEPTH);
    d->depth++;
    while ((rc = pb_next(d, r, &f)) > 0) {
        if (f.wire != PB_EGROUP)
            continue;
        d->depth--;
        if (f.num != num)
            return dec_fail(d, r->msg, f.at, "end-group %u inside group %u", f.num, num);
        return 0;
    }
    if (rc == 0)
        return dec_fail(d, r->msg, at, "unterminated group %u", num);
    return -1;
}

/* Next field of a message body: as pb_next, but an end-group key here has no open group. */
static int pb_field_next(struct dec *d, struct pb_reader *r, struct pb_field *f)
{
    int rc = pb_next(d, r, f);

    if (rc > 0 && f->wire == PB_EGROUP)
        return dec_fail(d, r->msg, f->at, "end-group %u without a group", f->num);
    return rc;
}

/* Open the payload of a LEN field as the message `name`; pair with dec_leave(). */
static int dec_enter(struct dec *d, const struct pb_reader *parent, const struct pb_field *f,
                     const char *name, struct pb_reader *sub)
{
    if (d->depth >= PODRES_MAX_DEPTH)
        return dec_fail(d, parent->msg, f->at, "nesting deeper than %d levels", PODRES_MAX_DEPTH);
    d->depth++;
    sub->p = f->data;
    sub->end = f->data + f->len;
    sub->msg = name;
    return 0;
}

static void dec_leave(struct dec *d)
{
    d->depth--;
}

/* A string field we keep: bounded, NUL-free UTF-8. A non-LEN wire type is an unknown field. */
static int dec_string(struct dec *d, const struct pb_reader *r, const struct pb_field *f,
                      const char *field, struct pstr *out)
{
    if (f->wire != PB_LEN)
        return 0;
    if (f->len > PODRES_MAX_STRING)
        return dec_fail(d, r->msg, f->at, "'%s' is longer than %d bytes", field, PODRES_MAX_STRING);
    if (memchr(f->data, 0, f->len) || !utf8_valid(f->data, f->len))
        return dec_fail(d, r->msg, f->at, "'%s' is not valid UTF-8 or contains NUL", field);
    out->p = f->data;
    out->n = f->len;
    out->s = NULL;
    return 0;
}

/* repeated int64 (cpu_ids): one varint, or a packed run of varints that must end exactly. */
static int dec_int64s(struct dec *d, const struct pb_reader *r, const struct pb_field *f,
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
            return dec_fail(d, r->msg, f->at, "%s varint in packed '%s'",
                            rc == -1 ? "truncated" : "overflowing", field);
    }
    return 0;
}

/* Walk a message we do not keep anything from, checking its known sub-messages. */
typedef int (*dec_field_fn)(struct dec *d, struct pb_reader *r, const struct pb_field *f);

static int dec_walk(struct dec *d, const struct pb_reader *parent, const struct pb_field *f,
                    const char *name, dec_field_fn fn)
{
    struct pb_reader r;
    struct pb_field g;
    int rc;

    if (f->wire != PB_LEN)
        return 0;
    if (dec_enter(d, parent, f, name, &r) < 0)
        return -1;
    while ((rc = pb_field_next(d, &r, &g)) > 0) {
        if (fn && fn(d, &r, &g) < 0)
            return -1;
    }
    dec_leave(d);
    return rc;
}

static int dec_topology_field(struct dec *d, struct pb_reader *r, const struct pb_field *f)
{
    if (f->num == 1) /* nodes: NUMANode { int64 ID = 1; } has nothing to check beyond pb_next */
        return dec_walk(d, r, f, "NUMANode", NULL);
    return 0;
}

static int dec_memory_field(struct dec *d, struct pb_reader *r, const struct pb_field *f)
{
    if (f->num == 3)
        return dec_walk(d, r, f, "TopologyInfo", dec_topology_field);
    return 0; /* memory_type (1), size (2), unknown */
}

/* ---- pod-resources messages --------------------------------------------------------------- */

static int dec_room(struct dec *d, const struct pb_reader *r, const struct pb_field *f)
{
    if (d->out->n_allocs + d->out->n_claims >= PODRES_MAX_ENTRIES)
        return dec_fail(d, r->msg, f->at, "more than %d allocations", PODRES_MAX_ENTRIES);
    return 0;
}

static int dec_claim_resource(struct dec *d, const struct pb_reader *parent,
                              const struct pb_field *pf, struct owner *o, struct pstr *claim_ns,
                              struct pstr *claim_name)
{
    struct pstr driver = {0}, pool = {0}, device = {0};
    struct pb_reader r;
    struct pb_field f;
    int rc;

    if (dec_enter(d, parent, pf, "ClaimResource", &r) < 0)
        return -1;
    while ((rc = pb_field_next(d, &r, &f)) > 0) {
        switch (f.num) {
        case 1:
            rc = dec_walk(d, &r, &f, "CDIDevice", NULL); /* name (1) is not kept */
            break;
        case 2:
            rc = dec_string(d, &r, &f, "driver_name", &driver);
            break;
        case 3:
            rc = dec_string(d, &r, &f, "pool_name", &pool);
            break;
        case 4:
            rc = dec_string(d, &r, &f, "device_name", &device);
            break;
        default: /* share_id (5) and newer fields */
            rc = 0;
        }
        if (rc < 0)
            return -1;
    }
    if (rc < 0)
        return -1;
    dec_leave(d);
    if (dec_room(d, parent, pf) < 0)
        return -1;

    struct podres_list *l = d->out;
    if (l->n_claims == l->cap_claims) {
        l->cap_claims = l->cap_claims ? 2 * l->cap_claims : 16;
        l->claims = xrealloc(l->claims, l->cap_claims * sizeof(*l->claims));
    }
    l->claims[l->n_claims++] = (struct podres_claim){
        .namespace = pstr_get(l, &o->ns),
        .pod = pstr_get(l, &o->pod),
        .container = pstr_get(l, &o->container),
        .claim_namespace = pstr_get(l, claim_ns),
        .claim_name = pstr_get(l, claim_name),
        .driver_name = pstr_get(l, &driver),
        .pool_name = pstr_get(l, &pool),
        .device_name = pstr_get(l, &device),
    };
    return 0;
}

static int dec_dynamic_resource(struct dec *d, const struct pb_reader *parent,
                                const struct pb_field *pf, struct owner *o)
{
    struct pstr claim_ns = {0}, claim_name = {0};
    struct pb_reader r;
    struct pb_field f;
    int rc;

    if (pf->wire != PB_LEN)
        return 0;
    if (dec_enter(d, parent, pf, "DynamicResource", &r) < 0)
        return -1;
    /* Fields may come in any order: names first, then the claim resources that use them. */
    while ((rc = pb_field_next(d, &r, &f)) > 0) {
        if (f.num == 2)
            rc = dec_string(d, &r, &f, "claim_name", &claim_name);
        else if (f.num == 3)
            rc = dec_string(d, &r, &f, "claim_namespace", &claim_ns);
        if (rc < 0)
            return -1;
    }
    if (rc < 0)
        return -1;
    r.p = pf->data;
    while (pb_field_next(d, &r, &f) > 0) {
        if (f.num == 4 && f.wire == PB_LEN &&
            dec_claim_resource(d, &r, &f, o, &claim_ns, &claim_name) < 0)
            return -1;
    }
    dec_leave(d);
    return 0;
}

static int dec_container_devices(struct dec *d, const struct pb_reader *parent,
                                 const struct pb_field *pf, struct owner *o)
{
    struct pstr resource = {0}, id;
    struct pb_reader r;
    struct pb_field f;
    int rc;

    if (pf->wire != PB_LEN)
        return 0;
    if (dec_enter(d, parent, pf, "ContainerDevices", &r) < 0)
        return -1;
    while ((rc = pb_field_next(d, &r, &f)) > 0) {
        if (f.num == 1)
            rc = dec_string(d, &r, &f, "resource_name", &resource);
        else if (f.num == 3)
            rc = dec_walk(d, &r, &f, "TopologyInfo", dec_topology_field);
        if (rc < 0)
            return -1;
    }
    if (rc < 0)
        return -1;
    r.p = pf->data;
    while (pb_field_next(d, &r, &f) > 0) {
        if (f.num != 2 || f.wire != PB_LEN)
            continue;
        if (dec_string(d, &r, &f, "device_ids", &id) < 0 || dec_room(d, &r, &f) < 0)
            return -1;
        struct podres_list *l = d->out;
        if (l->n_allocs == l->cap_allocs) {
            l->cap_allocs = l->cap_allocs ? 2 * l->cap_allocs : 64;
            l->allocs = xrealloc(l->allocs, l->cap_allocs * sizeof(*l->allocs));
        }
        l->allocs[l->n_allocs++] = (struct podres_alloc){
            .namespace = pstr_get(l, &o->ns),
            .pod = pstr_get(l, &o->pod),
            .container = pstr_get(l, &o->container),
            .resource = pstr_get(l, &resource),
            .device_id = pstr_get(l, &id),
        };
    }
    dec_leave(d);
    return 0;
}

static int dec_container(struct dec *d, const struct pb_reader *parent, const struct pb_field *pf,
                         struct owner *pod)
{
    struct owner o = {.ns = pod->ns, .pod = pod->pod};
    struct pb_reader r;
    struct pb_field f;
    int rc;

    if (pf->wire != PB_LEN)
        return 0;
    if (dec_enter(d, parent, pf, "ContainerResources", &r) < 0)
        return -1;
    while ((rc = pb_field_next(d, &r, &f)) > 0) {
        switch (f.num) {
        case 1:
            rc = dec_string(d, &r, &f, "name", &o.container);
            break;
        case 3:
            rc = dec_int64s(d, &r, &f, "cpu_ids");
            break;
        case 4:
            rc = dec_walk(d, &r, &f, "ContainerMemory", dec_memory_field);
            break;
        default: /* devices (2) and dynamic_resources (5) in the second pass */
            rc = 0;
        }
        if (rc < 0)
            return -1;
    }
    if (rc < 0)
        return -1;
    r.p = pf->data;
    while (pb_field_next(d, &r, &f) > 0) {
        rc = 0;
        if (f.num == 2)
            rc = dec_container_devices(d, &r, &f, &o);
        else if (f.num == 5)
            rc = dec_dynamic_resource(d, &r, &f, &o);
        if (rc < 0)
            return -1;
    }
    dec_leave(d);
    /* The pod's strings may have been copied while decoding this container. */
    pod->ns.s = o.ns.s;
    pod->pod.s = o.pod.s;
    return 0;
}

static int dec_pod(struct dec *d, const struct pb_reader *parent, const struct pb_field *pf)
{
    struct owner o;
    struct pb_reader r;
    struct pb_field f;
    int rc;

    if (pf->wire != PB_LEN)
        return 0;
    memset(&o, 0, sizeof(o));
    if (dec_enter(d, parent, pf, "PodResources", &r) < 0)
        return -1;
    while ((rc = pb_field_next(d, &r, &f)) > 0) {
        switch (f.num) {
        case 1:
            rc = dec_string(d, &r, &f, "name", &o.pod);
            break;
        case 2:
            rc = dec_string(d, &r, &f, "namespace", &o.ns);
            break;
        case 4:
            rc = dec_int64s(d, &r, &f, "cpu_ids");
            break;
        case 5:
            rc = dec_walk(d, &r, &f, "ContainerMemory", dec_memory_field);
            break;
        default: /* containers (3) in the second pass */
            rc = 0;
        }
        if (rc < 0)
            return -1;
    }
    if (rc < 0)
        return -1;
    r.p = pf->data;
    while (pb_field_next(d, &r, &f) > 0) {
        if (f.num == 3 && dec_container(d, &r, &f, &o) < 0)
            return -1;
    }
    dec_leave(d);
    return 0;
}

static int dec_top(const uint8_t *buf, size_t len, struct podres_list *out, char *err,
                   size_t errlen, bool list)
{
    static const uint8_t nothing[1];
    struct owner none;
    struct pb_reader r;
    struct pb_field f;
    int rc;

    memset(out, 0, sizeof(*out));
    memset(&none, 0, sizeof(none));
    if (!buf || !len)
        buf = nothing, len = 0;
    struct dec d = {.base = buf, .out = out, .err = err, .errlen = errlen};
    r.p = buf;
    r.end = buf + len;
    r.msg = list ? "ListPodResourcesResponse" : "AllocatableResourcesResponse";
    while ((rc = pb_field_next(&d, &r, &f)) > 0) {
        if (list) {
            rc = f.num == 1 ? dec_pod(&d, &r, &f) : 0;
        } else {
            switch (f.num) {
            case 1:
                rc = dec_container_devices(&d, &r, &f, &none);
                break;
            case 2:
                rc = dec_int64s(&d, &r, &f, "cpu_ids");
                break;
            case 3:
                rc = dec_walk(&d, &r, &f, "ContainerMemory", dec_memory_field);
                break;
            default:
                rc = 0;
            }
        }
        if (rc < 0)
            break;
    }
    if (rc < 0) {
        podres_free(out);
        return -1;
    }
    return 0;
}

int podres_decode_list(const uint8_t *buf, size_t len, struct podres_list *out, char *err,
                       size_t errlen)
{
    return dec_top(buf, len, out, err, errlen, true);
}

int podres_decode_allocatable(const uint8_t *buf, size_t len, struct podres_list *out, char *err,
                              size_t errlen)
{
    return dec_top(buf, len, out, err, errlen, false);
}

/* ---- gRPC framing ------------------------------------------------------------------------- */

/*
 * A unary response body is exactly one Length-Prefixed-Message: compressed flag 0 (we send no
 * grpc-accept-encoding, so a compressed answer is a server bug), a 4-byte big-endian length,
 * the message. Anything before a complete message or after it is an error.
 */
static int podres_unframe(const uint8_t *buf, size_t len, const uint8_t **msg, size_t *msglen,
                          char *err, size_t errlen)
{
    uint32_t n;

    if (len == 0) {
        podres_err(err, errlen, "response has no gRPC message");
        return -1;
    }
    if (len < 5) {
        podres_err(err, errlen, "truncated gRPC message prefix (%zu of 5 bytes)", len);
        return -1;
    }
    if (buf[0] != 0) {
        podres_err(err, errlen, "gRPC message has compressed flag %u; compression not supported",
                   buf[0]);
        return -1;
    }
    n = (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 | buf[4];
    if (n > PODRES_MAX_MESSAGE) {
        podres_err(err, errlen, "gRPC message of %u bytes exceeds the limit of %u", n,
                   PODRES_MAX_MESSAGE);
        return -1;
    }
    if (len - 5 < n) {
        podres_err(err, errlen, "truncated gRPC message (%zu of %u bytes)", len - 5, n);
        return -1;
    }
    if (len - 5 > n) {
        podres_err(err, errlen, "%zu unexpected bytes after the gRPC message", len - 5 - n);
        return -1;
    }
    *msg = buf + 5;
    *msglen = n;
    return 0;
}

/* ---- transport ---------------------------------------------------------------------------- */

static const char *const grpc_codes[] = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

struct call {
    struct sbuf body;
    bool too_big;
    long grpc_status; /* -1 until seen */
    bool status_after_body;
    char grpc_message[256];
    char content_type[128];
};

/* Decode grpc-message (percent-encoded UTF-8); control characters become '?'. */
static void pct_decode(char *dst, size_t cap, const char *src, size_t n)
{
    size_t o = 0;

    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c == '%' && i + 2 < n && hex_value((unsigned char)src[i + 1]) >= 0 &&
            hex_value((unsigned char)src[i + 2]) >= 0) {
            c = (unsigned char)(hex_value((unsigned char)src[i + 1]) << 4 |
                                hex_value((unsigned char)src[i + 2]));
            i += 2;
        }
        dst[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    dst[o] = '\0';
}

static void copy_value(char *dst, size_t cap, const char *v, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

/*
 * libcurl calls this for every header line of the response, and (verified against the
 * @grpc/grpc-js test server with libcurl 7.88.1 and nghttp2 1.52) also for the HTTP/2
 * trailers, after the body: grpc-status arrives here whether the server sends it in the
 * trailers (normal answers) or in the only HEADERS frame (Trailers-Only error answers).
 */
static size_t on_header(char *line, size_t size, size_t nmemb, void *arg)
{
    struct call *c = arg;
    size_t len = size * nmemb, nlen, vlen;
    const char *colon = memchr(line, ':', len), *v;

    if (!colon || colon == line)
        return len;
    nlen = (size_t)(colon - line);
    v = colon + 1;
    vlen = len - nlen - 1;
    while (vlen && (*v == ' ' || *v == '\t'))
        v++, vlen--;
    while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
        vlen--;

    if (nlen == 11 && !strncasecmp(line, "grpc-status", 11)) {
        char num[16];
        uint64_t st;
        copy_value(num, sizeof(num), v, vlen);
        /* A status we cannot read is reported as UNKNOWN, as gRPC clients do. */
        c->grpc_status = parse_u64(num, &st) == 0 && st <= INT32_MAX ? (long)st : 2;
        c->status_after_body = c->body.len > 0;
    } else if (nlen == 12 && !strncasecmp(line, "grpc-message", 12)) {
        pct_decode(c->grpc_message, sizeof(c->grpc_message), v, vlen);
    } else if (nlen == 12 && !strncasecmp(line, "content-type", 12)) {
        copy_value(c->content_type, sizeof(c->content_type), v, vlen);
    }
    return len;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    struct call *c = arg;
    size_t len = size * nmemb;

    if (c->body.len + len > (size_t)PODRES_MAX_MESSAGE + 5) {
        c->too_big = true;
        return 0; /* makes curl fail with CURLE_WRITE_ERROR */
    }
    sbuf_add(&c->body, data, len);
    return len;
}

static bool grpc_content_type(const char *ct)
{
    size_t n = strlen("application/grpc");

    return !strncasecmp(ct, "application/grpc", n) &&
           (ct[n] == '\0' || ct[n] == '+' || ct[n] == ';');
}

/*
 * One unary call with an empty request. On success the response message is left in c->body
 * and *msg / *msglen point into it.
 */
static int podres_call(const char *socket_path, const char *method, double timeout, struct call *c,
                       const uint8_t **msg, size_t *msglen, char *err, size_t errlen)
{
    static const char empty_request[5] = {0};
    char url[128], tmo[48], curl_err[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs = NULL;
    CURL *h;
    CURLcode rc;
    long http = 0, os_errno = 0;
    int ret = -1;

    if (!socket_path || !*socket_path ||
        strlen(socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        podres_err(err, errlen, "invalid pod-resources socket path '%s'",
                   socket_path ? socket_path : "");
        return -1;
    }
    if (!(timeout > 0 && timeout <= 86400)) {
        podres_err(err, errlen, "invalid pod-resources timeout %g", timeout);
        return -1;
    }
    const curl_version_info_data *ver = curl_version_info(CURLVERSION_NOW);
    if (!(ver->features & CURL_VERSION_HTTP2) || !(ver->features & CURL_VERSION_UNIX_SOCKETS)) {
        podres_err(err, errlen, "libcurl %s lacks HTTP/2 or Unix socket support", ver->version);
        return -1;
    }
    h = curl_easy_init();
    if (!h) {
        podres_err(err, errlen, "cannot initialise libcurl");
        return -1;
    }

    long ms = (long)ceil(timeout * 1000);
    snprintf(url, sizeof(url), "http://localhost/v1.PodResourcesLister/%s", method);
    /* grpc-timeout allows at most 8 digits; milliseconds cover 27 hours. */
    snprintf(tmo, sizeof(tmo), "grpc-timeout: %ldm", ms);
    hdrs = curl_slist_append(hdrs, "content-type: application/grpc");
    hdrs = curl_slist_append(hdrs, "te: trailers");
    hdrs = curl_slist_append(hdrs, tmo);
    hdrs = curl_slist_append(hdrs, "Accept:");
    if (!hdrs) {
        podres_err(err, errlen, "out of memory building request headers");
        goto out;
    }

    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, socket_path);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, empty_request);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)sizeof(empty_request));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "gpureclaim");
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, c);

    rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    if (rc == CURLE_COULDNT_CONNECT) {
        char eb[128];
        podres_err(err, errlen, "cannot connect to pod-resources socket '%s': %s", socket_path,
                   os_errno ? strerror_r((int)os_errno, eb, sizeof(eb)) : curl_err);
        goto out;
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        podres_err(err, errlen, "pod-resources '%s' timed out after %g s", method, timeout);
        goto out;
    }
    if (c->too_big) {
        podres_err(err, errlen, "pod-resources '%s' answer exceeds %u bytes", method,
                   PODRES_MAX_MESSAGE);
        goto out;
    }
    if (rc != CURLE_OK) {
        podres_err(err, errlen, "pod-resources '%s' request on '%s' failed: %s", method,
                   socket_path, *curl_err ? curl_err : curl_easy_strerror(rc));
        goto out;
    }
    if (c->grpc_status > 0) {
        const char *name = (size_t)c->grpc_status < ARRAY_LEN(grpc_codes)
                               ? grpc_codes[c->grpc_status]
                               : "unknown code";
        podres_err(err, errlen, "pod-resources '%s' failed: grpc-status %ld (%s)%s%s", method,
                   c->grpc_status, name, *c->grpc_message ? ": " : "", c->grpc_message);
        goto out;
    }
    if (http != 200) {
        podres_err(err, errlen, "pod-resources '%s' failed: HTTP status %ld", method, http);
        goto out;
    }
    if (!grpc_content_type(c->content_type)) {
        podres_err(err, errlen, "pod-resources '%s' answered content-type '%s', not gRPC", method,
                   c->content_type);
        goto out;
    }
    char why[160];
    if (podres_unframe((const uint8_t *)c->body.buf, c->body.len, msg, msglen, why, sizeof(why)) <
        0) {
        podres_err(err, errlen, "pod-resources '%s' answer: %s", method, why);
        goto out;
    }
    /*
     * No grpc-status at all: libcurl 7.88 does deliver trailers (see on_header), so this is a
     * server or proxy that dropped them. The gRPC spec asks clients to synthesize a status;
     * we accept the answer because the length prefix proves the one message of a unary call
     * arrived whole, which is all a status of OK would add, and mapping data that is complete
     * is better than none. Anything incomplete was rejected by podres_unframe above.
     */
    if (c->grpc_status < 0)
        log_debug("pod-resources '%s' answer has no grpc-status; accepting its complete message",
                  method);
    ret = 0;
out:
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    return ret;
}

typedef int (*decode_fn)(const uint8_t *, size_t, struct podres_list *, char *, size_t);

static int podres_fetch(const char *socket_path, const char *method, double timeout,
                        decode_fn decode, struct podres_list *out, char *err, size_t errlen)
{
    struct call c = {.grpc_status = -1};
    const uint8_t *msg = NULL;
    size_t msglen = 0;
    char why[256];
    int ret = -1;

    memset(out, 0, sizeof(*out));
    if (podres_call(socket_path, method, timeout, &c, &msg, &msglen, err, errlen) < 0)
        goto out;
    if (decode(msg, msglen, out, why, sizeof(why)) < 0) {
        podres_err(err, errlen, "pod-resources '%s' answer: %s", method, why);
        goto out;
    }
    log_debug("pod-resources '%s': %zu allocations, %zu claims, grpc-status %s", method,
              out->n_allocs, out->n_claims,
              c.grpc_status < 0     ? "missing"
              : c.status_after_body ? "in trailers"
                                    : "in headers");
    ret = 0;
out:
    sbuf_free(&c.body);
    return ret;
}

int podres_list(const char *socket_path, double timeout, struct podres_list *out, char *err,
                size_t errlen)
{
    return podres_fetch(socket_path, "List", timeout, podres_decode_list, out, err, errlen);
}

int podres_allocatable(const char *socket_path, double timeout, struct podres_list *out, char *err,
                       size_t errlen)
{
    return podres_fetch(socket_path, "GetAllocatableResources", timeout, podres_decode_allocatable,
                        out, err, errlen);
}
