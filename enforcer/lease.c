/*
 * Leader election on a coordination.k8s.io/v1 Lease (see lease.h for the contract).
 *
 * The algorithm is client-go's (k8s.io/client-go/tools/leaderelection, tryAcquireOrRenew):
 * GET the Lease; create it when it does not exist; otherwise, when another holder renewed it
 * less than its leaseDurationSeconds ago *as measured by our own clock since we saw the
 * record change* (clocks of replicas are never compared), wait; else write ourselves in with
 * the resourceVersion we read. Leadership is kept only while renewals succeed: the time a
 * successful renewal was *sent* plus the renew deadline bounds it, so a leader cut off from
 * the API server stops acting before the lease it last wrote expires for the others.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "enfmetrics.h"
#include "jsonparse.h"
#include "lease.h"
#include "log.h"
#include "rfc3339.h"
#include "util.h"

/* ---- pure part ------------------------------------------------------------------------------ */

static bool lease_record_equal(const struct lease_record *a, const struct lease_record *b)
{
    /* NaN != NaN, so compare "absent" explicitly. */
    bool acq =
        (isnan(a->acquire_time) && isnan(b->acquire_time)) || a->acquire_time == b->acquire_time;
    bool ren = (isnan(a->renew_time) && isnan(b->renew_time)) || a->renew_time == b->renew_time;
    return acq && ren && strcmp(a->holder, b->holder) == 0 && a->duration == b->duration &&
           a->transitions == b->transitions &&
           strcmp(a->resource_version, b->resource_version) == 0;
}

enum lease_op lease_next(const struct lease_cfg *cfg, struct lease_state *st, bool found,
                         const struct lease_record *cur, double wall, double mono,
                         struct lease_record *next)
{
    memset(next, 0, sizeof(*next));
    str_copy(next->holder, sizeof(next->holder), cfg->identity);
    next->duration = cfg->lease_duration;
    next->renew_time = wall;
    if (!found) {
        next->acquire_time = wall;
        return LEASE_OP_CREATE;
    }
    if (!st->have_observed || !lease_record_equal(&st->observed, cur)) {
        st->observed = *cur;
        st->have_observed = true;
        st->observed_mono = mono;
    }
    bool mine = strcmp(cur->holder, cfg->identity) == 0;
    /*
     * The holder's own duration decides, as in client-go: a released Lease says 1 s. A
     * missing or nonsensical duration falls back to ours rather than to 0, which would let
     * anyone take a live lease.
     */
    double dur = cur->duration > 0 ? cur->duration : cfg->lease_duration;
    if (cur->holder[0] && !mine && st->observed_mono + dur > mono)
        return LEASE_OP_NONE;
    str_copy(next->resource_version, sizeof(next->resource_version), cur->resource_version);
    if (mine && !isnan(cur->acquire_time)) {
        next->acquire_time = cur->acquire_time;
        next->transitions = cur->transitions;
    } else {
        next->acquire_time = wall;
        next->transitions = mine ? cur->transitions : cur->transitions + 1;
    }
    return LEASE_OP_UPDATE;
}

static int lease_time(json_object *spec, const char *key, double *out, char *err, size_t errlen)
{
    json_object *v;
    *out = NAN;
    if (!json_object_object_get_ex(spec, key, &v) || json_object_is_type(v, json_type_null))
        return 0;
    char terr[128];
    if (!json_object_is_type(v, json_type_string) ||
        rfc3339_parse(json_object_get_string(v), out, terr, sizeof(terr)) < 0) {
        snprintf(err, errlen, "lease spec.%s is not a time", key);
        return -1;
    }
    return 0;
}

