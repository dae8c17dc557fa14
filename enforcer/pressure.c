/*
 * GPU pressure as the cluster reports it (pressure.h): the scheduler's and Kueue's messages
 * and the pods' requests, read from list answers, with every resource name compared after
 * the sanitizing kube-state-metrics applies. Ambiguity (two raw names that sanitize alike) is
 * recorded as it is met and confirms nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "kube_json.h"
#include "pressure.h"
#include "util.h"

/* ---- names ------------------------------------------------------------------------------ */

static char pressure_map(char c)
{
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    return ok ? c : '_';
}

void pressure_sanitize(const char *in, char *out, size_t len)
{
    size_t i = 0;
    for (; in && in[i] && i + 1 < len; i++)
        out[i] = pressure_map(in[i]);
    if (len)
        out[i] = '\0';
}

/* The first `an` bytes of `a` and the string `b`, the same after sanitizing. */
static bool pressure_same_n(const char *a, size_t an, const char *b)
{
    size_t i = 0;
    for (; i < an && b[i]; i++)
        if (pressure_map(a[i]) != pressure_map(b[i]))
            return false;
    return i == an && !b[i];
}

bool pressure_same(const char *a, const char *b)
{
    return pressure_same_n(a, strlen(a), b);
}

bool pressure_is_sanitized(const char *name)
{
    for (const char *p = name; *p; p++)
        if (pressure_map(*p) != *p)
            return false;
    return true;
}

/* Record the name s[0..n) met in the evidence, once. */
static void pressure_note(struct pressure_demand *d, const char *s, size_t n)
{
    for (size_t i = 0; i < d->nnames && i < PRESSURE_NAMES_MAX; i++)
        if (strlen(d->names[i]) == n && strncmp(d->names[i], s, n) == 0)
            return;
    if (d->nnames < PRESSURE_NAMES_MAX)
        snprintf(d->names[d->nnames], PRESSURE_NAME_MAX, "%.*s", (int)n, s);
    d->nnames++;
}

/* Merge the names of one counted item into the list's. */
static void pressure_merge(struct pressure_demand *d, const struct pressure_demand *item)
{
    for (size_t i = 0; i < item->nnames && i < PRESSURE_NAMES_MAX; i++)
        pressure_note(d, item->names[i], strlen(item->names[i]));
    if (item->nnames > PRESSURE_NAMES_MAX)
        d->nnames += item->nnames - PRESSURE_NAMES_MAX; /* more than kept: ambiguous anyway */
}

/*
 * The names met, with `resource` itself when it is a raw name, are they one? A sanitized
 * `resource` ("amd_com_gpu", a kube-state-metrics label) stands for whichever raw name the
 * API shows, as long as it shows one; a raw one ("amd.com/gpu") stands for itself only, and
 * another raw name that reads the same once sanitized is a second resource.
 */
static void pressure_settle(struct pressure_demand *d, const char *resource)
{
    size_t distinct = d->nnames;
    bool own = false;
    for (size_t i = 0; i < d->nnames && i < PRESSURE_NAMES_MAX; i++)
        own |= strcmp(d->names[i], resource) == 0;
    if (distinct && !own && !pressure_is_sanitized(resource))
        distinct++;
    if (distinct > 1) {
        d->ambiguous = true;
        d->count = 0;
        d->requested = 0;
    }
}

/* Item i of a list answer, parsed into `o`: 0, or -1 with "items[i]: ..." in err. */
static int pressure_item(json_object *arr, size_t i, json_object **e, struct kube_obj *o, char *err,
                         size_t errlen)
{
    char sub[200] = "";
    *e = json_object_array_get_idx(arr, i);
    if (!json_object_is_type(*e, json_type_object) ||
        kube_obj_from_json(*e, o, sub, sizeof(sub)) < 0) {
        snprintf(err, errlen, "items[%zu]: %s", i, sub[0] ? sub : "not an object");
        return -1;
    }
    return 0;
}

/* The end of a list's reading: an empty result on failure, else ambiguity settled. */
static int pressure_finish(struct pressure_demand *out, const char *resource, json_object *root,
                           int ret)
{
    if (ret < 0)
        *out = (struct pressure_demand){0};
    else
        pressure_settle(out, resource);
    json_object_put(root);
    return ret;
}

void pressure_ambiguity(const struct pressure_demand *d, const char *resource, char *out,
                        size_t len)
{
    struct sbuf b = {0};
    sbuf_printf(&b, "'%s' is more than one resource once sanitized (", resource);
    bool own = false;
    for (size_t i = 0; i < d->nnames && i < PRESSURE_NAMES_MAX; i++) {
        sbuf_printf(&b, "%s'%s'", i ? ", " : "", d->names[i]);
        own |= strcmp(d->names[i], resource) == 0;
    }
    if (d->nnames > PRESSURE_NAMES_MAX)
        sbuf_printf(&b, ", ...");
    if (!own && !pressure_is_sanitized(resource))
        sbuf_printf(&b, ", '%s'", resource);
    sbuf_printf(&b, "): which one the rule means is unknown");
    snprintf(out, len, "%s", b.buf);
    sbuf_free(&b);
}

