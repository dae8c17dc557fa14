/*
 * `recommend`: for each rule of --rules.file and each value of --by (a group), the threshold,
 * idle timer and notice period of the grid that free the most GPU-hours while at most
 * --max-return-share of the reclaims come back within --return-within (recommend.h chooses).
 *
 * Every figure comes from the backtest's engine (backtest.h), not from a model of it: each
 * grid point of each group is a variant of the rule (the point's threshold, idle timer and
 * notice period, the scope narrowed to the group, everything else the rule's) with its own
 * simulation, all fed by one replay of the range. The fast pass (recfast.h) scores the grid
 * of a group from one fold of each series and judges, per point, only the workloads whose
 * record can have changed; the groups of a rule it does not model (recfast_unfit: pressure,
 * overrides, an activity not read as raw samples) go through the engine alone, one rule per
 * point in the replay, and so does a fast point whose figures recfast_exact doubts (a second
 * read). The range chosen on ends at the holdout's start; the same replay feeds a second
 * simulation per point over the held-out part, which a backtest of that part alone would
 * equal (a simulation starts fresh at its first cycle; the data of a cycle is the data `plan
 * --at` it reads, whatever came before). Two more runs of the engine: R itself over the range
 * chosen on ("current", which also names the groups), and the rules file --output yaml
 * writes, loaded back and backtested ("confirmed"): the figures that file's backtest gives,
 * so the couplings a variant alone does not see (the --enforce.max-actions-per-hour cap
 * shared by every rule, pressure's demand) show as a difference there, never silently.
 *
 * What the history cannot show (exemptions, owner kinds, keep-until, protected objects) is
 * looked up as `backtest` does it, with the --kube.* and --runtime.* flags (cmd_lookup_new,
 * btlookup.h): one look-up per workload shared by every simulation, and what `run` would
 * never act on is left out of every grid point's counts and named in the output; without
 * that access the output says what was not checked.
 *
 * The sweep is recfast.h's (one fold per series for the whole grid, each point's decisions
 * through its own engine); what it cannot make exact goes through the engine per point.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backtest.h"
#include "cmd.h"
#include "dur.h"
#include "fetch.h"
#include "log.h"
#include "rechtml.h"
#include "recfast.h"
#include "recommend.h"
#include "rfc3339.h"
#include "util.h"

/* One rule of R and one value of --by. */
struct rec_group {
    size_t rule;  /* index in R */
    char *value;  /* the label's value ("" when absent) */
    char *name;   /* the rule's name in the YAML output */
    size_t first; /* its first variant in the sweep's ruleset */
    size_t workloads;
    struct rec_point cur;         /* R's own rule over the range chosen on, this group's part */
    struct rec_point *pts, *hold; /* per grid point: chosen-on range, held-out part */
    char **ns;                    /* scope of its variants: [value] (--by namespace) */
    struct matcher *scope;        /* or R's matchers and by="value" */
    long chosen;
    enum rec_reason reason;
    double data_seconds;
    size_t eager;
    struct rec_point conf; /* the YAML rule's backtest */
    bool has_conf;
    struct rule *vs;         /* its grid's variants, in the order of pts */
    struct replay_fold fold; /* the fast pass's fold of them */
    const char *why;         /* why the engine scores its points; NULL: the fast pass */
};

struct rec_run {
    struct ruleset *rs; /* R */
    const char *by;
    double from, to, split, hold_from, interval, share, holdout;
    double *th, *it, *no;
    size_t nth, nit, nno, npts;
    struct rec_group *g;
    size_t ng;
    enum rule_action *orig_action; /* R's, before the simulation changed them */
    bool *orig_dry;
    struct bt_cfg cfg;
    double data_start;
    bool no_fast;                 /* --recommend.engine: every point through the engine */
    size_t nfast, nengine, nredo; /* grid points scored by the fast pass, by the engine, and
                                     of these the fast ones the engine scored again */
    unsigned long judged, carried, looked; /* the fast pass's workload-cycles */
    unsigned long kept;                    /* its keeps set to stand (recfast_stats) */
};

/* ---- the engine's figures ----------------------------------------------------------------- */

/* A point's figures from the reclaims of the workloads of rule `ri` in group `value` (NULL: all).
 */
static void rec_score(const struct bt_result *res, size_t ri, const char *value,
                      struct rec_point *p)
{
    p->reclaims = p->returns_within = 0;
    struct fsum gs = {0}; /* exact, as bt_close sums a rule's: the same in any order */
    double *r = xcalloc(res->nrc ? res->nrc : 1, sizeof(double));
    size_t nr = 0;
    for (size_t i = 0; i < res->nrc; i++) {
        const struct bt_reclaim *rc = &res->rc[i];
        const struct bt_workload *w = &res->wl[rc->wl];
        if (w->rule != ri || (value && strcmp(w->by ? w->by : "", value) != 0))
            continue;
        p->reclaims++;
        /* As bt_close counts them: devices known and held. */
        if (!isnan(rc->devices) && rc->devices > 0)
            fsum_add(&gs, rc->devices * (rc->end - rc->at));
        if (rc->how == BT_END_RETURN && rc->end - rc->at <= res->cfg.return_within)
            r[nr++] = rc->end - rc->at;
    }
    p->gpu_seconds = fsum_value(&gs);
    p->returns_within = nr;
    p->median_return = NAN;
    if (nr) {
        for (size_t i = 1; i < nr; i++) /* few: insertion sort */
            for (size_t j = i; j > 0 && r[j - 1] > r[j]; j--) {
                double x = r[j];
                r[j] = r[j - 1];
                r[j - 1] = x;
            }
        p->median_return = nr % 2 ? r[nr / 2] : (r[nr / 2 - 1] + r[nr / 2]) / 2;
    }
    free(r);
}

/* A source handing variant `v`'s data of the shared replay as rule 0's. */
struct rec_src {
    struct bt_source base;
    struct bt_source *inner;
    size_t v;
};

static bool rec_src_points(struct bt_source *s, size_t rule, double after, bool first_only,
                           bool (*want)(void *arg, const struct labels *l), void *arg,
                           struct matrix *out)
{
    struct rec_src *p = (struct rec_src *)s;
    (void)rule;
    return p->inner->points && p->inner->points(p->inner, p->v, after, first_only, want, arg, out);
}

/* One cycle of simulation `sim` on variant v's data (observe, hide, decide, act: bt_run's). */
static void rec_step(struct bt_sim *sim, struct rec_src *src, size_t v, double t,
                     struct rule_data *d)
{
    src->v = v;
    bt_sim_observe(sim, t, d, &src->base);
    bt_sim_hide(sim, d);
    struct decisions ds = {0};
    decide(d, 1, t, &ds);
    bt_sim_cycle(sim, t, &ds);
    decisions_free(&ds);
}

/* The variant of rule `r` at grid point `p`, narrowed to group `g`. */
static struct rule rec_variant(const struct rec_run *run, const struct rec_group *g,
                               const struct rec_point *p, size_t k)
{
    struct rule v = run->rs->rules[g->rule];
    v.name = xasprintf("%s-v%zu", v.name, k);
    v.threshold = p->threshold;
    v.idle_timer = p->idle_timer;
    v.notice_period = p->notice;
    if (g->ns) {
        v.namespaces = g->ns;
        v.nnamespaces = 1;
    } else {
        v.scope.m = g->scope;
        v.scope.n = run->rs->rules[g->rule].scope.n + 1;
    }
    return v;
}

