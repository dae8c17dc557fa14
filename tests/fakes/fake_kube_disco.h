/*
 * API discovery and resourceVersions for the fake API server (included by fake_kube.c).
 *
 * Discovery as kube-apiserver serves it (k8s.io/apimachinery pkg/apis/meta/v1/types.go:
 * APIVersions, APIGroupList, APIResourceList): GET /api lists the core versions, /apis every
 * group with its versions and preferredVersion, and /api/v1 and /apis/GROUP/VERSION the
 * resources of that group/version from fk_resources, each with its kind, namespaced and verbs,
 * followed by its subresources as separate entries ("deployments/scale" of kind Scale in group
 * autoscaling, "pods/eviction" of kind Eviction in group policy), as the real documents list
 * them. A version a group does not serve is 404 NotFound.
 *
 * Every stored object carries metadata.resourceVersion, set at load and replaced by a new
 * one on each write, as etcd's revision would. A merge patch that carries
 * metadata.resourceVersion (on the object or its /scale, whose Scale carries the parent's)
 * and DeleteOptions preconditions.resourceVersion are preconditions: a stale value is 409
 * Conflict with the API server's messages ("the object has been modified; please apply your
 * changes to the latest version and try again"; "Precondition failed: ResourceVersion in
 * precondition: ..."), and nothing is written.
 */

/* Give `obj` a new resourceVersion (fk_rv_seq is the fake's one revision counter). */
static void fk_rv_bump(json_object *obj)
{
    json_object *meta;
    if (json_object_object_get_ex(obj, "metadata", &meta) &&
        json_object_is_type(meta, json_type_object))
        fk_lease_stamp(meta);
}

/* "deployments.apps" or "pods": the resource named in messages. */
static MHD_RESULT fk_rv_conflict(struct fk_req *r, const struct fk_obj *o)
{
    char *q = fk_qualified(o->res);
    char *msg = xasprintf("Operation cannot be fulfilled on %s \"%s\": the object has been "
                          "modified; please apply your changes to the latest version and try "
                          "again",
                          q, o->name);
    MHD_RESULT ret = fk_status(r, 409, "Conflict", msg, o->res, o->name, NULL, NULL);
    free(msg);
    free(q);
    return ret;
}

/* A merge patch's metadata.resourceVersion that is not the stored one: 409 sent, true. */
static bool fk_rv_patch_stale(struct fk_req *r, const struct fk_obj *o, json_object *patch,
                              MHD_RESULT *ret)
{
    const char *want = fk_get_str(patch, "metadata", "resourceVersion");
    const char *have = fk_get_str(o->obj, "metadata", "resourceVersion");
    if (!want || (have && strcmp(want, have) == 0))
        return false;
    *ret = fk_rv_conflict(r, o);
    return true;
}

/* DeleteOptions preconditions.resourceVersion that is not the stored one: 409 sent, true. */
static bool fk_rv_delete_stale(struct fk_req *r, const struct fk_obj *o, json_object *opts,
                               MHD_RESULT *ret)
{
    json_object *pre;
    if (!opts || !json_object_object_get_ex(opts, "preconditions", &pre))
        return false;
    const char *want = fk_get_str(pre, "resourceVersion", NULL);
    const char *have = fk_get_str(o->obj, "metadata", "resourceVersion");
    if (!want || (have && strcmp(want, have) == 0))
        return false;
    char *q = fk_qualified(o->res);
    char *msg = xasprintf("Operation cannot be fulfilled on %s \"%s\": Precondition failed: "
                          "ResourceVersion in precondition: %s, ResourceVersion in object meta: %s",
                          q, o->name, want, have ? have : "");
    *ret = fk_status(r, 409, "Conflict", msg, o->res, o->name, NULL, NULL);
    free(msg);
    free(q);
    return true;
}

static char *fk_gv(const struct fk_resource *res)
{
    return xasprintf("%s%s%s", res->group, res->group[0] ? "/" : "", res->version);
}

static json_object *fk_verbs(const char *const *v)
{
    json_object *a = json_object_new_array();
    for (; *v; v++)
        json_object_array_add(a, json_object_new_string(*v));
    return a;
}

static json_object *fk_api_resource(const char *name, const char *singular, const char *kind,
                                    const char *group, const char *version,
                                    const char *const *verbs)
{
    json_object *e = json_object_new_object();
    json_object_object_add(e, "name", json_object_new_string(name));
    json_object_object_add(e, "singularName", json_object_new_string(singular));
    json_object_object_add(e, "namespaced", json_object_new_boolean(1));
    if (group) {
        json_object_object_add(e, "group", json_object_new_string(group));
        json_object_object_add(e, "version", json_object_new_string(version));
    }
    json_object_object_add(e, "kind", json_object_new_string(kind));
    json_object_object_add(e, "verbs", fk_verbs(verbs));
    return e;
}

