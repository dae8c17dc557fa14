/*
 * libFuzzer target for exporter/podres.c (the pod-resources messages), common/pbwire.c (the
 * protobuf wire format under them) and grpc.c (the gRPC unframer and the response-header parser),
 * i.e. everything that reads bytes a (possibly broken or hostile) kubelet socket sends us.
 * The first input byte picks the entry point; the rest is its input. Decoded lists are
 * checked for the invariants callers rely on (no NULL strings, bounded counts), so a logic
 * slip shows up as a crash, not only memory errors.
 */
#include "pbwire.c"
#include "grpc.c"
#include "podres.c"

static void check_list(const struct podres_list *l)
{
    if (l->n_allocs + l->n_claims > PODRES_MAX_ENTRIES)
        __builtin_trap();
    for (size_t i = 0; i < l->n_allocs; i++) {
        const struct podres_alloc *a = &l->allocs[i];
        if (!a->namespace || !a->pod || !a->container || !a->resource || !a->device_id ||
            strlen(a->device_id) > PODRES_MAX_STRING)
            __builtin_trap();
    }
    for (size_t i = 0; i < l->n_claims; i++) {
        const struct podres_claim *c = &l->claims[i];
        if (!c->namespace || !c->claim_name || !c->driver_name || !c->device_name)
            __builtin_trap();
    }
}

static void decode(const uint8_t *p, size_t n, bool list)
{
    struct podres_list l;
    char err[256];
    int rc = list ? podres_decode_list(p, n, &l, err, sizeof(err))
                  : podres_decode_allocatable(p, n, &l, err, sizeof(err));

    if (rc == 0)
        check_list(&l);
    else if (l.allocs || l.n_allocs || l.strs || !err[0])
        __builtin_trap(); /* a failed decode leaves the list empty and says why */
    podres_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;

    switch (data[0] % 4) {
    case 0:
        decode(p, n, true);
        break;
    case 1:
        decode(p, n, false);
        break;
    case 2: {
        const uint8_t *msg;
        size_t len;
        char err[256];
        if (grpc_unframe(p, n, PODRES_MAX_MESSAGE, &msg, &len, err, sizeof(err)) == 0) {
            if (msg != p + 5 || len != n - 5)
                __builtin_trap();
            decode(msg, len, true);
        }
        break;
    }
    case 3: {
        /* Response header lines as libcurl hands them over, one per '\n'. */
        struct grpc_call c = {.grpc_status = -1};
        size_t start = 0;
        for (size_t i = 0; i <= n; i++) {
            if (i == n || p[i] == '\n') {
                size_t len = i - start + (i < n);
                if (len) {
                    char *line = xmalloc(len);
                    memcpy(line, p + start, len);
                    if (on_header(line, 1, len, &c) != len)
                        __builtin_trap();
                    free(line);
                }
                start = i + 1;
            }
        }
        if (strlen(c.grpc_message) >= sizeof(c.grpc_message))
            __builtin_trap();
        (void)grpc_content_type(c.content_type);
        break;
    }
    }
    return 0;
}
