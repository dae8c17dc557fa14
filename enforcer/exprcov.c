/*
 * Raw coverage of an expression's selectors (exprcov.h). Each raw series is reduced to its
 * coverage at now (raw_cover_at) as soon as it arrives, so a cycle holds one record per
 * series, not its samples. Records that carry every identity label are sorted by identity and
 * found by binary search per workload; the others (node-level series, or all of them when the
 * expression writes an identity label) are checked against every workload.
 *
 * Parts: the label names the expression groups or joins on (by, on, group_left/right), less
 * the identity labels, are the parts of a workload (gpu_id, a device, a partition). For each
 * such name, every selector that carries it must have the same values for the workload
 * (a selector carrying it for no workload at all, or only in an `unless` right-hand side, is
 * not compared), and when the result carries it too, the result must have each of them. A
 * name the sources spell differently (`instance` of two exporters) then keeps too: stricter
 * than needed, and a recording rule avoids it (docs/decision-semantics.md §3.1). Without by or
 * on an expression matches on every label, so every series of a selector shaped like the
 * result's rows must have a row (series_missing).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dur.h"
#include "exprcov.h"
#include "promsel.h"
#include "raw.h"
#include "rfc3339.h"
#include "util.h"

/* One raw series of a selector, reduced to its coverage at now. */
struct xrec {
    struct labels labels; /* without __name__ */
    struct labels id;     /* the identity labels it has */
    size_t sel;
    struct raw_cover c;
};

struct exprcov {
    /* The rule's identity label names (the rule set's array: a caller may judge with a copy
       of the struct rule, replay.c's rp_fallback, so the rule itself is not kept). */
    char *const *identity;
    size_t nidentity;
    struct promsel ps;
    double gap, lookback;
    bool unscoped; /* the expression writes an identity label */
    char **keys;   /* part labels: grouping labels that are not identity labels */
    size_t nkeys;
    struct xrec *rec;
    size_t nrec, cap;
    /* exprcov_index */
    struct xrec **scoped, **partial;
    size_t nscoped, npartial;
    bool *bearing; /* [sel * nkeys + k]: a scoped series of sel has keys[k] */
    struct outrow {
        struct labels id;
        const struct series *s;
    } * out;
    size_t nout;
    /* When unscoped, every record concerns every workload: the ones that decide any
       workload's verdict, found once (a stale one; the latest proven start, less the reach,
       of a series with a hole before it and of one without), and whether any feeds. */
    const struct xrec *ustale, *ugap, *uyoung;
    bool ufed;
};

static bool is_identity(const struct exprcov *ec, const char *name)
{
    for (size_t i = 0; i < ec->nidentity; i++)
        if (strcmp(ec->identity[i], name) == 0)
            return true;
    return false;
}

struct exprcov *exprcov_new(const struct rule *r, double lookback, char *err, size_t errlen)
{
    struct promsel ps;
    if (promsel_extract(r->q_activity, &ps, err, errlen) < 0)
        return NULL;
    struct exprcov *ec = xcalloc(1, sizeof(*ec));
    ec->identity = r->identity;
    ec->nidentity = r->nidentity;
    ec->ps = ps;
    double step = r->step > 0 ? r->step : 60;
    /* The tolerated gap as the raw path reads it (fetch.c, fetch_grid). */
    ec->gap = r->tolerated_gap > 0 ? r->tolerated_gap : 2 * step;
    ec->lookback = lookback;
    for (size_t i = 0; i < r->nidentity; i++)
        ec->unscoped |= promsel_writes(&ps, r->identity[i]);
    for (size_t i = 0; i < ps.ngrouping; i++) {
        if (is_identity(ec, ps.grouping[i]))
            continue;
        ec->keys = xrealloc(ec->keys, (ec->nkeys + 1) * sizeof(*ec->keys));
        ec->keys[ec->nkeys++] = ps.grouping[i];
    }
    return ec;
}

