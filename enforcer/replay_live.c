/*
 * `run`'s incremental reader (replay_live_* of replay.h), called only by daemon.c: the
 * replay of replay.c with an open end. Each cycle reads, per selector, only the raw samples
 * since its last read (and --prometheus.read-overlap before, for late samples), folds them
 * into each series' proof carried from cycle to cycle, and reads the whole window again every
 * --enforce.full-read-interval, or at once when a read fails, a late sample cannot be mended
 * or a re-proof is refuted. It shares the replay's state and raw reads with the range reader
 * through replay_p.h.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fetch.h"
#include "log.h"
#include "raw.h"
#include "rawread.h"
#include "replay.h"
#include "replay_p.h"
#include "util.h"

/* ---- run: a replay with an open end (replay.h, issue 26) -------------------------------- */

/*
 * What `run` carries per series: the proof (proof.h), a fold of every sample read since the
 * selector's last full read, constant in size whatever the idle timer, and the times of its
 * last few samples, which tell a sample the overlap reads again from one that arrived late.
 */
#define LV_RECENT    4
#define LV_MAX_FIXES 32 /* late series mended by their own read in one cycle, else a full read */

struct lv_series {
    struct rule_proof rp;      /* s.labels without __name__ (the index key), p; no window stats */
    char *key;                 /* labels_format(rp.s.labels) */
    const char *name;          /* __name__ (lv_rule.names owns it), NULL when none */
    int64_t recent[LV_RECENT]; /* the last samples folded, ring */
    uint8_t nrecent, next;
    unsigned fix; /* the cycle (lv_rule.cycle) in which it was listed for mending */
};

/* The carried proofs of one rule read as raw samples. */
struct lv_rule {
    const char *sel; /* the selector's text (rules in force) */
    struct proof_params pp;
    struct lv_series *v;
    size_t n;
    struct strset index; /* key -> index + 1 */
    /* The metric names of the series, each held once: a selector's series mostly share one
       (a million copies of it were 48 MB). */
    struct strset names; /* name -> the same string, owned by namev */
    char **namev;
    size_t nnames;
    char err[256]; /* two series differ only in their name: the rule keeps */
    size_t *fixes; /* late series to mend this cycle */
    size_t nfixes;
    unsigned cycle;
};

static void lv_series_free(struct lv_series *e)
{
    labels_free(&e->rp.s.labels);
    free(e->rp.p);
    free(e->key);
}