/* The groups of each rule: the values of --by among the workloads R's backtest decided. */
static void rec_groups(struct rec_run *run, const struct bt_result *cur)
{
    struct strset seen = {0};
    char **keys = NULL;
    size_t nkeys = 0;
    for (size_t i = 0; i < cur->nwl; i++) {
        const struct bt_workload *w = &cur->wl[i];
        const char *v = w->by ? w->by : "";
        char *k = xasprintf("%zu\x1f%s", w->rule, v);
        if (strset_get(&seen, k, strlen(k))) {
            free(k);
            continue;
        }
        strset_put(&seen, k, strlen(k), (void *)1);
        keys = xgrow(keys, nkeys, sizeof(*keys));
        keys[nkeys++] = k;
        run->g = xgrow(run->g, run->ng, sizeof(*run->g));
        run->g[run->ng++] = (struct rec_group){.rule = w->rule, .value = xstrdup(v), .chosen = -1};
    }
    for (size_t i = 0; i < nkeys; i++)
        free(keys[i]);
    free(keys);
    strset_free(&seen);
    /* In rule order, then by value: the output is stable whatever the order of the history. */
    for (size_t i = 1; i < run->ng; i++)
        for (size_t j = i; j > 0; j--) {
            struct rec_group *a = &run->g[j - 1], *b = &run->g[j];
            if (a->rule < b->rule || (a->rule == b->rule && strcmp(a->value, b->value) <= 0))
                break;
            struct rec_group x = *a;
            *a = *b;
            *b = x;
        }
    for (size_t i = 0; i < run->ng; i++) {
        struct rec_group *g = &run->g[i];
        for (size_t k = 0; k < cur->nwl; k++)
            g->workloads += cur->wl[k].rule == g->rule &&
                            strcmp(cur->wl[k].by ? cur->wl[k].by : "", g->value) == 0;
        const struct rule *r = &run->rs->rules[g->rule];
        rec_score(cur, g->rule, g->value, &g->cur);
        g->cur.threshold = r->threshold;
        g->cur.idle_timer = r->idle_timer;
        g->cur.notice = r->notice_period;
        /* A workload without the label: a matcher namespace="" (a rules file takes no empty
           namespace in `namespaces`). */
        if (strcmp(run->by, "namespace") == 0 && g->value[0]) {
            g->ns = xcalloc(1, sizeof(char *));
            g->ns[0] = g->value;
        } else {
            g->scope = xcalloc(r->scope.n + 1, sizeof(*g->scope));
            memcpy(g->scope, r->scope.m, r->scope.n * sizeof(*g->scope));
            g->scope[r->scope.n] = (struct matcher){.name = (char *)run->by,
                                                    .op = MATCH_EQ,
                                                    .value = g->value,
                                                    .value_len = strlen(g->value)};
        }
    }
}

/* A grid point of a group that goes through the engine: its own rule in the replay. */
struct rec_eng {
    size_t g, k;
};

/* A point's figures from the stats of a variant's simulation (its only rule): what
   rec_score(r, 0, NULL) gives, and all a fast point's (bt_cfg.figures_only) result keeps. */
static void rec_rule_figures(const struct bt_result *r, struct rec_point *p)
{
    const struct bt_rule_stats *st = &r->rule[0];
    p->reclaims = st->reclaims;
    p->returns_within = st->returns_within;
    p->gpu_seconds = st->gpu_seconds;
    p->median_return = st->median_return;
}

/* Score point k of group g from a fit and (may be NULL) a held-out simulation's result. */
static void rec_set(struct rec_group *g, size_t k, const struct bt_result *fit,
                    const struct bt_result *hold)
{
    rec_rule_figures(fit, &g->pts[k]);
    if (hold)
        rec_rule_figures(hold, &g->hold[k]);
}

/* The first failure of a result's only rule, or NULL. */
static const char *rec_hole(const struct bt_result *r)
{
    return r && r->rule[0].nfail ? r->rule[0].fail[0].msg : NULL;
}

/*
 * One read of the range for the groups in fast[0 .. nfast) (their fast pass, recfast.h: one
 * probe rule each in the replay, folded for the whole grid) and the points in eng[0 .. neng)
 * (the engine: each its own rule and simulation). Scores every point of the fast groups
 * whose figures are exact and each engine point; the fast points that are not are added to
 * *redo. 0, -2 when part of the range could not be read, or -1, with a message.
 */
static int rec_pass(struct rec_run *run, struct promq *q, const size_t *fast, size_t nfast,
                    const struct rec_eng *eng, size_t neng, struct rec_eng **redo, size_t *nredo,
                    char *err, size_t errlen)
{
    size_t nr = nfast + neng;
    struct ruleset vs = {.file = run->rs->file, .kinds = run->rs->kinds};
    vs.rules = xcalloc(nr ? nr : 1, sizeof(*vs.rules));
    struct replay_fold *fold = xcalloc(nr ? nr : 1, sizeof(*fold));
    for (size_t i = 0; i < nfast; i++) {
        struct rec_group *g = &run->g[fast[i]];
        vs.rules[i] = g->vs[recfast_probe(g->vs, run->npts)];
        vs.rules[i].name = xasprintf("%s-probe", run->rs->rules[g->rule].name);
        fold[i] = g->fold;
    }
    for (size_t i = 0; i < neng; i++) {
        struct rec_group *g = &run->g[eng[i].g];
        vs.rules[nfast + i] = g->vs[eng[i].k];
        vs.rules[nfast + i].name = xstrdup(g->vs[eng[i].k].name);
    }
    vs.n = nr;
    struct ruleset *one = xcalloc(neng ? neng : 1, sizeof(*one));
    struct bt_sim **fit = xcalloc(neng ? neng : 1, sizeof(*fit));
    struct bt_sim **hold = xcalloc(neng ? neng : 1, sizeof(*hold));
    struct recfast **ffit = xcalloc(nfast ? nfast : 1, sizeof(*ffit));
    struct recfast **fhold = xcalloc(nfast ? nfast : 1, sizeof(*fhold));
    struct bt_cfg cf = run->cfg, ch = run->cfg;
    cf.by = ch.by = NULL;
    cf.to = run->split;
    ch.from = run->hold_from;
    int rc = 0;
    for (size_t i = 0; i < neng && rc == 0; i++) {
        one[i] = (struct ruleset){
            .file = vs.file, .rules = &vs.rules[nfast + i], .n = 1, .kinds = vs.kinds};
        if (!(fit[i] = bt_sim_new(&one[i], &cf, err, errlen)))
            rc = -1;
    }
    for (size_t i = 0; i < nfast && rc == 0; i++) {
        struct rec_group *g = &run->g[fast[i]];
        if (!(ffit[i] = recfast_new(g->vs, run->npts, &cf, &g->fold, err, errlen)) ||
            (run->holdout > 0 &&
             !(fhold[i] = recfast_new(g->vs, run->npts, &ch, &g->fold, err, errlen))))
            rc = -1;
    }
    struct bt_source *src = rc ? NULL
                               : bt_source_replay_fold(q, &vs, run->from, run->to, run->interval,
                                                       false, fold, err, errlen);
    if (!src)
        rc = -1;
    /* A rule the replay does not carry as proofs (an expression, the PromQL plan): its
       groups go to the engine, and the pass starts again (nothing was read yet). */
    for (size_t i = 0; i < nfast && rc == 0; i++)
        if (!src->carried || !src->carried(src, i)) {
            run->g[fast[i]].why =
                "its activity is not read as raw samples (an expression, or the PromQL plan)";
            rc = -3;
        }
    struct rule_data *data = xcalloc(nr ? nr : 1, sizeof(*data));
    struct rec_src rs = {.base = {.points = rec_src_points}, .inner = src};
    double t;
    double last = mono_now();
    while (rc == 0 && src->next(src, &t, data) == 1) {
        bool in_fit = t <= run->split + 1e-6;
        for (size_t i = 0; i < nfast && rc == 0; i++) {
            if (data[i].error || data[i].pending_error || !data[i].has_proofs) {
                err_printf(err, errlen,
                           "the sweep could not read part of the range: %s; no "
                           "recommendation from a history with holes",
                           data[i].errmsg[0] ? data[i].errmsg : "no proofs");
                rc = -2;
                break;
            }
            if (in_fit)
                recfast_cycle(ffit[i], t, &data[i], src, i);
            else if (run->holdout > 0)
                recfast_cycle(fhold[i], t, &data[i], src, i);
        }
        for (size_t i = 0; i < neng && rc == 0; i++) {
            if (in_fit) {
                rec_step(fit[i], &rs, nfast + i, t, &data[nfast + i]);
            } else if (run->holdout > 0) {
                if (!hold[i] && !(hold[i] = bt_sim_new(&one[i], &ch, err, errlen))) {
                    rc = -1;
                    break;
                }
                rec_step(hold[i], &rs, nfast + i, t, &data[nfast + i]);
            }
        }
        fetch_free(data, nr);
        if (mono_now() - last >= 5) {
            last = mono_now();
            fprintf(stderr, "recommend: %zu/%zu cycles, %zu fast groups, %zu engine points\n",
                    src->done, src->total, nfast, neng);
        }
    }
    for (size_t i = 0; rc == 0 && i < neng; i++) {
        bt_sim_finish(fit[i]);
        if (hold[i])
            bt_sim_finish(hold[i]);
    }
    for (size_t i = 0; rc == 0 && i < nfast; i++) {
        recfast_finish(ffit[i]);
        if (fhold[i])
            recfast_finish(fhold[i]);
    }
    /* A part of the range a variant could not read: no recommendation from a history with
       holes (its cycles would count as kept, which no figure here may rest on). */
    for (size_t i = 0; rc == 0 && i < neng; i++) {
        const char *h = rec_hole(bt_sim_result(fit[i]));
        if (!h && hold[i])
            h = rec_hole(bt_sim_result(hold[i]));
        if (h) {
            err_printf(err, errlen,
                       "the sweep could not read part of the range: %s; no recommendation "
                       "from a history with holes",
                       h);
            rc = -2;
        }
    }
    for (size_t i = 0; rc == 0 && i < neng; i++)
        rec_set(&run->g[eng[i].g], eng[i].k, bt_sim_result(fit[i]),
                hold[i] ? bt_sim_result(hold[i]) : NULL);
    for (size_t i = 0; rc == 0 && i < nfast; i++) {
        struct rec_group *g = &run->g[fast[i]];
        struct recfast_stats st;
        recfast_stats(ffit[i], &st);
        run->judged += st.judged;
        run->carried += st.carried;
        run->looked += st.looked;
        run->kept += st.kept;
        if (fhold[i]) {
            recfast_stats(fhold[i], &st);
            run->judged += st.judged;
            run->carried += st.carried;
            run->looked += st.looked;
            run->kept += st.kept;
        }
        for (size_t k = 0; k < run->npts; k++) {
            if (!recfast_exact(ffit[i], k) || (fhold[i] && !recfast_exact(fhold[i], k))) {
                *redo = xgrow(*redo, *nredo, sizeof(**redo));
                (*redo)[(*nredo)++] = (struct rec_eng){fast[i], k};
                continue;
            }
            rec_set(g, k, recfast_result(ffit[i], k),
                    fhold[i] ? recfast_result(fhold[i], k) : NULL);
            run->nfast++;
        }
    }
    run->nengine += rc == 0 ? neng : 0;
    if (src)
        src->free(src);
    for (size_t i = 0; i < neng; i++) {
        bt_sim_free(fit[i]);
        bt_sim_free(hold[i]);
    }
    for (size_t i = 0; i < nfast; i++) {
        recfast_free(ffit[i]);
        recfast_free(fhold[i]);
    }
    for (size_t i = 0; i < nr; i++)
        free(vs.rules[i].name);
    free(data);
    free(fit);
    free(hold);
    free(ffit);
    free(fhold);
    free(one);
    free(fold);
    free(vs.rules);
    return rc;
}

