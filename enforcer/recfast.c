/*
 * `recommend`'s fast pass (recfast.h): one fold per series for every grid point, each point
 * judged only where its record can have changed, each point's decisions to its own engine.
 *
 * Why per-slot inputs are compared, not hashed: a workload whose record is carried must be
 * one decide() would give the same record, so what the record was made from is compared
 * exactly (btdue.c's rule), here once per cycle for every point at once: the inputs of a
 * workload (its slot) do not depend on the point, except the presence of a proof, which
 * depends on the point's lookback and is kept as the number of the grid's lookbacks it is
 * present under. A point's record of a slot stands while no input changed since it was made.
 */
#include "recfast.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "btdue.h"
#include "decide.h"
#include "proof.h"
#include "util.h"

#define RF_NONE SIZE_MAX

/* An input of a workload's record as a cycle's data shows it. */
struct rf_in {
    int kind;   /* 0 proof, 1 allocation, 2 priority */
    size_t pos; /* position in the rule data's list */
    size_t lvl; /* proof: the grid's lookbacks it is present under */
    size_t n;   /* instants: points */
    uint64_t v; /* proof: its last non-finite sample's time; instants: the first point's
                   value, as bits */
};

struct rf_slot {
    unsigned long seen, was; /* last cycle with inputs, and the one before */
    unsigned long changed;   /* last cycle its inputs differed from its previous ones */
    struct rf_in *prev, *cur;
    size_t nprev, ncur, cprev, ccur;
    size_t *pj; /* this cycle: its proofs, positions in the rule data */
    size_t npj, cpj;
    unsigned away;         /* points holding it reclaimed */
    bool alloc_on;         /* this cycle: an allocation series of it shows devices at t */
    double alloc_t;        /* the last cycle time it showed devices (NaN: none yet) */
    unsigned long crossed; /* the last cycle it was put on f->crossed */
    unsigned long cross_cycle;
    double cross[PROOF_MAX_THRESHOLDS]; /* first return point per threshold, this cycle */
};

/*
 * A point's record of a slot: to be judged at its next cycle with inputs (RF_JUDGE), standing
 * until a due time (`active`, RF_ACTIVE; a keep that no series can turn into a reclaim before
 * then, RF_KEEP), or none (RF_NO_RECORD: decide() gave the workload no record).
 */
enum rf_state { RF_JUDGE = 0, RF_ACTIVE, RF_NO_RECORD, RF_KEEP };

/* One point's view of one slot. */
struct rf_view {
    enum rf_state state;
    unsigned long rec;  /* the cycle its last record (or none) was made */
    unsigned long seen; /* the last cycle it was put among the point's candidates */
    unsigned long next; /* the last cycle it was put on the point's list for the next */
    unsigned long obs;  /* the last cycle its workload was put on the point's obs list */
    size_t away_at;     /* while its workload is away: its place in the point's away list */
    int64_t until;      /* RF_ACTIVE: btdue_active_until then; RF_KEEP: the last time it
                           stands (ms) */
    size_t wl;          /* its workload in the point's simulation, RF_NONE: none yet */
};

/* An `active` record's due time: the slot is looked at again once the cycle is past it. */
struct rf_due {
    int64_t until;
    size_t s;
};

/* A growable list of slots. */
struct rf_list {
    size_t *v;
    size_t n, c;
};

static void rf_list_push(struct rf_list *l, size_t x)
{
    if (l->n == l->c) {
        l->c = l->c ? 2 * l->c : 64;
        l->v = xrealloc(l->v, l->c * sizeof(*l->v));
    }
    l->v[l->n++] = x;
}

struct rf_point {
    struct rule *r;
    struct ruleset one;
    struct bt_sim *sim;
    struct proof_params pp; /* the point's own, with the fold's thresholds */
    int64_t idle_ms;
    size_t thk; /* its threshold's index in the fold */
    struct rf_view *view;
    size_t nview;
    size_t *wl_slot; /* simulation workload -> slot */
    size_t nwl_slot;
    size_t *away; /* simulation workloads away */
    size_t naway, caway;
    /* The workloads reclaimed at the last step (observed at the next cycle, their first
       away), and a cycle's workloads away whose reclaim can have ended (rf_observed). */
    struct rf_list fresh, obs;
    /* What a cycle looks at (rf_gather): the slots whose record cannot stand on its own
       (neither `active` nor empty, or a notice open), and the `active` records by due time,
       beside the workloads back. The others are carried without a look. */
    struct rf_list next, cand, due;
    struct rf_due *heap; /* a binary min-heap on until; stale entries are dropped when met */
    size_t nheap, cheap;
    bool inexact;
};