static void lv_clear(struct lv_rule *l)
{
    for (size_t i = 0; i < l->n; i++)
        lv_series_free(&l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
    strset_free(&l->index);
    l->index = (struct strset){0};
    strset_free(&l->names);
    l->names = (struct strset){0};
    for (size_t i = 0; i < l->nnames; i++)
        free(l->namev[i]);
    free(l->namev);
    l->namev = NULL;
    l->nnames = 0;
    l->err[0] = '\0';
    l->nfixes = 0;
}

static void lv_free(struct lv_rule *l)
{
    lv_clear(l);
    free(l->fixes);
}

void lv_free_all(struct replay *r)
{
    for (size_t i = 0; r->lv && i < r->cfg.rs->n; i++)
        lv_free(&r->lv[i]);
    free(r->lv);
    r->lv = NULL;
}

static void lv_reindex(struct lv_rule *l)
{
    strset_free(&l->index);
    l->index = (struct strset){0};
    for (size_t i = 0; i < l->n; i++)
        strset_put(&l->index, l->v[i].key, strlen(l->v[i].key), (const void *)(uintptr_t)(i + 1));
}

/* `name` as held by l (added when new). */
static const char *lv_name(struct lv_rule *l, const char *name)
{
    const char *got = strset_get(&l->names, name, strlen(name));
    if (got)
        return got;
    char *own = xstrdup(name);
    l->namev = xgrow(l->namev, l->nnames, sizeof(*l->namev));
    l->namev[l->nnames++] = own;
    strset_put(&l->names, own, strlen(own), own);
    return own;
}

/* The series of `in` in l, added empty when new; NULL when another series has its labels
   but another metric name (the rule then keeps: raw_proofs_end refuses the same). */
static struct lv_series *lv_series_of(struct lv_rule *l, const struct series *in)
{
    struct labels nn = {0};
    const char *name = labels_get(&in->labels, "__name__");
    raw_drop_name(&nn, &in->labels);
    char *key = labels_format(&nn);
    const void *got = strset_put(&l->index, key, strlen(key), (const void *)(uintptr_t)(l->n + 1));
    if (got) {
        free(key);
        labels_free(&nn);
        struct lv_series *e = &l->v[(uintptr_t)got - 1];
        if ((name == NULL) != (e->name == NULL) || (name && strcmp(name, e->name) != 0)) {
            snprintf(l->err, sizeof(l->err), "two series differ only in their metric name: %.160s",
                     e->key);
            return NULL;
        }
        return e;
    }
    l->v = xgrow(l->v, l->n, sizeof(*l->v));
    struct lv_series *e = &l->v[l->n++];
    *e = (struct lv_series){.key = key, .name = name ? lv_name(l, name) : NULL};
    e->rp.s.labels = nn;
    e->rp.p = proof_new(&l->pp);
    return e;
}

static bool lv_recent(const struct lv_series *e, int64_t ms)
{
    for (size_t i = 0; i < e->nrecent; i++)
        if (e->recent[i] == ms)
            return true;
    return false;
}

/* Fold the samples of `in` in [lo, hi] into rule l's proof of the series. */
static void lv_fold(struct lv_rule *l, const struct series *in, int64_t lo, int64_t hi,
                    size_t *late)
{
    struct lv_series *e = lv_series_of(l, in);
    if (!e)
        return;
    for (size_t i = 0; i < in->n; i++) {
        int64_t ms = rp_ms(in->p[i].t);
        if (ms < lo || ms > hi)
            continue;
        int64_t last = proof_last(e->rp.p);
        if (last != PROOF_NONE && ms <= last) {
            /* Read again by the overlap, or arrived after the read of its time: the second
               cannot be folded now (the fold goes forward only). It is counted and the series
               is read again whole this cycle (lv_mend). A sample before the last few folded
               is taken as one read before: the overlap is meant to be a few samples long. */
            if (lv_recent(e, ms) ||
                (e->nrecent == LV_RECENT && ms < e->recent[e->next % LV_RECENT]))
                continue;
            (*late)++;
            if (e->fix != l->cycle) {
                e->fix = l->cycle;
                l->fixes = xgrow(l->fixes, l->nfixes, sizeof(*l->fixes));
                l->fixes[l->nfixes++] = (size_t)(e - l->v);
            }
            continue;
        }
        char err[128];
        if (proof_add(e->rp.p, &l->pp, ms, in->p[i].v, err, sizeof(err)) < 0)
            continue; /* not reached: ms is after the last */
        e->recent[e->next++ % LV_RECENT] = ms;
        if (e->nrecent < LV_RECENT)
            e->nrecent++;
    }
}

/* rawread_series_fn of a live selector: into the proofs of every rule that reads it. */
int lv_on_series(void *arg, const struct series *in, char *err, size_t errlen)
{
    struct rp_sel *s = arg;
    struct replay *r = s->owner;
    size_t k = (size_t)(s - r->sels);
    for (size_t i = 0; i < r->cfg.rs->n; i++)
        if (r->rules[i].mode == RP_RAW && r->rules[i].sel == k)
            lv_fold(&r->lv[i], in, s->lo_ms, s->hi_ms, &s->late);
    (void)err;
    (void)errlen;
    return 0;
}

/* Set up the proof store of every RP_RAW rule of r->cfg.rs; `old` (may be NULL) the stores
   of the rules before a reload, taken over where selector and parameters are the same. */
static void lv_setup(struct replay *r, struct lv_rule *old, size_t nold)
{
    const struct ruleset *rs = r->cfg.rs;
    r->lv = xcalloc(rs->n ? rs->n : 1, sizeof(*r->lv));
    for (size_t i = 0; i < rs->n; i++) {
        if (r->rules[i].mode != RP_RAW)
            continue;
        struct lv_rule *l = &r->lv[i];
        if (decide_proof_params(&rs->rules[i], &l->pp) < 0) {
            /* More thresholds than a proof folds: read as windows, as `plan` judges it. */
            r->rules[i].mode = RP_FALLBACK;
            r->nfallback++;
            continue;
        }
        l->sel = r->sels[r->rules[i].sel].sel;
        bool moved = false;
        for (size_t j = 0; j < nold && !moved; j++) {
            if (!old[j].sel || strcmp(old[j].sel, l->sel) != 0 ||
                memcmp(&old[j].pp, &l->pp, sizeof(l->pp)) != 0)
                continue;
            struct proof_params pp = l->pp;
            *l = old[j];
            l->sel = r->sels[r->rules[i].sel].sel;
            l->pp = pp;
            old[j].sel = NULL;
            old[j] = (struct lv_rule){0};
            moved = true;
        }
        /* A new store holds nothing: its selector is read in full. */
        if (!moved)
            r->sels[r->rules[i].sel].force_full = true;
    }
}

struct replay *replay_live_open(struct promq *q, const struct ruleset *rs,
                                const struct replay_live_cfg *cfg)
{
    struct replay *r = xcalloc(1, sizeof(*r));
    r->live = true;
    r->lcfg = *cfg;
    r->cfg = (struct replay_cfg){.q = q, .rs = rs, .chunk = cfg->chunk};
    if (!(r->cfg.chunk > 0))
        r->cfg.chunk = REPLAY_DEFAULT_CHUNK;
    /* The instant series are asked at each cycle time, as fetch_rules asks them. */
    r->inst_per_cycle = true;
    r->st.data_start = NAN;
    rp_plan(r);
    lv_setup(r, NULL, 0);
    return r;
}

/* The rules of selector k drop their proofs. */
static void lv_drop_sel(struct replay *r, size_t k)
{
    rp_sel_drop(&r->sels[k]);
    for (size_t i = 0; i < r->cfg.rs->n; i++)
        if (r->rules[i].mode == RP_RAW && r->rules[i].sel == k)
            lv_clear(&r->lv[i]);
}

void replay_live_rules(struct replay *r, const struct ruleset *rs)
{
    /* The selectors the new rules still use keep their state (rp_plan finds them by their
       text); the others go. */
    struct rp_sel *old = r->sels;
    size_t nold = r->nsels;
    struct lv_rule *oldlv = r->lv;
    size_t noldlv = r->cfg.rs->n;
    r->sels = NULL;
    r->nsels = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const struct rule *ru = &rs->rules[i];
        if (!ru->q_activity)
            continue;
        for (size_t k = 0; k < nold; k++) {
            if (!old[k].sel || strcmp(old[k].sel, ru->q_activity) != 0)
                continue;
            r->sels = xgrow(r->sels, r->nsels, sizeof(*r->sels));
            r->sels[r->nsels++] = old[k];
            old[k].sel = NULL; /* moved */
            break;
        }
    }
    for (size_t k = 0; k < nold; k++)
        if (old[k].sel)
            rp_sel_free(&old[k]);
    free(old);
    for (size_t i = 0; i < r->ninsts; i++)
        rp_answer_reset(&r->insts[i].ans);
    free(r->insts);
    r->insts = NULL;
    r->ninsts = 0;
    free(r->rules);
    r->cfg.rs = rs;
    rp_plan(r);
    /* A selector moved over keeps its path; one no rule reads raw any more is dropped. */
    size_t kept = 0;
    for (size_t k = 0; k < r->nsels; k++) {
        bool used = false;
        for (size_t i = 0; i < rs->n; i++)
            used |= r->rules[i].mode == RP_RAW && r->rules[i].sel == k;
        if (!used) {
            rp_sel_free(&r->sels[k]);
            continue;
        }
        for (size_t i = 0; i < rs->n; i++)
            if (r->rules[i].mode == RP_RAW && r->rules[i].sel == k)
                r->rules[i].sel = kept;
        r->sels[kept++] = r->sels[k];
    }
    r->nsels = kept;
    /* The old stores' selector strings point into the old rules: matched before they go. */
    lv_setup(r, oldlv, noldlv);
    for (size_t j = 0; j < noldlv; j++)
        lv_free(&oldlv[j]);
    free(oldlv);
}

