/*
 * The permission check of `run` (perm.h): the list of permissions the rules can use, built
 * from the workload-kinds table so that it cannot drift from what the action code does, and
 * one SelfSubjectAccessReview per permission (kube_access_review).
 *
 * The list is pure and deduplicated: a permission needed by several rules or kinds is asked
 * once, and its log line names everyone who needs it. Nothing here decides to act or not: a
 * missing permission is reported, and the action that needs it still fails with its own 403
 * (audited "forbidden", retried) if the operator does not grant it.
 */
#include "perm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annot.h"
#include "enfmetrics.h"
#include "kinds.h"
#include "log.h"
#include "util.h"

#define PERM_KUEUE_GROUP "kueue.x-k8s.io"
#define PERM_WHY_MAX     240 /* characters of the "needed by" list kept per permission */

struct perm {
    struct kube *k;
    struct perm_cfg cfg;
    struct perm_need *needs; /* of the last check */
    size_t n;
    bool checked;
    bool retry; /* a review failed or decided nothing: check again before the next cycle */
    double last_check;
};

/* ---- what the rules can use (pure) ------------------------------------------------------- */

struct needs {
    struct perm_need *v;
    size_t n;
};

static bool perm_eq(const struct perm_need *a, const char *group, const char *resource,
                    const char *sub, const char *verb, const char *ns, const char *name)
{
    return strcmp(a->group, group) == 0 && strcmp(a->resource, resource) == 0 &&
           strcmp(a->subresource, sub) == 0 && strcmp(a->verb, verb) == 0 &&
           strcmp(a->ns, ns) == 0 && strcmp(a->name, name) == 0;
}

/* Add one permission (or, when it is there, who else needs it). NULL strings are "".
   `api_version`: of the kind's row, when `resource` may be unknown. */
static void needs_add_kind(struct needs *v, const char *group, const char *resource,
                           const char *sub, const char *verb, const char *ns, const char *name,
                           const char *kind, const char *api_version, const char *why)
{
    group = group ? group : "";
    resource = resource ? resource : "";
    sub = sub ? sub : "";
    ns = ns ? ns : "";
    name = name ? name : "";
    kind = kind ? kind : "";
    for (size_t i = 0; i < v->n; i++) {
        struct perm_need *x = &v->v[i];
        /* a user row has no resource: its kind tells it apart */
        if (!perm_eq(x, group, resource, sub, verb, ns, name) ||
            (!resource[0] && strcmp(x->kind, kind) != 0))
            continue;
        /* Who needs it: each once, and not without end (a hundred rules on Deployments). */
        if (!strstr(x->why, why) && strlen(x->why) < PERM_WHY_MAX) {
            char *w = xasprintf("%s, %s", x->why, why);
            free(x->why);
            x->why = w;
        }
        return;
    }
    v->v = xrealloc(v->v, (v->n + 1) * sizeof(*v->v));
    v->v[v->n++] = (struct perm_need){.group = xstrdup(group),
                                      .resource = xstrdup(resource),
                                      .subresource = xstrdup(sub),
                                      .verb = xstrdup(verb),
                                      .ns = xstrdup(ns),
                                      .name = xstrdup(name),
                                      .kind = xstrdup(kind),
                                      .api_version = xstrdup(api_version ? api_version : ""),
                                      .why = xstrdup(why),
                                      .verdict = KUBE_ACCESS_UNKNOWN};
}

/* The same, for permissions not tied to a kinds-table row. */
static void needs_add(struct needs *v, const char *group, const char *resource, const char *sub,
                      const char *verb, const char *ns, const char *name, const char *kind,
                      const char *why)
{
    needs_add_kind(v, group, resource, sub, verb, ns, name, kind, NULL, why);
}

/* "apps/v1", "v1" of a row (a static buffer, used at once by the caller). */
static const char *perm_api_version(const struct kind_def *d)
{
    static char buf[300];
    snprintf(buf, sizeof(buf), "%s%s%s", d->group, d->group[0] ? "/" : "", d->version);
    return buf;
}

