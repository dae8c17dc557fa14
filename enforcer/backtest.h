/*
 * `backtest`: what a rules file would have done over a past range. Every cycle time from
 * --from to --to, --enforce.interval apart, gets the data `plan --at` that time would read
 * (from a source, below), the decisions of decide(), and then the very action engine of
 * `run --no-dry-run` (act.c and its lifecycle) driven with a simulated backend instead of the
 * Kubernetes or container API. So notices, the notice period and its spares, the caps and
 * the "exactly once" rules are those of `run`, not a second copy of them.
 *
 * What the simulated backend knows is only what the history shows: a workload is one object
 * per identity, created before the range; an action stops it until its activity reaches
 * its threshold again ("its return"), which counts as a restart exactly as `restore` does
 * (the engine keeps it too young until a whole idle window after it). Owner chains, kinds,
 * keep-until annotations and the objects' labels are not in the history: with a look-up
 * (bt_cfg.lookup, btlookup.h) each workload about to be noticed is looked up once as it is
 * now, and one `run` would never act on is skipped by the engine as `run` skips it (left out
 * of the counts, named in the output); without one they are not checked (bt_lookup_note).
 *
 * The source of the per-cycle data is an interface so that a faster one (a single read of
 * the raw samples) can replace the evaluation per cycle without touching the simulation.
 */
#ifndef GPURECLAIM_BACKTEST_H
#define GPURECLAIM_BACKTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "btlookup.h"
#include "decide.h"
#include "promq.h"
#include "rules.h"
#include "util.h"

/* ---- the data of each cycle --------------------------------------------------------------- */

struct bt_source {
    /*
     * The next cycle: 1 with *t set and data[0 .. nrules) filled as fetch_rules fills it (the
     * caller frees it with fetch_free), 0 when the range is done.
     */
    int (*next)(struct bt_source *s, double *t, struct rule_data *data);
    /* Cycles done and in all, for the progress line. */
    size_t done, total;
    void (*free)(struct bt_source *s);
    /*
     * A source whose rule data carry proofs, not grids (the replay): rule i's activity points
     * of the last cycle at its grid times in (after, t] (replay_points), where the backtest
     * finds returns and the start of the data, the series' labels lent (free the matrix with
     * matrix_free_lent). NULL when the rule data's activity holds them.
     */
    bool (*points)(struct bt_source *s, size_t rule, double after, bool first_only,
                   bool (*want)(void *arg, const struct labels *l), void *arg, struct matrix *out);
    /* Whether rule i's data carry proofs whenever it was read (replay_carried); NULL: never. */
    bool (*carried)(struct bt_source *s, size_t rule);
};

/* fetch_rules at every cycle time: exactly `plan --at T` (slow: one evaluation per cycle). */
struct bt_source *bt_source_per_cycle(struct promq *q, const struct ruleset *rs, double from,
                                      double to, double interval);

/*
 * The history read once (replay.h): the same decisions as bt_source_per_cycle, each raw
 * sample read once and folded once into proofs carried from cycle to cycle. The records'
 * window statistics (display only) are computed with window_stats (--decisions). NULL with
 * a message when the range cannot be planned.
 */
struct bt_source *bt_source_replay(struct promq *q, const struct ruleset *rs, double from,
                                   double to, double interval, bool window_stats, char *err,
                                   size_t errlen);

/* bt_source_replay with replay_cfg.fold (NULL: each rule's own fold). */
struct replay_fold;
struct bt_source *bt_source_replay_fold(struct promq *q, const struct ruleset *rs, double from,
                                        double to, double interval, bool window_stats,
                                        const struct replay_fold *fold, char *err, size_t errlen);

/* Number of cycle times from `from` to `to` inclusive, `interval` apart. */
size_t bt_cycles(double from, double to, double interval);

/* ---- the simulation ----------------------------------------------------------------------- */

struct bt_cfg {
    double from, to, interval;
    double return_within;             /* a return this soon after the reclaim counts */
    unsigned max_actions_per_hour;    /* --enforce.max-actions-per-hour; 0: none */
    const char *protected_namespaces; /* as `run`'s flag; "": none */
    const char *by;                   /* --by LABEL, or NULL */
    /* --backtest.every-cycle: decide() of every workload and the engine over every decision
       at every cycle (the reference the event-driven default is compared with, btdue.h). */
    bool every_cycle;
    /* The workloads looked up as they are now (btlookup.h; not taken over, may be shared by
       several simulations); NULL: nothing is looked up. */
    struct btl *lookup;
    /*
     * The figures only (recommend's fast pass, recfast.h: memory flat in the range): a
     * reclaim leaves bt_result.rc once it is closed, folded into its rule's figures (the
     * same bt_rule_stats), so rc holds the open ones in slots reused (nrc: the slots); and
     * no events (ev) are kept. Per-reclaim outputs (--top, --by, --audit.file) need it
     * false. (Every backtest's engine forgets the acted entries a newer one of the same
     * workload supersedes: act_forget_superseded.)
     */
    bool figures_only;
};

