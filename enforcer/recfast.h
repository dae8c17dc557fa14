/*
 * `recommend`'s fast pass (issue 32, "fast enough to sweep"): the figures of every grid point
 * of one group (threshold x idle timer x notice period) from one fold of each series, with
 * the backtest's own engine behind each point, judging only what can have changed.
 *
 * The engine path (cmd_recommend.c, backtest.h) gives each grid point its own rule in the
 * replay: every raw sample is folded once per point and every workload is judged, hidden and
 * looked up per point at every cycle, so a 5 x 8 grid costs some 40 backtests. Here:
 *   - one fold per series serves the whole grid: the proof (proof.h) is folded once with
 *     every threshold of the grid and the young silences of its shortest window, and judged
 *     with each point's own params (lookback, idle timer, threshold). What a fold holds per
 *     threshold does not depend on the other thresholds, and the young silences of a shorter
 *     window are a superset, newest first, of a longer one's, so the verdicts are those of
 *     the point's own fold except where proof_young_known says the kept silences cannot tell
 *     (the point is then marked inexact, and the caller runs it through the engine);
 *   - per point, a workload is judged by decide() only when its record can have changed
 *     while its inputs (the series it was made from, their presence, a new non-finite
 *     sample, its allocation and priority) are those it was made from: an `active` record
 *     stands while btdue_active_until holds (btdue.h's rule); any other keep, of a workload
 *     with no notice open, while proof_idle_not_before says no series can be idle yet (the
 *     engine reads no such keep, and recommend's figures do not count keeps by reason:
 *     recfast.c, rf_stand); a workload decide() gave no record stays without one. The
 *     workloads a point holds reclaimed are left out of its data, as bt_sim_hide leaves them
 *     out. Those that can have changed are found without a look at the others (recfast.c,
 *     rf_gather): the inputs that changed (once a cycle for every point), each point's
 *     records that cannot stand on their own, its standing records by due time, its
 *     workloads back;
 *   - the returns and ends of allocation are found once per cycle for every point, from one
 *     read of the points of the workloads away in any point, and each point observes only
 *     the workloads away they can have ended (bt_sim_observe_some; recfast.c, rf_observed).
 * Each point's decisions go to its own bt_sim: the notices, notice periods, spares, the
 * hourly cap (--enforce.max-actions-per-hour) and maxTerminationsPerCycle are the engine's,
 * so the figures equal the backtest's of that point's rule (tests/unit/test_recfast.c
 * compares them on random histories).
 *
 * Not modelled, so left to the engine (recfast_unfit says why): the DuringGPUPressure policy
 * (each point's pending demand less what it freed couples its workloads through the fit
 * check), overrides (their own thresholds and timers), rules whose activity is not carried as
 * proofs (expressions, the PromQL plan), and grids of more thresholds or idle timers than one
 * fold holds (PROOF_MAX_THRESHOLDS, RAW_MAX_IDLE).
 */
#ifndef GPURECLAIM_RECFAST_H
#define GPURECLAIM_RECFAST_H

#include <stdbool.h>
#include <stddef.h>

#include "backtest.h"
#include "replay.h"
#include "rules.h"

struct recfast;

/* Why rule r cannot go through the fast pass with a grid of nth thresholds and nit idle
   timers (a sentence for the log), or NULL when it can. */
const char *recfast_unfit(const struct rule *r, size_t nth, size_t nit);

/*
 * The one fold that serves the points vs[0 .. nv) (variants of one rule: the same queries,
 * step and gap): every threshold, the longest lookback, the young silences of the shortest
 * window, the window statistics of every idle timer. 0, or -1 when they cannot share one.
 * The rule whose data the replay folds this way must read as far back as the longest
 * window: use the variant with the longest idle timer (recfast_probe).
 */
int recfast_fold(const struct rule *vs, size_t nv, struct replay_fold *out);

/* Index among vs[0 .. nv) of the variant with the longest idle timer. */
size_t recfast_probe(const struct rule *vs, size_t nv);

/*
 * The fast pass of the points vs[0 .. nv) (the caller's, which must outlive it; bt_sim_new
 * changes each as it changes a backtest's rules) over cfg's range, with fold `fold`. NULL
 * with a message.
 */
struct recfast *recfast_new(struct rule *vs, size_t nv, const struct bt_cfg *cfg,
                            const struct replay_fold *fold, char *err, size_t errlen);

/*
 * One cycle at t (ascending): rd is the data of the probe, rule `rule` of the source `src`
 * (folded with recfast_fold's params, has_proofs set, read without error), src->points its
 * points of the cycle.
 */
void recfast_cycle(struct recfast *f, double t, const struct rule_data *rd, struct bt_source *src,
                   size_t rule);

/* Close what is still open at cfg->to (bt_sim_finish of each point). */
void recfast_finish(struct recfast *f);

/* Point v's result (valid after recfast_finish, until recfast_free). */
const struct bt_result *recfast_result(const struct recfast *f, size_t v);

/* False when a verdict of point v may differ from its own fold's (proof_young_known): its
   figures must come from the engine. */
bool recfast_exact(const struct recfast *f, size_t v);

struct recfast_stats {
    unsigned long judged;      /* workload-cycles judged by decide(), all points */
    unsigned long carried;     /* workload-cycles carried (an `active` record or none) */
    unsigned long looked;      /* workload-cycles looked at to find those judged: the others
                                  were carried without a look (recfast.c, rf_gather) */
    unsigned long idle_cycles; /* point-cycles with nothing for the engine to step */
    unsigned long kept;        /* keeps other than `active` set to stand until a due time
                                  (recfast.c, rf_stand) */
};
void recfast_stats(const struct recfast *f, struct recfast_stats *out);

void recfast_free(struct recfast *f);

#endif
