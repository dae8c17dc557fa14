/*
 * The per-series idleness proof as a fold over raw samples: a few times per series, constant
 * in size whatever the idle timer, from which decide() judges the series at any `now` at or
 * after the last sample folded, exactly as it judges the step grid raw_to_grid() builds of the
 * same samples (raw.h; the bounds of that "exactly" are in proof.c and
 * docs/decision-semantics.md).
 *
 * Idleness is a "since" question: how long since the series was last at or above the
 * threshold, not a number, without a raw sample within the tolerated gap, or absent. So the
 * state keeps, per series, the last time at or above each threshold the rule can use (its own
 * and its overrides'), the last non-finite sample, the start and end of the covered stretch
 * the last sample belongs to, the first and last sample, the last staleness marker, and what
 * the idle-since ranking and the "too young" test need of the silences around those times.
 * `plan`, `run` and `backtest` all judge through proof_judge, so a fix to the proof is a fix
 * everywhere.
 *
 * INTERFACE CONTRACT (shared by the engine, replay/backtest and incremental work; extend, do
 * not break): samples go in strictly ascending time order, in milliseconds, values bit-exact
 * (staleness markers included, raw.h); proof_judge reads the state only. Samples older than
 * raw_read_start() of a grid never change that grid's verdict, so a fold may start earlier
 * than a cycle needs; it must not start later.
 */
#ifndef GPURECLAIM_PROOF_H
#define GPURECLAIM_PROOF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "series.h"

/* Thresholds one fold can judge against: the rule's and its overrides', deduplicated. */
#define PROOF_MAX_THRESHOLDS 16
/* Silences kept per series for the "too young" test and the first point (proof.c). */
#define PROOF_SILENCES 4

/*
 * What the fold of one rule needs, the same for every series of the rule:
 *   step_ms      the rule's step;
 *   gap_ms       its tolerated gap (fetch.c: toleratedGap, or 2 x step when unset);
 *   lookback_ms  decide_lookback(rule): the grid of `now` starts at now - lookback_ms;
 *   idle_max_ms  the longest idle timer the rule can use (its own and its overrides');
 *   idle_fit_ms  the longest of them not longer than the lookback (0: idle_max_ms), which
 *                bounds the silences the "too young" test needs (a longer window starts
 *                before the grid and is too young whatever the samples);
 *   thresholds   percent, the rule's first, then each override's; at most
 *                PROOF_MAX_THRESHOLDS, duplicates allowed (proof_params_init removes them).
 */
struct proof_params {
    int64_t step_ms, gap_ms, lookback_ms, idle_max_ms, idle_fit_ms;
    size_t nthresholds;
    double thresholds[PROOF_MAX_THRESHOLDS];
};

/* A time the state does not hold (no such sample yet). */
#define PROOF_NONE INT64_MIN

/* A silence: consecutive non-stale samples a < b (ms). */
struct proof_silence {
    int64_t a, b;
};

/*
 * The last breaker of an idle run (a sample at or above a threshold, or a non-finite one),
 * with the first silence longer than a step after it (where the idle run after it starts).
 */
struct proof_breaker {
    int64_t at;               /* sample time, PROOF_NONE when none */
    double v;                 /* its value, for the detail */
    struct proof_silence sil; /* a == PROOF_NONE until there is one */
    int64_t cand, clean;      /* thresholds only: the last high sample with no non-finite sample
                                 within a step before it and none after it yet (cand), and the last
                                 one with none within a step on either side (clean) */
};

/*
 * One series' state. Fields are proof.c's; callers only allocate it: proof_size(params)
 * bytes (the per-threshold part follows the struct), or proof_new. On x86-64 that is 240
 * bytes plus 48 per threshold (288 for a rule without threshold overrides), whatever the idle
 * timer and however many samples were folded. The state is plain data with no pointers: it
 * can be copied, kept from one cycle to the next and folded on with the samples after
 * proof_last (the incremental read of issue 26).
 */
struct proof {
    int64_t last;             /* last sample of any kind, the order check */
    int64_t first;            /* first non-stale sample */
    int64_t slast;            /* last non-stale sample */
    double vlast;             /* its value */
    int64_t cut;              /* first staleness marker after slast, PROOF_NONE when none */
    int64_t span_a;           /* start of the covered stretch slast belongs to (doubled ms) */
    int64_t prev_r;           /* last non-stale sample before that stretch */
    struct proof_breaker nan; /* last non-finite sample */
    /* Newest first: silences longer than max(step, lookback - idle_fit) (young), and longer
       than a step (where the first point of a window before the grid falls). */
    struct proof_silence young[PROOF_SILENCES], step[PROOF_SILENCES];
    uint8_t nyoung, nstep;
    bool young_lost, step_lost; /* an older one was dropped */
    uint32_t nlevels;
    struct proof_breaker high[]; /* one per threshold of the params, in their order */
};