struct recfast {
    struct rf_point *p;
    size_t np;
    struct replay_fold fold;
    const struct rule *id_rule; /* identity labels (every point's) */
    struct strset index;        /* key -> slot + 1 */
    char **keys;
    size_t nkeys;
    struct rf_slot *slot;
    size_t nslot, cslot;
    struct btdue_memo memo[4]; /* proofs, allocation, priority, the points asked for the
                                  returns (rf_want_away): position -> slot + 1 */
    size_t want_j;             /* rf_want_away: the position of the series asked about */
    struct rf_wanted {
        const struct label *l; /* the labels' block, which the answer lends (replay.h) */
        size_t s;
    } * wanted; /* rf_want_away's yes, in order: the answer's series are among them */
    size_t nwanted, cwanted;
    unsigned long cycle;
    double t_prev, t_now;
    int64_t lb[RAW_MAX_IDLE + 1]; /* the points' lookbacks, ascending, distinct */
    size_t nlb;
    unsigned away_total;
    struct sbuf kbuf;
    struct recfast_stats st;
    struct rf_list touched; /* this cycle: the slots with inputs */
    struct rf_list changed; /* this cycle: the touched slots whose inputs changed */
    /* This cycle: the slots away somewhere with a return crossing (rf_returns), and those
       that showed devices at the last cycle and do not at this one; the slots that showed
       devices at the last cycle (alloc_prev). */
    struct rf_list crossed, alloc_off, alloc_prev;
    unsigned long closed_touched; /* this cycle: reclaims closed of slots with inputs */
    /* Which points hold each slot's workload away: nw words of bits per slot (bit i: point
       i), and per fold threshold k the points whose threshold is at most the k-th. */
    uint64_t *away_bits;
    size_t nw;
    uint64_t *th_le; /* PROOF_MAX_THRESHOLDS x nw */
    size_t *pos[3];  /* a point's cycle: positions of the due series, per list */
    size_t cpos[3];
};

const char *recfast_unfit(const struct rule *r, size_t nth, size_t nit)
{
    if (r->policy == POLICY_DURING_PRESSURE)
        return "DuringGPUPressure: the pending demand less what each setting freed couples its "
               "workloads (the fit check)";
    if (r->noverrides)
        return "overrides: their own thresholds and idle timers";
    if (nth > PROOF_MAX_THRESHOLDS)
        return "more thresholds than one fold holds";
    if (nit > RAW_MAX_IDLE)
        return "more idle timers than one fold keeps window statistics for";
    return NULL;
}

size_t recfast_probe(const struct rule *vs, size_t nv)
{
    size_t k = 0;
    for (size_t i = 1; i < nv; i++)
        if (vs[i].idle_timer > vs[k].idle_timer)
            k = i;
    return k;
}

/* proof.c's proof_young_len of params pp. */
static int64_t rf_young_len(const struct proof_params *pp)
{
    int64_t l = pp->lookback_ms - (pp->idle_fit_ms > 0 ? pp->idle_fit_ms : pp->idle_max_ms);
    return l > pp->step_ms ? l : pp->step_ms;
}

int recfast_fold(const struct rule *vs, size_t nv, struct replay_fold *out)
{
    *out = (struct replay_fold){0};
    if (!nv)
        return -1;
    struct proof_params pp;
    if (decide_proof_params(&vs[0], &pp) < 0)
        return -1;
    struct proof_params f = {.step_ms = pp.step_ms, .gap_ms = pp.gap_ms};
    int64_t young = INT64_MAX;
    for (size_t i = 0; i < nv; i++) {
        struct proof_params q;
        if (decide_proof_params(&vs[i], &q) < 0 || q.step_ms != f.step_ms || q.gap_ms != f.gap_ms)
            return -1;
        if (q.lookback_ms > f.lookback_ms)
            f.lookback_ms = q.lookback_ms;
        if (q.idle_max_ms > f.idle_max_ms)
            f.idle_max_ms = q.idle_max_ms;
        int64_t y = rf_young_len(&q);
        if (y < young)
            young = y;
        bool seen = false;
        for (size_t k = 0; k < f.nthresholds && !seen; k++)
            seen = f.thresholds[k] == vs[i].threshold;
        if (!seen) {
            if (f.nthresholds == PROOF_MAX_THRESHOLDS)
                return -1;
            f.thresholds[f.nthresholds++] = vs[i].threshold;
        }
        seen = false;
        for (size_t k = 0; k < out->nidle && !seen; k++)
            seen = out->idle[k] == vs[i].idle_timer;
        if (!seen) {
            if (out->nidle == RAW_MAX_IDLE)
                return -1;
            out->idle[out->nidle++] = vs[i].idle_timer;
        }
    }
    /* The young silences of the shortest: proof_young_len(f) = young. */
    f.idle_fit_ms = f.lookback_ms - young;
    if (f.idle_fit_ms <= 0)
        return -1;
    proof_params_init(&f);
    out->pp = f;
    out->set = true;
    return 0;
}

