/*
 * libFuzzer target for label matchers (enforcer/match.c): any byte string is parsed as a
 * matcher (PromQL string unquoting, then RE2 compilation within MATCH_RE_MAX_MEM) and, when
 * it parses, evaluated against a few label values, including the input itself and an
 * absent label. Asserts the PromQL promises that do not depend on the pattern: `!~` is the
 * negation of `=~` and `!=` of `=`, and an absent label behaves as the empty string.
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
    free(s);
    return 0;
}