/*
 * The sweep: every grid point of every group scored over the range chosen on and over the
 * held-out part, from one read of the range: the fast pass for the groups whose rule it
 * models, the engine for each point of the others (each said on stderr, with why). A fast
 * point whose figures may not be exact (recfast_exact) goes through the engine after, in a
 * second read of the points that need it. 0, -2 when part of the range could not be read,
 * or -1, with a message.
 */
static int rec_sweep(struct rec_run *run, struct promq *q, char *err, size_t errlen)
{
    size_t *fast = xcalloc(run->ng ? run->ng : 1, sizeof(*fast)), nfast = 0;
    struct rec_eng *eng = NULL, *redo = NULL;
    size_t neng = 0, nredo = 0;
    for (size_t i = 0; i < run->ng; i++) {
        struct rec_group *g = &run->g[i];
        g->pts = xcalloc(run->npts, sizeof(*g->pts));
        g->hold = xcalloc(run->npts, sizeof(*g->hold));
        g->vs = xcalloc(run->npts ? run->npts : 1, sizeof(*g->vs));
        size_t k = 0;
        for (size_t a = 0; a < run->nth; a++)
            for (size_t b = 0; b < run->nit; b++)
                for (size_t c = 0; c < run->nno; c++, k++) {
                    g->pts[k] = (struct rec_point){
                        .threshold = run->th[a], .idle_timer = run->it[b], .notice = run->no[c]};
                    g->hold[k] = g->pts[k];
                    g->vs[k] = rec_variant(run, g, &g->pts[k], i * run->npts + k);
                }
        const struct rule *r = &run->rs->rules[g->rule];
        g->why = run->no_fast ? "--recommend.engine" : recfast_unfit(r, run->nth, run->nit);
        if (!g->why && recfast_fold(g->vs, run->npts, &g->fold) < 0)
            g->why = "its grid's windows cannot share one fold";
    }
    int rc;
    do {
        nfast = neng = 0;
        for (size_t i = 0; i < run->ng; i++) {
            struct rec_group *g = &run->g[i];
            if (!g->why) {
                fast[nfast++] = i;
                continue;
            }
            for (size_t k = 0; k < run->npts; k++) {
                eng = xgrow(eng, neng, sizeof(*eng));
                eng[neng++] = (struct rec_eng){i, k};
            }
        }
        rc = rec_pass(run, q, fast, nfast, eng, neng, &redo, &nredo, err, errlen);
    } while (rc == -3);
    for (size_t i = 0; i < run->ng; i++)
        if (run->g[i].why)
            fprintf(stderr,
                    "recommend: rule '%s', %s '%s': every grid point through the engine: %s\n",
                    run->rs->rules[run->g[i].rule].name, run->by, run->g[i].value, run->g[i].why);
    if (rc == 0 && nredo) {
        fprintf(stderr,
                "recommend: %zu grid points through the engine again: the fast pass's fold "
                "kept too few silences to tell whether a window is too young\n",
                nredo);
        struct rec_eng *none = NULL;
        size_t nnone = 0;
        rc = rec_pass(run, q, NULL, 0, redo, nredo, &none, &nnone, err, errlen);
        run->nredo = nredo;
        free(none);
    }
    free(fast);
    free(eng);
    free(redo);
    return rc;
}

/* ---- the choice ------------------------------------------------------------------------- */

static void rec_choose_all(struct rec_run *run)
{
    double start = isnan(run->data_start) ? NAN : fmax(run->from, run->data_start);
    for (size_t i = 0; i < run->ng; i++) {
        struct rec_group *g = &run->g[i];
        g->data_seconds = isnan(start) ? NAN : run->split - start;
        long e = rec_most_eager(g->pts, run->npts);
        g->eager = e < 0 ? 0 : g->pts[e].reclaims;
        g->reason = rec_enough(g->data_seconds, g->eager, cmd_flag_num(F_MIN_HISTORY),
                               (size_t)cmd_flag_num(F_MIN_IDLE_PERIODS));
        if (g->reason != REC_CHOSEN)
            continue;
        g->chosen = rec_choose(g->pts, run->npts, run->share);
        if (g->chosen < 0)
            g->reason = REC_NONE_INSIDE;
    }
}

static char *rec_pct(char *buf, size_t n, double share)
{
    if (isnan(share))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.0f%%", share * 100);
    return buf;
}

