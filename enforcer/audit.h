/*
 * The enforcer's audit trail (--audit.file): one JSON object per line for every notice,
 * action attempt, spare, dry run and skip, so that "why was my job stopped" (and "why was
 * it not") can be answered from one file with jq, long after the log has rotated.
 *
 * A line carries the time (RFC 3339 UTC), the event, the rule, the workload's identity
 * labels, the owner chain, the decision's window statistics (start, end, samples, max, mean)
 * with threshold and idle_since, which proof the decision rests on ("proof": "full", or
 * "incremental+full" when a decision from carried state was proven again over the whole
 * window, "incremental" when it was not), the action, its result and the API's status and
 * message.
 */
#ifndef GPURECLAIM_AUDIT_H
#define GPURECLAIM_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "decide.h"

/* One object of the owner chain: the pod (or container) first, the root owner last. */
struct audit_ref {
    const char *kind, *ns, *name, *uid;
};

struct audit_rec {
    double time;       /* Unix seconds */
    const char *event; /* notice | action | spared | dry_run | skipped */
    const char *rule;
    const struct labels *workload; /* identity labels */
    const struct audit_ref *chain;
    size_t nchain;
    const struct decision_rec *d; /* window statistics, or NULL when not in this cycle */
    const char *action;           /* rules_action_name() */
    const char *result;           /* ok, retry, gone, conflict, error, forbidden, ... or NULL */
    long api_status;              /* HTTP status of the API call, 0 when none */
    const char *message;          /* API message or why; may be NULL */
    double act_after;             /* planned action time (notices), NaN when none */
    bool reproved; /* d is incremental and its full-window proof confirmed it ("proof") */
};

struct audit;

/*
 * Open `path` for appending ("-" is stdout, NULL discards every record). Returns NULL with
 * a message when the file cannot be opened.
 */
struct audit *audit_open(const char *path, char *err, size_t errlen);
void audit_close(struct audit *a);

/* Append one line and flush it. Returns 0, or -1 when the write failed (logged once). */
int audit_write(struct audit *a, const struct audit_rec *r);
/* The line audit_write would append (without the newline); caller frees. */
char *audit_format(const struct audit_rec *r);
unsigned long audit_failures(const struct audit *a);

/* What a reader of the trail compares (backtest --audit.file): the fields that say which
   workload, when and what. Strings are NULL when absent or null. */
struct audit_line {
    double time; /* Unix seconds */
    char *event, *rule, *result;
    struct labels workload;
};

/*
 * Parse one line of the trail (s[0..len), no newline) into `out` (freed by the caller with
 * audit_line_free, also on failure): 0, or -1 with a message in err. The line must be a JSON
 * object (jsonparse's strict rules) with `time` (RFC 3339), `event`, `rule` and `workload`
 * (an object of string labels); other members are ignored, so lines of a newer version read.
 */
int audit_parse_line(const char *s, size_t len, struct audit_line *out, char *err, size_t errlen);
void audit_line_free(struct audit_line *l);

#endif
