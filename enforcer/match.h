/*
 * PromQL-style label matchers (`name="v"`, `!=`, `=~`, `!~`) used by rule scopes,
 * exemptions and overrides. Regular expressions are anchored on both ends, as in PromQL,
 * and use POSIX extended syntax (the subset of RE2 that rules need). A label that is absent
 * matches as the empty string, again as in PromQL.
 */
#ifndef GPURECLAIM_MATCH_H
#define GPURECLAIM_MATCH_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "series.h"

enum match_op { MATCH_EQ, MATCH_NE, MATCH_RE, MATCH_NRE };

struct matcher {
    char *name;
    enum match_op op;
    char *value;
    regex_t re; /* compiled for MATCH_RE / MATCH_NRE */
    bool compiled;
};

/* Parse one matcher. Returns 0, or -1 with a message such as "invalid regular expression". */
int match_parse(const char *s, struct matcher *out, char *err, size_t errlen);
bool match_eval(const struct matcher *m, const struct labels *ls);
/* True when every matcher matches (true for n == 0). */
bool match_all(const struct matcher *ms, size_t n, const struct labels *ls);
void match_free(struct matcher *m);

#endif
