/*
 * The backtest simulation (backtest.h): the cycle loop's data source, the simulated world
 * behind the action engine, and the arithmetic of what each action freed.
 *
 * Why the real engine: `run --no-dry-run` decides when to notice, when the notice period is
 * over, when a notice is withdrawn (spared), what the caps allow and that an object is acted
 * on once, in act.c and lifecycle.c. A backtest that re-derived those rules would drift from
 * them at the first fix; driving act_cycle with a backend that answers from the history
 * keeps one implementation. The backend here never fails. What the history cannot show (owner
 * chains, kinds, keep-until, exempt labels) it asks of the cluster where it can (bt_cfg.lookup:
 * `run`'s own resolve, once per workload, reads only), and a workload `run` would never act
 * on is handed to the engine as exempt, so the engine skips it exactly where `run` would
 * (before any notice, sharing no cap); without that access the output says what was not
 * checked.
 *
 * The simulated world: each workload (rule, identity) is one object created before the
 * range. The engine's action stops it; from then its series leave the data decide() sees
 * (after a real action they end), and the devices it held come off the pending demand of the
 * pressure rules, until the history shows its activity at or above its threshold again: its
 * return, when a new object of the same root owner starts. The engine learns the
 * restart as it learns a `restore` (the pod's creation after the action, act_note_restart)
 * and keeps the workload too young until a whole idle window after it. A workload whose
 * allocation ends in the history before it returns is gone: its GPUs were freed up to the
 * last cycle it was seen allocated (never more than the history proves).
 */
#include "backtest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "act.h"
#include "audit.h"
#include "btdue.h"
#include "dur.h"
#include "fetch.h"
#include "file.h"
#include "rfc3339.h"
#include "pressure.h"
#include "replay.h"
#include "report.h"
#include "series.h"

const char bt_not_simulated[] =
    "not simulated: --kube.confirm-pressure; after a real reclaim the history shows no "
    "activity, so returns are only seen where the workload kept running (dry-run periods, "
    "history before enforcement)";

void bt_lookup_checked(const struct bt_result *r, struct sbuf *out)
{
    bool kube = false, runtime = false;
    for (size_t i = 0; i < r->nrules; i++) {
        runtime |= r->rule[i].action == ACTION_STOP;
        kube |= r->rule[i].action != ACTION_STOP;
    }
    /* This result's workloads only: the look-up may serve several simulations. */
    size_t c[2][3] = {{0}};
    for (size_t i = 0; i < r->nwl; i++)
        if (r->wl[i].lookup)
            c[r->wl[i].lookup->runtime][r->wl[i].lookup->state]++;
    btl_note(r->cfg.lookup, kube, runtime, c, out);
}

void bt_lookup_note(const struct bt_result *r, const char *indent, struct sbuf *out)
{
    struct sbuf b = {0};
    bt_lookup_checked(r, &b);
    if (b.len)
        sbuf_printf(out, "%s%s\n", indent, b.buf);
    sbuf_free(&b);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < r->nwl; i++) {
            const struct bt_workload *w = &r->wl[i];
            if (w->lookup && w->lookup->state == (pass ? BTL_UNCHECKED : BTL_LEFT_OUT))
                sbuf_printf(out, "%s  %s: %s %s: %s\n", indent,
                            pass ? "not checked (counted)" : "left out", r->rule[w->rule].name,
                            w->key, w->lookup->why);
        }
}

/* ---- source: one evaluation per cycle ----------------------------------------------------- */

struct bt_per_cycle {
    struct bt_source base;
    struct promq *q;
    const struct ruleset *rs;
    double from, interval;
};

size_t bt_cycles(double from, double to, double interval)
{
    if (!(interval > 0) || !(to >= from))
        return 0;
    /* The small slack keeps `to` itself when (to - from) / interval is whole but rounds down. */
    return (size_t)floor((to - from) / interval + 1e-9) + 1;
}

static int per_cycle_next(struct bt_source *s, double *t, struct rule_data *data)
{
    struct bt_per_cycle *p = (struct bt_per_cycle *)s;
    if (s->done >= s->total)
        return 0;
    *t = p->from + (double)s->done * p->interval;
    fetch_rules(p->q, p->rs, *t, data);
    s->done++;
    return 1;
}

static void per_cycle_free(struct bt_source *s)
{
    free(s);
}

struct bt_source *bt_source_per_cycle(struct promq *q, const struct ruleset *rs, double from,
                                      double to, double interval)
{
    struct bt_per_cycle *p = xcalloc(1, sizeof(*p));
    p->base.next = per_cycle_next;
    p->base.free = per_cycle_free;
    p->base.total = bt_cycles(from, to, interval);
    p->q = q;
    p->rs = rs;
    p->from = from;
    p->interval = interval;
    return &p->base;
}

/* ---- source: the replay, one read of the history (replay.h) ------------------------------ */

struct bt_replay {
    struct bt_source base;
    struct replay *r;
};

static bool replay_src_carried(struct bt_source *s, size_t rule)
{
    return replay_carried(((struct bt_replay *)s)->r, rule);
}

static int replay_src_next(struct bt_source *s, double *t, struct rule_data *data)
{
    struct bt_replay *p = (struct bt_replay *)s;
    int rc = replay_next(p->r, t, data);
    struct replay_stats st;
    replay_stats(p->r, &st);
    s->done = st.cycles_done;
    s->total = st.cycles_total;
    return rc;
}

static void replay_src_free(struct bt_source *s)
{
    replay_close(((struct bt_replay *)s)->r);
    free(s);
}

static bool replay_src_points(struct bt_source *s, size_t rule, double after, bool first_only,
                              bool (*want)(void *arg, const struct labels *l), void *arg,
                              struct matrix *out)
{
    return replay_points(((struct bt_replay *)s)->r, rule, after, first_only, want, arg, out);
}

struct bt_source *bt_source_replay(struct promq *q, const struct ruleset *rs, double from,
                                   double to, double interval, bool window_stats, char *err,
                                   size_t errlen)
{
    return bt_source_replay_fold(q, rs, from, to, interval, window_stats, NULL, err, errlen);
}

struct bt_source *bt_source_replay_fold(struct promq *q, const struct ruleset *rs, double from,
                                        double to, double interval, bool window_stats,
                                        const struct replay_fold *fold, char *err, size_t errlen)
{
    struct replay_cfg rc = {.q = q,
                            .rs = rs,
                            .from = from,
                            .to = to,
                            .interval = interval,
                            .carry = true,
                            .window_stats = window_stats,
                            .fold = fold};
    struct replay *r = replay_open(&rc, err, errlen);
    if (!r)
        return NULL;
    struct bt_replay *p = xcalloc(1, sizeof(*p));
    p->base.next = replay_src_next;
    p->base.free = replay_src_free;
    p->base.points = replay_src_points;
    p->base.carried = replay_src_carried;
    p->base.total = bt_cycles(from, to, interval);
    p->r = r;
    return &p->base;
}

/* ---- the simulated backend ---------------------------------------------------------------- */