struct recfast *recfast_new(struct rule *vs, size_t nv, const struct bt_cfg *cfg,
                            const struct replay_fold *fold, char *err, size_t errlen)
{
    struct recfast *f = xcalloc(1, sizeof(*f));
    f->fold = *fold;
    f->id_rule = &vs[0];
    f->t_prev = -INFINITY;
    f->np = nv;
    f->p = xcalloc(nv ? nv : 1, sizeof(*f->p));
    f->nw = (nv + 63) / 64;
    f->th_le = xcalloc(PROOF_MAX_THRESHOLDS * (f->nw ? f->nw : 1), sizeof(*f->th_le));
    /* The figures only: nothing of a closed reclaim is kept, so memory is flat in the range. */
    struct bt_cfg pc = *cfg;
    pc.figures_only = true;
    for (size_t i = 0; i < nv; i++) {
        struct rf_point *p = &f->p[i];
        p->r = &vs[i];
        p->one = (struct ruleset){.rules = &vs[i], .n = 1};
        if (decide_proof_params(&vs[i], &p->pp) < 0) {
            err_printf(err, errlen, "rule '%s': too many thresholds for a fold", vs[i].name);
            recfast_free(f);
            return NULL;
        }
        /* Judged against the fold's thresholds: proof_judge finds its level by position. */
        p->pp.nthresholds = fold->pp.nthresholds;
        memcpy(p->pp.thresholds, fold->pp.thresholds, sizeof(p->pp.thresholds));
        p->thk = SIZE_MAX;
        for (size_t k = 0; k < fold->pp.nthresholds; k++)
            if (fold->pp.thresholds[k] == vs[i].threshold)
                p->thk = k;
        p->idle_ms = llround(vs[i].idle_timer * 1000.0);
        bool seen = false;
        for (size_t k = 0; k < f->nlb && !seen; k++)
            seen = f->lb[k] == p->pp.lookback_ms;
        if (!seen && f->nlb < ARRAY_LEN(f->lb)) {
            size_t k = f->nlb++;
            for (; k > 0 && f->lb[k - 1] > p->pp.lookback_ms; k--)
                f->lb[k] = f->lb[k - 1];
            f->lb[k] = p->pp.lookback_ms;
        }
        for (size_t k = p->thk; k < fold->pp.nthresholds && p->thk != SIZE_MAX; k++)
            f->th_le[k * f->nw + i / 64] |= UINT64_C(1) << (i % 64);
        if (p->thk == SIZE_MAX || !(p->sim = bt_sim_new(&p->one, &pc, err, errlen))) {
            if (p->thk == SIZE_MAX)
                err_printf(err, errlen, "rule '%s': its threshold is not folded", vs[i].name);
            recfast_free(f);
            return NULL;
        }
    }
    return f;
}

/* The key of the workload a series (or a record's identity) belongs to, into f->kbuf; false
   when an identity label is absent or empty (decide.c ignores such a series). */
static bool rf_key(struct recfast *f, const struct labels *l)
{
    sbuf_reset(&f->kbuf);
    return labels_key(&f->kbuf, l, f->id_rule->identity, f->id_rule->nidentity);
}

/* The slot of labels l (added when new), RF_NONE without an identity. */
static size_t rf_slot_of(struct recfast *f, const struct labels *l, bool add)
{
    if (!rf_key(f, l))
        return RF_NONE;
    const void *v = strset_get(&f->index, f->kbuf.buf, f->kbuf.len);
    if (v)
        return (size_t)(uintptr_t)v - 1;
    if (!add)
        return RF_NONE;
    char *k = xmalloc(f->kbuf.len + 1);
    memcpy(k, f->kbuf.buf, f->kbuf.len);
    k[f->kbuf.len] = '\0';
    strset_put(&f->index, k, f->kbuf.len, (void *)(uintptr_t)(f->nslot + 1));
    f->keys = xgrow(f->keys, f->nkeys, sizeof(*f->keys));
    f->keys[f->nkeys++] = k;
    if (f->nslot == f->cslot) {
        f->cslot = f->cslot ? 2 * f->cslot : 64;
        f->slot = xrealloc(f->slot, f->cslot * sizeof(*f->slot));
        size_t words = f->cslot * f->nw;
        f->away_bits = xrealloc(f->away_bits, (words ? words : 1) * sizeof(*f->away_bits));
    }
    memset(f->away_bits + f->nslot * f->nw, 0, f->nw * sizeof(*f->away_bits));
    f->slot[f->nslot] = (struct rf_slot){.changed = f->cycle, .alloc_t = NAN};
    for (size_t i = 0; i < f->np; i++) {
        struct rf_point *p = &f->p[i];
        if (p->nview <= f->nslot) {
            size_t n = p->nview ? 2 * p->nview : 64;
            p->view = xrealloc(p->view, n * sizeof(*p->view));
            p->nview = n;
        }
        p->view[f->nslot] = (struct rf_view){.state = RF_JUDGE, .wl = RF_NONE};
    }
    return f->nslot++;
}

/* The slot of the series at position j of list `list` (memo first, as btdue finds them). */
static size_t rf_slot_at(struct recfast *f, int list, size_t j, const struct labels *l)
{
    size_t v = btdue_memo_get(&f->memo[list], j, l);
    if (v == SIZE_MAX)
        return RF_NONE;
    if (v)
        return v - 1;
    size_t s = rf_slot_of(f, l, true);
    btdue_memo_set(&f->memo[list], j, l, s == RF_NONE ? SIZE_MAX : s + 1);
    return s;
}

static struct rf_slot *rf_touch(struct recfast *f, size_t s)
{
    struct rf_slot *x = &f->slot[s];
    if (x->seen != f->cycle) {
        x->was = x->seen;
        x->seen = f->cycle;
        x->ncur = x->npj = 0;
        x->alloc_on = false;
        rf_list_push(&f->touched, s);
    }
    return x;
}

static void rf_push(struct rf_slot *x, struct rf_in in)
{
    if (x->ncur == x->ccur) {
        x->ccur = x->ccur ? 2 * x->ccur : 4;
        x->cur = xrealloc(x->cur, x->ccur * sizeof(*x->cur));
    }
    x->cur[x->ncur++] = in;
}

static uint64_t rf_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof(b));
    return b;
}

static void rf_heap_push(struct rf_point *p, int64_t until, size_t s)
{
    if (p->nheap == p->cheap) {
        p->cheap = p->cheap ? 2 * p->cheap : 64;
        p->heap = xrealloc(p->heap, p->cheap * sizeof(*p->heap));
    }
    size_t i = p->nheap++;
    while (i > 0 && p->heap[(i - 1) / 2].until > until) {
        p->heap[i] = p->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    p->heap[i] = (struct rf_due){until, s};
}

static struct rf_due rf_heap_pop(struct rf_point *p)
{
    struct rf_due top = p->heap[0], last = p->heap[--p->nheap];
    size_t i = 0;
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= p->nheap)
            break;
        if (k + 1 < p->nheap && p->heap[k + 1].until < p->heap[k].until)
            k++;
        if (p->heap[k].until >= last.until)
            break;
        p->heap[i] = p->heap[k];
        i = k;
    }
    if (p->nheap)
        p->heap[i] = last;
    return top;
}

