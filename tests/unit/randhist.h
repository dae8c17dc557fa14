/*
 * Random raw histories for the differential unit tests (test_proof, test_btdue, test_recfast):
 * one xorshift64 generator, the staleness marker, a growing array of samples and a generator
 * of one series' samples (busy and idle stretches scraped every 15 or 30 s with jitter, NaN
 * and +-Inf, bursts, silences around the tolerated gap, staleness markers, young and ending
 * series). The tests shared copies of these; one copy keeps them from drifting apart.
 *
 * Each test seeds rh_state itself and passes its own struct rh_params, so that each keeps
 * its own random sequence (and so its own figures): the generator draws in a fixed order and
 * the parameters only move the bounds of what is drawn.
 */
#ifndef GPURECLAIM_RANDHIST_H
#define GPURECLAIM_RANDHIST_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "series.h"
#include "util.h"

/* The generator's state; the test seeds it (not 0, a fixed point of xorshift). */
static uint64_t rh_state;

/* A number in [0, n), 0 for n = 0 (xorshift64, Marsaglia 2003). */
static inline uint32_t rh_rng(uint32_t n)
{
    if (!rh_state)
        abort(); /* an unseeded test would draw 0 forever */
    rh_state ^= rh_state << 13;
    rh_state ^= rh_state >> 7;
    rh_state ^= rh_state << 17;
    return n ? (uint32_t)(rh_state % n) : 0;
}

/* The staleness marker, the NaN Prometheus writes when a series ends (series.h). */
static inline double rh_stale_nan(void)
{
    uint64_t bits = SERIES_STALE_NAN_BITS;
    double v;
    memcpy(&v, &bits, sizeof(v));
    return v;
}

/* One series' samples in time order; zeroed is empty, the owner frees t and v. */
struct rh_series {
    int64_t *t;
    double *v;
    size_t n, cap;
};

static inline void rh_push(struct rh_series *s, int64_t t, double v)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->t = xrealloc(s->t, s->cap * sizeof(*s->t));
        s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
    }
    s->t[s->n] = t;
    s->v[s->n++] = v;
}

/* The bounds rh_gen draws within; "1 in N" is of series, "per mille" of samples or steps. */
struct rh_params {
    uint32_t young;    /* 1 in young series starts in the second half of the range */
    uint32_t ending;   /* 1 in ending series stops in the last third of the range */
    uint32_t odd;      /* in 1 series of 3, 1 + rng(odd) per mille of NaN and +-Inf */
    uint32_t stretch;  /* busy and idle stretches of 3 to 2 + stretch minutes */
    unsigned bursts;   /* per mille of samples at 0.8 */
    unsigned gaps;     /* per mille of steps of the tolerated gap, +0, +1 or -1 ms */
    unsigned silences; /* per mille of steps that are silences of up to 30 minutes */
    unsigned markers;  /* per mille of steps that end in a staleness marker */
};

/*
 * A random history over [from, to] ms, tolerated gap `gap` ms, appended to s: busy (0.10 to
 * 0.89) or idle (0 to 0.11) stretches, scraped every 15 s (30 s in 1 series of 4) +-2 s.
 */
static inline void rh_gen(struct rh_series *s, const struct rh_params *p, int64_t from, int64_t to,
                          int64_t gap)
{
    int64_t every = rh_rng(4) == 0 ? 30000 : 15000;
    int64_t t = from + (int64_t)rh_rng(30000);
    if (rh_rng(p->young) == 0)
        t = to - (int64_t)rh_rng((uint32_t)((to - from) / 2)); /* young */
    int64_t end = rh_rng(p->ending) == 0 ? to - (int64_t)rh_rng((uint32_t)((to - from) / 3)) : to;
    int64_t until = t;
    double level = 0;
    unsigned odd = rh_rng(3) ? 0 : 1 + rh_rng(p->odd);
    while (t <= end) {
        if (t >= until) {
            bool busy = rh_rng(10) < 4;
            level = busy ? (double)(10 + rh_rng(80)) / 100.0 : (double)rh_rng(12) / 100.0;
            until = t + 60000 * (int64_t)(3 + rh_rng(p->stretch));
        }
        double v = level;
        unsigned k = rh_rng(1000);
        if (k < odd)
            v = k % 3 == 0 ? NAN : k % 3 == 1 ? INFINITY : -INFINITY;
        else if (k < odd + p->bursts)
            v = 0.8; /* a burst */
        rh_push(s, t, v);
        int64_t d = every + (int64_t)rh_rng(4000) - 2000;
        k = rh_rng(1000);
        if (k < p->gaps + p->silences) {
            static const int64_t f[] = {0, 1, -1};
            d = k < p->gaps ? gap + f[rh_rng(3)] : (int64_t)rh_rng(1800000);
        } else if (k < p->gaps + p->silences + p->markers) {
            int64_t m = t + 1 + (int64_t)rh_rng(10000);
            rh_push(s, m, rh_stale_nan());
            d = m - t + 1 + (int64_t)rh_rng(240000);
        }
        t += d < 1 ? 1 : d;
    }
}

#endif