/* The lists whose series bt_series_wl finds the workload of, by position (btdue_memo). */
enum bt_list {
    BT_PROOFS = 0,
    BT_ACTIVITY,
    BT_COVERAGE,
    BT_ALLOCATION,
    BT_PRIORITY,
    BT_RECORDS, /* a cycle's decisions, by their identity */
    BT_POINTS,  /* the series replay_points asks about, in the order it asks */
    BT_RETURNS, /* the series bt_observe_rule looks for returns in (its answer's order) */
    BT_LISTS
};
/* A memo's value for a series without an identity label: no workload's, ever. */
#define BT_NO_WORKLOAD SIZE_MAX

struct bt_sim {
    struct ruleset *rs;
    struct act *act;
    struct bt_result res;
    struct strset index; /* "rule\x1fkey" -> workload index + 1 */
    char **keys;         /* the strings of `index`, owned here */
    size_t nkeys;
    double now;
    size_t cycle;
    /* Per rule: the last cycle its data was read (returns are looked for since then), and
       the cycles in a row it could not be read, up to this one. */
    double *last_ok;
    size_t *err_run;
    size_t *nstopped;  /* per rule: workloads away */
    bool *first_found; /* per rule: its first point found, none can come earlier (observe) */
    size_t cap_wl, cap_rc, cap_ev;
    double *returns;  /* scratch for the medians */
    struct sbuf kbuf; /* scratch: the index key being looked up (bt_raw_key) */
    /* Per rule and list (enum bt_list): the workload (index + 1) of each series by position,
       or BT_NO_WORKLOAD (btdue_memo). */
    struct btdue_memo (*memo)[BT_LISTS];
    size_t open_notices; /* workloads with a notice standing (w->noticed set) */
    struct fsum *gpu;    /* per rule: its GPU-seconds, exact (bt_close) */
    /* The workloads away (stopped), in no order: what the observation of each cycle visits,
       instead of every workload. */
    size_t *away;
    size_t naway, cap_away;
    size_t *acted; /* the workloads acted on this cycle (bt_sim_acted) */
    size_t nacted, cap_acted;
    /* The live decisions' array, kept from cycle to cycle: allocating (and zeroing) room for
       every record at every cycle cost 4 MB a cycle at 10,000 workloads. */
    struct decision_rec *live;
    size_t *live_wl; /* live[j]'s workload, for bt_resolve of a candidate of this cycle */
    char **live_key; /* live[j]'s workload's key (act_cycle_keyed): lent, the workload's */
    size_t cap_live, nlive;
    /* figures_only: the free slots of res.rc, the returns within return_within of each
       rule (their durations, for the median), and the ledger's size after its last
       compaction. */
    size_t *free_rc;
    size_t nfree_rc;
    double **within;
    size_t *nwithin, *cap_within;
    size_t ledger_kept;
    /* Per workload (by index): the objects bt_resolve hands the engine, built once per
       object generation and lent (bt_target_free does not free them): with an hourly cap
       that binds, every held-back candidate is resolved every cycle. */
    struct bt_objs *objs;
    size_t nobjs;
};

struct bt_objs {
    bool have;
    unsigned gen;            /* the workload's generation they were built for */
    struct act_obj chain[2]; /* the current object, the root owner */
};

struct bt_backend {
    struct act_backend base;
    struct bt_sim *sim;
};

/*
 * The index key of the workload of rule `ri` whose identity labels are in `l` (a decision's
 * identity, or any series' labels), into s->kbuf: the rule and each identity value with its
 * length, so no value can run into the next (bytes, compared by length, not a string). False when
 * `l` lacks an identity label (decide.c ignores such a series). Built in place each time: one
 * look-up per decision and cycle must not allocate.
 */
static bool bt_raw_key(struct bt_sim *s, size_t ri, const struct labels *l)
{
    const struct rule *r = &s->rs->rules[ri];
    sbuf_reset(&s->kbuf);
    /* The rule's index and each value's length as raw bytes, not printed: this runs for
       every series and decision of every cycle. */
    sbuf_add(&s->kbuf, (const char *)&ri, sizeof(ri));
    for (size_t k = 0; k < r->nidentity; k++) {
        const char *v = labels_get(l, r->identity[k]);
        if (!v)
            return false;
        size_t n = strlen(v);
        sbuf_add(&s->kbuf, (const char *)&n, sizeof(n));
        sbuf_add(&s->kbuf, v, n);
    }
    return true;
}

/* The workload of rule `ri` with identity `id` (its identity labels only), added when new. */
static struct bt_workload *bt_find(struct bt_sim *s, size_t ri, const struct labels *id)
{
    bt_raw_key(s, ri, id);
    const void *v = strset_get(&s->index, s->kbuf.buf, s->kbuf.len);
    if (v)
        return &s->res.wl[(size_t)(uintptr_t)v - 1];
    char *k = xmalloc(s->kbuf.len + 1); /* bytes, not a string (bt_raw_key) */
    memcpy(k, s->kbuf.buf, s->kbuf.len);
    k[s->kbuf.len] = '\0';
    strset_put(&s->index, k, s->kbuf.len, (void *)(uintptr_t)(s->res.nwl + 1));
    s->keys = xgrow(s->keys, s->nkeys, sizeof(*s->keys));
    s->keys[s->nkeys++] = k;
    if (s->res.nwl == s->cap_wl) {
        s->cap_wl = s->cap_wl ? s->cap_wl * 2 : 64;
        s->res.wl = xrealloc(s->res.wl, s->cap_wl * sizeof(*s->res.wl));
    }
    struct bt_workload *w = &s->res.wl[s->res.nwl++];
    *w = (struct bt_workload){.rule = ri,
                              .key = labels_format(id),
                              .allocated = NAN,
                              .alloc_seen = NAN,
                              .noticed = NAN,
                              .back = NAN,
                              .seen_cycle = (size_t)-1};
    labels_copy(&w->identity, id);
    s->res.rule[ri].workloads++;
    return w;
}

/* The workload of a decision. */
static struct bt_workload *bt_of_decision(struct bt_sim *s, const struct decision_rec *d)
{
    struct bt_workload *w = bt_find(s, (size_t)(d->rule - s->rs->rules), &d->identity);
    if (!w->by && s->res.cfg.by) {
        const char *v = labels_get(&d->identity, s->res.cfg.by);
        if (!v)
            v = labels_get(&d->all, s->res.cfg.by);
        w->by = xstrdup(v ? v : "");
    }
    return w;
}

/* The workload of decision `d`, the i-th of its cycle's list (memo, as bt_series_wl). */
static struct bt_workload *bt_of_decision_at(struct bt_sim *s, const struct decision_rec *d,
                                             size_t i)
{
    size_t ri = (size_t)(d->rule - s->rs->rules);
    struct btdue_memo *m = &s->memo[ri][BT_RECORDS];
    size_t v = btdue_memo_get(m, i, &d->identity);
    if (v)
        return &s->res.wl[v - 1];
    struct bt_workload *w = bt_of_decision(s, d);
    btdue_memo_set(m, i, &d->identity, (size_t)(w - s->res.wl) + 1);
    return w;
}

static size_t bt_rule_index(const struct bt_sim *s, const char *name)
{
    for (size_t i = 0; i < s->rs->n; i++)
        if (strcmp(s->rs->rules[i].name, name) == 0)
            return i;
    return (size_t)-1;
}

