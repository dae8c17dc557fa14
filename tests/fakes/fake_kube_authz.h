/*
 * SelfSubjectAccessReview for the fake API server (included by fake_kube.c):
 * POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews answers 201 with the review
 * echoed and its status, as kube-apiserver does (kubernetes/api authorization/v1/types.go;
 * docs/backend-apis.md §6.8): allowed true with the RBAC authorizer's reason, or allowed
 * false with no reason (RBAC has no opinion: nothing grants it). A spec with neither or both
 * of resourceAttributes and nonResourceAttributes is 422, as the API's validation answers.
 *
 * Everything is granted except what the --deny-file lists (re-read when it changes), one
 * rule a line, as `kubectl auth can-i` names a request: VERB RESOURCE[.GROUP][/SUBRESOURCE]
 * [NAMESPACE], e.g. "patch deployments.apps/scale ml" or "create events". A rule without a
 * namespace denies in every namespace; one with a namespace denies there and cluster-wide
 * (a grant in every namespace cannot hold if one namespace lacks it). VERB may be "*".
 */

static const char *fk_deny_file;

/* Does a line of the deny file deny (verb, group, resource, sub, ns)? */
static bool fk_deny_line(const char *line, const char *verb, const char *group, const char *res,
                         const char *sub, const char *ns)
{
    char v[64], what[256], lns[254] = "";
    int n = sscanf(line, "%63s %255s %253s", v, what, lns);
    if (n < 2 || v[0] == '#')
        return false;
    if (strcmp(v, "*") != 0 && strcmp(v, verb) != 0)
        return false;
    char *slash = strchr(what, '/');
    const char *wsub = "";
    if (slash) {
        *slash = '\0';
        wsub = slash + 1;
    }
    char *dot = strchr(what, '.');
    const char *wgroup = "";
    if (dot) {
        *dot = '\0';
        wgroup = dot + 1;
    }
    if (strcmp(what, res) != 0 || strcmp(wgroup, group) != 0 || strcmp(wsub, sub) != 0)
        return false;
    return n < 3 || !*ns || strcmp(lns, ns) == 0;
}

static bool fk_denied(const char *verb, const char *group, const char *res, const char *sub,
                      const char *ns)
{
    FILE *f = fk_deny_file ? fopen(fk_deny_file, "r") : NULL;
    if (!f)
        return false;
    char line[512];
    bool denied = false;
    while (!denied && fgets(line, sizeof(line), f))
        denied = fk_deny_line(line, verb, group, res, sub, ns);
    fclose(f);
    return denied;
}

static MHD_RESULT fk_ssar(struct fk_req *r)
{
    if (!fk_ctype_is(r, "application/json"))
        return fk_unsupported_media(r);
    json_object *rev = fk_parse_body(r), *spec = NULL, *ra = NULL, *nra = NULL;
    const char *kind = rev ? fk_get_str(rev, "kind", NULL) : NULL;
    const char *av = rev ? fk_get_str(rev, "apiVersion", NULL) : NULL;
    if (!rev || !kind || strcmp(kind, "SelfSubjectAccessReview") != 0 || !av ||
        strcmp(av, "authorization.k8s.io/v1") != 0) {
        json_object_put(rev);
        return fk_bad_body(r, "SelfSubjectAccessReview");
    }
    json_object_object_get_ex(rev, "spec", &spec);
    if (spec) {
        json_object_object_get_ex(spec, "resourceAttributes", &ra);
        json_object_object_get_ex(spec, "nonResourceAttributes", &nra);
    }
    if (!ra == !nra) {
        json_object_put(rev);
        return fk_status(r, 422, "Invalid",
                         "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: "
                         "spec.resourceAttributes: Invalid value: \"null\": exactly one of "
                         "nonResourceAttributes or resourceAttributes must be specified",
                         NULL, NULL, NULL, NULL);
    }
    const char *verb = ra ? fk_get_str(ra, "verb", NULL) : NULL;
    const char *group = ra ? fk_get_str(ra, "group", NULL) : NULL;
    const char *res = ra ? fk_get_str(ra, "resource", NULL) : NULL;
    const char *sub = ra ? fk_get_str(ra, "subresource", NULL) : NULL;
    const char *ns = ra ? fk_get_str(ra, "namespace", NULL) : NULL;
    bool allowed = ra && !fk_denied(verb ? verb : "", group ? group : "", res ? res : "",
                                    sub ? sub : "", ns ? ns : "");
    json_object *meta = json_object_new_object(), *st = json_object_new_object();
    json_object_object_add(meta, "creationTimestamp", NULL);
    json_object_object_add(rev, "metadata", meta);
    json_object_object_add(st, "allowed", json_object_new_boolean(allowed));
    if (allowed)
        json_object_object_add(
            st, "reason",
            json_object_new_string("RBAC: allowed by ClusterRoleBinding \"gpureclaim-enforcer\" of "
                                   "ClusterRole \"gpureclaim-enforcer\" to ServiceAccount "
                                   "\"gpureclaim-enforcer/gpureclaim\""));
    json_object_object_add(rev, "status", st);
    return fk_send_json(r, 201, rev);
}
