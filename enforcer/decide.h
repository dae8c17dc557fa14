/*
 * The enforcer's decision: a pure function (rules, samples, now) -> decisions, no I/O.
 *
 * Semantics (see docs/decision-semantics.md §1): a workload is idle at `now` only if
 * every one of its activity series (one per GPU, partition or container) covers the whole
 * window [now - idleTimer, now] with raw samples never further apart than the tolerated gap,
 * and every point in the window is a number below the threshold. Each series is judged on
 * its own before any merging, so a silent device is never hidden by a busy or idle
 * neighbour. A young workload, a gap, a missing series, a NaN or a query error all mean
 * "keep". Under DuringGPUPressure, idle workloads are reclaimed
 * only to cover pending demand for the same GPU resource, longest-idle and lowest-priority
 * first, and none at all if every idle candidate together cannot cover it (fit check).
 */
#ifndef GPURECLAIM_DECIDE_H
#define GPURECLAIM_DECIDE_H

#include "proof.h"
#include "reason.h"
#include "rules.h"
#include "series.h"

struct exprcov;

enum decision { DECISION_KEEP = 0, DECISION_RECLAIM };

/*
 * Which proof a rule's activity comes from (issue 26): a read of the whole window (`plan`,
 * `explain`, a cold or periodic full read of `run`), or the state `run` carries from cycle to
 * cycle plus the samples since its last read (replay.h, replay_live_*). An incremental
 * decision may only ever keep on its own: a notice or an action on it waits for a full proof
 * of the workload (lifecycle.h, `unproven`).
 */
enum decide_proof { DECIDE_PROOF_FULL = 0, DECIDE_PROOF_INCREMENTAL };

/* Everything decide() needs for one rule, fetched by the caller (fetch.c). */
struct rule_data {
    const struct rule *rule;
    int error; /* non-zero: activity/allocation query failed, every workload keeps */
    char errmsg[256];
    double start, end;      /* range the activity was queried over */
    struct matrix activity; /* range result, step rule->step; NaN/Inf anywhere in a step
                               shows as a non-finite point (fetch.c) */
    /*
     * Raw-sample coverage, same range and step, same label sets as `activity`: 1 at a step
     * when every sub-point of the step had a raw sample within (toleratedGap - resolution)
     * before it, less or absent otherwise (fetch.h). With `raw_coverage` false (the activity is
     * an expression, whose raw sample times PromQL cannot show), gaps are judged on the step
     * grid and every step without a point inside the window is a gap.
     */
    bool raw_coverage;
    struct matrix coverage;
    /*
     * Set with raw_coverage when the coverage comes from raw samples (raw.h): each coverage
     * series lists only the steps that are not wholly covered (a step it does not list is
     * covered; an activity series without a coverage series is not), with the covered share
     * at the end of the step as value, so a step that begins before the window start is
     * judged only from the window start on, as the window asks. The PromQL coverage (a count
     * of sub-points) says nothing of where in the step its holes are.
     */
    bool coverage_tail;
    /*
     * A selector rule read as raw samples may carry its series as proofs instead of `activity`
     * and `coverage` (`has_proofs`; both matrices are then ignored): one per series, folded
     * from at least raw_read_start() of now's grid with `proof_params`. decide() judges each
     * with proof_judge on the grid of `now`, which says what the grid judge says of
     * raw_to_grid's grids of the same samples (within the bounds proof.c states). A series
     * without a sample on now's grid is ignored, as raw_to_grid drops it. The record's
     * samples, max, mean and last are display only on this path: from the series'
     * rule_winstats of the workload's idle timer when the fetch computed it (exact for a
     * workload of one series; with several, samples is the largest count and mean the mean
     * of every series' points, where the grid takes the largest value per time), else 0 and
     * NaN (backtest, which judges one fold at many times).
     */
    bool has_proofs;
    struct rule_proof *proofs;
    size_t nproofs;
    /* The proofs' labels, states and window statistics are lent (the backtest's replay keeps
       them from cycle to cycle): fetch_free frees only the array. */
    bool proofs_lent;
    struct proof_params proof_params;
    /* How the activity was read: "remote_read", "export" or "promql" ("" when not queried);
       a static string (fetch.c). */
    const char *read_path;
    /* An expression rule's proof from the raw samples of its selectors (exprcov.h), owned
       here (fetch_free); NULL for a selector rule. */
    struct exprcov *inner;
    struct matrix allocation; /* instant at end: devices held per workload, with resource label */
    int pending_error;        /* non-zero: the pending-demand query failed */
    struct matrix pending;    /* instant at end: pending devices per resource label */
    struct matrix priority;   /* instant at end; empty when the rule has no priority query */
    /* The labels of the allocation, pending and priority series are lent (the backtest's
       replay slices them from answers it holds): fetch_free frees only the points. */
    bool instants_lent;
    enum decide_proof proof; /* what the activity was read as; copied into each record */
};

