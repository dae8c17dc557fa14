/*
 * Raw samples to the step grid decide() reads: the exact counterpart of the PromQL plan for a
 * rule whose activity is a plain series selector read as raw samples (remote read or
 * VictoriaMetrics export, docs/promql-plan.md §5.7).
 *
 * From the raw samples of each series it computes, per grid step, what the PromQL path
 * asks Prometheus for: the largest sample of the step (NaN when the step holds a NaN or
 * +-Inf sample), and whether the raw samples cover the step. Coverage here is exact, on the
 * sample times in milliseconds, with no sub-point resolution: a step is covered when every
 * instant of it has a sample no more than the tolerated gap before it and no staleness
 * marker between that sample and the instant. A staleness marker (the NaN with bits
 * 0x7ff0000000000002 that Prometheus writes when a series disappears) is not a value and
 * ends the series at its time, as it does in PromQL.
 */
#ifndef GPURECLAIM_RAW_H
#define GPURECLAIM_RAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proof.h"
#include "series.h"

/* What the grid computation needs of a rule: its range, step and tolerated gap (seconds). */
struct raw_grid {
    double start, end; /* first and last grid point; end - start whole steps */
    double step;
    double gap;
};

/*
 * The first sample time the grid needs: start - step - gap (a step's samples reach one step
 * back, and its coverage a tolerated gap further).
 */
double raw_read_start(const struct raw_grid *g);

/*
 * Turn the raw samples in `raw` (one series per stored series, points strictly ascending,
 * values bit-exact) into `activity` and `coverage` on the grid of `g`, the shapes fetch.c
 * produces on the PromQL path (fetch.h, rule_data):
 *   activity  per grid point t, the largest value of the samples in [t - step, t] (closed,
 *             as in Prometheus 2.x's range selectors), NaN when one of them is NaN or +-Inf;
 *             no point when the step has no sample; staleness markers are skipped;
 *   coverage  one series per activity series (same labels), listing only the grid points t
 *             whose step is not covered, with the covered tail as value: the share of the
 *             step, counted back from t, whose instants all are (0 when t itself is not),
 *             always below 1. A step is covered when every instant u of [t - step, t] has a
 *             sample in [u - gap, u] with no staleness marker after it up to u. A step not
 *             listed is covered (with 100,000 series, listing every step cost some 50 MB).
 * Series labels lose `__name__`, as function results do in PromQL; two series that then
 * have the same labels fail. Series without any sample in the grid's reach are dropped.
 * `raw` is consumed (its series are freed as they are converted, so a cycle holds the raw
 * samples and the grid of one series, not two copies). Returns 0, or -1 with a message
 * (points out of order, duplicate label sets, an invalid grid); then both outputs are empty.
 */
int raw_to_grid(struct matrix *raw, const struct raw_grid *g, struct matrix *activity,
                struct matrix *coverage, char *err, size_t errlen);

/*
 * The same conversion one series at a time, for a reader that hands each series over as soon
 * as it is complete (remote read, remoteread.h rr_stream_on_series): memory then holds the raw
 * samples of one series plus the grids. raw_grids_begin checks the grid; raw_grids_add
 * converts one series (not consumed: the caller frees it); raw_grids_end checks that no two
 * series have the same labels without `__name__` and hands the grids over. Any failure
 * (-1 with a message) frees what was built, and every later call fails: no partial grid is
 * ever handed over. raw_grids_discard frees what was built, for an answer that failed after
 * some series were added; it may be called at any time, also after raw_grids_end.
 */
struct raw_grids {
    int64_t start, step, gap; /* ms */
    size_t npts, cap;
    bool failed;
    struct matrix activity, coverage;
};
int raw_grids_begin(struct raw_grids *b, const struct raw_grid *g, char *err, size_t errlen);
int raw_grids_add(struct raw_grids *b, const struct series *s, char *err, size_t errlen);
int raw_grids_end(struct raw_grids *b, struct matrix *activity, struct matrix *coverage, char *err,
                  size_t errlen);
void raw_grids_discard(struct raw_grids *b);

/*
 * Where the raw samples of one series (points ascending, values bit-exact) cover the instant
 * `at` with tolerated gap `gap` (seconds), with the coverage of raw_to_grid: an instant u is
 * covered when a sample lies in [u - gap, u] with no staleness marker after it up to u.
 * Samples after `at` are ignored. Sets:
 *   covered  whether `at` is;
 *   from     when covered, the earliest instant from which every instant up to `at` is (the
 *            first sample of that run);
 *   before   when covered, the last real sample before the hole that ends at `from`; NaN
 *            when the series begins at `from`;
 *   last     the last real sample at or before `at` (NaN when none), and
 *   end      the instant its cover ends (its time + gap, or an earlier staleness marker).
 * Returns 0, or -1 with a message when the samples are out of order.
 */
struct raw_cover {
    bool covered;
    double from, before, last, end;
};
int raw_cover_at(const struct series *s, double at, double gap, struct raw_cover *out, char *err,
                 size_t errlen);

/*
 * The same raw samples folded into one proof per series (proof.h) instead of grids, for
 * decide() to judge (rule_data.has_proofs): memory then holds a few hundred bytes per series
 * whatever the idle timer. raw_proofs_begin takes the rule's proof parameters, the evaluation
 * time (a series without a sample on its grid is dropped, as raw_grids_add drops it) and the
 * idle timers (seconds, at most RAW_MAX_IDLE; none when nidle is 0) whose window statistics
 * each series gets (rule_proof.win: display only, decide.h); raw_proofs_add folds one series
 * (not consumed); raw_proofs_end checks that no two series have the same labels without
 * `__name__` and hands the proofs over (free them with raw_proofs_free). Failures and
 * raw_proofs_discard as for raw_grids.
 */
#define RAW_MAX_IDLE 8
struct raw_proofs {
    struct proof_params pp;
    int64_t now, idle[RAW_MAX_IDLE]; /* ms */
    size_t nidle, n, cap;
    bool failed;
    struct rule_proof *v;
};
int raw_proofs_begin(struct raw_proofs *b, const struct proof_params *pp, double now,
                     const double *idle, size_t nidle, char *err, size_t errlen);
int raw_proofs_add(struct raw_proofs *b, const struct series *s, char *err, size_t errlen);
int raw_proofs_end(struct raw_proofs *b, struct rule_proof **v, size_t *n, char *err,
                   size_t errlen);
void raw_proofs_discard(struct raw_proofs *b);
void raw_proofs_free(struct rule_proof *v, size_t n);

/*
 * The window statistics raw_proofs gives a series (rule_proof.win) at `now` for idle timer
 * `idle` (ms), from its samples t/v (ascending, ms): decide.c's window_stats of its points on
 * the grid of now. Earlier samples than the grid's read start change nothing, so a caller
 * holding more of the series (the backtest's replay) gets the same statistics.
 */
void raw_window_stats(const int64_t *t, const double *v, size_t n, const struct proof_params *pp,
                      int64_t now, int64_t idle, struct rule_winstats *w);

/*
 * The points raw_grids gives a series on the grid of `now` (params pp: step and lookback) at
 * the grid times in (a, b] (ms), from its samples t/v (ascending, ms): the largest sample of
 * each step, NaN with a non-finite one, none for a step without a sample. At most `max` into
 * out; returns how many.
 */
size_t raw_points_between(const int64_t *t, const double *v, size_t n,
                          const struct proof_params *pp, int64_t now, int64_t a, int64_t b,
                          struct point *out, size_t max);

/* `src` without __name__ into *dst (a copy; the labels a proof or grid series carries). */
void raw_drop_name(struct labels *dst, const struct labels *src);
#endif
