/*
 * The action engine (act.h): notice -> wait -> re-check -> act, exactly once, with the
 * safety limits and the audit trail. The backends (act_kube.c, act_runtime.c) only talk to
 * their API; whether to call them is decided by the lifecycle (lifecycle.h, a pure function
 * of the entry's state, the decision and the facts), and this file is its driver: it learns
 * the facts, steps the lifecycle, and performs the effects in order, writing the ledger
 * ahead of every action (docs/action-lifecycle.md). So both kinds of target get the same
 * guarantees and the tests can drive the engine with a fake backend.
 *
 * Metrics (act_metrics):
 *   gpureclaim_enforcer_actions_total{rule,action,result}  mutating calls and their outcome
 *   gpureclaim_enforcer_notices_total{rule}                notices posted
 *   gpureclaim_enforcer_spared_total{rule}                 notices withdrawn (active again)
 *   gpureclaim_enforcer_skipped_total{rule,reason}         candidates left alone, and why
 *   gpureclaim_enforcer_freed_gpu_seconds_total{rule,namespace}  GPU time actions freed
 *   gpureclaim_enforcer_reclaimed_gpus{rule,namespace}     devices held by objects still stopped
 *   gpureclaim_enforcer_returns_total{rule,namespace,within}  reclaimed workloads seen running
 *                                                          again, by how soon (act_freed)
 *   gpureclaim_enforcer_pending_notices                    notices waiting for their time
 *   gpureclaim_enforcer_actions_last_hour                  what the hourly cap counts
 *   gpureclaim_enforcer_state_save_failures_total          ledger writes that failed
 *   gpureclaim_enforcer_audit_write_failures_total         audit lines that were lost
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "annot.h"
#include "audit.h"
#include "dur.h"
#include "enfmetrics.h"
#include "keep.h"
#include "lifecycle.h"
#include "log.h"
#include "rfc3339.h"
#include "notice.h"
#include "notify.h"
#include "util.h"

struct act_count {
    char *rule, *a, *b; /* actions: action, result; skipped: reason; others: NULL */
    double n;
};

struct act_counts {
    struct act_count *v;
    size_t n;
};

struct act_rule_cycle {
    const struct rule *rule;
    unsigned acted;
};

/* The skips audited for one (rule, workload) (act.skip_index). */
struct act_skips {
    char *key; /* "rule\037workload" */
    char **reasons;
    size_t n;
};

/* The protected namespaces (act_nsset_init). */
struct act_nsset {
    char *buf;
    struct strset set; /* entry -> itself */
};

struct act {
    struct act_nsset protected_ns;
    unsigned max_per_hour;
    double pending_ttl, done_ttl;
    struct ledger ledger;
    struct audit *audit;
    struct act_backend *kube, *runtime;
    act_confirm_fn kube_confirm;
    act_reprove_fn reprove; /* the full-window proof of an incremental decision (issue 26) */
    void *reprove_arg;
    const struct decision_rec *reproved; /* the candidate whose re-proof confirmed it */
    const volatile sig_atomic_t *stop;
    bool (*gate)(void *arg); /* act_set_gate: false = not the leader, start nothing */
    void *gate_arg;
    struct notify *notify; /* webhook notices (rules' notify:), or NULL */

    struct act_counts actions, notices, spared, skipped;
    struct act_counts freed, returns; /* freed: a = namespace; returns: a = ns, b = within */
    bool resync; /* GPU time is not counted over a time this process was not the one acting
                    (before its first cycle, as a standby, while stopping): act_freed */
    unsigned long save_failures;
    bool dirty; /* the ledger changed since it was last written */
    double last_now;

    /* Skips audited once per (rule, workload, reason) for the life of the process, so that
       a protected or exempt workload idle for days does not write a line every cycle: per
       "rule\037workload" (skip_index), the reasons already audited. Found by key, not by a
       scan: with a cap reached every reclaim decision of a cycle is a skip. */
    struct act_skips *skips;
    size_t nskips;
    struct strset skip_index;
    struct sbuf skip_key; /* scratch: the key being looked up (act_skips_of) */

    /* per cycle */
    struct act_rule_cycle *cycle;
    size_t ncycle;
};

static const char *const act_result_names[] = {
    [ACT_OK] = "ok",       [ACT_GONE] = "gone",           [ACT_CONFLICT] = "conflict",
    [ACT_RETRY] = "retry", [ACT_FORBIDDEN] = "forbidden", [ACT_UNSUPPORTED] = "unsupported",
    [ACT_ERROR] = "error", [ACT_CANCELLED] = "cancelled",
};

const char *act_result_name(enum act_result r)
{
    if ((int)r < 0 || (size_t)r >= ARRAY_LEN(act_result_names))
        return "error";
    return act_result_names[r];
}

const char *act_label(const struct decision_rec *d, const char *name)
{
    const char *v = labels_get(&d->identity, name);
    return v ? v : labels_get(&d->all, name);
}

void act_target_clear(struct act_target *t)
{
    for (size_t i = 0; i < t->nchain; i++) {
        struct act_obj *o = &t->chain[i];
        free(o->api_version);
        free(o->kind);
        free(o->ns);
        free(o->name);
        free(o->uid);
        free(o->keep_until);
    }
    free(t->notice);
    free(t->restore_hint);
    free(t->how);
    memset(t, 0, sizeof(*t));
}

/* The next entry of a comma-separated list at *p, spaces trimmed: its start and length in
 *n, or NULL at the end; *p moves past it. */
static const char *act_ns_next(const char **p, size_t *n)
{
    if (!*p)
        return NULL;
    const char *s = *p, *end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    *p = end ? end + 1 : NULL;
    while (len && *s == ' ') {
        s++;
        len--;
    }
    while (len && s[len - 1] == ' ')
        len--;
    *n = len;
    return s;
}

bool act_ns_in_list(const char *list, const char *ns)
{
    if (!list || !ns || !*ns)
        return false;
    size_t len = strlen(ns), n;
    for (const char *p = list, *e; (e = act_ns_next(&p, &n));)
        if (n == len && strncmp(e, ns, len) == 0)
            return true;
    return false;
}

/*
 * The protected namespaces as a set, parsed once: the list was searched for the namespace
 * of every candidate and of each object of its chain, at every cycle (a capped backtest's
 * held-back candidates spent 4 % of it in strstr). Entries are cut out of `ps->buf` in place
 * (a NUL after each); the same entries act_ns_in_list reads.
 */
static void act_nsset_init(struct act_nsset *ps, const char *list)
{
    *ps = (struct act_nsset){.buf = xstrdup(list ? list : "")};
    size_t n;
    char *e;
    for (const char *p = ps->buf; (e = (char *)act_ns_next(&p, &n));) {
        if (!n)
            continue;
        e[n] = '\0';
        strset_put(&ps->set, e, n, e);
    }
}

static void act_nsset_free(struct act_nsset *ps)
{
    strset_free(&ps->set);
    free(ps->buf);
}

static bool act_nsset_has(const struct act_nsset *ps, const char *ns)
{
    return ns && *ns && ps->set.n && strset_get(&ps->set, ns, strlen(ns));
}

static void act_count_addv(struct act_counts *c, const char *rule, const char *a, const char *b,
                           double v)
{
    for (size_t i = 0; i < c->n; i++) {
        struct act_count *x = &c->v[i];
        if (strcmp(x->rule, rule) == 0 && (!a || strcmp(x->a, a) == 0) &&
            (!b || strcmp(x->b, b) == 0)) {
            x->n += v;
            return;
        }
    }
    c->v = xrealloc(c->v, (c->n + 1) * sizeof(*c->v));
    c->v[c->n++] =
        (struct act_count){xstrdup(rule), a ? xstrdup(a) : NULL, b ? xstrdup(b) : NULL, v};
}

static void act_count_add(struct act_counts *c, const char *rule, const char *a, const char *b)
{
    act_count_addv(c, rule, a, b, 1);
}

static void act_counts_free(struct act_counts *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].rule);
        free(c->v[i].a);
        free(c->v[i].b);
    }
    free(c->v);
}

struct act *act_new(const struct act_cfg *cfg, char *err, size_t errlen)
{
    struct act *a = xcalloc(1, sizeof(*a));
    act_nsset_init(&a->protected_ns,
                   cfg->protected_namespaces ? cfg->protected_namespaces : ANNOT_PROTECTED_DEFAULT);
    a->max_per_hour = cfg->max_actions_per_hour;
    a->pending_ttl = cfg->pending_ttl > 0 ? cfg->pending_ttl : ACT_PENDING_TTL;
    a->done_ttl = cfg->done_ttl > 0 ? cfg->done_ttl : ACT_DONE_TTL;
    a->last_now = NAN;
    a->resync = true;
    if (ledger_load(&a->ledger, cfg->state_file, err, errlen) < 0)
        goto fail;
    /* Prove now that the state can be written: finding out at the first action would mean
       acting without a record of it. */
    char why[512];
    if (ledger_save(&a->ledger, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "state file '%s' is not writable: %s", cfg->state_file, why);
        goto fail;
    }
    a->audit = audit_open(cfg->audit_file, err, errlen);
    if (!a->audit)
        goto fail;
    return a;
fail:
    act_free(a);
    return NULL;
}

void act_set_kube(struct act *a, struct act_backend *b)
{
    if (a->kube)
        a->kube->free(a->kube);
    a->kube = b;
}

void act_set_runtime(struct act *a, struct act_backend *b)
{
    if (a->runtime)
        a->runtime->free(a->runtime);
    a->runtime = b;
}

void act_set_kinds(struct act *a, const struct kinds *t)
{
    if (a->kube && a->kube->set_kinds)
        a->kube->set_kinds(a->kube, t);
}

void act_set_kube_confirm(struct act *a, act_confirm_fn fn)
{
    a->kube_confirm = fn;
}

void act_set_reprove(struct act *a, act_reprove_fn fn, void *arg)
{
    a->reprove = fn;
    a->reprove_arg = arg;
}

void act_set_stop(struct act *a, const volatile sig_atomic_t *flag)
{
    a->stop = flag;
}

void act_set_gate(struct act *a, bool (*fn)(void *arg), void *arg)
{
    a->gate = fn;
    a->gate_arg = arg;
}

/* Told to stop, or no longer the leader: start no API call (see act.h). */
static bool act_stopping(const struct act *a)
{
    return (a->stop && *a->stop) || (a->gate && !a->gate(a->gate_arg));
}

void act_set_notify(struct act *a, struct notify *n)
{
    notify_free(a->notify);
    a->notify = n;
}

