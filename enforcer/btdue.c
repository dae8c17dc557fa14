/*
 * The backtest's event-driven decide() (btdue.h): a cache of each workload's last record and
 * of the inputs it was made from, and the due time of an `active` record from its proofs.
 *
 * Why inputs are compared, not hashed: a carried record must be the record decide() would
 * make, so what it was made from is kept as it was (the labels of its series, the values of
 * its allocation and priority) and compared exactly; a difference, or inputs in another
 * order, only costs a judgement. Why the series are found by position first: the replay
 * hands the same series in the same order from cycle to cycle, so the series at index j is
 * most often the workload's it was last cycle, which one comparison of labels confirms
 * without building the workload's key.
 */
#include "btdue.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct btdue_memo_entry {
    struct labels l;
    size_t v; /* 0: nothing noted */
};

/* An allocation or priority series as a record was made from it. */
struct btdue_input {
    int kind; /* 0 allocation, 1 priority */
    struct labels l;
    size_t n;
    double v; /* its first point's value (what decide() reads); 0 when n is 0 */
};

struct btdue_slot {
    size_t rule;
    struct labels id; /* identity labels (the key's source) */
    bool has_rec;     /* a record of its last judgement */
    bool carriable;   /* that record may be carried (an `active` keep of a proof rule) */
    struct decision_rec rec;
    /* What the record was made from: the labels of the present proofs, then the allocation
       and priority series, each in the order of the rule data. */
    struct labels *pl;
    size_t npl, cpl;
    struct btdue_input *in;
    size_t nin, cin;
    /* This cycle's scratch (valid while stamp is the cycle's). */
    unsigned long stamp;
    size_t pcur, icur;
    bool differs, holds, due;
};

struct btdue {
    const struct ruleset *rs;
    struct strset index; /* key -> slot index + 1 */
    char **keys;
    size_t nkeys;
    struct btdue_slot *slot;
    size_t nslot, cslot;
    unsigned long cycle;
    struct sbuf kbuf;
    /* Per rule: the slot (+ 1) of each proof, allocation and priority series and of each
       record decide() made, by position (btdue_memo). */
    struct btdue_memo (*memo)[4];
    struct decisions out;
    size_t *out_slot; /* the slot of each record of out */
    size_t cout;
    struct btdue_stats st;
};

struct btdue *btdue_new(const struct ruleset *rs)
{
    struct btdue *b = xcalloc(1, sizeof(*b));
    size_t n = rs->n ? rs->n : 1;
    b->rs = rs;
    b->memo = xcalloc(n, sizeof(*b->memo));
    return b;
}

static void btdue_rec_free(struct decision_rec *d)
{
    labels_free(&d->identity);
    labels_free(&d->all);
    free(d->target);
    free(d->target_kept);
    free(d->note);
}

static void btdue_inputs_clear(struct btdue_slot *s)
{
    for (size_t i = 0; i < s->npl; i++)
        labels_free(&s->pl[i]);
    for (size_t i = 0; i < s->nin; i++)
        labels_free(&s->in[i].l);
    s->npl = s->nin = 0;
}

void btdue_free(struct btdue *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->nslot; i++) {
        struct btdue_slot *s = &b->slot[i];
        if (s->has_rec)
            btdue_rec_free(&s->rec);
        btdue_inputs_clear(s);
        free(s->pl);
        free(s->in);
        labels_free(&s->id);
    }
    for (size_t i = 0; i < b->nkeys; i++)
        free(b->keys[i]);
    for (size_t i = 0; i < (b->rs->n ? b->rs->n : 1); i++)
        for (int k = 0; k < 4; k++)
            btdue_memo_free(&b->memo[i][k]);
    free(b->memo);
    free(b->keys);
    free(b->slot);
    free(b->out.v);
    free(b->out_slot);
    strset_free(&b->index);
    sbuf_free(&b->kbuf);
    free(b);
}

void btdue_stats(const struct btdue *b, struct btdue_stats *out)
{
    *out = b->st;
}