void exprcov_free(struct exprcov *ec)
{
    if (!ec)
        return;
    for (size_t i = 0; i < ec->nrec; i++) {
        labels_free(&ec->rec[i].labels);
        labels_free(&ec->rec[i].id);
    }
    for (size_t i = 0; i < ec->nout; i++)
        labels_free(&ec->out[i].id);
    free(ec->rec);
    free(ec->scoped);
    free(ec->partial);
    free(ec->bearing);
    free(ec->out);
    free(ec->keys);
    promsel_free(&ec->ps);
    free(ec);
}

size_t exprcov_count(const struct exprcov *ec)
{
    return ec->ps.nsel;
}

const char *exprcov_selector(const struct exprcov *ec, size_t i)
{
    return ec->ps.sel[i].text;
}

double exprcov_read_start(const struct exprcov *ec, size_t i, double now)
{
    return now - ec->lookback - ec->ps.sel[i].reach - ec->gap;
}

int exprcov_add_series(struct exprcov *ec, size_t i, const struct series *s, double now, char *err,
                       size_t errlen)
{
    struct raw_cover c;
    if (raw_cover_at(s, now, ec->gap, &c, err, errlen) < 0)
        return -1;
    /* Only staleness markers: gone before the window, as raw_to_grid drops it. */
    if (isnan(c.last))
        return 0;
    if (ec->nrec == ec->cap) {
        ec->cap = ec->cap ? 2 * ec->cap : 64;
        ec->rec = xrealloc(ec->rec, ec->cap * sizeof(*ec->rec));
    }
    struct xrec *x = &ec->rec[ec->nrec++];
    *x = (struct xrec){.sel = i, .c = c};
    struct label small[16];
    struct label *v = s->labels.n <= 16 ? small : xmalloc(s->labels.n * sizeof(*v));
    size_t k = 0;
    for (size_t l = 0; l < s->labels.n; l++)
        if (strcmp(s->labels.v[l].name, "__name__") != 0)
            v[k++] = s->labels.v[l];
    labels_from(&x->labels, v, k);
    if (v != small)
        free(v);
    labels_project(&x->id, &x->labels, ec->identity, ec->nidentity);
    return 0;
}

int exprcov_add(struct exprcov *ec, size_t i, struct matrix *raw, double now, char *err,
                size_t errlen)
{
    int ret = 0;
    for (size_t j = 0; j < raw->n; j++) {
        if (ret == 0)
            ret = exprcov_add_series(ec, i, &raw->s[j], now, err, errlen);
        series_free(&raw->s[j]);
    }
    free(raw->s);
    *raw = (struct matrix){0};
    return ret;
}

static int cmp_rec(const void *a, const void *b)
{
    const struct xrec *x = *(const struct xrec *const *)a, *y = *(const struct xrec *const *)b;
    int c = labels_compare(&x->id, &y->id);
    if (c)
        return c;
    return x->sel < y->sel ? -1 : x->sel > y->sel;
}

static int cmp_out(const void *a, const void *b)
{
    return labels_compare(&((const struct outrow *)a)->id, &((const struct outrow *)b)->id);
}

