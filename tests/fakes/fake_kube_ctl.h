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

static bool fk_ctl_commands(void);
static bool fk_ctl_platforms(void);
static void fk_ctl_platforms_free(void);

/* Run every controller until none changes anything (bounded: controllers never fight). */
static void fk_ctl_reconcile(void)
{
    for (int pass = 0; pass < 32; pass++) {
        bool changed = fk_ctl_notebooks();
        changed |= fk_ctl_isvcs();
        changed |= fk_ctl_suspended();
        changed |= fk_ctl_commands();
        changed |= fk_ctl_platforms();
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
    fk_ctl_platforms_free();
}

/* ---- the platforms' controllers of issue 24 ------------------------------------------------ */

/*
 * How each of these controllers stops its workload and what it re-creates below it, as the real
 * ones do (docs/workload-kinds.md cites repository, path and commit for each):
 *  - KServe LLMInferenceService: annotation serving.kserve.io/stop "true" deletes its
 *    Deployments (single node) and LeaderWorkerSets (multi node); without it, they are created.
 *  - CodeFlare AppWrapper: spec.suspend true deletes its components (any kind below it);
 *    false deploys them again.
 *  - The Kubeflow training operator's jobs and mpi-operator's MPIJob: spec.runPolicy.suspend
 *    true deletes every pod below the job (an MPIJob's launcher Job's too); false creates them.
 *  - Volcano Job: phase Aborting or Aborted (after a Command AbortJob, fk_ctl_commands) kills
 *    its pods; Restarting (after ResumeJob) creates them again, then the Job runs.
 * A child deleted while the workload is not stopped is created again (new uid), as each
 * controller's reconcile does: acting below the workload is undone.
 */
enum fk_ctl_stop { FK_STOP_ANNOTATION, FK_STOP_SUSPEND, FK_STOP_RUNPOLICY, FK_STOP_PHASE };

static const struct fk_ctl_managed {
    const char *group, *kind;
    enum fk_ctl_stop stop;
    const char *children; /* kinds it deletes and re-creates: space separated, or "*" any */
} fk_ctl_managed[] = {
    {"serving.kserve.io", "LLMInferenceService", FK_STOP_ANNOTATION, "Deployment LeaderWorkerSet"},
    {"workload.codeflare.dev", "AppWrapper", FK_STOP_SUSPEND, "*"},
    {"kubeflow.org", "PyTorchJob", FK_STOP_RUNPOLICY, "Pod"},
    {"kubeflow.org", "TFJob", FK_STOP_RUNPOLICY, "Pod"},
    {"kubeflow.org", "XGBoostJob", FK_STOP_RUNPOLICY, "Pod"},
    {"kubeflow.org", "PaddleJob", FK_STOP_RUNPOLICY, "Pod"},
    {"kubeflow.org", "JAXJob", FK_STOP_RUNPOLICY, "Pod"},
    {"kubeflow.org", "MPIJob", FK_STOP_RUNPOLICY, "Pod"},
    {"batch.volcano.sh", "Job", FK_STOP_PHASE, "Pod"},
};

/* A child seen below a managed workload, kept to be created again. */
struct fk_ctl_kid {
    char *owner_uid;
    const struct fk_resource *res;
    char *ns, *name;
    json_object *obj;
};
static struct fk_ctl_kid *fk_ctl_kids;
static size_t fk_ctl_nkids;

static const char *fk_ctl_phase(json_object *o)
{
    json_object *st, *state;
    if (!json_object_object_get_ex(o, "status", &st) ||
        !json_object_object_get_ex(st, "state", &state))
        return NULL;
    return fk_get_str(state, "phase", NULL);
}

static void fk_ctl_set_phase(struct fk_obj *o, const char *phase)
{
    json_object *st, *state, *meta;
    if (!json_object_object_get_ex(o->obj, "status", &st) ||
        !json_object_is_type(st, json_type_object)) {
        st = json_object_new_object();
        json_object_object_add(o->obj, "status", st);
    }
    if (!json_object_object_get_ex(st, "state", &state) ||
        !json_object_is_type(state, json_type_object)) {
        state = json_object_new_object();
        json_object_object_add(st, "state", state);
    }
    json_object_object_add(state, "phase", json_object_new_string(phase));
    if (json_object_object_get_ex(o->obj, "metadata", &meta))
        fk_lease_stamp(meta); /* a status update: a new resourceVersion, the same generation */
}

static bool fk_ctl_managed_stopped(const struct fk_ctl_managed *m, json_object *o)
{
    json_object *spec, *rp, *v;
    const char *phase;
    switch (m->stop) {
    case FK_STOP_ANNOTATION:
        return fk_ctl_isvc_stopped(o);
    case FK_STOP_SUSPEND:
        return fk_ctl_spec_bool(o, "suspend");
    case FK_STOP_RUNPOLICY:
        return json_object_object_get_ex(o, "spec", &spec) &&
               json_object_object_get_ex(spec, "runPolicy", &rp) &&
               json_object_object_get_ex(rp, "suspend", &v) &&
               json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
    default:
        phase = fk_ctl_phase(o);
        return phase && (strcmp(phase, "Aborting") == 0 || strcmp(phase, "Aborted") == 0);
    }
}

static bool fk_ctl_kind_in(const char *kinds, const char *kind)
{
    if (strcmp(kinds, "*") == 0)
        return true;
    size_t n = strlen(kind);
    for (const char *p = strstr(kinds, kind); p; p = strstr(p + 1, kind))
        if ((p == kinds || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

static const struct fk_ctl_managed *fk_ctl_managed_of(const struct fk_obj *o)
{
    for (size_t m = 0; m < ARRAY_LEN(fk_ctl_managed); m++)
        if (strcmp(o->res->group, fk_ctl_managed[m].group) == 0 &&
            strcmp(o->res->kind, fk_ctl_managed[m].kind) == 0)
            return &fk_ctl_managed[m];
    return NULL;
}

/* Remember the children of `uid` this controller creates (those seen, the first time). */
static void fk_ctl_remember(const struct fk_ctl_managed *m, const char *uid)
{
    for (size_t i = 0; i < fk_nobjs; i++) {
        struct fk_obj *c = &fk_objs[i];
        const char *kind, *owner = fk_ctl_owner(c->obj, &kind);
        if (!owner || strcmp(owner, uid) != 0 || !fk_ctl_kind_in(m->children, c->res->kind))
            continue;
        bool known = false;
        for (size_t k = 0; k < fk_ctl_nkids && !known; k++)
            known = fk_ctl_kids[k].res == c->res && strcmp(fk_ctl_kids[k].ns, c->ns) == 0 &&
                    strcmp(fk_ctl_kids[k].name, c->name) == 0;
        if (known)
            continue;
        json_object *copy = NULL;
        json_object_deep_copy(c->obj, &copy, NULL);
        fk_ctl_kids = xrealloc(fk_ctl_kids, (fk_ctl_nkids + 1) * sizeof(*fk_ctl_kids));
        fk_ctl_kids[fk_ctl_nkids++] =
            (struct fk_ctl_kid){xstrdup(uid), c->res, xstrdup(c->ns), xstrdup(c->name), copy};
    }
}

/* Delete what `m` stops below `uid` (pods at any depth; other kinds with what is below them). */
static bool fk_ctl_stop_below(const struct fk_ctl_managed *m, const char *uid)
{
    if (strcmp(m->children, "Pod") == 0)
        return fk_ctl_delete_below(uid, "Pod");
    for (size_t i = 0; i < fk_nobjs; i++) {
        const char *kind, *owner = fk_ctl_owner(fk_objs[i].obj, &kind);
        if (!owner || strcmp(owner, uid) != 0 || !fk_ctl_kind_in(m->children, fk_objs[i].res->kind))
            continue;
        const char *cuid = fk_get_str(fk_objs[i].obj, "metadata", "uid");
        char *copy = cuid ? xstrdup(cuid) : NULL;
        fk_remove(&fk_objs[i]);
        if (copy)
            fk_ctl_delete_below(copy, NULL);
        free(copy);
        return true; /* the store moved: start over */
    }
    return false;
}

/* Create again a remembered child of `uid` that is gone; true when one was. */
static bool fk_ctl_recreate(const char *uid)
{
    for (size_t k = 0; k < fk_ctl_nkids; k++) {
        struct fk_ctl_kid *kid = &fk_ctl_kids[k];
        if (strcmp(kid->owner_uid, uid) != 0 || fk_find(kid->res, kid->ns, kid->name))
            continue;
        json_object *copy = NULL, *meta;
        json_object_deep_copy(kid->obj, &copy, NULL);
        if (json_object_object_get_ex(copy, "metadata", &meta))
            fk_lease_stamp(meta);
        fk_add(copy, "controller");
        fk_replace_uid(&fk_objs[fk_nobjs - 1]);
        json_object_put(copy);
        return true;
    }
    return false;
}

static bool fk_ctl_platforms(void)
{
    for (size_t i = 0; i < fk_nobjs; i++) {
        const struct fk_ctl_managed *m = fk_ctl_managed_of(&fk_objs[i]);
        const char *uid = fk_get_str(fk_objs[i].obj, "metadata", "uid");
        if (!m || !uid)
            continue;
        char *u = xstrdup(uid);
        bool changed;
        fk_ctl_remember(m, u);
        if (fk_ctl_managed_stopped(m, fk_objs[i].obj)) {
            changed = fk_ctl_stop_below(m, u);
            /* Volcano: Aborting until no pod is alive, then Aborted */
            if (!changed && m->stop == FK_STOP_PHASE &&
                strcmp(fk_ctl_phase(fk_objs[i].obj), "Aborting") == 0) {
                fk_ctl_set_phase(&fk_objs[i], "Aborted");
                changed = true;
            }
        } else {
            changed = fk_ctl_recreate(u);
            /* Volcano: Restarting until its pods are created again, then Running */
            const char *phase = fk_ctl_phase(fk_objs[i].obj);
            if (!changed && m->stop == FK_STOP_PHASE && phase && strcmp(phase, "Restarting") == 0) {
                fk_ctl_set_phase(&fk_objs[i], "Running");
                changed = true;
            }
        }
        free(u);
        if (changed)
            return true;
    }
    return false;
}

/*
 * Volcano's job controller takes each bus.volcano.sh Command whose target is a
 * batch.volcano.sh/v1alpha1 Job (others are not its), deletes it, and executes its action on
 * the Job named by the target's name in the command's namespace (job_controller_handler.go
 * processNextCommand): AbortJob from Pending or Running makes it Aborting (state/pending.go,
 * state/running.go); ResumeJob from Aborting or Aborted makes it Restarting (state/aborting.go,
 * state/aborted.go); any other action or phase changes nothing.
 */
static bool fk_ctl_commands(void)
{
    for (size_t i = 0; i < fk_nobjs; i++) {
        struct fk_obj *c = &fk_objs[i];
        if (strcmp(c->res->group, "bus.volcano.sh") != 0 || strcmp(c->res->kind, "Command") != 0)
            continue;
        const char *av = fk_get_str(c->obj, "target", "apiVersion");
        const char *kind = fk_get_str(c->obj, "target", "kind");
        if (!av || !kind || strcmp(av, "batch.volcano.sh/v1alpha1") != 0 ||
            strcmp(kind, "Job") != 0)
            continue;
        const char *tn = fk_get_str(c->obj, "target", "name");
        const char *act = fk_get_str(c->obj, "action", NULL);
        char *name = tn ? xstrdup(tn) : NULL, *action = act ? xstrdup(act) : NULL;
        char *ns = xstrdup(c->ns);
        fk_remove(c);
        struct fk_obj *job =
            name ? fk_find(fk_resource_by_kind("batch.volcano.sh/v1alpha1", "Job"), ns, name)
                 : NULL;
        const char *phase = job ? fk_ctl_phase(job->obj) : NULL;
        phase = phase ? phase : "Pending";
        if (job && action && strcmp(action, "AbortJob") == 0 &&
            (strcmp(phase, "Pending") == 0 || strcmp(phase, "Running") == 0))
            fk_ctl_set_phase(job, "Aborting");
        else if (job && action && strcmp(action, "ResumeJob") == 0 &&
                 (strcmp(phase, "Aborting") == 0 || strcmp(phase, "Aborted") == 0))
            fk_ctl_set_phase(job, "Restarting");
        free(name);
        free(action);
        free(ns);
        return true;
    }
    return false;
}

/*
 * POST of a bus.volcano.sh Command, as kube-apiserver creates any object: the body's kind and
 * apiVersion must be the path's, its namespace the path's (or absent), a name is required, an
 * existing name is 409 AlreadyExists; the object gets a uid, a resourceVersion and
 * creationTimestamp, and the answer is 201 with it.
 */
static MHD_RESULT fk_ctl_create_command(struct fk_req *r, const struct fk_resource *res,
                                        const char *ns)
{
    if (!fk_ctype_is(r, "application/json"))
        return fk_unsupported_media(r);
    json_object *o = fk_parse_body(r), *meta;
    if (!o || !json_object_is_type(o, json_type_object) ||
        !json_object_object_get_ex(o, "metadata", &meta)) {
        json_object_put(o);
        return fk_bad_body(r, "Command");
    }
    const char *kind = fk_get_str(o, "kind", NULL), *av = fk_get_str(o, "apiVersion", NULL);
    const char *name = fk_get_str(o, "metadata", "name");
    const char *ons = fk_get_str(o, "metadata", "namespace");
    MHD_RESULT ret;
    if (!kind || strcmp(kind, "Command") != 0 || !av || strcmp(av, "bus.volcano.sh/v1alpha1") != 0)
        ret = fk_status(r, 400, "BadRequest",
                        "the object provided is not a bus.volcano.sh/v1alpha1 "
                        "Command",
                        NULL, NULL, NULL, NULL);
    else if (ons && strcmp(ons, ns) != 0)
        ret = fk_status(r, 400, "BadRequest",
                        "the namespace of the provided object does not match the namespace sent "
                        "on the request",
                        NULL, NULL, NULL, NULL);
    else if (!name || !*name)
        ret = fk_status(r, 422, "Invalid",
                        "Command.bus.volcano.sh \"\" is invalid: metadata.name: Required value: "
                        "name or generateName is required",
                        res, "", NULL, NULL);
    else if (fk_find(res, ns, name)) {
        char *msg = xasprintf("commands.bus.volcano.sh \"%s\" already exists", name);
        ret = fk_status(r, 409, "AlreadyExists", msg, res, name, NULL, NULL);
        free(msg);
    } else {
        char uid[64];
        snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012lu", ++fk_uid_seq);
        json_object_object_add(meta, "uid", json_object_new_string(uid));
        json_object_object_add(meta, "creationTimestamp",
                               json_object_new_string("2023-11-14T22:13:20Z"));
        if (!ons)
            json_object_object_add(meta, "namespace", json_object_new_string(ns));
        fk_add(o, "request");
        return fk_send_json(r, 201, o);
    }
    json_object_put(o);
    return ret;
}

static void fk_ctl_platforms_free(void)
{
    for (size_t k = 0; k < fk_ctl_nkids; k++) {
        free(fk_ctl_kids[k].owner_uid);
        free(fk_ctl_kids[k].ns);
        free(fk_ctl_kids[k].name);
        json_object_put(fk_ctl_kids[k].obj);
    }
    free(fk_ctl_kids);
}