void replay_live_invalidate(struct replay *r)
{
    for (size_t k = 0; k < r->nsels; k++)
        r->sels[k].force_full = true;
}

/* The series' labels with its name, as a selector's matchers want them. */
static void lv_full_labels(const struct lv_series *e, struct labels *out)
{
    *out = (struct labels){0};
    labels_copy(out, &e->rp.s.labels);
    if (e->name)
        labels_set(out, "__name__", e->name);
}

static char *rp_targeted(const char *sel, const struct labels *id);

/*
 * Mend the series of rule i that got a late sample this cycle: each is read again over the
 * whole window by its own request and folded anew. -1 when there are too many (the caller
 * reads the selector in full) or a read failed (message in s->live_err).
 */
static int lv_mend(struct replay *r, size_t i, double need, double now)
{
    struct lv_rule *l = &r->lv[i];
    struct rp_sel *s = &r->sels[r->rules[i].sel];
    if (l->nfixes > LV_MAX_FIXES)
        return -1;
    for (size_t f = 0; f < l->nfixes; f++) {
        struct lv_series *e = &l->v[l->fixes[f]];
        struct labels full;
        lv_full_labels(e, &full);
        char *sel = rp_targeted(s->sel, &full);
        labels_free(&full);
        struct matrix m = {0};
        size_t samples = 0, bytes = 0;
        char err[256] = "";
        enum rawread_rc got = rawread_read(r->cfg.q, s->path, false, sel, need, now, NULL, NULL, &m,
                                           &samples, &bytes, err, sizeof(err));
        r->st.requests++;
        s->cycle_samples += samples;
        free(sel);
        if (got != RAWREAD_OK) {
            snprintf(s->live_err, sizeof(s->live_err), "%s",
                     got == RAWREAD_ABSENT ? "remote read not offered" : err);
            matrix_free(&m);
            return -1;
        }
        proof_init(e->rp.p, &l->pp);
        e->nrecent = e->next = 0;
        int64_t lo = rp_ms(need), hi = rp_ms(now);
        for (size_t j = 0; j < m.n; j++) {
            /* The matchers also match series with more labels: only this one is folded. */
            struct labels nn = {0};
            raw_drop_name(&nn, &m.s[j].labels);
            bool same = labels_equal(&nn, &e->rp.s.labels);
            labels_free(&nn);
            if (same)
                lv_fold(l, &m.s[j], lo, hi, &(size_t){0});
        }
        matrix_free(&m);
    }
    l->nfixes = 0;
    return 0;
}