static void bt_event_add(struct bt_sim *s, bool action, size_t wl)
{
    if (s->res.cfg.figures_only)
        return;
    if (s->res.nev == s->cap_ev) {
        s->cap_ev = s->cap_ev ? s->cap_ev * 2 : 64;
        s->res.ev = xrealloc(s->res.ev, s->cap_ev * sizeof(*s->res.ev));
    }
    s->res.ev[s->res.nev++] = (struct bt_event){.action = action, .wl = wl, .t = s->now};
}

static void bt_objs_clear(struct bt_objs *o)
{
    struct act_target t = {.nchain = 2};
    t.chain[0] = o->chain[0];
    t.chain[1] = o->chain[1];
    act_target_clear(&t);
    *o = (struct bt_objs){0};
}

static enum act_result bt_resolve(struct act_backend *b, const struct decision_rec *d,
                                  struct act_target *t, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    struct bt_sim *s = ((struct bt_backend *)b)->sim;
    /* A candidate of this cycle is one of the live records, whose workloads bt_sim_cycle
       found already: no look-up of its labels again. */
    struct bt_workload *w = d >= s->live && d < s->live + s->nlive
                                ? &s->res.wl[s->live_wl[d - s->live]]
                                : bt_of_decision(s, d);
    size_t i = (size_t)(w - s->res.wl);
    /* Asked once per workload: the first time the engine needs its object. */
    if (!w->lookup)
        w->lookup = btl_check(s->res.cfg.lookup, s->rs->kinds, d, w->key);
    const char *ns = labels_get(&d->identity, "namespace");
    ns = ns ? ns : "";
    if (i >= s->nobjs) {
        size_t n = s->nobjs ? s->nobjs : 64;
        while (n <= i)
            n *= 2;
        s->objs = xrealloc(s->objs, n * sizeof(*s->objs));
        memset(s->objs + s->nobjs, 0, (n - s->nobjs) * sizeof(*s->objs));
        s->nobjs = n;
    }
    struct bt_objs *o = &s->objs[i];
    if (o->have && (o->gen != w->gen || strcmp(o->chain[0].ns, ns) != 0))
        bt_objs_clear(o); /* a new object after a return */
    if (!o->have) {
        /* [0] the current object (a new uid after each return), [1] its root owner, stable:
           the engine notes a restart of an acted-on root as it does after `restore`. */
        o->chain[0] = (struct act_obj){.api_version = xstrdup("v1"),
                                       .kind = xstrdup("Pod"),
                                       .ns = xstrdup(ns),
                                       .name = xstrdup(w->key),
                                       .uid = xasprintf("bt-%zu-%u", i, w->gen)};
        o->chain[1] = (struct act_obj){.api_version = xstrdup("v1"),
                                       .kind = xstrdup("Workload"),
                                       .ns = xstrdup(ns),
                                       .name = xstrdup(w->key),
                                       .uid = xasprintf("bt-%zu", i)};
        o->gen = w->gen;
        o->have = true;
    }
    /* Lent: the engine only reads them, and bt_target_free leaves them here. */
    t->chain[0] = o->chain[0];
    t->chain[1] = o->chain[1];
    t->nchain = 2;
    /* What `run` would never act on, whatever the reason the look-up gave (exempt, a kind
       without a way for the action, keep-until, ...): the engine's skip of an exempt target
       is the one that comes before any notice and leaves the caps alone, as `run`'s does. */
    t->exempt = w->lookup && w->lookup->state == BTL_LEFT_OUT;
    t->running = true;
    t->created = w->created;
    t->restarted = NAN;
    t->priv = w;
    return ACT_OK;
}

static enum act_result bt_notice(struct act_backend *b, const struct act_target *t,
                                 const struct act_notice *n, char *err, size_t errlen)
{
    (void)n;
    (void)err;
    (void)errlen;
    struct bt_sim *s = ((struct bt_backend *)b)->sim;
    struct bt_workload *w = t->priv;
    s->open_notices += isnan(w->noticed);
    w->noticed = s->now;
    s->res.rule[w->rule].notices++;
    bt_event_add(s, false, (size_t)(w - s->res.wl));
    return ACT_OK;
}

static enum act_result bt_withdraw(struct act_backend *b, const struct ledger_entry *e,
                                   const char *why, char *err, size_t errlen)
{
    (void)why;
    (void)err;
    (void)errlen;
    struct bt_sim *s = ((struct bt_backend *)b)->sim;
    size_t rule = bt_rule_index(s, e->rule);
    if (rule == (size_t)-1)
        return ACT_OK;
    /* A spare is rare: a scan for the ledger's key (labels_format) will do. */
    for (size_t i = 0; i < s->res.nwl; i++) {
        struct bt_workload *w = &s->res.wl[i];
        if (w->rule == rule && strcmp(w->key, e->workload) == 0 && !isnan(w->noticed)) {
            w->noticed = NAN;
            s->open_notices--;
        }
    }
    s->res.rule[rule].spared++;
    return ACT_OK;
}

static enum act_result bt_act(struct act_backend *b, const struct act_target *t,
                              enum rule_action action, long *api_status, char *err, size_t errlen)
{
    (void)action;
    (void)err;
    (void)errlen;
    *api_status = 0;
    struct bt_sim *s = ((struct bt_backend *)b)->sim;
    struct bt_workload *w = t->priv;
    size_t slot;
    if (s->nfree_rc) {
        slot = s->free_rc[--s->nfree_rc]; /* figures_only: a closed reclaim's */
    } else {
        if (s->res.nrc == s->cap_rc) {
            s->cap_rc = s->cap_rc ? s->cap_rc * 2 : 64;
            s->res.rc = xrealloc(s->res.rc, s->cap_rc * sizeof(*s->res.rc));
        }
        slot = s->res.nrc++;
    }
    size_t wi = (size_t)(w - s->res.wl);
    s->res.rc[slot] = (struct bt_reclaim){.wl = wi,
                                          .noticed = isnan(w->noticed) ? s->now : w->noticed,
                                          .at = s->now,
                                          .devices = w->allocated,
                                          .end = NAN,
                                          .how = BT_END_OPEN};
    w->open = slot;
    if (s->naway == s->cap_away) {
        s->cap_away = s->cap_away ? s->cap_away * 2 : 64;
        s->away = xrealloc(s->away, s->cap_away * sizeof(*s->away));
    }
    w->away_at = s->naway;
    s->away[s->naway++] = wi;
    if (s->nacted == s->cap_acted) {
        s->cap_acted = s->cap_acted ? s->cap_acted * 2 : 16;
        s->acted = xrealloc(s->acted, s->cap_acted * sizeof(*s->acted));
    }
    s->acted[s->nacted++] = wi;
    w->stopped = true;
    s->nstopped[w->rule]++;
    s->open_notices -= !isnan(w->noticed);
    w->noticed = NAN;
    w->reclaims++;
    s->res.rule[w->rule].reclaims++;
    bt_event_add(s, true, wi);
    return ACT_OK;
}

static void bt_target_free(struct act_backend *b, struct act_target *t)
{
    (void)b;
    /* The chain is lent from bt_sim.objs (bt_resolve): what the engine set is freed. */
    for (size_t i = 0; i < t->nchain; i++)
        t->chain[i] = (struct act_obj){0};
    t->nchain = 0;
    act_target_clear(t);
}

static void bt_backend_free(struct act_backend *b)
{
    free(b);
}

