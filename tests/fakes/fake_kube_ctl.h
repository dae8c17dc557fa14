/*
 * The controllers of the fake API server (included by fake_kube.c): what the operators of the
 * platforms the enforcer acts on do to their children after a write, so that a test can show
 * that acting on a child is undone while acting on the owner holds. fk_ctl_reconcile() runs
 * after every successful write (fk_lock held) until nothing changes; each change gives the
 * object a new resourceVersion and, for a spec change, a new metadata.generation, as the
 * controller's own update would. Each behaviour is the
 * one in the project's source (docs/backend-apis.md §6.9 cites repository, path and commit):
 *
 *  - Kubeflow Notebook (kubeflow.org): its StatefulSet's spec.replicas is 0 while the
 *    Notebook carries the annotation kubeflow-resource-stopped (any value), 1 otherwise, and
 *    is put back when someone scales the StatefulSet directly (kubeflow/notebooks
 *    components/notebook-controller/controllers/notebook_controller.go generateStatefulSet,
 *    reconcilehelper.CopyStatefulSetFields, Owns(&appsv1.StatefulSet{})).
 *  - KServe InferenceService (serving.kserve.io), raw deployment mode: with the annotation
 *    serving.kserve.io/stop equal to "true" (case-insensitively) the controller deletes its
 *    Deployments (CheckResultDelete) and their ReplicaSets and pods go with them; once the
 *    annotation is gone or false it creates them again (new uid). With
 *    serving.kserve.io/autoscalerClass "none" it puts spec.replicas back to
 *    spec.predictor.minReplicas (1 when unset) after a direct scale; with an HPA (the
 *    default) replicas are left to the HPA, which this fake does not run.
 *  - RayCluster (ray.io), JobSet (jobset.x-k8s.io): while spec.suspend is true every pod
 *    below the object (following controller ownerReferences) is deleted. TrainJob
 *    (trainer.kubeflow.org) passes spec.suspend on to its JobSet, whose controller then
 *    deletes the pods.
 *
 * Pods are never re-created (there is no ReplicaSet or StatefulSet controller here); the
 * tests look at the owners' state.
 */

static char *fk_spec_text(json_object *obj); /* fake_kube.c: what metadata.generation counts */

/* The stored object of `group` and `kind` with uid `uid`, or NULL. */
static struct fk_obj *fk_ctl_by_uid(const char *group, const char *kind, const char *uid)
{
    for (size_t i = 0; uid && i < fk_nobjs; i++) {
        const char *u = fk_get_str(fk_objs[i].obj, "metadata", "uid");
        if (u && strcmp(u, uid) == 0 && strcmp(fk_objs[i].res->group, group) == 0 &&
            strcmp(fk_objs[i].res->kind, kind) == 0)
            return &fk_objs[i];
    }
    return NULL;
}

/* The controller ownerReference of `o`: its kind and uid (NULL when none). */
static const char *fk_ctl_owner(json_object *o, const char **kind)
{
    json_object *meta, *refs;
    *kind = NULL;
    if (!json_object_object_get_ex(o, "metadata", &meta) ||
        !json_object_object_get_ex(meta, "ownerReferences", &refs) ||
        !json_object_is_type(refs, json_type_array))
        return NULL;
    for (size_t i = 0; i < json_object_array_length(refs); i++) {
        json_object *r = json_object_array_get_idx(refs, i), *c;
        if (json_object_object_get_ex(r, "controller", &c) && json_object_get_boolean(c)) {
            *kind = fk_get_str(r, "kind", NULL);
            return fk_get_str(r, "uid", NULL);
        }
    }
    return NULL;
}

/* Is `o` (transitively, through controller references) controlled by the object `uid`? */
static bool fk_ctl_below(json_object *o, const char *uid)
{
    for (int depth = 0; o && depth < 12; depth++) {
        const char *kind, *owner = fk_ctl_owner(o, &kind);
        if (!owner)
            return false;
        if (strcmp(owner, uid) == 0)
            return true;
        json_object *next = NULL;
        for (size_t i = 0; i < fk_nobjs && !next; i++) {
            const char *u = fk_get_str(fk_objs[i].obj, "metadata", "uid");
            if (u && strcmp(u, owner) == 0)
                next = fk_objs[i].obj;
        }
        o = next;
    }
    return false;
}

static const char *fk_ctl_annotation(json_object *o, const char *key)
{
    json_object *meta, *anns;
    if (!json_object_object_get_ex(o, "metadata", &meta) ||
        !json_object_object_get_ex(meta, "annotations", &anns))
        return NULL;
    return fk_get_str(anns, key, NULL);
}

static bool fk_ctl_spec_bool(json_object *o, const char *key)
{
    json_object *spec, *v;
    return json_object_object_get_ex(o, "spec", &spec) &&
           json_object_object_get_ex(spec, key, &v) && json_object_is_type(v, json_type_boolean) &&
           json_object_get_boolean(v);
}