static void act_flush(struct act *a);

void act_free(struct act *a)
{
    if (!a)
        return;
    act_flush(a);
    act_set_notify(a, NULL);
    act_set_kube(a, NULL);
    act_set_runtime(a, NULL);
    ledger_free(&a->ledger);
    audit_close(a->audit);
    act_counts_free(&a->actions);
    act_counts_free(&a->notices);
    act_counts_free(&a->spared);
    act_counts_free(&a->skipped);
    act_counts_free(&a->freed);
    act_counts_free(&a->returns);
    for (size_t i = 0; i < a->nskips; i++) {
        for (size_t j = 0; j < a->skips[i].n; j++)
            free(a->skips[i].reasons[j]);
        free(a->skips[i].reasons);
        free(a->skips[i].key);
    }
    free(a->skips);
    strset_free(&a->skip_index);
    sbuf_free(&a->skip_key);
    free(a->cycle);
    act_nsset_free(&a->protected_ns);
    free(a);
}

const struct ledger *act_ledger(const struct act *a)
{
    return &a->ledger;
}

size_t act_forget_superseded(struct act *a)
{
    return ledger_drop_superseded(&a->ledger);
}

/* ---- helpers ---------------------------------------------------------------------------- */

static struct act_backend *act_backend_for(struct act *a, enum rule_action action)
{
    return action == ACTION_STOP ? a->runtime : a->kube;
}

/*
 * Mark the ledger for writing at the end of the cycle (act_flush). Only the record of an
 * attempt must reach the disk before the call (write-ahead in act_do); a notice or a dry-run
 * line lost in a crash is only posted again, which delays an action, never repeats one.
 * Writing the whole file with two fsyncs per workload would cost O(n^2) at 10,000 workloads.
 */
static void act_save(struct act *a)
{
    a->dirty = true;
}

static void act_flush(struct act *a)
{
    char err[512];
    if (!a->dirty)
        return;
    if (ledger_save(&a->ledger, err, sizeof(err)) < 0) {
        a->save_failures++;
        log_error("%s", err);
        return;
    }
    a->dirty = false;
}

/* The chain of a target as audit references. */
static size_t act_chain_refs(const struct act_target *t, struct audit_ref *refs)
{
    size_t n = t ? t->nchain : 0;
    for (size_t i = 0; i < n; i++)
        refs[i] =
            (struct audit_ref){t->chain[i].kind, t->chain[i].ns, t->chain[i].name, t->chain[i].uid};
    return n;
}

/*
 * The chain recorded in a ledger entry. A container entry is its target and id. A Kubernetes
 * entry keeps the root owner and the pod's uid; `target` names the root, so the pod's name
 * comes from the workload's pod label (the pod is left out when that is unknown).
 */
static size_t act_entry_refs(const struct ledger_entry *e, const struct labels *workload,
                             struct audit_ref *refs)
{
    size_t n = 0;
    if (!e->root_kind[0]) {
        refs[n++] = (struct audit_ref){NULL, NULL, e->target, e->uid};
        return n;
    }
    const char *pod = workload ? labels_get(workload, "pod") : NULL;
    if (pod && strcmp(e->root_kind, "Pod") != 0)
        refs[n++] = (struct audit_ref){"Pod", e->root_ns, pod, e->uid};
    refs[n++] = (struct audit_ref){e->root_kind, e->root_ns, e->root_name, e->root_uid};
    return n;
}

struct act_event {
    const char *event;
    const struct decision_rec *d;
    const struct labels *workload; /* when d is NULL */
    const char *rule;              /* when d is NULL */
    const char *action;
    const struct act_target *t;
    const struct ledger_entry *e; /* chain when t is NULL */
    const char *result;
    long api_status;
    const char *message;
    double act_after;
};

/* Write an audit line; with `notify`, send it to the rule's webhook as well (LC_FX_NOTIFY). */
static void act_audit(struct act *a, double now, const struct act_event *ev, bool notify)
{
    struct audit_ref refs[ACT_CHAIN_MAX];
    const struct labels *wl = ev->d ? &ev->d->identity : ev->workload;
    size_t n = ev->t ? act_chain_refs(ev->t, refs) : ev->e ? act_entry_refs(ev->e, wl, refs) : 0;
    struct labels none = {0};
    struct audit_rec r = {
        .time = now,
        .event = ev->event,
        .rule = ev->d ? ev->d->rule->name : ev->rule,
        .workload = ev->d          ? &ev->d->identity
                    : ev->workload ? ev->workload
                                   : &none,
        .chain = refs,
        .nchain = n,
        .d = ev->d,
        .action = ev->action ? ev->action : (ev->d ? rules_action_name(ev->d->rule->action) : NULL),
        .result = ev->result,
        .api_status = ev->api_status,
        .message = ev->message,
        .act_after = ev->act_after,
        .reproved = ev->d && ev->d == a->reproved,
    };
    audit_write(a->audit, &r);
    if (notify && ev->d)
        notify_audit(a->notify, ev->d->rule, &r);
}

/* The skips of (rule, workload), added empty when `add` (else NULL when none). */
static struct act_skips *act_skips_of(struct act *a, const char *rule, const char *workload,
                                      bool add)
{
    /* Looked up in a scratch buffer, copied only when added: a cycle capped by the hour asks
       this for every candidate held back, every cycle (a backtest's hours of them). */
    size_t nr = strlen(rule), nw = strlen(workload), len = nr + 1 + nw;
    sbuf_reset(&a->skip_key);
    sbuf_add(&a->skip_key, rule, nr);
    sbuf_add(&a->skip_key, "\037", 1);
    sbuf_add(&a->skip_key, workload, nw);
    const void *got = strset_get(&a->skip_index, a->skip_key.buf, len);
    if (got || !add)
        return got ? &a->skips[(size_t)(uintptr_t)got - 1] : NULL;
    char *key = xmalloc(len + 1);
    memcpy(key, a->skip_key.buf, len);
    key[len] = '\0';
    a->skips = xgrow(a->skips, a->nskips, sizeof(*a->skips));
    a->skips[a->nskips] = (struct act_skips){.key = key};
    strset_put(&a->skip_index, key, len, (const void *)(uintptr_t)(a->nskips + 1));
    return &a->skips[a->nskips++];
}

/*
 * Audit and count a skip once per (rule, workload, reason); log it every time at debug. An
 * `error` (the API or the backend could not be read) is kept once per message instead: the
 * audit is the record of why a due action did not happen, and one outage can follow another
 * with the same reason but another cause (a token refused with 401, then etcd stopped and
 * every read timing out: found on a real API server, docs/real-cluster.md). A lasting fault
 * gives the same message every cycle, so this adds a line per cause, not per cycle.
 */
static void act_skip(struct act *a, double now, const struct decision_rec *d, const char *workload,
                     const struct act_target *t, const char *reason, const char *message)
{
    log_debug("not acting on %s of rule '%s': %s", workload, d->rule->name, message);
    struct act_skips *k = act_skips_of(a, d->rule->name, workload, true);
    bool is_error = strcmp(reason, "error") == 0;
    size_t nr = strlen(reason);
    /* Compared in place, allocated only when new (as act_skips_of, once per cycle held). */
    for (size_t i = 0; i < k->n; i++) {
        const char *r = k->reasons[i];
        if (is_error
                ? strncmp(r, reason, nr) == 0 && r[nr] == '\037' && strcmp(r + nr + 1, message) == 0
                : strcmp(r, reason) == 0)
            return;
    }
    char *key = is_error ? xasprintf("%s\037%s", reason, message) : xstrdup(reason);
    k->reasons = xgrow(k->reasons, k->n, sizeof(*k->reasons));
    k->reasons[k->n++] = key;
    log_info("not acting on %s of rule '%s': %s", workload, d->rule->name, message);
    act_count_add(&a->skipped, d->rule->name, reason, NULL);
    act_audit(a, now,
              &(struct act_event){.event = "skipped",
                                  .d = d,
                                  .t = t,
                                  .result = reason,
                                  .message = message,
                                  .act_after = NAN},
              false);
}

/* Forget the skips of a workload once it acts or is spared, so that a later episode is
   reported again. */
static void act_skip_forget(struct act *a, const char *rule, const char *workload)
{
    struct act_skips *k = act_skips_of(a, rule, workload, false);
    for (size_t i = 0; k && i < k->n; i++)
        free(k->reasons[i]);
    if (k)
        k->n = 0;
}

static unsigned *act_cycle_count(struct act *a, const struct rule *r)
{
    for (size_t i = 0; i < a->ncycle; i++)
        if (a->cycle[i].rule == r)
            return &a->cycle[i].acted;
    a->cycle = xrealloc(a->cycle, (a->ncycle + 1) * sizeof(*a->cycle));
    a->cycle[a->ncycle] = (struct act_rule_cycle){r, 0};
    return &a->cycle[a->ncycle++].acted;
}

/* A keep decision that says something about the workload itself (see act.h). */
static bool act_definite_keep(enum reason r)
{
    switch (r) {
    case REASON_ACTIVE:
    case REASON_GAP:
    case REASON_STALE:
    case REASON_TOO_YOUNG:
    case REASON_NOT_A_NUMBER:
    case REASON_EXEMPT:
    case REASON_RULE_DISABLED:
        return true;
    default:
        return false;
    }
}

/*
 * Build the notice texts for decision d (caller frees message and annotation). The message
 * also tells the owner what they can do: ask for time with keep-until when the rule allows
 * it, and how to bring the workload back after the action (`hint`, NULL: nothing to say).
 */