int lease_parse(const char *body, size_t len, struct lease_record *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    out->acquire_time = out->renew_time = NAN;
    char why[160];
    json_object *root =
        jsonparse_strict(body, len, JSON_TOKENER_DEFAULT_DEPTH, "lease", why, sizeof(why));
    json_object *meta, *spec, *v;
    int rc = -1;
    if (!root || !json_object_is_type(root, json_type_object)) {
        snprintf(err, errlen, "lease is not a JSON object%s%s", root ? "" : ": ", root ? "" : why);
        goto out;
    }
    if (!json_object_object_get_ex(root, "metadata", &meta) ||
        !json_object_object_get_ex(meta, "resourceVersion", &v) ||
        !json_object_is_type(v, json_type_string) || !json_object_get_string_len(v)) {
        snprintf(err, errlen, "lease has no metadata.resourceVersion");
        goto out;
    }
    str_copy(out->resource_version, sizeof(out->resource_version), json_object_get_string(v));
    /* A Lease without a spec is legal (created by someone else): nobody holds it. */
    if (!json_object_object_get_ex(root, "spec", &spec) ||
        json_object_is_type(spec, json_type_null)) {
        rc = 0;
        goto out;
    }
    if (!json_object_is_type(spec, json_type_object)) {
        snprintf(err, errlen, "lease spec is not an object");
        goto out;
    }
    if (json_object_object_get_ex(spec, "holderIdentity", &v) &&
        json_object_is_type(v, json_type_string))
        str_copy(out->holder, sizeof(out->holder), json_object_get_string(v));
    if (json_object_object_get_ex(spec, "leaseDurationSeconds", &v) &&
        json_object_is_type(v, json_type_int))
        out->duration = (double)json_object_get_int64(v);
    if (json_object_object_get_ex(spec, "leaseTransitions", &v) &&
        json_object_is_type(v, json_type_int))
        out->transitions = (long)json_object_get_int64(v);
    if (lease_time(spec, "acquireTime", &out->acquire_time, err, errlen) < 0 ||
        lease_time(spec, "renewTime", &out->renew_time, err, errlen) < 0)
        goto out;
    rc = 0;
out:
    json_object_put(root);
    return rc;
}

/* metav1.MicroTime: RFC 3339 with microseconds, UTC; an unknown time is left out. */
static json_object *lease_micro_time(double t)
{
    if (!isfinite(t))
        return NULL;
    char buf[RFC3339_LEN];
    return json_object_new_string(rfc3339_format(buf, sizeof(buf), t, RFC3339_MICRO));
}

char *lease_json(const struct lease_cfg *cfg, const struct lease_record *r)
{
    json_object *o = json_object_new_object(), *meta = json_object_new_object(),
                *spec = json_object_new_object();
    json_object_object_add(o, "apiVersion", json_object_new_string("coordination.k8s.io/v1"));
    json_object_object_add(o, "kind", json_object_new_string("Lease"));
    json_object_object_add(meta, "name", json_object_new_string(cfg->name));
    json_object_object_add(meta, "namespace", json_object_new_string(cfg->ns));
    if (r->resource_version[0])
        json_object_object_add(meta, "resourceVersion",
                               json_object_new_string(r->resource_version));
    json_object_object_add(o, "metadata", meta);
    json_object_object_add(spec, "holderIdentity", json_object_new_string(r->holder));
    json_object_object_add(spec, "leaseDurationSeconds",
                           json_object_new_int64((int64_t)llround(r->duration)));
    json_object *t;
    if ((t = lease_micro_time(r->acquire_time)))
        json_object_object_add(spec, "acquireTime", t);
    if ((t = lease_micro_time(r->renew_time)))
        json_object_object_add(spec, "renewTime", t);
    json_object_object_add(spec, "leaseTransitions", json_object_new_int64(r->transitions));
    json_object_object_add(o, "spec", spec);
    char *s = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return s;
}

/* ---- the election thread -------------------------------------------------------------------- */

struct lease {
    struct lease_cfg cfg; /* strings owned */
    struct kube *k;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    /* under mu */
    bool leader;
    double renewed_mono; /* when the last successful write was sent */
    unsigned long long became_leader, lost_leader, errors;
    struct lease_state st; /* thread only */
    unsigned seed;         /* of the standby's jitter (rand_r: other threads may use rand) */
};

static char *lease_path(const struct lease *l, bool collection)
{
    if (collection)
        return xasprintf("/apis/coordination.k8s.io/v1/namespaces/%s/leases", l->cfg.ns);
    return xasprintf("/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->cfg.ns,
                     l->cfg.name);
}

/*
 * One attempt: 1 when we hold the Lease after it, 0 when another replica does, -1 when the
 * API could not be asked or refused (409: another replica won the race).
 */
