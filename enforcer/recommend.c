/*
 * recommend.h: the grid's flags and the choice among the points the backtest engine scored.
 * Pure functions, no I/O (tests/unit/test_recommend.c).
 */
#include "recommend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dur.h"
#include "util.h"

static int rec_dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A percent number "10", "2.5" or "10%" into *out; -1 when it is not one. */
static int rec_percent(const char *s, double *out)
{
    char *end;
    if (!*s || strspn(s, " \t") == strlen(s))
        return -1;
    double v = strtod(s, &end);
    if (end == s)
        return -1;
    if (*end == '%')
        end++;
    if (*end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int rec_parse_list(const char *s, bool durations, bool zero_ok, const char *flag, double **out,
                   size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    if (!s || !*s)
        return err_printf(err, errlen, "'--%s' needs at least one value", flag);
    double *v = NULL;
    size_t nv = 0;
    const char *p = s;
    for (;;) {
        size_t len = strcspn(p, ",");
        char item[64];
        if (len == 0 || len >= sizeof(item)) {
            free(v);
            return err_printf(err, errlen, "invalid list '%s' for '--%s': %s", s, flag,
                              len ? "an item is too long" : "an empty item");
        }
        memcpy(item, p, len);
        item[len] = '\0';
        double x;
        bool ok = durations ? dur_parse(item, &x) == 0 && x >= 0 : rec_percent(item, &x) == 0;
        if (ok && durations && !zero_ok && !(x > 0))
            ok = false;
        if (ok && !durations && !(x > 0 && x <= 100))
            ok = false;
        if (!ok) {
            free(v);
            return err_printf(err, errlen, "invalid value '%s' in '--%s': want %s", item, flag,
                              !durations ? "a percent above 0 and at most 100, e.g. 5 or 5%"
                              : zero_ok  ? "a duration such as 0s or 15m"
                                         : "a duration above 0 such as 15m");
        }
        v = xgrow(v, nv, sizeof(*v));
        v[nv++] = x;
        if (!p[len])
            break;
        p += len + 1;
    }
    qsort(v, nv, sizeof(*v), rec_dbl_cmp);
    size_t k = 0;
    for (size_t i = 0; i < nv; i++)
        if (k == 0 || v[i] != v[k - 1])
            v[k++] = v[i];
    *out = v;
    *n = k;
    return 0;
}

int rec_parse_share(const char *s, double max_pct, const char *flag, double *out, char *err,
                    size_t errlen)
{
    double v;
    if (!s || rec_percent(s, &v) != 0 || v < 0 || v > max_pct)
        return err_printf(err, errlen,
                          "invalid share '%s' for '--%s': want a percent from 0 to %g, "
                          "e.g. 10%%",
                          s ? s : "", flag, max_pct);
    *out = v / 100.0;
    return 0;
}

double rec_share(const struct rec_point *p)
{
    return p->reclaims ? (double)p->returns_within / (double)p->reclaims : NAN;
}

void rec_wilson(size_t k, size_t n, double *lo, double *hi)
{
    if (!n) {
        *lo = *hi = NAN;
        return;
    }
    /* Wilson's score interval at 95 % (z = 1.959964): never outside [0, 1], and not empty at
       k = 0 or k = n as the normal approximation is. */
    const double z = 1.959963984540054;
    double nn = (double)n, ph = (double)k / nn, z2 = z * z;
    double den = 1 + z2 / nn;
    double mid = (ph + z2 / (2 * nn)) / den;
    double half = z / den * sqrt(ph * (1 - ph) / nn + z2 / (4 * nn * nn));
    *lo = fmax(0, mid - half);
    *hi = fmin(1, mid + half);
}

/* True when a is the better choice than b: more GPU-hours, then the gentler setting. */
static bool rec_better(const struct rec_point *a, const struct rec_point *b)
{
    if (a->gpu_seconds != b->gpu_seconds)
        return a->gpu_seconds > b->gpu_seconds;
    if (a->idle_timer != b->idle_timer)
        return a->idle_timer > b->idle_timer;
    if (a->threshold != b->threshold)
        return a->threshold < b->threshold;
    return a->notice > b->notice;
}

long rec_choose(const struct rec_point *p, size_t n, double max_share)
{
    long best = -1;
    for (size_t i = 0; i < n; i++) {
        /* A point that frees nothing has no share to judge and nothing to recommend. */
        if (!(p[i].gpu_seconds > 0) || !p[i].reclaims)
            continue;
        /* The target is compared on counts, not a rounded share: k/n <= s as k <= s * n
           (with a hair of slack for 0.1 * 10 landing on 0.9999...). */
        if ((double)p[i].returns_within > max_share * (double)p[i].reclaims + 1e-9)
            continue;
        if (best < 0 || rec_better(&p[i], &p[best]))
            best = (long)i;
    }
    return best;
}

long rec_most_eager(const struct rec_point *p, size_t n)
{
    long best = -1;
    for (size_t i = 0; i < n; i++) {
        const struct rec_point *b = best < 0 ? NULL : &p[best];
        if (!b || p[i].threshold > b->threshold ||
            (p[i].threshold == b->threshold &&
             (p[i].idle_timer < b->idle_timer ||
              (p[i].idle_timer == b->idle_timer && p[i].notice < b->notice))))
            best = (long)i;
    }
    return best;
}

enum rec_reason rec_enough(double data_seconds, size_t eager_reclaims, double min_seconds,
                           size_t min_spells)
{
    if (!(data_seconds >= min_seconds))
        return REC_SHORT_HISTORY;
    if (eager_reclaims < min_spells)
        return REC_FEW_IDLE_SPELLS;
    return REC_CHOSEN;
}

void rec_frontier(const struct rec_point *p, size_t n, bool *on)
{
    for (size_t i = 0; i < n; i++) {
        on[i] = p[i].gpu_seconds > 0;
        for (size_t j = 0; on[i] && j < n; j++) {
            if (j == i)
                continue;
            bool ge =
                p[j].gpu_seconds >= p[i].gpu_seconds && p[j].returns_within <= p[i].returns_within;
            bool strict =
                p[j].gpu_seconds > p[i].gpu_seconds || p[j].returns_within < p[i].returns_within;
            /* the same figures: the gentler setting stands for both (rec_better's order) */
            if (ge && (strict || rec_better(&p[j], &p[i])))
                on[i] = false;
        }
    }
}
