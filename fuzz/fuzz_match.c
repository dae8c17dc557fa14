/*
 * libFuzzer target for label matchers (enforcer/match.c): any byte string is parsed as a
 * matcher (PromQL string unquoting, then RE2 compilation within MATCH_RE_MAX_MEM) and, when
 * it parses, evaluated against a few label values, including the input itself and an
 * absent label. Asserts the PromQL promises that do not depend on the pattern: `!~` is the
 * negation of `=~` and `!=` of `=`, and an absent label behaves as the empty string. The
 * same input is also parsed as a series selector (match_parse_selector, remote read's
 * matchers): named matchers on success, a message and nothing on failure.
 * Seeds: fuzz/corpus/match.
 */
#include "match.c"
#include "series.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = xstrndup((const char *)data, size);
    struct matcher m;
    char err[256];

    if (match_parse(s, &m, err, sizeof(err)) == 0) {
        struct labels empty = {0}, ls = {0};
        const char *values[] = {"", "a", "nb-12m", s};
        for (size_t i = 0; i < ARRAY_LEN(values); i++) {
            labels_set(&ls, m.name, values[i]);
            bool got = match_eval(&m, &ls);
            m.op ^= 1; /* EQ <-> NE, RE <-> NRE */
            if (match_eval(&m, &ls) == got)
                __builtin_trap();
            m.op ^= 1;
            if (i == 0 && match_eval(&m, &empty) != got)
                __builtin_trap();
            labels_free(&ls);
        }
        match_free(&m);
    } else if (!err[0]) {
        __builtin_trap();
    }

    /* The same bytes as a series selector: matchers with names on success, a message and
       nothing allocated on failure. */
    struct matcher *ms;
    size_t n;
    err[0] = '\0';
    if (match_parse_selector(s, &ms, &n, err, sizeof(err)) == 0) {
        if (n == 0 || !ms)
            __builtin_trap();
        for (size_t i = 0; i < n; i++)
            if (!ms[i].name || !ms[i].name[0] || !ms[i].value)
                __builtin_trap();
        match_free_all(ms, n);
    } else if (!err[0] || ms || n) {
        __builtin_trap();
    }
    free(s);
    return 0;
}