/* The APIResourceList of group/version, or NULL when no resource is served there. */
static json_object *fk_resource_list(const char *group, const char *version)
{
    static const char *const all[] = {
        "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch", NULL};
    static const char *const sub[] = {"get", "patch", "update", NULL};
    static const char *const create[] = {"create", NULL};
    json_object *arr = json_object_new_array();
    char *gv = NULL;
    for (size_t i = 0; i < ARRAY_LEN(fk_resources); i++) {
        const struct fk_resource *res = &fk_resources[i];
        if (strcmp(res->group, group) != 0 || strcmp(res->version, version) != 0 || !fk_served(res))
            continue;
        free(gv);
        gv = fk_gv(res);
        char *singular = xstrdup(res->kind);
        for (char *p = singular; *p; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        json_object_array_add(arr,
                              fk_api_resource(res->plural, singular, res->kind, NULL, NULL, all));
        free(singular);
        char *name = xasprintf("%s/status", res->plural);
        json_object_array_add(arr, fk_api_resource(name, "", res->kind, NULL, NULL, sub));
        free(name);
        if (res->scalable) {
            name = xasprintf("%s/scale", res->plural);
            json_object_array_add(arr,
                                  fk_api_resource(name, "", "Scale", "autoscaling", "v1", sub));
            free(name);
        }
        if (strcmp(res->kind, "Pod") == 0)
            json_object_array_add(
                arr, fk_api_resource("pods/eviction", "", "Eviction", "policy", "v1", create));
    }
    if (!gv) {
        json_object_put(arr);
        return NULL;
    }
    json_object *l = json_object_new_object();
    json_object_object_add(l, "kind", json_object_new_string("APIResourceList"));
    json_object_object_add(l, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(l, "groupVersion", json_object_new_string(gv));
    json_object_object_add(l, "resources", arr);
    free(gv);
    return l;
}

static json_object *fk_group_version(const char *group, const char *version)
{
    json_object *v = json_object_new_object();
    char *gv = xasprintf("%s/%s", group, version);
    json_object_object_add(v, "groupVersion", json_object_new_string(gv));
    json_object_object_add(v, "version", json_object_new_string(version));
    free(gv);
    return v;
}

/*
 * The APIGroupList: each group once, its served versions in fk_resources order, the first
 * preferred (Kueue's: the first of --kueue-versions).
 */
static json_object *fk_group_list(void)
{
    json_object *groups = json_object_new_array();
    for (size_t i = 0; i < ARRAY_LEN(fk_resources); i++) {
        const struct fk_resource *res = &fk_resources[i];
        bool seen = !res->group[0] || !fk_served(res);
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(fk_resources[j].group, res->group) == 0 && fk_served(&fk_resources[j]);
        if (seen)
            continue;
        json_object *g = json_object_new_object(), *versions = json_object_new_array();
        json_object_object_add(g, "name", json_object_new_string(res->group));
        for (size_t j = i; j < ARRAY_LEN(fk_resources); j++) {
            bool dup =
                strcmp(fk_resources[j].group, res->group) != 0 || !fk_served(&fk_resources[j]);
            for (size_t m = i; m < j && !dup; m++)
                dup = strcmp(fk_resources[m].group, res->group) == 0 &&
                      strcmp(fk_resources[m].version, fk_resources[j].version) == 0;
            if (!dup)
                json_object_array_add(versions,
                                      fk_group_version(res->group, fk_resources[j].version));
        }
        json_object_object_add(g, "versions", versions);
        json_object_object_add(
            g, "preferredVersion",
            fk_group_version(res->group, fk_is_kueue(res) ? fk_kueue_versions[0] : res->version));
        json_object_array_add(groups, g);
    }
    json_object *l = json_object_new_object();
    json_object_object_add(l, "kind", json_object_new_string("APIGroupList"));
    json_object_object_add(l, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(l, "groups", groups);
    return l;
}

/* Answer a discovery GET (/api, /api/v1, /apis, /apis/G/V): true with *ret set. */
static bool fk_disco_route(struct fk_req *r, MHD_RESULT *ret)
{
    if (strcmp(r->method, "GET") != 0)
        return false;
    const char *p = r->path;
    json_object *doc = NULL;
    if (strcmp(p, "/api") == 0 || strcmp(p, "/api/") == 0) {
        doc = json_object_new_object();
        json_object *v = json_object_new_array();
        json_object_array_add(v, json_object_new_string("v1"));
        json_object_object_add(doc, "kind", json_object_new_string("APIVersions"));
        json_object_object_add(doc, "versions", v);
    } else if (strcmp(p, "/apis") == 0 || strcmp(p, "/apis/") == 0) {
        doc = fk_group_list();
    } else if (str_has_prefix(p, "/api/") && !strchr(p + 5, '/')) {
        if (!(doc = fk_resource_list("", p + 5)))
            goto not_found;
    } else if (str_has_prefix(p, "/apis/")) {
        const char *g = p + 6, *slash = strchr(g, '/');
        if (!slash || !slash[1] || strchr(slash + 1, '/'))
            return false;
        char *group = xstrndup(g, (size_t)(slash - g));
        doc = fk_resource_list(group, slash + 1);
        free(group);
        if (!doc)
            goto not_found;
    } else {
        return false;
    }
    *ret = fk_send_json(r, 200, doc);
    return true;
not_found:
    *ret = fk_status(r, 404, "NotFound", "the server could not find the requested resource", NULL,
                     NULL, NULL, NULL);
    return true;
}