static int rf_cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The instants of list `list` (1 allocation, 2 priority) as inputs of their slots. */
static void rf_instants(struct recfast *f, int list, const struct matrix *m)
{
    for (size_t j = 0; j < m->n; j++) {
        const struct series *se = &m->s[j];
        size_t s = rf_slot_at(f, list, j, &se->labels);
        if (s == RF_NONE)
            continue;
        struct rf_slot *x = rf_touch(f, s);
        rf_push(x, (struct rf_in){
                       .kind = list, .pos = j, .n = se->n, .v = se->n ? rf_bits(se->p[0].v) : 0});
        /* As bt_observe_rule reads an allocation at the end of the cycle. */
        if (list == 1 && se->n && se->p[se->n - 1].v > 0) {
            x->alloc_on = true;
            x->alloc_t = f->t_now;
        }
    }
}

static bool rf_in_equal(const struct rf_in *a, const struct rf_in *b)
{
    return a->kind == b->kind && a->pos == b->pos && a->lvl == b->lvl && a->n == b->n &&
           a->v == b->v;
}

struct rf_ctx {
    struct recfast *f;
    struct rf_point *p;
};

static double rf_back(void *arg, size_t wl, double after, double upto)
{
    struct rf_ctx *c = arg;
    (void)upto;
    if (wl >= c->p->nwl_slot || c->p->wl_slot[wl] == RF_NONE)
        return NAN;
    const struct rf_slot *x = &c->f->slot[c->p->wl_slot[wl]];
    /* The points were read for (t_prev, t]: the simulation observes every cycle, so its
       last one is t_prev. */
    if (x->cross_cycle != c->f->cycle || after != c->f->t_prev)
        return NAN;
    return x->cross[c->p->thk];
}

static double rf_alloc_last(void *arg, size_t wl)
{
    struct rf_ctx *c = arg;
    if (wl >= c->p->nwl_slot || c->p->wl_slot[wl] == RF_NONE)
        return NAN;
    return c->f->slot[c->p->wl_slot[wl]].alloc_t;
}

/* replay_points asks about each series of the probe in order, every cycle: the position
   is the count of the calls, and the memo saves building and finding its key each time. */
static bool rf_want_away(void *arg, const struct labels *l)
{
    struct recfast *f = arg;
    size_t j = f->want_j++;
    size_t v = btdue_memo_get(&f->memo[3], j, l);
    if (!v) {
        size_t s = rf_slot_of(f, l, false);
        if (s == RF_NONE)
            return false; /* not noted: a series without a slot may be given one later */
        btdue_memo_set(&f->memo[3], j, l, s + 1);
        v = s + 1;
    }
    if (!f->slot[v - 1].away)
        return false;
    if (f->nwanted == f->cwanted) {
        f->cwanted = f->cwanted ? 2 * f->cwanted : 64;
        f->wanted = xrealloc(f->wanted, f->cwanted * sizeof(*f->wanted));
    }
    f->wanted[f->nwanted++] = (struct rf_wanted){l->v, v - 1};
    return true;
}

/* The first point at or above each threshold in (t_prev, t] of the series of workloads away
   in some point: their returns (bt_observe_rule's, once for every point). */
static void rf_returns(struct recfast *f, double t, struct bt_source *src, size_t rule)
{
    struct matrix m = {0};
    f->want_j = f->nwanted = 0;
    if (!f->away_total || !src->points ||
        !src->points(src, rule, f->t_prev, false, rf_want_away, f, &m))
        return;
    const struct proof_params *pp = &f->fold.pp;
    size_t next = 0;
    for (size_t i = 0; i < m.n; i++) {
        const struct series *se = &m.s[i];
        /* The answer keeps the order it asked in: the slot rf_want_away found, else (labels
           not lent) by key. */
        size_t at = next;
        while (at < f->nwanted && f->wanted[at].l != se->labels.v)
            at++;
        size_t s;
        if (at < f->nwanted) {
            s = f->wanted[at].s;
            next = at + 1;
        } else {
            s = rf_slot_of(f, &se->labels, false);
        }
        if (s == RF_NONE)
            continue;
        struct rf_slot *x = &f->slot[s];
        if (x->cross_cycle != f->cycle) {
            x->cross_cycle = f->cycle;
            for (size_t k = 0; k < pp->nthresholds; k++)
                x->cross[k] = NAN;
        }
        for (size_t k = 0; k < pp->nthresholds; k++)
            for (size_t j = 0; j < se->n; j++) {
                const struct point *q = &se->p[j];
                if (!(q->t > f->t_prev) || q->t > t)
                    continue;
                if (isfinite(q->v) && q->v * 100.0 >= pp->thresholds[k]) {
                    if (!(x->cross[k] <= q->t))
                        x->cross[k] = q->t;
                    if (x->crossed != f->cycle) {
                        x->crossed = f->cycle;
                        rf_list_push(&f->crossed, s);
                    }
                    break;
                }
            }
    }
    matrix_free_lent(&m); /* replay_points lends the labels */
}

