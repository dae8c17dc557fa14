/*
 * PromQL label matchers for rule scopes, exemptions and overrides (see match.h). Regexes
 * are wrapped in ^(?:...)$ semantics, as PromQL anchors them; POSIX ERE has no (?:), so a
 * plain group is used.
 */
#include "match.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int compile(struct matcher *m, char *err, size_t errlen)
{
    char *anchored = xasprintf("^(%s)$", m->value);
    int rc = regcomp(&m->re, anchored, REG_EXTENDED | REG_NOSUB);
    free(anchored);
    if (rc != 0) {
        char msg[128];
        regerror(rc, &m->re, msg, sizeof(msg));
        snprintf(err, errlen, "invalid regular expression '%s': %s", m->value, msg);
        return -1;
    }
    m->compiled = true;
    return 0;
}

int match_parse(const char *s, struct matcher *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    const char *name = p;
    if (!(isalpha((unsigned char)*p) || *p == '_')) {
        snprintf(err, errlen, "invalid matcher '%s': expected a label name", s);
        return -1;
    }
    while (isalnum((unsigned char)*p) || *p == '_')
        p++;
    size_t nlen = (size_t)(p - name);
    while (isspace((unsigned char)*p))
        p++;
    if (p[0] == '=' && p[1] == '~') {
        out->op = MATCH_RE;
        p += 2;
    } else if (p[0] == '!' && p[1] == '~') {
        out->op = MATCH_NRE;
        p += 2;
    } else if (p[0] == '!' && p[1] == '=') {
        out->op = MATCH_NE;
        p += 2;
    } else if (p[0] == '=') {
        out->op = MATCH_EQ;
        p += 1;
    } else {
        snprintf(err, errlen, "invalid matcher '%s': expected one of =, !=, =~, !~", s);
        return -1;
    }
    while (isspace((unsigned char)*p))
        p++;
    char quote = *p;
    if (quote != '"' && quote != '\'') {
        snprintf(err, errlen, "invalid matcher '%s': the value must be quoted", s);
        return -1;
    }
    p++;
    struct sbuf val = {0};
    while (*p && *p != quote) {
        if (*p == '\\' && p[1]) {
            p++;
            /* Keep regex escapes such as \. intact; only unescape quotes and backslashes. */
            if (*p == 'n')
                sbuf_putc(&val, '\n');
            else if (*p == quote || *p == '\\')
                sbuf_putc(&val, *p);
            else {
                sbuf_putc(&val, '\\');
                sbuf_putc(&val, *p);
            }
        } else {
            sbuf_putc(&val, *p);
        }
        p++;
    }
    if (*p != quote) {
        sbuf_free(&val);
        snprintf(err, errlen, "invalid matcher '%s': unterminated value", s);
        return -1;
    }
    p++;
    while (isspace((unsigned char)*p))
        p++;
    if (*p) {
        sbuf_free(&val);
        snprintf(err, errlen, "invalid matcher '%s': unexpected '%s' after the value", s, p);
        return -1;
    }
    out->name = xstrndup(name, nlen);
    out->value = sbuf_take(&val);
    if ((out->op == MATCH_RE || out->op == MATCH_NRE) && compile(out, err, errlen) < 0) {
        match_free(out);
        return -1;
    }
    return 0;
}

bool match_eval(const struct matcher *m, const struct labels *ls)
{
    const char *v = labels_get(ls, m->name);
    if (!v)
        v = "";
    switch (m->op) {
    case MATCH_EQ:
        return strcmp(v, m->value) == 0;
    case MATCH_NE:
        return strcmp(v, m->value) != 0;
    case MATCH_RE:
        return regexec(&m->re, v, 0, NULL, 0) == 0;
    case MATCH_NRE:
        return regexec(&m->re, v, 0, NULL, 0) != 0;
    }
    return false;
}

bool match_all(const struct matcher *ms, size_t n, const struct labels *ls)
{
    for (size_t i = 0; i < n; i++)
        if (!match_eval(&ms[i], ls))
            return false;
    return true;
}

void match_free(struct matcher *m)
{
    if (m->compiled)
        regfree(&m->re);
    free(m->name);
    free(m->value);
    memset(m, 0, sizeof(*m));
}