static void act_build_notice(const struct decision_rec *d, double noticed, double act_after,
                             const char *uid, double acted, const char *hint, struct act_notice *n,
                             struct notice *as_read, bool *as_read_ok)
{
    char at[40], win[32];
    rfc3339_format(at, sizeof(at), act_after, RFC3339_SEC);
    dur_format(win, sizeof(win), d->idle_timer);
    const char *action = rules_action_name(d->rule->action);
    n->act_after = act_after;
    char keep[200] = "", limit[32];
    if (d->rule->max_keep_until > 0) {
        char until[40];
        dur_format(limit, sizeof(limit), d->rule->max_keep_until);
        rfc3339_format(until, sizeof(until), noticed + d->rule->max_keep_until, RFC3339_SEC);
        snprintf(keep, sizeof(keep),
                 "; to postpone it, annotate the workload %s=<RFC 3339 time> (at most %s after "
                 "this notice, %s)",
                 ANNOT_KEEP_UNTIL, limit, until);
    }
    /* xasprintf("GPU activity below %g%% for %s (max %.3g%%, mean %.3g%% over %zu samples); "
       "%s planned at %s by rule '%s'%s%s%s", ...) joined piece by piece, with printf only for
       the two %.3g: the engine writes a notice for every candidate it notices, and the whole
       format was a third of a notice's cost (test_act checks the bytes against it). */
    char num[32];
    struct sbuf m = {0};
    sbuf_puts(&m, "GPU activity below ");
    sbuf_puts(&m, str_g(num, d->threshold));
    sbuf_puts(&m, "% for ");
    sbuf_puts(&m, win);
    snprintf(num, sizeof(num), " (max %.3g", isnan(d->max) ? 0.0 : d->max * 100.0);
    sbuf_puts(&m, num);
    snprintf(num, sizeof(num), "%%, mean %.3g", isnan(d->mean) ? 0.0 : d->mean * 100.0);
    sbuf_puts(&m, num);
    snprintf(num, sizeof(num), "%% over %zu samples); ", d->samples);
    sbuf_puts(&m, num);
    sbuf_puts(&m, action);
    sbuf_puts(&m, " planned at ");
    sbuf_puts(&m, at);
    sbuf_puts(&m, " by rule '");
    sbuf_puts(&m, d->rule->name ? d->rule->name : "(null)");
    sbuf_putc(&m, '\'');
    sbuf_puts(&m, keep);
    if (hint && *hint) {
        sbuf_puts(&m, "; ");
        sbuf_puts(&m, hint);
    }
    n->message = sbuf_take(&m);
    char thr[32];
    str_copy(thr, sizeof(thr), str_g(num, d->threshold));
    str_append(thr, sizeof(thr), "%");
    /* noticedAt, uid and actedAt are what another replica needs to continue this notice
       (act_adopt): when it was given, for which object, and whether it was acted on. */
    struct notice rec = {.act_at = act_after,
                         .rule = (char *)d->rule->name,
                         .action = (char *)action,
                         .idle_since = d->idle_since,
                         .window = win,
                         .threshold = thr,
                         .noticed_at = noticed,
                         .uid = uid && *uid ? (char *)uid : NULL,
                         .acted_at = acted};
    n->annotation = notice_encode(&rec);
    /* What reading the annotation back gives (act_apply), when asked. */
    if (as_read) {
        notice_free(as_read);
        *as_read_ok = notice_as_read(&rec, as_read) == 0;
    }
}

static void act_close(struct ledger_entry *e, enum ledger_state st, const char *result, double now)
{
    e->state = st;
    e->updated = now;
    ledger_set(&e->result, result);
}

/*
 * An action that succeeded starts counting the GPU time it frees: the devices the decision
 * says the workload held. A delete or an evict has no way back to watch (the object is gone,
 * or its controller re-creates the pod at once), so nothing is counted for them: the count
 * is of time the enforcer saw an object stay stopped, never a guess of when it would have
 * ended on its own.
 */
static void act_freed_start(struct ledger_entry *e, const struct decision_rec *d, double now)
{
    e->allocated = isfinite(d->allocated) && d->allocated > 0 ? d->allocated : NAN;
    e->accounted = now;
    if (d->rule->action == ACTION_DELETE || d->rule->action == ACTION_EVICT)
        e->returned = now;
}

/* ---- the cycle -------------------------------------------------------------------------- */

struct act_expire_ctx {
    struct act *a;
    double now;
};

static void act_on_expired(void *arg, const struct ledger_entry *e)
{
    struct act_expire_ctx *x = arg;
    struct act *a = x->a;
    char err[512] = "";
    struct act_backend *b = NULL;
    /* a root owner means the notice went to Kubernetes; containers have nothing to remove */
    if (e->root_kind[0] && !act_stopping(a))
        b = a->kube;
    if (b && b->withdraw(b, e, NULL, err, sizeof(err)) != ACT_OK)
        log_warn("cannot withdraw the notice on %s: %s", e->target, err);
    log_info("notice on %s of rule '%s' expired without action", e->target, e->rule);
    act_audit(a, x->now,
              &(struct act_event){.event = "skipped",
                                  .rule = e->rule,
                                  .e = e,
                                  .result = "expired",
                                  .message = "the workload was not decided again before the "
                                             "notice expired",
                                  .act_after = e->act_after},
              false);
    act_count_add(&a->skipped, e->rule, "expired", NULL);
}

static bool act_protected(const struct act *a, const struct decision_rec *d,
                          const struct act_target *t, const char **ns)
{
    *ns = labels_get(&d->all, "namespace");
    if (act_nsset_has(&a->protected_ns, *ns))
        return true;
    for (size_t i = 0; t && i < t->nchain; i++) {
        if (act_nsset_has(&a->protected_ns, t->chain[i].ns)) {
            *ns = t->chain[i].ns;
            return true;
        }
    }
    return false;
}

static char *act_target_name(const struct act_target *t, enum rule_action action);

static void act_describe_note(const struct decision_rec *d, const struct act_target *t, double now,
                              char *note, size_t notelen, bool *kept);

enum act_result act_describe(struct act_backend *b, const struct decision_rec *d,
                             const char *protected_namespaces, double now, char **how, char *note,
                             size_t notelen, bool *kept, char *err, size_t errlen)
{
    *how = NULL;
    if (note && notelen)
        note[0] = '\0';
    if (kept)
        *kept = false;
    struct act pa = {0};
    act_nsset_init(&pa.protected_ns,
                   protected_namespaces ? protected_namespaces : ANNOT_PROTECTED_DEFAULT);
    const char *ns = NULL;
    struct act_target t = {0};
    enum act_result r = ACT_UNSUPPORTED;
    if (act_protected(&pa, d, NULL, &ns)) {
        snprintf(err, errlen, "kept: namespace '%s' is protected", ns);
        goto out;
    }
    if (!b) {
        snprintf(err, errlen, "no backend configured for action '%s'",
                 rules_action_name(d->rule->action));
        goto out;
    }
    /* The very resolve a cycle runs before a notice: reads only. */
    r = b->resolve(b, d, &t, err, errlen);
    if (r != ACT_OK)
        goto out;
    if (act_protected(&pa, d, &t, &ns)) {
        snprintf(err, errlen, "kept: namespace '%s' is protected", ns);
        r = ACT_UNSUPPORTED;
    } else if (t.exempt) {
        snprintf(err, errlen, "kept: labelled " ANNOT_EXEMPT "=true in its owner chain");
        r = ACT_UNSUPPORTED;
    } else if (t.out_of_scope) {
        snprintf(err, errlen, "kept: without the runtime scope label");
        r = ACT_UNSUPPORTED;
    } else {
        char *name = act_target_name(&t, d->rule->action);
        *how =
            t.how ? xstrdup(t.how) : xasprintf("%s %s", rules_action_name(d->rule->action), name);
        free(name);
        if (note && notelen)
            act_describe_note(d, &t, now, note, notelen, kept);
    }
    if (b->target_free)
        b->target_free(b, &t);
    else
        act_target_clear(&t);
out:
    act_nsset_free(&pa.protected_ns);
    return r;
}

/* When the last acted or closed entry of (rule, workload) was closed, NaN if none. */
static void act_last_closed_of(void *arg, struct ledger_entry *e)
{
    double *t = arg;
    if ((e->state == LEDGER_ACTED || e->state == LEDGER_DONE) && !(e->updated <= *t))
        *t = e->updated;
}

static double act_last_closed(struct ledger *l, const char *rule, const char *workload)
{
    double t = NAN;
    ledger_each(l, rule, workload, act_last_closed_of, &t);
    return t;
}

static void act_target_fill_entry(struct ledger *l, struct ledger_entry *e,
                                  const struct act_target *t)
{
    if (t->nchain == 0 || !t->chain[0].api_version[0])
        return; /* containers: no notice object */
    const struct act_obj *root = &t->chain[t->nchain - 1];
    ledger_set(&e->root_api, root->api_version);
    ledger_set(&e->root_kind, root->kind);
    ledger_set(&e->root_ns, root->ns);
    ledger_set(&e->root_name, root->name);
    ledger_set_root_uid(l, e, root->uid);
}

/* What the action is aimed at: the pod for an eviction, else the root owner. */
static char *act_target_name(const struct act_target *t, enum rule_action action)
{
    const struct act_obj *o = &t->chain[t->nchain && action != ACTION_EVICT ? t->nchain - 1 : 0];
    /* "%s %s/%s" (or "%s %s" without a namespace), joined without printf: every candidate
       of every cycle is named here, hundreds a cycle in a backtest whose hourly cap binds. */
    const char *kind = o->kind ? o->kind : "(null)", *name = o->name ? o->name : "(null)";
    bool ns = o->ns && o->ns[0];
    size_t nk = strlen(kind), nn = ns ? strlen(o->ns) : 0, nm = strlen(name);
    char *s = xmalloc(nk + 1 + (ns ? nn + 1 : 0) + nm + 1), *p = s;
    memcpy(p, kind, nk);
    p += nk;
    *p++ = ' ';
    if (ns) {
        memcpy(p, o->ns, nn);
        p += nn;
        *p++ = '/';
    }
    memcpy(p, name, nm + 1);
    return s;
}

/*
 * Two replicas share what they did through the objects, not their ledgers (docs/enforcer.md, "Two
 * replicas"): after scaling to zero or suspending, the notice annotation gains actedAt, so a
 * replica that becomes the leader later finds the action done (a deleted or evicted pod is
 * gone, and a call on it again is a 404 or a uid conflict). Best effort: when the object is gone (a
 * delete) or the write fails, the next leader may call again, which every action tolerates on the
 * same object (already scaled, already suspended, 404, or a uid precondition failing).
 */
static void act_record_acted(struct act_backend *b, const struct decision_rec *d,
                             const struct ledger_entry *e, const struct act_target *t, double now)
{
    /* A deleted or evicted pod is its own record: the call cannot have a second effect. */
    if (!b->record || d->rule->action == ACTION_DELETE || d->rule->action == ACTION_EVICT)
        return;
    struct act_notice n;
    char err[512] = "";
    act_build_notice(d, e->noticed, e->act_after, e->uid, now, NULL, &n, NULL, NULL);
    enum act_result r = b->record(b, t, &n, err, sizeof(err));
    if (r != ACT_OK && r != ACT_GONE)
        log_warn("cannot record the action on %s: %s", e->target, err);
    free((char *)n.message);
    free((char *)n.annotation);
}