/*
 * Point p's record of slot s standing as `st` until the latest due time its series give, on
 * the heap to be looked at once past it; false (the record left as it was) when none gives
 * one after now. RF_ACTIVE: `active` while btdue_active_until holds (the workload is active
 * while any series is). RF_KEEP: a keep that is not `active`, until the latest of its series'
 * proof_idle_not_before less a millisecond (it can become a reclaim only once all are idle).
 *
 * Why a keep may stand: the engine reads a keep only of a workload it holds a notice for
 * (bt_sim_cycle, act_review), and rf_carry judges those; of any other keep, the simulation
 * notes the threshold, devices and resource, which come from its inputs, and counts the keep
 * by reason, which no figure of recommend reads. So a keep stands for the figures while it
 * stays a keep, whatever its reason becomes (too young, a gap, stale, active). It can become
 * a reclaim only once every series of the workload on the grid is idle, which none is before
 * its bound, whatever samples come (proof.h); a series that leaves the grid or joins it
 * changes the inputs, and the record is judged. Recommend over the first hours of a range,
 * or after a return, is mostly such records: every workload too young for the long idle
 * timers of the grid (a 3-hour range: 267,000 of 297,000 judgements).
 */
static bool rf_stand(struct recfast *f, struct rf_point *p, size_t s, const struct rule_data *rd,
                     int64_t now, enum rf_state st)
{
    const struct rf_slot *x = &f->slot[s];
    int64_t best = PROOF_NONE;
    for (size_t k = 0; k < x->npj; k++) {
        const struct proof *q = rd->proofs[x->pj[k]].p;
        int64_t u;
        if (st == RF_ACTIVE)
            u = btdue_active_until(q, &p->pp, now, p->idle_ms, p->r->threshold);
        else if (!proof_present(q, &p->pp, now))
            continue; /* decide() ignores it: it holds nothing back */
        else
            u = proof_idle_not_before(q, &p->pp, now, p->idle_ms, p->r->threshold) - 1;
        if (u != PROOF_NONE && u > best)
            best = u;
    }
    if (best == PROOF_NONE || best < now)
        return false;
    p->view[s].state = st;
    p->view[s].until = best;
    rf_heap_push(p, best, s);
    f->st.kept += st == RF_KEEP;
    return true;
}

/* Whether point p's record of slot s stands at now (carried, not judged). */
static bool rf_carry(struct recfast *f, struct rf_point *p, size_t s, const struct rule_data *rd,
                     int64_t now)
{
    struct rf_view *v = &p->view[s];
    const struct rf_slot *x = &f->slot[s];
    if (v->state == RF_JUDGE || x->changed > v->rec)
        return false;
    if (v->wl != RF_NONE && !isnan(bt_sim_result(p->sim)->wl[v->wl].noticed))
        return false; /* the engine reads the decision of a workload it holds a notice for */
    if (v->state == RF_NO_RECORD)
        return true;
    if (v->until >= now)
        return true;
    return rf_stand(f, p, s, rd, now, v->state);
}

static void rf_cand(struct recfast *f, struct rf_point *p, size_t s)
{
    struct rf_view *v = &p->view[s];
    if (v->seen == f->cycle)
        return;
    v->seen = f->cycle;
    rf_list_push(&p->cand, s);
}

/*
 * Point p's candidates at this cycle, each once, beside the workloads back (rf_point_cycle):
 * the slots of its list from the last cycle, those whose inputs changed, the `active` records
 * whose due time has passed. Every touched slot not away for which rf_carry is false is
 * among them, so the others are carried without a look (at 1,000 workloads, 40 grid points
 * and 10,000 cycles, 400 M looks of which 3 M judge):
 *   - a record decide() made stands only while its inputs do: a change puts the slot in
 *     f->changed at the cycle it happens, where it is judged unless away; a reclaim leaves
 *     its slot's record to be judged (RF_JUDGE), and a workload back is a candidate;
 *   - a record that is neither `active` nor empty (RF_JUDGE) keeps its slot on the list;
 *   - a notice is given only to a workload decided at that cycle (a candidate), whose slot
 *     then stays on the list while the notice is open;
 *   - an `active` record's due time is on the heap from the cycle it was set.
 * A slot the list drops because it had no inputs this cycle comes back through f->changed:
 * inputs absent for a cycle count as changed when they return.
 */
static void rf_gather(struct recfast *f, struct rf_point *p, int64_t now)
{
    for (size_t i = 0; i < p->next.n; i++)
        rf_cand(f, p, p->next.v[i]);
    for (size_t i = 0; i < f->changed.n; i++)
        rf_cand(f, p, f->changed.v[i]);
    while (p->nheap && p->heap[0].until < now) {
        struct rf_due d = rf_heap_pop(p);
        const struct rf_view *v = &p->view[d.s];
        if ((v->state == RF_ACTIVE || v->state == RF_KEEP) && v->until == d.until)
            /* else a stale entry */
            rf_cand(f, p, d.s);
    }
}

/* Slot s on point p's list for the next cycle when its record cannot stand on its own: a
   notice open, or a record that is neither `active` nor empty. Not while away: a workload
   back is a candidate of the cycle it is back. */
static void rf_relist(struct recfast *f, struct rf_point *p, const struct bt_result *res, size_t s)
{
    struct rf_view *v = &p->view[s];
    if (v->next == f->cycle)
        return;
    bool keep = v->state == RF_JUDGE && f->slot[s].seen == f->cycle;
    if (v->wl != RF_NONE && res->wl[v->wl].stopped)
        keep = false;
    else if (v->wl != RF_NONE)
        keep |= !isnan(res->wl[v->wl].noticed);
    if (!keep)
        return;
    v->next = f->cycle;
    rf_list_push(&p->next, s);
}

