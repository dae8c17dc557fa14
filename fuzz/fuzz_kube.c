/*
 * libFuzzer target for every JSON parser of the Kubernetes client (enforcer/kube_json.c, its
 * pure half; the calls in kube.c are not linked): the first byte picks kube_parse_obj,
 * kube_parse_list, kube_parse_scale, kube_parse_status (with bit 0x40: kube_parse_ssar) or
 * kube_classify (with an HTTP status), the rest is the body (the pressure readers of lists
 * are fuzz/fuzz_pressure.c's); every body also goes through the discovery parsers
 * (kube_parse_resource_list, kube_parse_group_list). The parsers promise no read past `len`
 * (ASan checks it on an exact-size copy), on failure a message and an empty result, on success a
 * named object, a non-negative replica count and consistent counts; the checks below trap
 * otherwise. Every input also drives the request body builders (kube_body_*) with strings cut
 * from it at NUL bytes: each body must parse back with json-c to exactly those strings, so an
 * escaping slip that would let a name or value change the JSON traps. Seeds: fuzz/corpus/kube.
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

/* The string at keys k1/k2/k3 (k2, k3 may be NULL) of `o`, or NULL. No JSON pointer: a
   fuzzed key may hold '/' or '~'. */
static const char *fuzz_get(json_object *o, const char *k1, const char *k2, const char *k3)
{
    const char *keys[] = {k1, k2, k3};
    for (size_t i = 0; i < 3 && keys[i]; i++)
        if (!json_object_object_get_ex(o, keys[i], &o))
            return NULL;
    return json_object_is_type(o, json_type_string) ? json_object_get_string(o) : NULL;
}

/* A built body parsed back (the body is freed here); traps unless it is a JSON object. Each
   body is built and parsed once per input, and all its strings are checked on that parse. */
static json_object *fuzz_parse(char *body)
{
    json_object *o = json_tokener_parse(body);
    free(body);
    if (!o || !json_object_is_type(o, json_type_object))
        __builtin_trap();
    return o;
}

/* Trap unless the string at k1/k2/k3 of `o` is `want`. */
static void fuzz_want(json_object *o, const char *k1, const char *k2, const char *k3,
                      const char *want)
{
    const char *got = fuzz_get(o, k1, k2, k3);
    if (!got || strcmp(got, want) != 0)
        __builtin_trap();
}