/* Read selector k for the cycle at `now`: in full or since its last read. */
static void rp_live_read(struct replay *r, size_t k, double now)
{
    struct rp_sel *s = &r->sels[k];
    s->live_err[0] = '\0';
    s->late = s->cycle_samples = 0;
    double need = rp_sel_start(r, k, now);
    const char *why = NULL;
    if (isnan(s->held_from))
        why = "no state";
    else if (s->force_full)
        why = "asked";
    else if (need < s->held_from - 0.0005)
        why = "a rule needs an earlier start";
    else if (now < s->read_to)
        why = "the clock went back";
    else if (now - s->last_full >= r->lcfg.full_every)
        why = "full-read interval";
    for (int pass = 0; pass < 2; pass++) {
        double a;
        for (size_t i = 0; i < r->cfg.rs->n; i++)
            if (r->rules[i].mode == RP_RAW && r->rules[i].sel == k) {
                r->lv[i].cycle++;
                r->lv[i].nfixes = 0;
            }
        if (why) {
            lv_drop_sel(r, k);
            a = need;
            s->full_now = true;
            s->force_full = false;
            log_debug("activity '%s': full read from %.3f (%s)", s->sel, a, why);
        } else {
            a = s->read_to - r->lcfg.overlap;
            if (a < need)
                a = need;
            s->full_now = false;
        }
        while (!s->fallback && a < now && !s->live_err[0]) {
            double b = a + r->cfg.chunk < now ? a + r->cfg.chunk : now;
            rp_read(r, k, a, b);
            a = b;
        }
        if (s->fallback)
            return;
        bool again = false;
        for (size_t i = 0; i < r->cfg.rs->n && !s->live_err[0] && !again; i++)
            if (r->rules[i].mode == RP_RAW && r->rules[i].sel == k && r->lv[i].nfixes &&
                lv_mend(r, i, need, now) < 0 && !s->live_err[0])
                again = true;
        if (!again || why)
            break;
        why = "too many late samples"; /* read it all again, once */
    }
    if (s->live_err[0]) {
        lv_drop_sel(r, k);
        return;
    }
    if (s->full_now) {
        s->held_from = need;
        s->last_full = now;
    }
    s->read_to = now;
    if (!s->full_now)
        log_debug("activity '%s': incremental read of %zu samples (%zu late)", s->sel,
                  s->cycle_samples, s->late);
}