int64_t btdue_active_until(const struct proof *p, const struct proof_params *pp, int64_t now,
                           int64_t idle, double threshold)
{
    if (pp->step_ms <= 0 || pp->lookback_ms < 0 || pp->lookback_ms % pp->step_ms != 0 ||
        (p->last != PROOF_NONE && now < p->last))
        return PROOF_NONE; /* proof_judge would fail: not a verdict to carry */
    const struct proof_breaker *h = NULL;
    for (uint32_t i = 0; i < p->nlevels && i < pp->nthresholds && !h; i++)
        if (pp->thresholds[i] == threshold)
            h = &p->high[i];
    /*
     * proof_judge's window starts at g0 = max(grid_ceil(now - idle), now - lookback): at or
     * after B = now - m (m = min(idle, lookback)), and before B + step; its earliest step
     * starts at lo = g0 - step, in [B - step, B). A high sample at or after B is in it, and a
     * non-finite sample before B - step is not, whatever the grid's phase: proof_active's
     * first test holds. The high sample also keeps the series present (proof_present).
     */
    int64_t m = idle < pp->lookback_ms ? idle : pp->lookback_ms;
    if (!h || h->at == PROOF_NONE || h->at < now - m)
        return PROOF_NONE;
    if (p->nan.at != PROOF_NONE && !(p->nan.at < now - m - pp->step_ms))
        return PROOF_NONE;
    return h->at + m;
}

/* The key of the workload of rule `ri` whose identity labels are in `l`, into b->kbuf; false
   when one is absent or empty (decide.c project_identity ignores such a series). */
static bool btdue_key(struct btdue *b, size_t ri, const struct labels *l)
{
    const struct rule *r = &b->rs->rules[ri];
    sbuf_reset(&b->kbuf);
    sbuf_add(&b->kbuf, (const char *)&ri, sizeof(ri));
    return labels_key(&b->kbuf, l, r->identity, r->nidentity);
}

/* The slot of the workload whose key is in b->kbuf, added (with identity `l` projected)
   when new. */
static size_t btdue_slot_of(struct btdue *b, size_t ri, const struct labels *l)
{
    const void *v = strset_get(&b->index, b->kbuf.buf, b->kbuf.len);
    if (v)
        return (size_t)(uintptr_t)v - 1;
    char *k = xmalloc(b->kbuf.len + 1);
    memcpy(k, b->kbuf.buf, b->kbuf.len);
    k[b->kbuf.len] = '\0';
    strset_put(&b->index, k, b->kbuf.len, (void *)(uintptr_t)(b->nslot + 1));
    b->keys = xgrow(b->keys, b->nkeys, sizeof(*b->keys));
    b->keys[b->nkeys++] = k;
    if (b->nslot == b->cslot) {
        b->cslot = b->cslot ? b->cslot * 2 : 64;
        b->slot = xrealloc(b->slot, b->cslot * sizeof(*b->slot));
    }
    struct btdue_slot *s = &b->slot[b->nslot];
    memset(s, 0, sizeof(*s));
    s->rule = ri;
    const struct rule *r = &b->rs->rules[ri];
    labels_project(&s->id, l, r->identity, r->nidentity);
    return b->nslot++;
}

/* The slot series `l` of rule `ri` belongs to, or SIZE_MAX when it has no identity; the
   series is at position j of the list `m` remembers (btdue_memo). */
static size_t btdue_find(struct btdue *b, size_t ri, struct btdue_memo *m, size_t j,
                         const struct labels *l)
{
    size_t v = btdue_memo_get(m, j, l);
    if (v)
        return v == SIZE_MAX ? SIZE_MAX : v - 1; /* SIZE_MAX: no identity label */
    size_t si = btdue_key(b, ri, l) ? btdue_slot_of(b, ri, l) : SIZE_MAX;
    btdue_memo_set(m, j, l, si == SIZE_MAX ? SIZE_MAX : si + 1);
    return si;
}

