/*
 * The two readers of history by replay, one per caller: the bounded range reader (replay.c,
 * issue 25; the backtest and the replay tools) and `run`'s incremental reader (replay_live.c,
 * issue 26; daemon.c), sharing their state through replay_p.h. The range reader: for every
 * cycle time t from T1 to T2, --enforce.interval apart, the `struct rule_data` array decide() needs
 * at t, read from the history once instead of once per cycle, so that a backtest judges from the
 * same data, through the same decide(), as `plan --at t` would.
 *
 * How each rule is read (docs/replay.md has the table and the reasons):
 *   - a selector activity on a raw path (remote read, VictoriaMetrics export; rawread.h): the
 *     raw samples of each distinct selector over [T1 - lookback - step - gap, T2], in chunks
 *     of at most replay_cfg.chunk seconds (one request each, so no answer outgrows the server's
 *     frame or answer caps), series kept by label set across chunks, fed in time order; each
 *     series keeps only the samples the next cycle's window can still need, so memory grows
 *     with the series and the idle timer, never with the range; at t the window goes through
 *     fetch.c's fold (fetch_fold_*: proofs or grids, as `plan` reads them);
 *   - a selector on the PromQL plan (a server without a raw path, or --prometheus.read-path
 *     promql) on Prometheus, when the interval is a multiple of the rule's step: fetch.c's
 *     range queries over each chunk's cycles at the rule's step, sliced per cycle (a range
 *     query's point at u is its expression evaluated at u, whatever the range);
 *   - the instant series (allocation, pending, priority) on Prometheus: range queries over
 *     the chunk with step = interval (a range query's point at t is the instant query at t,
 *     labels included), sliced per t; on VictoriaMetrics, whose range queries look back
 *     differently from its instant queries, an instant query at each t;
 *   - any other rule (an expression, whose result its selectors' raw samples prove at each
 *     cycle, exprcov.h; VictoriaMetrics' PromQL plan; an interval that is not a multiple of
 *     the step; a range over the 11,000 points): fetch_rules at each t for that rule alone,
 *     exactly `plan --at t`, at the cost of its queries per cycle.
 * A failed read marks the cycles it covers as failed for the rules that need it (rule_data
 * `error` with a message naming the part that failed: decide() keeps every workload of the
 * rule with query_error), and the replay goes on with the next chunk.
 */
#ifndef GPURECLAIM_REPLAY_H
#define GPURECLAIM_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "decide.h"
#include "promq.h"
#include "raw.h"
#include "rules.h"

/*
 * The time one raw read or range query covers unless replay_cfg.chunk says otherwise: at
 * first REPLAY_DEFAULT_CHUNK, then as long as holds about REPLAY_CHUNK_SAMPLES samples of
 * every selector, within REPLAY_MAX_CHUNK (replay.c, rp_load).
 */
#define REPLAY_DEFAULT_CHUNK 1800.0
#define REPLAY_MAX_CHUNK     7200.0
#define REPLAY_CHUNK_SAMPLES 1200000.0

struct replay_cfg {
    struct promq *q;
    const struct ruleset *rs; /* must outlive the replay: rule_data.rule points into it */
    double from, to;          /* first and last cycle time candidates, Unix seconds */
    double interval;          /* seconds between cycle times (--enforce.interval) */
    double chunk;             /* seconds per request; 0: sized by what it holds (above) */
    /*
     * Carry each series' proof from one cycle to the next (the backtest): each cycle folds
     * only the samples since the previous one, instead of its whole window, into the proofs
     * `plan --at t` would build (proof.h: earlier samples change nothing), lent to the rule
     * data (rule_data.proofs_lent). The window statistics of a decision record (samples, max,
     * mean, last) are computed only with window_stats, or where a window holds a non-finite
     * sample next to a high one (the exact "active", decide.c): decisions, reasons and idle
     * times are `plan`'s either way. Two series held that differ only in their metric name
     * keep their rules while both are held (`plan`: while both are on the grid).
     */
    bool carry;
    bool window_stats;
    /*
     * Read each chunk in place when its first cycle comes. By default the next chunk is read
     * by a thread while this one's cycles are judged (replay_ahead.c): the same reads, handed
     * over at the same point, so the same data; the tests compare the two.
     */
    bool sync_reads;
    /*
     * NULL, or per rule (rs->n entries) the fold to carry instead of the rule's own
     * (decide_proof_params, fetch_idle_timers): `recommend`'s fast pass folds each series once
     * for every threshold and idle timer of its grid (enforcer/recfast.h). The rule data then
     * carry these params; the caller judges with its own. Used only with carry.
     */
    const struct replay_fold *fold;
};