void exprcov_index(struct exprcov *ec, const struct matrix *activity)
{
    ec->scoped = xmalloc((ec->nrec ? ec->nrec : 1) * sizeof(*ec->scoped));
    ec->partial = xmalloc((ec->nrec ? ec->nrec : 1) * sizeof(*ec->partial));
    ec->bearing = xcalloc(ec->ps.nsel * (ec->nkeys ? ec->nkeys : 1), sizeof(*ec->bearing));
    for (size_t i = 0; i < ec->nrec; i++) {
        struct xrec *x = &ec->rec[i];
        bool full = !ec->unscoped && x->id.n == ec->nidentity;
        for (size_t k = 0; full && k < x->id.n; k++)
            full = x->id.v[k].value[0] != '\0';
        if (!full) {
            ec->partial[ec->npartial++] = x;
            continue;
        }
        ec->scoped[ec->nscoped++] = x;
        for (size_t k = 0; k < ec->nkeys; k++)
            if (labels_get(&x->labels, ec->keys[k]))
                ec->bearing[x->sel * ec->nkeys + k] = true;
    }
    if (ec->nscoped > 1)
        qsort(ec->scoped, ec->nscoped, sizeof(*ec->scoped), cmp_rec);
    for (size_t i = 0; ec->unscoped && i < ec->npartial; i++) {
        const struct xrec *x = ec->partial[i];
        const struct xrec **slot = !x->c.covered        ? &ec->ustale
                                   : isnan(x->c.before) ? &ec->uyoung
                                                        : &ec->ugap;
        double need = x->c.from - ec->ps.sel[x->sel].reach;
        if (!*slot || (x->c.covered && need > (*slot)->c.from - ec->ps.sel[(*slot)->sel].reach))
            *slot = x;
        ec->ufed |= !ec->ps.sel[x->sel].gate;
    }
    ec->out = xmalloc((activity->n ? activity->n : 1) * sizeof(*ec->out));
    for (size_t i = 0; i < activity->n; i++) {
        const struct series *s = &activity->s[i];
        struct outrow *o = &ec->out[ec->nout];
        labels_project(&o->id, &s->labels, ec->identity, ec->nidentity);
        if (o->id.n != ec->nidentity) {
            labels_free(&o->id);
            continue;
        }
        o->s = s;
        ec->nout++;
    }
    if (ec->nout > 1)
        qsort(ec->out, ec->nout, sizeof(*ec->out), cmp_out);
}

/* A partial record feeds the workload when every identity label it has agrees. */
static bool partial_feeds(const struct exprcov *ec, const struct xrec *x, const struct labels *id)
{
    if (ec->unscoped)
        return true;
    for (size_t i = 0; i < x->id.n; i++) {
        const char *v = labels_get(id, x->id.v[i].name);
        if (x->id.v[i].value[0] && (!v || strcmp(v, x->id.v[i].value) != 0))
            return false;
    }
    return true;
}

/* "selector 'x' {gpu_id="1"}": the selector and the series' labels beyond the identity. */
static void name_series(const struct exprcov *ec, const struct xrec *x, char *buf, size_t len)
{
    struct labels extra = {0};
    for (size_t i = 0; i < x->labels.n; i++)
        if (ec->unscoped || !is_identity(ec, x->labels.v[i].name))
            labels_set(&extra, x->labels.v[i].name, x->labels.v[i].value);
    char *l = labels_format(&extra);
    snprintf(buf, len, "selector '%.48s' %.80s", exprcov_selector(ec, x->sel), l);
    free(l);
    labels_free(&extra);
}

static int rank(enum reason r)
{
    return r == REASON_STALE ? 0 : r == REASON_GAP ? 1 : r == REASON_TOO_YOUNG ? 2 : 3;
}

/* One raw series over [need, now]. */
static enum reason rec_verdict(const struct exprcov *ec, const struct xrec *x, double need,
                               char *detail, size_t dlen)
{
    char who[160], t1[32], t2[32], g[DUR_LEN];
    dur_format(g, sizeof(g), ec->gap);
    if (!x->c.covered) {
        name_series(ec, x, who, sizeof(who));
        rfc3339_format(t1, sizeof(t1), x->c.last, RFC3339_SEC);
        snprintf(detail, dlen,
                 "%s: last raw sample at %s, none within the tolerated gap %s "
                 "before now",
                 who, t1, g);
        return REASON_STALE;
    }
    /* Raw times are whole milliseconds. */
    if (x->c.from <= need + 5e-4)
        return REASON_IDLE;
    name_series(ec, x, who, sizeof(who));
    rfc3339_format(t2, sizeof(t2), x->c.from, RFC3339_SEC);
    if (isnan(x->c.before)) {
        rfc3339_format(t1, sizeof(t1), need, RFC3339_SEC);
        snprintf(detail, dlen, "%s: first raw sample at %s, after %s", who, t2, t1);
        return REASON_TOO_YOUNG;
    }
    rfc3339_format(t1, sizeof(t1), x->c.before, RFC3339_SEC);
    snprintf(detail, dlen, "%s: no raw sample from %s to %s, more than the tolerated gap %s", who,
             t1, t2, g);
    return REASON_GAP;
}

