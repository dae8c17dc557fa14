/*
 * An owner's request for time (keep.h): the verdict on the keep-until annotations found on a
 * workload's chain, and the sentence that says it. The rule's maximum is the SRE's word and
 * the annotation the owner's: the owner may only shorten what the rule allows, never lengthen
 * it, and a value that cannot be read is taken as "as long as allowed" rather than as nothing
 * (in doubt, keep; the rule still bounds it).
 */
#include "keep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "annot.h"
#include "dur.h"
#include "rfc3339.h"
#include "util.h"

static const char *const keep_state_names[] = {
    [KEEP_NONE] = "none",           [KEEP_HONOURED] = "honoured", [KEEP_CAPPED] = "capped",
    [KEEP_MALFORMED] = "malformed", [KEEP_IGNORED] = "ignored",
};

const char *keep_state_name(enum keep_state s)
{
    return (size_t)s < ARRAY_LEN(keep_state_names) ? keep_state_names[s] : "?";
}

/* The verdict on one request; false when it has no value. */
static bool keep_one(const struct keep_request *rq, double max, double from, struct keep_verdict *v)
{
    if (!rq->value)
        return false;
    char err[128];
    *v = (struct keep_verdict){.until = NAN, .asked = NAN, .where = rq->where};
    bool parsed = rfc3339_parse(rq->value, &v->asked, err, sizeof(err)) == 0;
    if (!parsed)
        v->asked = NAN;
    if (!(max > 0))
        v->state = KEEP_IGNORED;
    else if (!parsed)
        v->state = KEEP_MALFORMED;
    else if (v->asked > from + max)
        v->state = KEEP_CAPPED;
    else
        v->state = KEEP_HONOURED;
    if (v->state == KEEP_HONOURED)
        v->until = v->asked;
    else if (v->state != KEEP_IGNORED)
        v->until = from + max;
    return true;
}

static void keep_sentence(const struct keep_request *rq, double max, const char *rule,
                          struct keep_verdict *v)
{
    char until[RFC3339_LEN], asked[RFC3339_LEN], d[32];
    rfc3339_format(until, sizeof(until), v->until, RFC3339_SEC);
    rfc3339_format(asked, sizeof(asked), v->asked, RFC3339_SEC);
    dur_format(d, sizeof(d), max);
    const char *where = v->where ? v->where : "the workload";
    const char *passed = v->in_force ? "" : " (that time has passed)";
    switch (v->state) {
    case KEEP_NONE:
        v->msg[0] = '\0';
        break;
    case KEEP_HONOURED:
        snprintf(v->msg, sizeof(v->msg), "kept until %s at the owner's request (%s on %s)%s", until,
                 ANNOT_KEEP_UNTIL, where, passed);
        break;
    case KEEP_CAPPED:
        snprintf(v->msg, sizeof(v->msg),
                 "kept until %s at the owner's request, capped: %s on %s asks for %s, rule '%s' "
                 "allows at most %s after the notice%s",
                 until, ANNOT_KEEP_UNTIL, where, asked, rule, d, passed);
        break;
    case KEEP_MALFORMED:
        snprintf(v->msg, sizeof(v->msg),
                 "kept until %s, the most rule '%s' allows (%s after the notice): %s on %s is "
                 "'%.60s', not an RFC 3339 time; fix or remove it%s",
                 until, rule, d, ANNOT_KEEP_UNTIL, where, rq->value, passed);
        break;
    case KEEP_IGNORED:
        snprintf(v->msg, sizeof(v->msg),
                 "%s '%.60s' on %s ignored: rule '%s' allows 0 (maxKeepUntil is not set)",
                 ANNOT_KEEP_UNTIL, rq->value, where, rule);
        break;
    }
}

void keep_judge(const struct keep_request *req, size_t n, double max, double from, double now,
                const char *rule, struct keep_verdict *out)
{
    *out = (struct keep_verdict){.state = KEEP_NONE, .until = NAN, .asked = NAN};
    size_t best = n;
    for (size_t i = 0; i < n; i++) {
        struct keep_verdict v;
        if (!keep_one(&req[i], max, from, &v))
            continue;
        /* The longest keep decides; an ignored request only when nothing else was asked. */
        bool better = best == n || (out->state == KEEP_IGNORED && v.state != KEEP_IGNORED) ||
                      (v.state != KEEP_IGNORED && v.until > out->until);
        if (better) {
            *out = v;
            best = i;
        }
    }
    if (best == n)
        return;
    out->in_force = !isnan(out->until) && now < out->until;
    keep_sentence(&req[best], max, rule ? rule : "", out);
}
