/*
 * Action backend for containers on a Docker Engine or Podman API (act.h, docker.h).
 *
 * A container is found by the decision's labels: container_id, else container_name, else
 * container, else name (the exporter's container series carry container_name). The action
 * is `stop` only: SIGTERM, then SIGKILL after --runtime.stop-timeout, done by the daemon.
 * The stop is sent by container id, never by name, so a container re-created under the
 * same name after the notice is not stopped (the engine sees the new id as a conflict).
 * There is no API for notices on a plain container host: the engine's log and audit line
 * are the notice. The container's Created time is its age (a re-created container is not
 * acted on with its predecessor's idle time). With --runtime.scope-label ("key" or "key=value")
 * only containers that carry that label are acted on, so a host's other containers stay out of
 * reach whatever the Prometheus data says; gpureclaim.io/exempt=true exempts a container in scope.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "annot.h"
#include "rfc3339.h"
#include "util.h"

struct act_runtime {
    struct act_backend base; /* first: the engine holds a pointer to it */
    struct docker *docker;
    int stop_timeout;
    char *scope_key;   /* NULL: every container */
    char *scope_value; /* NULL: the key alone is enough */
};

static const char *const act_runtime_id_labels[] = {"container_id", "container_name", "container",
                                                    "name"};

static struct act_runtime *act_runtime_of(struct act_backend *b)
{
    return (struct act_runtime *)b;
}

static void act_runtime_target_free(struct act_backend *b, struct act_target *t)
{
    act_target_clear(t);
}

static enum act_result act_runtime_resolve(struct act_backend *b, const struct decision_rec *d,
                                           struct act_target *t, char *err, size_t errlen)
{
    struct act_runtime *rt = act_runtime_of(b);
    const char *ref = NULL;
    for (size_t i = 0; i < ARRAY_LEN(act_runtime_id_labels) && !ref; i++) {
        ref = act_label(d, act_runtime_id_labels[i]);
        if (ref && !*ref)
            ref = NULL;
    }
    if (!ref) {
        snprintf(err, errlen, "no container_id, container_name, container or name label");
        return ACT_UNSUPPORTED;
    }
    struct docker_container c;
    switch (docker_inspect(rt->docker, ref, &c, err, errlen)) {
    case DOCKER_OK:
        break;
    case DOCKER_GONE:
        return ACT_GONE;
    default:
        return ACT_ERROR;
    }
    memset(t, 0, sizeof(*t));
    struct act_obj *o = &t->chain[t->nchain++];
    o->api_version = xstrdup("");
    o->kind = xstrdup("Container");
    o->ns = xstrdup("");
    o->name = xstrdup(c.name);
    o->uid = xstrdup(c.id);
    if (rt->scope_key) {
        const char *v = docker_label(&c, rt->scope_key);
        t->out_of_scope = !v || (rt->scope_value && strcmp(v, rt->scope_value) != 0);
    }
    const char *ex = docker_label(&c, ANNOT_EXEMPT);
    t->exempt = ex && strcmp(ex, "true") == 0;
    t->running = c.running;
    t->terminating = false;
    /* A container re-created under the same name is younger than the name's series. */
    char perr[128];
    if (!c.created[0] || rfc3339_parse(c.created, &t->created, perr, sizeof(perr)) < 0)
        t->created = NAN;
    docker_container_free(&c);
    return ACT_OK;
}

static enum act_result act_runtime_notice(struct act_backend *b, const struct act_target *t,
                                          const struct act_notice *n, char *err, size_t errlen)
{
    return ACT_OK;
}

static enum act_result act_runtime_withdraw(struct act_backend *b, const struct ledger_entry *e,
                                            const char *why, char *err, size_t errlen)
{
    return ACT_OK;
}

static enum act_result act_runtime_act(struct act_backend *b, const struct act_target *t,
                                       enum rule_action action, long *api_status, char *err,
                                       size_t errlen)
{
    struct act_runtime *rt = act_runtime_of(b);
    if (action != ACTION_STOP) {
        snprintf(err, errlen, "action '%s' does not apply to containers (use 'stop')",
                 rules_action_name(action));
        return ACT_UNSUPPORTED;
    }
    switch (docker_stop(rt->docker, t->chain[0].uid, rt->stop_timeout, err, errlen)) {
    case DOCKER_OK:
        *api_status = 204;
        return ACT_OK;
    case DOCKER_ALREADY:
        *api_status = 304;
        return ACT_GONE;
    case DOCKER_GONE:
        *api_status = 404;
        return ACT_GONE;
    default:
        return ACT_ERROR;
    }
}

/* What became of a container stopped by an action: running again, gone, or still stopped. */
static enum act_back act_runtime_back(struct act_backend *b, const struct ledger_entry *e,
                                      double *when, char *err, size_t errlen)
{
    struct act_runtime *rt = act_runtime_of(b);
    struct docker_container c = {0};
    *when = NAN;
    int r = docker_inspect(rt->docker, e->uid, &c, err, errlen);
    enum act_back res = r == DOCKER_GONE ? ACT_BACK_GONE
                        : r != DOCKER_OK ? ACT_BACK_UNKNOWN
                        : c.running      ? ACT_BACK_RUNNING
                                         : ACT_BACK_STOPPED;
    docker_container_free(&c);
    return res;
}

static void act_runtime_free(struct act_backend *b)
{
    struct act_runtime *rt = act_runtime_of(b);
    docker_free(rt->docker);
    free(rt->scope_key);
    free(rt->scope_value);
    free(rt);
}

struct act_backend *act_runtime_new(const struct docker_cfg *cfg, int stop_timeout,
                                    const char *scope_label)
{
    struct act_runtime *rt = xcalloc(1, sizeof(*rt));
    if (scope_label && *scope_label) {
        const char *eq = strchr(scope_label, '=');
        rt->scope_key =
            eq ? xstrndup(scope_label, (size_t)(eq - scope_label)) : xstrdup(scope_label);
        rt->scope_value = eq ? xstrdup(eq + 1) : NULL;
    }
    rt->base = (struct act_backend){
        .name = "runtime",
        .resolve = act_runtime_resolve,
        .notice = act_runtime_notice,
        .withdraw = act_runtime_withdraw,
        .act = act_runtime_act,
        .target_free = act_runtime_target_free,
        .back = act_runtime_back,
        .free = act_runtime_free,
    };
    rt->docker = docker_new(cfg);
    rt->stop_timeout = stop_timeout < 0 ? 0 : stop_timeout;
    return &rt->base;
}