enum bt_end {
    BT_END_OPEN = 0, /* not closed yet (only during the run) */
    BT_END_RETURN,   /* activity reached the threshold again */
    BT_END_GONE,     /* its allocation ended in the history */
    BT_END_RANGE,    /* still away at --to */
};

/* One simulated action. */
struct bt_reclaim {
    size_t wl;      /* index in bt_result.wl */
    double noticed; /* the notice's cycle time */
    double at;      /* the action's cycle time */
    double devices; /* allocated devices at the action; NaN when unknown */
    double end;     /* return, end of the allocation or --to */
    enum bt_end how;
};

struct bt_workload {
    size_t rule;            /* index in the ruleset */
    struct labels identity; /* identity labels */
    char *key;              /* labels_format(identity) */
    char *by;               /* value of --by, or NULL */
    double gpu_seconds;     /* freed by its reclaims */
    size_t reclaims;
    /* Its look-up (bt_cfg.lookup), made the first time the engine resolves it; NULL: not
       looked up (never about to be noticed, or no look-up). Left out: never noticed. */
    const struct btl_verdict *lookup;
    /* simulation state */
    unsigned gen;      /* object generation: a new one after each return */
    bool stopped;      /* reclaimed and not back yet */
    size_t open;       /* its open reclaim while stopped */
    size_t away_at;    /* its place in the simulation's list of workloads away, while stopped */
    double created;    /* the current object's creation (0: before the range) */
    double threshold;  /* effective threshold of its latest decision, percent */
    double allocated;  /* devices of its latest decision (NaN: unknown) */
    char *resource;    /* GPU resource of its latest decision, or NULL */
    double alloc_seen; /* last cycle time it was seen allocated */
    double noticed;    /* the open notice's time, NaN when none */
    double back;       /* scratch: its earliest return seen in this cycle's data */
    size_t seen_cycle; /* last cycle index it was decided in */
};

/* A run of cycles in which a rule could not be evaluated. */
struct bt_failure {
    double from, to;
    size_t cycles;
    char msg[256];
};

/* An event of the simulation, for --audit.file. */
struct bt_event {
    bool action; /* false: notice */
    size_t wl;
    double t;
};

struct bt_rule_stats {
    const char *name;
    const char *simulated_as; /* "" or why the rule was simulated other than written */
    enum rule_action action;  /* the action simulated (report: delete) */
    size_t cycles, error_cycles;
    size_t workloads, notices, spared, reclaims, returns_within, returns, unknown_devices;
    double gpu_seconds;
    double median_return; /* of the returns within return_within; NaN when none */
    unsigned long reclaim_decisions, keep_decisions;
    unsigned long kept[REASON__COUNT];
    struct bt_failure *fail;
    size_t nfail;
};

struct bt_result {
    struct bt_cfg cfg;
    const char *rules_file;
    size_t cycles;
    double data_start; /* earliest activity sample seen; NaN when none */
    size_t cycles_before_data;
    struct bt_rule_stats *rule;
    size_t nrules;
    struct bt_workload *wl;
    size_t nwl;
    struct bt_reclaim *rc;
    size_t nrc;
    struct bt_event *ev;
    size_t nev;
    /* Workload-cycles decide() judged and carried (btdue.h); 0 with every_cycle. */
    unsigned long judged, carried;
    /* The most entries the engine's ledger and the open (or, without figures_only, kept)
       reclaims held together after a cycle: what grows with the range unless bounded. */
    size_t held_peak;
};

struct bt_sim;

/*
 * A simulation of the rules `rs` (the caller's, which must outlive it); NULL with a message.
 * The rules are changed to what `run --no-dry-run` would act on: a rule in dryRun, or whose
 * action is `report`, is simulated as acting (delete), and its row says so
 * (bt_rule_stats.simulated_as). Create it before deciding anything from these rules.
 */
struct bt_sim *bt_sim_new(struct ruleset *rs, const struct bt_cfg *cfg, char *err, size_t errlen);
/*
 * One cycle at `t` (ascending), in three steps:
 *   bt_sim_observe  what the history says before deciding: the rules that could not be read,
 *                   and for each workload reclaimed and not back, its return (activity at or
 *                   above its threshold since the last cycle read) or the end of its
 *                   allocation;
 *   bt_sim_hide     the series of the workloads still away taken out of `data`, and the
 *                   pending demand of DuringGPUPressure rules less the devices they freed for
 *                   its resource (true when anything changed), so that decide() ranks, caps
 *                   and covers demand as in the world where they were reclaimed;
 *   bt_sim_cycle    the decisions of decide() on that data to the engine.
 */
