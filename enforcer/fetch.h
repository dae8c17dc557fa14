/*
 * The per-cycle data fetch: for every rule, the Prometheus queries decide() needs, run
 * through promq and stored in one `struct rule_data` per rule.
 *
 * Activity is a range query of `max_over_time` over each step, so a burst between two
 * evaluation points is never missed and a gap in the data shows as missing points rather
 * than being bridged by the 5-minute lookback (docs/promql-plan.md §5.4, "Form B"). Identical
 * (query, range) pairs are sent once per cycle, so the number of requests depends only on
 * the rules, never on how many workloads match them. An error affects only the rule whose
 * query failed.
 */
#ifndef GPURECLAIM_FETCH_H
#define GPURECLAIM_FETCH_H

#include <stdbool.h>
#include <stddef.h>

#include "decide.h"
#include "promq.h"
#include "raw.h"
#include "rules.h"

/* Resolution of the activity subquery: min(step, FETCH_MAX_RESOLUTION) seconds. */
#define FETCH_MAX_RESOLUTION 15.0
/* The coverage resolution is at most toleratedGap / FETCH_GAP_DIVISOR (see fetch_resolution). */
#define FETCH_GAP_DIVISOR 4.0
/* Prometheus refuses a range of more than 11,000 steps (web/api/v1/api.go). */
#define FETCH_MAX_STEPS 11000.0

/*
 * Write the activity expression of rule `r` into buf:
 *   `(sum_over_time(R) * 0 != 0) or max_over_time(R)` with R = `EXPR[STEP]` when EXPR is a
 *   plain series selector (a metric name with optional {matchers}, or only {matchers}), else
 *   R = `(EXPR)[STEP:RES]` with RES = min(step, 15s): per step the largest sample, or NaN
 *   when the step holds a NaN or +-Inf sample (which max_over_time alone skips). Durations
 *   are whole seconds ("60s") or milliseconds ("1500ms").
 * Returns 0, or -1 when the expression does not fit in `len` bytes.
 */
int fetch_activity_expr(const struct rule *r, char *buf, size_t len);

/*
 * True for `name`, `name{...}` and `{...}` (with surrounding blanks), the forms a range
 * selector `[STEP]` can follow. Anything else (functions, operators, offset, @) is not: such
 * an activity is an expression, read by the PromQL plan.
 */
bool fetch_is_selector(const char *e);

/*
 * Where one rule's raw samples go at a cycle: a proof per series (proof.h; plan and run, a few
 * hundred bytes per series whatever the idle timer; `proofs`, promq_cfg.proofs), or the step
 * grids (explain, whose sparkline draws them, and the default). decide() says the same of both
 * (tests/unit/test_proof.c). fetch_fold_begin for rule `r` on grid `g` (fetch_grid);
 * fetch_fold_series one series (a rawread_series_fn, not consumed); fetch_fold_end hands the
 * result into d (activity and coverage, or has_proofs and proofs); fetch_fold_discard frees
 * what was built, at any time. fetch_raw folds each cycle's read through it, and replay.c
 * each cycle's window of the samples it holds, so both judge alike.
 */
struct fetch_fold {
    bool grids;
    struct raw_grids g;
    struct raw_proofs p;
};
/* The idle timers a workload of rule r can have (its own, then its overrides' distinct ones,
   at most RAW_MAX_IDLE): those whose window statistics a proof fold computes. */
size_t fetch_idle_timers(const struct rule *r, double idle[RAW_MAX_IDLE]);
int fetch_fold_begin(struct fetch_fold *f, const struct rule *r, const struct raw_grid *g,
                     bool proofs, char *err, size_t errlen);
int fetch_fold_series(void *arg, const struct series *s, char *err, size_t errlen);
int fetch_fold_end(struct fetch_fold *f, struct rule_data *d, char *err, size_t errlen);
void fetch_fold_discard(struct fetch_fold *f);