/* The scoped records of workload `id`: [*lo, *hi) of ec->scoped. */
static void scoped_range(const struct exprcov *ec, const struct labels *id, size_t *lo, size_t *hi)
{
    size_t a = 0, b = ec->nscoped;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (labels_compare(&ec->scoped[m]->id, id) < 0)
            a = m + 1;
        else
            b = m;
    }
    *lo = a;
    b = a;
    while (b < ec->nscoped && labels_equal(&ec->scoped[b]->id, id))
        b++;
    *hi = b;
}

static bool has_value(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}

/* The workload's rows of the result: [*a, *b) of ec->out. */
static void out_range(const struct exprcov *ec, const struct labels *id, size_t *a, size_t *b)
{
    struct outrow probe = {.id = *id};
    struct outrow *o =
        ec->nout ? bsearch(&probe, ec->out, ec->nout, sizeof(*ec->out), cmp_out) : NULL;
    *a = *b = 0;
    if (o) {
        *a = *b = (size_t)(o - ec->out);
        while (*a > 0 && labels_equal(&ec->out[*a - 1].id, id))
            (*a)--;
        while (*b < ec->nout && labels_equal(&ec->out[*b].id, id))
            (*b)++;
    }
}

/*
 * A series of a selector that is missing from the result (an expression without by or on):
 * when the result's rows of the workload carry labels beyond the identity (a device), every
 * series of a selector that carries all of those labels must have a row with the same values
 * (`x and y` drops x's device that y lacks). A selector that lacks one of them (a per-pod
 * metric joined in, a label the expression adds) is not compared.
 */
static bool series_missing(const struct exprcov *ec, const struct labels *id, size_t lo, size_t hi,
                           char *detail, size_t dlen)
{
    size_t a, b;
    out_range(ec, id, &a, &b);
    /* The result's label names beyond the identity, from its first row (rows of one
       expression share their names; a row lacking one just never matches). */
    if (a == b)
        return false;
    const struct labels *ol = &ec->out[a].s->labels;
    for (size_t i = lo; i < hi; i++) {
        const struct xrec *x = ec->scoped[i];
        if (ec->ps.sel[x->sel].gate)
            continue;
        bool shaped = true, any = false;
        for (size_t n = 0; n < ol->n && shaped; n++) {
            if (is_identity(ec, ol->v[n].name) || strcmp(ol->v[n].name, "__name__") == 0)
                continue;
            shaped = labels_get(&x->labels, ol->v[n].name) != NULL;
            any = true;
        }
        if (!shaped || !any)
            continue;
        bool found = false;
        for (size_t o = a; o < b && !found; o++) {
            const struct labels *rl = &ec->out[o].s->labels;
            found = true;
            for (size_t n = 0; n < ol->n && found; n++) {
                const char *want = labels_get(&x->labels, ol->v[n].name);
                const char *have = labels_get(rl, ol->v[n].name);
                found = is_identity(ec, ol->v[n].name) || !want || (have && !strcmp(want, have));
            }
        }
        if (!found) {
            char who[160];
            name_series(ec, x, who, sizeof(who));
            snprintf(detail, dlen, "%s is missing from the result of 'activity'", who);
            return true;
        }
    }
    return false;
}

/*
 * The parts check: for part label `key`, a value one selector has for the workload that
 * another carrying the label lacks, or that the result lacks while carrying the label.
 */