/*
 * A notice this replica has no record of, found on the object (`seen`, read from t->notice;
 * NULL: none or unreadable): given by another replica that was the leader before, or an
 * unreadable one, which is not trusted. It is continued when it is for this rule, this action
 * and this very object (uid), so a change of leader neither sends a second notice (restarting
 * the period) nor acts twice. Anything else about it (another rule, a replaced object, an old
 * notice without noticedAt or uid) is not trusted: a fresh notice replaces it, which only
 * delays the action. Idleness must then be proven from the notice's own time, as if this
 * replica had given it (act_still_idle). Returns true when there is nothing left to do.
 * With `out` NULL (this replica has its own pending entry) it only records an action another
 * replica made, returning true then.
 */
static bool act_adopt(struct act *a, const struct decision_rec *d, const char *workload,
                      const struct act_target *t, const struct notice *seen, double now,
                      struct ledger_entry **out)
{
    const struct rule *r = d->rule;
    if (!seen)
        return false;
    double noticed = seen->noticed_at, act_after = seen->act_at, acted = seen->acted_at;
    bool ours = seen->rule && strcmp(seen->rule, r->name) == 0 && seen->action &&
                strcmp(seen->action, rules_action_name(r->action)) == 0 && seen->uid &&
                strcmp(seen->uid, t->chain[0].uid) == 0 && !isnan(noticed) && !isnan(act_after) &&
                noticed <= now && act_after + a->pending_ttl >= now;
    /* (A notice past its expiry is one a leader gave up on without withdrawing it, e.g. for
       lack of RBAC: acting on it now would act on a stale decision, as act_on_expired says.) */
    /* Asked only whether the object records the action (out NULL): nothing else to do. */
    bool done = ours && !isnan(acted);
    if (ours && (out || done)) {
        char *target = act_target_name(t, r->action);
        struct ledger_entry *e =
            ledger_add(&a->ledger, r->name, workload, t->chain[0].uid, target, LEDGER_PENDING);
        e->noticed = noticed;
        e->act_after = act_after;
        e->idle_proven = noticed;
        act_target_fill_entry(&a->ledger, e, t);
        char at[40];
        rfc3339_format(at, sizeof(at), done ? acted : act_after, RFC3339_SEC);
        if (done) {
            act_close(e, LEDGER_ACTED, "ok", now);
            act_freed_start(e, d, now);
            log_info("%s of rule '%s': %s was acted on at %s by another replica", workload, r->name,
                     target, at);
        } else {
            log_info("%s of rule '%s': continuing the notice another replica gave on %s, action "
                     "planned at %s",
                     workload, r->name, target, at);
            *out = e;
        }
        act_audit(a, now,
                  &(struct act_event){.event = "notice",
                                      .d = d,
                                      .t = t,
                                      .result = done ? "acted_elsewhere" : "adopted",
                                      .message = t->notice,
                                      .act_after = act_after},
                  false);
        act_save(a);
        free(target);
    }
    return done;
}

double act_notice_noticed(const char *notice, const char *rule)
{
    struct notice n;
    char perr[160];
    double t = NAN;
    if (notice && notice_parse(notice, strlen(notice), &n, perr, sizeof(perr)) == 0 && n.rule &&
        strcmp(n.rule, rule) == 0 && isnan(n.acted_at))
        t = n.noticed_at;
    if (notice)
        notice_free(&n);
    return t;
}

/* The notice on the object (`seen`, NULL: none or unreadable) is entry e's: same rule, object
   and time. */
static bool act_notice_on_object(const struct notice *seen, const struct ledger_entry *e)
{
    /* The annotation has whole seconds. */
    return seen && seen->rule && strcmp(seen->rule, e->rule) == 0 && seen->uid &&
           strcmp(seen->uid, e->uid) == 0 && fabs(seen->noticed_at - e->noticed) < 1.0;
}

/* ---- facts ------------------------------------------------------------------------------ */

/* This cycle's decision as the lifecycle sees it; NULL: the workload was not decided. */
static enum lc_decision act_lc_decision(const struct decision_rec *d)
{
    if (!d)
        return LC_NO_DATA;
    if (d->decision == DECISION_RECLAIM)
        return LC_IDLE;
    return act_definite_keep(d->reason) ? LC_ACTIVE : LC_UNKNOWN;
}

/*
 * Whether the idleness of `d` continues what was proven for entry `e`: its idle run must
 * start no later than the time idleness was last proven (at first the notice). A run that
 * starts later means the workload was busy, or not proven idle, for a while since the
 * notice, even if no cycle saw it. A decision without an idle run proves nothing.
 */
static enum lc_run act_lc_run(const struct ledger_entry *e, const struct decision_rec *d)
{
    if (!e || !d || isnan(d->idle_since))
        return LC_RUN_UNKNOWN;
    double proven = isnan(e->idle_proven) ? e->noticed : e->idle_proven;
    return d->idle_since <= proven + 1e-6 ? LC_RUN_CONTINUOUS : LC_RUN_BROKEN;
}

/* What the driver knows while it performs the effects of one step. */
struct act_ctx {
    struct act *a;
    const struct decision_rec *d;
    const char *workload;
    struct act_backend *b;
    struct ledger_entry *e; /* the entry the step is about; NULL in `none` */
    struct act_target *t;   /* the resolved object, or NULL */
    char *target;           /* its name (act_target_name), or NULL */
    struct act_notice n;    /* the notice texts (LC_FX_NOTICE, a dry-run report) */
    double now;
    const char *reason;  /* a skip's reason, a closure's result */
    const char *result;  /* a spare's result: "ok", or "error" when the withdrawal failed */
    char msg[512];       /* a skip's or closure's message, a spare's cause */
    char err[512];       /* the last call's error */
    enum act_result res; /* the last call's result */
    long status;
    /* The notice on the object (t->notice), read once when it was resolved (act_read_notice);
       seen_ok false: none, or unreadable, which no check trusts. */
    struct notice seen;
    bool seen_ok;
    /* The notice c->n.annotation encodes, as read back (notice_as_read): what act_apply
       reads when it puts the annotation on the object, without parsing it. */
    struct notice built;
    bool built_ok;
    /* The decision with the window statistics of its full-window proof (act_unproven): what
       the notice, report and action lines show of an incremental decision once proven. */
    struct decision_rec proven;
};

/* Read the notice on the object (c->t->notice) into c->seen, once per text. */
static void act_read_notice(struct act_ctx *c)
{
    char perr[160];
    notice_free(&c->seen);
    c->seen_ok =
        c->t && c->t->notice &&
        notice_parse(c->t->notice, strlen(c->t->notice), &c->seen, perr, sizeof(perr)) == 0;
    if (c->t && c->t->notice && !c->seen_ok)
        log_debug("%s: the notice on %s is not trusted: %s", c->workload,
                  c->target ? c->target : "the object", perr);
}

/* Learn the cheap facts (notice period, continuity) and step; f->leader is the caller's. */
static void act_step(struct act_ctx *c, struct lc_facts *f, struct lc_step *st)
{
    f->due = c->e && !(c->now < c->e->act_after);
    f->run = act_lc_run(c->e, c->d);
    lc_step(lc_state_of(c->e), act_lc_decision(c->d), f, st);
}

/* The message of a broken idle run (LC_WHY_BROKEN). */
static void act_broken_msg(const struct ledger_entry *e, const struct decision_rec *d, char *why,
                           size_t whylen)
{
    double proven = isnan(e->idle_proven) ? e->noticed : e->idle_proven;
    char since[40], last[40];
    rfc3339_format(since, sizeof(since), d->idle_since, RFC3339_SEC);
    rfc3339_format(last, sizeof(last), proven, RFC3339_SEC);
    snprintf(why, whylen,
             "not idle without a break since the notice: the idle run starts at %s, after %s "
             "(idleness last proven)",
             since, last[0] ? last : "(never)");
}

/*
 * An object created after its idle window started inherits idle evidence from a predecessor
 * of the same identity (a re-created StatefulSet or notebook pod, a container re-created
 * under the same name): it is too young until its own window is complete. An unreadable
 * creation time counts as young. The idle run may start before the creation (the series
 * continues across re-creation); only the window the decision needs has to be the object's.
 */
static bool act_young(const struct decision_rec *d, const struct act_target *t)
{
    /* A workload brought back (restore, or its platform's own start) starts a new idle window
       at the restart: the idle evidence before it belongs to the reclaimed episode. */
    return !(t->created <= d->window_start) || t->restarted > d->window_start;
}

static void act_young_msg(const struct decision_rec *d, const struct act_target *t, char *msg,
                          size_t len)
{
    char created[40], start[40];
    rfc3339_format(created, sizeof(created), t->created, RFC3339_SEC);
    rfc3339_format(start, sizeof(start), d->window_start, RFC3339_SEC);
    if (t->restarted > d->window_start) {
        char at[40];
        rfc3339_format(at, sizeof(at), t->restarted, RFC3339_SEC);
        if (isinf(t->restarted))
            snprintf(msg, len,
                     "restarted: %s on %s cannot be read, so a restart after the idle window "
                     "start %s cannot be ruled out",
                     ANNOT_RESTORED_AT, t->chain[t->nchain - 1].name, start);
        else
            snprintf(msg, len,
                     "restarted: %s %s was brought back at %s, after the idle window start %s: "
                     "its idle window starts at the restart",
                     t->chain[t->nchain - 1].kind, t->chain[t->nchain - 1].name, at, start);
    } else if (isnan(t->created))
        snprintf(msg, len,
                 "creation time of %s %s unknown: not proven idle since the "
                 "idle window start %s",
                 t->chain[0].kind, t->chain[0].name, start);
    else
        snprintf(msg, len,
                 "%s %s was created at %s, after the idle window start %s: the idle data before "
                 "belongs to a predecessor of the same name",
                 t->chain[0].kind, t->chain[0].name, created, start);
}

