/*
 * libFuzzer target for every JSON parser of the Kubernetes client (enforcer/kube_json.c, its
 * pure half; the calls in kube.c are not linked): the first byte picks kube_parse_obj,
 * kube_parse_list, kube_parse_scale, kube_parse_status, kube_parse_pending or kube_classify
 * (with an HTTP status), the rest is the body. The parsers promise no read past `len` (ASan
 * checks it on an exact-size copy), on failure a message and an empty result, on success a
 * named object, a non-negative replica count and consistent counts; the checks below trap
 * otherwise. Seeds: fuzz/corpus/kube.
 */
#include "kube_json.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const long fuzz_status[] = {200, 201, 401, 403, 404, 409, 429, 500};

static void fuzz_check_obj(const struct kube_obj *o, bool named)
{
    if (named && !o->ref.name)
        __builtin_trap();
    if ((o->nlabels && !o->labels) || (o->nowners && !o->owners) ||
        (o->nconditions && !o->conditions) || (o->has_replicas && o->replicas < 0))
        __builtin_trap();
    for (size_t i = 0; i < o->nowners; i++)
        if (!o->owners[i].kind || !o->owners[i].uid || !o->owners[i].name)
            __builtin_trap();
    for (size_t i = 0; i < o->nconditions; i++)
        if (!o->conditions[i].type)
            __builtin_trap();
    (void)kube_controller_ref(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0] % 6;
    size_t len = size - 1;
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return 0;
    memcpy(copy, data + 1, len);
    char err[256];
    err[0] = '\0';

    switch (sel) {
    case 0: {
        struct kube_obj o;
        if (kube_parse_obj(copy, len, &o, err, sizeof(err)) == 0) {
            fuzz_check_obj(&o, true);
            kube_obj_free(&o);
        } else if (!err[0] || o.ref.name || o.labels || o.owners || o.conditions) {
            __builtin_trap();
        }
        break;
    }
    case 1: {
        struct kube_obj *items;
        size_t n;
        if (kube_parse_list(copy, len, &items, &n, err, sizeof(err)) == 0) {
            for (size_t i = 0; i < n; i++) {
                fuzz_check_obj(&items[i], true);
                kube_obj_free(&items[i]);
            }
            free(items);
        } else if (!err[0] || items || n) {
            __builtin_trap();
        }
        break;
    }
    case 2: {
        int64_t r = -1;
        int ret = kube_parse_scale(copy, len, &r, err, sizeof(err));
        if (r < 0 || (ret < 0 && (!err[0] || r != 0)))
            __builtin_trap();
        break;
    }
    case 3: {
        struct kube_status st;
        if (kube_parse_status(copy, len, &st, err, sizeof(err)) == 0)
            kube_status_free(&st);
        else if (!err[0] || st.reason || st.message || st.status)
            __builtin_trap();
        break;
    }
    case 4: {
        size_t count = 7;
        int64_t req = 7;
        int ret = kube_parse_pending(copy, len, (data[0] & 0x80) ? "amd.com/gpu" : "r", &count,
                                     &req, err, sizeof(err));
        if (req < 0 || (ret < 0 && (!err[0] || count || req)) || (count == 0 && req != 0))
            __builtin_trap();
        break;
    }
    default: {
        long status = fuzz_status[(data[0] >> 3) & 7];
        enum kube_result r = kube_classify(status, copy, len, "fuzz", err, sizeof(err));
        if ((r == KUBE_OK) != (status < 300) || (r != KUBE_OK && !err[0]) ||
            strlen(err) >= sizeof(err))
            __builtin_trap();
        break;
    }
    }
    free(copy);
    return 0;
}
