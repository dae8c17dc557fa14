/*
 * PromQL label matchers for rule scopes, exemptions and overrides (see match.h).
 *
 * Why RE2. Users copy matchers from PromQL, so `pod=~"train-\\d+"` must mean what it means
 * to Prometheus. Until this file used RE2, matchers were POSIX ERE (regcomp), where `\d` is
 * not a digit class, so an exemption written the PromQL way silently exempted nothing, and
 * glibc's compiler took gigabytes on `a++++...` (100 bytes). Prometheus compiles matchers
 * with Go's regexp, whose syntax is RE2's; RE2 itself (libre2, C++, through the small shim
 * in re2_shim.cc) therefore accepts and rejects the same patterns, matches in time linear
 * in the input, never backtracks, and bounds compile memory with max_mem. PCRE2 was the
 * alternative: it is C, but its syntax is a superset (backreferences, lookaround,
 * possessive `a++`), so every difference would need a hand-written syntax check, and its
 * cost bounds are match limits that fail at match time instead of at `check`.
 *
 * Differences from Go's regexp that are handled here: RE2 accepts `\C` (any byte), Go does
 * not, so it is rejected. Like Prometheus (labels.NewFastRegexMatcher parses the pattern
 * on its own before wrapping it), the pattern must be valid alone: `a)|(b` is an error
 * rather than a way out of the anchoring.
 *
 * The value is a PromQL string literal, unquoted as PromQL's lexer does (promql/parser/
 * lex.go, lexEscape): in "..." and '...' the escapes \a \b \f \n \r \t \v \\, the opening
 * quote, \ooo, \xhh, \uhhhh and \Uhhhhhhhh; any other escape such as "\d" is an error (in
 * PromQL one writes "\\d"); `...` is raw.
 */
#include "match.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "re2_shim.h"
#include "utf8.h"
#include "util.h"

/*
 * One escape after a backslash at *pp (pointing after the backslash); appends its value.
 * Returns 0, or -1 with a message.
 */
static int unescape(const char **pp, char quote, struct sbuf *val, char *err, size_t errlen)
{
    static const char simple[] = "abfnrtv\\";
    static const char simple_val[] = "\a\b\f\n\r\t\v\\";
    const char *p = *pp;
    const char *hit = *p ? strchr(simple, *p) : NULL;

    if (hit) {
        sbuf_putc(val, simple_val[hit - simple]);
        *pp = p + 1;
        return 0;
    }
    if (*p == quote) {
        sbuf_putc(val, quote);
        *pp = p + 1;
        return 0;
    }
    if (*p >= '0' && *p <= '7') {
        unsigned v = 0;
        for (int i = 0; i < 3; i++, p++) {
            if (!(*p >= '0' && *p <= '7')) {
                snprintf(err, errlen, "invalid octal escape (expected three digits)");
                return -1;
            }
            v = v * 8 + (unsigned)(*p - '0');
        }
        if (v > 255) {
            snprintf(err, errlen, "octal escape value %u greater than 255", v);
            return -1;
        }
        sbuf_putc(val, (char)v);
        *pp = p;
        return 0;
    }
    if (*p == 'x' || *p == 'u' || *p == 'U') {
        int n = *p == 'x' ? 2 : *p == 'u' ? 4 : 8;
        unsigned long v = 0;
        char kind = *p++;
        for (int i = 0; i < n; i++, p++) {
            int h = hex_value((unsigned char)*p);
            if (h < 0) {
                snprintf(err, errlen, "invalid \\%c escape (expected %d hexadecimal digits)", kind,
                         n);
                return -1;
            }
            v = v * 16 + (unsigned long)h;
        }
        if (kind == 'x') {
            sbuf_putc(val, (char)v);
        } else if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) {
            snprintf(err, errlen, "escape \\%c%0*lx is not a valid Unicode code point", kind, n, v);
            return -1;
        } else {
            char u8[4];
            sbuf_add(val, u8, utf8_encode(v, u8));
        }
        *pp = p;
        return 0;
    }
    if (*p == '\0')
        snprintf(err, errlen, "unterminated value");
    else
        snprintf(err, errlen,
                 "unknown escape sequence '\\%c' (PromQL strings need '\\\\%c' for a regular "
                 "expression escape, or a `raw` value)",
                 *p, *p);
    return -1;
}

/* Go's regexp rejects `\C` (one byte, which may split a UTF-8 character); RE2 accepts it. */
static bool has_backslash_c(const char *s, size_t len)
{
    bool quoted = false; /* inside \Q...\E */

    for (size_t i = 0; i + 1 < len; i++) {
        if (s[i] != '\\')
            continue;
        char n = s[i + 1];
        if (quoted) {
            if (n == 'E')
                quoted = false;
        } else if (n == 'Q') {
            quoted = true;
        } else if (n == 'C') {
            return true;
        }
        i++;
    }
    return false;
}