/* A fold replacing a rule's own (replay_cfg.fold); `set` false: the rule's own. */
struct replay_fold {
    bool set;
    struct proof_params pp;
    size_t nidle;
    double idle[RAW_MAX_IDLE]; /* the idle timers whose window statistics it may need */
};

/* What a replay has done so far (replay_stats). */
struct replay_stats {
    size_t cycles_done, cycles_total;
    size_t samples;  /* raw samples read */
    size_t bytes;    /* bytes of raw-read answers */
    size_t requests; /* raw reads and range queries sent (per-cycle fallbacks not counted) */
    size_t failed_chunks;
    /* Rules evaluated by fetch_rules at each cycle time (see above). */
    size_t fallback_rules;
    /*
     * The earliest raw sample any selector read has found (NAN when none yet, or when no rule
     * reads raw samples): where the activity data starts when the range starts before it.
     * The first read starts a whole reach (twice the longest idle timer, a step and the
     * tolerated gap) before T1, so a data_start after that is where the TSDB's data of the
     * selector begins. Cycles before it can only be no_data (an allocated workload without
     * activity) or have no workload at all, and none is idle before a whole idle timer of
     * data: decide() sees it as it would at that time.
     */
    double data_start;
    size_t peak_series; /* largest number of series held at once */
};

struct replay;

/*
 * Check the range (from <= to, interval > 0, both finite) and plan the reads: asks the server
 * which read path it offers (rawread_choose), reads no data yet. NULL with a message in err on
 * a bad range.
 */
struct replay *replay_open(const struct replay_cfg *cfg, char *err, size_t errlen);

/*
 * The next cycle time into *t and its data into data[0 .. rs->n - 1] (overwritten; free with
 * fetch_free, not the array, before the next call: the proofs and the instant series' labels
 * are lent from what the replay holds): exactly what fetch_rules(q, rs, *t, data) fills, read
 * from the history already read where possible. Returns 1 with a cycle, 0 when the range is done. A
 * read that failed is not an error of the replay: it shows in the rules' data (error, errmsg)
 * and in replay_failures.
 */
int replay_next(struct replay *r, double *t, struct rule_data *data);

/* Whether rule i's series are carried as proofs from cycle to cycle (its data has_proofs
   whenever it was read), with replay_cfg.fold's params when set. */
bool replay_carried(const struct replay *r, size_t i);

/*
 * With carry: rule i's activity points at the grid times of the cycle replay_next last handed
 * out, t, in (after, t] (after -INFINITY: from the grid's start; first_only: the first point
 * of each series only), as rule_data.activity would hold them had the window been folded into
 * grids (raw_points_between): the backtest's returns. Series labels without __name__; only
 * the series `want` (when not NULL) says yes to. The labels are lent (the replay's, valid
 * until the next replay_next): free with matrix_free_lent. False (out empty) for a rule not
 * carried.
 */
bool replay_points(struct replay *r, size_t i, double after, bool first_only,
                   bool (*want)(void *arg, const struct labels *l), void *arg, struct matrix *out);

void replay_stats(const struct replay *r, struct replay_stats *out);

/*
 * The parts of the range that could not be read, one line each ("rule 'x': [T1, T2]: <error>"),
 * merged while consecutive; NULL-terminated, owned by the replay.
 */
const char *const *replay_failures(const struct replay *r, size_t *n);

void replay_close(struct replay *r);