static int lease_attempt(struct lease *l, double wall, double mono)
{
    char err[512], *body = NULL;
    size_t len;
    long status;
    char *path = lease_path(l, false);
    char *what = xasprintf("get lease '%s/%s'", l->cfg.ns, l->cfg.name);
    enum kube_result r =
        kube_request(l->k, "GET", path, NULL, what, &status, &body, &len, err, sizeof(err));
    free(what);
    struct lease_record cur, next;
    int rc = -1;
    /* A standby's expiry clock starts when it saw the record, i.e. after the answer: counted
       from before the GET, a slow answer would shorten the wait for the leader's expiry. */
    mono = mono_now();
    if (r != KUBE_OK && r != KUBE_NOT_FOUND) {
        log_debug("leader election: %s", err);
        goto out;
    }
    if (r == KUBE_OK && lease_parse(body, len, &cur, err, sizeof(err)) < 0) {
        log_warn("leader election: lease '%s/%s': %s", l->cfg.ns, l->cfg.name, err);
        goto out;
    }
    enum lease_op op = lease_next(&l->cfg, &l->st, r == KUBE_OK, &cur, wall, mono, &next);
    if (op == LEASE_OP_NONE) {
        rc = 0;
        goto out;
    }
    char *json = lease_json(&l->cfg, &next);
    free(body);
    body = NULL;
    if (op == LEASE_OP_CREATE) {
        free(path);
        path = lease_path(l, true);
    }
    what = xasprintf("%s lease '%s/%s'", op == LEASE_OP_CREATE ? "create" : "update", l->cfg.ns,
                     l->cfg.name);
    r = kube_request(l->k, op == LEASE_OP_CREATE ? "POST" : "PUT", path, json, what, &status, &body,
                     &len, err, sizeof(err));
    free(what);
    free(json);
    if (r != KUBE_OK) {
        /* 409 is the normal outcome of a race with another replica: not worth a warning. */
        if (r == KUBE_CONFLICT)
            log_debug("leader election: %s", err);
        else
            log_warn("leader election: %s", err);
        goto out;
    }
    struct lease_record written;
    if (lease_parse(body, len, &written, err, sizeof(err)) == 0) {
        l->st.observed = written;
        l->st.have_observed = true;
        l->st.observed_mono = mono;
    }
    rc = 1;
out:
    free(body);
    free(path);
    return rc;
}

/* Give the Lease up on shutdown so a standby need not wait for it to expire. */
static void lease_release(struct lease *l)
{
    struct lease_record rel = l->st.observed;
    rel.holder[0] = '\0';
    rel.duration = 1;
    rel.renew_time = rel.acquire_time = wall_now();
    char *json = lease_json(&l->cfg, &rel), *path = lease_path(l, false), *body = NULL, err[512];
    size_t len;
    long status;
    if (kube_request(l->k, "PUT", path, json, "release lease", &status, &body, &len, err,
                     sizeof(err)) == KUBE_OK)
        log_info("leader election: released lease '%s/%s'", l->cfg.ns, l->cfg.name);
    else
        log_warn("leader election: cannot release lease: %s", err);
    free(body);
    free(path);
    free(json);
}

static void *lease_run(void *arg)
{
    struct lease *l = arg;
    pthread_mutex_lock(&l->mu);
    while (!l->stop) {
        pthread_mutex_unlock(&l->mu);
        double mono = mono_now();
        int got = lease_attempt(l, wall_now(), mono);
        pthread_mutex_lock(&l->mu);
        if (got == 1) {
            if (!l->leader) {
                l->became_leader++;
                log_info("leader election: '%s' is now the leader (lease '%s/%s')", l->cfg.identity,
                         l->cfg.ns, l->cfg.name);
            }
            l->leader = true;
            l->renewed_mono = mono;
        } else {
            if (got < 0)
                l->errors++;
            /* Another holder in the Lease, or no renewal within the deadline: step down. */
            if (l->leader && (got == 0 || mono_now() >= l->renewed_mono + l->cfg.renew_deadline)) {
                l->leader = false;
                l->lost_leader++;
                log_warn("leader election: '%s' lost the lease: no longer acting", l->cfg.identity);
            }
        }
        /* Standbys spread their attempts (client-go's JitterFactor 1.2). */
        double wait = l->cfg.retry_period;
        if (!l->leader)
            wait *= 1.0 + 1.2 * ((double)rand_r(&l->seed) / RAND_MAX);
        struct timespec ts = mono_timespec(mono_now() + wait);
        while (!l->stop && pthread_cond_timedwait(&l->cv, &l->mu, &ts) != ETIMEDOUT)
            ;
    }
    bool was_leader = l->leader;
    l->leader = false;
    pthread_mutex_unlock(&l->mu);
    if (was_leader)
        lease_release(l);
    return NULL;
}