static struct act_backend *bt_backend_new(struct bt_sim *s, const char *name)
{
    struct bt_backend *b = xcalloc(1, sizeof(*b));
    b->base = (struct act_backend){.name = name,
                                   .resolve = bt_resolve,
                                   .notice = bt_notice,
                                   .withdraw = bt_withdraw,
                                   .act = bt_act,
                                   .target_free = bt_target_free,
                                   .free = bt_backend_free};
    b->sim = s;
    return &b->base;
}

/* ---- the simulation ----------------------------------------------------------------------- */

struct bt_sim *bt_sim_new(struct ruleset *rs, const struct bt_cfg *cfg, char *err, size_t errlen)
{
    struct act_cfg ac = {.state_file = NULL,
                         .audit_file = NULL,
                         .protected_namespaces = cfg->protected_namespaces,
                         .max_actions_per_hour = cfg->max_actions_per_hour};
    struct act *a = act_new(&ac, err, errlen);
    if (!a)
        return NULL;
    struct bt_sim *s = xcalloc(1, sizeof(*s));
    s->rs = rs;
    s->act = a;
    s->res.cfg = *cfg;
    s->res.rules_file = rs->file;
    s->res.data_start = NAN;
    s->res.nrules = rs->n;
    s->res.rule = xcalloc(rs->n ? rs->n : 1, sizeof(*s->res.rule));
    s->last_ok = xcalloc(rs->n ? rs->n : 1, sizeof(double));
    s->err_run = xcalloc(rs->n ? rs->n : 1, sizeof(size_t));
    s->nstopped = xcalloc(rs->n ? rs->n : 1, sizeof(size_t));
    s->first_found = xcalloc(rs->n ? rs->n : 1, sizeof(bool));
    s->memo = xcalloc(rs->n ? rs->n : 1, sizeof(*s->memo));
    s->gpu = xcalloc(rs->n ? rs->n : 1, sizeof(*s->gpu));
    s->within = xcalloc(rs->n ? rs->n : 1, sizeof(*s->within));
    s->nwithin = xcalloc(rs->n ? rs->n : 1, sizeof(*s->nwithin));
    s->cap_within = xcalloc(rs->n ? rs->n : 1, sizeof(*s->cap_within));
    for (size_t i = 0; i < rs->n; i++) {
        s->last_ok[i] = -INFINITY;
        struct rule *r = &rs->rules[i];
        struct bt_rule_stats *st = &s->res.rule[i];
        st->name = r->name;
        st->median_return = NAN;
        /* What `run --no-dry-run` would do once the rule acts: the point of a backtest. */
        if (r->action == ACTION_REPORT && r->dry_run)
            st->simulated_as = "dryRun and action report: simulated as acting (delete)";
        else if (r->action == ACTION_REPORT)
            st->simulated_as = "action report: simulated as acting (delete)";
        else if (r->dry_run)
            st->simulated_as = "dryRun: simulated as acting";
        else
            st->simulated_as = "";
        if (r->action == ACTION_REPORT)
            r->action = ACTION_DELETE;
        r->dry_run = false;
        st->action = r->action;
    }
    act_set_kube(a, bt_backend_new(s, "backtest"));
    act_set_runtime(a, bt_backend_new(s, "backtest"));
    return s;
}

/* What a closed reclaim adds to its rule's figures beside its GPU-seconds (bt_sim_finish
   counts the same from the list without figures_only). */
static void bt_fold(struct bt_sim *s, size_t ri, const struct bt_reclaim *rc)
{
    struct bt_rule_stats *st = &s->res.rule[ri];
    if (isnan(rc->devices) || !(rc->devices > 0))
        st->unknown_devices++;
    if (rc->how != BT_END_RETURN)
        return;
    st->returns++;
    if (!(rc->end - rc->at <= s->res.cfg.return_within))
        return;
    if (s->nwithin[ri] == s->cap_within[ri]) {
        s->cap_within[ri] = s->cap_within[ri] ? 2 * s->cap_within[ri] : 16;
        s->within[ri] = xrealloc(s->within[ri], s->cap_within[ri] * sizeof(double));
    }
    s->within[ri][s->nwithin[ri]++] = rc->end - rc->at;
}

/* Close workload w's open reclaim at `end`. */
static void bt_close(struct bt_sim *s, struct bt_workload *w, double end, enum bt_end how)
{
    struct bt_reclaim *rc = &s->res.rc[w->open];
    rc->end = end < rc->at ? rc->at : end;
    rc->how = how;
    if (!isnan(rc->devices) && rc->devices > 0) {
        double gs = rc->devices * (rc->end - rc->at);
        w->gpu_seconds += gs;
        /* Exact: the figure must not depend on the order reclaims close in (recommend's
           fast pass and its engine close them in other orders). */
        fsum_add(&s->gpu[w->rule], gs);
        s->res.rule[w->rule].gpu_seconds = fsum_value(&s->gpu[w->rule]);
    }
    w->stopped = false;
    s->nstopped[w->rule]--;
    size_t last = s->away[--s->naway];
    s->away[w->away_at] = last;
    s->res.wl[last].away_at = w->away_at;
    w->gen++;
    if (s->res.cfg.figures_only) {
        bt_fold(s, w->rule, rc);
        s->free_rc = xgrow(s->free_rc, s->nfree_rc, sizeof(*s->free_rc));
        s->free_rc[s->nfree_rc++] = w->open;
    }
}

/* Any workload of rule `ri` away (reclaimed and not back)? */
static bool bt_any_stopped(const struct bt_sim *s, size_t ri)
{
    return s->nstopped[ri] > 0;
}

/*
 * The workload of rule `ri` a series belongs to, or NULL (no identity label, or no workload
 * of it decided yet), the series being at position j of list `list` (memo: the same
 * answer as the key's look-up, without building the key when the series is where it was).
 */
static struct bt_workload *bt_series_wl(struct bt_sim *s, size_t ri, enum bt_list list, size_t j,
                                        const struct labels *l)
{
    struct btdue_memo *m = &s->memo[ri][list];
    size_t v = btdue_memo_get(m, j, l);
    if (v == BT_NO_WORKLOAD)
        return NULL;
    if (v)
        return &s->res.wl[v - 1];
    if (!bt_raw_key(s, ri, l)) {
        btdue_memo_set(m, j, l, BT_NO_WORKLOAD); /* its labels decide that, for good */
        return NULL;
    }
    const void *got = strset_get(&s->index, s->kbuf.buf, s->kbuf.len);
    if (!got)
        return NULL; /* not noted: the workload may be added later */
    btdue_memo_set(m, j, l, (size_t)(uintptr_t)got);
    return &s->res.wl[(size_t)(uintptr_t)got - 1];
}

/* The stopped workload of rule `ri` the series at position j of `list` belongs to, or NULL. */
static struct bt_workload *bt_series_stopped_at(struct bt_sim *s, size_t ri, enum bt_list list,
                                                size_t j, const struct labels *l)
{
    struct bt_workload *w = bt_series_wl(s, ri, list, j, l);
    return w && w->stopped ? w : NULL;
}

/* replay_points' filter: the series of a workload of rule `ri` away. */
struct bt_stopped_arg {
    struct bt_sim *s;
    size_t ri;
    size_t k; /* the series asked about so far: its position for the memo */
};