/*
 * The step grid of rule `r` at `now` on the raw path: [now - decide_lookback(r), now] at the
 * rule's step (60 s when unset), its tolerated gap (2 x step when unset); raw_read_start() of
 * it is the first sample time the rule needs (raw.h).
 */
struct raw_grid fetch_grid(const struct rule *r, double now);

/* R of the coverage query: min(step, 15 s, toleratedGap / 4), whole milliseconds. */
double fetch_resolution(const struct rule *r);

/*
 * Write the raw-coverage expression of a selector rule into buf, with G = toleratedGap and
 * R = fetch_resolution():
 *   `count_over_time(present_over_time(SEL[G-R])[STEP:R])`
 * the number of sub-points (every R) of each step with a raw sample within G - R before them
 * (see fetch.c for why this never under-states a gap). Returns 0, 1 when the activity is an
 * expression (its raw sample times are not visible in PromQL: inner selectors look back 5
 * minutes), or -1 when it does not fit in `len` bytes.
 */
int fetch_coverage_expr(const struct rule *r, char *buf, size_t len);

/* `count_over_time(vector(1)[STEP:R])`: the number of sub-points of each step. */
int fetch_subpoints_expr(const struct rule *r, char *buf, size_t len);

/*
 * Divide each coverage point by the number of sub-points of its step (`subpoints`, one series
 * on the same grid): 1 when every sub-point was covered. A step without a count becomes 0.
 */
void fetch_coverage_ratio(struct matrix *cov, const struct matrix *subpoints);

/*
 * Fetch data for every rule of `rs` at time `now` (Unix seconds) into out[0 .. rs->n - 1],
 * which is overwritten (free it with fetch_free):
 *   activity   for a selector on the raw path (rawread_choose): the raw samples over
 *              [now - decide_lookback() - step - toleratedGap, now] by remote read or
 *              VictoriaMetrics export (one read per distinct selector, over the widest range
 *              its rules need), turned into activity and exact coverage by raw_to_grid()
 *              (sets raw_coverage and coverage_tail), or with promq_cfg.proofs folded into
 *              proofs (sets has_proofs; activity and coverage stay empty); otherwise the range
 * query of fetch_activity_expr() over [now - decide_lookback(), now], step rule->step; coverage
 * PromQL path only: range queries of fetch_coverage_expr() and fetch_subpoints_expr() over the same
 * range, for selectors, divided into rule_data.coverage (sets raw_coverage); not sent when the
 * activity failed; allocation instant query of q_allocation at now; pending    instant query of
 * q_pending at now, only for DuringGPUPressure rules; priority   instant query of q_priority at
 * now, only when set. Disabled rules are not queried (rule set, matrices empty). A failed activity,
 * allocation or priority query sets `error` and `errmsg` on that rule; a failed pending query sets
 * `pending_error` and, when errmsg is still empty, puts its message there; logging it is the
 * caller's (once, not every cycle). Returns 0 when every query succeeded, -1 when any failed.
 */
int fetch_rules(struct promq *q, const struct ruleset *rs, double now, struct rule_data *out);

/* Free the matrices and proofs of d[0 .. n - 1] (not the array itself). */
void fetch_free(struct rule_data *d, size_t n);

/*
 * One evaluation: the sequence `run` makes every cycle (daemon.c, run_cycle) and `plan` and
 * `explain` make once (cmd_plan.c), so that they show exactly what the loop acts on: fetch every
 * rule of `rs` at `now` into *data (rs->n entries, allocated here; free with fetch_free and
 * free), decide into `out` (free with decisions_free), and mark every decision dry_run when
 * `dry_run` (the global --dry-run). *fetch_seconds and *decide_seconds (may be NULL) get the
 * time each step took. Returns fetch_rules' result.
 */
int fetch_evaluate(struct promq *q, const struct ruleset *rs, double now, bool dry_run,
                   struct rule_data **data, struct decisions *out, double *fetch_seconds,
                   double *decide_seconds);

#endif