/*
 * `run`: a replay with an open end (replay_live.c, issue 26). Each cycle reads, per selector, only
 * the raw samples since its last read, with an overlap for samples that arrive late, and builds the
 * rule data of `now` from the samples it carries from cycle to cycle: the same rule data
 * replay_next and fetch_rules build, through the same grids and the same decide(), at the
 * cost of what is new. A selector is read over its whole window (a full read) at the first
 * cycle, when the state does not reach back far enough for its rules (a new selector, a rule
 * reloaded with a longer window), after a read error (its rules keep this cycle), after
 * replay_live_invalidate (becoming the leader), after a re-proof that did not confirm, when
 * the clock went back, and every `full_every` seconds as a safety net. A sample inside the
 * overlap that arrives after the read of its time is put in its place (counted as late); one
 * later than the overlap is not seen until the next full read, so every decision made from an
 * incremental read says so (rule_data.proof, decision_rec.proof) and a notice or action on it
 * waits for replay_live_reprove. The rules read as windows (expressions, the PromQL plan) are
 * read by fetch_rules at each cycle, as `plan` reads them.
 */
struct replay_live_cfg {
    double overlap;    /* seconds read again before the last read (--prometheus.read-overlap) */
    double full_every; /* seconds between full reads (--enforce.full-read-interval), > 0 */
    double chunk;      /* seconds per request of a full read; 0 = REPLAY_DEFAULT_CHUNK */
};

/* Nothing is read yet. `rs` must outlive the replay or be replaced by replay_live_rules. */
struct replay *replay_live_open(struct promq *q, const struct ruleset *rs,
                                const struct replay_live_cfg *cfg);

/*
 * New rules in force (a reload): the samples of a selector the new rules still use are kept
 * (read again in full only if a rule now needs an earlier start), the others dropped.
 */
void replay_live_rules(struct replay *r, const struct ruleset *rs);

/* Every selector is read in full at the next cycle (becoming the leader). */
void replay_live_invalidate(struct replay *r);

/*
 * The data of every rule at `now` into data[0 .. rs->n - 1] (overwritten; free with
 * fetch_free), as fetch_rules(q, rs, now, data) fills it, with rule_data.proof saying which
 * proof each selector rule rests on. Returns 0, or -1 when a query failed (in the rules' data).
 */
int replay_live_cycle(struct replay *r, double now, struct rule_data *data);

/*
 * The rules' proofs in `data` are the carried state's, lent for the cycle: call this before
 * fetch_free(data), which then frees the rest.
 */
void replay_live_release(struct replay *r, struct rule_data *data);

/* What the cycle did for rule i: samples its selector read, whether in full, late samples. */
struct replay_live_rule {
    bool raw;       /* read as raw samples (else as windows, by fetch_rules) */
    bool full;      /* this cycle's read of its selector covered the whole window */
    size_t samples; /* raw samples that read returned (shared by the rules of a selector) */
    size_t late;    /* samples of the overlap that arrived after the read of their time */
};
void replay_live_rule(const struct replay *r, size_t i, struct replay_live_rule *out);

/* The state carried: series and bytes held, re-proofs asked and refuted since the start. */
struct replay_live_stats {
    size_t series, bytes, reproofs, refuted;
};
void replay_live_stats(const struct replay *r, struct replay_live_stats *out);

/*
 * The full-window proof of decision `d`, made at `now` from this cycle's `data` (what
 * replay_live_cycle filled): the rule's selector with the workload's identity matchers added
 * is read over the whole window, and decide() judges the rule data of this cycle with only
 * that workload and its series as read now. True when it still says the workload is idle
 * since the same time (reclaim, or kept only by the rule's pressure, fit or cap policy,
 * which the cycle's own decision already weighed), and *proven (may be NULL) then gets the
 * window statistics of that proof (samples, max, mean, last) and, when its decision and reason
 * are d's, its detail; false with why in msg otherwise or when the read failed, and the rule's
 * selector is then read in full at the next cycle.
 */
bool replay_live_reprove(struct replay *r, const struct rule_data *data,
                         const struct decision_rec *d, double now, struct decision_rec *proven,
                         char *msg, size_t msglen);

#endif
