/*
 * The backtest's event-driven decide() (issue 31): per workload, the record of its last
 * judgement and what that judgement read, so that a cycle judges only the workloads whose
 * decision can have changed and carries the others' records unchanged.
 *
 * A backtest of a week at a cycle a minute asks decide() 10,080 times about every workload,
 * and most of those answers are foregone: a workload with a sample at or above its threshold
 * stays `active` until its idle timer after that sample, whatever low samples follow. The
 * decision of a workload is a function of its series' proofs (proof.h), its allocation and
 * priority series, its labels (scope, overrides, exemptions) and the rule's global inputs
 * (errors, active windows, pending demand, the caps). This module keeps, per workload, the
 * inputs its last record was made from and, from the proof's fold, until when that record
 * holds (btdue_active_until: the last busy sample plus the idle timer, as long as no
 * non-finite sample comes into the window). A cycle judges again, with the real decide(),
 * every workload whose inputs differ, whose record is not provably unchanged, or that is new;
 * it carries the rest.
 *
 * The principle (a shortcut may only keep, never skip a judgement that could change a
 * decision) is kept by carrying only `active` records, and only while their proof shows a
 * sample at or above the threshold in the window and no non-finite sample near it. Every
 * other record (idle, gap, stale, too young, not a number, the policy's and the caps'
 * verdicts) is judged every cycle; so are rules whose activity is not read as proofs
 * (expressions, the PromQL plan) and rules that could not be read. An `active` record is
 * untouched by the policy (pressure ranks and covers idle candidates only; the caps count
 * reclaims), by the active windows (outside_window replaces only `idle`) and by pending
 * demand, so judging the due workloads alone with decide() gives each of them the record
 * decide() of all would give it.
 *
 * A carried record keeps the detail and window statistics of its judgement (display only:
 * the engine reads its decision, reason, idle start, allocation, resource and priority,
 * which are exact); its window bounds are moved to the cycle. `backtest --decisions` writes
 * decide() of every workload at every cycle, as before.
 */
#ifndef GPURECLAIM_BTDUE_H
#define GPURECLAIM_BTDUE_H

#include <stddef.h>
#include <stdint.h>

#include "decide.h"
#include "proof.h"
#include "rules.h"

struct btdue;

/* Counters of the workload-cycles judged and carried (for --stats and the bench). */
struct btdue_stats {
    unsigned long judged, carried;
};

/* A cache for the rules of `rs` (which must outlive it). */
struct btdue *btdue_new(const struct ruleset *rs);
void btdue_free(struct btdue *b);

/*
 * The decisions of decide(data, ndata, now) (cycles in ascending time): the same records,
 * per rule first those judged at this cycle in decide()'s order, then those carried. The
 * result is the cache's, valid until the next call; do not free it.
 */
const struct decisions *btdue_decide(struct btdue *b, const struct rule_data *data, size_t ndata,
                                     double now);

void btdue_stats(const struct btdue *b, struct btdue_stats *out);

/* Per record of the last btdue_decide, its workload's slot: a number that stays the
   workload's from cycle to cycle (a position for btdue_memo). */
const size_t *btdue_slots(const struct btdue *b);

/*
 * The due time of an `active` verdict: the last time (ms, at least now_ms) up to which
 * proof_judge(p, pp, T, idle_ms, threshold) says REASON_ACTIVE for every T in [now_ms, that
 * time] if no further sample is folded, or PROOF_NONE when the fold cannot show that at
 * now_ms. Shown when the latest sample at or above the threshold is within min(idle timer,
 * lookback) before now and no non-finite sample lies within that and a step more (the
 * window's earliest step), so that proof_judge's first test of activity holds whatever grid
 * phase `now` has. A sample folded later can only make a non-finite one newer (then ask
 * again) or a high one later (the time grows).
 */
int64_t btdue_active_until(const struct proof *p, const struct proof_params *pp, int64_t now_ms,
                           int64_t idle_ms, double threshold);

/*
 * A memo of which workload each series of one list (a rule's proofs, allocation series,
 * records, ...) belongs to, by position: the replay hands the same series in the same order
 * from cycle to cycle, so a comparison of labels with those noted at that position replaces
 * building and looking up the workload's key (the backtest's hiding of stopped workloads and
 * its per-decision bookkeeping did that for every series of every cycle). Zero-initialise.
 */
struct btdue_memo {
    struct btdue_memo_entry *e;
    size_t n;
    /* By labels.id, for the lists whose series move from cycle to cycle (the points of the
       workloads away, a list filtered anew each cycle): id -> value, open addressing. */
    uint64_t *hk;
    size_t *hv;
    size_t hn, hcap;
};

/*
 * The value noted at position j when it was noted for labels equal to `l`, else the value
 * noted anywhere for labels with l's id (labels.id), else 0. A hit at j by content takes l's
 * id, so that the next look-up of that series is one comparison of numbers.
 */
size_t btdue_memo_get(struct btdue_memo *m, size_t j, const struct labels *l);
/* Note value v (not 0) for labels `l` (copied) at position j. */
void btdue_memo_set(struct btdue_memo *m, size_t j, const struct labels *l, size_t v);
void btdue_memo_free(struct btdue_memo *m);

#endif