/* The sentence of a group without a recommendation. */
static void rec_reason_text(const struct rec_run *run, const struct rec_group *g, struct sbuf *b)
{
    char d1[DUR_LEN], d2[DUR_LEN], pc[16];
    switch (g->reason) {
    case REC_NONE_INSIDE:
        sbuf_printf(b,
                    "no setting frees GPU-hours without interrupting more than %s: keep, or "
                    "exempt",
                    rec_pct(pc, sizeof(pc), run->share));
        break;
    case REC_SHORT_HISTORY:
        sbuf_printf(b, "not enough data: %s of data in the range chosen on, under --min-history %s",
                    isnan(g->data_seconds) ? "none" : dur_format(d1, sizeof(d1), g->data_seconds),
                    dur_format(d2, sizeof(d2), cmd_flag_num(F_MIN_HISTORY)));
        break;
    case REC_FEW_IDLE_SPELLS:
        sbuf_printf(b,
                    "not enough data: the most eager setting reclaims %zu times, under "
                    "--min-idle-periods %.0f",
                    g->eager, cmd_flag_num(F_MIN_IDLE_PERIODS));
        break;
    default:
        break;
    }
}

/* ---- the YAML rules file ------------------------------------------------------------------ */

/* A YAML double-quoted scalar. */
static void yq(struct sbuf *b, const char *s)
{
    sbuf_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            sbuf_printf(b, "\\%c", c);
        else if (c == '\n')
            sbuf_add(b, "\\n", 2);
        else if (c < 0x20 || c == 0x7f)
            sbuf_printf(b, "\\x%02x", c);
        else
            sbuf_putc(b, (char)c);
    }
    sbuf_putc(b, '"');
}