/*
 * Rule i's data at `now` from its carried proofs: the series with a sample on now's grid, as
 * raw_proofs hands them over (rule_proof shares the store's labels and proof: released by
 * replay_live_release, never by fetch_free).
 */
static void lv_activity(struct replay *r, size_t i, double now, struct rule_data *d)
{
    struct lv_rule *l = &r->lv[i];
    struct rp_sel *s = &r->sels[r->rules[i].sel];
    d->read_path = rawread_path_label(s->path);
    if (s->live_err[0] || l->err[0]) {
        snprintf(d->errmsg, sizeof(d->errmsg), "activity query (%s): %s", d->read_path,
                 s->live_err[0] ? s->live_err : l->err);
        d->error = 1;
        return;
    }
    int64_t ms = rp_ms(now);
    d->has_proofs = true;
    d->proof_params = l->pp;
    d->proofs = xcalloc(l->n ? l->n : 1, sizeof(*d->proofs));
    for (size_t j = 0; j < l->n; j++)
        if (proof_present(l->v[j].rp.p, &l->pp, ms))
            d->proofs[d->nproofs++] = l->v[j].rp;
    d->raw_coverage = true;
    d->coverage_tail = true;
}

/* Drop the series with no sample a later cycle's read could still need (raw.h). */
static void lv_trim(struct lv_rule *l, const struct rule *ru, double now)
{
    struct raw_grid g = fetch_grid(ru, now);
    int64_t lo = rp_ms(raw_read_start(&g));
    size_t kept = 0;
    for (size_t j = 0; j < l->n; j++) {
        int64_t last = proof_last(l->v[j].rp.p);
        if (last == PROOF_NONE || last < lo) {
            lv_series_free(&l->v[j]);
            continue;
        }
        l->v[kept++] = l->v[j];
    }
    if (kept != l->n) {
        l->n = kept;
        lv_reindex(l);
    }
}

/*
 * The cycle's instant queries (allocation, pending, priority), asked while the raw samples
 * are read: at a million workloads each takes tens of seconds of the server's and of our
 * parser's time, and the raw read as long again, on a server with several cores. The answers
 * are what rp_instant would ask for at `now` (the same expression at the same time, errors
 * kept in the answer): it finds them there and does not ask again, so the rule data is as a
 * sequential cycle builds it. Only the queries the RP_RAW rules' rp_instants will make.
 */
struct lv_prefetch {
    struct replay *r;
    double now;
    bool *want; /* per r->insts */
    pthread_t thread;
    bool started;
    double took; /* the thread's time, for the debug log */
};

static void *lv_prefetch_main(void *arg)
{
    struct lv_prefetch *pf = arg;
    struct replay *r = pf->r;
    double t0 = mono_now();
    for (size_t i = 0; i < r->ninsts; i++) {
        if (!pf->want[i])
            continue;
        struct rp_inst *in = &r->insts[i];
        rp_answer_reset(&in->ans);
        in->ans.rc = promq_instant(r->cfg.q, in->expr, pf->now, &in->ans.m, in->ans.err,
                                   sizeof(in->ans.err));
        in->ans.cur = xcalloc(in->ans.m.n ? in->ans.m.n : 1, sizeof(*in->ans.cur));
        in->at = pf->now;
    }
    pf->took = mono_now() - t0;
    return NULL;
}

/* Start the instant queries of the cycle at `now` in a thread; without one (pthread_create
   failed), rp_instant asks them in turn as before. r->insts is the thread's until lv_join. */