/* Set spec.replicas (and status.replicas) to `want`; true when it changed. */
static bool fk_ctl_set_replicas(struct fk_obj *o, int64_t want)
{
    json_object *spec, *v, *meta;
    if (!json_object_object_get_ex(o->obj, "spec", &spec)) {
        spec = json_object_new_object();
        json_object_object_add(o->obj, "spec", spec);
    }
    if (json_object_object_get_ex(spec, "replicas", &v) && json_object_is_type(v, json_type_int) &&
        json_object_get_int64(v) == want)
        return false;
    char *before = fk_spec_text(o->obj);
    json_object_object_add(spec, "replicas", json_object_new_int64(want));
    fk_generation(o->obj, before); /* the controller's update, like any spec change */
    free(before);
    json_object *st;
    if (json_object_object_get_ex(o->obj, "status", &st) &&
        json_object_is_type(st, json_type_object))
        json_object_object_add(st, "replicas", json_object_new_int64(want));
    if (json_object_object_get_ex(o->obj, "metadata", &meta))
        fk_lease_stamp(meta);
    return true;
}

/* Delete every object below `uid` of kind `kind` (NULL: any); true when one was. All are
   found before any is removed: removing a ReplicaSet first would cut its pods' chain. */
static bool fk_ctl_delete_below(const char *uid, const char *kind)
{
    json_object **doomed = xcalloc(fk_nobjs + 1, sizeof(*doomed));
    size_t n = 0;
    for (size_t i = 0; i < fk_nobjs; i++)
        if ((!kind || strcmp(fk_objs[i].res->kind, kind) == 0) && fk_ctl_below(fk_objs[i].obj, uid))
            doomed[n++] = fk_objs[i].obj;
    for (size_t d = 0; d < n; d++)
        for (size_t i = 0; i < fk_nobjs; i++)
            if (fk_objs[i].obj == doomed[d]) {
                fk_remove(&fk_objs[i]);
                break;
            }
    free(doomed);
    return n > 0;
}

/* ---- Kubeflow Notebook ------------------------------------------------------------------ */

static bool fk_ctl_notebooks(void)
{
    bool changed = false;
    for (size_t i = 0; i < fk_nobjs; i++) {
        struct fk_obj *ss = &fk_objs[i];
        const char *kind, *owner;
        if (strcmp(ss->res->kind, "StatefulSet") != 0 || !(owner = fk_ctl_owner(ss->obj, &kind)) ||
            strcmp(kind, "Notebook") != 0)
            continue;
        struct fk_obj *nb = fk_ctl_by_uid("kubeflow.org", "Notebook", owner);
        if (nb)
            changed |= fk_ctl_set_replicas(
                ss, fk_ctl_annotation(nb->obj, "kubeflow-resource-stopped") ? 0 : 1);
    }
    return changed;
}

/* ---- KServe InferenceService ------------------------------------------------------------- */

/* Deployments the InferenceService controller deleted on stop, to create again on start. */
struct fk_ctl_saved {
    char *isvc_uid;
    json_object *deployment;
};
static struct fk_ctl_saved *fk_ctl_saved;
static size_t fk_ctl_nsaved;

static bool fk_ctl_isvc_stopped(json_object *isvc)
{
    const char *v = fk_ctl_annotation(isvc, "serving.kserve.io/stop");
    return v && strcasecmp(v, "true") == 0;
}

static int64_t fk_ctl_isvc_min_replicas(json_object *isvc)
{
    json_object *spec, *pred, *v;
    if (json_object_object_get_ex(isvc, "spec", &spec) &&
        json_object_object_get_ex(spec, "predictor", &pred) &&
        json_object_object_get_ex(pred, "minReplicas", &v) && json_object_is_type(v, json_type_int))
        return json_object_get_int64(v);
    return 1;
}