/* A matcher as PromQL text, name op "value", the value escaped as a Go string. */
static void matcher_text(struct sbuf *b, const struct matcher *m)
{
    static const char *const ops[] = {"=", "!=", "=~", "!~"};
    sbuf_printf(b, "%s%s\"", m->name, ops[m->op]);
    for (size_t i = 0; i < m->value_len; i++) {
        unsigned char c = (unsigned char)m->value[i];
        if (c == '"' || c == '\\')
            sbuf_printf(b, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            sbuf_printf(b, "\\x%02x", c);
        else
            sbuf_putc(b, (char)c);
    }
    sbuf_putc(b, '"');
}

/* "matchers:" after `key` (the key's own indent, or an entry's "  - "), items at `item`. */
static void yaml_matchers(struct sbuf *b, const char *key, const char *item,
                          const struct matcher *m, size_t n)
{
    sbuf_printf(b, "%smatchers:\n", key);
    for (size_t i = 0; i < n; i++) {
        struct sbuf t = {0};
        matcher_text(&t, &m[i]);
        sbuf_printf(b, "%s- ", item);
        yq(b, t.buf ? t.buf : "");
        sbuf_putc(b, '\n');
        sbuf_free(&t);
    }
}

static const char *rec_dur(char *buf, double s)
{
    return dur_format(buf, DUR_LEN, s);
}

/* Rule `r` of R as a rules-file rule named `name` with the point's settings and g's scope. */
static void yaml_rule(struct sbuf *b, const struct rec_run *run, const struct rec_group *g,
                      const struct rec_point *p)
{
    const struct rule *r = &run->rs->rules[g->rule];
    char d[DUR_LEN];
    sbuf_printf(b, "- name: %s\n", g->name);
    if (!r->enabled)
        sbuf_printf(b, "  enabled: false\n");
    sbuf_printf(b, "  policy: %s\n", rules_policy_name(r->policy));
    sbuf_printf(b, "  threshold: %.15g\n", p->threshold);
    sbuf_printf(b, "  idleTimer: %s\n", rec_dur(d, p->idle_timer));
    sbuf_printf(b, "  step: %s\n", rec_dur(d, r->step));
    sbuf_printf(b, "  toleratedGap: %s\n", rec_dur(d, r->tolerated_gap));
    sbuf_printf(b, "  noticePeriod: %s\n", rec_dur(d, p->notice));
    sbuf_printf(b, "  maxKeepUntil: %s\n", rec_dur(d, r->max_keep_until));
    sbuf_printf(b, "  maxTerminationsPerCycle: %u\n", r->max_terminations);
    sbuf_printf(b, "  dryRun: %s\n", run->orig_dry[g->rule] ? "true" : "false");
    sbuf_printf(b, "  action: %s\n", rules_action_name(run->orig_action[g->rule]));
    sbuf_printf(b, "  identity: [");
    for (size_t i = 0; i < r->nidentity; i++)
        sbuf_printf(b, "%s%s", i ? ", " : "", r->identity[i]);
    sbuf_printf(b, "]\n  resourceLabel: %s\n  queries:\n    activity: ", r->resource_label);
    yq(b, r->q_activity);
    sbuf_printf(b, "\n    allocation: ");
    yq(b, r->q_allocation);
    sbuf_printf(b, "\n    pending: ");
    yq(b, r->q_pending);
    if (r->q_priority) {
        sbuf_printf(b, "\n    priority: ");
        yq(b, r->q_priority);
    }
    sbuf_printf(b, "\n  scope:\n");
    if (g->ns) {
        sbuf_printf(b, "    namespaces: [");
        yq(b, g->value);
        sbuf_printf(b, "]\n");
        if (r->scope.n)
            yaml_matchers(b, "    ", "    ", r->scope.m, r->scope.n);
    } else {
        if (r->nnamespaces) {
            sbuf_printf(b, "    namespaces: [");
            for (size_t i = 0; i < r->nnamespaces; i++) {
                sbuf_printf(b, "%s", i ? ", " : "");
                yq(b, r->namespaces[i]);
            }
            sbuf_printf(b, "]\n");
        }
        yaml_matchers(b, "    ", "    ", g->scope, r->scope.n + 1);
    }
    if (r->nexemptions) {
        sbuf_printf(b, "  exemptions:\n");
        for (size_t i = 0; i < r->nexemptions; i++) {
            yaml_matchers(b, "  - ", "    ", r->exemptions[i].match.m, r->exemptions[i].match.n);
            if (r->exemptions[i].reason) {
                sbuf_printf(b, "    reason: ");
                yq(b, r->exemptions[i].reason);
                sbuf_putc(b, '\n');
            }
        }
    }
    if (r->noverrides) {
        sbuf_printf(b, "  overrides:\n");
        for (size_t i = 0; i < r->noverrides; i++) {
            const struct rule_override *o = &r->overrides[i];
            yaml_matchers(b, "  - ", "    ", o->match.m, o->match.n);
            if (o->has_threshold)
                sbuf_printf(b, "    threshold: %.15g\n", o->threshold);
            if (o->has_idle_timer)
                sbuf_printf(b, "    idleTimer: %s\n", rec_dur(d, o->idle_timer));
            if (o->has_enabled)
                sbuf_printf(b, "    enabled: %s\n", o->enabled ? "true" : "false");
        }
    }
    if (r->nwindows) {
        static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
        sbuf_printf(b, "  activeWindows:\n");
        for (size_t i = 0; i < r->nwindows; i++) {
            const struct rule_window *w = &r->windows[i];
            sbuf_printf(b, "  - days: [");
            for (int k = 0, n = 0; k < 7; k++)
                if (w->days & (1u << k))
                    sbuf_printf(b, "%s%s", n++ ? ", " : "", days[k]);
            sbuf_printf(b, "]\n    start: \"%02d:%02d\"\n    end: \"%02d:%02d\"\n",
                        w->start_min / 60, w->start_min % 60, w->end_min / 60, w->end_min % 60);
            if (w->zone.name) {
                sbuf_printf(b, "    timeZone: ");
                yq(b, w->zone.name);
                sbuf_putc(b, '\n');
            } else {
                int o = w->utc_offset_min, a = o < 0 ? -o : o;
                sbuf_printf(b, "    utcOffset: \"%c%02d:%02d\"\n", o < 0 ? '-' : '+', a / 60,
                            a % 60);
            }
        }
    }
    if (r->notify.url_file) {
        sbuf_printf(b, "  notify:\n    urlFile: ");
        yq(b, r->notify.url_file);
        sbuf_printf(b, "\n    format: %s\n    events: [",
                    r->notify.format == NOTIFY_FORMAT_SLACK ? "slack" : "json");
        static const char *const ev[] = {"notice", "action", "spare"};
        for (int k = 0, n = 0; k < 3; k++)
            if (r->notify.events & (1u << k))
                sbuf_printf(b, "%s%s", n++ ? ", " : "", ev[k]);
        sbuf_printf(b, "]\n");
    }
}

static char *rec_name(const char *rule, const char *value, size_t i)
{
    char buf[64];
    size_t n = (size_t)snprintf(buf, sizeof(buf), "%s-", rule);
    for (const char *s = value; *s && n < 48; s++) {
        char c = (char)tolower((unsigned char)*s);
        if (!isalnum((unsigned char)c))
            c = '-';
        if (c == '-' && buf[n - 1] == '-')
            continue;
        buf[n++] = c;
    }
    while (n && buf[n - 1] == '-')
        n--;
    buf[n] = '\0';
    /* the group's index keeps the name unique whatever two values sanitise to */
    return xasprintf("%.48s-%zu", buf, i + 1);
}

static void rec_point_line(struct sbuf *b, const struct rec_run *run, const struct rec_point *p)
{
    char pc[16], d[DUR_LEN];
    double lo, hi;
    rec_wilson(p->returns_within, p->reclaims, &lo, &hi);
    sbuf_printf(b, "%zu reclaims, %.2f GPU-hours freed, %zu returns within %s (%s", p->reclaims,
                p->gpu_seconds / 3600, p->returns_within, rec_dur(d, run->cfg.return_within),
                rec_pct(pc, sizeof(pc), rec_share(p)));
    if (!isnan(lo))
        sbuf_printf(b, ", 95%% interval %.0f-%.0f%%", lo * 100, hi * 100);
    sbuf_putc(b, ')');
}

/* The rules file: one rule per group (the recommendation, or R's settings when none). */
static void rec_yaml(const struct rec_run *run, struct sbuf *b, bool comments)
{
    char a[RFC3339_LEN], z[RFC3339_LEN], d[DUR_LEN], d2[DUR_LEN], pc[16];
    rfc3339_format(a, sizeof(a), run->from, RFC3339_SEC);
    rfc3339_format(z, sizeof(z), run->split, RFC3339_SEC);
    if (comments) {
        sbuf_printf(b,
                    "# Written by 'gpureclaim-enforcer recommend' from '%s', fitted on %s .. %s "
                    "(every %s):\n# per group, the setting that frees the most GPU-hours with at "
                    "most %s of its reclaims back\n# within %s. Check it with 'backtest "
                    "--from %s --to %s'.\n",
                    run->rs->file, a, z, rec_dur(d, run->interval),
                    rec_pct(pc, sizeof(pc), run->share), rec_dur(d2, run->cfg.return_within), a, z);
        sbuf_printf(b, "# A 'kinds:' or 'defaults:' section of that file is not copied: each "
                       "rule says everything.\n");
        /* A backtest of this file without the same access counts them: say which. */
        size_t nv;
        const struct btl_verdict *const *v = btl_verdicts(run->cfg.lookup, &nv);
        for (size_t i = 0; i < nv; i++) {
            if (v[i]->state != BTL_LEFT_OUT)
                continue;
            size_t at = b->len;
            sbuf_printf(b, "# Left out of these figures (looked up as it was then): %s: %s",
                        v[i]->key, v[i]->why);
            for (size_t k = at; k < b->len; k++) /* a comment stays one line */
                if (b->buf[k] == '\n' || b->buf[k] == '\r')
                    b->buf[k] = ' ';
            sbuf_putc(b, '\n');
        }
    }
    sbuf_printf(b, "apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n");
    for (size_t i = 0; i < run->ng; i++) {
        const struct rec_group *g = &run->g[i];
        const struct rec_point *p = g->chosen >= 0 ? &g->pts[g->chosen] : &g->cur;
        if (comments) {
            sbuf_printf(b, "# %s=%s (rule '%s'): ", run->by, g->value,
                        run->rs->rules[g->rule].name);
            if (g->chosen >= 0) {
                sbuf_printf(b, "fitted on %s .. %s: ", a, z);
                rec_point_line(b, run, p);
                if (run->holdout > 0) {
                    char h1[RFC3339_LEN], h2[RFC3339_LEN];
                    sbuf_printf(b, "\n#   held out %s .. %s: ",
                                rfc3339_format(h1, sizeof(h1), run->hold_from, RFC3339_SEC),
                                rfc3339_format(h2, sizeof(h2), run->to, RFC3339_SEC));
                    rec_point_line(b, run, &g->hold[g->chosen]);
                }
                if (g->has_conf && (g->conf.reclaims != p->reclaims ||
                                    fabs(g->conf.gpu_seconds - p->gpu_seconds) > 1e-6 ||
                                    g->conf.returns_within != p->returns_within)) {
                    sbuf_printf(b, "\n#   with the other rules of this file (shared caps): ");
                    rec_point_line(b, run, &g->conf);
                }
            } else {
                struct sbuf r = {0};
                rec_reason_text(run, g, &r);
                sbuf_printf(b, "the rule's own settings kept: %s", r.buf);
                sbuf_free(&r);
            }
            sbuf_putc(b, '\n');
        }
        yaml_rule(b, run, g, p);
    }
}

/* Load the YAML back and backtest it over the range chosen on: the figures it gives. */
static int rec_confirm(struct rec_run *run, struct promq *q, char *err, size_t errlen)
{
    struct sbuf y = {0};
    rec_yaml(run, &y, false);
    struct ruleset rs = {0};
    struct rules_errors errs = {0};
    int rc = rules_load_buffer("recommend's rules file", y.buf, y.len, &rs, &errs);
    if (rc != 0) {
        rc = err_printf(err, errlen, "the rules file written does not load: %s",
                        errs.n ? errs.msg[0] : "?");
        /* a bug of this file, not of the user's input: show the text */
        fprintf(stderr, "%s", y.buf);
    }
    rules_errors_free(&errs);
    sbuf_free(&y);
    struct bt_cfg cf = run->cfg;
    cf.to = run->split;
    cf.by = NULL;
    struct bt_source *src =
        rc ? NULL : bt_source_replay(q, &rs, cf.from, cf.to, cf.interval, false, err, errlen);
    struct bt_sim *s = src ? bt_run(&rs, &cf, src, NULL, NULL, "confirm", err, errlen) : NULL;
    if (s) {
        for (size_t i = 0; i < run->ng && i < rs.n; i++) {
            rec_score(bt_sim_result(s), i, NULL, &run->g[i].conf);
            run->g[i].has_conf = true;
        }
    } else {
        rc = -1;
    }
    bt_sim_free(s);
    rules_free(&rs);
    return rc;
}

/* ---- outputs ------------------------------------------------------------------------------ */

static void rec_settings(char *buf, size_t n, const struct rec_point *p)
{
    char d1[DUR_LEN], d2[DUR_LEN];
    snprintf(buf, n, "%g%% %s notice %s", p->threshold, rec_dur(d1, p->idle_timer),
             rec_dur(d2, p->notice));
}

/* btl_note for R's rules (their actions as written; report is simulated as delete). */
static void rec_lookup_note(const struct rec_run *run, struct sbuf *b)
{
    bool kube = false, runtime = false;
    for (size_t i = 0; i < run->rs->n; i++) {
        runtime |= run->orig_action[i] == ACTION_STOP;
        kube |= run->orig_action[i] != ACTION_STOP;
    }
    size_t c[2][3];
    btl_count(run->cfg.lookup, c);
    btl_note(run->cfg.lookup, kube, runtime, c, b);
}

/* The look-up's note and the workloads it left out of every point and could not check. */
static void rec_lookup_table(const struct rec_run *run, struct sbuf *b)
{
    struct sbuf n = {0};
    rec_lookup_note(run, &n);
    if (n.len)
        sbuf_printf(b, "%s\n", n.buf);
    sbuf_free(&n);
    size_t nv;
    const struct btl_verdict *const *v = btl_verdicts(run->cfg.lookup, &nv);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < nv; i++)
            if (v[i]->state == (pass ? BTL_UNCHECKED : BTL_LEFT_OUT))
                sbuf_printf(b, "  %s: %s: %s\n", pass ? "not checked (counted)" : "left out",
                            v[i]->key, v[i]->why);
}