static bool bt_stopped_series(void *arg, const struct labels *l)
{
    struct bt_stopped_arg *a = arg;
    return bt_series_stopped_at(a->s, a->ri, BT_POINTS, a->k++, l) != NULL;
}

static void bt_close_observed(struct bt_sim *s, size_t ri, double upto);

/*
 * The first time in (after, upto] that an activity series of a stopped workload of rule `ri`
 * reaches its threshold: its return, which closes its reclaim; and the stopped workloads whose
 * allocation the history no longer shows: gone, their GPUs freed up to the last cycle that
 * showed it. Only from data that was read (the caller checks).
 */
static void bt_observe_rule(struct bt_sim *s, size_t ri, const struct rule_data *rd, double after,
                            double upto, struct bt_source *src)
{
    if (!bt_any_stopped(s, ri))
        return;
    /* A source of proofs hands the points of (after, upto] the grids would have held. */
    struct matrix pts = {0};
    const struct matrix *act = &rd->activity;
    struct bt_stopped_arg sa = {s, ri, 0};
    if (rd->has_proofs && src && src->points &&
        src->points(src, ri, after, false, bt_stopped_series, &sa, &pts))
        act = &pts;
    for (size_t i = 0; i < act->n; i++) {
        const struct series *se = &act->s[i];
        struct bt_workload *w = bt_series_stopped_at(s, ri, BT_RETURNS, i, &se->labels);
        /* Several series (GPUs) per workload: the earliest crossing of any is the return. */
        for (size_t j = 0; w && j < se->n; j++) {
            const struct point *p = &se->p[j];
            if (!(p->t > after) || p->t > upto)
                continue;
            if (isfinite(p->v) && p->v * 100.0 >= w->threshold) {
                if (!(w->back <= p->t))
                    w->back = p->t;
                break;
            }
        }
    }
    matrix_free_lent(&pts); /* replay_points lends the labels */
    for (size_t i = 0; i < rd->allocation.n; i++) {
        const struct series *se = &rd->allocation.s[i];
        struct bt_workload *w = bt_series_stopped_at(s, ri, BT_ALLOCATION, i, &se->labels);
        if (w && se->n && se->p[se->n - 1].v > 0)
            w->alloc_seen = upto;
    }
    bt_close_observed(s, ri, upto);
}

/* Close the reclaim of stopped workload w if the observation up to `upto` ended it: a
   return (w->back), or an allocation no longer shown (w->alloc_seen not upto). */
static void bt_close_one(struct bt_sim *s, struct bt_workload *w, double upto)
{
    if (!isnan(w->back)) {
        bt_close(s, w, w->back, BT_END_RETURN);
        w->created = w->back; /* the owner's restart: a fresh idle window after it */
        w->back = NAN;
    } else if (w->alloc_seen != upto) {
        bt_close(s, w, isnan(w->alloc_seen) ? s->res.rc[w->open].at : w->alloc_seen, BT_END_GONE);
        w->created = upto; /* anything under this identity later is a new object */
    }
}

/* bt_close_one for each of rule ri's stopped workloads. */
static void bt_close_observed(struct bt_sim *s, size_t ri, double upto)
{
    /* From the end: a close moves the last workload away into the place it leaves, one
       already visited. The order of the closes changes no figure (bt_close). */
    for (size_t k = s->naway; k-- > 0;) {
        struct bt_workload *w = &s->res.wl[s->away[k]];
        if (w->rule == ri)
            bt_close_one(s, w, upto);
    }
}

/* Track the runs of cycles a rule could not be evaluated in (exit status 3 names them). */
static void bt_failure_note(struct bt_rule_stats *st, double t, double interval, const char *msg)
{
    st->error_cycles++;
    struct bt_failure *f = st->nfail ? &st->fail[st->nfail - 1] : NULL;
    if (f && t - f->to <= interval * 1.5) {
        f->to = t;
        f->cycles++;
        return;
    }
    st->fail = xgrow(st->fail, st->nfail, sizeof(*st->fail));
    f = &st->fail[st->nfail++];
    *f = (struct bt_failure){.from = t, .to = t, .cycles = 1};
    str_copy(f->msg, sizeof(f->msg), msg);
}

void bt_sim_observe(struct bt_sim *s, double t, const struct rule_data *data, struct bt_source *src)
{
    for (size_t i = 0; i < s->rs->n; i++) {
        struct bt_rule_stats *st = &s->res.rule[i];
        const struct rule_data *rd = &data[i];
        if (rd->error || rd->pending_error)
            bt_failure_note(st, t, s->res.cfg.interval, rd->errmsg);
        s->err_run[i] = rd->error ? s->err_run[i] + 1 : 0;
        /*
         * The first point of each series (a source of proofs: asked only while a point of
         * this cycle's grid could still be earlier than the earliest seen). Once a cycle
         * found the rule's first points, and the cycles are whole steps apart (every cycle's
         * grid has the same times), no later one can find an earlier point: a point at a time
         * g before that cycle's end, in a later window, was in that cycle's window too, made
         * of the same samples (those of its step). Asking again cost a pass over every
         * series' whole window per cycle for a lookback's worth of cycles (most of a
         * `recommend` whose confirmed timer is a day long).
         */
        int64_t iv = llround(s->res.cfg.interval * 1000.0), st_ms = rd->proof_params.step_ms;
        bool same_grid = st_ms > 0 && (double)iv == s->res.cfg.interval * 1000.0 && iv % st_ms == 0;
        struct matrix first = {0};
        const struct matrix *act = &rd->activity;
        bool asked = false;
        if (rd->has_proofs && src && src->points && !rd->error &&
            !(s->res.data_start <= rd->start) && !(same_grid && s->first_found[i]) &&
            src->points(src, i, -INFINITY, true, NULL, NULL, &first)) {
            act = &first;
            asked = true;
        }
        for (size_t j = 0; j < act->n; j++) {
            if (act->s[j].n && !(act->s[j].p[0].t >= s->res.data_start))
                s->res.data_start = act->s[j].p[0].t;
            s->first_found[i] |= asked && act->s[j].n > 0;
        }
        matrix_free_lent(&first);
        /*
         * A failed read says nothing about a return nor an end: the next cycle that reads the
         * data looks back to the last one that did (as far as its range reaches: a return
         * older than the rule's lookback is found late, at the first crossing still in range).
         */
        if (!rd->error) {
            bt_observe_rule(s, i, rd, s->last_ok[i], t, src);
            s->last_ok[i] = t;
        }
    }
}

size_t bt_sim_open_notices(const struct bt_sim *s)
{
    return s->open_notices;
}

size_t bt_sim_workload(struct bt_sim *s, size_t rule, const struct labels *identity)
{
    if (!bt_raw_key(s, rule, identity))
        return SIZE_MAX;
    const void *v = strset_get(&s->index, s->kbuf.buf, s->kbuf.len);
    return v ? (size_t)(uintptr_t)v - 1 : SIZE_MAX;
}

