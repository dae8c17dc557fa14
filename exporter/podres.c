/*
 * The kubelet's pod-resources v1 messages, ListPodResourcesResponse and
 * AllocatableResourcesResponse, decoded into a `struct podres_list` (pbwire.c reads the wire
 * format), and the two calls that fetch them (grpc.c is the transport).
 *
 * Why not protobuf-c and grpc: both responses are read-only trees of strings and ints, the
 * requests are empty, and a gRPC C runtime would be the largest dependency of the exporter. The
 * hand-written, fuzzed decoder below is smaller than the generated code would be. Fields it
 * does not know are skipped (the kubelet adds some every few releases); the strings it keeps
 * become Prometheus labels, so they are bounded (PODRES_MAX_STRING), NUL-free UTF-8.
 *
 * Memory stays proportional to the input: strings are copied once per owning message (a pod's
 * name is shared by all its devices) and only when an entry refers to them, and the number of
 * entries is capped at PODRES_MAX_ENTRIES.
 */
#include "podres.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc.h"
#include "log.h"
#include "pbwire.h"
#include "util.h"

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

/* ---- decoding ----------------------------------------------------------------------------- */

/* A string field seen in the input, copied into the list only when an entry needs it. */
struct pstr {
    const uint8_t *p;
    size_t n;
    const char *s;
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

/* The list a decode fills (pb_dec.arg). */
static struct podres_list *dec_list(struct pb_dec *d)
{
    return d->arg;
}

/* A string field we keep: bounded, NUL-free UTF-8. A non-LEN wire type is an unknown field. */
static int dec_string(struct pb_dec *d, const struct pb_reader *r, const struct pb_field *f,
                      const char *field, struct pstr *out)
{
    int rc = pb_string(d, r, f, field, PODRES_MAX_STRING);

    if (rc <= 0)
        return rc;
    out->p = f->data;
    out->n = f->len;
    out->s = NULL;
    return 0;
}

static int dec_topology_field(struct pb_dec *d, struct pb_reader *r, const struct pb_field *f)
{
    if (f->num == 1) /* nodes: NUMANode { int64 ID = 1; } has nothing to check beyond pb_next */
        return pb_walk(d, r, f, "NUMANode", NULL);
    return 0;
}

static int dec_memory_field(struct pb_dec *d, struct pb_reader *r, const struct pb_field *f)
{
    if (f->num == 3)
        return pb_walk(d, r, f, "TopologyInfo", dec_topology_field);
    return 0; /* memory_type (1), size (2), unknown */
}

/* ---- pod-resources messages --------------------------------------------------------------- */

static int dec_room(struct pb_dec *d, const struct pb_reader *r, const struct pb_field *f)
{
    if (dec_list(d)->n_allocs + dec_list(d)->n_claims >= PODRES_MAX_ENTRIES)
        return pb_fail(d, r->msg, f->at, "more than %d allocations", PODRES_MAX_ENTRIES);
    return 0;
}

static int dec_claim_resource(struct pb_dec *d, const struct pb_reader *parent,
                              const struct pb_field *pf, struct owner *o, struct pstr *claim_ns,
                              struct pstr *claim_name)
{
    struct pstr driver = {0}, pool = {0}, device = {0};
    struct pb_reader r;
    struct pb_field f;
    int rc;

