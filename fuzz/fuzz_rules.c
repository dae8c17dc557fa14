/*
 * libFuzzer target for the rules loader: any byte string goes through rules_load_buffer
 * (libyaml events -> yaml.c DOM -> rules.c schema) and everything is freed, so ASan/UBSan and
 * LeakSanitizer check the error paths that real files rarely reach. The loader's promises are
 * asserted too: a success has at least one rule whose values are all inside their documented
 * ranges, a failure has at least one message and every message names the file first.
 * The `kinds:` section (kinds.c) is held to its promises as well: a loaded file always has a
 * table, and every user row's ways fit their actions, with patches that parse and are undone.
 * Seeds: fuzz/corpus/rules (the valid and invalid test files and the examples). Matchers
 * compile with RE2 (re2_shim.cc, linked by the Makefile), whose memory is bounded per
 * pattern: the POSIX regcomp this replaced ran out of memory on `a++++...` in seconds.
 */
#include "rules.c"
#include "kinds.c"
#include "ydom.c"
#include "match.c"
#include "series.c"
#include "tz.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_rule(const struct rule *r)
{
    if (!r->name || !r->file || !r->q_activity || !r->q_allocation || !r->q_pending ||
        !r->resource_label || r->nidentity == 0)
        __builtin_trap();
    if (!(r->threshold > 0 && r->threshold <= 100) || r->idle_timer < 60 ||
        r->idle_timer > 30 * 86400 || r->step < 1 || r->step > 3600)
        __builtin_trap();
    if (r->tolerated_gap < r->step || r->tolerated_gap >= r->idle_timer ||
        r->idle_timer / r->step > MAX_POINTS || r->max_terminations < 1)
        __builtin_trap();
    for (size_t i = 0; i < r->nwindows; i++) {
        const struct rule_window *w = &r->windows[i];
        if (w->days == 0 || w->days > 0x7f || w->start_min < 0 || w->start_min > 1439 ||
            w->end_min < 0 || w->end_min > 1440 || w->utc_offset_min < -840 ||
            w->utc_offset_min > 840 || (w->zone.name && w->utc_offset_min != 0))
            __builtin_trap();
    }
    for (size_t i = 0; i < r->noverrides; i++)
        if (r->overrides[i].match.n == 0)
            __builtin_trap();
}

static void check_kinds(const struct kinds *t)
{
    if (!t || kinds_count(t) < kinds_user_count(t))
        __builtin_trap();
    for (size_t i = 0; i < kinds_count(t); i++) {
        const struct kind_def *d = kinds_at(t, i);
        if (!d || !d->group || !d->version || !d->kind || !d->source ||
            kinds_find(t, d->group[0] ? "x.y/v1" : "v1", d->kind) != (d->group[0] ? NULL : d))
            __builtin_trap();
        for (size_t a = 0; a < KINDS_NACTIONS; a++) {
            const struct kind_way *w = &d->ways[a];
            if (w->method == KIND_NONE)
                continue;
            if (!method_fits((enum rule_action)a, w->method) ||
                (w->method == KIND_ANNOTATE && !w->key))
                __builtin_trap();
            if (w->method == KIND_PATCH) {
                json_object *po = json_tokener_parse(w->patch);
                json_object *uo = json_tokener_parse(w->unpatch);
                struct sbuf left = {0};
                if (!po || !uo)
                    __builtin_trap();
                not_undone(po, uo, "", &left);
                if (left.len)
                    __builtin_trap();
                json_object_put(po);
                json_object_put(uo);
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ruleset rs;
    struct rules_errors errs = {0};

    if (rules_load_buffer("fuzz.yaml", (const char *)data, size, &rs, &errs) == 0) {
        if (rs.n == 0 || errs.n != 0)
            __builtin_trap();
        for (size_t i = 0; i < rs.n; i++)
            check_rule(&rs.rules[i]);
        check_kinds(rs.kinds);
        rules_free(&rs);
    } else {
        if (errs.n == 0 || rs.rules != NULL || rs.kinds != NULL || rs.notes != NULL)
            __builtin_trap();
        for (size_t i = 0; i < errs.n; i++)
            if (strncmp(errs.msg[i], "fuzz.yaml:", 10) != 0)
                __builtin_trap();
    }
    rules_errors_free(&errs);

    /* The same bytes as a duration string. */
    char *s = xstrndup((const char *)data, size);
    double secs;
    if (dur_parse(s, &secs) == 0 && !(secs >= 0))
        __builtin_trap();
    free(s);
    return 0;
}
