/*
 * `recommend`'s pure part: the grid's flags parsed, and the choice per group among the
 * grid points the backtest engine scored (cmd_recommend.c runs it, one simulation per
 * point, through the fast pass of recfast.h where it applies; nothing here simulates).
 * The choice is the point that frees the most GPU-hours with a share of returns at most
 * the target; ties go to the longer idle timer, then the lower threshold, then the longer
 * notice period (the gentler setting). With the share, its
 * 95 % Wilson score interval (Wilson 1927; the interval krr and VPA users lack: a share of
 * 1 in 3 is not 33 %). A group with too little history recommends nothing rather than
 * guess (krr's "undefined" below its minimum of points). No I/O: unit tested.
 */
#ifndef GPURECLAIM_RECOMMEND_H
#define GPURECLAIM_RECOMMEND_H

#include <stdbool.h>
#include <stddef.h>

/* One grid point and what the engine scored for it over the range it was chosen on. */
struct rec_point {
    double threshold;  /* percent */
    double idle_timer; /* seconds */
    double notice;     /* seconds */
    size_t reclaims, returns_within;
    double gpu_seconds;
    double median_return; /* of the returns within; NaN when none */
};

/* Why a group has no recommendation. */
enum rec_reason {
    REC_CHOSEN = 0,
    REC_NONE_INSIDE,    /* no point frees GPU-hours within the target */
    REC_SHORT_HISTORY,  /* less data than the minimum */
    REC_FEW_IDLE_SPELLS /* the most eager point reclaims fewer than the minimum */
};

/*
 * A comma-separated list: thresholds (`durations` false: percent numbers, 0 < x <= 100, a
 * trailing '%' allowed) or durations (Prometheus syntax; notice periods may be 0s, idle
 * timers may not). Sorted ascending, duplicates dropped. 0, or -1 with a message naming
 * `flag` and the bad item.
 */
int rec_parse_list(const char *s, bool durations, bool zero_ok, const char *flag, double **out,
                   size_t *n, char *err, size_t errlen);

/*
 * A share in percent, "10%" or "10" (both 10 %), within [0, max_pct]: 0 with the fraction
 * (0.1) in *out, or -1 with a message naming `flag`.
 */
int rec_parse_share(const char *s, double max_pct, const char *flag, double *out, char *err,
                    size_t errlen);

/* The share of returns of a point: returns_within / reclaims; NaN without reclaims. */
double rec_share(const struct rec_point *p);

/* The 95 % Wilson score interval of k successes in n trials into lo, hi; NaN when n is 0. */
void rec_wilson(size_t k, size_t n, double *lo, double *hi);

/*
 * Index of the chosen point among p[0 .. n), or -1 when none frees GPU-hours with a share at
 * most max_share (REC_NONE_INSIDE).
 */
long rec_choose(const struct rec_point *p, size_t n, double max_share);

/*
 * The point whose reclaims measure how many idle spells the history holds: the most eager
 * one (highest threshold, shortest idle timer, shortest notice). -1 when n is 0.
 */
long rec_most_eager(const struct rec_point *p, size_t n);

/*
 * Enough history to choose: at least min_seconds of data in the range chosen on and at least
 * min_spells reclaims by the most eager point. REC_CHOSEN when enough, else the reason.
 */
enum rec_reason rec_enough(double data_seconds, size_t eager_reclaims, double min_seconds,
                           size_t min_spells);

/*
 * The frontier: on[i] true for each point that no other beats on both GPU-hours freed (more
 * or equal) and returns within (fewer or equal), one of them strictly; of points with the
 * same figures, only the gentler (as rec_choose breaks ties). Points freeing nothing are not
 * on it.
 */
void rec_frontier(const struct rec_point *p, size_t n, bool *on);

#endif