static int compile(struct matcher *m, char *err, size_t errlen)
{
    char msg[160];
    const char *why = msg;

    if (has_backslash_c(m->value, m->value_len)) {
        why = "invalid escape sequence: \\C";
    } else {
        m->re = re2_shim_compile(m->value, m->value_len, MATCH_RE_MAX_MEM, msg, sizeof(msg));
        if (m->re) {
            m->re_insts = re2_shim_program_size(m->re);
            return 0;
        }
    }
    snprintf(err, errlen, "invalid regular expression '%s' for label '%s': %s", m->value, m->name,
             why);
    return -1;
}

/* The quoted value at *pp, unquoted into `val`. Returns 0 or -1 with a message. */
static int parse_value(const char **pp, struct sbuf *val, char *err, size_t errlen)
{
    const char *p = *pp;
    char quote = *p;
    char msg[160];

    if (quote != '"' && quote != '\'' && quote != '`') {
        snprintf(err, errlen, "the value must be quoted");
        return -1;
    }
    p++;
    while (*p && *p != quote) {
        if (*p == '\n' && quote != '`') {
            snprintf(err, errlen, "unterminated value (a newline in a quoted string)");
            return -1;
        }
        if (*p == '\\' && quote != '`') {
            p++;
            if (unescape(&p, quote, val, msg, sizeof(msg)) < 0) {
                snprintf(err, errlen, "%s", msg);
                return -1;
            }
            continue;
        }
        sbuf_putc(val, *p++);
    }
    if (*p != quote) {
        snprintf(err, errlen, "unterminated value");
        return -1;
    }
    *pp = p + 1;
    return 0;
}

int match_parse(const char *s, struct matcher *out, char *err, size_t errlen)
{
    char msg[192];

    memset(out, 0, sizeof(*out));
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    char *name;
    if (*p == '"' || *p == '\'' || *p == '`') {
        /* Prometheus 3's quoted name, any non-empty UTF-8 ("k8s.pod.name"); a name alone is
           the metric name inside braces, which match_parse_selector handles before this. */
        struct sbuf nb = {0};
        if (parse_value(&p, &nb, msg, sizeof(msg)) < 0) {
            sbuf_free(&nb);
            snprintf(err, errlen, "invalid matcher '%s': label name: %s", s, msg);
            return -1;
        }
        if (nb.len == 0 || strlen(nb.buf) != nb.len || !utf8_valid(nb.buf, nb.len)) {
            sbuf_free(&nb);
            snprintf(err, errlen, "invalid matcher '%s': a label name must be non-empty UTF-8", s);
            return -1;
        }
        name = sbuf_take(&nb);
    } else if (isalpha((unsigned char)*p) || *p == '_') {
        const char *n0 = p;
        while (isalnum((unsigned char)*p) || *p == '_')
            p++;
        name = xstrndup(n0, (size_t)(p - n0));
        if (*p && (strchr(".-/:", *p) || (unsigned char)*p >= 0x80)) {
            free(name);
            snprintf(err, errlen,
                     "invalid matcher '%s': a label name with '%c' must be quoted "
                     "(\"k8s.pod.name\"=\"x\", Prometheus 3)",
                     s, *p);
            return -1;
        }
    } else {
        snprintf(err, errlen, "invalid matcher '%s': expected a label name", s);
        return -1;
    }
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
        free(name);
        snprintf(err, errlen, "invalid matcher '%s': expected one of =, !=, =~, !~", s);
        return -1;
    }
    while (isspace((unsigned char)*p))
        p++;
    struct sbuf val = {0};
    if (parse_value(&p, &val, msg, sizeof(msg)) < 0) {
        sbuf_free(&val);
        free(name);
        snprintf(err, errlen, "invalid matcher '%s': %s", s, msg);
        return -1;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p) {
        sbuf_free(&val);
        free(name);
        snprintf(err, errlen, "invalid matcher '%s': unexpected '%s' after the value", s, p);
        return -1;
    }
    out->name = name;
    out->value_len = val.len;
    out->value = val.buf ? sbuf_take(&val) : xstrdup("");
    if ((out->op == MATCH_RE || out->op == MATCH_NRE) && compile(out, err, errlen) < 0) {
        match_free(out);
        return -1;
    }
    return 0;
}

/* The end of one matcher inside braces: the next top-level ',' or '}' (quotes skipped). */
static const char *matcher_end(const char *p)
{
    while (*p && *p != ',' && *p != '}') {
        if (*p == '"' || *p == '\'' || *p == '`') {
            char q = *p++;
            while (*p && *p != q) {
                if (*p == '\\' && q != '`' && p[1])
                    p++;
                p++;
            }
            if (!*p)
                return p;
        }
        p++;
    }
    return p;
}