/* ---- the scheduler ---------------------------------------------------------------------- */

/* A byte of a resource name as the scheduler prints it (qualified name: DNS prefix, '/'). */
static bool pressure_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '/' || c == '.';
}

/*
 * "Insufficient <name>" naming `resource` (after sanitizing) as a whole word: amd.com/gpu
 * must not match amd.com/gpu-foo or amd.com/gpu.x. A resource name ends in an alphanumeric, so
 * dots after it end a sentence ("4 Insufficient amd.com/gpu."). Every matching name is noted.
 */
static bool pressure_insufficient(const char *msg, const char *resource, struct pressure_demand *d)
{
    static const char word[] = "Insufficient ";
    bool found = false;
    for (const char *p = strstr(msg, word); p; p = strstr(p + 1, word)) {
        const char *s = p + sizeof(word) - 1, *e = s;
        while (pressure_name_char(*e))
            e++;
        while (e > s && e[-1] == '.')
            e--;
        if (e > s && pressure_same_n(s, (size_t)(e - s), resource)) {
            pressure_note(d, s, (size_t)(e - s));
            found = true;
        }
    }
    return found;
}

/*
 * Sum of every key that is `resource` after sanitizing in containers[].resources.requests
 * (or limits, for a container with no such request); -1 on a bad quantity.
 */
static int pressure_sum_requests(json_object *containers, const char *resource, bool max,
                                 struct pressure_demand *d, int64_t *out)
{
    *out = 0;
    if (!containers || !json_object_is_type(containers, json_type_array))
        return 0;
    for (size_t i = 0; i < json_object_array_length(containers); i++) {
        json_object *c = json_object_array_get_idx(containers, i), *res, *m;
        if (!json_object_is_type(c, json_type_object) ||
            !json_object_object_get_ex(c, "resources", &res) ||
            !json_object_is_type(res, json_type_object))
            continue;
        static const char *const maps[] = {"requests", "limits"};
        int64_t sum = 0;
        bool seen = false;
        for (size_t k = 0; k < ARRAY_LEN(maps) && !seen; k++) {
            if (!json_object_object_get_ex(res, maps[k], &m) ||
                !json_object_is_type(m, json_type_object))
                continue;
            json_object_object_foreach(m, key, q)
            {
                if (!pressure_same(key, resource))
                    continue;
                int64_t v;
                /* Extended resources are whole numbers; the API sends them as strings ("1"). */
                if (!json_object_is_type(q, json_type_string) ||
                    parse_i64(json_object_get_string(q), &v) < 0 || v < 0 || v > INT32_MAX)
                    return -1;
                pressure_note(d, key, strlen(key));
                sum += v;
                seen = true;
            }
        }
        if (!seen)
            continue;
        if (max)
            *out = sum > *out ? sum : *out;
        else
            *out += sum;
    }
    return 0;
}

/* Is `pod` (its JSON `e`) waiting for `resource` according to the scheduler? */
static bool pressure_pod_waits(const struct kube_obj *pod, const char *resource,
                               struct pressure_demand *d)
{
    if (!pod->phase || strcmp(pod->phase, "Pending") != 0 || pod->deletion_timestamp)
        return false;
    bool waiting = false;
    for (size_t j = 0; j < pod->nconditions; j++) {
        const struct kube_condition *c = &pod->conditions[j];
        if (strcmp(c->type, "PodScheduled") == 0 && c->status && strcmp(c->status, "False") == 0 &&
            c->reason && strcmp(c->reason, "Unschedulable") == 0 && c->message &&
            pressure_insufficient(c->message, resource, d))
            waiting = true;
    }
    return waiting;
}

int pressure_parse_pending(const char *body, size_t len, const char *resource,
                           struct pressure_demand *out, char *err, size_t errlen)
{
    *out = (struct pressure_demand){0};
    json_object *arr, *root = kube_list_parse(body, len, "pod list", &arr, err, errlen);
    if (!root)
        return -1;
    int ret = 0;
    for (size_t i = 0; i < json_object_array_length(arr) && ret == 0; i++) {
        json_object *e, *spec = NULL, *cs = NULL, *ics = NULL;
        struct kube_obj pod;
        struct pressure_demand item = {0};
        if ((ret = pressure_item(arr, i, &e, &pod, err, errlen)) < 0)
            break;
        if (pressure_pod_waits(&pod, resource, &item)) {
            int64_t sum, init;
            json_object_object_get_ex(e, "spec", &spec);
            if (spec && json_object_is_type(spec, json_type_object)) {
                json_object_object_get_ex(spec, "containers", &cs);
                json_object_object_get_ex(spec, "initContainers", &ics);
            }
            /* Effective request: max(sum over containers, largest init container). */
            if (pressure_sum_requests(cs, resource, false, &item, &sum) < 0 ||
                pressure_sum_requests(ics, resource, true, &item, &init) < 0) {
                snprintf(err, errlen, "items[%zu]: '%s' is not a whole number", i, resource);
                ret = -1;
            } else {
                out->count++;
                out->requested += sum > init ? sum : init;
                pressure_merge(out, &item);
            }
        }
        kube_obj_free(&pod);
    }
    return pressure_finish(out, resource, root, ret);
}

