/*
 * An owner's request for time: the annotation gpureclaim.io/keep-until: <RFC 3339> on the
 * workload or any object of its owner chain postpones the action on it, up to the rule's
 * maxKeepUntil counted from the notice (docs/action-lifecycle.md, "Asking for time"). The
 * notice still goes out: it is what tells the owner that the time is running, and the
 * maximum is counted from it, so a warned owner can ask for up to maxKeepUntil more, once per
 * idle episode.
 *
 * Pure: the annotation values, the rule's maximum and the times in, a verdict and the
 * sentence `plan`, `explain`, the audit trail and the notice use out. No I/O, no clock.
 *
 * In doubt, keep within the rule's limit: a value that is not a time is read as a request for
 * as long as the rule allows (a request for time must not become a reclaim because of a typo),
 * and said so; the rule's maximum still bounds it, so a malformed value never keeps a workload
 * longer than a well-formed one could.
 */
#ifndef GPURECLAIM_KEEP_H
#define GPURECLAIM_KEEP_H

#include <stdbool.h>
#include <stddef.h>

enum keep_state {
    KEEP_NONE = 0,  /* no annotation on any object of the chain */
    KEEP_HONOURED,  /* kept until the time asked for */
    KEEP_CAPPED,    /* asked for later than the rule allows: kept until from + max */
    KEEP_MALFORMED, /* not a time: kept until from + max, and said so */
    KEEP_IGNORED,   /* the rule allows no time (maxKeepUntil 0) */
};

/* One annotation found on the chain: its value and the object it is on ("Notebook ml/x"). */
struct keep_request {
    const char *value;
    const char *where;
};

struct keep_verdict {
    enum keep_state state;
    double until;      /* the action waits while now < until (NaN: KEEP_NONE, KEEP_IGNORED) */
    double asked;      /* the time asked for (NaN when malformed or none) */
    const char *where; /* the object whose annotation decided (NULL: none) */
    bool in_force;     /* now < until */
    char msg[320];     /* the sentence for plan, explain, audit ("" for KEEP_NONE) */
};

/*
 * Judge the requests `req[0..n)` (NULL values are skipped) for a rule allowing `max` seconds
 * after `from` (the notice, or now when there is none yet) at `now`. With several requests the
 * one keeping longest decides. `rule` names the rule in the message.
 */
void keep_judge(const struct keep_request *req, size_t n, double max, double from, double now,
                const char *rule, struct keep_verdict *out);

/* "none", "honoured", "capped", "malformed", "ignored". */
const char *keep_state_name(enum keep_state s);

#endif