struct decision_rec {
    struct labels identity; /* the rule's identity labels of the workload */
    struct labels all;      /* labels of its first activity series (in label order), plus those
                               only its allocation series has; scope, exemptions and
                               overrides match on these */
    const struct rule *rule;
    enum decision decision;
    enum reason reason;
    char detail[160];  /* human-readable why, e.g. "activity 42% at <time> >= threshold 10%" */
    double threshold;  /* effective (after overrides), percent */
    double idle_timer; /* effective, seconds */
    double idle_since; /* start of the trailing idle run; NaN when not idle at now */
    double window_start, window_end;
    size_t samples;          /* points inside the window */
    double max, mean, last;  /* ratio 0..1 over the window; NaN if no points */
    double allocated;        /* devices held (allocation series of one resource add up); NaN if
                                unknown */
    char resource[96];       /* GPU resource name from the allocation series, "" if unknown; with
                                several resources, the one with the most devices */
    double priority;         /* 0 when no priority query */
    bool dry_run;            /* rule (or global) dry run: report, do not act */
    enum decide_proof proof; /* the rule_data's: which proof made the decision */
    /* `plan`/`explain` with the Kubernetes API (act_describe): what a reclaim would act on and
       how ("annotate Notebook ml/alice kubeflow-resource-stopped"), or, in target_kept, why
       nothing would be done; both NULL when not resolved. Freed by decisions_free. */
    char *target;
    char *target_kept;
    /* Not decide()'s: what the workload's objects say beyond the data, set by `plan` and
       `explain` when they can read the Kubernetes API (the owner's keep-until, a restart),
       and printed with the decision; NULL otherwise (a pointer, not an array: 100,000 records
       of a cycle would carry 40 MB of empty notes). Freed by decisions_free. */
    char *note;
};

struct decisions {
    struct decision_rec *v;
    size_t n;
};

/*
 * Decide for every rule in `data` (one entry per rule, in rule order). Output is sorted by
 * rule order, then identity labels. Pure: same input, same output. `out` is overwritten
 * (free a previous result first). Series lacking an identity label are ignored. When several
 * reasons apply, the first of this order is reported (see decide.c): query_error,
 * rule_disabled, exempt, no_data, active, not_a_number, stale, gap, too_young,
 * outside_window, pressure_unknown, no_allocation, no_pressure / fit_check / not_needed,
 * cycle_cap.
 */
void decide(const struct rule_data *data, size_t ndata, double now, struct decisions *out);
void decisions_free(struct decisions *d);

/* The range a rule must be queried over: [now - decide_lookback(rule), now]. */
double decide_lookback(const struct rule *r);
/*
 * The proof parameters of a selector rule (proof.h): its step (60 s when unset), tolerated
 * gap (2 x step when unset, as fetch.c reads), decide_lookback, longest idle timer and every
 * threshold it can judge against. Returns 0, or -1 when the rule and its overrides have more
 * than PROOF_MAX_THRESHOLDS thresholds (such a rule is judged on grids).
 */
int decide_proof_params(const struct rule *r, struct proof_params *pp);
/* True when `now` (Unix seconds) is inside one of the rule's windows (or it has none). */
bool decide_rule_active(const struct rule *r, double now);

const char *decide_reason_name(enum reason r);
const char *decide_decision_name(enum decision d);
/* "full" or "incremental". */
const char *decide_proof_name(enum decide_proof p);

#endif