/* The reason and message of a skip, closure or spare that the driver writes down. */
static void act_explain(struct act_ctx *c, const struct lc_step *st)
{
    const struct decision_rec *d = c->d;
    switch (st->why) {
    case LC_WHY_ACTIVE:
        snprintf(c->msg, sizeof(c->msg), "%s: %s", decide_reason_name(d->reason), d->detail);
        break;
    case LC_WHY_BROKEN:
        act_broken_msg(c->e, d, c->msg, sizeof(c->msg));
        break;
    case LC_WHY_DRY_RUN:
        c->reason = "dry_run";
        snprintf(c->msg, sizeof(c->msg),
                 "the rule is now in dry run: the pending notice is not acted on");
        break;
    case LC_WHY_TOO_YOUNG:
        c->reason = "too_young";
        act_young_msg(d, c->t, c->msg, sizeof(c->msg));
        break;
    case LC_WHY_NOT_PROVEN:
        c->reason = "not_idle_since_notice";
        snprintf(c->msg, sizeof(c->msg), "idleness since the notice is not proven");
        break;
    case LC_WHY_CHANGED:
        if (c->t) { /* else the resolution said so: reason and message are its own */
            c->reason = "conflict";
            snprintf(c->msg, sizeof(c->msg), "%s was replaced (uid '%s', the notice was for '%s')",
                     c->e->target, c->t->chain[0].uid, c->e->uid);
            log_info("not acting: %s", c->msg);
        }
        break;
    case LC_WHY_GONE:
        if (c->t) {
            c->reason = "gone";
            snprintf(c->msg, sizeof(c->msg), "%s is %s", c->e->target,
                     c->t->terminating ? "terminating" : "not running");
        }
        break;
    default:
        break; /* keep-until, caps, pressure, resolution: set where the fact was learnt */
    }
}

/* ---- effects ---------------------------------------------------------------------------- */

static void act_extend(struct act *a, struct ledger_entry *e, double now)
{
    if (!(e->idle_proven == now)) {
        e->idle_proven = now;
        act_save(a);
    }
}

/* Withdraw the notice of a spared entry; -1 when the call was not made (stopping). */
static int act_fx_withdraw(struct act_ctx *c)
{
    struct ledger_entry *e = c->e;
    if (e->state != LEDGER_PENDING || !e->root_kind[0] || !c->b)
        return 0; /* a dry-run report or a container: nothing on an object */
    if (act_stopping(c->a))
        return -1; /* the spare waits for the next start, with the notice */
    enum act_result wr = c->b->withdraw(c->b, e, c->msg, c->err, sizeof(c->err));
    if (wr == ACT_CANCELLED)
        return -1; /* the signal came first: the notice and its entry stay */
    if (wr != ACT_OK) {
        /* The annotation stays behind, but the workload must not be acted on. */
        log_warn("cannot withdraw the notice on %s: %s", e->target, c->err);
        c->result = "error";
    }
    return 0;
}

static void act_fx_audit(struct act_ctx *c, const struct lc_step *st)
{
    struct act *a = c->a;
    const struct decision_rec *d = c->d;
    const struct rule *r = d->rule;
    bool notify = lc_find(st, LC_FX_NOTIFY) >= 0;
    const char *action = rules_action_name(r->action);
    struct act_event ev = {.d = d, .t = c->t, .e = c->e, .act_after = c->e ? c->e->act_after : NAN};
    if (st->next == LC_SPARED) {
        log_info("%s of rule '%s' is spared, notice withdrawn: %s", c->e->workload, c->e->rule,
                 c->msg);
        ev.event = "spared";
        ev.t = NULL;
        ev.result = c->result;
        ev.message = c->err[0] ? c->err : c->msg;
    } else if (st->next == LC_DRY_RUN) {
        if (c->target)
            log_info("dry run: would %s %s (%s of rule '%s'): %s", action, c->target, c->workload,
                     r->name, c->n.message);
        else
            log_info("dry run: would %s %s of rule '%s': %s", action, c->workload, r->name,
                     c->n.message);
        ev = (struct act_event){.event = "dry_run",
                                .d = d,
                                .t = c->t,
                                .result = "dry_run",
                                .message = c->n.message,
                                .act_after = c->n.act_after};
    } else if (st->why == LC_WHY_NOTICE) {
        ev = (struct act_event){.event = "notice", .d = d, .t = c->t, .act_after = c->n.act_after};
        if (st->next == LC_NOTICED) {
            act_count_add(&a->notices, r->name, NULL, NULL);
            log_info("notice: %s %s: %s", action, c->target, c->n.message);
            ev.result = "ok";
            ev.message = c->n.message;
        } else {
            log_warn("cannot post the notice on %s: %s", c->target, c->err);
            ev.result = act_result_name(c->res);
            ev.message = c->err;
        }
    } else if (st->why == LC_WHY_ACT) {
        ev.event = "action";
        ev.result = act_result_name(c->res);
        ev.api_status = c->status;
        ev.message = c->err[0] ? c->err : NULL;
        /* The way back, for the owner reading the audit line or the webhook. */
        if (c->res == ACT_OK && c->t && c->t->restore_hint && *c->t->restore_hint)
            ev.message = c->t->restore_hint;
        act_count_add(&a->actions, r->name, action, ev.result);
    } else { /* closed: the object is gone or was replaced */
        ev.event = "action";
        ev.result = c->reason;
        ev.message = c->msg;
        act_count_add(&a->actions, r->name, action, c->reason);
    }
    act_audit(a, c->now, &ev, notify);
    if (st->next == LC_ACTED)
        act_skip_forget(a, r->name, c->workload);
}

/* Bring the ledger to the step's new state; false when it already was there. */
static bool act_apply(struct act_ctx *c, const struct lc_step *st)
{
    struct act *a = c->a;
    struct ledger_entry *e = c->e;
    const struct rule *r = c->d->rule;
    const char *uid = c->t ? c->t->chain[0].uid : "";
    switch (st->next) {
    case LC_SPARED:
        act_count_add(&a->spared, e->rule, NULL, NULL);
        act_skip_forget(a, e->rule, e->workload);
        ledger_remove(&a->ledger, e);
        c->e = NULL;
        return true;
    case LC_DRY_RUN:
        if (e)
            return false;
        e = ledger_add(&a->ledger, r->name, c->workload, uid, c->target, LEDGER_DRY_RUN);
        e->noticed = c->now;
        e->act_after = c->n.act_after;
        return true;
    case LC_NOTICED:
        if (e)
            return false;
        e = c->e = ledger_add(&a->ledger, r->name, c->workload, uid, c->target, LEDGER_PENDING);
        e->noticed = c->now;
        e->act_after = c->n.act_after;
        e->idle_proven = c->now;
        act_target_fill_entry(&a->ledger, e, c->t);
        /* The object now carries this notice (a notice period of 0 acts on it in this very
           cycle, and the check before acting reads it from there). */
        free(c->t->notice);
        c->t->notice = xstrdup(c->n.annotation);
        if (c->built_ok) { /* the notice just built: what act_read_notice would parse */
            notice_free(&c->seen);
            c->seen = c->built;
            notice_init(&c->built);
            c->built_ok = false;
            c->seen_ok = true;
        } else {
            act_read_notice(c);
        }
        return true;
    case LC_ACTED:
        act_close(e, LEDGER_ACTED, "ok", c->now);
        act_freed_start(e, c->d, c->now);
        return true;
    case LC_GONE:
        if (e->state == LEDGER_DONE)
            return false;
        act_close(e, LEDGER_DONE, st->why == LC_WHY_ACT ? act_result_name(c->res) : c->reason,
                  c->now);
        return true;
    case LC_ACTING:
        if (st->why != LC_WHY_ACT || lc_find(st, LC_FX_ACT) >= 0)
            return false;
        ledger_set(&e->result, act_result_name(c->res)); /* after the call: retried */
        return true;
    default:
        return false;
    }
}

/*
 * Write ahead: the attempt is on disk before the call, so a crash right after it is counted
 * against the cap, and the re-check at the next start finds the object gone or already
 * scaled down instead of acting blindly. -1: no call (stopping, or the record failed).
 */
static int act_fx_write_ahead(struct act_ctx *c)
{
    struct act *a = c->a;
    struct ledger_entry *e = c->e;
    if (act_stopping(a))
        return -1; /* stays pending: acted on (or spared) after the next start */
    ledger_note_action(&a->ledger, c->now);
    e->attempts++;
    e->updated = c->now;
    char err[512] = "";
    if (ledger_save(&a->ledger, err, sizeof(err)) < 0) {
        a->save_failures++;
        a->ledger.nactions--;
        e->attempts--;
        log_error("%s; not acting without a record", err);
        act_skip(a, c->now, c->d, c->workload, c->t, "state_error", err);
        return -1;
    }
    a->dirty = false;
    (*act_cycle_count(a, c->d->rule))++;
    return 0;
}

static int act_exec(struct act_ctx *c, const struct lc_step *st);

static enum lc_outcome act_outcome(enum act_result r)
{
    switch (r) {
    case ACT_OK:
        return LC_OUT_OK;
    case ACT_GONE:
    case ACT_CONFLICT:
    case ACT_UNSUPPORTED:
        return LC_OUT_CLOSED;
    case ACT_CANCELLED:
        return LC_OUT_CANCELLED;
    default:
        return LC_OUT_FAILED;
    }
}

/* The mutating call, then the transition its outcome leads to. */
static void act_fx_act(struct act_ctx *c)
{
    const struct rule *r = c->d->rule;
    const char *action = rules_action_name(r->action);
    struct ledger_entry *e = c->e;
    c->err[0] = '\0';
    c->status = 0;
    c->res = c->b->act(c->b, c->t, r->action, &c->status, c->err, sizeof(c->err));
    enum lc_outcome o = act_outcome(c->res);
    if (o == LC_OUT_OK)
        log_info("%s %s (%s of rule '%s')", action, e->target, c->workload, r->name);
    else if (o == LC_OUT_CLOSED)
        log_info("%s %s: %s, closing the notice", action, e->target,
                 c->err[0] ? c->err : act_result_name(c->res));
    else if (o == LC_OUT_CANCELLED)
        log_info("%s %s left unfinished, retried after the next start: %s", action, e->target,
                 c->err);
    else
        log_warn("%s %s failed (attempt %u, retried next cycle): %s", action, e->target,
                 e->attempts, c->err);
    struct lc_step st;
    lc_settle(LC_FX_ACT, o, &st);
    act_exec(c, &st);
}

/* The notice call, then the transition its outcome leads to. */
static void act_fx_notice(struct act_ctx *c)
{
    c->err[0] = '\0';
    c->res = c->b->notice(c->b, c->t, &c->n, c->err, sizeof(c->err));
    if (c->res == ACT_CANCELLED)
        log_debug("notice on %s not posted: %s", c->target, c->err);
    struct lc_step st;
    lc_settle(LC_FX_NOTICE, act_outcome(c->res), &st);
    act_exec(c, &st);
}

/*
 * Perform the effects of `st` in their order. -1 when a call was not started (stopping, or
 * its write-ahead record failed): the rest of the step is dropped and the ledger keeps the
 * state from before it.
 */
