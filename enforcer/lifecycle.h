/*
 * The action lifecycle of one (rule, workload) as a pure transition function: given the state
 * of its ledger entry, this cycle's decision, a few facts about the live object and the
 * safety limits, say what the next state is and which effects the driver (act.c) performs, in
 * order. No I/O, no clock, no allocation: the whole policy of "notice, wait, re-check, act
 * exactly once" can be tested as a table (tests/unit/test_lifecycle.c) and is described in
 * docs/action-lifecycle.md.
 *
 *   none --notice--> noticed --write-ahead+act--> acting --ok--> acted
 *     |                 |  \                         |  \--gone/conflict--> gone
 *     |                 |   \--object gone/replaced--+--> gone
 *     |                 \--active again, idle run broken--> spared
 *     \--dry run--> dry_run --active again, idle run broken--> spared
 *
 * `acting` is a pending entry with at least one attempt on disk (the write-ahead record); it
 * is retried like `noticed`. `spared` is terminal and not stored (the entry is removed), so a
 * later idle episode starts again from `none`.
 */
#ifndef GPURECLAIM_LIFECYCLE_H
#define GPURECLAIM_LIFECYCLE_H

#include <stdbool.h>
#include <stddef.h>

#include "ledger.h"

enum lc_state {
    LC_NONE = 0, /* no open entry: nothing was noticed for this idle episode */
    LC_NOTICED,  /* notice given (ledger "pending", no attempt yet) */
    LC_ACTING,   /* an attempt was written ahead (ledger "pending", attempts > 0) */
    LC_DRY_RUN,  /* reported as a dry run (ledger "dry_run") */
    LC_ACTED,    /* the action succeeded (ledger "acted"): never again for this object */
    LC_GONE,     /* closed without acting: object gone or replaced (ledger "done") */
    LC_SPARED,   /* notice withdrawn; the entry is removed */
    LC_STATE__COUNT
};

/* This cycle's decision for the workload, as the lifecycle sees it. */
enum lc_decision {
    LC_IDLE = 0, /* reclaim: proven idle for the whole idle timer */
    LC_ACTIVE,   /* keep for a reason about the workload itself (active, gap, stale, ...) */
    LC_UNKNOWN,  /* keep for a reason that proves nothing (no_data, query_error, caps, ...) */
    LC_NO_DATA,  /* no decision at all this cycle (series gone, rule removed) */
    LC_DECISION__COUNT
};

/* The live object, as resolved this cycle. */
enum lc_object {
    LC_OBJ_UNKNOWN = 0, /* not resolved (yet): see lc_step.need_object */
    LC_OBJ_SAME,        /* the object the entry is about, running and not terminating */
    LC_OBJ_CHANGED,     /* replaced: another uid under the same identity */
    LC_OBJ_GONE,        /* not found, stopped or terminating */
    LC_OBJ__COUNT
};

/* Whether the idle run of this decision continues the idleness proven for the entry. */
enum lc_run {
    LC_RUN_CONTINUOUS = 0, /* the idle run starts no later than idleness was last proven */
    LC_RUN_BROKEN,         /* it starts later: busy (or unproven) for a while since */
    LC_RUN_UNKNOWN,        /* the decision has no idle run (NaN idle_since) */
    LC_RUN__COUNT
};

struct lc_facts {
    bool due; /* now >= the entry's act_after (the notice period is over) */
    enum lc_object object;
    enum lc_run run;
    bool young;       /* the object was created after its idle window started */
    bool kept;        /* the owner's keep-until is in force (keep.h) */
    bool capped;      /* maxTerminationsPerCycle or the hourly cap is reached */
    bool unconfirmed; /* a pressure rule whose GPU pressure the API did not confirm (asked
                         before the notice and again before the action) */
    bool unproven;    /* the decision came from a proof carried from cycle to cycle (issue 26)
                         and the full-window proof, asked before a notice, a dry-run report
                         or an action, did not say reclaim */
    bool dry_run;     /* global --dry-run or the rule's dryRun */
    bool leader;      /* may start API calls (not stopping, holds the Lease) */
};

enum lc_effect {
    LC_FX_EXTEND = 0,  /* idleness is proven up to now: entry.idle_proven = now */
    LC_FX_NOTICE,      /* post the notice (annotation and Event on Kubernetes) */
    LC_FX_WITHDRAW,    /* remove the notice from the object, telling why */
    LC_FX_SKIP,        /* audit "skipped" (once per workload and reason) and count it */
    LC_FX_AUDIT,       /* an audit line (notice, dry_run, spared, action) */
    LC_FX_NOTIFY,      /* the same line to the rule's webhook */
    LC_FX_WRITE_AHEAD, /* record the attempt and write the ledger to disk now */
    LC_FX_ACT,         /* the mutating call (delete, evict, scale, suspend, stop) */
    LC_FX_RECORD,      /* write actedAt on the object, for another replica */
    LC_FX_PERSIST,     /* the ledger changed: write it (at the latest at the end of the cycle) */
    LC_FX_SYNC,        /* write the ledger to disk now */
    LC_FX__COUNT
};

