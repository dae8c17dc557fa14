/*
 * Unit tests of exporter/podres.c and the common/pbwire.c under it: the protobuf decoder on
 * hand-encoded messages (a tiny encoder below builds them field by field); of grpc.c: the
 * gRPC unframer, the header callback and the argument checks of the transport. The transport
 * itself is tested against a real gRPC server in tests/e2e/podres.sh.
 */
#include "pbwire.c"
#include "grpc.c"
#include "podres.c"

#include <unistd.h>

#include "test.h"

/* ---- a tiny protobuf encoder ---------------------------------------------------------------- */

struct enc {
    uint8_t *b;
    size_t len, cap;
};

static void e_raw(struct enc *e, const void *p, size_t n)
{
    if (n == 0)
        return;
    if (e->len + n > e->cap) {
        e->cap = (e->len + n) * 2 + 64;
        e->b = xrealloc(e->b, e->cap);
    }
    memcpy(e->b + e->len, p, n);
    e->len += n;
}

static void e_byte(struct enc *e, uint8_t c)
{
    e_raw(e, &c, 1);
}

static void e_varint(struct enc *e, uint64_t v)
{
    while (v >= 0x80) {
        e_byte(e, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    e_byte(e, (uint8_t)v);
}

static void e_key(struct enc *e, uint32_t num, unsigned wire)
{
    e_varint(e, (uint64_t)num << 3 | wire);
}

static void e_uint(struct enc *e, uint32_t num, uint64_t v)
{
    e_key(e, num, PB_VARINT);
    e_varint(e, v);
}

static void e_bytes(struct enc *e, uint32_t num, const void *p, size_t n)
{
    e_key(e, num, PB_LEN);
    e_varint(e, n);
    e_raw(e, p, n);
}

static void e_str(struct enc *e, uint32_t num, const char *s)
{
    e_bytes(e, num, s, strlen(s));
}

/* Append `sub` as a length-delimited field and free it. */
static void e_msg(struct enc *e, uint32_t num, struct enc *sub)
{
    e_bytes(e, num, sub->b, sub->len);
    free(sub->b);
    memset(sub, 0, sizeof(*sub));
}

static void e_fixed(struct enc *e, uint32_t num, uint64_t v, unsigned width)
{
    e_key(e, num, width == 8 ? PB_I64 : PB_I32);
    for (unsigned i = 0; i < width; i++)
        e_byte(e, (uint8_t)(v >> (8 * i)));
}

/* Unknown fields of every wire type, including a group with a nested group inside. */
static void e_unknown(struct enc *e)
{
    e_uint(e, 900, 12345);
    e_fixed(e, 901, 0x0102030405060708ull, 8);
    e_fixed(e, 902, 0xdeadbeef, 4);
    e_str(e, 903, "future");
    e_key(e, 904, PB_SGROUP);
    e_uint(e, 1, 7);
    e_key(e, 2, PB_SGROUP);
    e_str(e, 3, "inner");
    e_key(e, 2, PB_EGROUP);
    e_key(e, 904, PB_EGROUP);
}

static void e_int64s(struct enc *e, uint32_t num, bool packed)
{
    static const int64_t v[] = {0, 1, 127, 128, 300, -1};

    if (packed) {
        struct enc p = {0};
        for (size_t i = 0; i < ARRAY_LEN(v); i++)
            e_varint(&p, (uint64_t)v[i]);
        e_msg(e, num, &p);
    } else {
        for (size_t i = 0; i < ARRAY_LEN(v); i++)
            e_uint(e, num, (uint64_t)v[i]);
    }
}

/* TopologyInfo { nodes { ID: id } } */
static void e_topology(struct enc *e, uint32_t num, uint64_t id)
{
    struct enc t = {0}, n = {0};
    e_uint(&n, 1, id);
    e_msg(&t, 1, &n);
    e_msg(e, num, &t);
}

static void e_memory(struct enc *e, uint32_t num)
{
    struct enc m = {0};
    e_str(&m, 1, "memory");
    e_uint(&m, 2, 1ull << 36);
    e_topology(&m, 3, 0);
    e_msg(e, num, &m);
}

/* ContainerDevices with `n` ids; resource first or last. */
static void e_devices(struct enc *e, uint32_t num, const char *resource, const char *const *ids,
                      size_t n, bool resource_last)
{
    struct enc d = {0};
    if (!resource_last)
        e_str(&d, 1, resource);
    for (size_t i = 0; i < n; i++)
        e_str(&d, 2, ids[i]);
    e_topology(&d, 3, 1);
    if (resource_last)
        e_str(&d, 1, resource);
    e_msg(e, num, &d);
}

static const char *const gpu_ids[] = {"0000:05:00.0", "amdgpu_xcp_0", "amdgpu_xcp_1"};

/*
 * A ListPodResourcesResponse with two pods: ml/train (container "main": 3 amd.com/cpx_nps4
 * partitions, 1 rdma device; container "side": nothing) and ml/dra (container "c": one claim).
 * `variant` bits: 1 names after containers, 2 packed cpu_ids, 4 unknown fields everywhere.
 */
static struct enc build_list(unsigned variant)
{
    bool late = variant & 1, packed = variant & 2, unknown = variant & 4;
    struct enc top = {0}, pod = {0}, c = {0}, side = {0};
    static const char *const rdma[] = {"rdma0"};

    if (unknown)
        e_unknown(&top);
    if (!late)
        e_str(&c, 1, "main");
    e_devices(&c, 2, "amd.com/cpx_nps4", gpu_ids, 3, late);
    if (unknown)
        e_unknown(&c);
    e_devices(&c, 2, "rdma/hca_shared_devices_a", rdma, 1, late);
    e_int64s(&c, 3, packed);
    e_memory(&c, 4);
    if (late)
        e_str(&c, 1, "main");

    e_str(&side, 1, "side");
    e_int64s(&side, 3, !packed);

    if (!late) {
        e_str(&pod, 1, "train");
        e_str(&pod, 2, "ml");
    }
    e_msg(&pod, 3, &c);
    e_msg(&pod, 3, &side);
    e_int64s(&pod, 4, packed);
    e_memory(&pod, 5);
    if (unknown)
        e_unknown(&pod);
    if (late) {
        e_str(&pod, 2, "ml");
        e_str(&pod, 1, "train");
    }
    e_msg(&top, 1, &pod);

    /* DynamicResource { claim_name, claim_namespace, claim_resources { cdi, driver, pool, dev } }
     */
    struct enc dra = {0}, cr = {0}, cdi = {0}, dr = {0};
    e_str(&cdi, 1, "amd.com/gpu=gpu-56-184");
    e_msg(&cr, 1, &cdi);
    e_str(&cr, 2, "gpu.amd.com");
    e_str(&cr, 3, "node-a");
    e_str(&cr, 4, "gpu-56-184");
    e_str(&cr, 5, "share-0");
    if (unknown)
        e_unknown(&cr);
    if (!late) {
        e_str(&dr, 2, "claim");
        e_str(&dr, 3, "ml");
    }
    e_msg(&dr, 4, &cr);
    if (late) {
        e_str(&dr, 3, "ml");
        e_str(&dr, 2, "claim");
    }
    e_str(&c, 1, "c");
    e_msg(&c, 5, &dr);
    e_str(&dra, 1, "dra");
    e_str(&dra, 2, "ml");
    e_msg(&dra, 3, &c);
    e_msg(&top, 1, &dra);
    return top;
}

/* ---- decoder ------------------------------------------------------------------------------- */

TEST(decode_empty)
{
    struct podres_list l;
    char err[256] = "";

    TEST_CHECK_INT(podres_decode_list(NULL, 0, &l, err, sizeof(err)), 0);
    TEST_CHECK_INT(l.n_allocs, 0);
    TEST_CHECK_INT(l.n_claims, 0);
    podres_free(&l);
    TEST_CHECK_INT(podres_decode_allocatable((const uint8_t *)"", 0, &l, err, sizeof(err)), 0);
    TEST_CHECK_INT(l.n_allocs, 0);
    podres_free(&l);
    /* A pod with no containers and an empty container give no entries either. */
    struct enc top = {0}, pod = {0}, c = {0};
    e_str(&pod, 1, "idle");
    e_msg(&pod, 3, &c);
    e_msg(&top, 1, &pod);
    TEST_CHECK_INT(podres_decode_list(top.b, top.len, &l, err, sizeof(err)), 0);
    TEST_CHECK_INT(l.n_allocs, 0);
    podres_free(&l);
    free(top.b);
}

TEST(decode_list_variants)
{
    /* Field order, packed or unpacked ints and unknown fields must not change the result. */
    for (unsigned variant = 0; variant < 8; variant++) {
        struct enc e = build_list(variant);
        struct podres_list l;
        char err[256] = "";

        int rc = podres_decode_list(e.b, e.len, &l, err, sizeof(err));
        TEST_CHECK_INT(rc, 0);
        if (rc < 0)
            fprintf(stderr, "variant %u: %s\n", variant, err);
        TEST_CHECK_INT(l.n_allocs, 4);
        TEST_CHECK_INT(l.n_claims, 1);
        if (l.n_allocs == 4) {
            for (size_t i = 0; i < 3; i++) {
                TEST_CHECK_STR(l.allocs[i].namespace, "ml");
                TEST_CHECK_STR(l.allocs[i].pod, "train");
                TEST_CHECK_STR(l.allocs[i].container, "main");
                TEST_CHECK_STR(l.allocs[i].resource, "amd.com/cpx_nps4");
                TEST_CHECK_STR(l.allocs[i].device_id, gpu_ids[i]);
            }
            TEST_CHECK_STR(l.allocs[3].resource, "rdma/hca_shared_devices_a");
            TEST_CHECK_STR(l.allocs[3].device_id, "rdma0");
            /* Strings of one pod, container or resource are copied once and shared. */
            TEST_CHECK(l.allocs[0].pod == l.allocs[3].pod);
            TEST_CHECK(l.allocs[0].resource == l.allocs[2].resource);
        }
        if (l.n_claims == 1) {
            const struct podres_claim *c = &l.claims[0];
            TEST_CHECK_STR(c->namespace, "ml");
            TEST_CHECK_STR(c->pod, "dra");
            TEST_CHECK_STR(c->container, "c");
            TEST_CHECK_STR(c->claim_name, "claim");
            TEST_CHECK_STR(c->claim_namespace, "ml");
            TEST_CHECK_STR(c->driver_name, "gpu.amd.com");
            TEST_CHECK_STR(c->pool_name, "node-a");
            TEST_CHECK_STR(c->device_name, "gpu-56-184");
        }
        podres_free(&l);
        free(e.b);
    }
}

TEST(decode_allocatable)
{
    struct enc e = {0};
    struct podres_list l;
    char err[256] = "";

    e_devices(&e, 1, "amd.com/gpu", gpu_ids, 3, false);
    e_int64s(&e, 2, true);
    e_int64s(&e, 2, false);
    e_memory(&e, 3);
    e_unknown(&e);
    TEST_CHECK_INT(podres_decode_allocatable(e.b, e.len, &l, err, sizeof(err)), 0);
    TEST_CHECK_INT(l.n_allocs, 3);
    if (l.n_allocs == 3) {
        TEST_CHECK_STR(l.allocs[2].device_id, "amdgpu_xcp_1");
        TEST_CHECK_STR(l.allocs[2].resource, "amd.com/gpu");
        TEST_CHECK_STR(l.allocs[2].pod, "");
        TEST_CHECK_STR(l.allocs[2].namespace, "");
    }
    podres_free(&l);
    free(e.b);
}

TEST(decode_last_string_wins_and_wire_mismatch)
{
    struct enc top = {0}, pod = {0};
    struct podres_list l;
    char err[256] = "";

    e_str(&pod, 1, "old");
    e_str(&pod, 1, "new");
    e_uint(&pod, 2, 5); /* namespace as a varint: an unknown field, skipped */
    struct enc c = {0};
    e_str(&c, 1, "c");
    e_devices(&c, 2, "amd.com/gpu", gpu_ids, 1, false);
    e_fixed(&c, 2, 1, 4); /* devices as fixed32: skipped */
    e_msg(&pod, 3, &c);
    e_msg(&top, 1, &pod);
    TEST_CHECK_INT(podres_decode_list(top.b, top.len, &l, err, sizeof(err)), 0);
    TEST_CHECK_INT(l.n_allocs, 1);
    if (l.n_allocs == 1) {
        TEST_CHECK_STR(l.allocs[0].pod, "new");
        TEST_CHECK_STR(l.allocs[0].namespace, "");
    }
    podres_free(&l);
    free(top.b);
}

/* One malformed input: the bytes, and a substring of the expected error. */
struct bad_case {
    const char *name;
    const char *bytes;
    size_t len;
    const char *err;
};

#define BAD(name, lit, err)                                                                        \
    {                                                                                              \
        name, lit, sizeof(lit) - 1, err                                                            \
    }

static const struct bad_case bad_list[] = {
    BAD("truncated key", "\x8a", "truncated field key"),
    BAD("key overflows", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "field key overflows"),
    BAD("key 11 bytes", "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", "field key overflows"),
    BAD("field number too big", "\xf8\xff\xff\xff\x7f\x00", "out of range"),
    BAD("field number 0", "\x02\x00", "field number 0"),
    BAD("wire type 6", "\x0e", "invalid wire type 6"),
    BAD("wire type 7", "\x0f", "invalid wire type 7"),
    BAD("truncated varint value", "\x08\x80", "truncated varint in field 1"),
    BAD("overflowing varint value", "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02",
        "overflowing varint in field 1"),
    BAD("truncated length", "\x0a\x80", "truncated length in field 1"),
    BAD("overflowing length", "\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "overflowing length"),
    BAD("length past end", "\x0a\x05\x0a\x00", "length 5 of field 1 runs past the end (2 left)"),
    BAD("huge length past end", "\x0a\xff\xff\xff\xff\x0f", "runs past the end"),
    BAD("truncated fixed64", "\x09\x01\x02\x03", "truncated fixed64 in field 1"),
    BAD("truncated fixed32", "\x7d\x01\x02", "truncated fixed32 in field 15"),
    BAD("end-group without group", "\x0c", "end-group 1 without a group"),
    BAD("unterminated group", "\x0b\x10\x01", "unterminated group 1"),
    BAD("mismatched end-group", "\x0b\x14", "end-group 2 inside group 1"),
    /* PodResources whose ContainerResources length is right but whose content is cut. */
    BAD("truncated sub-message varint", "\x0a\x04\x1a\x02\x18\x80",
        "malformed 'ContainerResources' at byte 4: truncated varint in field 3"),
    BAD("sub-message length past its parent", "\x0a\x04\x1a\x05\x0a\x00\x00\x00\x00",
        "malformed 'PodResources' at byte 2: length 5 of field 3 runs past the end (2 left)"),
    BAD("truncated packed cpu_ids", "\x0a\x04\x22\x02\x01\x80", "truncated varint in packed"),
    BAD("overflowing packed cpu_ids",
        "\x0a\x0d\x22\x0b\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "overflowing varint"),
    BAD("truncated NUMANode", "\x0a\x08\x2a\x06\x1a\x04\x0a\x02\x08\x80",
        "malformed 'NUMANode' at byte 8: truncated varint in field 1"),
    BAD("truncated device id", "\x0a\x07\x1a\x05\x12\x03\x12\x05\x61", "length 5 of field 2"),
    BAD("NUL in pod name", "\x0a\x05\x0a\x03\x61\x00\x62",
        "'name' is not valid UTF-8 or contains NUL"),
    BAD("invalid UTF-8", "\x0a\x04\x12\x02\xc3\x28", "'namespace' is not valid UTF-8"),
    BAD("overlong UTF-8", "\x0a\x04\x0a\x02\xc0\x80", "not valid UTF-8"),
    BAD("UTF-8 surrogate", "\x0a\x05\x0a\x03\xed\xa0\x80", "not valid UTF-8"),
    BAD("UTF-8 above U+10FFFF", "\x0a\x06\x0a\x04\xf4\x90\x80\x80", "not valid UTF-8"),
    BAD("truncated UTF-8", "\x0a\x04\x0a\x02\x61\xe2", "not valid UTF-8"),
    BAD("bad claim", "\x0a\x0a\x1a\x08\x2a\x06\x22\x04\x12\x02\xff\xfe",
        "malformed 'ClaimResource' at byte 8: 'driver_name' is not valid UTF-8"),
};

TEST(decode_malformed)
{
    for (size_t i = 0; i < ARRAY_LEN(bad_list); i++) {
        const struct bad_case *c = &bad_list[i];
        struct podres_list l;
        char err[256] = "";

        int rc = podres_decode_list((const uint8_t *)c->bytes, c->len, &l, err, sizeof(err));
        if (rc != -1 || !strstr(err, c->err))
            fprintf(stderr, "case '%s': rc %d, err '%s'\n", c->name, rc, err);
        TEST_CHECK_INT(rc, -1);
        TEST_CHECK_CONTAINS(err, c->err);
        TEST_CHECK(l.allocs == NULL && l.n_allocs == 0 && l.strs == NULL);
    }
}

TEST(decode_valid_edge_values)
{
    static const struct {
        const char *name, *bytes;
        size_t len;
    } ok[] = {
        /* The largest varint: 10 bytes, last byte 0x01. */
        {"max varint", "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11},
        /* Non-minimal varint encodings are valid protobuf. */
        {"padded varint", "\x08\x80\x80\x00", 4},
        {"padded key", "\x88\x00\x01", 3},
        {"empty group", "\x0b\x0c", 2},
        {"largest field number", "\xf8\xff\xff\xff\x0f\x00", 6},
        {"empty packed", "\x0a\x02\x22\x00", 4},
        {"4-byte UTF-8", "\x0a\x06\x0a\x04\xf0\x9f\x98\x80", 8},
    };
    for (size_t i = 0; i < ARRAY_LEN(ok); i++) {
        struct podres_list l;
        char err[256] = "";
        int rc = podres_decode_list((const uint8_t *)ok[i].bytes, ok[i].len, &l, err, sizeof(err));
        if (rc != 0)
            fprintf(stderr, "case '%s': %s\n", ok[i].name, err);
        TEST_CHECK_INT(rc, 0);
        podres_free(&l);
    }
}

/* `depth` groups nested inside each other at the top level. */
static struct enc nested_groups(int depth)
{
    struct enc e = {0};
    for (int i = 0; i < depth; i++)
        e_key(&e, 5, PB_SGROUP);
    for (int i = 0; i < depth; i++)
        e_key(&e, 5, PB_EGROUP);
    return e;
}

TEST(decode_depth_limit)
{
    struct podres_list l;
    char err[256] = "";

    struct enc e = nested_groups(PODRES_MAX_DEPTH);
    TEST_CHECK_INT(podres_decode_list(e.b, e.len, &l, err, sizeof(err)), 0);
    podres_free(&l);
    free(e.b);

    e = nested_groups(PODRES_MAX_DEPTH + 1);
    TEST_CHECK_INT(podres_decode_list(e.b, e.len, &l, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "nesting deeper than 16 levels");
    free(e.b);

    /* Groups inside known sub-messages count towards the same limit. */
    struct enc inner = nested_groups(PODRES_MAX_DEPTH - 2), c = {0}, pod = {0}, top = {0};
    e_msg(&c, 99, &inner); /* unknown LEN field: skipped, not parsed */
    inner = nested_groups(PODRES_MAX_DEPTH - 2);
    e_raw(&c, inner.b, inner.len);
    free(inner.b);
    e_msg(&pod, 3, &c);
    e_msg(&top, 1, &pod);
    TEST_CHECK_INT(podres_decode_list(top.b, top.len, &l, err, sizeof(err)), 0);
    podres_free(&l);
    free(top.b);
    memset(&top, 0, sizeof(top));

    inner = nested_groups(PODRES_MAX_DEPTH - 1);
    e_raw(&c, inner.b, inner.len);
    free(inner.b);
    e_msg(&pod, 3, &c);
    e_msg(&top, 1, &pod);
    TEST_CHECK_INT(podres_decode_list(top.b, top.len, &l, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "malformed 'ContainerResources'");
    TEST_CHECK_CONTAINS(err, "nesting deeper");
    free(top.b);
}

TEST(decode_string_bounds)
{
    char *s = xmalloc(PODRES_MAX_STRING + 2);
    struct podres_list l;
    char err[256] = "";

    for (int extra = 0; extra <= 1; extra++) {
        memset(s, 'x', PODRES_MAX_STRING + 1);
        s[PODRES_MAX_STRING + extra] = '\0';
        struct enc top = {0}, pod = {0}, c = {0};
        const char *ids[] = {s};
        e_devices(&c, 2, "amd.com/gpu", ids, 1, false);
        e_msg(&pod, 3, &c);
        e_msg(&top, 1, &pod);
        int rc = podres_decode_list(top.b, top.len, &l, err, sizeof(err));
        TEST_CHECK_INT(rc, extra ? -1 : 0);
        if (extra)
            TEST_CHECK_CONTAINS(err, "'device_ids' is longer than 4096 bytes");
        else
            TEST_CHECK_INT(l.n_allocs == 1 ? strlen(l.allocs[0].device_id) : 0, PODRES_MAX_STRING);
        podres_free(&l);
        free(top.b);
    }
    free(s);
}

TEST(decode_entry_limit)
{
    struct podres_list l;
    char err[256] = "";

    for (int extra = 0; extra <= 1; extra++) {
        struct enc d = {0}, c = {0}, pod = {0}, top = {0};
        e_str(&d, 1, "amd.com/gpu");
        for (int i = 0; i < PODRES_MAX_ENTRIES + extra; i++)
            e_str(&d, 2, "");
        e_msg(&c, 2, &d);
        e_msg(&pod, 3, &c);
        e_msg(&top, 1, &pod);
        int rc = podres_decode_list(top.b, top.len, &l, err, sizeof(err));
        TEST_CHECK_INT(rc, extra ? -1 : 0);
        TEST_CHECK_INT(l.n_allocs, extra ? 0 : PODRES_MAX_ENTRIES);
        if (extra)
            TEST_CHECK_CONTAINS(err, "more than 65536 allocations");
        podres_free(&l);
        free(top.b);
    }
}

TEST(filter_prefix)
{
    struct enc e = build_list(0);
    struct podres_list l;
    char err[256] = "";

    TEST_CHECK_INT(podres_decode_list(e.b, e.len, &l, err, sizeof(err)), 0);
    podres_filter_prefix(&l, "amd.com/");
    TEST_CHECK_INT(l.n_allocs, 3);
    for (size_t i = 0; i < l.n_allocs; i++)
        TEST_CHECK_STR(l.allocs[i].device_id, gpu_ids[i]);
    TEST_CHECK_INT(l.n_claims, 1);
    podres_filter_prefix(&l, "nvidia.com/");
    TEST_CHECK_INT(l.n_allocs, 0);
    podres_free(&l);
    podres_free(&l); /* a second free is harmless */
    TEST_CHECK(l.allocs == NULL && l.strs == NULL && l.n_strs == 0);
    free(e.b);
}

/* ---- gRPC framing and headers ---------------------------------------------------------------- */

TEST(unframe)
{
    static const struct {
        const char *name, *bytes;
        size_t len;
        const char *err; /* NULL: accepted */
        size_t msglen;
    } cases[] = {
        {"empty body", "", 0, "response has no gRPC message", 0},
        {"truncated prefix", "\x00\x00\x00", 3, "truncated gRPC message prefix (3 of 5 bytes)", 0},
        {"compressed", "\x01\x00\x00\x00\x01\x08", 6, "compressed flag 1", 0},
        {"bad flag", "\x02\x00\x00\x00\x00", 5, "compressed flag 2", 0},
        {"truncated message", "\x00\x00\x00\x00\x04\x08\x01", 7,
         "truncated gRPC message (2 of 4 bytes)", 0},
        {"too large", "\x00\x04\x00\x00\x01", 5, "exceeds the limit of 67108864", 0},
        {"largest claimed, absent", "\x00\x04\x00\x00\x00", 5, "truncated gRPC message (0 of", 0},
        {"two messages", "\x00\x00\x00\x00\x02\x08\x01\x00\x00\x00\x00\x00", 12,
         "5 unexpected bytes after the gRPC message", 0},
        {"trailing byte", "\x00\x00\x00\x00\x00\x00", 6, "1 unexpected bytes", 0},
        {"empty message", "\x00\x00\x00\x00\x00", 5, NULL, 0},
        {"one message", "\x00\x00\x00\x00\x02\x08\x01", 7, NULL, 2},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const uint8_t *msg = NULL;
        size_t msglen = 99;
        char err[256] = "";
        int rc = grpc_unframe((const uint8_t *)cases[i].bytes, cases[i].len, PODRES_MAX_MESSAGE,
                              &msg, &msglen, err, sizeof(err));
        if ((rc == 0) != (cases[i].err == NULL))
            fprintf(stderr, "case '%s': rc %d, err '%s'\n", cases[i].name, rc, err);
        if (cases[i].err) {
            TEST_CHECK_INT(rc, -1);
            TEST_CHECK_CONTAINS(err, cases[i].err);
        } else {
            TEST_CHECK_INT(rc, 0);
            TEST_CHECK_INT(msglen, cases[i].msglen);
            TEST_CHECK(msg == (const uint8_t *)cases[i].bytes + 5);
        }
    }
}

static void header(struct grpc_call *c, const char *line)
{
    TEST_CHECK_INT(on_header((char *)line, 1, strlen(line), c), strlen(line));
}

TEST(header_callback)
{
    struct grpc_call c = {.grpc_status = -1};

    header(&c, "HTTP/2 200\r\n");
    header(&c, "content-type: application/grpc+proto\r\n");
    TEST_CHECK_INT(c.grpc_status, -1);
    sbuf_add(&c.body, "x", 1);
    header(&c, "Grpc-Status:  12 \r\n");
    header(&c, "grpc-message: List%20is%20off: 100%25 %C3%A9t%C3%A9%0Aend%zz%\r\n");
    header(&c, "\r\n");
    TEST_CHECK_INT(c.grpc_status, 12);
    TEST_CHECK(c.status_after_body);
    TEST_CHECK_STR(c.grpc_message, "List is off: 100% \xc3\xa9t\xc3\xa9?end%zz%");
    TEST_CHECK_STR(c.content_type, "application/grpc+proto");
    TEST_CHECK(grpc_content_type(c.content_type));
    header(&c, "grpc-status: twelve\r\n");
    TEST_CHECK_INT(c.grpc_status, 2); /* unreadable status: UNKNOWN */
    header(&c, "grpc-status: 99999999999\r\n");
    TEST_CHECK_INT(c.grpc_status, 2);
    sbuf_free(&c.body);

    static const struct {
        const char *ct;
        bool ok;
    } types[] = {
        {"application/grpc", true},
        {"application/grpc+proto", true},
        {"Application/GRPC", true},
        {"application/grpc; charset=x", true},
        {"application/grpc-web", false},
        {"text/plain", false},
        {"", false},
    };
    for (size_t i = 0; i < ARRAY_LEN(types); i++)
        TEST_CHECK_INT(grpc_content_type(types[i].ct), types[i].ok);
}

TEST(body_limit)
{
    struct grpc_call c = {.grpc_status = -1, .max_message = PODRES_MAX_MESSAGE};
    char chunk[4096] = {0};
    size_t total = 0;

    while (on_body(chunk, 1, sizeof(chunk), &c) == sizeof(chunk))
        total += sizeof(chunk);
    TEST_CHECK(c.too_big);
    TEST_CHECK(total <= (size_t)PODRES_MAX_MESSAGE + 5);
    TEST_CHECK(total + sizeof(chunk) > (size_t)PODRES_MAX_MESSAGE + 5);
    sbuf_free(&c.body);
}

/* ---- transport argument checks and a socket nobody serves ----------------------------------- */

TEST(call_errors)
{
    struct podres_list l;
    char err[256] = "";
    char longpath[200];

    memset(longpath, 'a', sizeof(longpath) - 1);
    longpath[sizeof(longpath) - 1] = '\0';
    TEST_CHECK_INT(podres_list("", 1, &l, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "invalid pod-resources socket path ''");
    TEST_CHECK_INT(podres_list(longpath, 1, &l, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "invalid pod-resources socket path");
    TEST_CHECK_INT(podres_list("/x.sock", 0, &l, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "invalid pod-resources timeout 0");
    TEST_CHECK_INT(podres_allocatable("/x.sock", NAN, &l, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "invalid pod-resources timeout nan");

    char dir[] = "/tmp/test_podres.XXXXXX";
    TEST_CHECK(mkdtemp(dir) != NULL);
    char *sock = xasprintf("%s/kubelet.sock", dir);
    TEST_CHECK_INT(podres_list(sock, 2, &l, err, sizeof(err)), -1);
    char *want = xasprintf("cannot connect to pod-resources socket '%s': No such file", sock);
    TEST_CHECK_CONTAINS(err, want);
    TEST_CHECK(l.allocs == NULL && l.n_allocs == 0);
    free(want);
    free(sock);
    rmdir(dir);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    RUN(decode_empty);
    RUN(decode_list_variants);
    RUN(decode_allocatable);
    RUN(decode_last_string_wins_and_wire_mismatch);
    RUN(decode_malformed);
    RUN(decode_valid_edge_values);
    RUN(decode_depth_limit);
    RUN(decode_string_bounds);
    RUN(decode_entry_limit);
    RUN(filter_prefix);
    RUN(unframe);
    RUN(header_callback);
    RUN(body_limit);
    RUN(call_errors);
    curl_global_cleanup();
    return test_done();
}