static void lv_prefetch(struct replay *r, double now, struct lv_prefetch *pf)
{
    *pf = (struct lv_prefetch){.r = r, .now = now};
    if (!r->inst_per_cycle || r->ninsts == 0)
        return;
    pf->want = xcalloc(r->ninsts, sizeof(*pf->want));
    const struct ruleset *rs = r->cfg.rs;
    bool any = false;
    for (size_t i = 0; i < rs->n; i++) {
        const struct rp_rule *pr = &r->rules[i];
        if (pr->mode != RP_RAW)
            continue;
        size_t use[3] = {pr->alloc,
                         rs->rules[i].policy == POLICY_DURING_PRESSURE ? pr->pending : SIZE_MAX,
                         pr->prio};
        for (size_t k = 0; k < 3; k++)
            if (use[k] != SIZE_MAX)
                any = pf->want[use[k]] = true;
    }
    if (any && pthread_create(&pf->thread, NULL, lv_prefetch_main, pf) == 0)
        pf->started = true;
    else if (any)
        log_debug("instant queries: no thread, asked after the raw read");
}

static void lv_join(struct lv_prefetch *pf)
{
    if (pf->started)
        pthread_join(pf->thread, NULL);
    free(pf->want);
    pf->want = NULL;
    pf->started = false;
}

int replay_live_cycle(struct replay *r, double now, struct rule_data *data)
{
    double t0 = mono_now();
    struct lv_prefetch pf;
    lv_prefetch(r, now, &pf);
    for (size_t k = 0; k < r->nsels; k++) {
        bool used = false;
        for (size_t i = 0; i < r->cfg.rs->n && !used; i++)
            used = r->rules[i].mode == RP_RAW && r->rules[i].sel == k;
        if (used)
            rp_live_read(r, k, now);
    }
    double t1 = mono_now();
    lv_join(&pf);
    double t2 = mono_now();
    log_debug(
        "live cycle: raw reads %.3f s; instant queries %.3f s beside them, %.3f s more waited",
        t1 - t0, pf.took, t2 - t1);
    for (size_t i = 0; i < r->cfg.rs->n; i++) {
        if (r->rules[i].mode == RP_RAW && r->sels[r->rules[i].sel].fallback) {
            r->rules[i].mode = RP_FALLBACK;
            r->nfallback++;
        }
    }
    const struct ruleset *rs = r->cfg.rs;
    for (size_t i = 0; i < rs->n; i++) {
        if (r->rules[i].mode != RP_RAW)
            continue;
        lv_trim(&r->lv[i], &rs->rules[i], now);
        struct rule_data *d = &data[i];
        *d = (struct rule_data){.rule = &rs->rules[i]};
        d->start = now - decide_lookback(&rs->rules[i]);
        d->end = now;
        lv_activity(r, i, now, d);
        rp_instants(r, i, now, d);
        d->proof = r->sels[r->rules[i].sel].full_now ? DECIDE_PROOF_FULL : DECIDE_PROOF_INCREMENTAL;
    }
    /* Every rule has its copy of the instant answers: at a million workloads the one held
       here is some 250 MB that decide() and the notices need not find in use. The next
       cycle asks again (rp_instant: no answer held). */
    for (size_t i = 0; i < r->ninsts; i++)
        rp_answer_reset(&r->insts[i].ans);
    if (r->nfallback)
        rp_fallback(r, now, data);
    int rc = 0;
    for (size_t i = 0; i < rs->n; i++)
        if (data[i].error || data[i].pending_error)
            rc = -1;
    for (size_t k = 0; k < r->nsels; k++) {
        struct rp_sel *s = &r->sels[k];
        /* Complete from the start of now's window on: a later cycle needs no earlier. */
        double need = rp_sel_start(r, k, now);
        if (!isnan(s->held_from) && need > s->held_from)
            s->held_from = need;
    }
    return rc;
}

void replay_live_release(struct replay *r, struct rule_data *data)
{
    for (size_t i = 0; i < r->cfg.rs->n; i++) {
        if (r->rules[i].mode != RP_RAW || !data[i].has_proofs)
            continue;
        free(data[i].proofs);
        data[i].proofs = NULL;
        data[i].nproofs = 0;
    }
}