/*
 * `"my.metric"` alone among the matchers: Prometheus 3's metric name inside braces
 * (generated_parser.y, label_matcher: string_identifier), `__name__="my.metric"`. Returns 0
 * with *out filled, 1 when `one` is not a lone string, -1 with a message when it is one but
 * invalid or a second metric name (Prometheus refuses one set twice; taking either would read
 * other series).
 */
static int metric_name_only(const char *one, const char *sel, const struct matcher *prev,
                            size_t nprev, struct matcher *out, char *err, size_t errlen)
{
    const char *p = one;
    while (isspace((unsigned char)*p))
        p++;
    if (*p != '"' && *p != '\'' && *p != '`')
        return 1;
    struct sbuf nb = {0};
    char msg[160];
    const char *q = p;
    if (parse_value(&q, &nb, msg, sizeof(msg)) < 0) {
        sbuf_free(&nb);
        snprintf(err, errlen, "invalid selector '%s': %s", sel, msg);
        return -1;
    }
    while (isspace((unsigned char)*q))
        q++;
    if (*q) {
        sbuf_free(&nb);
        return 1; /* "name" = "v": a quoted label name */
    }
    for (size_t i = 0; i < nprev; i++)
        if (strcmp(prev[i].name, "__name__") == 0 && prev[i].op == MATCH_EQ) {
            sbuf_free(&nb);
            snprintf(err, errlen, "invalid selector '%s': metric name set twice", sel);
            return -1;
        }
    if (nb.len == 0 || strlen(nb.buf) != nb.len || !utf8_valid(nb.buf, nb.len)) {
        sbuf_free(&nb);
        snprintf(err, errlen, "invalid selector '%s': a metric name must be non-empty UTF-8", sel);
        return -1;
    }
    *out = (struct matcher){.name = xstrdup("__name__"), .op = MATCH_EQ, .value_len = nb.len};
    out->value = sbuf_take(&nb);
    return 0;
}

int match_parse_selector(const char *s, struct matcher **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    if (isalpha((unsigned char)*p) || *p == '_' || *p == ':') {
        const char *name = p;
        while (isalnum((unsigned char)*p) || *p == '_' || *p == ':')
            p++;
        *out = xcalloc(1, sizeof(**out));
        (*out)[0] = (struct matcher){.name = xstrdup("__name__"),
                                     .op = MATCH_EQ,
                                     .value = xstrndup(name, (size_t)(p - name)),
                                     .value_len = (size_t)(p - name)};
        *n = 1;
        while (isspace((unsigned char)*p))
            p++;
    }
    if (*p == '{') {
        p++;
        for (;;) {
            while (isspace((unsigned char)*p))
                p++;
            if (*p == '}')
                break;
            const char *e = matcher_end(p);
            if (*e != ',' && *e != '}') {
                snprintf(err, errlen, "invalid selector '%s': unterminated '{'", s);
                goto fail;
            }
            char *one = xstrndup(p, (size_t)(e - p));
            *out = xrealloc(*out, (*n + 1) * sizeof(**out));
            int rc = metric_name_only(one, s, *out, *n, &(*out)[*n], err, errlen);
            if (rc == 1)
                rc = match_parse(one, &(*out)[*n], err, errlen);
            free(one);
            if (rc < 0)
                goto fail;
            (*n)++;
            p = *e == ',' ? e + 1 : e;
        }
        p++;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p || *n == 0) {
        snprintf(err, errlen, "invalid selector '%s': %s", s,
                 *n ? "unexpected text after it" : "no metric name and no matchers");
        goto fail;
    }
    return 0;
fail:
    match_free_all(*out, *n);
    *out = NULL;
    *n = 0;
    return -1;
}

void match_free_all(struct matcher *ms, size_t n)
{
    for (size_t i = 0; i < n; i++)
        match_free(&ms[i]);
    free(ms);
}

bool match_eval(const struct matcher *m, const struct labels *ls)
{
    const char *v = labels_get(ls, m->name);
    if (!v)
        v = "";
    size_t len = strlen(v);
    switch (m->op) {
    case MATCH_EQ:
        return len == m->value_len && memcmp(v, m->value, len) == 0;
    case MATCH_NE:
        return !(len == m->value_len && memcmp(v, m->value, len) == 0);
    case MATCH_RE:
        return re2_shim_full_match(m->re, v, len) == 1;
    case MATCH_NRE:
        return re2_shim_full_match(m->re, v, len) == 0;
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
    re2_shim_free(m->re);
    free(m->name);
    free(m->value);
    memset(m, 0, sizeof(*m));
}