void bt_sim_observe_some(struct bt_sim *s, double t, const size_t *wl, size_t n,
                         double (*back)(void *arg, size_t wl, double after, double upto),
                         double (*alloc_last)(void *arg, size_t wl), void *arg)
{
    for (size_t ri = 0; ri < s->rs->n; ri++)
        s->err_run[ri] = 0;
    for (size_t k = 0; k < n; k++) {
        if (wl[k] >= s->res.nwl || !s->res.wl[wl[k]].stopped)
            continue;
        struct bt_workload *w = &s->res.wl[wl[k]];
        double b = back(arg, wl[k], s->last_ok[w->rule], t);
        if (!isnan(b) && !(w->back <= b))
            w->back = b;
        /* What bt_sim_observe would have left in alloc_seen: t at each cycle that
           showed the devices, so the last of them; one at or before the reclaim changes
           no close (bt_close ends a reclaim no earlier than it began). */
        double a = alloc_last(arg, wl[k]);
        if (!isnan(a) && !(w->alloc_seen >= a))
            w->alloc_seen = a;
        bt_close_one(s, w, t);
    }
    for (size_t ri = 0; ri < s->rs->n; ri++)
        s->last_ok[ri] = t;
}

/* Drop from `m` the series of the workloads of rule `ri` away; true when any was. Lent
   labels (rule_data.instants_lent) are not the matrix's to free. */
static bool bt_hide_matrix(struct bt_sim *s, size_t ri, enum bt_list list, struct matrix *m,
                           bool lent)
{
    size_t kept = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (bt_series_stopped_at(s, ri, list, i, &m->s[i].labels)) {
            if (lent)
                m->s[i].labels = (struct labels){0};
            series_free(&m->s[i]);
            continue;
        }
        m->s[kept++] = m->s[i];
    }
    bool hid = kept != m->n;
    m->n = kept;
    return hid;
}

/*
 * The pending demand of a DuringGPUPressure rule less the devices of the workloads away for
 * the same resource: in the simulated world those GPUs went to the pods waiting for them,
 * which the history (where nothing was freed) still shows waiting. Without this, every cycle
 * of one pressure spell would reclaim another workload for the same demand.
 */
static bool bt_pending_less_freed(struct bt_sim *s, const struct rule *r, struct matrix *pending)
{
    bool changed = false;
    for (size_t i = 0; i < pending->n; i++) {
        struct series *se = &pending->s[i];
        const char *res = labels_get(&se->labels, r->resource_label);
        if (!res || !se->n)
            continue;
        char key[96], wkey[96];
        pressure_sanitize(res, key, sizeof(key));
        double away = 0;
        for (size_t k = 0; k < s->res.nwl; k++) {
            const struct bt_workload *w = &s->res.wl[k];
            const struct bt_reclaim *rc = w->stopped ? &s->res.rc[w->open] : NULL;
            if (!rc || !(rc->devices > 0) || !w->resource)
                continue;
            pressure_sanitize(w->resource, wkey, sizeof(wkey));
            away += strcmp(key, wkey) == 0 ? rc->devices : 0;
        }
        for (size_t j = 0; away > 0 && j < se->n; j++) {
            se->p[j].v = isfinite(se->p[j].v) ? fmax(0, se->p[j].v - away) : se->p[j].v;
            changed = true;
        }
    }
    return changed;
}

/* Drop from rule `ri`'s proofs the series of its workloads away; true when any was. */
static bool bt_hide_proofs(struct bt_sim *s, size_t ri, struct rule_data *rd)
{
    size_t kept = 0;
    for (size_t i = 0; i < rd->nproofs; i++) {
        struct rule_proof *rp = &rd->proofs[i];
        if (bt_series_stopped_at(s, ri, BT_PROOFS, i, &rp->s.labels)) {
            if (!rd->proofs_lent) {
                labels_free(&rp->s.labels);
                free(rp->p);
                free(rp->win);
            }
            continue;
        }
        rd->proofs[kept++] = *rp;
    }
    bool hid = kept != rd->nproofs;
    rd->nproofs = kept;
    return hid;
}

bool bt_sim_hide(struct bt_sim *s, struct rule_data *data)
{
    bool hid = false;
    bool away = false;
    for (size_t i = 0; i < s->rs->n; i++)
        away |= bt_any_stopped(s, i);
    for (size_t i = 0; away && i < s->rs->n; i++)
        if (s->rs->rules[i].policy == POLICY_DURING_PRESSURE && !data[i].pending_error)
            hid |= bt_pending_less_freed(s, &s->rs->rules[i], &data[i].pending);
    for (size_t i = 0; i < s->rs->n; i++) {
        if (!bt_any_stopped(s, i))
            continue;
        if (data[i].has_proofs)
            hid |= bt_hide_proofs(s, i, &data[i]);
        hid |= bt_hide_matrix(s, i, BT_ACTIVITY, &data[i].activity, false);
        hid |= bt_hide_matrix(s, i, BT_COVERAGE, &data[i].coverage, false);
        hid |= bt_hide_matrix(s, i, BT_ALLOCATION, &data[i].allocation, data[i].instants_lent);
        hid |= bt_hide_matrix(s, i, BT_PRIORITY, &data[i].priority, data[i].instants_lent);
    }
    return hid;
}

static void bt_sim_cycle_at(struct bt_sim *s, double t, const struct decisions *ds,
                            const size_t *pos);

void bt_sim_cycle(struct bt_sim *s, double t, const struct decisions *ds)
{
    bt_sim_cycle_at(s, t, ds, NULL);
}

/* bt_sim_cycle with pos[i] (or i when NULL) as decision i's position for the memo. */
static void bt_sim_cycle_at(struct bt_sim *s, double t, const struct decisions *ds,
                            const size_t *pos)
{
    s->now = t;
    s->nacted = 0;
    s->res.cycles++;
    for (size_t i = 0; i < s->rs->n; i++)
        s->res.rule[i].cycles++;
    /* The live decisions: a workload away is not in the simulated world. */
    if (ds->n > s->cap_live) {
        s->cap_live = ds->n;
        free(s->live);
        free(s->live_wl);
        s->live = xmalloc(s->cap_live * sizeof(*s->live));
        s->live_wl = xmalloc(s->cap_live * sizeof(*s->live_wl));
        free(s->live_key);
        s->live_key = xmalloc(s->cap_live * sizeof(*s->live_key));
    }
    struct decisions live = {s->live, 0};
    for (size_t i = 0; i < ds->n; i++) {
        const struct decision_rec *d = &ds->v[i];
        struct bt_workload *w = bt_of_decision_at(s, d, pos ? pos[i] : i);
        if (w->stopped)
            continue;
        w->seen_cycle = s->cycle;
        w->threshold = d->threshold;
        w->allocated = d->allocated;
        if (d->allocated > 0)
            w->alloc_seen = t;
        if (d->resource[0] && (!w->resource || strcmp(w->resource, d->resource) != 0)) {
            free(w->resource);
            w->resource = xstrdup(d->resource);
        }
        struct bt_rule_stats *st = &s->res.rule[w->rule];
        if (d->decision == DECISION_RECLAIM) {
            st->reclaim_decisions++;
        } else {
            st->keep_decisions++;
            st->kept[d->reason]++;
        }
        /* The engine reads only the reclaims (its candidates) and the decisions of the
           workloads it has a notice open for (act_review): stepped for those alone unless
           --backtest.every-cycle, the same steps. */
        if (!s->res.cfg.every_cycle && d->decision != DECISION_RECLAIM && isnan(w->noticed))
            continue;
        s->live_wl[live.n] = (size_t)(w - s->res.wl);
        s->live_key[live.n] = w->key; /* labels_format of the same identity (bt_find) */
        live.v[live.n++] = *d;        /* a shallow copy: the records stay the caller's */
    }
    /* A rule that could not be read decides nothing, so its workloads get no record this
       cycle: those that ran when the outage began are counted kept for query_error. */
    bool failed = false;
    for (size_t i = 0; i < s->rs->n; i++)
        failed |= s->err_run[i] > 0;
    for (size_t i = 0; failed && i < s->res.nwl; i++) {
        struct bt_workload *w = &s->res.wl[i];
        size_t run = s->err_run[w->rule];
        if (!run || w->stopped || w->seen_cycle == s->cycle || w->seen_cycle + run != s->cycle)
            continue;
        s->res.rule[w->rule].keep_decisions++;
        s->res.rule[w->rule].kept[REASON_QUERY_ERROR]++;
    }
    s->nlive = live.n;
    /* The figures only (recommend's fast pass, 40 engines): with no decision for the engine
       and no notice open, its step would be its bookkeeping by time alone (expiry, the hourly
       window: a pass over the ledger), which its next step does first, before anything that
       reads the ledger. A plain backtest steps every cycle. */
    if (live.n || s->open_notices || !s->res.cfg.figures_only)
        act_cycle_keyed(s->act, &live, s->live_key, t);
    s->nlive = 0;
    s->cycle++;
    size_t held = act_ledger(s->act)->n + s->res.nrc - s->nfree_rc;
    if (held > s->res.held_peak)
        s->res.held_peak = held;
    /* Compacted when it doubled since the last time: a pass over the ledger per entry added,
       amortised. Every backtest, not only the figures: the engine answers the same from the
       entries that supersede the dropped ones (ledger.h), and without it the ledger keeps
       an entry per reclaim for ACT_DONE_TTL, which the engine scans for every candidate
       (act_note_restart: a week of 1,000 workloads without an hourly cap spent a fifth of
       its time there) and which grows the memory with the range. */
    if (act_ledger(s->act)->n >= 2 * s->ledger_kept + 16) {
        act_forget_superseded(s->act);
        s->ledger_kept = act_ledger(s->act)->n;
    }
}