void bt_sim_observe(struct bt_sim *s, double t, const struct rule_data *data,
                    struct bt_source *src);
bool bt_sim_hide(struct bt_sim *s, struct rule_data *data);
/*
 * bt_sim_observe for a driver that finds returns and allocations itself, and knows which
 * workloads away they can have ended at t (recommend's fast pass, enforcer/recfast.h, every
 * rule read): for each of wl[0 .. n) (indexes in the result; one not away is skipped),
 * back() gives the earliest time in (after, upto] an activity series of it reached its
 * threshold (NaN: none) and alloc_last() the last cycle time, at most t, an allocation series
 * of it showed devices (NaN: none seen); its reclaim then closes as bt_sim_observe closes it.
 * Of every other workload away the driver vouches that it neither returned nor stopped
 * showing devices at t: bt_sim_observe would leave it as it is. The cost is that of the
 * workloads named, not of every workload away.
 */
void bt_sim_observe_some(struct bt_sim *s, double t, const size_t *wl, size_t n,
                         double (*back)(void *arg, size_t wl, double after, double upto),
                         double (*alloc_last)(void *arg, size_t wl), void *arg);
void bt_sim_cycle(struct bt_sim *s, double t, const struct decisions *ds);
/* The workloads (indexes in the result) the last bt_sim_cycle acted on, in the order it
   did; *n their number. Valid until the next bt_sim_cycle. */
const size_t *bt_sim_acted(const struct bt_sim *s, size_t *n);
/* How many workloads have a notice standing (noticed, neither acted on nor spared yet). */
size_t bt_sim_open_notices(const struct bt_sim *s);
/* The index in the result of rule `rule`'s workload with these identity labels, SIZE_MAX
   when no decision of it was stepped yet. */
size_t bt_sim_workload(struct bt_sim *s, size_t rule, const struct labels *identity);
/* Close what is still open at cfg->to and compute the summaries. */
const struct bt_result *bt_sim_finish(struct bt_sim *s);
void bt_sim_free(struct bt_sim *s);

/* What a backtest cannot know from the history, whatever it can look up: one sentence. */
extern const char bt_not_simulated[];
/* What the look-up checked and could not check for the rules and workloads of `r` (btl_note). */
void bt_lookup_checked(const struct bt_result *r, struct sbuf *out);
/*
 * bt_lookup_checked as a line, and the
 * workloads it left out and could not check, as lines ("left out: RULE KEY: why", "not
 * checked: ..."), each ending in a newline; `indent` starts every line.
 */
void bt_lookup_note(const struct bt_result *r, const char *indent, struct sbuf *out);

/* ---- the command ------------------------------------------------------------------------- */

/*
 * Run the simulation of `rs` over cfg's range with data from `src` (taken over): decide()
 * every cycle, write each decision to `decisions` (may be NULL) as a JSON line
 * (report_render_json_line), and show progress on `progress` (may be NULL): a bar with an
 * estimate when it is a terminal, else a line every few seconds. Returns the simulation
 * (bt_sim_finish done; free it with bt_sim_free), or NULL with a message.
 */
struct bt_sim *bt_run(struct ruleset *rs, const struct bt_cfg *cfg, struct bt_source *src,
                      FILE *decisions, FILE *progress, const char *label, char *err, size_t errlen);
/* The result of a finished simulation. */
const struct bt_result *bt_sim_result(const struct bt_sim *s);

/* ---- comparison with an audit file -------------------------------------------------------- */

struct bt_audit_cmp {
    size_t matched, only_sim, only_audit, audit_lines;
    bool dry_run;      /* the audit is a dry run's (dry_run lines, no action): notices only */
    struct sbuf *diff; /* first differences, one line each */
};

/*
 * Compare the notices and actions of `res` with the audit log at `path` (JSON lines written
 * by `run`): a notice (or, in a dry run, a dry_run report) and an action with result ok
 * agree when the rule, the workload and the cycle (the audit time floored onto the cycle
 * grid) are the same. An audit of a dry run (dry_run lines and no action) is compared on the
 * notices only. Lines outside [from, to + interval) are not compared. 0, or -1 with a
 * message when the file cannot be read or a line is not an audit object.
 */
int bt_audit_compare(const struct bt_result *res, const char *path, struct bt_audit_cmp *out,
                     char *err, size_t errlen);

#endif
