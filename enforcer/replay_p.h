/*
 * What the two readers of replay.h share, private to them (chrony's localp.h): the replay's
 * state (struct replay: the rules, how each is read, the distinct selectors with the raw
 * samples held per series) and the functions one reader defines and the other calls.
 * replay.c is the bounded range reader (backtest, the replay tools) and owns the state's
 * setup, the raw reads and the per-cycle slicing; replay_live.c is `run`'s incremental
 * reader (replay_live_*, called by daemon.c), which reads the same selectors with an open end
 * and carries each series' proof from cycle to cycle; replay_ahead.c reads the range
 * reader's next chunk in a thread. Nothing outside these three includes it.
 */
#ifndef GPURECLAIM_REPLAYP_H
#define GPURECLAIM_REPLAYP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proof.h"
#include "raw.h"
#include "rawread.h"
#include "replay.h"
#include "series.h"
#include "util.h"

struct lv_rule; /* replay_live.c: the carried proofs of one rule */

/* Prometheus refuses a range query of more than 11,000 points (web/api/v1/api.go). */
#define REPLAY_MAX_POINTS 11000

/* One series of a selector: its labels and the raw samples the coming cycles may need. */
struct rp_series {
    struct labels labels;
    char *key; /* labels_format(labels): the key of rp_sel.index */
    struct point *p;
    size_t head, n, cap; /* the samples held are p[head .. n - 1] */
    size_t mark;         /* n before the read in progress, to undo it when it fails */
    unsigned epoch;      /* the read that set mark */
    size_t hold;         /* samples held right after the last read appended to it */
    /* carry (replay_cfg.carry): the labels without __name__ (the proofs'), their key, and
       the proof of each carried rule of the selector (rp_sel.crule order), NULL until the
       first fold */
    struct labels nn;
    char *nnkey;
    struct proof **pf;
    size_t *pnext; /* per carried rule: the index after its proof's last sample (a hint) */
};

/* A part of the range that could not be read, and why. */
struct rp_fail {
    double a, b;
    char msg[256];
};

/* One distinct selector read as raw samples, for the rules that share it. */
struct rp_sel {
    const char *sel;
    enum promq_read_path path;
    bool probe;
    bool fallback;  /* the server turned out not to offer remote read: PromQL at each cycle */
    double read_to; /* samples up to this time (inclusive) are held; NAN before the first read */
    struct rp_series *s;
    size_t ns;
    struct strset index; /* key -> index + 1 */
    struct rp_fail *fails;
    size_t nfails;
    unsigned epoch;
    int64_t lo_ms, hi_ms; /* the read in progress */
    size_t *touched;      /* series the read in progress added samples to */
    size_t ntouched;
    /* run (replay_live_*): the samples held are complete from held_from on (NAN: nothing is
       held, the next cycle reads the whole window); the last full read; a late sample's count */
    bool live;
    double held_from, last_full;
    bool full_now;      /* this cycle's read was a full one */
    bool force_full;    /* the next cycle reads the whole window (a refuted re-proof) */
    char live_err[256]; /* this cycle's read failed: its rules keep with this message */
    /* carry: the rules folding its series (their index in rs), and two series held that
       differ only in their metric name (the rules keep while both are held) */
    size_t *crule, ncrule;
    struct strset nnindex; /* the held series' nnkey */
    char collide[200];
    size_t late, cycle_samples;
    struct replay *owner; /* live: where the rules' proof stores are (lv_on_series) */
};

/* One query's answer over the current chunk (or cycle), and a cursor per series. */
struct rp_answer {
    int rc;
    char err[256];
    struct matrix m;
    size_t *cur; /* per series of m: the first point not before the current cycle's window */
};

/* An instant expression (allocation, pending, priority) shared by the rules that use it. */
struct rp_inst {
    const char *expr;
    double at;            /* per cycle (VictoriaMetrics): the time ans was read at */
    struct rp_answer ans; /* the current chunk's range answer, or the current cycle's instant */
};

/* A range query of the PromQL plan (fetch.c), read over each chunk's cycles and sliced. */
struct rp_range {
    char *expr;
    double step, lookback;
    struct rp_answer ans;
};

/*
 * How each rule is read: raw samples (RP_RAW), range queries of fetch.c's PromQL plan sliced
 * per cycle (RP_SLICED: Prometheus, the interval a multiple of the rule's step), or
 * fetch_rules at each cycle time (RP_FALLBACK: anything else).
 */
enum rp_mode { RP_RAW, RP_SLICED, RP_FALLBACK };

struct rp_rule {
    enum rp_mode mode;
    size_t sel;                  /* RP_RAW: index into replay.sels */
    size_t act, cov, sub;        /* RP_SLICED: index into replay.ranges, or SIZE_MAX */
    size_t alloc, pending, prio; /* index into replay.insts, or SIZE_MAX */
};