static void fuzz_bodies(const uint8_t *data, size_t len)
{
    char *buf = malloc(len + 1);
    if (!buf)
        return;
    memcpy(buf, data, len);
    buf[len] = '\0';
    const char *s[8];
    s[0] = buf;
    for (size_t i = 1; i < ARRAY_LEN(s); i++) {
        const char *p = s[i - 1] + strlen(s[i - 1]);
        s[i] = p < buf + len ? p + 1 : p;
    }
    json_object *o = fuzz_parse(kube_body_annotate(s[0], s[1], s[2]));
    fuzz_want(o, "metadata", "uid", NULL, s[0]);
    fuzz_want(o, "metadata", "annotations", s[1], s[2]);
    json_object_put(o);

    /* Removing an annotation sends it as null. */
    json_object *ann, *v = (json_object *)1;
    o = fuzz_parse(kube_body_annotate(s[0], s[1], NULL));
    if (!json_object_object_get_ex(o, "metadata", &ann) ||
        !json_object_object_get_ex(ann, "annotations", &ann) ||
        !json_object_object_get_ex(ann, s[1], &v) || v != NULL)
        __builtin_trap();
    json_object_put(o);

    char *(*const spec_patch[])(const char *) = {kube_body_scale_zero, kube_body_suspend,
                                                 kube_body_deactivate};
    for (size_t i = 0; i < ARRAY_LEN(spec_patch); i++) {
        o = fuzz_parse(spec_patch[i](s[3]));
        fuzz_want(o, "metadata", "uid", NULL, s[3]);
        json_object_put(o);
    }

    o = fuzz_parse(kube_body_eviction(s[4], s[5], s[3]));
    fuzz_want(o, "metadata", "namespace", NULL, s[4]);
    fuzz_want(o, "metadata", "name", NULL, s[5]);
    fuzz_want(o, "deleteOptions", "preconditions", "uid", s[3]);
    json_object_put(o);

    o = fuzz_parse(kube_body_delete_options(s[6], s[3], s[4]));
    fuzz_want(o, "preconditions", "uid", NULL, s[3]);
    fuzz_want(o, "preconditions", "resourceVersion", NULL, s[4]);
    fuzz_want(o, "propagationPolicy", NULL, NULL, s[6]);
    json_object_put(o);

    /* A merge patch from the input: the preconditions always win over the patch's own. */
    char merr[128] = "";
    char *merged = kube_body_merge(s[3], s[4], s[0], merr, sizeof(merr));
    if (merged) {
        o = fuzz_parse(merged);
        fuzz_want(o, "metadata", "uid", NULL, s[3]);
        fuzz_want(o, "metadata", "resourceVersion", NULL, s[4]);
        json_object_put(o);
    } else if (!merr[0]) {
        __builtin_trap();
    }

    struct kube_ref inv = {(char *)s[7], (char *)s[6], (char *)s[4], (char *)s[5], (char *)s[3]};
    struct kube_event ev = {&inv, s[0], s[1], s[2], s[6], s[7], s[0], s[2]};
    o = fuzz_parse(kube_body_event(&ev));
    fuzz_want(o, "metadata", "name", NULL, s[0]);
    fuzz_want(o, "involvedObject", "uid", NULL, s[3]);
    fuzz_want(o, "involvedObject", "name", NULL, s[5]);
    fuzz_want(o, "involvedObject", "namespace", NULL, s[4]);
    fuzz_want(o, "involvedObject", "apiVersion", NULL, s[7]);
    fuzz_want(o, "reason", NULL, NULL, s[1]);
    fuzz_want(o, "message", NULL, NULL, s[2]);
    fuzz_want(o, "action", NULL, NULL, s[7]);
    fuzz_want(o, "reportingInstance", NULL, NULL, s[2]);
    json_object_put(o);
    free(buf);
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
        if (data[0] & 0x40) {
            int verdict = 7;
            char *reason = (char *)1;
            int ret = kube_parse_ssar(copy, len, &verdict, &reason, err, sizeof(err));
            if (verdict < KUBE_ACCESS_UNKNOWN || verdict > KUBE_ACCESS_ALLOWED ||
                (ret < 0 && (!err[0] || reason || verdict != KUBE_ACCESS_UNKNOWN)))
                __builtin_trap();
            free(reason);
            break;
        }
        struct kube_status st;
        if (kube_parse_status(copy, len, &st, err, sizeof(err)) == 0)
            kube_status_free(&st);
        else if (!err[0] || st.reason || st.message || st.status)
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
    struct kube_api_resource *res = (struct kube_api_resource *)1;
    size_t nres = 7;
    if (kube_parse_resource_list(copy, len, &res, &nres, err, sizeof(err)) == 0) {
        for (size_t i = 0; i < nres; i++)
            if (!res[i].kind || !res[i].plural || strchr(res[i].plural, '/'))
                __builtin_trap();
        kube_api_resources_free(res, nres);
    } else if (res || nres) {
        __builtin_trap();
    }
    char *pref = (char *)1, **vers = (char **)1;
    size_t nvers = 1;
    if (kube_parse_group_list(copy, len, "ray.io", &pref, &vers, &nvers, err, sizeof(err)) == 0) {
        free(pref);
        for (size_t i = 0; i < nvers; i++)
            free(vers[i]);
        free(vers);
    } else if (pref || vers || nvers) {
        __builtin_trap();
    }
    free(copy);
    fuzz_bodies(data + 1, size - 1);
    return 0;
}