/* The slot's scratch for this cycle, reset on first touch. */
static struct btdue_slot *btdue_touch(struct btdue *b, size_t si)
{
    struct btdue_slot *s = &b->slot[si];
    if (s->stamp != b->cycle) {
        s->stamp = b->cycle;
        s->pcur = s->icur = 0;
        s->differs = !s->carriable;
        s->holds = false;
        s->due = false;
    }
    return s;
}

/*
 * Whether the copy `kept` has the content of `l`; when it has, it takes l's id, so that the
 * next cycle's look at the same series is one comparison of numbers (labels.id: the same id,
 * the same content). The answers the replay slices are stamped anew with each chunk, so
 * without this every workload's labels were compared string by string at every cycle.
 */
static bool btdue_same_labels(struct labels *kept, const struct labels *l)
{
    if (!labels_equal(kept, l))
        return false;
    kept->id = l->id;
    return true;
}

/* Compare one allocation or priority series with what its slot expects next. */
static void btdue_match_input(struct btdue *b, size_t ri, int kind, const struct series *se,
                              size_t j, size_t *out)
{
    size_t si = btdue_find(b, ri, &b->memo[ri][1 + kind], j, &se->labels);
    *out = si;
    if (si == SIZE_MAX)
        return;
    struct btdue_slot *s = btdue_touch(b, si);
    if (s->differs)
        return;
    struct btdue_input *in = s->icur < s->nin ? &s->in[s->icur] : NULL;
    double v = se->n ? se->p[0].v : 0;
    if (!in || in->kind != kind || in->n != se->n || memcmp(&in->v, &v, sizeof(v)) != 0 ||
        !btdue_same_labels(&in->l, &se->labels))
        s->differs = true;
    s->icur++;
}

static void btdue_out_push(struct btdue *b, size_t si)
{
    if (b->out.n == b->cout) {
        b->cout = b->cout ? b->cout * 2 : 64;
        b->out.v = xrealloc(b->out.v, b->cout * sizeof(*b->out.v));
        b->out_slot = xrealloc(b->out_slot, b->cout * sizeof(*b->out_slot));
    }
    b->out_slot[b->out.n] = si;
    b->out.v[b->out.n++] = b->slot[si].rec;
}

const size_t *btdue_slots(const struct btdue *b)
{
    return b->out_slot;
}

/* Move the records of `d` (decide() of the workloads judged) into their slots and the
   output; `proofs` says whether the rule's records may be carried. */
static void btdue_take(struct btdue *b, size_t ri, struct decisions *d, bool proofs)
{
    for (size_t i = 0; i < d->n; i++) {
        struct decision_rec *r = &d->v[i];
        /* By position first (decide() lists the same workloads in the same order from cycle
           to cycle); a record always has its identity labels, so it has a slot. */
        size_t si = btdue_find(b, ri, &b->memo[ri][3], i, &r->identity);
        if (si == SIZE_MAX) {
            btdue_key(b, ri, &r->identity);
            si = btdue_slot_of(b, ri, &r->identity);
        }
        struct btdue_slot *s = btdue_touch(b, si);
        if (s->has_rec)
            btdue_rec_free(&s->rec);
        s->rec = *r;
        s->has_rec = true;
        s->carriable = proofs && r->decision == DECISION_KEEP && r->reason == REASON_ACTIVE;
        s->due = true;
        btdue_out_push(b, si);
    }
    free(d->v);
    d->v = NULL;
    d->n = 0;
}