static void rec_table(const struct rec_run *run, struct sbuf *b)
{
    char a[RFC3339_LEN], z[RFC3339_LEN], h1[RFC3339_LEN], d[DUR_LEN], pc[16], s1[96], s2[96];
    rfc3339_format(a, sizeof(a), run->from, RFC3339_SEC);
    rfc3339_format(z, sizeof(z), run->split, RFC3339_SEC);
    sbuf_printf(b, "%s: chosen on %s .. %s, every %s", run->rs->file, a, z,
                rec_dur(d, run->interval));
    if (run->holdout > 0) {
        rfc3339_format(h1, sizeof(h1), run->hold_from, RFC3339_SEC);
        rfc3339_format(s1, sizeof(s1), run->to, RFC3339_SEC);
        sbuf_printf(b, ", scored on %s .. %s", h1, s1);
    }
    sbuf_printf(b, "; target: at most %s returned within %s; %zu grid points\n",
                rec_pct(pc, sizeof(pc), run->share), rec_dur(d, run->cfg.return_within), run->npts);
    for (size_t i = 0; i < run->ng; i++) {
        const struct rec_group *g = &run->g[i];
        rec_settings(s1, sizeof(s1), &g->cur);
        sbuf_printf(b, "\n%s %s=%s (%zu workloads): ", run->rs->rules[g->rule].name, run->by,
                    g->value, g->workloads);
        if (g->chosen < 0) {
            sbuf_printf(b, "%s -> (none)\n  ", s1);
            rec_reason_text(run, g, b);
            sbuf_putc(b, '\n');
        } else {
            rec_settings(s2, sizeof(s2), &g->pts[g->chosen]);
            sbuf_printf(b, "%s -> %s\n", s1, s2);
        }
        sbuf_printf(b, "  %-12s ", "current");
        rec_point_line(b, run, &g->cur);
        sbuf_putc(b, '\n');
        if (g->chosen >= 0) {
            const struct rec_point *p = &g->pts[g->chosen], *h = &g->hold[g->chosen];
            sbuf_printf(b, "  %-12s ", "recommended");
            rec_point_line(b, run, p);
            sbuf_putc(b, '\n');
            if (g->has_conf && (g->conf.reclaims != p->reclaims ||
                                fabs(g->conf.gpu_seconds - p->gpu_seconds) > 1e-6 ||
                                g->conf.returns_within != p->returns_within)) {
                sbuf_printf(b, "  %-12s ", "with others");
                rec_point_line(b, run, &g->conf);
                sbuf_printf(b, " (the rules file's backtest: caps shared)\n");
            }
            if (run->holdout > 0) {
                double hs = rec_share(h);
                sbuf_printf(b, "  %-12s ", "held out");
                rec_point_line(b, run, h);
                sbuf_printf(b, "%s\n",
                            !isnan(hs) && hs > run->share + 1e-9
                                ? "  ABOVE TARGET: the setting did not generalise"
                                : "");
            }
        }
        bool *on = xcalloc(run->npts, sizeof(bool));
        rec_frontier(g->pts, run->npts, on);
        sbuf_printf(b, "  frontier (%-6s %8s %9s %6s):\n", "share", "reclaims", "GPU-hours",
                    "ret<=");
        /* most GPU-hours first: the frontier from eager to gentle */
        size_t *ord = xcalloc(run->npts, sizeof(size_t));
        for (size_t k = 0; k < run->npts; k++) {
            size_t j = k;
            for (; j > 0 && g->pts[ord[j - 1]].gpu_seconds < g->pts[k].gpu_seconds; j--)
                ord[j] = ord[j - 1];
            ord[j] = k;
        }
        for (size_t m = 0; m < run->npts; m++) {
            size_t k = ord[m];
            if (!on[k])
                continue;
            const struct rec_point *p = &g->pts[k];
            rec_settings(s2, sizeof(s2), p);
            sbuf_printf(b, "    %-6s %8zu %9.2f %6zu  %s%s\n",
                        rec_pct(pc, sizeof(pc), rec_share(p)), p->reclaims, p->gpu_seconds / 3600,
                        p->returns_within, s2, (long)k == g->chosen ? "  <- recommended" : "");
        }
        free(ord);
        free(on);
    }
    sbuf_printf(b, "\n%s\n", bt_not_simulated);
    rec_lookup_table(run, b);
}

static void json_point(struct sbuf *b, const struct rec_point *p, bool settings)
{
    char d[DUR_LEN];
    double lo, hi, s = rec_share(p);
    rec_wilson(p->returns_within, p->reclaims, &lo, &hi);
    sbuf_putc(b, '{');
    if (settings) {
        sbuf_printf(b, "\"threshold\":%.15g,\"idleTimer\":\"%s\",", p->threshold,
                    rec_dur(d, p->idle_timer));
        sbuf_printf(b, "\"noticePeriod\":\"%s\",", rec_dur(d, p->notice));
    }
    sbuf_printf(b, "\"gpuHoursFreed\":%.6f,\"reclaims\":%zu,\"returnsWithin\":%zu,",
                p->gpu_seconds / 3600, p->reclaims, p->returns_within);
    if (isnan(s))
        sbuf_printf(b, "\"returnShare\":null,\"returnShareInterval\":null,");
    else
        sbuf_printf(b, "\"returnShare\":%.6f,\"returnShareInterval\":[%.6f,%.6f],", s, lo, hi);
    if (isnan(p->median_return))
        sbuf_printf(b, "\"medianReturnSeconds\":null}");
    else
        sbuf_printf(b, "\"medianReturnSeconds\":%.0f}", p->median_return);
}

static void jstr(struct sbuf *b, const char *s)
{
    yq(b, s); /* a YAML double-quoted scalar with these escapes is a JSON string too */
}

