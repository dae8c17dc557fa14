/*
 * The notice annotation's JSON (gpureclaim.io/reclaim-notice, ANNOT_NOTICE): one codec for
 * its one writer and its readers. The engine (act.c) writes it on the object it will act on
 * and, after the action, again with actedAt and, through the Kubernetes backend, the `acted`
 * record of how to undo it (restore.h); another replica that becomes the leader reads it to
 * continue the notice or to learn the action was done (act.c), and `restore` reads the record
 * (restore_plan.c). With one struct and one parser they agree on every field and its type.
 *
 * The JSON is a flat object, members in this order when written:
 *   actAt, rule, action, idleSince, window, threshold, noticedAt, uid, actedAt, acted
 * with times in RFC 3339, whole seconds, and `acted` an object:
 *   way, uid, generation, specDigest, replicasBefore, undo (a JSON object), key, value.
 * Parsing is strict as jsonparse is (one JSON object, strict UTF-8, whole input): a member of
 * the wrong type, a time that is not one, a string that is not valid UTF-8 or holds a NUL, is
 * an error, not a default. Members this version does not know are ignored, so that a newer
 * replica's notice still reads. JSON null reads as absent; "-" (rfc3339_format's mark for an
 * unknown time) reads as an absent time.
 */
#ifndef GPURECLAIM_NOTICE_H
#define GPURECLAIM_NOTICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The `acted` record (restore.h says what each field means to `restore`). */
struct notice_acted {
    bool present; /* the notice has an `acted` member */
    char *way;    /* "scale", "patch", "annotate", "delete", "evict", or NULL */
    char *uid;    /* the object acted on, or NULL */
    bool has_generation;
    int64_t generation; /* its metadata.generation after the action */
    char *spec;         /* specDigest: restore_spec_digest of the object after it, or NULL */
    bool has_replicas_before;
    int64_t replicas_before;
    char *undo;        /* the undo merge patch, as JSON object text, or NULL */
    char *key, *value; /* the stop annotation and the value written, or NULL */
};

/* Every field of a notice. Strings are NULL when absent, times NaN (Unix seconds, whole). */
struct notice {
    double act_at;     /* actAt: when the action is planned */
    char *rule;        /* the rule's name */
    char *action;      /* rules_action_name of its action */
    double idle_since; /* idleSince: the start of the idle run that was proven */
    char *window;      /* the idle timer, as dur_format writes it ("15m") */
    char *threshold;   /* "10%" */
    double noticed_at; /* noticedAt: when the notice was given */
    char *uid;         /* the uid of the pod or container (chain[0]) noticed */
    double acted_at;   /* actedAt: when it was acted on */
    struct notice_acted acted;
};

/* An empty notice: every time NaN, every string NULL, no record. */
void notice_init(struct notice *n);
void notice_free(struct notice *n);
/* Free the record's strings and clear it (no record). */
void notice_acted_free(struct notice_acted *a);

/*
 * The JSON of `n` (malloc'd; the caller frees). actAt, idleSince and noticedAt are always
 * written ("-" when NaN; idleSince as rfc3339_format writes an unknown time), the other members
 * only when set. Times are written in whole seconds (floored). Slashes are escaped ("\/") unless
 * there is an `acted` record: the bytes of both forms are those the engine has always written.
 * An `undo` that is not JSON is left out.
 */
char *notice_encode(const struct notice *n);

/*
 * Parse s[0..len) into `n` (notice_init'ed here; the caller frees it, also on failure): 0, or
 * -1 with a message in err naming the member at fault. Times are floored to whole seconds.
 */
int notice_parse(const char *s, size_t len, struct notice *n, char *err, size_t errlen);

/* Every field the same (NaN equals NaN). */
bool notice_equal(const struct notice *a, const struct notice *b);

/*
 * Into out, what notice_parse of notice_encode(n) gives, without the text: the times as
 * written (whole seconds, floored; NaN where rfc3339_format writes "-"), the strings copied.
 * 0, or -1 (out empty) where the parse would refuse the text: a string that is not valid
 * UTF-8, or an acted record (not modelled: parse those). The engine reads back each notice
 * it posts; building and parsing its JSON was some 5 % of a `recommend` of 1,000 workloads.
 */
int notice_as_read(const struct notice *n, struct notice *out);

#endif
