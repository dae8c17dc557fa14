/*
 * The range reader's read-ahead (replay.c; issue 31): while the cycles of one chunk are
 * judged, a thread reads the next chunk (every selector's raw samples, every instant and
 * range query over its cycles), so that the server's work and the decoding of its answers
 * run beside the backtest's cycles instead of between them. A backtest of a week waited
 * for Prometheus about a third of its time with nothing else to do (docs/benchmarks.md).
 *
 * What the thread read is handed to the replay where the replay would have read it itself
 * (rp_load, after the cycle's trim), through the same code and in the same order: each raw
 * read's series through rp_on_series, its end through rp_read_end (kept, or undone when it
 * failed: a failed read is never a shorter series; the failure noted, the log line written),
 * each answer through rp_answer_take. So the state after it, the failures, the stats and the
 * log are those of the reads made there; only the moment the server was asked differs.
 *
 * The thread touches only its own staging (struct rp_ahead) and the client, which is safe
 * across threads (promq.h). It starts only when the read cannot change how the rules are
 * read: never for `run` (replay_live.c), and not while a selector still probes whether the
 * server offers remote read (an answer of "absent" turns rules into fallbacks, and that
 * first read is made in place). replay_cfg.sync_reads turns it off (the tests compare).
 */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rawread.h"
#include "replay_p.h"
#include "util.h"

/* One raw read of one selector made ahead, and the series it handed over, in order. */
struct ah_read {
    size_t sel;
    double a, b;
    enum rawread_rc rc;
    char err[256];
    size_t samples, bytes;
    struct matrix m;
    size_t cap; /* room in m.s */
};

/* One range query over the chunk's cycles (instants first, then the PromQL plan's ranges,
   as rp_load asks them). */
struct ah_query {
    const char *expr;
    double a, b, step;
    bool named;
    int rc;
    char err[256];
    struct matrix m;
};

/* Per selector: what it is read with, from where, and where its reads ended. */
struct ah_sel {
    const char *sel;
    enum promq_read_path path;
    bool skip; /* a fallback: not read */
    double a, to;
};

struct rp_ahead {
    pthread_t th;
    bool joined;
    struct promq *q;
    size_t k0, k1; /* the cycles read for */
    double upto, chunk, span;
    struct ah_sel *sels;
    size_t nsels;
    struct ah_read *reads;
    size_t nreads;
    struct ah_query *qs;
    size_t nqs;
};

/* rawread_series_fn: a copy of the series, handed over later. The array grows by doubling
   (matrix_push grows it by one: at 10,000 series a read, a copy of the array per series). */
static int ah_keep(void *arg, const struct series *in, char *err, size_t errlen)
{
    struct ah_read *rd = arg;
    if (rd->m.n == rd->cap) {
        rd->cap = rd->cap ? 2 * rd->cap : 64;
        rd->m.s = xrealloc(rd->m.s, rd->cap * sizeof(*rd->m.s));
    }
    struct series *d = &rd->m.s[rd->m.n++];
    *d = (struct series){0};
    labels_copy(&d->labels, &in->labels);
    d->n = in->n;
    d->p = xmalloc((in->n ? in->n : 1) * sizeof(*d->p));
    memcpy(d->p, in->p, in->n * sizeof(*d->p));
    (void)err;
    (void)errlen;
    return 0;
}

/* The reads rp_read_raw and rp_load would make for the chunk, in their order. */
static void *ah_run(void *arg)
{
    struct rp_ahead *ah = arg;
    for (size_t k = 0; k < ah->nsels; k++) {
        struct ah_sel *s = &ah->sels[k];
        double a = s->a;
        while (!s->skip && a < ah->upto) {
            double b = a + ah->chunk < ah->upto ? a + ah->chunk : ah->upto;
            ah->reads = xgrow(ah->reads, ah->nreads, sizeof(*ah->reads));
            struct ah_read *rd = &ah->reads[ah->nreads++];
            *rd = (struct ah_read){.sel = k, .a = a, .b = b};
            struct matrix none = {0};
            rd->rc = rawread_read(ah->q, s->path, false, s->sel, a, b, ah_keep, rd, &none,
                                  &rd->samples, &rd->bytes, rd->err, sizeof(rd->err));
            matrix_free(&none);
            a = b;
        }
        s->to = a;
    }
    for (size_t i = 0; i < ah->nqs; i++) {
        struct ah_query *g = &ah->qs[i];
        g->rc = (g->named ? promq_range_named : promq_range)(ah->q, g->expr, g->a, g->b, g->step,
                                                             &g->m, g->err, sizeof(g->err));
    }
    return NULL;
}

static void ah_free(struct rp_ahead *ah)
{
    for (size_t i = 0; i < ah->nreads; i++)
        matrix_free(&ah->reads[i].m);
    for (size_t i = 0; i < ah->nqs; i++)
        matrix_free(&ah->qs[i].m);
    free(ah->reads);
    free(ah->qs);
    free(ah->sels);
    free(ah);
}

