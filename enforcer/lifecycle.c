/*
 * The action lifecycle (lifecycle.h): the rules of "notice, wait, re-check, act exactly once"
 * in one pure function, so that they can be read in one place and tested exhaustively. The
 * driver (act.c) gathers the facts, calls lc_step, persists the ledger and performs the
 * effects; it decides nothing that is written here.
 *
 * The order of the checks in lc_step is the policy. Spares come first (a workload active
 * again, or whose idle run restarted since the notice, is never acted on, whatever the
 * object), then the proof extension, then the conditions for starting anything (a `reclaim`
 * decision, leadership), the notice period, dry run, the object's identity, the continuity of
 * idleness, its age, and last the owner's keep-until, the caps and the pressure check, which
 * only decide whether an otherwise due action happens now (the pressure check also whether an
 * otherwise due notice is posted). The full-window re-proof of a decision made from carried
 * state (`unproven`) comes last: it decides whether an otherwise due notice, dry-run report or
 * action happens now. */
#include "lifecycle.h"

#include "util.h"

static void lc_init(struct lc_step *out, enum lc_state next, enum lc_why why)
{
    out->next = next;
    out->why = why;
    out->nfx = 0;
}

/* Set the answer, keeping the effects already listed. */
static void lc_set(struct lc_step *out, enum lc_state next, enum lc_why why)
{
    out->next = next;
    out->why = why;
}

static void lc_add(struct lc_step *out, enum lc_effect fx)
{
    if (out->nfx < LC_FX_MAX)
        out->fx[out->nfx++] = fx;
}

int lc_find(const struct lc_step *out, enum lc_effect fx)
{
    for (size_t i = 0; i < out->nfx; i++)
        if (out->fx[i] == fx)
            return (int)i;
    return -1;
}

enum lc_state lc_state_of(const struct ledger_entry *e)
{
    if (!e)
        return LC_NONE;
    switch (e->state) {
    case LEDGER_PENDING:
        return e->attempts ? LC_ACTING : LC_NOTICED;
    case LEDGER_DRY_RUN:
        return LC_DRY_RUN;
    case LEDGER_ACTED:
        return LC_ACTED;
    case LEDGER_DONE:
        return LC_GONE;
    }
    return LC_GONE; /* not reached: ledger_load refuses unknown states */
}

/* Stay in `s` with one "skipped" line. */
static void lc_skip(struct lc_step *out, enum lc_state s, enum lc_why why)
{
    lc_set(out, s, why);
    lc_add(out, LC_FX_SKIP);
}

/* Spared: active again, or the idle run restarted since the notice or report. */
static bool lc_spares(enum lc_decision d, const struct lc_facts *f)
{
    return d == LC_ACTIVE || ((d == LC_IDLE || d == LC_UNKNOWN) && f->run == LC_RUN_BROKEN);
}

/* Any decision with an idle run reaching back to the last proof extends the proof to now. */
static void lc_extend(enum lc_decision d, const struct lc_facts *f, struct lc_step *out)
{
    if ((d == LC_IDLE || d == LC_UNKNOWN) && f->run == LC_RUN_CONTINUOUS) {
        lc_add(out, LC_FX_EXTEND);
        lc_add(out, LC_FX_PERSIST);
    }
}

/* From none (or a dry-run report of a rule no longer in dry run): notice or report. */
static void lc_from_none(enum lc_state s, enum lc_decision d, const struct lc_facts *f,
                         struct lc_step *out)
{
    if (d != LC_IDLE)
        lc_set(out, s, LC_WHY_NOT_IDLE);
    else if (!f->leader)
        lc_set(out, s, LC_WHY_NOT_LEADER);
    else if (f->object == LC_OBJ_UNKNOWN)
        lc_set(out, s, LC_WHY_NEED_OBJECT);
    else if (f->object != LC_OBJ_SAME)
        lc_skip(out, s, LC_WHY_NO_OBJECT);
    else if (f->young)
        lc_skip(out, s, LC_WHY_TOO_YOUNG);
    else if (f->unproven)
        /* An incremental shortcut may only ever keep on its own: what is reported or noticed
           as idle is proven idle over the whole window first, a dry run included, so that a
           dry run reports what the live run would do. */
        lc_skip(out, s, LC_WHY_UNPROVEN);
    else if (f->dry_run) {
        lc_set(out, LC_DRY_RUN, LC_WHY_REPORTED);
        lc_add(out, LC_FX_AUDIT);
        lc_add(out, LC_FX_PERSIST);
    } else if (f->unconfirmed) {
        /* A notice tells the owner the workload will be reclaimed: not while nothing is
           known to wait for its GPUs (a DuringGPUPressure rule the API does not confirm). */
        lc_skip(out, s, LC_WHY_UNCONFIRMED);
    } else {
        /* The call's outcome decides (lc_settle). A notice record lost in a crash only means
           that the notice is posted again, later: it is written lazily, unlike an attempt. */
        lc_set(out, LC_NOTICED, LC_WHY_NOTICE);
        lc_add(out, LC_FX_NOTICE);
    }
}