static void needs_add_perms(struct needs *v, const struct kind_def *d, const struct kind_perm *p,
                            size_t np, const char *ns, const char *why)
{
    for (size_t i = 0; i < np; i++)
        /* another resource's (a command way's command objects): named by its resource only */
        if (p[i].resource)
            needs_add(v, p[i].group, p[i].resource, p[i].subresource, p[i].verb, ns, NULL, NULL,
                      why);
        else
            needs_add_kind(v, d->group, d->resource, p[i].subresource, p[i].verb, ns, NULL, d->kind,
                           perm_api_version(d), why);
}

static bool perm_kube_action(enum rule_action a)
{
    return a == ACTION_SCALE_TO_ZERO || a == ACTION_SUSPEND || a == ACTION_EVICT ||
           a == ACTION_DELETE;
}

/* The permissions of one rule in namespace `ns` ("" every namespace). */
static void needs_rule(struct needs *v, const struct rule *r, const struct kinds *t,
                       const struct perm_cfg *cfg, const char *ns)
{
    const char *an = rules_action_name(r->action);
    char *why = xasprintf("rule '%s' (%s)", r->name, an);
    bool patches = false;
    struct kind_perm p[8];
    for (size_t i = 0; i < kinds_count(t); i++) {
        const struct kind_def *d = kinds_at(t, i);
        /* The owner walk reads every kind it climbs through, whatever the action. */
        size_t np = kinds_walk_perms(d, p, ARRAY_LEN(p));
        needs_add_perms(v, d, p, np < ARRAY_LEN(p) ? np : ARRAY_LEN(p), ns, why);
        const struct kind_way *w = &d->ways[r->action];
        np = kinds_perms(w, p, ARRAY_LEN(p));
        needs_add_perms(v, d, p, np < ARRAY_LEN(p) ? np : ARRAY_LEN(p), ns, why);
        patches |= w->method == KIND_PATCH;
        /* An eviction's notice and its record go on the root owner, any kind the walk
           reaches: it patches that kind even where the kind itself is never evicted. */
        if (r->action == ACTION_EVICT && kinds_walk_perms(d, p, ARRAY_LEN(p)) > 0)
            needs_add_kind(v, d->group, d->resource, NULL, "patch", ns, NULL, d->kind,
                           perm_api_version(d), why);
    }
    /* Kueue owns spec.suspend of what it admits: such a suspend deactivates the Workload,
       found by its label (kube_suspend). */
    if (r->action == ACTION_SUSPEND && patches) {
        needs_add(v, PERM_KUEUE_GROUP, "workloads", NULL, "list", ns, NULL, "Workload", why);
        needs_add(v, PERM_KUEUE_GROUP, "workloads", NULL, "patch", ns, NULL, "Workload", why);
    }
    needs_add(v, "", "events", NULL, "create", ns, NULL, "Event", why);
    free(why);
    if (cfg->confirm_pressure && r->policy == POLICY_DURING_PRESSURE) {
        /* Pending demand anywhere counts, so both lists span every namespace. */
        const char *pw = "--kube.confirm-pressure";
        needs_add(v, "", "pods", NULL, "list", "", NULL, "Pod", pw);
        needs_add(v, PERM_KUEUE_GROUP, "workloads", NULL, "list", "", NULL, "Workload", pw);
    }
}

/* Is `ns` in the comma list `list`? */
static bool perm_listed(const char *list, const char *ns)
{
    size_t n = strlen(ns);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, ns, n) == 0)
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