static bool parts_missing(const struct exprcov *ec, size_t k, const struct labels *id, size_t lo,
                          size_t hi, char *detail, size_t dlen)
{
    const char *key = ec->keys[k];
    /* Every value any non-gate selector has for the workload. */
    const char **u = xmalloc((hi - lo + 1) * sizeof(*u));
    size_t nu = 0;
    for (size_t i = lo; i < hi; i++) {
        const struct xrec *x = ec->scoped[i];
        const char *v = labels_get(&x->labels, key);
        if (v && !ec->ps.sel[x->sel].gate && !has_value(u, nu, v))
            u[nu++] = v;
    }
    bool missing = false;
    for (size_t s = 0; s < ec->ps.nsel && !missing; s++) {
        if (ec->ps.sel[s].gate || !ec->bearing[s * ec->nkeys + k])
            continue;
        for (size_t j = 0; j < nu && !missing; j++) {
            bool found = false;
            for (size_t i = lo; i < hi && !found; i++) {
                const char *v = labels_get(&ec->scoped[i]->labels, key);
                found = ec->scoped[i]->sel == s && v && strcmp(v, u[j]) == 0;
            }
            if (!found) {
                snprintf(detail, dlen,
                         "selector '%.48s' has no series with %s=\"%.40s\", which another "
                         "selector has",
                         exprcov_selector(ec, s), key, u[j]);
                missing = true;
            }
        }
    }
    size_t a, b;
    out_range(ec, id, &a, &b);
    bool carries = false;
    for (size_t i = a; i < b; i++)
        carries |= labels_get(&ec->out[i].s->labels, key) != NULL;
    for (size_t j = 0; j < nu && carries && !missing; j++) {
        bool found = false;
        for (size_t i = a; i < b && !found; i++) {
            const char *v = labels_get(&ec->out[i].s->labels, key);
            found = v && strcmp(v, u[j]) == 0;
        }
        if (!found) {
            snprintf(detail, dlen,
                     "%s=\"%.40s\" of its selectors is missing from the result of "
                     "'activity'",
                     key, u[j]);
            missing = true;
        }
    }
    free(u);
    return missing;
}

enum reason exprcov_judge(const struct exprcov *ec, const struct labels *id, double ws,
                          char *detail, size_t dlen)
{
    enum reason best = REASON_IDLE;
    bool fed = false;
    char tmp[256];
    size_t lo, hi;
    scoped_range(ec, id, &lo, &hi);
    if (ec->unscoped) {
        /* The records that decide (exprcov_index), not all of them for every workload. */
        const struct xrec *const decisive[] = {ec->ustale, ec->ugap, ec->uyoung};
        for (size_t i = 0; i < ARRAY_LEN(decisive); i++) {
            const struct xrec *x = decisive[i];
            if (!x)
                continue;
            enum reason r = rec_verdict(ec, x, ws - ec->ps.sel[x->sel].reach, tmp, sizeof(tmp));
            if (rank(r) < rank(best)) {
                best = r;
                snprintf(detail, dlen, "%s", tmp);
            }
        }
        fed = ec->ufed;
        hi = lo; /* no scoped records when unscoped */
    }
    for (size_t i = 0; i < (hi - lo) + (ec->unscoped ? 0 : ec->npartial); i++) {
        const struct xrec *x = i < hi - lo ? ec->scoped[lo + i] : ec->partial[i - (hi - lo)];
        if (i >= hi - lo && !partial_feeds(ec, x, id))
            continue;
        fed |= !ec->ps.sel[x->sel].gate;
        enum reason r = rec_verdict(ec, x, ws - ec->ps.sel[x->sel].reach, tmp, sizeof(tmp));
        if (rank(r) < rank(best)) {
            best = r;
            snprintf(detail, dlen, "%s", tmp);
        }
    }
    if (best != REASON_IDLE)
        return best;
    if (!fed) {
        snprintf(detail, dlen,
                 "no raw series of the selectors of 'activity' has its identity "
                 "labels: its result is not proven by raw samples");
        return REASON_NO_DATA;
    }
    for (size_t k = 0; k < ec->nkeys && !ec->unscoped; k++)
        if (parts_missing(ec, k, id, lo, hi, detail, dlen))
            return REASON_NO_DATA;
    /* With by/on the labels that must agree are those (parts_missing); without, every label
       of the result must, as full label matching (`x and y`) requires. */
    if (!ec->unscoped && ec->ps.ngrouping == 0 && series_missing(ec, id, lo, hi, detail, dlen))
        return REASON_NO_DATA;
    return REASON_IDLE;
}