/* carry: a rule whose activity is folded into proofs carried from cycle to cycle. */
struct rp_carry {
    bool on;
    size_t slot; /* its index in the selector's crule, and in each series' pf */
    struct proof_params pp;
    int64_t idle[RAW_MAX_IDLE]; /* the idle timers whose window statistics it may need, ms */
    size_t nidle;
};

struct replay {
    struct replay_cfg cfg;
    size_t ncycles, next; /* cycles from, from + interval, ...; the next to hand out */
    size_t loaded;        /* cycles [0, loaded) have their data read */
    struct rp_rule *rules;
    struct rp_sel *sels;
    size_t nsels;
    struct rp_inst *insts;
    size_t ninsts;
    struct rp_range *ranges;
    size_t nranges;
    bool inst_per_cycle;
    size_t nfallback;
    struct rp_fail *fails; /* every failure, for replay_failures */
    size_t nfails;
    char **lines;
    size_t nlines;
    struct replay_stats st;
    /* run (replay_live_*) */
    bool live;
    struct replay_live_cfg lcfg;
    size_t reproofs, refuted;
    struct lv_rule *lv; /* per rule of cfg.rs: its carried proofs (RP_RAW rules only) */
    /* carry (replay_cfg.carry) */
    struct rp_carry *carry; /* per rule of cfg.rs */
    int64_t *tms;           /* scratch: one series' sample times (ms) and values */
    double *tv;
    size_t tcap;
    double last_t;          /* the cycle last handed out, NAN before the first */
    bool adapt;             /* the chunk is the default's, sized by what it holds (rp_load) */
    struct rp_ahead *ahead; /* the next chunk being read (replay_ahead.c), or NULL */
};

/* ---- defined in replay.c ---------------------------------------------------------------- */

/* Unix seconds as the milliseconds of a raw read. */
int64_t rp_ms(double t);
/* The time of cycle k (from + k intervals). */
double rp_time(const struct replay *r, size_t k);
/* Where selector k's read for the cycle at t starts: the earliest read start of its rules. */
double rp_sel_start(const struct replay *r, size_t k, double t);
/* Recompute s->collide from the series held: two that differ only in their metric name. */
void rp_collisions(struct rp_sel *s);
void rp_series_free(struct rp_series *e, size_t ncrule);
/* Read selector k's raw samples over [a, b] into what it holds (lv_on_series when live). */
void rp_read(struct replay *r, size_t k, double a, double b);
/* rp_read in parts, for reads made elsewhere (replay_ahead.c): ready selector k for a read
   over [a, b], hand its series to rp_on_series, then end it with what the read returned. */
void rp_read_begin(struct replay *r, size_t k, double a, double b);
int rp_on_series(void *arg, const struct series *in, char *err, size_t errlen);
void rp_read_end(struct replay *r, size_t k, double a, double b, enum rawread_rc got,
                 size_t samples, size_t bytes, const char *err);
/* A range answer over [a, b] (rc, *m moved in, err) as the current chunk's *ans. */
void rp_answer_take(struct replay *r, struct rp_answer *ans, const char *expr, double a, double b,
                    int rc, struct matrix *m, const char *err);
void rp_answer_reset(struct rp_answer *ans);
/* How each rule of cfg.rs is read (struct rp_rule), its selectors, instants and ranges. */
void rp_plan(struct replay *r);
/* The instant series (allocation, pending, priority) of rule i at t into d. */
void rp_instants(struct replay *r, size_t i, double t, struct rule_data *d);
/* The rules read by fetch_rules at t (RP_FALLBACK), into data. */
void rp_fallback(struct replay *r, double t, struct rule_data *data);
/* Drop what selector s holds (the next cycle reads its whole window); free it. */
void rp_sel_drop(struct rp_sel *s);
void rp_sel_free(struct rp_sel *s);

/* ---- defined in replay_ahead.c: the next chunk read while this one's cycles are judged --- */

/* Start reading cycles [loaded, loaded + per) in a thread, when nothing read can change the
   plan (replay_ahead.c says when); nothing happens otherwise, and rp_load reads in place. */
void rp_ahead_start(struct replay *r, size_t per);
/* The read-ahead of cycles [loaded, k1), waited for: its raw reads handed to the selectors as
   rp_read_raw's would be, the longest stretch a selector's reads covered into *span. False
   (nothing done) when there is none for those cycles. */
bool rp_ahead_raw(struct replay *r, size_t k1, double *span);
/* Its instant and range answers taken as the chunk's, the read-ahead done; false without. */
bool rp_ahead_answers(struct replay *r);
/* Wait for a read-ahead still running and drop it (replay_close). */
void rp_ahead_stop(struct replay *r);

/* ---- defined in replay_live.c --------------------------------------------------------------- */

/* The series callback of a live selector's read: folds into its rules' carried proofs. */
int lv_on_series(void *arg, const struct series *in, char *err, size_t errlen);
/* Free every rule's carried proofs (r->lv). */
void lv_free_all(struct replay *r);

#endif