void replay_live_rule(const struct replay *r, size_t i, struct replay_live_rule *out)
{
    *out = (struct replay_live_rule){0};
    if (i >= r->cfg.rs->n || r->rules[i].mode != RP_RAW)
        return;
    const struct rp_sel *s = &r->sels[r->rules[i].sel];
    out->raw = true;
    out->full = s->full_now;
    out->samples = s->cycle_samples;
    out->late = s->late;
}

void replay_live_stats(const struct replay *r, struct replay_live_stats *out)
{
    *out = (struct replay_live_stats){.reproofs = r->reproofs, .refuted = r->refuted};
    for (size_t i = 0; i < r->cfg.rs->n; i++) {
        const struct lv_rule *l = &r->lv[i];
        out->series += l->n;
        size_t per = sizeof(struct lv_series) + proof_size(&l->pp) + sizeof(struct strset_slot);
        for (size_t j = 0; j < l->n; j++) {
            const struct lv_series *e = &l->v[j];
            size_t b = per + 2 * (strlen(e->key) + 1);
            for (size_t k = 0; k < e->rp.s.labels.n; k++)
                b += sizeof(e->rp.s.labels.v[k]);
            out->bytes += b;
        }
        for (size_t k = 0; k < l->nnames; k++) /* held once for all its series */
            out->bytes += strlen(l->namev[k]) + 1 + sizeof(struct strset_slot) + sizeof(char *);
    }
}

/*
 * `sel` with the matchers of `id` added: `m{a="x"}` -> `m{a="x",ns="n",pod="p"}`, `m` ->
 * `m{ns="n",pod="p"}`. The forms fetch_is_selector accepts end with the name or `}`.
 */
static char *rp_targeted(const char *sel, const struct labels *id)
{
    char *m = labels_format(id); /* {a="x",...}, values escaped */
    size_t ml = strlen(m);
    size_t n = strlen(sel);
    while (n && (sel[n - 1] == ' ' || sel[n - 1] == '\t' || sel[n - 1] == '\n'))
        n--;
    char *out;
    if (n && sel[n - 1] == '}') {
        size_t open = n - 1;
        while (open > 0 && sel[open] != '{')
            open--;
        bool empty = true;
        for (size_t i = open + 1; i < n - 1; i++)
            empty &= sel[i] == ' ' || sel[i] == '\t' || sel[i] == '\n';
        if (empty)
            out = xasprintf("%.*s%.*s}", (int)(open + 1), sel, (int)(ml - 2), m + 1);
        else
            out = xasprintf("%.*s,%.*s}", (int)(n - 1), sel, (int)(ml - 2), m + 1);
    } else {
        out = xasprintf("%.*s%s", (int)n, sel, m);
    }
    free(m);
    return out;
}

/* The series of `m` that carry every label of `id` with its value (shallow). */
static struct matrix rp_only(const struct matrix *m, const struct labels *id)
{
    struct matrix out = {.s = xcalloc(m->n ? m->n : 1, sizeof(*out.s))};
    for (size_t j = 0; j < m->n; j++) {
        bool ok = true;
        for (size_t k = 0; k < id->n && ok; k++) {
            const char *v = labels_get(&m->s[j].labels, id->v[k].name);
            ok = v && strcmp(v, id->v[k].value) == 0;
        }
        if (ok)
            out.s[out.n++] = m->s[j];
    }
    return out;
}

/* The reasons under which a workload is idle (proven), kept only by the rule's policy. */
static bool rp_idle_verdict(enum reason why)
{
    return why == REASON_IDLE || why == REASON_NO_PRESSURE || why == REASON_FIT_CHECK ||
           why == REASON_NOT_NEEDED || why == REASON_CYCLE_CAP;
}