size_t perm_needs(const struct ruleset *rs, const struct perm_cfg *cfg, struct perm_need **out)
{
    struct needs v = {0};
    const struct kinds *t = rs->kinds ? rs->kinds : kinds_builtin();
    for (size_t i = 0; i < rs->n; i++) {
        const struct rule *r = &rs->rules[i];
        if (!r->enabled || !perm_kube_action(r->action))
            continue;
        if (r->nnamespaces == 0)
            needs_rule(&v, r, t, cfg, "");
        const char *prot =
            cfg->protected_namespaces ? cfg->protected_namespaces : ANNOT_PROTECTED_DEFAULT;
        for (size_t j = 0; j < r->nnamespaces; j++)
            if (!perm_listed(prot, r->namespaces[j]))
                needs_rule(&v, r, t, cfg, r->namespaces[j]);
    }
    if (cfg->lease_ns && *cfg->lease_ns) {
        /* lease.c reads and renews the Lease by name and creates it when absent; a create
           cannot be limited to a name in RBAC, so it is asked without one. */
        const char *lw = "--leader-elect";
        const char *name = cfg->lease_name ? cfg->lease_name : "";
        needs_add(&v, "coordination.k8s.io", "leases", NULL, "get", cfg->lease_ns, name, "Lease",
                  lw);
        needs_add(&v, "coordination.k8s.io", "leases", NULL, "update", cfg->lease_ns, name, "Lease",
                  lw);
        needs_add(&v, "coordination.k8s.io", "leases", NULL, "create", cfg->lease_ns, NULL, "Lease",
                  lw);
    }
    *out = v.v;
    return v.n;
}

void perm_needs_free(struct perm_need *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].group);
        free(v[i].resource);
        free(v[i].subresource);
        free(v[i].verb);
        free(v[i].ns);
        free(v[i].name);
        free(v[i].kind);
        free(v[i].api_version);
        free(v[i].why);
    }
    free(v);
}

char *perm_describe(const struct perm_need *n)
{
    struct sbuf b = {0};
    sbuf_printf(&b, "%s '%s%s%s%s%s", n->verb, n->resource[0] ? n->resource : n->kind,
                n->group[0] ? "." : "", n->group, n->subresource[0] ? "/" : "", n->subresource);
    if (n->name[0])
        sbuf_printf(&b, " %s", n->name);
    sbuf_putc(&b, '\'');
    if (n->ns[0])
        sbuf_printf(&b, " in namespace '%s'", n->ns);
    else
        sbuf_puts(&b, " in every namespace");
    return sbuf_take(&b);
}

/* ---- the check ---------------------------------------------------------------------------- */

struct perm *perm_new(struct kube *k, const struct perm_cfg *cfg)
{
    struct perm *p = xcalloc(1, sizeof(*p));
    p->k = k;
    p->cfg.confirm_pressure = cfg->confirm_pressure;
    p->cfg.protected_namespaces =
        cfg->protected_namespaces ? xstrdup(cfg->protected_namespaces) : NULL;
    p->cfg.lease_ns = cfg->lease_ns ? xstrdup(cfg->lease_ns) : NULL;
    p->cfg.lease_name = cfg->lease_name ? xstrdup(cfg->lease_name) : NULL;
    return p;
}

void perm_free(struct perm *p)
{
    if (!p)
        return;
    kube_free(p->k);
    perm_needs_free(p->needs, p->n);
    free((char *)p->cfg.lease_ns);
    free((char *)p->cfg.protected_namespaces);
    free((char *)p->cfg.lease_name);
    free(p);
}

