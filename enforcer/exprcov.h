/*
 * The raw-sample proof for a rule whose `activity` is a PromQL expression rather than a
 * series selector (docs/decision-semantics.md §3.1).
 *
 * PromQL evaluates an expression's inner selectors with a 5-minute lookback, so its result
 * bridges a hole in the raw samples and goes on for 5 minutes after a series stopped: the
 * result alone cannot prove that a workload's data was there. This module lists the selectors
 * of the expression (promsel.h), takes the raw samples fetch.c reads for each over the window
 * (through the same raw reads as selector rules), and proves per workload what a selector
 * rule proves per series: every raw series that feeds the workload covers
 * [window start - reach, now] with samples never further apart than the tolerated gap and
 * still reports at now (raw.c's exact coverage). It also keeps a workload when a part of it
 * (a value of a label the expression groups or joins on, such as a device) is in one selector
 * but missing from another, or from the expression's result: a join that drops a device
 * would otherwise hide that device's activity.
 *
 * Which raw series feed which workload: those whose identity labels equal the workload's; a
 * series without some identity label (a node-level metric) feeds every workload that agrees
 * on the ones it has; when the expression writes an identity label (label_replace,
 * group_left), a series' own labels prove nothing and every series feeds every workload.
 */
#ifndef GPURECLAIM_EXPRCOV_H
#define GPURECLAIM_EXPRCOV_H

#include <stddef.h>

#include "reason.h"
#include "rules.h"
#include "series.h"

struct exprcov;

/*
 * The selectors of rule `r`'s activity expression, ready for their raw samples, over the
 * rule's lookback (decide_lookback(r): passed in, so that this module, which decide() calls,
 * does not call back into it). NULL with a message when they cannot be extracted safely
 * (promsel_extract); the rule then keeps. Keeps r's identity array (which must outlive it),
 * not r.
 */
struct exprcov *exprcov_new(const struct rule *r, double lookback, char *err, size_t errlen);
void exprcov_free(struct exprcov *ec);

/* Number of distinct selectors, and the text of selector i (what the raw read sends). */
size_t exprcov_count(const struct exprcov *ec);
const char *exprcov_selector(const struct exprcov *ec, size_t i);

/*
 * The first sample time selector i needs at `now`: now - the lookback - its reach - the
 * tolerated gap (the coverage of the earliest window start any override may ask for).
 */
double exprcov_read_start(const struct exprcov *ec, size_t i, double now);

/*
 * Take the raw samples of selector i read up to `now` (consumed, freed here): each series'
 * coverage at now is kept, the samples are not. -1 with a message when samples are out of
 * order (the rule's read then failed).
 */
int exprcov_add(struct exprcov *ec, size_t i, struct matrix *raw, double now, char *err,
                size_t errlen);
/* The same for one series as a raw read hands it over (rawread_series_fn; not consumed). */
int exprcov_add_series(struct exprcov *ec, size_t i, const struct series *s, double now, char *err,
                       size_t errlen);

/*
 * Index the expression's result (rule_data.activity, which must outlive `ec`) by workload,
 * after every selector was added.
 */
void exprcov_index(struct exprcov *ec, const struct matrix *activity);

/*
 * The verdict for the workload with identity `id` whose window starts at `ws`: REASON_IDLE
 * when the raw samples prove nothing against it, else the first of stale > gap > too_young
 * over its raw series, or no_data when no raw series feeds it or a part of it is missing from
 * a selector or from the result; `detail` names the selector and the series.
 */
enum reason exprcov_judge(const struct exprcov *ec, const struct labels *id, double ws,
                          char *detail, size_t dlen);

#endif