struct lease *lease_start(const struct lease_cfg *cfg, struct kube *k, char *err, size_t errlen)
{
    if (!cfg->ns || !*cfg->ns || !cfg->name || !*cfg->name || !cfg->identity || !*cfg->identity) {
        snprintf(err, errlen, "leader election needs a lease namespace, name and identity");
        return NULL;
    }
    /* client-go refuses the same: otherwise a leader could outlive its lease. */
    if (!(cfg->lease_duration > cfg->renew_deadline) ||
        !(cfg->renew_deadline > cfg->retry_period) || !(cfg->retry_period > 0)) {
        snprintf(err, errlen,
                 "leader election needs lease-duration > renew-deadline > retry-period > 0");
        return NULL;
    }
    /* Renewed every retry period, a leader must keep some time to start calls in. */
    if (!(cfg->lease_duration - cfg->call_timeout > cfg->retry_period)) {
        snprintf(err, errlen,
                 "leader election needs lease-duration > kube.timeout + retry-period: a call "
                 "must end before another replica can take the lease over");
        return NULL;
    }
    struct lease *l = xcalloc(1, sizeof(*l));
    l->cfg = *cfg;
    l->cfg.ns = xstrdup(cfg->ns);
    l->cfg.name = xstrdup(cfg->name);
    l->cfg.identity = xstrdup(cfg->identity);
    l->k = k;
    pthread_mutex_init(&l->mu, NULL);
    mono_cond_init(&l->cv);
    l->seed = (unsigned)(fnv1a64(cfg->identity, strlen(cfg->identity)) ^ (uint64_t)time(NULL));
    if (pthread_create(&l->thread, NULL, lease_run, l) != 0) {
        snprintf(err, errlen, "cannot start the leader election thread");
        free((char *)l->cfg.ns);
        free((char *)l->cfg.name);
        free((char *)l->cfg.identity);
        free(l);
        return NULL;
    }
    return l;
}

void lease_stop(struct lease *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->thread, NULL);
    kube_free(l->k);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free((char *)l->cfg.ns);
    free((char *)l->cfg.name);
    free((char *)l->cfg.identity);
    free(l);
}

bool lease_is_leader(struct lease *l)
{
    if (!l)
        return true; /* no election configured: the single replica acts */
    /*
     * Leader until the renew deadline, and only while a call started now ends (call_timeout)
     * before the earliest moment another replica can take over: a lease duration after our
     * last renewal was sent (they count from when they saw it, which is later).
     */
    double until = fmin(l->cfg.renew_deadline, l->cfg.lease_duration - l->cfg.call_timeout);
    pthread_mutex_lock(&l->mu);
    bool r = l->leader && mono_now() < l->renewed_mono + until;
    pthread_mutex_unlock(&l->mu);
    return r;
}

bool lease_gate(void *lease)
{
    return lease_is_leader(lease);
}

void lease_metrics(struct lease *l, struct expo *e)
{
    bool leader = lease_is_leader(l);
    expo_put(e, EMX(LEADER), leader ? 1 : 0, NULL);
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    unsigned long long became = l->became_leader, lost = l->lost_leader, errs = l->errors;
    pthread_mutex_unlock(&l->mu);
    expo_put(e, EMX(LEADER_CHANGES_TOTAL), (double)became, "change", "acquired", NULL);
    expo_put(e, EMX(LEADER_CHANGES_TOTAL), (double)lost, "change", "lost", NULL);
    expo_put(e, EMX(LEADER_ELECTION_ERRORS_TOTAL), (double)errs, NULL);
}