/* The positions (ascending, as decide() would meet them in the whole data) of the series of
   list `list` of the due slots, into f->pos[list]; how many. */
static size_t rf_positions(struct recfast *f, const struct rf_point *p, int list)
{
    size_t n = 0;
    for (size_t i = 0; i < p->due.n; i++) {
        const struct rf_slot *x = &f->slot[p->due.v[i]];
        for (size_t k = 0; k < x->nprev; k++) {
            if (x->prev[k].kind != list)
                continue;
            if (n == f->cpos[list]) {
                f->cpos[list] = f->cpos[list] ? 2 * f->cpos[list] : 64;
                f->pos[list] = xrealloc(f->pos[list], f->cpos[list] * sizeof(*f->pos[list]));
            }
            f->pos[list][n++] = x->prev[k].pos;
        }
    }
    if (n > 1)
        qsort(f->pos[list], n, sizeof(*f->pos[list]), rf_cmp_size);
    return n;
}

/* Slot s's workload on point p's obs list, once, when away there. */
static void rf_obs_slot(struct recfast *f, struct rf_point *p, size_t s)
{
    struct rf_view *v = &p->view[s];
    if (v->wl == RF_NONE || v->obs == f->cycle || !bt_sim_result(p->sim)->wl[v->wl].stopped)
        return;
    v->obs = f->cycle;
    rf_list_push(&p->obs, v->wl);
}

/* Slot s's workload on the obs list of each point with a bit in mask (nw words) that holds
   it away. */
static void rf_obs_points(struct recfast *f, size_t s, const uint64_t *mask)
{
    const uint64_t *bits = f->away_bits + s * f->nw;
    for (size_t w = 0; w < f->nw; w++)
        for (uint64_t b = bits[w] & (mask ? mask[w] : ~UINT64_C(0)); b; b &= b - 1)
            rf_obs_slot(f, &f->p[w * 64 + (size_t)__builtin_ctzll(b)], s);
}

/*
 * Each point's workloads away whose reclaim this cycle can end, into its obs list: those
 * whose points since the last cycle cross the point's threshold (a return), and those whose
 * slot showed devices at the last cycle and does not at this one; rf_point_cycle adds those
 * reclaimed at its last step (never observed yet). Every other workload away showed devices
 * at the last cycle (it was observed then, or reclaimed from a decision that read them) and
 * still does, without a crossing: an observation would change nothing of it, so
 * bt_sim_observe_some is given these alone. A crossing of a fold threshold is one of every
 * lower threshold too, so the points it can return at are those holding the slot away whose
 * threshold is at most the highest crossed (away_bits & th_le): the cost is that of the
 * returns and ends, not of every workload away of every point at every cycle (a tenth of a
 * recommend of a week), nor of every crossing for every point.
 */
static void rf_observed(struct recfast *f)
{
    for (size_t i = 0; i < f->np; i++)
        f->p[i].obs.n = 0;
    for (size_t i = 0; i < f->crossed.n; i++) {
        const struct rf_slot *x = &f->slot[f->crossed.v[i]];
        size_t k = f->fold.pp.nthresholds;
        while (k > 0 && isnan(x->cross[k - 1]))
            k--;
        if (k > 0)
            rf_obs_points(f, f->crossed.v[i], f->th_le + (k - 1) * f->nw);
    }
    for (size_t i = 0; i < f->alloc_off.n; i++)
        rf_obs_points(f, f->alloc_off.v[i], NULL);
}