void perm_check(struct perm *p, const struct ruleset *rs, double now)
{
    if (!p)
        return;
    perm_needs_free(p->needs, p->n);
    p->n = perm_needs(rs, &p->cfg, &p->needs);
    p->checked = true;
    p->retry = false;
    p->last_check = now;
    size_t missing = 0, unknown = 0, unasked = 0;
    char failed[512] = "";
    for (size_t i = 0; i < p->n; i++) {
        struct perm_need *n = &p->needs[i];
        n->verdict = KUBE_ACCESS_UNKNOWN;
        if (failed[0]) {
            unasked++;
            continue;
        }
        char *what = perm_describe(n);
        if (!n->resource[0]) {
            /* A user row names a kind, not its resource; RBAC needs the resource, which
               only discovery tells (plurals are never guessed). */
            struct kube_resource res = {0};
            char derr[512] = "";
            enum kube_result dr =
                kube_resource_of(p->k, n->api_version, n->kind, &res, derr, sizeof(derr));
            if (dr != KUBE_OK) {
                log_warn("cannot check permission %s: %s; needed by %s", what, derr, n->why);
                unknown++;
                /* not served: so it stays until the rules change; anything else: again */
                p->retry |= dr != KUBE_UNSUPPORTED;
                free(what);
                continue;
            }
            free(n->resource);
            n->resource = xstrdup(res.plural);
            kube_resource_free(&res);
            free(what);
            what = perm_describe(n);
        }
        struct kube_access a = {n->ns,
                                n->verb,
                                n->group,
                                n->resource,
                                n->subresource[0] ? n->subresource : NULL,
                                n->name[0] ? n->name : NULL};
        char reason[256], err[512] = "";
        enum kube_result r =
            kube_access_review(p->k, &a, &n->verdict, reason, sizeof(reason), err, sizeof(err));
        if (r != KUBE_OK) {
            n->verdict = KUBE_ACCESS_UNKNOWN;
            snprintf(failed, sizeof(failed), "%s", err);
            unasked++;
        } else if (n->verdict == KUBE_ACCESS_DENIED) {
            missing++;
            log_warn("permission missing: cannot %s%s%s; needed by %s", what, reason[0] ? ": " : "",
                     reason, n->why);
        } else if (n->verdict == KUBE_ACCESS_UNKNOWN) {
            unknown++;
            p->retry = true;
            log_warn("permission unknown: the API could not decide %s: %s; needed by %s", what,
                     reason, n->why);
        }
        free(what);
    }
    if (unasked)
        log_error("cannot check permissions with SelfSubjectAccessReview: %s; %zu of %zu "
                  "permissions unknown (not assumed granted), checking again before the next cycle",
                  failed, unasked, p->n);
    unknown += unasked;
    p->retry |= unasked > 0;
    if (missing || unknown)
        log_info("permission check: %zu of %zu permissions granted, %zu missing, %zu unknown",
                 p->n - missing - unknown, p->n, missing, unknown);
    else
        log_info("permission check: all %zu permissions the rules can use are granted", p->n);
}

bool perm_incomplete(const struct perm *p)
{
    return p && p->checked && p->retry;
}

void perm_metrics(const struct perm *p, struct expo *e)
{
    if (!p || !p->checked)
        return;
    double granted = 0, missing = 0, unknown = 0;
    for (size_t i = 0; i < p->n; i++) {
        const struct perm_need *n = &p->needs[i];
        const struct expo_family *f;
        if (n->verdict == KUBE_ACCESS_ALLOWED) {
            granted++;
            continue;
        }
        if (n->verdict == KUBE_ACCESS_DENIED) {
            missing++;
            f = EMX(PERMISSION_MISSING);
        } else {
            unknown++;
            f = EMX(PERMISSION_UNKNOWN);
        }
        /* A kind's resource unknown (a user row): the kind names it instead. */
        expo_put(e, f, 1.0, "group", n->group, "resource", n->resource[0] ? n->resource : n->kind,
                 "subresource", n->subresource, "verb", n->verb, "namespace", n->ns,
                 (const char *)NULL);
    }
    expo_put(e, EMX(PERMISSION_CHECKS), granted, "result", "granted", (const char *)NULL);
    expo_put(e, EMX(PERMISSION_CHECKS), missing, "result", "missing", (const char *)NULL);
    expo_put(e, EMX(PERMISSION_CHECKS), unknown, "result", "unknown", (const char *)NULL);
    expo_put(e, EMX(PERMISSION_LAST_CHECK_TIMESTAMP_SECONDS), p->last_check, (const char *)NULL);
}