/* Why a step ends where it does; the driver turns it into an audit reason and message. */
enum lc_why {
    LC_WHY_NONE = 0,
    LC_WHY_NOT_IDLE,    /* the decision is not `reclaim`: nothing to start */
    LC_WHY_NOT_LEADER,  /* stopping or not the leader: no API call starts */
    LC_WHY_NEED_OBJECT, /* resolve the object and step again */
    LC_WHY_NO_OBJECT,   /* nothing to notice: the object could not be resolved */
    LC_WHY_TOO_YOUNG,   /* the idle evidence predates the object */
    LC_WHY_REPORTED,    /* dry run already reported for this idle episode */
    LC_WHY_DRY_RUN,     /* a pending notice of a rule now in dry run is not acted on */
    LC_WHY_WAIT,        /* the notice period runs */
    LC_WHY_NOTICE,      /* the notice is to be posted */
    LC_WHY_ACTIVE,      /* spared: active again */
    LC_WHY_BROKEN,      /* spared: the idle run restarted since the notice */
    LC_WHY_CHANGED,     /* closed: the object was replaced */
    LC_WHY_GONE,        /* closed: the object is gone */
    LC_WHY_NOT_PROVEN,  /* idleness since the notice is not proven this cycle */
    LC_WHY_KEPT,        /* the owner asked for time (keep-until) and the rule allows it */
    LC_WHY_CAPPED,      /* a cap is reached */
    LC_WHY_UNCONFIRMED, /* GPU pressure not confirmed */
    LC_WHY_UNPROVEN,    /* the full-window proof did not confirm an incremental `reclaim` */
    LC_WHY_ACT,         /* the action is to be performed */
    LC_WHY_FINAL,       /* acted or closed: exactly once, whatever the decision */
    LC_WHY__COUNT
};

#define LC_FX_MAX 8

struct lc_step {
    enum lc_state next;
    enum lc_why why;
    enum lc_effect fx[LC_FX_MAX]; /* executed in this order */
    size_t nfx;
};

/* The state of (rule, workload) from its ledger entry; NULL is LC_NONE. */
enum lc_state lc_state_of(const struct ledger_entry *e);

/*
 * One transition. Facts that are costly to learn may be left at their defaults (object
 * unknown, not kept, not capped, confirmed): a step that needs the object says
 * LC_WHY_NEED_OBJECT, and `kept`, `capped` and `unconfirmed` only change a step whose answer
 * is LC_WHY_ACT (`unconfirmed` also one whose answer is LC_WHY_NOTICE: no notice is posted for
 * a pressure the API does not confirm), so the driver learns them only then and steps again.
 * `unproven` (a read of the workload's whole window) only changes a step that would post a
 * notice (LC_FX_NOTICE), write a dry-run report from none (LC_DRY_RUN with LC_FX_AUDIT) or act
 * (LC_FX_ACT): each then stays where it was with one "skipped" line.
 * tests/unit/test_lifecycle.c checks both. */
void lc_step(enum lc_state s, enum lc_decision d, const struct lc_facts *f, struct lc_step *out);

/* The outcome of a call the driver made for LC_FX_NOTICE or LC_FX_ACT. */
enum lc_outcome {
    LC_OUT_OK = 0,    /* done */
    LC_OUT_CLOSED,    /* the object is gone, was replaced, or the action does not apply */
    LC_OUT_FAILED,    /* failed (retry, forbidden, error): tried again next cycle */
    LC_OUT_CANCELLED, /* not done: stopping; tried again after the next start */
    LC_OUT__COUNT
};

/* The transition after the call of `call` (LC_FX_NOTICE from none, LC_FX_ACT from acting). */
void lc_settle(enum lc_effect call, enum lc_outcome o, struct lc_step *out);

/* Whether `out` contains effect `fx`, and at which index (-1: not). */
int lc_find(const struct lc_step *out, enum lc_effect fx);

const char *lc_state_name(enum lc_state s);
const char *lc_decision_name(enum lc_decision d);
const char *lc_effect_name(enum lc_effect fx);
const char *lc_why_name(enum lc_why w);

#endif
