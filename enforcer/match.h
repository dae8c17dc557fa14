/*
 * PromQL label matchers (`name="v"`, `!=`, `=~`, `!~`) used by rule scopes, exemptions and
 * overrides, with Prometheus' semantics: the value is a PromQL string literal ("...", '...'
 * with Go escapes, or `...` raw), regular expressions use RE2 syntax (as Go's regexp, which
 * Prometheus uses), are anchored at both ends and `.` matches a newline (Prometheus 3); a
 * label that is absent matches as the empty string.
 */
#ifndef GPURECLAIM_MATCH_H
#define GPURECLAIM_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "series.h"

/*
 * Memory for one compiled regular expression (RE2's max_mem: program plus DFA cache). A
 * pattern needing more is rejected at load time; a DFA that fills its share falls back to
 * RE2's NFA, which is still linear in the label value's length.
 */
#define MATCH_RE_MAX_MEM (1LL << 20)

enum match_op { MATCH_EQ, MATCH_NE, MATCH_RE, MATCH_NRE };

struct re2_shim;

struct matcher {
    char *name;
    enum match_op op;
    char *value;         /* unquoted */
    size_t value_len;    /* may hold NUL bytes from \x00 */
    struct re2_shim *re; /* compiled for MATCH_RE / MATCH_NRE */
    size_t re_insts;     /* size of the compiled program, for a per-file budget */
};

/*
 * Parse one matcher. Returns 0, or -1 with a message such as "invalid regular expression
 * 'a++' for label 'pod': bad repetition operator: ++".
 */
int match_parse(const char *s, struct matcher *out, char *err, size_t errlen);
bool match_eval(const struct matcher *m, const struct labels *ls);
/* True when every matcher matches (true for n == 0). */
bool match_all(const struct matcher *ms, size_t n, const struct labels *ls);
void match_free(struct matcher *m);

/*
 * Parse a series selector, `name`, `name{m, ...}` or `{m, ...}` (a trailing comma allowed),
 * into `*n` matchers (an array the caller frees with match_free_all); the metric name becomes
 * `__name__="name"`. Used to send a rule's activity selector as remote-read matchers. Returns
 * 0, or -1 with a message naming the selector.
 */
int match_parse_selector(const char *s, struct matcher **out, size_t *n, char *err, size_t errlen);
void match_free_all(struct matcher *ms, size_t n);

#endif