/* One point's cycle: returns, the due workloads judged, the engine. */
static void rf_point_cycle(struct recfast *f, struct rf_point *p, double t,
                           const struct rule_data *rd)
{
    int64_t now = llround(t * 1000.0);
    struct rf_ctx ctx = {f, p};
    const struct bt_result *res = bt_sim_result(p->sim);
    for (size_t i = 0; i < p->fresh.n; i++)
        if (p->fresh.v[i] < p->nwl_slot && p->wl_slot[p->fresh.v[i]] != RF_NONE)
            rf_obs_slot(f, p, p->wl_slot[p->fresh.v[i]]);
    p->fresh.n = 0;
    bt_sim_observe_some(p->sim, t, p->obs.v, p->obs.n, rf_back, rf_alloc_last, &ctx);
    /* The workloads back: candidates (their record was a reclaim). The others away, with
       inputs this cycle, are neither judged nor carried (recfast_cycle counts them). */
    p->cand.n = 0;
    for (size_t i = 0; i < p->obs.n; i++) {
        size_t wl = p->obs.v[i];
        if (res->wl[wl].stopped)
            continue;
        size_t s = p->wl_slot[wl];
        size_t at = p->view[s].away_at, last = p->away[--p->naway];
        p->away[at] = last;
        p->view[p->wl_slot[last]].away_at = at;
        f->slot[s].away--;
        f->away_total--;
        f->away_bits[s * f->nw + (size_t)(p - f->p) / 64] &=
            ~(UINT64_C(1) << ((size_t)(p - f->p) % 64));
        f->closed_touched += f->slot[s].seen == f->cycle;
        rf_cand(f, p, s);
    }

    /* The due slots: with inputs this cycle, not away, and no record that stands. */
    rf_gather(f, p, now);
    f->st.looked += p->cand.n;
    p->due.n = 0;
    for (size_t i = 0; i < p->cand.n; i++) {
        size_t s = p->cand.v[i];
        if (f->slot[s].seen != f->cycle)
            continue;
        size_t wl = p->view[s].wl;
        if (wl != RF_NONE && res->wl[wl].stopped)
            continue;
        if (!rf_carry(f, p, s, rd, now))
            rf_list_push(&p->due, s);
    }
    /* Every touched slot neither away nor due is carried (recfast_cycle takes the away off). */
    f->st.carried += f->touched.n - p->due.n;
    struct rule_data red = *rd;
    red.rule = p->r;
    red.proof_params = p->pp;
    red.start = t - decide_lookback(p->r);
    size_t np = rf_positions(f, p, 0), na = rf_positions(f, p, 1), nq = rf_positions(f, p, 2);
    red.proofs = xmalloc((np ? np : 1) * sizeof(*red.proofs));
    red.nproofs = np;
    red.proofs_lent = true;
    red.instants_lent = true;
    struct series *as = xmalloc((na ? na : 1) * sizeof(*as));
    struct series *qs = xmalloc((nq ? nq : 1) * sizeof(*qs));
    for (size_t j = 0; j < np; j++) {
        red.proofs[j] = rd->proofs[f->pos[0][j]];
        if (!proof_young_known(red.proofs[j].p, &p->pp, now, p->idle_ms))
            p->inexact = true;
    }
    for (size_t j = 0; j < na; j++)
        as[j] = rd->allocation.s[f->pos[1][j]];
    for (size_t j = 0; j < nq; j++)
        qs[j] = rd->priority.s[f->pos[2][j]];
    red.allocation = (struct matrix){as, na};
    red.priority = (struct matrix){qs, nq};
    red.pending = (struct matrix){0};
    struct decisions d = {0};
    decide(&red, 1, t, &d);
    f->st.judged += d.n;
    /*
     * A cycle with no decision to step and no notice standing changes nothing in the engine
     * but its bookkeeping by time (expiry of closed ledger entries, the hourly window), which
     * its next cycle does first anyway: skipped (the engine's cost per cycle is a pass over
     * its ledger, which grows with the reclaims).
     */
    bool stepped = d.n || bt_sim_open_notices(p->sim);
    if (stepped)
        bt_sim_cycle(p->sim, t, &d);
    else
        f->st.idle_cycles++;
    res = bt_sim_result(p->sim);

    /* What each due slot's record now is: none until decide() gave one. */
    for (size_t i = 0; i < p->due.n; i++) {
        size_t s = p->due.v[i];
        p->view[s].state = RF_NO_RECORD;
        p->view[s].rec = f->cycle;
    }
    for (size_t i = 0; i < d.n; i++) {
        const struct decision_rec *r = &d.v[i];
        size_t s = rf_slot_of(f, &r->identity, false);
        if (s == RF_NONE)
            continue;
        struct rf_view *v = &p->view[s];
        v->rec = f->cycle;
        v->state = RF_JUDGE;
        if (r->decision == DECISION_KEEP && r->reason == REASON_ACTIVE)
            rf_stand(f, p, s, rd, now, RF_ACTIVE);
        else if (r->decision == DECISION_KEEP)
            rf_stand(f, p, s, rd, now, RF_KEEP);
        if (v->wl == RF_NONE) {
            v->wl = bt_sim_workload(p->sim, 0, &r->identity);
            if (v->wl != RF_NONE) {
                if (v->wl >= p->nwl_slot) {
                    size_t n = p->nwl_slot ? 2 * p->nwl_slot : 64;
                    while (n <= v->wl)
                        n *= 2;
                    p->wl_slot = xrealloc(p->wl_slot, n * sizeof(*p->wl_slot));
                    for (size_t k = p->nwl_slot; k < n; k++)
                        p->wl_slot[k] = RF_NONE;
                    p->nwl_slot = n;
                }
                p->wl_slot[v->wl] = s;
            }
        }
    }
    decisions_free(&d);
    /* The list for the next cycle, from this one's candidates (the last list, the due). */
    p->next.n = 0;
    for (size_t i = 0; i < p->cand.n; i++)
        rf_relist(f, p, res, p->cand.v[i]);
    /* The reclaims of this cycle: their workloads are away, judged when they are back. (The
       engine reclaims only from a decision of this cycle, so each was due and RF_JUDGE.) */
    size_t nacted = 0;
    /* bt_sim_acted is the last step's: a cycle not stepped acted on none (they were counted
       away twice before, at every such cycle after a reclaim). */
    const size_t *acted = stepped ? bt_sim_acted(p->sim, &nacted) : NULL;
    for (size_t i = 0; i < nacted; i++) {
        size_t wl = acted[i];
        if (wl >= p->nwl_slot || p->wl_slot[wl] == RF_NONE)
            continue; /* not reached: an action follows a decision, which mapped it */
        if (p->naway == p->caway) {
            p->caway = p->caway ? 2 * p->caway : 64;
            p->away = xrealloc(p->away, p->caway * sizeof(*p->away));
        }
        size_t s = p->wl_slot[wl];
        p->view[s].away_at = p->naway;
        p->away[p->naway++] = wl;
        rf_list_push(&p->fresh, wl);
        f->slot[s].away++;
        f->away_bits[s * f->nw + (size_t)(p - f->p) / 64] |= UINT64_C(1)
                                                             << ((size_t)(p - f->p) % 64);
        f->away_total++;
        p->view[s].state = RF_JUDGE;
    }
    free(red.proofs);
    free(as);
    free(qs);
}

