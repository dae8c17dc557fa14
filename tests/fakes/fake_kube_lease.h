/*
 * coordination.k8s.io/v1 Leases for the fake API server (included by fake_kube.c): create
 * (POST, 201, 409 AlreadyExists), get (the generic GET), and update (PUT) with the optimistic
 * concurrency of the real server: the body's metadata.resourceVersion must be the stored
 * one, else 409 Conflict "the object has been modified"; a missing one is 422, because the
 * Lease strategy does not allow unconditional updates (kubernetes/kubernetes
 * pkg/registry/coordination/lease/strategy.go, AllowUnconditionalUpdate false). Every write
 * gives the object a new resourceVersion, as etcd's revision would.
 */

static unsigned long fk_rv_seq = 1000;

static void fk_lease_stamp(json_object *meta)
{
    char rv[32];
    snprintf(rv, sizeof(rv), "%lu", ++fk_rv_seq);
    json_object_object_add(meta, "resourceVersion", json_object_new_string(rv));
}

static MHD_RESULT fk_lease_bad(struct fk_req *r, const struct fk_resource *res, const char *name,
                               const char *why)
{
    char *msg = xasprintf("Lease.coordination.k8s.io \"%s\" is invalid: %s", name ? name : "", why);
    MHD_RESULT ret = fk_status(r, 422, "Invalid", msg, res, name ? name : "", NULL, NULL);
    free(msg);
    return ret;
}

/* Parse and check the body of a create or update; NULL after an answer was sent. */
static json_object *fk_lease_body(struct fk_req *r, const struct fk_resource *res, const char *ns,
                                  MHD_RESULT *ret)
{
    if (!fk_ctype_is(r, "application/json")) {
        *ret = fk_unsupported_media(r);
        return NULL;
    }
    json_object *l = fk_parse_body(r);
    const char *kind = l ? fk_get_str(l, "kind", NULL) : NULL;
    const char *av = l ? fk_get_str(l, "apiVersion", NULL) : NULL;
    const char *lns = l ? fk_get_str(l, "metadata", "namespace") : NULL;
    if (!l || !json_object_is_type(l, json_type_object) || !kind || strcmp(kind, "Lease") != 0 ||
        !av || strcmp(av, "coordination.k8s.io/v1") != 0) {
        json_object_put(l);
        *ret = fk_bad_body(r, "Lease");
        return NULL;
    }
    if (lns && strcmp(lns, ns) != 0) {
        json_object_put(l);
        *ret = fk_status(r, 400, "BadRequest",
                         "the namespace of the provided object does not match the namespace "
                         "sent on the request",
                         NULL, NULL, NULL, NULL);
        return NULL;
    }
    json_object *spec, *v;
    if (json_object_object_get_ex(l, "spec", &spec) &&
        json_object_object_get_ex(spec, "leaseDurationSeconds", &v) &&
        (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) <= 0)) {
        *ret = fk_lease_bad(r, res, fk_get_str(l, "metadata", "name"),
                            "spec.leaseDurationSeconds: Invalid value: must be greater than 0");
        json_object_put(l);
        return NULL;
    }
    return l;
}

static MHD_RESULT fk_lease_create(struct fk_req *r, const struct fk_resource *res, const char *ns)
{
    MHD_RESULT ret;
    json_object *l = fk_lease_body(r, res, ns, &ret);
    if (!l)
        return ret;
    const char *name = fk_get_str(l, "metadata", "name");
    if (!name || !*name) {
        ret = fk_lease_bad(r, res, "",
                           "metadata.name: Required value: name or generateName is "
                           "required");
    } else if (fk_find(res, ns, name)) {
        char *msg = xasprintf("leases.coordination.k8s.io \"%s\" already exists", name);
        ret = fk_status(r, 409, "AlreadyExists", msg, res, name, NULL, NULL);
        free(msg);
    } else {
        json_object *meta;
        json_object_object_get_ex(l, "metadata", &meta);
        char uid[64];
        snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012lu", ++fk_uid_seq);
        json_object_object_add(meta, "uid", json_object_new_string(uid));
        json_object_object_add(meta, "namespace", json_object_new_string(ns));
        fk_lease_stamp(meta);
        fk_add(l, "request");
        return fk_send_json(r, 201, l);
    }
    json_object_put(l);
    return ret;
}

static MHD_RESULT fk_lease_update(struct fk_req *r, struct fk_obj *o)
{
    MHD_RESULT ret;
    json_object *l = fk_lease_body(r, o->res, o->ns, &ret);
    if (!l)
        return ret;
    const char *name = fk_get_str(l, "metadata", "name");
    const char *want = fk_get_str(l, "metadata", "resourceVersion");
    const char *have = fk_get_str(o->obj, "metadata", "resourceVersion");
    if (name && strcmp(name, o->name) != 0) {
        ret = fk_status(r, 400, "BadRequest",
                        "the name of the object does not match the name on the URL", NULL, NULL,
                        NULL, NULL);
    } else if (!want || !*want) {
        ret = fk_lease_bad(r, o->res, o->name,
                           "metadata.resourceVersion: Invalid value: 0x0: must be specified "
                           "for an update");
    } else if (!have || strcmp(want, have) != 0) {
        char *msg = xasprintf("Operation cannot be fulfilled on leases.coordination.k8s.io "
                              "\"%s\": the object has been modified; please apply your changes "
                              "to the latest version and try again",
                              o->name);
        ret = fk_status(r, 409, "Conflict", msg, o->res, o->name, NULL, NULL);
        free(msg);
    } else {
        /* Keep what the server owns (uid, creation), take the rest from the body. */
        json_object *meta, *old_meta, *v;
        json_object_object_get_ex(l, "metadata", &meta);
        json_object_object_get_ex(o->obj, "metadata", &old_meta);
        if (json_object_object_get_ex(old_meta, "uid", &v))
            json_object_object_add(meta, "uid", json_object_get(v));
        json_object_object_add(meta, "namespace", json_object_new_string(o->ns));
        json_object_object_add(meta, "name", json_object_new_string(o->name));
        fk_lease_stamp(meta);
        json_object_put(o->obj);
        o->obj = json_object_get(l);
        return fk_send_json(r, 200, l);
    }
    json_object_put(l);
    return ret;
}