static void rec_json(const struct rec_run *run, struct sbuf *b)
{
    char a[RFC3339_LEN], z[RFC3339_LEN], d[DUR_LEN];
    sbuf_printf(b, "{\"rulesFile\":");
    jstr(b, run->rs->file);
    rfc3339_format(a, sizeof(a), run->from, RFC3339_SEC);
    rfc3339_format(z, sizeof(z), run->split, RFC3339_SEC);
    sbuf_printf(b, ",\"chosenOn\":{\"from\":\"%s\",\"to\":\"%s\"},", a, z);
    if (run->holdout > 0) {
        rfc3339_format(a, sizeof(a), run->hold_from, RFC3339_SEC);
        rfc3339_format(z, sizeof(z), run->to, RFC3339_SEC);
        sbuf_printf(b, "\"heldOut\":{\"from\":\"%s\",\"to\":\"%s\"},", a, z);
    } else {
        sbuf_printf(b, "\"heldOut\":null,");
    }
    sbuf_printf(b, "\"interval\":\"%s\",", rec_dur(d, run->interval));
    sbuf_printf(b, "\"returnWithin\":\"%s\",\"maxReturnShare\":%.6f,\"by\":",
                rec_dur(d, run->cfg.return_within), run->share);
    jstr(b, run->by);
    sbuf_printf(b, ",\"groups\":[");
    for (size_t i = 0; i < run->ng; i++) {
        const struct rec_group *g = &run->g[i];
        sbuf_printf(b, "%s{\"rule\":", i ? "," : "");
        jstr(b, run->rs->rules[g->rule].name);
        sbuf_printf(b, ",\"name\":");
        jstr(b, g->name);
        sbuf_printf(b, ",\"by\":{");
        jstr(b, run->by);
        sbuf_putc(b, ':');
        jstr(b, g->value);
        sbuf_printf(b, "},\"workloads\":%zu,\"current\":", g->workloads);
        json_point(b, &g->cur, true);
        sbuf_printf(b, ",\"recommended\":");
        if (g->chosen >= 0) {
            json_point(b, &g->pts[g->chosen], true);
            sbuf_printf(b, ",\"reason\":null,\"confirmed\":");
            if (g->has_conf)
                json_point(b, &g->conf, false);
            else
                sbuf_printf(b, "null");
        } else {
            struct sbuf r = {0};
            rec_reason_text(run, g, &r);
            sbuf_printf(b, "null,\"reason\":");
            jstr(b, r.buf);
            sbuf_printf(b, ",\"confirmed\":null");
            sbuf_free(&r);
        }
        sbuf_printf(b, ",\"holdout\":");
        if (g->chosen >= 0 && run->holdout > 0) {
            const struct rec_point *h = &g->hold[g->chosen];
            double hs = rec_share(h);
            sbuf_printf(b, "{\"predicted\":");
            json_point(b, &g->pts[g->chosen], false);
            sbuf_printf(b, ",\"heldOut\":");
            json_point(b, h, false);
            sbuf_printf(b, ",\"aboveTarget\":%s}",
                        !isnan(hs) && hs > run->share + 1e-9 ? "true" : "false");
        } else {
            sbuf_printf(b, "null");
        }
        sbuf_printf(b, ",\"dataSeconds\":");
        if (isnan(g->data_seconds))
            sbuf_printf(b, "null");
        else
            sbuf_printf(b, "%.0f", g->data_seconds);
        sbuf_printf(b, ",\"idlePeriods\":%zu,\"frontier\":[", g->eager);
        bool *on = xcalloc(run->npts, sizeof(bool));
        rec_frontier(g->pts, run->npts, on);
        for (size_t k = 0, n = 0; k < run->npts; k++)
            if (on[k]) {
                sbuf_printf(b, "%s", n++ ? "," : "");
                json_point(b, &g->pts[k], true);
            }
        free(on);
        sbuf_printf(b, "]}");
    }
    sbuf_printf(b, "],\"lookup\":{\"checked\":");
    struct sbuf n = {0};
    rec_lookup_note(run, &n);
    jstr(b, n.len ? n.buf : "");
    sbuf_free(&n);
    size_t nv;
    const struct btl_verdict *const *v = btl_verdicts(run->cfg.lookup, &nv);
    for (int pass = 0; pass < 2; pass++) {
        sbuf_printf(b, ",\"%s\":[", pass ? "notChecked" : "leftOut");
        for (size_t i = 0, k = 0; i < nv; i++) {
            if (v[i]->state != (pass ? BTL_UNCHECKED : BTL_LEFT_OUT))
                continue;
            sbuf_printf(b, "%s{\"workload\":{", k++ ? "," : "");
            for (size_t j = 0; j < v[i]->identity.n; j++) {
                sbuf_printf(b, "%s", j ? "," : "");
                jstr(b, v[i]->identity.v[j].name);
                sbuf_putc(b, ':');
                jstr(b, v[i]->identity.v[j].value);
            }
            sbuf_printf(b, "},\"reason\":");
            jstr(b, v[i]->why);
            sbuf_putc(b, '}');
        }
        sbuf_putc(b, ']');
    }
    sbuf_printf(b, "}}\n");
}

static void rec_csv(const struct rec_run *run, struct sbuf *b)
{
    char d[DUR_LEN];
    sbuf_printf(b, "rule,by,value,threshold,idle_timer,notice_period,reclaims,gpu_hours_freed,"
                   "returns_within,return_share,share_low,share_high,median_return_seconds,"
                   "frontier,recommended,heldout_reclaims,heldout_gpu_hours_freed,"
                   "heldout_returns_within\n");
    for (size_t i = 0; i < run->ng; i++) {
        const struct rec_group *g = &run->g[i];
        bool *on = xcalloc(run->npts, sizeof(bool));
        rec_frontier(g->pts, run->npts, on);
        for (size_t k = 0; k < run->npts; k++) {
            const struct rec_point *p = &g->pts[k], *h = &g->hold[k];
            double lo, hi, s = rec_share(p);
            rec_wilson(p->returns_within, p->reclaims, &lo, &hi);
            /* the rule, label and value may hold commas: quoted as RFC 4180 */
            const char *f[] = {run->rs->rules[g->rule].name, run->by, g->value};
            for (int j = 0; j < 3; j++) {
                sbuf_putc(b, '"');
                for (const char *c = f[j]; *c; c++) {
                    if (*c == '"')
                        sbuf_putc(b, '"');
                    sbuf_putc(b, *c);
                }
                sbuf_add(b, "\",", 2);
            }
            sbuf_printf(b, "%.15g,%s,", p->threshold, rec_dur(d, p->idle_timer));
            sbuf_printf(b, "%s,%zu,%.4f,%zu,", rec_dur(d, p->notice), p->reclaims,
                        p->gpu_seconds / 3600, p->returns_within);
            if (isnan(s))
                sbuf_printf(b, ",,,");
            else
                sbuf_printf(b, "%.4f,%.4f,%.4f,", s, lo, hi);
            if (!isnan(p->median_return))
                sbuf_printf(b, "%.0f", p->median_return);
            sbuf_printf(b, ",%s,%s,", on[k] ? "true" : "false",
                        (long)k == g->chosen ? "true" : "false");
            if (run->holdout > 0)
                sbuf_printf(b, "%zu,%.4f,%zu\n", h->reclaims, h->gpu_seconds / 3600,
                            h->returns_within);
            else
                sbuf_printf(b, ",,\n");
        }
        free(on);
    }
}

/* The page of --output html (rechtml.h): the same figures as rec_json, drawn. */
static void rec_html(const struct rec_run *run, struct sbuf *b)
{
    char a[RFC3339_LEN], z[RFC3339_LEN], h1[RFC3339_LEN], h2[RFC3339_LEN];
    struct rechtml_group *hg = xcalloc(run->ng ? run->ng : 1, sizeof(*hg));
    struct sbuf *why = xcalloc(run->ng ? run->ng : 1, sizeof(*why));
    for (size_t i = 0; i < run->ng; i++) {
        const struct rec_group *g = &run->g[i];
        if (g->chosen < 0)
            rec_reason_text(run, g, &why[i]);
        double hs = g->chosen >= 0 ? rec_share(&g->hold[g->chosen]) : NAN;
        hg[i] = (struct rechtml_group){
            .rule = run->rs->rules[g->rule].name,
            .name = g->name,
            .value = g->value,
            .workloads = g->workloads,
            .cur = &g->cur,
            .pts = g->pts,
            .chosen = g->chosen,
            .reason = why[i].buf,
            .conf = g->chosen >= 0 && g->has_conf ? &g->conf : NULL,
            .held = g->chosen >= 0 && run->holdout > 0 ? &g->hold[g->chosen] : NULL,
            .above_target = run->holdout > 0 && !isnan(hs) && hs > run->share + 1e-9};
    }
    rfc3339_format(a, sizeof(a), run->from, RFC3339_SEC);
    rfc3339_format(z, sizeof(z), run->split, RFC3339_SEC);
    rfc3339_format(h1, sizeof(h1), run->hold_from, RFC3339_SEC);
    rfc3339_format(h2, sizeof(h2), run->to, RFC3339_SEC);
    struct rechtml_page pg = {.rules_file = run->rs->file,
                              .by = run->by,
                              .chosen_from = a,
                              .chosen_to = z,
                              .held_from = run->holdout > 0 ? h1 : NULL,
                              .held_to = run->holdout > 0 ? h2 : NULL,
                              .interval = run->interval,
                              .return_within = run->cfg.return_within,
                              .max_share = run->share,
                              .npts = run->npts,
                              .note = bt_not_simulated,
                              .g = hg,
                              .ng = run->ng};
    rechtml_render(&pg, b);
    for (size_t i = 0; i < run->ng; i++)
        sbuf_free(&why[i]);
    free(why);
    free(hg);
}

/* ---- the command ------------------------------------------------------------------------- */

static void rec_free(struct rec_run *run)
{
    for (size_t i = 0; i < run->ng; i++) {
        free(run->g[i].value);
        free(run->g[i].name);
        free(run->g[i].pts);
        free(run->g[i].hold);
        free(run->g[i].ns);
        free(run->g[i].scope);
        for (size_t k = 0; run->g[i].vs && k < run->npts; k++)
            free(run->g[i].vs[k].name);
        free(run->g[i].vs);
    }
    free(run->g);
    free(run->th);
    free(run->it);
    free(run->no);
    free(run->orig_action);
    free(run->orig_dry);
}