const size_t *bt_sim_acted(const struct bt_sim *s, size_t *n)
{
    *n = s->nacted;
    return s->acted;
}

static int bt_double_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

const struct bt_result *bt_sim_finish(struct bt_sim *s)
{
    for (size_t i = 0; i < s->res.nwl; i++)
        if (s->res.wl[i].stopped)
            bt_close(s, &s->res.wl[i], s->res.cfg.to, BT_END_RANGE);
    s->returns = xrealloc(s->returns, (s->res.nrc ? s->res.nrc : 1) * sizeof(double));
    for (size_t ri = 0; ri < s->res.nrules && s->res.cfg.figures_only; ri++) {
        /* Folded as they closed (bt_fold): the median of the durations kept. */
        struct bt_rule_stats *st = &s->res.rule[ri];
        size_t n = st->returns_within = s->nwithin[ri];
        double *r = s->within[ri];
        if (n) {
            qsort(r, n, sizeof(double), bt_double_cmp);
            st->median_return = n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
        }
    }
    for (size_t ri = 0; ri < s->res.nrules && !s->res.cfg.figures_only; ri++) {
        struct bt_rule_stats *st = &s->res.rule[ri];
        size_t n = 0;
        for (size_t i = 0; i < s->res.nrc; i++) {
            const struct bt_reclaim *rc = &s->res.rc[i];
            if (s->res.wl[rc->wl].rule != ri)
                continue;
            if (isnan(rc->devices) || !(rc->devices > 0))
                st->unknown_devices++;
            if (rc->how != BT_END_RETURN)
                continue;
            st->returns++;
            if (rc->end - rc->at <= s->res.cfg.return_within)
                s->returns[n++] = rc->end - rc->at;
        }
        st->returns_within = n;
        if (n) {
            qsort(s->returns, n, sizeof(double), bt_double_cmp);
            st->median_return =
                n % 2 ? s->returns[n / 2] : (s->returns[n / 2 - 1] + s->returns[n / 2]) / 2;
        }
    }
    /* Cycle times before the first sample: no data there, which is never idle. */
    if (s->res.data_start > s->res.cfg.from)
        s->res.cycles_before_data = (size_t)ceil(
            (fmin(s->res.data_start, s->res.cfg.to + s->res.cfg.interval) - s->res.cfg.from) /
                s->res.cfg.interval -
            1e-9);
    return &s->res;
}

void bt_sim_free(struct bt_sim *s)
{
    if (!s)
        return;
    act_free(s->act);
    for (size_t i = 0; i < s->res.nwl; i++) {
        labels_free(&s->res.wl[i].identity);
        free(s->res.wl[i].key);
        free(s->res.wl[i].by);
        free(s->res.wl[i].resource);
    }
    for (size_t i = 0; i < s->res.nrules; i++)
        free(s->res.rule[i].fail);
    for (size_t i = 0; i < s->nkeys; i++)
        free(s->keys[i]);
    free(s->keys);
    free(s->live);
    free(s->live_wl);
    free(s->live_key);
    strset_free(&s->index);
    free(s->res.wl);
    free(s->res.rc);
    free(s->res.ev);
    free(s->res.rule);
    free(s->returns);
    free(s->last_ok);
    free(s->err_run);
    free(s->nstopped);
    for (size_t i = 0; i < s->nobjs; i++)
        if (s->objs[i].have)
            bt_objs_clear(&s->objs[i]);
    free(s->objs);
    free(s->first_found);
    free(s->gpu);
    free(s->acted);
    free(s->away);
    free(s->free_rc);
    for (size_t i = 0; i < s->res.nrules; i++)
        free(s->within[i]);
    free(s->within);
    free(s->nwithin);
    free(s->cap_within);
    for (size_t i = 0; i < s->res.nrules; i++)
        for (int k = 0; k < BT_LISTS; k++)
            btdue_memo_free(&s->memo[i][k]);
    free(s->memo);
    sbuf_free(&s->kbuf);
    free(s);
}

/* ---- the command ------------------------------------------------------------------------- */

const struct bt_result *bt_sim_result(const struct bt_sim *s)
{
    return &s->res;
}