/* Record what slot si's record was made from: the rule data `rd` holds only due workloads. */
static void btdue_note_inputs(struct btdue *b, const struct rule_data *rd, const size_t *pslot,
                              const size_t *aslot, const size_t *qslot)
{
    for (size_t j = 0; j < rd->nproofs; j++) {
        struct btdue_slot *s = &b->slot[pslot[j]];
        if (!s->carriable)
            continue;
        s->pl = xgrow(s->pl, s->npl, sizeof(*s->pl));
        labels_copy(&s->pl[s->npl++], &rd->proofs[j].s.labels);
    }
    const struct matrix *m[2] = {&rd->allocation, &rd->priority};
    const size_t *slots[2] = {aslot, qslot};
    for (int k = 0; k < 2; k++)
        for (size_t j = 0; j < m[k]->n; j++) {
            struct btdue_slot *s = &b->slot[slots[k][j]];
            if (!s->carriable)
                continue;
            const struct series *se = &m[k]->s[j];
            s->in = xgrow(s->in, s->nin, sizeof(*s->in));
            struct btdue_input *in = &s->in[s->nin++];
            in->kind = k;
            labels_copy(&in->l, &se->labels);
            in->n = se->n;
            in->v = se->n ? se->p[0].v : 0;
        }
}

/* One rule read as proofs, not in error: judge the due workloads, carry the others. */
static void btdue_rule(struct btdue *b, size_t ri, const struct rule_data *rd, double now)
{
    int64_t now_ms = llround(now * 1000.0);
    const struct proof_params *pp = &rd->proof_params;
    size_t np = rd->nproofs, na = rd->allocation.n, nq = rd->priority.n;
    size_t *pslot = xmalloc((np ? np : 1) * sizeof(*pslot));
    size_t *aslot = xmalloc((na ? na : 1) * sizeof(*aslot));
    size_t *qslot = xmalloc((nq ? nq : 1) * sizeof(*qslot));

    /* The present proofs (decide()'s activity entries) against what each slot expects. */
    for (size_t j = 0; j < np; j++) {
        const struct rule_proof *rp = &rd->proofs[j];
        pslot[j] = SIZE_MAX;
        if (!rp->p || !proof_present(rp->p, pp, now_ms))
            continue;
        size_t si = btdue_find(b, ri, &b->memo[ri][0], j, &rp->s.labels);
        if (si == SIZE_MAX)
            continue;
        pslot[j] = si;
        struct btdue_slot *s = btdue_touch(b, si);
        if (s->differs)
            continue;
        if (s->pcur >= s->npl || !btdue_same_labels(&s->pl[s->pcur], &rp->s.labels)) {
            s->differs = true;
            continue;
        }
        s->pcur++;
        if (!s->holds && btdue_active_until(rp->p, pp, now_ms, llround(s->rec.idle_timer * 1000.0),
                                            s->rec.threshold) != PROOF_NONE)
            s->holds = true;
    }
    for (size_t j = 0; j < na; j++)
        btdue_match_input(b, ri, 0, &rd->allocation.s[j], j, &aslot[j]);
    for (size_t j = 0; j < nq; j++)
        btdue_match_input(b, ri, 1, &rd->priority.s[j], j, &qslot[j]);

    /* Due: touched this cycle and not provably unchanged. */
    for (size_t j = 0; j < np; j++)
        if (pslot[j] != SIZE_MAX) {
            struct btdue_slot *s = &b->slot[pslot[j]];
            s->due = s->differs || !s->holds || s->pcur != s->npl || !s->has_rec;
        }
    const size_t *sl[2] = {aslot, qslot};
    size_t ns[2] = {na, nq};
    for (int k = 0; k < 2; k++)
        for (size_t j = 0; j < ns[k]; j++)
            if (sl[k][j] != SIZE_MAX) {
                struct btdue_slot *s = &b->slot[sl[k][j]];
                s->due = s->differs || !s->holds || s->pcur != s->npl || s->icur != s->nin ||
                         !s->has_rec;
            }
    /* A slot seen only through proofs must also have had all its inputs (none). */
    for (size_t j = 0; j < np; j++)
        if (pslot[j] != SIZE_MAX && b->slot[pslot[j]].icur != b->slot[pslot[j]].nin)
            b->slot[pslot[j]].due = true;

    /* The rule data of the due workloads only. */
    struct rule_data red = *rd;
    red.proofs = xmalloc((np ? np : 1) * sizeof(*red.proofs));
    red.nproofs = 0;
    red.proofs_lent = true;
    red.coverage = (struct matrix){0};
    red.activity = (struct matrix){0};
    struct series *as = xmalloc((na ? na : 1) * sizeof(*as));
    struct series *qs = xmalloc((nq ? nq : 1) * sizeof(*qs));
    size_t *rps = xmalloc((np ? np : 1) * sizeof(*rps));
    size_t *ras = xmalloc((na ? na : 1) * sizeof(*ras));
    size_t *rqs = xmalloc((nq ? nq : 1) * sizeof(*rqs));
    size_t ka = 0, kq = 0;
    for (size_t j = 0; j < np; j++)
        if (pslot[j] != SIZE_MAX && b->slot[pslot[j]].due) {
            rps[red.nproofs] = pslot[j];
            red.proofs[red.nproofs++] = rd->proofs[j];
        }
    for (size_t j = 0; j < na; j++)
        if (aslot[j] != SIZE_MAX && b->slot[aslot[j]].due) {
            ras[ka] = aslot[j];
            as[ka++] = rd->allocation.s[j];
        }
    for (size_t j = 0; j < nq; j++)
        if (qslot[j] != SIZE_MAX && b->slot[qslot[j]].due) {
            rqs[kq] = qslot[j];
            qs[kq++] = rd->priority.s[j];
        }
    red.allocation = (struct matrix){as, ka};
    red.priority = (struct matrix){qs, kq};

    /* The carried: touched, not due, with a record. Collected before the judgement moves
       new records in (a slot judged now is due). */
    size_t *carry = NULL, ncarry = 0;
    for (int k = 0; k < 3; k++) {
        const size_t *v = k == 0 ? pslot : k == 1 ? aslot : qslot;
        size_t n = k == 0 ? np : k == 1 ? na : nq;
        for (size_t j = 0; j < n; j++) {
            if (v[j] == SIZE_MAX)
                continue;
            struct btdue_slot *s = &b->slot[v[j]];
            if (s->due || !s->has_rec || s->stamp != b->cycle)
                continue;
            s->due = true; /* listed once */
            carry = xgrow(carry, ncarry, sizeof(*carry));
            carry[ncarry++] = v[j];
        }
    }
    /* Every due slot loses its record until decide() gives it one (or none: out of scope). */
    for (size_t k = 0; k < 3; k++) {
        const size_t *v = k == 0 ? rps : k == 1 ? ras : rqs;
        size_t n = k == 0 ? red.nproofs : k == 1 ? ka : kq;
        for (size_t j = 0; j < n; j++) {
            struct btdue_slot *s = &b->slot[v[j]];
            if (s->has_rec) {
                btdue_rec_free(&s->rec);
                s->has_rec = false;
            }
            s->carriable = false;
            btdue_inputs_clear(s);
        }
    }
    struct decisions d = {0};
    decide(&red, 1, now, &d);
    b->st.judged += d.n;
    btdue_take(b, ri, &d, true);
    btdue_note_inputs(b, &red, rps, ras, rqs);
    for (size_t i = 0; i < ncarry; i++) {
        struct btdue_slot *s = &b->slot[carry[i]];
        s->rec.window_end = now;
        s->rec.window_start = now - s->rec.idle_timer;
        btdue_out_push(b, carry[i]);
    }
    b->st.carried += ncarry;
    free(carry);
    free(red.proofs);
    free(as);
    free(qs);
    free(rps);
    free(ras);
    free(rqs);
    free(pslot);
    free(aslot);
    free(qslot);
}