    if (pb_enter(d, parent, pf, "ClaimResource", &r) < 0)
        return -1;
    while ((rc = pb_field_next(d, &r, &f)) > 0) {
        switch (f.num) {
        case 1:
            rc = pb_walk(d, &r, &f, "CDIDevice", NULL); /* name (1) is not kept */
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
    pb_leave(d);
    if (dec_room(d, parent, pf) < 0)
        return -1;

    struct podres_list *l = dec_list(d);
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

static int dec_dynamic_resource(struct pb_dec *d, const struct pb_reader *parent,
                                const struct pb_field *pf, struct owner *o)
{
    struct pstr claim_ns = {0}, claim_name = {0};
    struct pb_reader r;
    struct pb_field f;
    int rc;

    if (pf->wire != PB_LEN)
        return 0;
    if (pb_enter(d, parent, pf, "DynamicResource", &r) < 0)
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
    pb_leave(d);
    return 0;
}

static int dec_container_devices(struct pb_dec *d, const struct pb_reader *parent,
                                 const struct pb_field *pf, struct owner *o)
{
    struct pstr resource = {0}, id;
    struct pb_reader r;
    struct pb_field f;
    int rc;

    if (pf->wire != PB_LEN)
        return 0;
    if (pb_enter(d, parent, pf, "ContainerDevices", &r) < 0)
        return -1;
    while ((rc = pb_field_next(d, &r, &f)) > 0) {
        if (f.num == 1)
            rc = dec_string(d, &r, &f, "resource_name", &resource);
        else if (f.num == 3)
            rc = pb_walk(d, &r, &f, "TopologyInfo", dec_topology_field);
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
        struct podres_list *l = dec_list(d);
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
    pb_leave(d);
    return 0;
}

static int dec_container(struct pb_dec *d, const struct pb_reader *parent,
                         const struct pb_field *pf, struct owner *pod)
{
    struct owner o = {.ns = pod->ns, .pod = pod->pod};
    struct pb_reader r;
    struct pb_field f;
    int rc;

    if (pf->wire != PB_LEN)
        return 0;
    if (pb_enter(d, parent, pf, "ContainerResources", &r) < 0)
        return -1;
    while ((rc = pb_field_next(d, &r, &f)) > 0) {
        switch (f.num) {
        case 1:
            rc = dec_string(d, &r, &f, "name", &o.container);
            break;
        case 3:
            rc = pb_int64s(d, &r, &f, "cpu_ids");
            break;
        case 4:
            rc = pb_walk(d, &r, &f, "ContainerMemory", dec_memory_field);
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
    pb_leave(d);
    /* The pod's strings may have been copied while decoding this container. */
    pod->ns.s = o.ns.s;
    pod->pod.s = o.pod.s;
    return 0;
}

static int dec_pod(struct pb_dec *d, const struct pb_reader *parent, const struct pb_field *pf)
{
    struct owner o;
    struct pb_reader r;
    struct pb_field f;
    int rc;

    if (pf->wire != PB_LEN)
        return 0;
    memset(&o, 0, sizeof(o));
    if (pb_enter(d, parent, pf, "PodResources", &r) < 0)
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
            rc = pb_int64s(d, &r, &f, "cpu_ids");
            break;
        case 5:
            rc = pb_walk(d, &r, &f, "ContainerMemory", dec_memory_field);
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
    pb_leave(d);
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
    struct pb_dec d = {
        .base = buf, .err = err, .errlen = errlen, .max_depth = PODRES_MAX_DEPTH, .arg = out};
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
                rc = pb_int64s(&d, &r, &f, "cpu_ids");
                break;
            case 3:
                rc = pb_walk(&d, &r, &f, "ContainerMemory", dec_memory_field);
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

/* ---- calls -------------------------------------------------------------------------------- */

typedef int (*decode_fn)(const uint8_t *, size_t, struct podres_list *, char *, size_t);

static int podres_fetch(const char *socket_path, const char *method, double timeout,
                        decode_fn decode, struct podres_list *out, char *err, size_t errlen)
{
    struct grpc_call c = {
        .socket_path = socket_path,
        .service = "v1.PodResourcesLister",
        .method = method,
        .name = "pod-resources",
        .timeout = timeout,
        .max_message = PODRES_MAX_MESSAGE,
    };
    const uint8_t *msg = NULL;
    size_t msglen = 0;
    char why[256];
    int ret = -1;

    memset(out, 0, sizeof(*out));
    if (grpc_unary(&c, &msg, &msglen, err, errlen) < 0)
        goto out;
    if (decode(msg, msglen, out, why, sizeof(why)) < 0) {
        if (err && errlen)
            snprintf(err, errlen, "pod-resources '%s' answer: %s", method, why);
        goto out;
    }
    log_debug("pod-resources '%s': %zu allocations, %zu claims, grpc-status %s", method,
              out->n_allocs, out->n_claims,
              c.grpc_status < 0     ? "missing"
              : c.status_after_body ? "in trailers"
                                    : "in headers");
    ret = 0;
out:
    grpc_call_free(&c);
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
