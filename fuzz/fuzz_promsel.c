/*
 * libFuzzer target for the PromQL selector extractor (enforcer/promsel.c): any byte string
 * is parsed as an expression. Promises checked: on failure a message and nothing listed; on
 * success at least one selector, each with a finite reach >= 0 and a text whose structure
 * remote read's selector parser accepts (match_parse_selector: the text is what the raw read
 * sends; only a value it refuses may fail it) and that extracts again to itself with reach 0; names
 * in `written` and `grouping` are non-empty. Bounded nesting keeps the recursion finite (ASan would
 * report a stack overflow). Seeds: fuzz/corpus/promsel.
 */
#include "match.c"
#include "promsel.c"
#include "series.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = xstrndup((const char *)data, size);
    struct promsel p;
    char err[256];
    err[0] = '\0';
    if (promsel_extract(s, &p, err, sizeof(err)) == 0) {
        if (p.nsel == 0)
            __builtin_trap();
        for (size_t i = 0; i < p.nsel; i++) {
            if (!isfinite(p.sel[i].reach) || p.sel[i].reach < 0)
                __builtin_trap();
            struct matcher *ms;
            size_t n;
            char merr[256];
            /* A matcher's value may be refused (an unknown escape, a regular expression RE2
               rejects): then the raw read fails loudly, which keeps. The structure (names,
               operators, quoting) must always parse. */
            if (match_parse_selector(p.sel[i].text, &ms, &n, merr, sizeof(merr)) == 0)
                match_free_all(ms, n);
            else if (!strstr(merr, "invalid matcher") && !strstr(merr, "regular expression"))
                __builtin_trap();
            struct promsel again;
            if (promsel_extract(p.sel[i].text, &again, merr, sizeof(merr)) != 0 ||
                again.nsel != 1 || strcmp(again.sel[0].text, p.sel[i].text) != 0 ||
                again.sel[0].reach != 0)
                __builtin_trap();
            promsel_free(&again);
        }
        for (size_t i = 0; i < p.nwritten; i++)
            if (!p.written[i])
                __builtin_trap();
        for (size_t i = 0; i < p.ngrouping; i++)
            if (!p.grouping[i][0])
                __builtin_trap();
    } else if (!err[0] || p.nsel || p.nwritten || p.ngrouping) {
        __builtin_trap();
    }
    promsel_free(&p);
    free(s);
    return 0;
}