const struct decisions *btdue_decide(struct btdue *b, const struct rule_data *data, size_t ndata,
                                     double now)
{
    b->cycle++;
    b->out.n = 0;
    for (size_t i = 0; i < ndata; i++) {
        const struct rule_data *rd = &data[i];
        if (!rd->rule)
            continue;
        if (rd->has_proofs && !rd->error && i < b->rs->n) {
            btdue_rule(b, i, rd, now);
            continue;
        }
        /* Not provable from proofs (an expression, the PromQL plan) or not read: decide()
           of every workload, nothing carried. */
        struct decisions d = {0};
        decide(rd, 1, now, &d);
        b->st.judged += d.n;
        for (size_t k = 0; k < d.n; k++) {
            btdue_key(b, i, &d.v[k].identity);
            struct btdue_slot *s = btdue_touch(b, btdue_slot_of(b, i, &d.v[k].identity));
            btdue_inputs_clear(s);
        }
        btdue_take(b, i, &d, false);
    }
    return &b->out;
}

/* ---- the memo of series to workloads ------------------------------------------------------ */

/* The slot of `id` in m's table: its own, or the empty one it would take. */
static size_t btdue_memo_hslot(const struct btdue_memo *m, uint64_t id)
{
    size_t mask = m->hcap - 1, i = (size_t)(id * 0x9E3779B97F4A7C15ull) & mask;
    while (m->hk[i] && m->hk[i] != id)
        i = (i + 1) & mask;
    return i;
}