static int act_exec(struct act_ctx *c, const struct lc_step *st)
{
    for (size_t i = 0; i < st->nfx; i++) {
        switch (st->fx[i]) {
        case LC_FX_EXTEND:
            act_extend(c->a, c->e, c->now);
            break;
        case LC_FX_WITHDRAW:
            if (act_fx_withdraw(c) < 0)
                return -1;
            break;
        case LC_FX_NOTICE:
            act_fx_notice(c);
            break;
        case LC_FX_SKIP:
            act_skip(c->a, c->now, c->d, c->workload, c->t, c->reason, c->msg);
            break;
        case LC_FX_AUDIT:
            act_fx_audit(c, st);
            break;
        case LC_FX_NOTIFY:
            break; /* sent with the audit line it repeats (act_fx_audit) */
        case LC_FX_WRITE_AHEAD:
            if (act_fx_write_ahead(c) < 0)
                return -1;
            break;
        case LC_FX_ACT:
            act_fx_act(c);
            break;
        case LC_FX_RECORD:
            act_record_acted(c->b, c->d, c->e, c->t, c->now);
            break;
        case LC_FX_PERSIST:
            if (act_apply(c, st))
                act_save(c->a);
            break;
        case LC_FX_SYNC:
            act_apply(c, st);
            act_save(c->a);
            act_flush(c->a); /* the outcome of a mutating call is on disk before the next */
            break;
        case LC_FX__COUNT:
            break;
        }
    }
    return 0;
}

/* ---- the driver ------------------------------------------------------------------------- */

/*
 * The review of open entries, before the candidates: notices and dry-run reports whose
 * workload is active again or whose idle run restarted are spared, and the proof of idleness
 * of the others is extended to now. Everything else waits for the candidate's turn.
 */
static void act_review(struct act *a, const struct decisions *ds, char *const *keys, double now)
{
    /*
     * The decision of each open entry, by key (the workload's decisions of several rules
     * chained in decision order, so the first of its rule is the one a scan finds): a scan of
     * the decisions per open entry made a cycle quadratic in the workloads.
     */
    struct strset byw = {0};
    size_t *next = xcalloc(ds->n ? ds->n : 1, sizeof(*next));
    size_t *tail = xcalloc(ds->n ? ds->n : 1, sizeof(*tail));
    for (size_t j = 0; j < ds->n; j++) {
        const void *got =
            strset_put(&byw, keys[j], strlen(keys[j]), (const void *)(uintptr_t)(j + 1));
        if (!got) {
            tail[j] = j;
            continue;
        }
        size_t h = (size_t)(uintptr_t)got - 1;
        next[tail[h]] = j + 1;
        tail[h] = j;
    }
    free(tail);
    for (size_t i = 0; i < a->ledger.n;) {
        struct ledger_entry *e = &a->ledger.v[i];
        enum lc_state s = lc_state_of(e);
        if (s != LC_NOTICED && s != LC_ACTING && s != LC_DRY_RUN) {
            i++;
            continue;
        }
        const struct decision_rec *d = NULL;
        const void *got = byw.cap ? strset_get(&byw, e->workload, strlen(e->workload)) : NULL;
        for (size_t j = got ? (size_t)(uintptr_t)got - 1 : SIZE_MAX; j != SIZE_MAX && !d;
             j = next[j] - 1)
            if (strcmp(ds->v[j].rule->name, e->rule) == 0)
                d = &ds->v[j];
        struct act_ctx c = {.a = a, .d = d, .e = e, .now = now, .result = "ok"};
        /* The one call a spare makes, the withdrawal, checks the gate itself (act_fx_withdraw):
           asking here too would consult it for every open entry. */
        struct lc_facts f = {.dry_run = d && (d->dry_run || d->rule->dry_run), .leader = true};
        struct lc_step st;
        act_step(&c, &f, &st);
        if (st.next != LC_SPARED) {
            if (lc_find(&st, LC_FX_EXTEND) >= 0)
                act_extend(a, e, now);
            i++;
            continue;
        }
        c.workload = e->workload;
        c.b = act_backend_for(a, d->rule->action);
        act_explain(&c, &st);
        if (act_exec(&c, &st) < 0)
            break;
    }
    strset_free(&byw);
    free(next);
}

/* Caps (LC facts `capped`): learnt only when an action is otherwise due. */
static bool act_capped(struct act_ctx *c)
{
    struct act *a = c->a;
    const struct rule *r = c->d->rule;
    if (*act_cycle_count(a, r) >= r->max_terminations) {
        c->reason = "cycle_cap";
        snprintf(c->msg, sizeof(c->msg), "maxTerminationsPerCycle %u reached", r->max_terminations);
        return true;
    }
    size_t last_hour = ledger_actions_last_hour(&a->ledger, c->now);
    if (a->max_per_hour && last_hour >= a->max_per_hour) {
        c->reason = "hourly_cap";
        /* Joined by hand below a million (str_g prints such whole numbers as %zu and %u do):
           a backtest asks this of every candidate the cap holds back, at every cycle. */
        if (last_hour < 1000000 && a->max_per_hour < 1000000) {
            char n[32];
            str_copy(c->msg, sizeof(c->msg), str_g(n, (double)last_hour));
            str_append(c->msg, sizeof(c->msg), " actions in the last hour, the cap is ");
            str_append(c->msg, sizeof(c->msg), str_g(n, (double)a->max_per_hour));
        } else {
            snprintf(c->msg, sizeof(c->msg), "%zu actions in the last hour, the cap is %u",
                     last_hour, a->max_per_hour);
        }
        return true;
    }
    return false;
}

/* Pressure (LC fact `unconfirmed`): asked only when a notice or an action is otherwise due. */
static bool act_unconfirmed(struct act_ctx *c)
{
    struct act *a = c->a;
    const struct rule *r = c->d->rule;
    if (r->policy != POLICY_DURING_PRESSURE || c->b != a->kube || !a->kube_confirm)
        return false;
    enum act_result cr = a->kube_confirm(c->b, c->d, c->t, c->msg, sizeof(c->msg));
    if (cr == ACT_OK)
        return false;
    /* Not acting is the safe side of a failed check too: the notice stays pending. */
    if (cr != ACT_RETRY)
        log_warn("cannot confirm GPU pressure for %s of rule '%s': %s", c->workload, r->name,
                 c->msg);
    c->reason = "pressure_not_confirmed";
    return true;
}

/*
 * The full-window proof (LC fact `unproven`): asked only when a notice, a dry-run report or an
 * action is otherwise due for a decision made from state carried between cycles (issue 26).
 * Once per candidate and cycle: a notice period of 0 steps from none to the action in one
 * cycle on the same proof.
 */
static bool act_unproven(struct act_ctx *c)
{
    struct act *a = c->a;
    /* A full read of `run`'s carried state has no window statistics either (samples 0): its
       proof is read again for them, and it must agree. */
    bool stats = c->d->samples > 0 || !a->reprove;
    if ((c->d->proof != DECIDE_PROOF_INCREMENTAL && stats) || a->reproved == c->d)
        return false;
    if (!a->reprove) {
        /* Nothing can prove it again: the shortcut keeps. */
        c->reason = "not_proven_full";
        snprintf(c->msg, sizeof(c->msg), "no full-window proof available");
        return true;
    }
    c->proven = *c->d;
    if (a->reprove(a->reprove_arg, c->d, c->now, &c->proven, c->msg, sizeof(c->msg))) {
        c->d = &c->proven;
        a->reproved = c->d;
        return false;
    }
    c->reason = "not_proven_full";
    return true;
}

/* Whether step `st` (from state `s`) posts a notice, reports a dry run from none, or acts. */
static bool act_needs_proof(enum lc_state s, const struct lc_step *st)
{
    return lc_find(st, LC_FX_NOTICE) >= 0 || lc_find(st, LC_FX_ACT) >= 0 ||
           (st->next == LC_DRY_RUN && s != LC_DRY_RUN && lc_find(st, LC_FX_AUDIT) >= 0);
}

void act_keep_verdict(const struct rule *r, const struct act_target *t, double from, double now,
                      struct keep_verdict *v)
{
    struct keep_request rq[ACT_CHAIN_MAX];
    char where[ACT_CHAIN_MAX][160];
    size_t n = 0;
    for (size_t i = 0; t && i < t->nchain && i < ACT_CHAIN_MAX; i++) {
        const struct act_obj *o = &t->chain[i];
        if (!o->keep_until)
            continue;
        snprintf(where[n], sizeof(where[n]), "%s %s%s%s", o->kind, o->ns && *o->ns ? o->ns : "",
                 o->ns && *o->ns ? "/" : "", o->name);
        rq[n] = (struct keep_request){o->keep_until, where[n]};
        n++;
    }
    keep_judge(rq, n, r->max_keep_until, from, now, r->name, v);
    v->where = NULL; /* pointed into where[], gone with this frame; the message names it */
}

/* act_describe's note: the owner's keep-until and a restart, as the engine would see them. */
static void act_describe_note(const struct decision_rec *d, const struct act_target *t, double now,
                              char *note, size_t notelen, bool *kept)
{
    struct keep_verdict v;
    double from = act_notice_noticed(t->notice, d->rule->name);
    act_keep_verdict(d->rule, t, isnan(from) ? now : from, now, &v);
    if (kept)
        *kept = v.in_force;
    char restart[200] = "";
    if (t->restarted > d->window_start) {
        char when[48];
        rfc3339_format(when, sizeof(when), t->restarted, RFC3339_SEC);
        snprintf(restart, sizeof(restart),
                 "restarted at %s, after the window start: kept as too young until a whole "
                 "idle window after the restart",
                 when);
    }
    snprintf(note, notelen, "%s%s%s", v.msg, v.msg[0] && restart[0] ? "; " : "", restart);
}

/*
 * The owner's keep-until (LC fact `kept`): learnt only when an action is otherwise due. The
 * maximum counts from the notice, so the owner the notice warned can still ask for time.
 */
static bool act_kept(struct act_ctx *c)
{
    struct keep_verdict v;
    act_keep_verdict(c->d->rule, c->t, c->e->noticed, c->now, &v);
    if (v.state != KEEP_NONE && !v.in_force)
        log_info("%s of rule '%s': %s", c->workload, c->d->rule->name, v.msg);
    if (!v.in_force)
        return false;
    c->reason = "kept_until";
    snprintf(c->msg, sizeof(c->msg), "%s", v.msg);
    return true;
}

/*
 * An object acted on (the root of an acted entry) that runs again under a pod created after
 * the action was brought back, by `restore` or its platform's own start: the ledger records
 * when (the pod's creation, never earlier than the real restart), and the target's idle window
 * must lie after the latest such time (act_young).
 */
struct act_restart {
    struct act *a;
    struct act_target *t;
    double now;
};