/* From noticed or acting: spare, wait, close, or act. */
static void lc_from_open(enum lc_state s, enum lc_decision d, const struct lc_facts *f,
                         struct lc_step *out)
{
    if (lc_spares(d, f)) {
        /* The withdrawal is an API call: without the lead it waits, with the notice. */
        if (!f->leader) {
            lc_set(out, s, LC_WHY_NOT_LEADER);
            return;
        }
        lc_set(out, LC_SPARED, d == LC_ACTIVE ? LC_WHY_ACTIVE : LC_WHY_BROKEN);
        lc_add(out, LC_FX_WITHDRAW);
        lc_add(out, LC_FX_AUDIT);
        lc_add(out, LC_FX_NOTIFY);
        lc_add(out, LC_FX_PERSIST);
        return;
    }
    lc_extend(d, f, out);
    if (d != LC_IDLE)
        lc_set(out, s, LC_WHY_NOT_IDLE); /* unknown or no data: neither spare nor act */
    else if (!f->leader)
        lc_set(out, s, LC_WHY_NOT_LEADER);
    else if (!f->due)
        lc_set(out, s, LC_WHY_WAIT);
    else if (f->dry_run)
        lc_skip(out, s, LC_WHY_DRY_RUN);
    else if (f->object == LC_OBJ_UNKNOWN)
        lc_set(out, s, LC_WHY_NEED_OBJECT);
    else if (f->object != LC_OBJ_SAME) {
        /* Never retried on a replacement: the notice was for the object that is gone. */
        lc_set(out, LC_GONE, f->object == LC_OBJ_CHANGED ? LC_WHY_CHANGED : LC_WHY_GONE);
        lc_add(out, LC_FX_AUDIT);
        lc_add(out, LC_FX_PERSIST);
    } else if (f->run != LC_RUN_CONTINUOUS)
        lc_skip(out, s, LC_WHY_NOT_PROVEN);
    else if (f->young)
        lc_skip(out, s, LC_WHY_TOO_YOUNG);
    else if (f->kept)
        lc_skip(out, s, LC_WHY_KEPT); /* the notice stands; the owner's time runs */
    else if (f->capped)
        lc_skip(out, s, LC_WHY_CAPPED);
    else if (f->unconfirmed)
        lc_skip(out, s, LC_WHY_UNCONFIRMED);
    else if (f->unproven)
        lc_skip(out, s, LC_WHY_UNPROVEN); /* the notice stands; the next cycle proves again */
    else {
        /* Write ahead: the attempt is on disk before the call, so a crash right after it
           counts against the cap and the next start re-checks the object instead of acting
           blindly. */
        lc_set(out, LC_ACTING, LC_WHY_ACT);
        lc_add(out, LC_FX_WRITE_AHEAD);
        lc_add(out, LC_FX_ACT);
    }
}

/* A dry-run report: withdrawn like a notice (nothing is on the object), else kept. */
static void lc_from_dry_run(enum lc_decision d, const struct lc_facts *f, struct lc_step *out)
{
    if (lc_spares(d, f)) {
        lc_set(out, LC_SPARED, d == LC_ACTIVE ? LC_WHY_ACTIVE : LC_WHY_BROKEN);
        lc_add(out, LC_FX_AUDIT);
        lc_add(out, LC_FX_NOTIFY);
        lc_add(out, LC_FX_PERSIST);
        return;
    }
    lc_extend(d, f, out);
    if (d == LC_IDLE && !f->dry_run)
        lc_from_none(LC_DRY_RUN, d, f, out); /* the report does not stand for a notice */
    else if (d != LC_IDLE)
        lc_set(out, LC_DRY_RUN, LC_WHY_NOT_IDLE);
    else
        lc_set(out, LC_DRY_RUN, LC_WHY_REPORTED); /* once per idle episode */
}

void lc_step(enum lc_state s, enum lc_decision d, const struct lc_facts *f, struct lc_step *out)
{
    lc_init(out, s, LC_WHY_FINAL);
    switch (s) {
    case LC_NONE:
        lc_from_none(s, d, f, out);
        break;
    case LC_NOTICED:
    case LC_ACTING:
        lc_from_open(s, d, f, out);
        break;
    case LC_DRY_RUN:
        lc_from_dry_run(d, f, out);
        break;
    default:
        break; /* acted, closed or spared: exactly once, whatever this cycle says */
    }
}

