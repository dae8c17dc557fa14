/*
 * The action engine's persistent memory (--state.file): which workloads were given a notice,
 * when each may be acted on, which were acted on, and when mutating calls were made.
 *
 * It is what makes an action happen exactly once across cycles and restarts, and what the
 * hourly action cap is counted from, so it is written after every change (a temporary file,
 * fsync, rename, fsync of the directory: a crash leaves the old or the new file, never half
 * of one) and an unreadable or corrupt file is an error, never silently an empty ledger.
 * A missing file is an empty ledger (first start). The format is JSON with a version:
 *   {"version":1,"entries":[{...}],"actions":[<unix time>,...]}
 */
#ifndef GPURECLAIM_LEDGER_H
#define GPURECLAIM_LEDGER_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

#define LEDGER_VERSION 1

enum ledger_state {
    LEDGER_PENDING = 0, /* notice given, action planned at act_after */
    LEDGER_DRY_RUN,     /* reported as dry run; suppresses repeats while it stays idle */
    LEDGER_ACTED,       /* the action succeeded: never again for this uid */
    LEDGER_DONE,        /* closed without acting: gone, conflict (a replacement), unsupported */
};

struct ledger_entry {
    char *rule;
    char *workload; /* the decision's identity labels, labels_format() form */
    char *uid;      /* the object acted on: pod uid or container id ("" if unresolved) */
    char *target;   /* human-readable, e.g. "Deployment ml/train" or "container web-1" */
    /* Where the notice went (Kubernetes root owner); empty strings for containers. */
    char *root_api, *root_kind, *root_ns, *root_name, *root_uid;
    enum ledger_state state;
    double noticed;   /* Unix time of the notice */
    double act_after; /* earliest action time */
    double updated;   /* last change: acted, closed, last attempt */
    /* Open entries: the time up to which the workload is proven idle without a break since
       before the notice (the notice's own time at first, then each cycle whose idle run
       reaches back to it); NaN when unknown (read as `noticed`). */
    double idle_proven;
    /* Acted entries (Kubernetes): when the object acted on (root_uid) was first seen running
       again under a pod other than the one acted on, or, when that pod was created after the
       action, its creation time: never earlier than the real restart. Its next idle window
       must lie after this (act.c, act_young). NaN until then. */
    double restarted;
    unsigned attempts;
    char *result; /* last result name, "" before any attempt */
    /*
     * Acted entries: the GPU time the action freed (act.c, act_freed). `allocated` is the
     * devices the workload held when it was acted on (NaN: unknown, nothing is counted);
     * `returned` ends the count: when the object acted on was seen running again, was found
     * gone or replaced, or the action itself has no way back (delete, evict), NaN while the
     * object is still stopped. `accounted` (not saved) is the time counted up to by this
     * process; after a restart the count goes on from the first cycle, so a counter that
     * starts at zero never repeats what the previous process counted.
     */
    double allocated, returned, accounted;
};

struct ledger {
    char *path; /* NULL: memory only (tests) */
    struct ledger_entry *v;
    size_t n, cap;
    double *actions; /* times of mutating calls, ascending, pruned to the last hour */
    size_t nactions, capactions;
    /* ledger_find's index (ledger.c): workload -> its first entry, then the next of the same
       workload in ledger order; kept by a removal, rebuilt after any other move. */
    struct strset index;
    size_t *next, *tail;
    /* The same by root uid (entries with one): ledger_each_root. */
    struct strset rindex;
    size_t *rnext, *rtail;
    bool indexed;
};

/*
 * Load `path` into a zeroed ledger (`path` NULL: empty, memory only). A missing file is an
 * empty ledger; anything unreadable, malformed or of another version is -1 with a message
 * ("state file '...' is corrupt: ..."), and `l` is left empty.
 */
int ledger_load(struct ledger *l, const char *path, char *err, size_t errlen);
/*
 * Write atomically (no-op without a path): a temporary file, fsync, rename, fsync of the
 * directory. 0, or -1 with a message; the old file stays, except when only the fsync of
 * the directory failed: the new file is then in place but may not survive a crash. That is
 * an error too, since a write-ahead record that may vanish is no record.
 */
int ledger_save(const struct ledger *l, char *err, size_t errlen);
void ledger_free(struct ledger *l);

/* The entry for (rule, workload) with that uid (NULL: any) in that state (-1: any), or NULL. */
struct ledger_entry *ledger_find(struct ledger *l, const char *rule, const char *workload,
                                 const char *uid, int state);
/* Call fn for every entry of (rule, workload), in ledger order. */
void ledger_each(struct ledger *l, const char *rule, const char *workload,
                 void (*fn)(void *arg, struct ledger_entry *e), void *arg);
/* Append a new entry with copies of the strings (NULL is stored as ""); returns it. */
struct ledger_entry *ledger_add(struct ledger *l, const char *rule, const char *workload,
                                const char *uid, const char *target, enum ledger_state state);
/* Replace a string field of an entry (copies `value`; NULL stored as ""). Not root_uid:
   ledger_set_root_uid. */
void ledger_set(char **field, const char *value);
/* Replace e's root_uid (the root index follows it). */
void ledger_set_root_uid(struct ledger *l, struct ledger_entry *e, const char *uid);
/*
 * Call fn for every entry whose root_uid is `root` (not empty), in ledger order, until it
 * returns true: that entry is returned, else NULL. fn must not add or remove entries.
 */
struct ledger_entry *ledger_each_root(struct ledger *l, const char *root,
                                      bool (*fn)(void *arg, struct ledger_entry *e), void *arg);
/* Remove entry `e` (a pointer returned by find/add; other pointers stay valid only if
   they point before it). */
void ledger_remove(struct ledger *l, struct ledger_entry *e);

/*
 * Drop pending and dry-run entries whose act_after is more than `pending_ttl` seconds
 * before `now`, acted and done entries updated more than `done_ttl` before, and action
 * times older than an hour. Expired pending entries are handed to `cb` first (may be NULL).
 */
void ledger_expire(struct ledger *l, double now, double pending_ttl, double done_ttl,
                   void (*cb)(void *arg, const struct ledger_entry *e), void *arg);

/*
 * Drop every acted entry that another acted entry of the same rule, workload and root (root
 * uid) supersedes: both restarted (the object ran again after each), the other's uid another,
 * its restart and its last change (updated) no earlier, ties to the later in the ledger.
 * Returns how many were dropped; the others keep their order. What the engine reads of an
 * acted entry (act.c) is then answered the same by the one that supersedes it (the latest
 * closure of the workload, the latest restart of its root), provided the caller's objects
 * never take a uid again and their creation times never go back: the backtest's simulated
 * world, whose ledger would otherwise keep an entry per reclaim for ACT_DONE_TTL (act.h).
 */
size_t ledger_drop_superseded(struct ledger *l);

/* Record a mutating call at `now`; count those in (now - 3600, now]. */
void ledger_note_action(struct ledger *l, double now);
size_t ledger_actions_last_hour(const struct ledger *l, double now);

const char *ledger_state_name(enum ledger_state s);

#endif