static bool act_note_restart_of(void *arg, struct ledger_entry *e)
{
    struct act_restart *r = arg;
    struct act_target *t = r->t;
    if (e->state != LEDGER_ACTED || !(t->created > e->updated))
        return false;
    if (isnan(e->restarted)) {
        e->restarted = fmin(t->created, r->now);
        act_save(r->a);
        char at[40];
        rfc3339_format(at, sizeof(at), e->restarted, RFC3339_SEC);
        log_info("%s, acted on by rule '%s', runs again since %s: a new idle window starts "
                 "there",
                 e->target, e->rule, at);
    }
    if (!(t->restarted >= e->restarted))
        t->restarted = e->restarted;
    return false;
}

static void act_note_restart(struct act *a, struct act_target *t, double now)
{
    if (t->nchain == 0 || !t->running || t->terminating || !(t->created > 0))
        return;
    const char *root = t->chain[t->nchain - 1].uid;
    if (!root || !*root)
        return;
    struct act_restart r = {a, t, now};
    ledger_each_root(&a->ledger, root, act_note_restart_of, &r);
}

/* The live object against the entry: the same one, replaced, or no longer running. */
static enum lc_object act_lc_object(const struct ledger_entry *e, const struct act_target *t)
{
    if (!e)
        return LC_OBJ_SAME; /* nothing to compare with: the object to notice */
    if (strcmp(e->uid, t->chain[0].uid) != 0)
        return LC_OBJ_CHANGED;
    return t->running && !t->terminating ? LC_OBJ_SAME : LC_OBJ_GONE;
}

/*
 * The notice is per object acted on, not per decision: the pods of one Deployment are one
 * decision each, and all resolve to the Deployment. When another decision of this rule already
 * has a notice pending on the same object (root uid), or acted on it and the object has not
 * been seen running since (act_note_restart), this one gives no notice of its own (no second
 * Event, audit line or action): the object is already being reclaimed for it. An eviction
 * acts on each pod, whose own notice it is. True when this decision stops here.
 */
static bool act_same_target_of(void *arg, struct ledger_entry *e)
{
    const struct act_ctx *c = arg;
    if (!(e->state == LEDGER_PENDING || (e->state == LEDGER_ACTED && isnan(e->restarted))))
        return false;
    return strcmp(e->rule, c->d->rule->name) == 0 && strcmp(e->workload, c->workload) != 0;
}

static bool act_same_target(struct act_ctx *c)
{
    const struct rule *r = c->d->rule;
    const struct act_target *t = c->t;
    if (r->action == ACTION_EVICT || t->nchain == 0)
        return false;
    const char *root = t->chain[t->nchain - 1].uid;
    if (!root || !*root)
        return false;
    /* The first in ledger order (the one a scan would name). */
    const struct ledger_entry *e = ledger_each_root(&c->a->ledger, root, act_same_target_of, c);
    if (!e)
        return false;
    log_debug("%s of rule '%s': %s already %s for %s: no notice of its own", c->workload, r->name,
              e->target, e->state == LEDGER_PENDING ? "noticed" : "acted on", e->workload);
    return true;
}

/*
 * Before a notice or dry-run report from `none`, what the ledger and the object know that the
 * lifecycle's state does not: an action or closure for this very object (exactly once,
 * whatever the decisions say), a replacement whose idle evidence belongs to its predecessor,
 * and a notice another replica gave (act_adopt). True when the step ends here; c->e is set
 * when a notice was adopted.
 */
static bool act_known_elsewhere(struct act_ctx *c, bool dry)
{
    struct act *a = c->a;
    const struct rule *r = c->d->rule;
    const char *uid = c->t->chain[0].uid;
    if (ledger_find(&a->ledger, r->name, c->workload, uid, LEDGER_ACTED) ||
        ledger_find(&a->ledger, r->name, c->workload, uid, LEDGER_DONE))
        return true;
    if (!dry && act_same_target(c))
        return true;
    double closed = act_last_closed(&a->ledger, r->name, c->workload);
    if (!isnan(closed) && !(c->d->idle_since >= closed)) {
        act_skip(a, c->now, c->d, c->workload, c->t, "replaced",
                 "replaced object: waiting for a full idle window after the previous one");
        return true;
    }
    return !dry && c->seen_ok && act_adopt(a, c->d, c->workload, c->t, &c->seen, c->now, &c->e);
}

/*
 * Before an action on a pending entry, with several replicas the object, not this replica's
 * ledger, says which notice is in force. True when the entry was dropped.
 */
static bool act_reconcile(struct act_ctx *c)
{
    struct act *a = c->a;
    /* Our own notice, but another replica may have acted on it while this one was a standby:
       the object says so, and this replica's ledger is behind. */
    if (c->seen_ok && act_adopt(a, c->d, c->workload, c->t, &c->seen, c->now, NULL)) {
        ledger_remove(&a->ledger, c->e);
        act_save(a);
        return true;
    }
    /* While this one was a standby the leader may have withdrawn the notice (spared, exempt)
       or replaced it with a later one. A record the object no longer shows is dropped: the
       next cycle adopts what the object shows, or gives a fresh notice, never acts on it. */
    if (a->gate && !act_notice_on_object(c->seen_ok ? &c->seen : NULL, c->e)) {
        log_info("%s of rule '%s': the notice on %s is not the one this replica gave: "
                 "dropping its own record",
                 c->workload, c->d->rule->name, c->e->target);
        ledger_remove(&a->ledger, c->e);
        act_save(a);
        return true;
    }
    return false;
}

/* Guards that leave a candidate alone whatever its state: true when it is skipped. */
static bool act_guarded(struct act_ctx *c, struct act_target *t)
{
    struct act *a = c->a;
    const char *ns = NULL;
    if (act_protected(a, c->d, t, &ns)) {
        snprintf(c->msg, sizeof(c->msg), "namespace '%s' is protected", ns);
        act_skip(a, c->now, c->d, c->workload, t, "protected", c->msg);
        return true;
    }
    if (!t)
        return false;
    if (t->out_of_scope) {
        act_skip(a, c->now, c->d, c->workload, t, "out_of_scope",
                 "without the runtime scope label");
        return true;
    }
    if (!t->exempt)
        return false;
    struct ledger_entry *e = c->e;
    if (e && act_stopping(a))
        return true; /* the withdrawal waits for the next start, with the entry */
    if (e && e->root_kind[0] &&
        c->b->withdraw(c->b, e, "the workload is labelled " ANNOT_EXEMPT "=true", c->err,
                       sizeof(c->err)) != ACT_OK)
        log_warn("cannot withdraw the notice on %s: %s", e->target, c->err);
    if (e) {
        ledger_remove(&a->ledger, e);
        c->e = NULL;
        act_save(a);
    }
    act_skip(a, c->now, c->d, c->workload, t, "exempt", "labelled " ANNOT_EXEMPT "=true");
    return true;
}

/*
 * One `reclaim` decision: step with what is known, learn the object when the step needs it,
 * then step again until the lifecycle rests (a notice period of 0 goes from `none` to an
 * action in one cycle).
 */
static void act_candidate(struct act *a, const struct decision_rec *d, const char *workload,
                          double now)
{
    const struct rule *r = d->rule;
    bool dry = d->dry_run || r->dry_run;
    struct act_target t = {0};
    bool have_t = false;
    struct act_ctx c = {.a = a, .d = d, .workload = workload, .now = now, .result = "ok"};
    notice_init(&c.seen);
    c.b = act_backend_for(a, r->action);
    if (!dry) {
        /* A dry-run report of an earlier run on the same state file (the rule, or the whole
           run, has gone live): it never was on the object, so it stands for no notice; the
           live lifecycle gives its own, and the report must not stay beside it, to be
           withdrawn ("spared") after the live action. Removed before c.e is looked up: the
           ledger is an array. */
        struct ledger_entry *old = ledger_find(&a->ledger, r->name, workload, NULL, LEDGER_DRY_RUN);
        if (old) {
            log_info("%s of rule '%s': the dry-run report is superseded now that the rule is "
                     "live",
                     workload, r->name);
            ledger_remove(&a->ledger, old);
            act_save(a);
        }
    }
    c.e = ledger_find(&a->ledger, r->name, workload, NULL, LEDGER_PENDING);
    if (!c.e && dry)
        c.e = ledger_find(&a->ledger, r->name, workload, NULL, LEDGER_DRY_RUN);
    /* Leadership is asked once per candidate (the write-ahead asks again before the action);
       a dry run already reported needs no call and does not ask. */
    struct lc_facts f = {.dry_run = dry};
    f.leader = lc_state_of(c.e) == LC_DRY_RUN || !act_stopping(a);
    struct lc_step st;
    act_step(&c, &f, &st);
    act_explain(&c, &st);
    act_exec(&c, &st); /* the proof extension, or the skip of a dry-run rule's notice */
    if (st.why != LC_WHY_NEED_OBJECT)
        return;

    if (act_guarded(&c, NULL))
        return;
    if (!c.b && !dry) {
        snprintf(c.msg, sizeof(c.msg), "no %s backend configured for action '%s'",
                 r->action == ACTION_STOP ? "container runtime (--runtime.socket)"
                                          : "Kubernetes (--kube.api-url)",
                 rules_action_name(r->action));
        act_skip(a, now, d, workload, NULL, "no_backend", c.msg);
        return;
    }
    if (c.b) {
        c.res = c.b->resolve(c.b, d, &t, c.err, sizeof(c.err));
        if (c.res == ACT_CANCELLED)
            return; /* stopping: nothing was learnt about the workload */
        if (c.res != ACT_OK && c.res != ACT_GONE && c.res != ACT_CONFLICT) {
            log_warn("cannot resolve %s of rule '%s': %s", workload, r->name, c.err);
            act_skip(a, now, d, workload, NULL, act_result_name(c.res), c.err);
            return;
        }
        if (c.res != ACT_OK) {
            f.object = c.res == ACT_GONE ? LC_OBJ_GONE : LC_OBJ_CHANGED;
            c.reason = act_result_name(c.res);
            snprintf(c.msg, sizeof(c.msg), "%s", c.err);
            if (!c.e)
                log_warn("cannot resolve %s of rule '%s': %s", workload, r->name, c.err);
            act_step(&c, &f, &st);
            act_exec(&c, &st);
            return;
        }
        have_t = true;
        c.t = &t;
        if (act_guarded(&c, &t))
            goto out;
        c.target = act_target_name(&t, r->action);
        act_read_notice(&c);
        act_note_restart(a, &t, now);
        f.young = act_young(d, &t);
    }
    /* Without a backend a dry run has nothing to resolve: the report is about the decision. */
    f.object = LC_OBJ_SAME;
    if (!c.e) {
        act_step(&c, &f, &st);
        /* Proven over the whole window before a notice or a dry-run report (issue 26). */
        if (act_needs_proof(lc_state_of(c.e), &st) && (f.unproven = act_unproven(&c)))
            act_step(&c, &f, &st);
        /* Confirmed before the notice (an owner reads it as certain) and again before acting. */
        if (st.why == LC_WHY_NOTICE && (f.unconfirmed = act_unconfirmed(&c)))
            act_step(&c, &f, &st);
        if ((st.why == LC_WHY_NOTICE || st.next == LC_DRY_RUN) && st.why != LC_WHY_UNCONFIRMED &&
            st.why != LC_WHY_UNPROVEN) {
            if (c.t && act_known_elsewhere(&c, dry))
                goto out;
            act_build_notice(c.d, now, now + r->notice_period, c.t ? t.chain[0].uid : NULL, NAN,
                             c.t ? t.restore_hint : NULL, &c.n, &c.built, &c.built_ok);
        }
        if (!c.e) {
            act_explain(&c, &st);
            act_exec(&c, &st);
        }
        if (!c.e || c.e->state != LEDGER_PENDING)
            goto out; /* no notice (not posted, a dry run, a skip) */
    }
    /* Noticed or acting: a notice period of 0, or a notice adopted, continues here. */
    f.object = act_lc_object(c.e, &t);
    act_step(&c, &f, &st);
    if (st.why == LC_WHY_ACT && act_reconcile(&c))
        goto out;
    if (st.why == LC_WHY_ACT && (f.kept = act_kept(&c)))
        act_step(&c, &f, &st);
    if (st.why == LC_WHY_ACT && (f.capped = act_capped(&c)))
        act_step(&c, &f, &st);
    if (st.why == LC_WHY_ACT && (f.unconfirmed = act_unconfirmed(&c)))
        act_step(&c, &f, &st);
    if (st.why == LC_WHY_ACT && (f.unproven = act_unproven(&c)))
        act_step(&c, &f, &st);
    act_explain(&c, &st);
    act_exec(&c, &st);
out:
    a->reproved = NULL;
    notice_free(&c.seen);
    notice_free(&c.built);
    free((char *)c.n.message);
    free((char *)c.n.annotation);
    free(c.target);
    if (have_t && c.b->target_free)
        c.b->target_free(c.b, &t);
}