/* Progress: a bar redrawn on a terminal, a plain line every 5 s elsewhere (a CI log). */
static void bt_progress(FILE *f, bool tty, const char *label, size_t done, size_t total,
                        double started, double *last, bool end)
{
    double now = mono_now();
    if (!f || (!end && now - *last < (tty ? 0.2 : 5.0)) || (end && !tty && *last == started))
        return;
    *last = now;
    double frac = total ? (double)done / (double)total : 1;
    double eta = done ? (now - started) * (double)(total - done) / (double)done : NAN;
    char e[DUR_LEN] = "?";
    if (isfinite(eta))
        dur_format(e, sizeof(e), ceil(eta));
    if (tty) {
        char bar[31];
        size_t fill = (size_t)(frac * 30);
        for (size_t i = 0; i < 30; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[30] = '\0';
        fprintf(f, "\r%s [%s] %3.0f%% %zu/%zu cycles, eta %s  %s", label, bar, frac * 100, done,
                total, e, end ? "\n" : "");
    } else {
        fprintf(f, "%s: %zu/%zu cycles (%.0f%%), eta %s\n", label, done, total, frac * 100, e);
    }
    fflush(f);
}

struct bt_sim *bt_run(struct ruleset *rs, const struct bt_cfg *cfg, struct bt_source *src,
                      FILE *decisions, FILE *progress, const char *label, char *err, size_t errlen)
{
    struct bt_sim *s = bt_sim_new(rs, cfg, err, errlen);
    if (!s) {
        src->free(src);
        return NULL;
    }
    struct rule_data *data = xcalloc(rs->n ? rs->n : 1, sizeof(*data));
    bool tty = progress && isatty(fileno(progress));
    double started = mono_now(), last = started;
    struct sbuf line = {0};
    struct btdue *due = cfg->every_cycle ? NULL : btdue_new(rs);
    double t;
    while (src->next(src, &t, data) == 1) {
        struct decisions d = {0};
        bt_sim_observe(s, t, data, src);
        if (decisions) {
            /* As decide() made them from the history, before the simulation acts on them. */
            decide(data, rs->n, t, &d);
            for (size_t i = 0; i < d.n; i++)
                report_render_json_line(&d.v[i], t, &line);
            fwrite(line.buf, 1, line.len, decisions);
            sbuf_reset(&line);
        }
        /* The simulated world lacks the workloads reclaimed and not back: decided again
           without them, the caps and the pressure ranking pass to the next candidates, as
           they would once a real reclaim emptied the series. Without --decisions only that
           second decision is made. */
        if (due) {
            /* Only the workloads whose decision can have changed are judged (btdue.h). */
            bt_sim_hide(s, data);
            const struct decisions *dd = btdue_decide(due, data, rs->n, t);
            bt_sim_cycle_at(s, t, dd, btdue_slots(due));
        } else {
            if (bt_sim_hide(s, data) || !decisions) {
                decisions_free(&d);
                decide(data, rs->n, t, &d);
            }
            bt_sim_cycle(s, t, &d);
        }
        decisions_free(&d);
        fetch_free(data, rs->n);
        bt_progress(progress, tty, label, src->done, src->total, started, &last, false);
    }
    bt_progress(progress, tty, label, src->done, src->total, started, &last, true);
    if (due) {
        struct btdue_stats ds;
        btdue_stats(due, &ds);
        s->res.judged = ds.judged;
        s->res.carried = ds.carried;
    }
    btdue_free(due);
    sbuf_free(&line);
    free(data);
    src->free(src);
    bt_sim_finish(s);
    return s;
}

/* ---- comparison with an audit file -------------------------------------------------------- */

/* Largest audit file read: a week of a busy cluster's notices is a few MB. */
#define BT_AUDIT_MAX (512u << 20)

/* "A|rule|workload|cycle": the key both sides agree on. */
static char *bt_event_key(bool action, const char *rule, const char *workload, long long cycle)
{
    return xasprintf("%c|%s|%s|%lld", action ? 'A' : 'N', rule, workload, cycle);
}

static long long bt_cycle_of(const struct bt_result *res, double t)
{
    return (long long)floor((t - res->cfg.from) / res->cfg.interval + 1e-6);
}

int bt_audit_compare(const struct bt_result *res, const char *path, struct bt_audit_cmp *out,
                     char *err, size_t errlen)
{
    char why[256];
    size_t len;
    char *text = file_read(path, BT_AUDIT_MAX, &len, why, sizeof(why));
    if (!text)
        return err_printf(err, errlen, "cannot read audit file '%s': %s", path, why);
    /* The simulated events, each counted until the audit shows it. */
    struct strset sim = {0};
    char **simkeys = xcalloc(res->nev ? res->nev : 1, sizeof(char *));
    bool *matched = xcalloc(res->nev ? res->nev : 1, sizeof(bool));
    for (size_t i = 0; i < res->nev; i++) {
        const struct bt_event *e = &res->ev[i];
        const struct bt_workload *w = &res->wl[e->wl];
        simkeys[i] =
            bt_event_key(e->action, res->rule[w->rule].name, w->key, bt_cycle_of(res, e->t));
        strset_put(&sim, simkeys[i], strlen(simkeys[i]), (void *)(uintptr_t)(i + 1));
    }
    int rc = 0;
    size_t lineno = 0, shown = 0, nextra = 0;
    bool seen_actions = false, seen_dry = false;
    char **extra = NULL;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        size_t n = next ? (size_t)(next - line) : strlen(line);
        if (next)
            next++;
        lineno++;
        if (n == 0)
            continue;
        struct audit_line al;
        if (audit_parse_line(line, n, &al, why, sizeof(why)) != 0) {
            audit_line_free(&al);
            rc = err_printf(err, errlen, "%s:%zu: not an audit line: %s", path, lineno, why);
            break;
        }
        out->audit_lines++;
        bool action = strcmp(al.event, "action") == 0;
        bool notice = strcmp(al.event, "notice") == 0 || strcmp(al.event, "dry_run") == 0;
        seen_actions |= action;
        seen_dry |= strcmp(al.event, "dry_run") == 0;
        double t = al.time;
        if ((action && (!al.result || strcmp(al.result, "ok") != 0)) || (!action && !notice) ||
            t < res->cfg.from || t >= res->cfg.to + res->cfg.interval) {
            audit_line_free(&al);
            continue;
        }
        char *wkey = labels_format(&al.workload);
        const char *rname = al.rule;
        char *key = bt_event_key(action, rname, wkey, bt_cycle_of(res, t));
        const void *v = strset_put(&sim, key, strlen(key), (void *)(uintptr_t)-1);
        if (v && v != (void *)(uintptr_t)-1 && !matched[(uintptr_t)v - 1]) {
            matched[(uintptr_t)v - 1] = true;
            out->matched++;
        } else {
            out->only_audit++;
            char at[RFC3339_LEN];
            if (out->diff && shown++ < 10)
                sbuf_printf(out->diff, "  only in the audit: %s %s of rule '%s' at %s\n", al.event,
                            wkey, rname, rfc3339_format(at, sizeof(at), t, RFC3339_SEC));
        }
        /* A key the set did not hold stays in it (marked -1), so it must live as long. */
        if (v) {
            free(key);
        } else {
            extra = xgrow(extra, nextra, sizeof(*extra));
            extra[nextra++] = key;
        }
        free(wkey);
        audit_line_free(&al);
    }
    /* A dry run reports instead of noticing and never acts: only the notices can agree. */
    out->dry_run = seen_dry && !seen_actions;
    for (size_t i = 0; rc == 0 && i < res->nev; i++) {
        if (matched[i] || (out->dry_run && res->ev[i].action))
            continue;
        out->only_sim++;
        if (out->diff && shown++ < 10) {
            const struct bt_event *e = &res->ev[i];
            const struct bt_workload *w = &res->wl[e->wl];
            char at[RFC3339_LEN];
            rfc3339_format(at, sizeof(at), e->t, RFC3339_SEC);
            sbuf_printf(out->diff, "  only simulated: %s %s of rule '%s' at %s\n",
                        e->action ? "action" : "notice", w->key, res->rule[w->rule].name, at);
        }
    }
    strset_free(&sim);
    for (size_t i = 0; i < res->nev; i++)
        free(simkeys[i]);
    for (size_t i = 0; i < nextra; i++)
        free(extra[i]);
    free(simkeys);
    free(extra);
    free(matched);
    free(text);
    return rc;
}