/* ---- Kueue ------------------------------------------------------------------------------ */

/*
 * Kueue writes the reason a Workload cannot reserve quota into its QuotaReserved=False
 * condition, one clause per pod set and resource ("couldn't assign flavors to pod set main:
 * insufficient unused quota for amd.com/gpu in flavor mi300x, 2 more needed",
 * kubernetes-sigs/kueue pkg/scheduler/flavorassigner/flavorassigner.go, docs/backend-apis.md
 * §6.5). " in flavor " after the name makes it a whole word: amd.com/gpu never matches
 * amd.com/gpu_xcp. "insufficient quota for R ... > maximum capacity" is not matched: no
 * reclaim can make room for a request larger than the queue.
 */
static bool pressure_kueue_short_of(const char *msg, const char *resource,
                                    struct pressure_demand *d)
{
    static const char lead[] = "insufficient unused quota for ", tail[] = " in flavor ";
    bool found = false;
    for (const char *p = strstr(msg, lead); p; p = strstr(p + 1, lead)) {
        const char *s = p + sizeof(lead) - 1, *e = strchr(s, ' ');
        if (!e || e == s || strncmp(e, tail, sizeof(tail) - 1) != 0)
            continue;
        if (pressure_same_n(s, (size_t)(e - s), resource)) {
            pressure_note(d, s, (size_t)(e - s));
            found = true;
        }
    }
    return found;
}

static bool pressure_uid_in(const char *uid, const char *const *uids, size_t n)
{
    for (size_t i = 0; uid && *uid && i < n; i++)
        if (uids[i] && strcmp(uids[i], uid) == 0)
            return true;
    return false;
}

/* Is the Workload `e` (parsed as `wl`) waiting for quota of `resource`, and not skipped? */
static bool pressure_kueue_waits(json_object *e, const struct kube_obj *wl, const char *resource,
                                 const char *const *skip, size_t nskip, struct pressure_demand *d)
{
    json_object *spec, *active;
    /* Deactivated (spec.active false) or being deleted: it will not take what is freed. */
    if (wl->deletion_timestamp)
        return false;
    if (json_object_object_get_ex(e, "spec", &spec) &&
        json_object_object_get_ex(spec, "active", &active) &&
        json_object_is_type(active, json_type_boolean) && !json_object_get_boolean(active))
        return false;
    /* The candidate's own Workload: the job of the workload itself, never its own demand. */
    if (pressure_uid_in(wl->ref.uid, skip, nskip) ||
        pressure_uid_in(kube_label(wl, "kueue.x-k8s.io/job-uid"), skip, nskip))
        return false;
    for (size_t j = 0; j < wl->nowners; j++)
        if (pressure_uid_in(wl->owners[j].uid, skip, nskip))
            return false;
    bool waiting = false;
    for (size_t j = 0; j < wl->nconditions; j++) {
        const struct kube_condition *c = &wl->conditions[j];
        if (!c->type || !c->status)
            continue;
        if (strcmp(c->type, "Finished") == 0 && strcmp(c->status, "True") == 0)
            return false;
        if (strcmp(c->type, "QuotaReserved") != 0)
            continue;
        if (strcmp(c->status, "False") != 0)
            return false;                 /* reserved (or Unknown: nothing proven) */
        *d = (struct pressure_demand){0}; /* only the condition that decides speaks */
        waiting = c->message && pressure_kueue_short_of(c->message, resource, d);
    }
    return waiting;
}

int pressure_parse_kueue(const char *body, size_t len, const char *resource,
                         const char *const *skip_uids, size_t nskip, struct pressure_demand *out,
                         char *err, size_t errlen)
{
    *out = (struct pressure_demand){0};
    json_object *arr, *root = kube_list_parse(body, len, "workload list", &arr, err, errlen);
    if (!root)
        return -1;
    int ret = 0;
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *e;
        struct kube_obj wl;
        struct pressure_demand item = {0};
        if ((ret = pressure_item(arr, i, &e, &wl, err, errlen)) < 0)
            break;
        if (pressure_kueue_waits(e, &wl, resource, skip_uids, nskip, &item)) {
            out->count++;
            pressure_merge(out, &item);
        }
        kube_obj_free(&wl);
    }
    return pressure_finish(out, resource, root, ret);
}