/* What proof_judge says of one series at `now`. */
struct proof_verdict {
    int reason;        /* enum reason of decide.h: REASON_IDLE, REASON_ACTIVE or why not */
    bool present;      /* a sample on now's grid; decide() ignores a series without one, as
                          raw_to_grid drops it */
    double idle_since; /* start of the trailing idle run, Unix seconds; NaN unless the series
                          is idle (series_idle_start of decide.c) */
    double active_at;  /* REASON_ACTIVE: the grid point (Unix seconds) of the latest sample at
                          or above the threshold, and that sample's value (ratio) */
    double active_value;
    char detail[160];
};

/* Sort and deduplicate pp->thresholds. */
void proof_params_init(struct proof_params *pp);

/* Bytes one series' state takes with these params (the struct and its thresholds). */
size_t proof_size(const struct proof_params *pp);

/* Start an empty fold in `p` (proof_size(pp) bytes). */
void proof_init(struct proof *p, const struct proof_params *pp);
/* proof_init on a new allocation; free with free(). */
struct proof *proof_new(const struct proof_params *pp);

/*
 * Fold one sample (t_ms strictly after every sample folded before; v bit-exact, a staleness
 * marker included). Returns 0, or -1 with a message when t_ms is not after the last one (the
 * state is unchanged then).
 */
int proof_add(struct proof *p, const struct proof_params *pp, int64_t t_ms, double v, char *err,
              size_t errlen);

/* Last sample folded (of any kind), PROOF_NONE when none. */
int64_t proof_last(const struct proof *p);

/* Whether the series has a sample on the grid of now_ms (proof_verdict.present). */
bool proof_present(const struct proof *p, const struct proof_params *pp, int64_t now_ms);

/*
 * Whether the verdict at now_ms may need the window statistics (decide.c judge_proofs): a
 * non-finite sample and a sample at or above the lowest threshold both within the longest
 * window (and a step) before now, where the fold alone cannot always tell "active" from
 * "not_a_number" (proof.c, the bounds). False means the statistics change no verdict.
 */
bool proof_needs_window(const struct proof *p, const struct proof_params *pp, int64_t now_ms);

/*
 * The verdict on the series at `now_ms` (>= proof_last) with the idle timer and threshold
 * (percent, one of pp->thresholds) that apply to its workload: what decide() says of the
 * same series judged on the grid of now (raw_to_grid of the same samples). Returns 0, or -1
 * with out->reason REASON_QUERY_ERROR and a detail when the threshold was not folded or
 * now_ms is before the last sample.
 */
int proof_judge(const struct proof *p, const struct proof_params *pp, int64_t now_ms,
                int64_t idle_timer_ms, double threshold, struct proof_verdict *out);

/*
 * A time before which proof_judge(p, pp, T, idle_timer_ms, threshold) says REASON_IDLE at no T
 * in [now_ms, that time), whatever samples are folded after the last one (now_ms when the
 * fold cannot show a later one): the latest of the last high sample and the last non-finite
 * one plus min(idle timer, lookback), the start of the covered stretch plus the idle timer,
 * and, for a window too young at now_ms, its first sample plus the idle timer. A lower
 * bound, not the time idleness begins: for a shortcut that keeps a record that is no
 * reclaim (recommend's fast pass) until decide() could make it one.
 */
int64_t proof_idle_not_before(const struct proof *p, const struct proof_params *pp, int64_t now_ms,
                              int64_t idle_timer_ms, double threshold);

/*
 * Whether proof_judge(p, pp, now_ms, idle_timer_ms, ...) can tell "too young" from the
 * silences the fold kept (young[]): false when its test would run past them with older ones
 * dropped (young_lost) and fall back to "young". A fold made with a shorter young length than
 * pp's (proof_young_len: params with a shorter window, as `recommend`'s shared fold) keeps a
 * superset of the silences pp's fold keeps, newest first, so where this is true both folds
 * give the same verdict; where it is false they may not (enforcer/recfast.c).
 */
bool proof_young_known(const struct proof *p, const struct proof_params *pp, int64_t now_ms,
                       int64_t idle_timer_ms);

/*
 * The window statistics of one series for one idle timer (decision_rec samples, max, mean,
 * last; display only): its grid points in [now - idle, now], how many of them are finite,
 * their largest value (and the last time it was reached) and sum, and the value and time of
 * the last (NaN when not finite). The largest finite point also tells decide() exactly whether
 * the series was active in the window, which a proof cannot always say (proof.c).
 */
struct rule_winstats {
    double idle_timer;
    size_t samples, finite;
    double max, max_t, sum, last, last_t;
};

/* One activity series as a proof (proof.h): its labels without __name__, its fold, and the
   window statistics of each idle timer the fetch knew of (nwin 0 when it computed none). */
struct rule_proof {
    struct series s; /* labels only, no points */
    struct proof *p;
    struct rule_winstats *win;
    size_t nwin;
};

#endif