static void ah_discard(struct replay *r)
{
    if (!r->ahead)
        return;
    ah_free(r->ahead);
    r->ahead = NULL;
}

void rp_ahead_start(struct replay *r, size_t per)
{
    if (r->ahead || r->live || r->cfg.sync_reads || !r->cfg.q || r->loaded >= r->ncycles)
        return;
    for (size_t k = 0; k < r->nsels; k++)
        if (!r->sels[k].fallback && (r->sels[k].probe || isnan(r->sels[k].read_to)))
            return; /* its first read is made in place (above) */
    struct rp_ahead *ah = xcalloc(1, sizeof(*ah));
    ah->q = r->cfg.q;
    ah->k0 = r->loaded;
    ah->k1 = ah->k0 + per < r->ncycles ? ah->k0 + per : r->ncycles;
    ah->upto = rp_time(r, ah->k1 - 1);
    ah->chunk = r->cfg.chunk;
    ah->nsels = r->nsels;
    ah->sels = xcalloc(r->nsels ? r->nsels : 1, sizeof(*ah->sels));
    for (size_t k = 0; k < r->nsels; k++) {
        const struct rp_sel *s = &r->sels[k];
        ah->sels[k] = (struct ah_sel){
            .sel = s->sel, .path = s->path, .skip = s->fallback, .a = s->read_to, .to = s->read_to};
        if (!s->fallback && ah->upto - s->read_to > ah->span)
            ah->span = ah->upto - s->read_to;
    }
    size_t nq = r->inst_per_cycle ? 0 : r->ninsts;
    ah->qs = xcalloc(nq + r->nranges + 1, sizeof(*ah->qs));
    for (size_t i = 0; i < nq; i++)
        ah->qs[ah->nqs++] = (struct ah_query){.expr = r->insts[i].expr,
                                              .a = rp_time(r, ah->k0),
                                              .b = ah->upto,
                                              .step = r->cfg.interval,
                                              .named = true};
    for (size_t i = 0; i < r->nranges; i++)
        ah->qs[ah->nqs++] = (struct ah_query){.expr = r->ranges[i].expr,
                                              .a = rp_time(r, ah->k0) - r->ranges[i].lookback,
                                              .b = ah->upto,
                                              .step = r->ranges[i].step};
    if (pthread_create(&ah->th, NULL, ah_run, ah) != 0) {
        /* Nothing lost: the chunk is read in place when its cycles come. */
        log_warn("replay: cannot start the read-ahead thread; reading in place");
        ah_free(ah);
        return;
    }
    r->ahead = ah;
}

bool rp_ahead_raw(struct replay *r, size_t k1, double *span)
{
    struct rp_ahead *ah = r->ahead;
    if (!ah)
        return false;
    pthread_join(ah->th, NULL);
    ah->joined = true;
    if (ah->k0 != r->loaded || ah->k1 != k1) {
        /* Not the chunk asked for (cannot happen while rp_load alone moves `loaded`). */
        ah_discard(r);
        return false;
    }
    for (size_t i = 0; i < ah->nreads; i++) {
        struct ah_read *rd = &ah->reads[i];
        struct rp_sel *s = &r->sels[rd->sel];
        char scratch[8]; /* rp_on_series reports nothing: it cannot fail */
        rp_read_begin(r, rd->sel, rd->a, rd->b);
        for (size_t j = 0; j < rd->m.n; j++)
            (void)rp_on_series(s, &rd->m.s[j], scratch, sizeof(scratch));
        rp_read_end(r, rd->sel, rd->a, rd->b, rd->rc, rd->samples, rd->bytes, rd->err);
        matrix_free(&rd->m);
    }
    for (size_t k = 0; k < ah->nsels; k++)
        if (!ah->sels[k].skip)
            r->sels[k].read_to = ah->sels[k].to;
    *span = ah->span;
    return true;
}

bool rp_ahead_answers(struct replay *r)
{
    struct rp_ahead *ah = r->ahead;
    if (!ah)
        return false;
    size_t nq = r->inst_per_cycle ? 0 : r->ninsts;
    for (size_t i = 0; i < ah->nqs; i++) {
        struct ah_query *g = &ah->qs[i];
        struct rp_answer *ans = i < nq ? &r->insts[i].ans : &r->ranges[i - nq].ans;
        rp_answer_take(r, ans, g->expr, g->a, g->b, g->rc, &g->m, g->err);
    }
    ah_discard(r);
    return true;
}

void rp_ahead_stop(struct replay *r)
{
    if (!r->ahead)
        return;
    if (!r->ahead->joined)
        pthread_join(r->ahead->th, NULL);
    ah_discard(r);
}