/* The grid's idle timers must make valid rules of every rule of R (rules/README.md). */
static int rec_check_grid(const struct rec_run *run)
{
    char d1[DUR_LEN], d2[DUR_LEN];
    for (size_t i = 0; i < run->rs->n; i++) {
        const struct rule *r = &run->rs->rules[i];
        for (size_t k = 0; k < run->nit; k++) {
            if (!(run->it[k] > r->tolerated_gap) || run->it[k] / r->step > 11000 ||
                run->it[k] > 30 * 86400) {
                fprintf(stderr,
                        "error: idle timer '%s' of '--idle-timers' is not valid for rule '%s': "
                        "it must be longer than its toleratedGap (%s), at most 11000 steps and "
                        "at most 30d\n",
                        rec_dur(d1, run->it[k]), r->name, rec_dur(d2, r->tolerated_gap));
                return -1;
            }
        }
        for (size_t k = 0; k < run->nno; k++)
            if (run->no[k] > 86400) {
                fprintf(stderr,
                        "error: notice period '%s' of '--notice-periods' is over 24h, the "
                        "longest a rule takes\n",
                        rec_dur(d1, run->no[k]));
                return -1;
            }
    }
    return 0;
}

int cmd_recommend(char *const *args, size_t nargs)
{
    (void)args, (void)nargs;
    struct rec_run run = {.by = cmd_flag_str(F_BY) ? cmd_flag_str(F_BY) : "namespace"};
    char err[512];
    double now = wall_now();
    run.cfg = (struct bt_cfg){.return_within = cmd_flag_num(F_RETURN_WITHIN),
                              .max_actions_per_hour = (unsigned)cmd_flag_num(F_MAX_PER_HOUR),
                              .protected_namespaces = cmd_flags[F_PROTECTED].value,
                              .by = run.by};
    if (cmd_range("recommend", now, &run.from, &run.to))
        return CMD_EXIT_USAGE;
    run.interval = cmd_flag_num(F_INTERVAL);
    if (rec_parse_share(cmd_flags[F_MAX_RETURN_SHARE].value, 100, "max-return-share", &run.share,
                        err, sizeof(err)) ||
        rec_parse_share(cmd_flags[F_HOLDOUT].value, 90, "holdout", &run.holdout, err,
                        sizeof(err)) ||
        rec_parse_list(cmd_flags[F_THRESHOLDS].value, false, false, "thresholds", &run.th, &run.nth,
                       err, sizeof(err)) ||
        rec_parse_list(cmd_flags[F_IDLE_TIMERS].value, true, false, "idle-timers", &run.it,
                       &run.nit, err, sizeof(err)) ||
        rec_parse_list(cmd_flags[F_NOTICE_PERIODS].value, true, true, "notice-periods", &run.no,
                       &run.nno, err, sizeof(err))) {
        fprintf(stderr, "error: %s\n", err);
        rec_free(&run);
        return CMD_EXIT_USAGE;
    }
    run.npts = run.nth * run.nit * run.nno;
    /* The range chosen on: whole cycles, the rest held out. */
    size_t n = bt_cycles(run.from, run.to, run.interval);
    size_t nhold = (size_t)floor((double)n * run.holdout + 0.5);
    if (run.holdout > 0 && (nhold < 1 || nhold >= n)) {
        fprintf(stderr, "error: the range has %zu cycles: too few to hold out %s of them\n", n,
                cmd_flags[F_HOLDOUT].value);
        rec_free(&run);
        return CMD_EXIT_USAGE;
    }
    run.split = run.from + (double)(n - nhold - 1) * run.interval;
    run.hold_from = run.split + run.interval;
    run.cfg.from = run.from;
    run.cfg.to = run.to;
    run.cfg.interval = run.interval;
    struct promq_cfg pc;
    if (cmd_need_rules_file("recommend") || cmd_prom_config(&pc)) {
        rec_free(&run);
        return CMD_EXIT_USAGE;
    }
    struct ruleset rs = {0};
    if (cmd_load_rules(cmd_flags[F_RULES_FILE].value, &rs) != 0) {
        rules_free(&rs);
        rec_free(&run);
        return CMD_EXIT_USAGE;
    }
    run.rs = &rs;
    if (rec_check_grid(&run)) {
        rules_free(&rs);
        rec_free(&run);
        return CMD_EXIT_USAGE;
    }
    run.orig_action = xcalloc(rs.n ? rs.n : 1, sizeof(*run.orig_action));
    run.orig_dry = xcalloc(rs.n ? rs.n : 1, sizeof(*run.orig_dry));
    for (size_t i = 0; i < rs.n; i++) {
        run.orig_action[i] = rs.rules[i].action;
        run.orig_dry[i] = rs.rules[i].dry_run;
    }
    if (!cmd_flags[F_LOG_LEVEL].set)
        log_set_level("warn");
    if (!(run.cfg.lookup = cmd_lookup_new())) {
        rules_free(&rs);
        rec_free(&run);
        return CMD_EXIT_USAGE;
    }
    struct promq *q = promq_new(&pc);
    int status = 1;
    /* R itself over the range chosen on: "current", and the groups. */
    struct bt_cfg cc = run.cfg;
    cc.to = run.split;
    struct bt_source *src =
        bt_source_replay(q, &rs, cc.from, cc.to, cc.interval, false, err, sizeof(err));
    struct bt_sim *cur =
        src ? bt_run(&rs, &cc, src, NULL, NULL, "current", err, sizeof(err)) : NULL;
    if (!cur) {
        fprintf(stderr, "error: %s\n", err);
        goto out;
    }
    const struct bt_result *cr = bt_sim_result(cur);
    for (size_t i = 0; i < cr->nrules; i++)
        if (cr->rule[i].nfail) {
            fprintf(stderr,
                    "error: rule '%s' could not be evaluated over part of the range: no "
                    "recommendation from a history with holes\n",
                    cr->rule[i].name);
            status = CMD_EXIT_RULE_ERROR;
            goto out;
        }
    run.data_start = cr->data_start;
    rec_groups(&run, cr);
    for (size_t i = 0; i < run.ng; i++)
        run.g[i].name = rec_name(rs.rules[run.g[i].rule].name, run.g[i].value, i);
    run.no_fast = cmd_flag_bool(F_RECOMMEND_ENGINE);
    double t_sweep = mono_now();
    int sw = rec_sweep(&run, q, err, sizeof(err));
    t_sweep = mono_now() - t_sweep;
    if (sw == 0 && cmd_flag_bool(F_STATS))
        fprintf(stderr,
                "recommend: %zu groups x %zu grid points: %zu by the fast pass, %zu by the "
                "engine (%zu of them first tried fast); the fast pass judged %lu "
                "workload-cycles and carried %lu, looking at %lu (%lu keeps set to stand); "
                "sweep %.3f s\n",
                run.ng, run.npts, run.nfast, run.nengine, run.nredo, run.judged, run.carried,
                run.looked, run.kept, t_sweep);
    if (sw != 0) {
        fprintf(stderr, "error: %s\n", err);
        status = sw == -2 ? CMD_EXIT_RULE_ERROR : 1;
        goto out;
    }
    rec_choose_all(&run);
    if (rec_confirm(&run, q, err, sizeof(err)) != 0) {
        fprintf(stderr, "error: %s\n", err);
        goto out;
    }
    struct sbuf o = {0};
    const char *fmt = cmd_flags[F_OUTPUT].value;
    if (strcmp(fmt, "json") == 0)
        rec_json(&run, &o);
    else if (strcmp(fmt, "csv") == 0)
        rec_csv(&run, &o);
    else if (strcmp(fmt, "yaml") == 0)
        rec_yaml(&run, &o, true);
    else if (strcmp(fmt, "html") == 0)
        rec_html(&run, &o);
    else
        rec_table(&run, &o);
    fwrite(o.buf, 1, o.len, stdout);
    fflush(stdout);
    sbuf_free(&o);
    status = 0;
out:
    bt_sim_free(cur);
    btl_free(run.cfg.lookup);
    promq_free(q);
    rules_free(&rs);
    rec_free(&run);
    return status;
}