/* How soon a reclaimed workload ran again, as the `within` label of returns_total. */
static const char *act_within(double seconds)
{
    return seconds <= 3600 ? "1h" : seconds <= 86400 ? "1d" : "more";
}

/*
 * The GPU time actions freed, per rule and namespace: for each acted entry whose object the
 * backend can watch, the devices it held times the time it was seen to stay stopped, from
 * the action until it runs again or is gone. Each cycle asks the backend what became of the
 * object (one GET or inspect per entry still counting; entries live ACT_DONE_TTL and actions
 * are capped per hour, so they are few). Only what was seen counts: an interval the object
 * could not be read, or this process was not acting, is left out, and an object found gone
 * ends the count at the last time it was seen stopped. A return ends it at the restore's
 * time when the object carries one, else at the last cycle it was seen stopped, and is
 * counted by how long after the action it came (returns_total{within}).
 */
static void act_freed(struct act *a, double now)
{
    bool resync = a->resync, changed = false;
    a->resync = false;
    /* Without a backend that can tell, nothing is asked and nothing counted: the pass would
       only move `accounted`, which nothing else reads (not saved, ledger.h). The backtest's
       engines (their own count of the GPU time freed) passed over every acted entry at every
       cycle for nothing. */
    if (!(a->kube && a->kube->back) && !(a->runtime && a->runtime->back))
        return;
    for (size_t i = 0; i < a->ledger.n; i++) {
        struct ledger_entry *e = &a->ledger.v[i];
        if (e->state != LEDGER_ACTED || !(e->allocated > 0) || !isnan(e->returned))
            continue;
        if (resync || isnan(e->accounted) || e->accounted > now)
            e->accounted = now;
        struct act_backend *b = e->root_kind[0] ? a->kube : a->runtime;
        if (!b || !b->back || act_stopping(a))
            continue;
        double when = NAN;
        char err[512] = "", key[256];
        snprintf(key, sizeof(key), "freed:%s", e->target);
        enum act_back r = b->back(b, e, &when, err, sizeof(err));
        double from = e->accounted, to = from;
        if (r == ACT_BACK_STOPPED)
            to = now;
        else if (r == ACT_BACK_RUNNING && when > from)
            to = when < now ? when : now;
        if (to > from)
            act_count_addv(&a->freed, e->rule, e->root_ns, NULL, e->allocated * (to - from));
        e->accounted = r == ACT_BACK_UNKNOWN ? now : to;
        if (r == ACT_BACK_UNKNOWN) {
            log_cond(key, LOG_WARN,
                     "cannot tell whether %s, acted on by rule '%s', is still "
                     "stopped: %s; its freed GPU time is not counted meanwhile",
                     e->target, e->rule, err);
            continue;
        }
        log_cond_clear(key);
        if (r == ACT_BACK_STOPPED)
            continue;
        e->returned = r == ACT_BACK_RUNNING ? (isfinite(when) && when <= now ? when : now) : to;
        changed = true;
        if (r == ACT_BACK_RUNNING) {
            char since[DUR_LEN];
            dur_format(since, sizeof(since), e->returned - e->updated);
            act_count_add(&a->returns, e->rule, e->root_ns, act_within(e->returned - e->updated));
            log_info("%s, acted on by rule '%s', runs again %s after the action", e->target,
                     e->rule, since);
        } else {
            log_info("%s, acted on by rule '%s', is gone (%s): its freed GPU time was counted "
                     "up to when it was last seen stopped",
                     e->target, e->rule, err[0] ? err : "deleted or replaced");
        }
    }
    if (changed)
        act_save(a);
}

void act_cycle(struct act *a, const struct decisions *ds, double now)
{
    char **keys = xcalloc(ds->n ? ds->n : 1, sizeof(*keys));
    for (size_t i = 0; i < ds->n; i++)
        keys[i] = labels_format(&ds->v[i].identity);
    act_cycle_keyed(a, ds, keys, now);
    for (size_t i = 0; i < ds->n; i++)
        free(keys[i]);
    free(keys);
}

void act_cycle_keyed(struct act *a, const struct decisions *ds, char *const *keys, double now)
{
    if (act_stopping(a)) {
        a->resync = true;
        return; /* no call at all; expiry and spares wait for the next start */
    }
    a->last_now = now;
    act_freed(a, now);
    a->ncycle = 0;
    struct act_expire_ctx x = {a, now};
    size_t before = a->ledger.n, before_actions = a->ledger.nactions;
    ledger_expire(&a->ledger, now, a->pending_ttl, a->done_ttl, act_on_expired, &x);
    if (a->ledger.n != before || a->ledger.nactions != before_actions)
        act_save(a);

    size_t n_before = a->ledger.n;
    act_review(a, ds, keys, now);
    if (a->ledger.n != n_before)
        act_save(a);

    for (size_t i = 0; i < ds->n; i++) {
        const struct decision_rec *d = &ds->v[i];
        if (d->decision != DECISION_RECLAIM || d->rule->action == ACTION_REPORT)
            continue;
        act_candidate(a, d, keys[i], now);
    }
    act_flush(a);
}

/* ---- metrics ---------------------------------------------------------------------------- */

void act_metrics(const struct act *a, struct expo *e)
{
    for (size_t i = 0; i < a->actions.n; i++) {
        const struct act_count *c = &a->actions.v[i];
        expo_put(e, EMX(ACTIONS_TOTAL), c->n, "rule", c->rule, "action", c->a, "result", c->b,
                 (const char *)NULL);
    }
    for (size_t i = 0; i < a->notices.n; i++)
        expo_put(e, EMX(NOTICES_TOTAL), a->notices.v[i].n, "rule", a->notices.v[i].rule,
                 (const char *)NULL);
    for (size_t i = 0; i < a->spared.n; i++)
        expo_put(e, EMX(SPARED_TOTAL), a->spared.v[i].n, "rule", a->spared.v[i].rule,
                 (const char *)NULL);
    for (size_t i = 0; i < a->skipped.n; i++)
        expo_put(e, EMX(SKIPPED_TOTAL), a->skipped.v[i].n, "rule", a->skipped.v[i].rule, "reason",
                 a->skipped.v[i].a, (const char *)NULL);
    for (size_t i = 0; i < a->freed.n; i++)
        expo_put(e, EMX(FREED_GPU_SECONDS_TOTAL), a->freed.v[i].n, "rule", a->freed.v[i].rule,
                 "namespace", a->freed.v[i].a, (const char *)NULL);
    for (size_t i = 0; i < a->returns.n; i++)
        expo_put(e, EMX(RETURNS_TOTAL), a->returns.v[i].n, "rule", a->returns.v[i].rule,
                 "namespace", a->returns.v[i].a, "within", a->returns.v[i].b, (const char *)NULL);
    /* Devices held by objects still stopped, per rule and namespace (summed here: few). */
    struct act_counts held = {0};
    size_t pending = 0;
    for (size_t i = 0; i < a->ledger.n; i++) {
        const struct ledger_entry *le = &a->ledger.v[i];
        pending += le->state == LEDGER_PENDING;
        if (le->state == LEDGER_ACTED && le->allocated > 0 && isnan(le->returned))
            act_count_addv(&held, le->rule, le->root_ns, NULL, le->allocated);
    }
    for (size_t i = 0; i < held.n; i++)
        expo_put(e, EMX(RECLAIMED_GPUS), held.v[i].n, "rule", held.v[i].rule, "namespace",
                 held.v[i].a, (const char *)NULL);
    act_counts_free(&held);
    expo_put(e, EMX(PENDING_NOTICES), (double)pending, (const char *)NULL);
    expo_put(e, EMX(ACTIONS_LAST_HOUR),
             isnan(a->last_now) ? 0.0 : (double)ledger_actions_last_hour(&a->ledger, a->last_now),
             (const char *)NULL);
    expo_put(e, EMX(STATE_SAVE_FAILURES_TOTAL), (double)a->save_failures, (const char *)NULL);
    expo_put(e, EMX(AUDIT_WRITE_FAILURES_TOTAL), (double)audit_failures(a->audit),
             (const char *)NULL);
    notify_metrics(a->notify, e);
}