static bool fk_ctl_isvcs(void)
{
    bool changed = false;
    for (size_t i = 0; i < fk_nobjs; i++) {
        struct fk_obj *isvc = &fk_objs[i];
        if (strcmp(isvc->res->group, "serving.kserve.io") != 0 ||
            strcmp(isvc->res->kind, "InferenceService") != 0)
            continue;
        const char *uid = fk_get_str(isvc->obj, "metadata", "uid");
        if (!uid)
            continue;
        if (fk_ctl_isvc_stopped(isvc->obj)) {
            /* Delete the Deployments it controls (and, as the garbage collector does, their
               ReplicaSets and pods), keeping a copy to create again on start. */
            for (size_t j = 0; j < fk_nobjs; j++) {
                struct fk_obj *d = &fk_objs[j];
                const char *kind, *owner = fk_ctl_owner(d->obj, &kind);
                if (strcmp(d->res->kind, "Deployment") != 0 || !owner || strcmp(owner, uid) != 0)
                    continue;
                const char *duid = fk_get_str(d->obj, "metadata", "uid");
                char *duid_copy = duid ? xstrdup(duid) : NULL;
                fk_ctl_saved = xrealloc(fk_ctl_saved, (fk_ctl_nsaved + 1) * sizeof(*fk_ctl_saved));
                fk_ctl_saved[fk_ctl_nsaved++] =
                    (struct fk_ctl_saved){xstrdup(uid), json_object_get(d->obj)};
                fk_remove(d);
                if (duid_copy)
                    fk_ctl_delete_below(duid_copy, NULL);
                free(duid_copy);
                return true; /* the store moved: start over */
            }
            continue;
        }
        /* Started (again): create what stop deleted, with a new uid. */
        for (size_t s = 0; s < fk_ctl_nsaved; s++) {
            if (strcmp(fk_ctl_saved[s].isvc_uid, uid) != 0)
                continue;
            json_object *d = fk_ctl_saved[s].deployment, *meta;
            int64_t want = fk_ctl_isvc_min_replicas(isvc->obj); /* fk_add moves fk_objs */
            free(fk_ctl_saved[s].isvc_uid);
            fk_ctl_saved[s] = fk_ctl_saved[--fk_ctl_nsaved];
            if (json_object_object_get_ex(d, "metadata", &meta))
                fk_lease_stamp(meta);
            fk_add(d, "InferenceService controller");
            fk_replace_uid(&fk_objs[fk_nobjs - 1]);
            fk_ctl_set_replicas(&fk_objs[fk_nobjs - 1], want);
            json_object_put(d);
            return true;
        }
        const char *cls = fk_ctl_annotation(isvc->obj, "serving.kserve.io/autoscalerClass");
        if (!cls || strcmp(cls, "none") != 0)
            continue;
        for (size_t j = 0; j < fk_nobjs; j++) {
            struct fk_obj *d = &fk_objs[j];
            const char *kind, *owner = fk_ctl_owner(d->obj, &kind);
            if (strcmp(d->res->kind, "Deployment") == 0 && owner && strcmp(owner, uid) == 0)
                changed |= fk_ctl_set_replicas(d, fk_ctl_isvc_min_replicas(isvc->obj));
        }
    }
    return changed;
}

/* ---- suspend: RayCluster, JobSet, TrainJob ----------------------------------------------- */

static bool fk_ctl_suspended(void)
{
    static const struct {
        const char *group, *kind;
    } kinds[] = {{"ray.io", "RayCluster"}, {"jobset.x-k8s.io", "JobSet"}};
    for (size_t i = 0; i < fk_nobjs; i++) {
        struct fk_obj *o = &fk_objs[i];
        /* TrainJob: its runtime builds the JobSet with the TrainJob's spec.suspend. */
        if (strcmp(o->res->group, "trainer.kubeflow.org") == 0 &&
            strcmp(o->res->kind, "TrainJob") == 0 && fk_ctl_spec_bool(o->obj, "suspend")) {
            const char *uid = fk_get_str(o->obj, "metadata", "uid");
            for (size_t j = 0; uid && j < fk_nobjs; j++) {
                struct fk_obj *js = &fk_objs[j];
                const char *kind, *owner = fk_ctl_owner(js->obj, &kind);
                json_object *spec, *meta;
                if (strcmp(js->res->kind, "JobSet") != 0 || !owner || strcmp(owner, uid) != 0 ||
                    fk_ctl_spec_bool(js->obj, "suspend"))
                    continue;
                if (!json_object_object_get_ex(js->obj, "spec", &spec)) {
                    spec = json_object_new_object();
                    json_object_object_add(js->obj, "spec", spec);
                }
                char *before = fk_spec_text(js->obj);
                json_object_object_add(spec, "suspend", json_object_new_boolean(1));
                fk_generation(js->obj, before);
                free(before);
                if (json_object_object_get_ex(js->obj, "metadata", &meta))
                    fk_lease_stamp(meta);
                return true;
            }
        }
        for (size_t k = 0; k < ARRAY_LEN(kinds); k++) {
            if (strcmp(o->res->group, kinds[k].group) != 0 ||
                strcmp(o->res->kind, kinds[k].kind) != 0 || !fk_ctl_spec_bool(o->obj, "suspend"))
                continue;
            const char *uid = fk_get_str(o->obj, "metadata", "uid");
            char *copy = uid ? xstrdup(uid) : NULL;
            bool gone = copy && fk_ctl_delete_below(copy, "Pod");
            free(copy);
            if (gone)
                return true;
        }
    }
    return false;
}

/* Run every controller until none changes anything (bounded: controllers never fight). */
static void fk_ctl_reconcile(void)
{
    for (int pass = 0; pass < 32; pass++) {
        bool changed = fk_ctl_notebooks();
        changed |= fk_ctl_isvcs();
        changed |= fk_ctl_suspended();
        if (!changed)
            return;
    }
}

static void fk_ctl_free(void)
{
    for (size_t s = 0; s < fk_ctl_nsaved; s++) {
        free(fk_ctl_saved[s].isvc_uid);
        json_object_put(fk_ctl_saved[s].deployment);
    }
    free(fk_ctl_saved);
}