bool replay_live_reprove(struct replay *r, const struct rule_data *data,
                         const struct decision_rec *d, double now, struct decision_rec *proven,
                         char *msg, size_t msglen)
{
    const struct ruleset *rs = r->cfg.rs;
    if (d->rule < rs->rules || d->rule >= rs->rules + rs->n) {
        snprintf(msg, msglen, "full-window proof: the rule is no longer in force");
        return false;
    }
    size_t i = (size_t)(d->rule - rs->rules);
    if (r->rules[i].mode != RP_RAW) {
        snprintf(msg, msglen, "full-window proof: the rule is not read as raw samples");
        return false;
    }
    r->reproofs++;
    struct rp_sel *s = &r->sels[r->rules[i].sel];
    const struct rule *ru = d->rule;
    struct raw_grid g = fetch_grid(ru, now);
    double start = raw_read_start(&g);
    char *sel = rp_targeted(s->sel, &d->identity);
    char err[256] = "";
    struct matrix raw = {0};
    size_t samples = 0, bytes = 0;
    enum rawread_rc got = rawread_read(r->cfg.q, s->path, false, sel, start, now, NULL, NULL, &raw,
                                       &samples, &bytes, err, sizeof(err));
    r->st.requests++;
    s->cycle_samples += samples;
    struct rule_data sub = {.rule = ru,
                            .start = now - decide_lookback(ru),
                            .end = now,
                            .read_path = data[i].read_path,
                            .error = data[i].error,
                            .pending_error = data[i].pending_error,
                            .pending = data[i].pending,
                            .proof = DECIDE_PROOF_FULL};
    memcpy(sub.errmsg, data[i].errmsg, sizeof(sub.errmsg));
    bool ok = false;
    if (got != RAWREAD_OK) {
        snprintf(msg, msglen, "full-window proof: cannot read '%.120s': %s", sel,
                 got == RAWREAD_ABSENT ? "remote read not offered" : err);
        goto out;
    }
    sub.has_proofs = sub.raw_coverage = sub.coverage_tail = true;
    sub.proof_params = r->lv[i].pp; /* an RP_RAW rule's, valid (lv_setup) */
    /* The same fold `plan` makes of the same samples, with the window statistics of the
       workload's idle timer for the lines that show them. */
    struct raw_proofs b;
    int rc = raw_proofs_begin(&b, &sub.proof_params, now, &d->idle_timer, 1, err, sizeof(err));
    int64_t lo = rp_ms(start), hi = rp_ms(now);
    for (size_t j = 0; j < raw.n && rc == 0; j++) {
        const struct series *e = &raw.s[j];
        size_t a = 0, z = e->n;
        while (a < z && rp_ms(e->p[a].t) < lo)
            a++;
        while (z > a && rp_ms(e->p[z - 1].t) > hi)
            z--; /* a remote-read chunk may reach past now */
        struct series view = {.labels = e->labels, .p = e->p + a, .n = z - a};
        rc = raw_proofs_add(&b, &view, err, sizeof(err));
    }
    if (rc == 0)
        rc = raw_proofs_end(&b, &sub.proofs, &sub.nproofs, err, sizeof(err));
    else
        raw_proofs_discard(&b);
    if (rc < 0) {
        snprintf(msg, msglen, "full-window proof: %s", err);
        goto out;
    }
    sub.allocation = rp_only(&data[i].allocation, &d->identity);
    sub.priority = rp_only(&data[i].priority, &d->identity);
    struct decisions out = {0};
    decide(&sub, 1, now, &out);
    const struct decision_rec *f = NULL;
    for (size_t j = 0; j < out.n && !f; j++)
        if (labels_equal(&out.v[j].identity, &d->identity))
            f = &out.v[j];
    if (!f)
        snprintf(msg, msglen, "full-window proof: the workload has no decision over the window");
    else if (!rp_idle_verdict(f->reason))
        snprintf(msg, msglen, "full-window proof: %s: %s", decide_reason_name(f->reason),
                 f->detail);
    else if (!(f->idle_since == d->idle_since))
        snprintf(msg, msglen, "full-window proof: idle since %.3f, not %.3f", f->idle_since,
                 d->idle_since);
    else
        ok = true;
    if (ok && proven) {
        proven->samples = f->samples;
        proven->max = f->max;
        proven->mean = f->mean;
        proven->last = f->last;
        if (f->decision == d->decision && f->reason == d->reason)
            memcpy(proven->detail, f->detail, sizeof(proven->detail));
    }
    decisions_free(&out);
    free(sub.allocation.s);
    free(sub.priority.s);
    raw_proofs_free(sub.proofs, sub.nproofs);
out:
    if (!ok) {
        r->refuted++;
        s->force_full = true; /* the carried state missed something: read it again whole */
        log_info("rule '%s': %s; the incremental decision is not acted on", ru->name, msg);
    }
    matrix_free(&raw);
    free(sel);
    return ok;
}