void recfast_cycle(struct recfast *f, double t, const struct rule_data *rd, struct bt_source *src,
                   size_t rule)
{
    f->cycle++;
    f->touched.n = 0;
    f->changed.n = 0;
    f->crossed.n = 0;
    f->closed_touched = 0;
    f->t_now = t;
    int64_t now = llround(t * 1000.0);
    for (size_t j = 0; j < rd->nproofs; j++) {
        const struct rule_proof *rp = &rd->proofs[j];
        size_t s = rp->p ? rf_slot_at(f, 0, j, &rp->s.labels) : RF_NONE;
        if (s == RF_NONE)
            continue;
        struct rf_slot *x = rf_touch(f, s);
        /* Present under how many of the points' lookbacks (proof_present, ascending). */
        size_t lvl = 0;
        for (size_t k = 0; k < f->nlb; k++) {
            struct proof_params q = f->fold.pp;
            q.lookback_ms = f->lb[k];
            lvl += proof_present(rp->p, &q, now);
        }
        rf_push(x, (struct rf_in){.kind = 0, .pos = j, .lvl = lvl, .v = (uint64_t)rp->p->nan.at});
        if (x->npj == x->cpj) {
            x->cpj = x->cpj ? 2 * x->cpj : 2;
            x->pj = xrealloc(x->pj, x->cpj * sizeof(*x->pj));
        }
        x->pj[x->npj++] = j;
    }
    rf_instants(f, 1, &rd->allocation);
    rf_instants(f, 2, &rd->priority);
    /* Changed: other inputs than at its previous cycle, or absent in between. */
    for (size_t i = 0; i < f->touched.n; i++) {
        struct rf_slot *x = &f->slot[f->touched.v[i]];
        bool same = x->was + 1 == f->cycle && x->ncur == x->nprev;
        for (size_t k = 0; same && k < x->ncur; k++)
            same = rf_in_equal(&x->cur[k], &x->prev[k]);
        if (!same) {
            x->changed = f->cycle;
            rf_list_push(&f->changed, f->touched.v[i]);
        }
        struct rf_in *tmp = x->prev;
        size_t c = x->cprev;
        x->prev = x->cur;
        x->cprev = x->ccur;
        x->nprev = x->ncur;
        x->cur = tmp;
        x->ccur = c;
        x->ncur = 0;
    }
    /* The slots that stopped showing devices since the last cycle, and those that show them. */
    f->alloc_off.n = 0;
    for (size_t i = 0; i < f->alloc_prev.n; i++) {
        const struct rf_slot *x = &f->slot[f->alloc_prev.v[i]];
        if (!(x->seen == f->cycle && x->alloc_on))
            rf_list_push(&f->alloc_off, f->alloc_prev.v[i]);
    }
    f->alloc_prev.n = 0;
    for (size_t i = 0; i < f->touched.n; i++)
        if (f->slot[f->touched.v[i]].alloc_on)
            rf_list_push(&f->alloc_prev, f->touched.v[i]);
    rf_returns(f, t, src, rule);
    /* The touched slots away at a point, counted off what the points carried: as many as
       were away when the cycle began, less those whose reclaim closed in it. */
    unsigned long away_touched = 0;
    for (size_t i = 0; i < f->touched.n; i++)
        away_touched += f->slot[f->touched.v[i]].away;
    rf_observed(f);
    for (size_t i = 0; i < f->np; i++)
        rf_point_cycle(f, &f->p[i], t, rd);
    f->st.carried -= away_touched - f->closed_touched;
    f->t_prev = t;
}

void recfast_finish(struct recfast *f)
{
    for (size_t i = 0; i < f->np; i++)
        bt_sim_finish(f->p[i].sim);
}

const struct bt_result *recfast_result(const struct recfast *f, size_t v)
{
    return bt_sim_result(f->p[v].sim);
}

bool recfast_exact(const struct recfast *f, size_t v)
{
    return !f->p[v].inexact;
}

void recfast_stats(const struct recfast *f, struct recfast_stats *out)
{
    *out = f->st;
}

void recfast_free(struct recfast *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->np; i++) {
        bt_sim_free(f->p[i].sim);
        free(f->p[i].view);
        free(f->p[i].wl_slot);
        free(f->p[i].away);
        free(f->p[i].fresh.v);
        free(f->p[i].obs.v);
        free(f->p[i].next.v);
        free(f->p[i].cand.v);
        free(f->p[i].due.v);
        free(f->p[i].heap);
    }
    free(f->p);
    for (size_t i = 0; i < f->nslot; i++) {
        free(f->slot[i].prev);
        free(f->slot[i].cur);
        free(f->slot[i].pj);
    }
    free(f->slot);
    for (size_t i = 0; i < f->nkeys; i++)
        free(f->keys[i]);
    free(f->keys);
    strset_free(&f->index);
    for (size_t k = 0; k < ARRAY_LEN(f->memo); k++)
        btdue_memo_free(&f->memo[k]);
    sbuf_free(&f->kbuf);
    free(f->touched.v);
    free(f->changed.v);
    free(f->crossed.v);
    free(f->alloc_off.v);
    free(f->alloc_prev.v);
    free(f->away_bits);
    free(f->th_le);
    free(f->wanted);
    for (int k = 0; k < 3; k++)
        free(f->pos[k]);
    free(f);
}
