/*
 * libFuzzer target for the audit trail's reader (enforcer/audit.c, audit_parse_line), which
 * `backtest --audit.file` feeds with a file anyone with access to the log may have edited:
 * arbitrary bytes never crash it nor make it read past `len` (ASan, on an exact-size copy),
 * and a line it accepts, written again by audit_format from what it read, reads back to the
 * same event, rule, result, time and workload labels (the writer and the reader agree).
 * Seeds: fuzz/corpus/audit.
 */
#include "audit.c"
#include "series.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* audit_format names the decision of a record that carries one; these records carry none, so
   decide.c (and all it links) stays out of the target. */
const char *decide_decision_name(enum decision d)
{
    (void)d;
    __builtin_trap();
}

const char *decide_reason_name(enum reason r)
{
    (void)r;
    __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256] = "";
    char *exact = xcalloc(size ? size : 1, 1);
    memcpy(exact, data, size);
    struct audit_line l, back;
    if (audit_parse_line(exact, size, &l, err, sizeof(err)) == 0) {
        /* whole seconds, as the writer writes them */
        double t = floor(l.time);
        struct audit_rec r = {.time = t,
                              .event = l.event,
                              .rule = l.rule,
                              .workload = &l.workload,
                              .result = l.result,
                              .act_after = NAN};
        char *s = audit_format(&r);
        if (audit_parse_line(s, strlen(s), &back, err, sizeof(err)) != 0 ||
            strcmp(back.event, l.event) != 0 || strcmp(back.rule, l.rule) != 0 ||
            !!back.result != !!l.result || (l.result && strcmp(back.result, l.result) != 0) ||
            back.time != t || !labels_equal(&back.workload, &l.workload))
            __builtin_trap();
        audit_line_free(&back);
        free(s);
    } else if (!err[0]) {
        __builtin_trap(); /* every refusal says why */
    }
    audit_line_free(&l);
    free(exact);
    return 0;
}