static void btdue_memo_hput(struct btdue_memo *m, uint64_t id, size_t v)
{
    /* The ids of series no list hands any more (an answer read again stamps new ones) pile
       up: past a bound set by the positions, the table starts again (it refills as it is
       used), so memory stays flat in the range. */
    if (m->hn >= 8 * m->n + 4096) {
        memset(m->hk, 0, m->hcap * sizeof(*m->hk));
        m->hn = 0;
    }
    if (2 * (m->hn + 1) > m->hcap) {
        struct btdue_memo old = *m;
        m->hcap = m->hcap ? 2 * m->hcap : 256;
        m->hk = xcalloc(m->hcap, sizeof(*m->hk));
        m->hv = xmalloc(m->hcap * sizeof(*m->hv));
        m->hn = 0;
        for (size_t i = 0; i < old.hcap; i++)
            if (old.hk[i]) {
                size_t k = btdue_memo_hslot(m, old.hk[i]);
                m->hk[k] = old.hk[i];
                m->hv[k] = old.hv[i];
                m->hn++;
            }
        free(old.hk);
        free(old.hv);
    }
    size_t k = btdue_memo_hslot(m, id);
    if (!m->hk[k])
        m->hn++;
    m->hk[k] = id;
    m->hv[k] = v;
}

size_t btdue_memo_get(struct btdue_memo *m, size_t j, const struct labels *l)
{
    if (j < m->n && m->e[j].v) {
        struct btdue_memo_entry *e = &m->e[j];
        if (e->l.id && e->l.id == l->id)
            return e->v;
        if (labels_equal(&e->l, l)) {
            e->l.id = l->id; /* equal content: l's id is the copy's too */
            return e->v;
        }
    }
    if (!l->id || !m->hcap)
        return 0;
    size_t k = btdue_memo_hslot(m, l->id);
    if (!m->hk[k])
        return 0;
    size_t v = m->hv[k];
    btdue_memo_set(m, j, l, v); /* where it is now, for the next cycle */
    return v;
}

void btdue_memo_set(struct btdue_memo *m, size_t j, const struct labels *l, size_t v)
{
    if (j >= m->n) {
        size_t n = m->n ? m->n : 64;
        while (n <= j)
            n *= 2;
        m->e = xrealloc(m->e, n * sizeof(*m->e));
        memset(m->e + m->n, 0, (n - m->n) * sizeof(*m->e));
        m->n = n;
    }
    labels_free(&m->e[j].l);
    labels_copy(&m->e[j].l, l);
    m->e[j].v = v;
    if (l->id)
        btdue_memo_hput(m, l->id, v);
}

void btdue_memo_free(struct btdue_memo *m)
{
    for (size_t i = 0; i < m->n; i++)
        labels_free(&m->e[i].l);
    free(m->e);
    free(m->hk);
    free(m->hv);
    *m = (struct btdue_memo){0};
}