void lc_settle(enum lc_effect call, enum lc_outcome o, struct lc_step *out)
{
    if (call == LC_FX_NOTICE) {
        if (o == LC_OUT_OK) {
            lc_init(out, LC_NOTICED, LC_WHY_NOTICE);
            lc_add(out, LC_FX_PERSIST);
            lc_add(out, LC_FX_AUDIT);
            lc_add(out, LC_FX_NOTIFY);
        } else {
            /* No notice, no action: the notice is tried again next cycle. */
            lc_init(out, LC_NONE, LC_WHY_NOTICE);
            if (o != LC_OUT_CANCELLED)
                lc_add(out, LC_FX_AUDIT);
        }
        return;
    }
    if (o == LC_OUT_OK) {
        lc_init(out, LC_ACTED, LC_WHY_ACT);
        lc_add(out, LC_FX_RECORD);
        lc_add(out, LC_FX_AUDIT);
        lc_add(out, LC_FX_NOTIFY);
    } else if (o == LC_OUT_CLOSED) {
        lc_init(out, LC_GONE, LC_WHY_ACT);
        lc_add(out, LC_FX_AUDIT);
    } else {
        lc_init(out, LC_ACTING, LC_WHY_ACT); /* retried next cycle, or after the next start */
        lc_add(out, LC_FX_AUDIT);
    }
    /* The outcome of a mutating call is on disk before the next call starts. */
    lc_add(out, LC_FX_SYNC);
}

static const char *const lc_state_names[] = {
    [LC_NONE] = "none",       [LC_NOTICED] = "noticed", [LC_ACTING] = "acting",
    [LC_DRY_RUN] = "dry_run", [LC_ACTED] = "acted",     [LC_GONE] = "gone",
    [LC_SPARED] = "spared",
};

static const char *const lc_decision_names[] = {
    [LC_IDLE] = "idle",
    [LC_ACTIVE] = "active",
    [LC_UNKNOWN] = "unknown",
    [LC_NO_DATA] = "no_data",
};

static const char *const lc_effect_names[] = {
    [LC_FX_EXTEND] = "extend",     [LC_FX_NOTICE] = "notice",
    [LC_FX_WITHDRAW] = "withdraw", [LC_FX_SKIP] = "skip",
    [LC_FX_AUDIT] = "audit",       [LC_FX_NOTIFY] = "notify",
    [LC_FX_ACT] = "act",           [LC_FX_WRITE_AHEAD] = "write_ahead",
    [LC_FX_RECORD] = "record",     [LC_FX_PERSIST] = "persist",
    [LC_FX_SYNC] = "sync",
};

static const char *const lc_why_names[] = {
    [LC_WHY_NONE] = "",
    [LC_WHY_NOT_IDLE] = "not_idle",
    [LC_WHY_NOT_LEADER] = "not_leader",
    [LC_WHY_NEED_OBJECT] = "need_object",
    [LC_WHY_NO_OBJECT] = "no_object",
    [LC_WHY_TOO_YOUNG] = "too_young",
    [LC_WHY_REPORTED] = "reported",
    [LC_WHY_DRY_RUN] = "dry_run",
    [LC_WHY_WAIT] = "wait",
    [LC_WHY_NOTICE] = "notice",
    [LC_WHY_ACTIVE] = "active",
    [LC_WHY_BROKEN] = "broken",
    [LC_WHY_CHANGED] = "changed",
    [LC_WHY_GONE] = "gone",
    [LC_WHY_NOT_PROVEN] = "not_idle_since_notice",
    [LC_WHY_KEPT] = "kept_until",
    [LC_WHY_CAPPED] = "capped",
    [LC_WHY_UNCONFIRMED] = "pressure_not_confirmed",
    [LC_WHY_UNPROVEN] = "not_proven_full",
    [LC_WHY_ACT] = "act",
    [LC_WHY_FINAL] = "final",
};

#define LC_NAME(tab, i) ((size_t)(i) < ARRAY_LEN(tab) && (tab)[i] ? (tab)[i] : "?")

const char *lc_state_name(enum lc_state s)
{
    return LC_NAME(lc_state_names, s);
}

const char *lc_decision_name(enum lc_decision d)
{
    return LC_NAME(lc_decision_names, d);
}

const char *lc_effect_name(enum lc_effect fx)
{
    return LC_NAME(lc_effect_names, fx);
}

const char *lc_why_name(enum lc_why w)
{
    return LC_NAME(lc_why_names, w);
}
