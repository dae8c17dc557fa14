/*
 * Prometheus HTTP API client: builds /api/v1/query and /api/v1/query_range requests, sends
 * them through httpc and turns the JSON answer into `struct matrix`.
 *
 * The parser is strict on purpose. The enforcer terminates workloads whose activity looks
 * idle, so anything that could make activity look lower than it was must fail the query:
 * an error envelope, a proxy's HTML page, a truncated body, a value that is not a number
 * string, points out of order, and warnings (Prometheus sets them when an answer is partial,
 * e.g. a remote-read source failed). Answer shapes follow prometheus/prometheus
 * docs/querying/api.md and web/api/v1/api.go (respondError, marshalTimestamp).
 *
 * Why not a general JSON library: with 10,000 workloads a range answer is some 13 MB and
 * 1.2 million [time, value] pairs, and building json-c's tree of it took 0.5 s and 200 MB.
 * The parser here first checks the whole document against RFC 8259 (pj_check), then walks
 * it by offsets, writing each series' points into one array; values take an exact fast
 * path when they are short decimals. It keeps json-c's answers: the old json-c parser is
 * kept under PROMQ_JSONC_REFERENCE and tests and fuzz/fuzz_promq.c compare the two.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "httpc.h"
#include "log.h"
#include "promq.h"
#include "util.h"

/* Result types promq_parse_as accepts. */
#define PROMQ_MATRIX 1u
#define PROMQ_VECTOR 2u
#define PROMQ_SCALAR 4u
#define PROMQ_ANY    (PROMQ_MATRIX | PROMQ_VECTOR | PROMQ_SCALAR)

/* Nesting limit, as json-c counts it; a valid answer never goes deeper than 6. */
#define PROMQ_JSON_DEPTH 16

struct promq {
    char *url; /* without a trailing slash */
    double timeout;
    char *bearer_file;
    char *basic_user;
    char *basic_pass_file;
    char *ca_file;
    bool insecure;
    atomic_ulong requests, failures;
};

static char *promq_strdup_opt(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

struct promq *promq_new(const struct promq_cfg *cfg)
{
    struct promq *q = xcalloc(1, sizeof(*q));
    q->url = xstrdup(cfg->url ? cfg->url : "");
    size_t n = strlen(q->url);
    while (n > 0 && q->url[n - 1] == '/')
        q->url[--n] = '\0';
    q->timeout = cfg->timeout > 0 ? cfg->timeout : 30.0;
    q->bearer_file = promq_strdup_opt(cfg->bearer_file);
    q->basic_user = promq_strdup_opt(cfg->basic_user);
    q->basic_pass_file = promq_strdup_opt(cfg->basic_pass_file);
    q->ca_file = promq_strdup_opt(cfg->ca_file);
    q->insecure = cfg->insecure;
    if (q->insecure)
        log_warn("TLS verification of '%s' is disabled", q->url);
    return q;
}

void promq_free(struct promq *q)
{
    if (!q)
        return;
    free(q->url);
    free(q->bearer_file);
    free(q->basic_user);
    free(q->basic_pass_file);
    free(q->ca_file);
    free(q);
}

unsigned long promq_requests(const struct promq *q)
{
    return atomic_load(&((struct promq *)q)->requests);
}

unsigned long promq_failures(const struct promq *q)
{
    return atomic_load(&((struct promq *)q)->failures);
}

/* ---- values ------------------------------------------------------------------------------ */

/* 10^k for k <= 22: all exactly representable as doubles. */
static const double promq_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/*
 * `[+-]digits[.digits]` with at most 15 digits and no exponent, the shape of nearly every
 * value and timestamp Prometheus writes. The digits then fit a double exactly, and so does
 * 10^k, so one IEEE division gives the correctly rounded result, which is what strtod
 * returns (Clinger's fast path). False when the text has another shape.
 */
static bool promq_fast_decimal(const char *s, size_t n, double *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    uint64_t m = 0;
    unsigned digits = 0, frac = 0;
    bool dot = false;
    for (; i < n; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            m = m * 10 + (uint64_t)(c - '0');
            digits++;
            frac += dot;
            if (digits > 15)
                return false;
        } else if (c == '.' && !dot) {
            dot = true;
        } else {
            return false;
        }
    }
    if (digits == 0)
        return false;
    double v = (double)m / promq_pow10[frac];
    *out = neg ? -v : v;
    return true;
}

/*
 * Prometheus formats values with strconv.FormatFloat(v, 'f', -1, 64): "NaN", "+Inf", "-Inf".
 * `s` holds `n` bytes and need not end in NUL.
 */
static int promq_value_n(const char *s, size_t n, double *out)
{
    if (n == 3 && memcmp(s, "NaN", 3) == 0) {
        *out = NAN;
        return 0;
    }
    if ((n == 4 && memcmp(s, "+Inf", 4) == 0) || (n == 3 && memcmp(s, "Inf", 3) == 0)) {
        *out = INFINITY;
        return 0;
    }
    if (n == 4 && memcmp(s, "-Inf", 4) == 0) {
        *out = -INFINITY;
        return 0;
    }
    if (promq_fast_decimal(s, n, out))
        return 0;
    /* Only plain decimal notation; strtod alone would also take hex, "inf" and "nan(...)". */
    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789+-.eE", s[i]) || s[i] == '\0')
            return -1;
    char small[64], *buf = n < sizeof(small) ? small : xmalloc(n + 1);
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    /* ERANGE on underflow still yields the nearest value; only overflow is wrong. */
    int rc = end != buf + n || (errno == ERANGE && isinf(v)) ? -1 : 0;
    if (buf != small)
        free(buf);
    if (rc == 0)
        *out = v;
    return rc;
}

static int promq_value(const char *s, double *out)
{
    return promq_value_n(s, strlen(s), out);
}

/* ---- JSON syntax check ------------------------------------------------------------------- */

/*
 * The answer is checked as a whole before anything is extracted, so that a syntax error
 * anywhere wins over a shape error (as when json-c parsed the document first) and the
 * extraction below can rely on well-formed input. The grammar is RFC 8259 with json-c's
 * nesting limit; the errors from PJ_CONTROL on are constructs json-c 0.16 accepts even in
 * strict mode and Prometheus never writes (Go's encoder escapes control characters and
 * writes valid UTF-8): refusing them keeps a mangled answer from passing.
 */
enum pj_err {
    PJ_OK = 0,
    PJ_TRUNCATED, /* the input ends inside a value */
    PJ_SYNTAX,    /* unexpected character */
    PJ_DEPTH,     /* a value inside PROMQ_JSON_DEPTH containers */
    PJ_CONTROL,   /* raw control character in a string */
    PJ_UTF8,      /* invalid UTF-8 (overlong, surrogate, above U+10FFFF, cut short) */
    PJ_NUL,       /* \u0000, which a C string cannot hold */
    PJ_SURROGATE, /* \uD800-\uDFFF not forming a pair */
    PJ_NUMBER,    /* a leading zero, or a '.' without digits on one side */
    PJ_LITERAL,   /* NaN or Infinity */
    PJ_QUOTE,     /* a key in single quotes */
};

static const char *const pj_err_desc[] = {
    [PJ_OK] = "success",
    [PJ_TRUNCATED] = "unexpected end of data",
    [PJ_SYNTAX] = "unexpected character",
    [PJ_DEPTH] = "nesting too deep",
    [PJ_CONTROL] = "control character in a string",
    [PJ_UTF8] = "invalid UTF-8",
    [PJ_NUL] = "\\u0000 in a string",
    [PJ_SURROGATE] = "unpaired UTF-16 surrogate",
    [PJ_NUMBER] = "malformed number",
    [PJ_LITERAL] = "NaN or Infinity literal",
    [PJ_QUOTE] = "key in single quotes",
};

static bool pj_is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool pj_is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Four hex digits at s[i]. */
static enum pj_err pj_check_hex4(const unsigned char *s, size_t len, size_t *i, unsigned *u)
{
    *u = 0;
    for (int k = 0; k < 4; k++, (*i)++) {
        if (*i >= len)
            return PJ_TRUNCATED;
        int h = hex_value(s[*i]);
        if (h < 0)
            return PJ_SYNTAX;
        *u = *u << 4 | (unsigned)h;
    }
    return PJ_OK;
}

/* Length of the valid UTF-8 sequence (Unicode 15, table 3-7) at s, or 0. */
static size_t pj_utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t need;
    if (c >= 0xc2 && c <= 0xdf)
        need = 1;
    else if (c == 0xe0)
        need = 2, lo = 0xa0;
    else if (c == 0xed)
        need = 2, hi = 0x9f;
    else if (c >= 0xe1 && c <= 0xef)
        need = 2;
    else if (c == 0xf0)
        need = 3, lo = 0x90;
    else if (c == 0xf4)
        need = 3, hi = 0x8f;
    else if (c >= 0xf1 && c <= 0xf3)
        need = 3;
    else
        return 0;
    if (n <= need || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k <= need; k++)
        if ((s[k] & 0xc0) != 0x80)
            return 0;
    return need + 1;
}

/* The rest of a string whose opening quote is at s[*i - 1]; *i ends after the closing one. */
static enum pj_err pj_check_string(const unsigned char *s, size_t len, size_t *i)
{
    size_t j = *i;
    enum pj_err r = PJ_OK;
    for (;;) {
        while (j < len && s[j] >= 0x20 && s[j] < 0x80 && s[j] != '"' && s[j] != '\\')
            j++;
        if (j >= len) {
            r = PJ_TRUNCATED;
            break;
        }
        unsigned char c = s[j];
        if (c == '"') {
            j++;
            break;
        }
        if (c < 0x20) {
            r = c == 0 ? PJ_SYNTAX : PJ_CONTROL;
            break;
        }
        if (c >= 0x80) {
            size_t n = pj_utf8_len(s + j, len - j);
            if (n == 0) {
                r = PJ_UTF8;
                break;
            }
            j += n;
            continue;
        }
        /* A backslash. */
        if (++j >= len) {
            r = PJ_TRUNCATED;
            break;
        }
        c = s[j++];
        if (c != 'u') {
            if (!strchr("\"\\/bfnrt", c) || c == '\0') {
                j--;
                r = PJ_SYNTAX;
                break;
            }
            continue;
        }
        unsigned u, lo;
        if ((r = pj_check_hex4(s, len, &j, &u)) != PJ_OK)
            break;
        if (u == 0) {
            r = PJ_NUL;
            break;
        }
        if (u >= 0xdc00 && u <= 0xdfff) {
            r = PJ_SURROGATE;
            break;
        }
        if (u < 0xd800 || u > 0xdbff)
            continue;
        if (j >= len || (s[j] == '\\' && j + 1 >= len)) {
            r = PJ_TRUNCATED;
            break;
        }
        if (s[j] != '\\' || s[j + 1] != 'u') {
            r = PJ_SURROGATE;
            break;
        }
        j += 2;
        if ((r = pj_check_hex4(s, len, &j, &lo)) != PJ_OK)
            break;
        if (lo < 0xdc00 || lo > 0xdfff) {
            r = PJ_SURROGATE;
            break;
        }
    }
    *i = j;
    return r;
}

/*
 * One or more digits at s[*i] (a fraction or an exponent), *i moved past them: PJ_TRUNCATED
 * at the end of the input, `bad` (json-c's error differs by place) on another byte.
 */
static enum pj_err pj_check_digits(const unsigned char *s, size_t len, size_t *i, enum pj_err bad)
{
    if (*i >= len)
        return PJ_TRUNCATED;
    if (!pj_is_digit(s[*i]))
        return bad;
    while (*i < len && pj_is_digit(s[*i]))
        (*i)++;
    return PJ_OK;
}

static enum pj_err pj_check_number(const unsigned char *s, size_t len, size_t *i)
{
    size_t j = *i;
    enum pj_err r = PJ_OK;
    if (s[j] == '-' && ++j < len && s[j] == 'I') {
        r = PJ_LITERAL;
        goto out;
    }
    if (j >= len) {
        r = PJ_TRUNCATED;
        goto out;
    }
    if (s[j] == '.') {
        r = PJ_NUMBER;
        goto out;
    }
    if (s[j] == '0') {
        if (++j < len && pj_is_digit(s[j])) {
            r = PJ_NUMBER;
            goto out;
        }
    } else if (pj_is_digit(s[j])) {
        while (j < len && pj_is_digit(s[j]))
            j++;
    } else {
        r = PJ_SYNTAX;
        goto out;
    }
    if (j < len && s[j] == '.') {
        j++;
        if ((r = pj_check_digits(s, len, &j, PJ_NUMBER)) != PJ_OK)
            goto out;
    }
    if (j < len && (s[j] == 'e' || s[j] == 'E')) {
        j++;
        if (j < len && (s[j] == '+' || s[j] == '-'))
            j++;
        r = pj_check_digits(s, len, &j, PJ_SYNTAX);
    }
out:
    *i = j;
    return r;
}

static enum pj_err pj_check_word(const unsigned char *s, size_t len, size_t *i, const char *word)
{
    for (; *word; word++, (*i)++) {
        if (*i >= len)
            return PJ_TRUNCATED;
        if (s[*i] != (unsigned char)*word)
            return PJ_SYNTAX;
    }
    return PJ_OK;
}

/*
 * Check that body[0 .. len) starts with one JSON value. Returns PJ_OK with *pos just after
 * it (trailing bytes are the caller's business), or the error with *pos at its offset. As
 * with json-c, a number or literal at the top level that reaches the end of the input is
 * truncated (more digits could follow).
 */
static enum pj_err pj_check(const char *body, size_t len, size_t *pos)
{
    const unsigned char *s = (const unsigned char *)body;
    unsigned char stack[PROMQ_JSON_DEPTH]; /* '{' or '[' of each open container */
    size_t depth = 0, i = 0;
    enum { VALUE, KEY, AFTER } state = VALUE;
    enum pj_err r = PJ_OK;
    bool word = false;

    for (;;) {
        if (state == AFTER && depth == 0) {
            /*
             * As json-c: a number or literal that reaches the end could go on, and the first
             * byte after the value and its blanks must not start a multi-byte sequence.
             */
            if (word && i == len) {
                r = PJ_TRUNCATED;
                break;
            }
            size_t j = i;
            while (j < len && pj_is_ws(s[j]))
                j++;
            if (j < len && s[j] >= 0x80) {
                r = PJ_UTF8;
                i = j;
            }
            break;
        }
        while (i < len && pj_is_ws(s[i]))
            i++;
        if (i >= len) {
            r = PJ_TRUNCATED;
            break;
        }
        unsigned char c = s[i];
        if (state == KEY) {
            if (c != '"') {
                r = c == '\'' ? PJ_QUOTE : PJ_SYNTAX;
                break;
            }
            i++;
            if ((r = pj_check_string(s, len, &i)) != PJ_OK)
                break;
            while (i < len && pj_is_ws(s[i]))
                i++;
            if (i >= len) {
                r = PJ_TRUNCATED;
                break;
            }
            if (s[i] != ':') {
                r = PJ_SYNTAX;
                break;
            }
            i++;
            state = VALUE;
        } else if (state == AFTER) {
            unsigned char open = stack[depth - 1];
            if (c == (open == '{' ? '}' : ']')) {
                i++;
                depth--;
            } else if (c == ',') {
                i++;
                state = open == '{' ? KEY : VALUE;
            } else {
                r = PJ_SYNTAX;
                break;
            }
        } else if (depth == PROMQ_JSON_DEPTH) {
            /* json-c's limit counts values: an empty container may sit at the last level. */
            r = PJ_DEPTH;
            break;
        } else if (c == '{' || c == '[') {
            stack[depth++] = c;
            i++;
            while (i < len && pj_is_ws(s[i]))
                i++;
            if (i < len && s[i] == (c == '{' ? '}' : ']')) {
                i++;
                depth--;
                state = AFTER;
            } else {
                state = c == '{' ? KEY : VALUE;
            }
        } else {
            word = depth == 0;
            if (c == '"') {
                i++;
                word = false;
                r = pj_check_string(s, len, &i);
            } else if (c == '-' || pj_is_digit(c)) {
                r = pj_check_number(s, len, &i);
            } else if (c == 't') {
                r = pj_check_word(s, len, &i, "true");
            } else if (c == 'f') {
                r = pj_check_word(s, len, &i, "false");
            } else if (c == 'n') {
                r = pj_check_word(s, len, &i, "null");
            } else {
                r = c == 'N' || c == 'I' ? PJ_LITERAL : PJ_SYNTAX;
            }
            if (r != PJ_OK)
                break;
            state = AFTER;
        }
    }
    *pos = i;
    return r;
}

/* ---- extraction -------------------------------------------------------------------------- */

/*
 * Everything below walks a document pj_check accepted, by offsets into it. Where a key
 * occurs twice the last one counts, as in json-c (a label keeps the place of its first
 * occurrence, which only matters for which error is reported first).
 */
#define PJ_NONE SIZE_MAX

struct pj_label {
    size_t name;  /* offset of the decoded name in pj.names */
    size_t value; /* offset of the value in the document */
    size_t order; /* position in the object */
    const char *p;
};

struct pj {
    const char *s;
    size_t len;
    size_t hint;       /* points in the previous series; the next one likely has as many */
    struct sbuf names; /* decoded label names of the current series */
    struct pj_label *lab;
    size_t nlab, caplab;
};

/* Where a [time, value] pair sits, for messages (formatted only on error). */
struct pj_path {
    int kind; /* 0: data.result, 1: data.result[i].value, 2: data.result[i].values[j] */
    size_t i, j;
};

static void pj_path_fmt(const struct pj_path *p, char *buf, size_t len)
{
    if (p->kind == 0)
        snprintf(buf, len, "data.result");
    else if (p->kind == 1)
        snprintf(buf, len, "data.result[%zu].value", p->i);
    else
        snprintf(buf, len, "data.result[%zu].values[%zu]", p->i, p->j);
}

static size_t pj_ws(const struct pj *c, size_t i)
{
    while (i < c->len && pj_is_ws((unsigned char)c->s[i]))
        i++;
    return i;
}

static char pj_at(const struct pj *c, size_t i)
{
    return i < c->len ? c->s[i] : '\0';
}

/* End of the string whose opening quote is at i; *esc tells whether it holds a backslash. */
static size_t pj_string_end(const struct pj *c, size_t i, bool *esc)
{
    bool e = false;
    for (i++; i < c->len && c->s[i] != '"'; i++) {
        if (c->s[i] == '\\') {
            e = true;
            i++;
        }
    }
    if (esc)
        *esc = e;
    return i + 1;
}

static size_t pj_skip(const struct pj *c, size_t i)
{
    char ch = pj_at(c, i);
    if (ch == '"')
        return pj_string_end(c, i, NULL);
    if (ch == '{' || ch == '[') {
        size_t depth = 0;
        while (i < c->len) {
            ch = c->s[i];
            if (ch == '"') {
                i = pj_string_end(c, i, NULL);
                continue;
            }
            i++;
            if (ch == '{' || ch == '[')
                depth++;
            else if ((ch == '}' || ch == ']') && --depth == 0)
                break;
        }
        return i;
    }
    while (i < c->len && !pj_is_ws((unsigned char)c->s[i]) && !strchr(",]}", c->s[i]))
        i++;
    return i;
}

/*
 * Decode the string [i, end) (quotes included) into buf, which has room for end - i bytes:
 * escapes never make a string longer. pj_check has vetted every escape.
 */
static size_t pj_decode(const struct pj *c, size_t i, size_t end, char *buf)
{
    const char *s = c->s;
    size_t n = 0;
    for (i++, end--; i < end; i++) {
        if (s[i] != '\\') {
            buf[n++] = s[i];
            continue;
        }
        char e = s[++i];
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        if (e != 'u') {
            buf[n++] = to[strchr(from, e) - from];
            continue;
        }
        unsigned u = 0;
        for (int k = 0; k < 4; k++)
            u = u << 4 | (unsigned)hex_value((unsigned char)s[++i]);
        if (u >= 0xd800 && u <= 0xdbff) {
            unsigned lo = 0;
            i += 2;
            for (int k = 0; k < 4; k++)
                lo = lo << 4 | (unsigned)hex_value((unsigned char)s[++i]);
            u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
        }
        n += utf8_encode(u, buf + n);
    }
    buf[n] = '\0';
    return n;
}

/* The string at i as a new C string. */
static char *pj_strdup(const struct pj *c, size_t i)
{
    size_t end = pj_string_end(c, i, NULL);
    char *buf = xmalloc(end - i);
    pj_decode(c, i, end, buf);
    return buf;
}

/* Whether the key at i (a string) decodes to `key`; *val is set to its value's offset. */
static bool pj_key_is(const struct pj *c, size_t i, size_t end, bool esc, const char *key)
{
    size_t n = strlen(key);
    if (!esc)
        return end - i - 2 == n && memcmp(c->s + i + 1, key, n) == 0;
    char buf[64];
    if (end - i > sizeof(buf))
        return false;
    return pj_decode(c, i, end, buf) == n && memcmp(buf, key, n) == 0;
}

/*
 * Object iteration: pj_first at the '{', pj_next after a member's value; both return the
 * offset of the next key's opening quote, or PJ_NONE after the closing '}'.
 */
static size_t pj_member(const struct pj *c, size_t i, bool first, size_t *after_brace)
{
    i = pj_ws(c, first ? i + 1 : i);
    if (pj_at(c, i) == ',')
        i = pj_ws(c, i + 1);
    else if (pj_at(c, i) != '"') {
        *after_brace = i + 1;
        return PJ_NONE;
    }
    return i;
}

/* After the key ending at end: the offset of its value. */
static size_t pj_value_of(const struct pj *c, size_t end)
{
    return pj_ws(c, pj_ws(c, end) + 1);
}

/*
 * A JSON number as json-c 0.16 reads it: without '.', 'e' or 'E' it is an integer
 * (strtoll / strtoull, saturating) converted to double, otherwise strtod.
 */
static double pj_number(const struct pj *c, size_t i, size_t *end)
{
    const char *s = c->s;
    size_t a = i;
    bool neg = s[i] == '-', dbl = false, exp = false;
    uint64_t m = 0;
    unsigned digits = 0, frac = 0;
    i += neg;
    for (; i < c->len && pj_is_digit((unsigned char)s[i]); i++, digits++)
        if (digits < 19)
            m = m * 10 + (uint64_t)(s[i] - '0');
    if (i < c->len && s[i] == '.') {
        dbl = true;
        for (i++; i < c->len && pj_is_digit((unsigned char)s[i]); i++, digits++, frac++)
            if (digits < 19)
                m = m * 10 + (uint64_t)(s[i] - '0');
    }
    if (i < c->len && (s[i] == 'e' || s[i] == 'E')) {
        dbl = exp = true;
        for (i++; i < c->len && (pj_is_digit((unsigned char)s[i]) || s[i] == '+' || s[i] == '-');
             i++)
            ;
    }
    *end = i;
    if (!dbl && digits <= 18)
        return neg ? (double)-(int64_t)m : (double)m;
    if (dbl && !exp && digits <= 15) {
        double v = (double)m / promq_pow10[frac];
        return neg ? -v : v;
    }
    char small[64], *buf = i - a < sizeof(small) ? small : xmalloc(i - a + 1);
    memcpy(buf, s + a, i - a);
    buf[i - a] = '\0';
    double v;
    if (dbl)
        v = strtod(buf, NULL);
    else if (neg)
        v = (double)strtoll(buf, NULL, 10);
    else
        v = (double)strtoull(buf, NULL, 10);
    if (buf != small)
        free(buf);
    return v;
}

/* The pair at i, the slow way, checking in the order messages are reported. */
static int pj_pair_slow(const struct pj *c, size_t i, const struct pj_path *path, struct point *p,
                        size_t *end, char *err, size_t errlen)
{
    char what[64];
    size_t t = PJ_NONE, v = PJ_NONE, k;
    if (pj_at(c, i) == '[') {
        size_t n = 0;
        k = pj_ws(c, i + 1);
        if (pj_at(c, k) != ']') {
            for (;;) {
                if (n == 0)
                    t = k;
                else if (n == 1)
                    v = k;
                n++;
                k = pj_ws(c, pj_skip(c, k));
                if (pj_at(c, k) != ',')
                    break;
                k = pj_ws(c, k + 1);
            }
        }
        *end = k + 1;
        if (n != 2)
            t = PJ_NONE;
    }
    pj_path_fmt(path, what, sizeof(what));
    if (t == PJ_NONE) {
        snprintf(err, errlen, "prometheus answer: '%s' is not a [time, value] pair", what);
        return -1;
    }
    char tc = pj_at(c, t);
    if (tc != '-' && !pj_is_digit((unsigned char)tc)) {
        snprintf(err, errlen, "prometheus answer: time in '%s' is not a number", what);
        return -1;
    }
    p->t = pj_number(c, t, &k);
    if (!isfinite(p->t)) {
        snprintf(err, errlen, "prometheus answer: time in '%s' is not finite", what);
        return -1;
    }
    if (pj_at(c, v) != '"') {
        snprintf(err, errlen, "prometheus answer: value in '%s' is not a string", what);
        return -1;
    }
    char *s = pj_strdup(c, v);
    int rc = promq_value(s, &p->v);
    if (rc < 0)
        snprintf(err, errlen, "prometheus answer: value '%.40s' in '%s' is not a number", s, what);
    free(s);
    return rc;
}

/*
 * `[<unix_time>, "<value>"]` at i; *end is set after it on success. The fast path covers
 * the only shape Prometheus writes, [number, "string without escapes"]; anything else goes
 * through pj_pair_slow, which reports the same errors in the same order.
 */
static int pj_pair(const struct pj *c, size_t i, const struct pj_path *path, struct point *p,
                   size_t *end, char *err, size_t errlen)
{
    const char *s = c->s;
    size_t k = pj_ws(c, i + 1), v0, v1;
    char ch = pj_at(c, k);
    if (pj_at(c, i) != '[' || (ch != '-' && !pj_is_digit((unsigned char)ch)))
        return pj_pair_slow(c, i, path, p, end, err, errlen);
    double t = pj_number(c, k, &k);
    k = pj_ws(c, k);
    if (pj_at(c, k) != ',')
        return pj_pair_slow(c, i, path, p, end, err, errlen);
    v0 = pj_ws(c, k + 1);
    if (pj_at(c, v0) != '"')
        return pj_pair_slow(c, i, path, p, end, err, errlen);
    const char *q = memchr(s + v0 + 1, '"', c->len - v0 - 1);
    if (!q || memchr(s + v0 + 1, '\\', (size_t)(q - s) - v0 - 1))
        return pj_pair_slow(c, i, path, p, end, err, errlen);
    v1 = (size_t)(q - s);
    k = pj_ws(c, v1 + 1);
    if (pj_at(c, k) != ']' || !isfinite(t))
        return pj_pair_slow(c, i, path, p, end, err, errlen);
    if (promq_value_n(s + v0 + 1, v1 - v0 - 1, &p->v) < 0)
        return pj_pair_slow(c, i, path, p, end, err, errlen);
    p->t = t;
    *end = k + 1;
    return 0;
}

/* The `values` array at i into se; on error returns -1 with the message. */
static int pj_values(struct pj *c, size_t i, size_t idx, struct series *se, size_t *end, char *err,
                     size_t errlen)
{
    if (pj_at(c, i) != '[') {
        snprintf(err, errlen, "prometheus answer: 'data.result[%zu].values' is not an array", idx);
        return -1;
    }
    size_t cap = c->hint ? c->hint : 16, n = 0;
    struct point *p = NULL;
    size_t k = pj_ws(c, i + 1);
    if (pj_at(c, k) != ']') {
        p = xmalloc(cap * sizeof(*p));
        for (;;) {
            if (n == cap) {
                cap *= 2;
                p = xrealloc(p, cap * sizeof(*p));
            }
            struct pj_path path = {2, idx, n};
            if (pj_pair(c, k, &path, &p[n], &k, err, errlen) < 0)
                goto fail;
            /* decide() walks points in order to find gaps; never hand it a shuffled series. */
            if (n > 0 && !(p[n].t > p[n - 1].t)) {
                snprintf(err, errlen,
                         "prometheus answer: timestamps in 'data.result[%zu]' are not ascending",
                         idx);
                goto fail;
            }
            n++;
            k = pj_ws(c, k);
            if (pj_at(c, k) != ',')
                break;
            k = pj_ws(c, k + 1);
        }
        if (n < cap)
            p = xrealloc(p, n * sizeof(*p));
    }
    *end = k + 1;
    se->p = p;
    se->n = n;
    c->hint = n;
    return 0;
fail:
    free(p);
    return -1;
}

static int pj_label_cmp(const void *a, const void *b)
{
    const struct pj_label *x = a, *y = b;
    int c = strcmp(x->p, y->p);
    return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

/* Sort by name, then position; Prometheus already sorts them, so check that first. */
static void pj_sort_labels(struct pj_label *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (strcmp(v[i - 1].p, v[i].p) >= 0) {
            qsort(v, n, sizeof(*v), pj_label_cmp);
            return;
        }
    }
}

/* End of the group of equal names starting at k (sorted), i.e. its last entry. */
static size_t pj_label_last(const struct pj *c, size_t k)
{
    while (k + 1 < c->nlab && strcmp(c->lab[k].p, c->lab[k + 1].p) == 0)
        k++;
    return k;
}

/* The `metric` object at i into ls. */
static int pj_metric(struct pj *c, size_t i, size_t idx, struct labels *ls, char *err,
                     size_t errlen)
{
    if (pj_at(c, i) != '{') {
        snprintf(err, errlen, "prometheus answer: 'data.result[%zu].metric' is not an object", idx);
        return -1;
    }
    sbuf_reset(&c->names);
    c->nlab = 0;
    size_t after;
    for (size_t k = pj_member(c, i, true, &after); k != PJ_NONE;
         k = pj_member(c, k, false, &after)) {
        size_t kend = pj_string_end(c, k, NULL);
        if (c->nlab == c->caplab) {
            c->caplab = c->caplab ? 2 * c->caplab : 16;
            c->lab = xrealloc(c->lab, c->caplab * sizeof(*c->lab));
        }
        struct pj_label *l = &c->lab[c->nlab];
        l->name = c->names.len;
        l->order = c->nlab++;
        char small[256], *buf = kend - k <= sizeof(small) ? small : xmalloc(kend - k);
        size_t n = pj_decode(c, k, kend, buf);
        sbuf_add(&c->names, buf, n + 1);
        if (buf != small)
            free(buf);
        l->value = pj_value_of(c, kend);
        k = pj_skip(c, l->value);
    }
    for (size_t k = 0; k < c->nlab; k++)
        c->lab[k].p = c->names.buf + c->lab[k].name;
    pj_sort_labels(c->lab, c->nlab);

    /* A name given twice keeps its last value; report the first non-string by position. */
    size_t bad = PJ_NONE, bad_order = PJ_NONE, groups = 0;
    for (size_t k = 0; k < c->nlab; k++) {
        size_t last = pj_label_last(c, k);
        groups++;
        if (pj_at(c, c->lab[last].value) != '"' && c->lab[k].order < bad_order) {
            bad = last;
            bad_order = c->lab[k].order;
        }
        k = last;
    }
    if (bad != PJ_NONE) {
        snprintf(err, errlen,
                 "prometheus answer: label '%.64s' of 'data.result[%zu]' is not a string",
                 c->lab[bad].p, idx);
        return -1;
    }
    ls->v = groups ? xmalloc(groups * sizeof(*ls->v)) : NULL;
    ls->n = 0;
    for (size_t k = 0; k < c->nlab; k++) {
        k = pj_label_last(c, k);
        ls->v[ls->n].name = xstrdup(c->lab[k].p);
        ls->v[ls->n].value = pj_strdup(c, c->lab[k].value);
        ls->n++;
    }
    return 0;
}

static struct series *pj_push(struct matrix *m, size_t *cap)
{
    if (m->n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        m->s = xrealloc(m->s, *cap * sizeof(*m->s));
    }
    struct series *s = &m->s[m->n++];
    memset(s, 0, sizeof(*s));
    return s;
}

/* Element idx of data.result at i. Errors of `value(s)` wait until the key scan is done. */
static int pj_series(struct pj *c, size_t i, size_t idx, bool matrix, struct matrix *m, size_t *cap,
                     size_t *end, char *err, size_t errlen)
{
    if (pj_at(c, i) != '{') {
        snprintf(err, errlen, "prometheus answer: 'data.result[%zu]' is not an object", idx);
        return -1;
    }
    bool histograms = false;
    size_t metric = PJ_NONE, value = PJ_NONE, after;
    struct series tmp = {0};
    int vrc = 0;
    char verr[256] = "";
    for (size_t k = pj_member(c, i, true, &after); k != PJ_NONE;
         k = pj_member(c, k, false, &after)) {
        bool esc;
        size_t kend = pj_string_end(c, k, &esc), v = pj_value_of(c, kend);
        if (pj_key_is(c, k, kend, esc, "histograms") || pj_key_is(c, k, kend, esc, "histogram")) {
            histograms = true;
        } else if (pj_key_is(c, k, kend, esc, "metric")) {
            metric = v;
        } else if (matrix && pj_key_is(c, k, kend, esc, "values")) {
            value = v;
            free(tmp.p);
            tmp = (struct series){0};
            vrc = pj_values(c, v, idx, &tmp, &k, verr, sizeof(verr));
            if (vrc == 0)
                continue;
        } else if (!matrix && pj_key_is(c, k, kend, esc, "value")) {
            value = v;
        }
        k = pj_skip(c, v);
    }
    *end = after;
    if (histograms) {
        free(tmp.p);
        snprintf(err, errlen,
                 "prometheus answer: 'data.result[%zu]' holds native histograms, which are not "
                 "supported",
                 idx);
        return -1;
    }
    struct series *s = pj_push(m, cap);
    if (metric != PJ_NONE && pj_metric(c, metric, idx, &s->labels, err, errlen) < 0) {
        free(tmp.p);
        return -1;
    }
    if (matrix) {
        if (value == PJ_NONE) {
            snprintf(err, errlen, "prometheus answer: 'data.result[%zu].values' is not an array",
                     idx);
            return -1;
        }
        if (vrc < 0) {
            snprintf(err, errlen, "%s", verr);
            return -1;
        }
        s->p = tmp.p;
        s->n = tmp.n;
        return 0;
    }
    if (value == PJ_NONE) {
        snprintf(err, errlen, "prometheus answer: 'data.result[%zu]' has no 'value'", idx);
        return -1;
    }
    s->p = xmalloc(sizeof(*s->p));
    s->n = 1;
    struct pj_path path = {1, idx, 0};
    size_t pend;
    return pj_pair(c, value, &path, &s->p[0], &pend, err, errlen);
}

/* data.result at i, of type `got`; *end is set after it, also on error. */
static int pj_result(struct pj *c, size_t i, unsigned got, struct matrix *m, size_t *end, char *err,
                     size_t errlen)
{
    *m = (struct matrix){0};
    int rc = -1;
    if (got == PROMQ_SCALAR) {
        struct series *s = matrix_push(m);
        s->p = xmalloc(sizeof(*s->p));
        s->n = 1;
        struct pj_path path = {0, 0, 0};
        rc = pj_pair(c, i, &path, &s->p[0], end, err, errlen);
    } else if (pj_at(c, i) != '[') {
        snprintf(err, errlen, "prometheus answer: 'data.result' is not an array");
    } else {
        size_t cap = 0, idx = 0, k = pj_ws(c, i + 1);
        rc = 0;
        if (pj_at(c, k) != ']') {
            for (;; idx++) {
                if (pj_series(c, k, idx, got == PROMQ_MATRIX, m, &cap, &k, err, errlen) < 0) {
                    rc = -1;
                    break;
                }
                k = pj_ws(c, k);
                if (pj_at(c, k) != ',')
                    break;
                k = pj_ws(c, k + 1);
            }
        }
        if (rc == 0) {
            *end = k + 1;
            if (m->n < cap)
                m->s = xrealloc(m->s, m->n * sizeof(*m->s));
        }
    }
    if (rc < 0) {
        matrix_free(m);
        *end = pj_skip(c, i);
    }
    return rc;
}

static const char *promq_type_desc(unsigned want)
{
    switch (want) {
    case PROMQ_MATRIX:
        return "a matrix";
    case PROMQ_VECTOR | PROMQ_SCALAR:
        return "a vector or scalar";
    default:
        return "a matrix, vector or scalar";
    }
}

/* resultType's string at i, as PROMQ_* (0 when unknown or not a string). */
static unsigned pj_result_type(const struct pj *c, size_t i, char *name, size_t namelen)
{
    name[0] = '\0';
    if (pj_at(c, i) != '"')
        return 0;
    char *s = pj_strdup(c, i);
    snprintf(name, namelen, "%s", s);
    unsigned got = strcmp(s, "matrix") == 0   ? PROMQ_MATRIX
                   : strcmp(s, "vector") == 0 ? PROMQ_VECTOR
                   : strcmp(s, "scalar") == 0 ? PROMQ_SCALAR
                                              : 0;
    free(s);
    return got;
}

/*
 * The `data` object at i. The result is parsed when its key is met (Prometheus writes
 * resultType first), so the big array is read once; a later resultType or result (only in
 * a hand-made answer) makes it parse again from the positions of the last ones.
 */
static int pj_data(struct pj *c, size_t i, unsigned want, struct matrix *m, size_t *end, char *err,
                   size_t errlen)
{
    *m = (struct matrix){0};
    if (pj_at(c, i) != '{') {
        *end = pj_skip(c, i);
        snprintf(err, errlen, "prometheus answer: 'data' is missing or not an object");
        return -1;
    }
    size_t rt = PJ_NONE, res = PJ_NONE, used_rt = PJ_NONE, used_res = PJ_NONE, after;
    struct matrix early = {0};
    int early_rc = -1;
    char early_err[256] = "", name[40];
    for (size_t k = pj_member(c, i, true, &after); k != PJ_NONE;
         k = pj_member(c, k, false, &after)) {
        bool esc;
        size_t kend = pj_string_end(c, k, &esc), v = pj_value_of(c, kend);
        if (pj_key_is(c, k, kend, esc, "resultType")) {
            rt = v;
        } else if (pj_key_is(c, k, kend, esc, "result")) {
            res = v;
            unsigned got = rt == PJ_NONE ? 0 : pj_result_type(c, rt, name, sizeof(name));
            if (got & want) {
                matrix_free(&early);
                early_rc = pj_result(c, v, got, &early, &k, early_err, sizeof(early_err));
                used_rt = rt;
                used_res = v;
                continue;
            }
        }
        k = pj_skip(c, v);
    }
    *end = after;

    int rc = -1;
    unsigned got = rt == PJ_NONE ? 0 : pj_result_type(c, rt, name, sizeof(name));
    if (rt == PJ_NONE || pj_at(c, rt) != '"') {
        snprintf(err, errlen, "prometheus answer: 'data.resultType' is missing or not a string");
    } else if (!(got & want)) {
        snprintf(err, errlen, "prometheus answer: expected %s, got resultType '%.32s'",
                 promq_type_desc(want), name);
    } else if (res == PJ_NONE) {
        snprintf(err, errlen, "prometheus answer: 'data.result' is missing");
    } else if (used_rt == rt && used_res == res) {
        rc = early_rc;
        *m = early;
        early = (struct matrix){0};
        if (rc < 0)
            snprintf(err, errlen, "%s", early_err);
    } else {
        size_t rend;
        rc = pj_result(c, res, got, m, &rend, err, errlen);
    }
    matrix_free(&early);
    return rc;
}

static bool promq_is_2xx(long status)
{
    return status >= 200 && status < 300;
}

/* The envelope at i (an object); on success fill `m`. */
static int pj_envelope(struct pj *c, size_t i, long http_status, unsigned want, struct matrix *m,
                       char *err, size_t errlen)
{
    size_t status = PJ_NONE, etype = PJ_NONE, error = PJ_NONE, warnings = PJ_NONE, after;
    size_t data = PJ_NONE;
    struct matrix dm = {0};
    int drc = -1;
    char derr[256] = "";
    for (size_t k = pj_member(c, i, true, &after); k != PJ_NONE;
         k = pj_member(c, k, false, &after)) {
        bool esc;
        size_t kend = pj_string_end(c, k, &esc), v = pj_value_of(c, kend);
        if (pj_key_is(c, k, kend, esc, "status")) {
            status = v;
        } else if (pj_key_is(c, k, kend, esc, "errorType")) {
            etype = v;
        } else if (pj_key_is(c, k, kend, esc, "error")) {
            error = v;
        } else if (pj_key_is(c, k, kend, esc, "warnings")) {
            warnings = v;
        } else if (pj_key_is(c, k, kend, esc, "data")) {
            /* Parsed now, reported below in the order of the checks. */
            data = v;
            matrix_free(&dm);
            drc = pj_data(c, v, want, &dm, &k, derr, sizeof(derr));
            continue;
        }
        k = pj_skip(c, v);
    }

    int rc = -1;
    char *st = status != PJ_NONE && pj_at(c, status) == '"' ? pj_strdup(c, status) : NULL;
    if (st && strcmp(st, "error") == 0) {
        char *type = etype != PJ_NONE && pj_at(c, etype) == '"' ? pj_strdup(c, etype) : NULL;
        char *msg = error != PJ_NONE && pj_at(c, error) == '"' ? pj_strdup(c, error) : NULL;
        snprintf(err, errlen, "prometheus error (%s): %s", type ? type : "unknown",
                 msg ? msg : "(no message)");
        free(type);
        free(msg);
    } else if (!promq_is_2xx(http_status)) {
        /* A 2xx-less answer without the error envelope comes from something in front of it. */
        snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
    } else if (!st) {
        snprintf(err, errlen, "prometheus answer: 'status' is missing or not a string");
    } else if (strcmp(st, "success") != 0) {
        snprintf(err, errlen, "prometheus answer: unknown status '%.32s'", st);
    } else if (warnings != PJ_NONE && pj_at(c, warnings) != 'n' && pj_at(c, warnings) != '[') {
        snprintf(err, errlen, "prometheus answer: 'warnings' is not an array");
    } else if (warnings != PJ_NONE && pj_at(c, warnings) == '[' &&
               pj_at(c, pj_ws(c, warnings + 1)) != ']') {
        size_t w = pj_ws(c, warnings + 1);
        char *ws = pj_at(c, w) == '"' ? pj_strdup(c, w) : NULL;
        snprintf(err, errlen, "partial answer: %s", ws ? ws : "(warning is not a string)");
        free(ws);
    } else if (data == PJ_NONE) {
        snprintf(err, errlen, "prometheus answer: 'data' is missing or not an object");
    } else {
        rc = drc;
        if (rc == 0) {
            *m = dm;
            dm = (struct matrix){0};
        } else {
            snprintf(err, errlen, "%s", derr);
        }
    }
    free(st);
    matrix_free(&dm);
    return rc;
}

static int promq_parse_as(const char *body, size_t len, long http_status, unsigned want,
                          struct matrix *out, char *err, size_t errlen)
{
    *out = (struct matrix){0};
    size_t end = 0;
    enum pj_err jerr = len ? pj_check(body, len, &end) : PJ_TRUNCATED;
    if (jerr != PJ_OK) {
        if (!promq_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else if (len == 0)
            snprintf(err, errlen, "empty answer from prometheus");
        else if (jerr == PJ_TRUNCATED)
            snprintf(err, errlen, "truncated JSON from prometheus (%zu bytes)", len);
        else
            snprintf(err, errlen, "invalid JSON from prometheus at offset %zu: %s", end,
                     pj_err_desc[jerr]);
        return -1;
    }
    size_t start = 0;
    while (start < len && pj_is_ws((unsigned char)body[start]))
        start++;
    while (end < len && pj_is_ws((unsigned char)body[end]))
        end++;
    if (end < len) {
        if (!promq_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else
            snprintf(err, errlen, "invalid JSON from prometheus: trailing data at offset %zu", end);
        return -1;
    }
    if (body[start] != '{') {
        if (!promq_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else
            snprintf(err, errlen, "prometheus answer is not a JSON object");
        return -1;
    }
    struct pj c = {.s = body, .len = len};
    int ret = pj_envelope(&c, start, http_status, want, out, err, errlen);
    sbuf_free(&c.names);
    free(c.lab);
    if (ret < 0)
        matrix_free(out);
    return ret;
}

int promq_parse(const char *body, size_t len, long http_status, struct matrix *out, char *err,
                size_t errlen)
{
    return promq_parse_as(body, len, http_status, PROMQ_ANY, out, err, errlen);
}

/* ---- json-c reference parser (tests and fuzzing only) ------------------------------------ */

#ifdef PROMQ_JSONC_REFERENCE
/*
 * The parser promq used before pj_*: json-c builds the whole document, then promq walks it.
 * Kept verbatim (with json-c in strict mode) so tests and fuzz/fuzz_promq.c can check that
 * the new parser gives the same matrix, or an error of the same class, on every input.
 */
#include <json-c/json.h>

/* Prometheus formats values with strconv.FormatFloat(v, 'f', -1, 64): "NaN", "+Inf", "-Inf". */
static int promq_ref_value(const char *s, double *out)
{
    if (strcmp(s, "NaN") == 0) {
        *out = NAN;
        return 0;
    }
    if (strcmp(s, "+Inf") == 0 || strcmp(s, "Inf") == 0) {
        *out = INFINITY;
        return 0;
    }
    if (strcmp(s, "-Inf") == 0) {
        *out = -INFINITY;
        return 0;
    }
    /* Only plain decimal notation; strtod alone would also take hex, "inf" and "nan(...)". */
    if (s[0] == '\0' || strspn(s, "0123456789+-.eE") != strlen(s))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* ERANGE on underflow still yields the nearest value; only overflow is wrong. */
    if (end == s || *end != '\0' || (errno == ERANGE && isinf(v)))
        return -1;
    *out = v;
    return 0;
}

/* Parse `[<unix_time>, "<value>"]` at `what` (a JSON path for messages). */
static int promq_ref_pair(json_object *o, const char *what, struct point *p, char *err,
                          size_t errlen)
{
    if (!json_object_is_type(o, json_type_array) || json_object_array_length(o) != 2) {
        snprintf(err, errlen, "prometheus answer: '%s' is not a [time, value] pair", what);
        return -1;
    }
    json_object *t = json_object_array_get_idx(o, 0);
    json_object *v = json_object_array_get_idx(o, 1);
    if (!json_object_is_type(t, json_type_double) && !json_object_is_type(t, json_type_int)) {
        snprintf(err, errlen, "prometheus answer: time in '%s' is not a number", what);
        return -1;
    }
    p->t = json_object_get_double(t);
    if (!isfinite(p->t)) {
        snprintf(err, errlen, "prometheus answer: time in '%s' is not finite", what);
        return -1;
    }
    if (!json_object_is_type(v, json_type_string)) {
        snprintf(err, errlen, "prometheus answer: value in '%s' is not a string", what);
        return -1;
    }
    if (promq_ref_value(json_object_get_string(v), &p->v) < 0) {
        snprintf(err, errlen, "prometheus answer: value '%.40s' in '%s' is not a number",
                 json_object_get_string(v), what);
        return -1;
    }
    return 0;
}

static int promq_ref_metric(json_object *el, size_t i, struct series *s, char *err, size_t errlen)
{
    json_object *metric;
    if (!json_object_object_get_ex(el, "metric", &metric)) {
        /* Prometheus omits nothing here, but an empty label set is harmless. */
        return 0;
    }
    if (!json_object_is_type(metric, json_type_object)) {
        snprintf(err, errlen, "prometheus answer: 'data.result[%zu].metric' is not an object", i);
        return -1;
    }
    json_object_object_foreach(metric, name, val)
    {
        if (!json_object_is_type(val, json_type_string)) {
            snprintf(err, errlen,
                     "prometheus answer: label '%.64s' of 'data.result[%zu]' is not a string", name,
                     i);
            return -1;
        }
        labels_set(&s->labels, name, json_object_get_string(val));
    }
    return 0;
}

static int promq_ref_series(json_object *el, size_t i, bool matrix, struct matrix *m, char *err,
                            size_t errlen)
{
    char what[64];
    if (!json_object_is_type(el, json_type_object)) {
        snprintf(err, errlen, "prometheus answer: 'data.result[%zu]' is not an object", i);
        return -1;
    }
    if (json_object_object_get_ex(el, "histograms", NULL) ||
        json_object_object_get_ex(el, "histogram", NULL)) {
        snprintf(err, errlen,
                 "prometheus answer: 'data.result[%zu]' holds native histograms, which are not "
                 "supported",
                 i);
        return -1;
    }
    struct series *s = matrix_push(m);
    if (promq_ref_metric(el, i, s, err, errlen) < 0)
        return -1;

    json_object *vals;
    if (!matrix) {
        if (!json_object_object_get_ex(el, "value", &vals)) {
            snprintf(err, errlen, "prometheus answer: 'data.result[%zu]' has no 'value'", i);
            return -1;
        }
        snprintf(what, sizeof(what), "data.result[%zu].value", i);
        s->p = xmalloc(sizeof(*s->p));
        s->n = 1;
        return promq_ref_pair(vals, what, &s->p[0], err, errlen);
    }
    if (!json_object_object_get_ex(el, "values", &vals) ||
        !json_object_is_type(vals, json_type_array)) {
        snprintf(err, errlen, "prometheus answer: 'data.result[%zu].values' is not an array", i);
        return -1;
    }
    size_t n = json_object_array_length(vals);
    s->p = n ? xmalloc(n * sizeof(*s->p)) : NULL;
    for (size_t j = 0; j < n; j++) {
        snprintf(what, sizeof(what), "data.result[%zu].values[%zu]", i, j);
        if (promq_ref_pair(json_object_array_get_idx(vals, j), what, &s->p[j], err, errlen) < 0)
            return -1;
        s->n = j + 1;
        /* decide() walks points in order to find gaps; never hand it a shuffled series. */
        if (j > 0 && !(s->p[j].t > s->p[j - 1].t)) {
            snprintf(err, errlen,
                     "prometheus answer: timestamps in 'data.result[%zu]' are not "
                     "ascending",
                     i);
            return -1;
        }
    }
    return 0;
}

static int promq_ref_data(json_object *root, unsigned want, struct matrix *m, char *err,
                          size_t errlen)
{
    json_object *data, *rt, *result;
    if (!json_object_object_get_ex(root, "data", &data) ||
        !json_object_is_type(data, json_type_object)) {
        snprintf(err, errlen, "prometheus answer: 'data' is missing or not an object");
        return -1;
    }
    if (!json_object_object_get_ex(data, "resultType", &rt) ||
        !json_object_is_type(rt, json_type_string)) {
        snprintf(err, errlen, "prometheus answer: 'data.resultType' is missing or not a string");
        return -1;
    }
    const char *type = json_object_get_string(rt);
    unsigned got = strcmp(type, "matrix") == 0   ? PROMQ_MATRIX
                   : strcmp(type, "vector") == 0 ? PROMQ_VECTOR
                   : strcmp(type, "scalar") == 0 ? PROMQ_SCALAR
                                                 : 0;
    if (!(got & want)) {
        snprintf(err, errlen, "prometheus answer: expected %s, got resultType '%.32s'",
                 promq_type_desc(want), type);
        return -1;
    }
    if (!json_object_object_get_ex(data, "result", &result)) {
        snprintf(err, errlen, "prometheus answer: 'data.result' is missing");
        return -1;
    }
    if (got == PROMQ_SCALAR) {
        struct series *s = matrix_push(m);
        s->p = xmalloc(sizeof(*s->p));
        s->n = 1;
        return promq_ref_pair(result, "data.result", &s->p[0], err, errlen);
    }
    if (!json_object_is_type(result, json_type_array)) {
        snprintf(err, errlen, "prometheus answer: 'data.result' is not an array");
        return -1;
    }
    size_t n = json_object_array_length(result);
    for (size_t i = 0; i < n; i++)
        if (promq_ref_series(json_object_array_get_idx(result, i), i, got == PROMQ_MATRIX, m, err,
                             errlen) < 0)
            return -1;
    return 0;
}

/* Interpret the envelope; on success fill `m`. */
static int promq_ref_envelope(json_object *root, long http_status, unsigned want, struct matrix *m,
                              char *err, size_t errlen)
{
    json_object *st, *o;
    const char *status = NULL;
    if (json_object_object_get_ex(root, "status", &st) && json_object_is_type(st, json_type_string))
        status = json_object_get_string(st);

    if (status && strcmp(status, "error") == 0) {
        const char *type = "unknown", *msg = "(no message)";
        if (json_object_object_get_ex(root, "errorType", &o) &&
            json_object_is_type(o, json_type_string))
            type = json_object_get_string(o);
        if (json_object_object_get_ex(root, "error", &o) &&
            json_object_is_type(o, json_type_string))
            msg = json_object_get_string(o);
        snprintf(err, errlen, "prometheus error (%s): %s", type, msg);
        return -1;
    }
    /* A 2xx-less answer without the error envelope comes from something in front of it. */
    if (!promq_is_2xx(http_status)) {
        snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        return -1;
    }
    if (!status) {
        snprintf(err, errlen, "prometheus answer: 'status' is missing or not a string");
        return -1;
    }
    if (strcmp(status, "success") != 0) {
        snprintf(err, errlen, "prometheus answer: unknown status '%.32s'", status);
        return -1;
    }
    if (json_object_object_get_ex(root, "warnings", &o) &&
        !json_object_is_type(o, json_type_null)) {
        if (!json_object_is_type(o, json_type_array)) {
            snprintf(err, errlen, "prometheus answer: 'warnings' is not an array");
            return -1;
        }
        if (json_object_array_length(o) > 0) {
            json_object *w = json_object_array_get_idx(o, 0);
            snprintf(err, errlen, "partial answer: %s",
                     json_object_is_type(w, json_type_string) ? json_object_get_string(w)
                                                              : "(warning is not a string)");
            return -1;
        }
    }
    return promq_ref_data(root, want, m, err, errlen);
}

static int promq_ref_parse_as(const char *body, size_t len, long http_status, unsigned want,
                              struct matrix *out, char *err, size_t errlen)
{
    *out = (struct matrix){0};
    json_tokener *tok = json_tokener_new_ex(PROMQ_JSON_DEPTH);
    if (!tok) {
        snprintf(err, errlen, "cannot create a JSON parser");
        return -1;
    }
    /* The strict mode is the closest json-c comes to RFC 8259 (see pj_err for the rest). */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
                                    JSON_TOKENER_VALIDATE_UTF8);
    json_object *root = NULL;
    /* json_tokener_parse_ex takes an int length; API answers never get near 2 GiB. */
    if (len <= (size_t)INT32_MAX)
        root = json_tokener_parse_ex(tok, body, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    int ret = -1;

    if (!root || jerr != json_tokener_success) {
        if (!promq_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else if (len == 0)
            snprintf(err, errlen, "empty answer from prometheus");
        else if (len > (size_t)INT32_MAX)
            snprintf(err, errlen, "prometheus answer of %zu bytes is too large", len);
        else if (jerr == json_tokener_continue || (jerr == json_tokener_success && !root))
            snprintf(err, errlen, "truncated JSON from prometheus (%zu bytes)", len);
        else
            snprintf(err, errlen, "invalid JSON from prometheus at offset %zu: %s", end,
                     json_tokener_error_desc(jerr));
        goto out;
    }
    while (end < len && body[end] != '\0' && strchr(" \t\r\n", body[end]))
        end++;
    if (end < len) {
        if (!promq_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else
            snprintf(err, errlen, "invalid JSON from prometheus: trailing data at offset %zu", end);
        goto out;
    }
    if (!json_object_is_type(root, json_type_object)) {
        if (!promq_is_2xx(http_status))
            snprintf(err, errlen, "HTTP %ld from prometheus", http_status);
        else
            snprintf(err, errlen, "prometheus answer is not a JSON object");
        goto out;
    }
    ret = promq_ref_envelope(root, http_status, want, out, err, errlen);
out:
    if (ret < 0)
        matrix_free(out);
    json_object_put(root);
    json_tokener_free(tok);
    return ret;
}
/*
 * Classes of parse errors: two messages of one class say the same thing about an answer.
 * Truncated and invalid JSON are one class: where a broken number or nesting meets the end
 * of the input, json-c's choice between the two follows its internal states.
 */
static int promq_ref_class(const char *msg)
{
    static const char *const prefix[] = {
        "HTTP ",
        "empty answer from prometheus",
        "truncated JSON from prometheus",
        "invalid JSON from prometheus at offset ",
        "invalid JSON from prometheus: trailing data",
        "prometheus answer is not a JSON object",
        "prometheus error (",
        "partial answer: ",
        "prometheus answer: ",
    };
    for (size_t i = 0; i < ARRAY_LEN(prefix); i++)
        if (strncmp(msg, prefix[i], strlen(prefix[i])) == 0)
            return i == 2 ? 4 : (int)i + 1;
    return 0;
}

static bool promq_ref_same_matrix(const struct matrix *a, const struct matrix *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const struct series *x = &a->s[i], *y = &b->s[i];
        if (!labels_equal(&x->labels, &y->labels) || x->n != y->n ||
            (x->n && memcmp(x->p, y->p, x->n * sizeof(*x->p)) != 0))
            return false;
    }
    return true;
}

/*
 * Parse with both parsers and compare. Returns 0 when they agree: the same matrix bit for
 * bit, or errors of the same class (the same message, except for the wording of JSON syntax
 * errors). Where json-c accepts a construct pj_check refuses on purpose (pj_err from
 * PJ_CONTROL on), only the new parser's failure is required. Otherwise -1 with `why`.
 */
static int promq_ref_compare(const char *body, size_t len, long http_status, unsigned want,
                             char *why, size_t whylen)
{
    struct matrix a, b;
    char ea[256] = "", eb[256] = "";
    int ra = promq_parse_as(body, len, http_status, want, &a, ea, sizeof(ea));
    int rb = promq_ref_parse_as(body, len, http_status, want, &b, eb, sizeof(eb));
    size_t pos;
    enum pj_err jerr = len ? pj_check(body, len, &pos) : PJ_TRUNCATED;
    /* json-c returns no object for a top-level null, which promq_ref took for truncation. */
    size_t lead = 0;
    while (lead < len && pj_is_ws((unsigned char)body[lead]))
        lead++;
    bool null_root = len - lead >= 4 && memcmp(body + lead, "null", 4) == 0;
    int ret = 0;
    if (null_root && ra != 0 && rb != 0) {
        /* Both refuse it; the class is json-c's accident. */
    } else if (jerr >= PJ_CONTROL) {
        if (ra == 0) {
            snprintf(why, whylen, "accepted a body with %s at %zu", pj_err_desc[jerr], pos);
            ret = -1;
        }
    } else if (ra != rb) {
        snprintf(why, whylen, "new %s, json-c %s", ra ? ea : "ok", rb ? eb : "ok");
        ret = -1;
    } else if (ra == 0 && !promq_ref_same_matrix(&a, &b)) {
        snprintf(why, whylen, "different matrices");
        ret = -1;
    } else if (ra != 0 && (promq_ref_class(ea) != promq_ref_class(eb) ||
                           (promq_ref_class(ea) != 4 && strcmp(ea, eb) != 0))) {
        snprintf(why, whylen, "new '%s', json-c '%s'", ea, eb);
        ret = -1;
    }
    matrix_free(&a);
    matrix_free(&b);
    return ret;
}
#endif /* PROMQ_JSONC_REFERENCE */

/* ---- requests ---------------------------------------------------------------------------- */

static void promq_form(struct sbuf *b, const char *name, const char *value)
{
    if (b->len)
        sbuf_putc(b, '&');
    sbuf_puts(b, name);
    sbuf_putc(b, '=');
    httpc_urlencode(b, value);
}

static void promq_form_num(struct sbuf *b, const char *name, double v)
{
    char tmp[64];
    /* Millisecond precision is all Prometheus keeps (marshalTimestamp). */
    snprintf(tmp, sizeof(tmp), "%.3f", v);
    promq_form(b, name, tmp);
}

static int promq_request(struct promq *q, const char *path, const struct sbuf *form, unsigned want,
                         struct matrix *out, char *err, size_t errlen)
{
    char *url = xasprintf("%s%s", q->url, path);
    char *token = NULL, *pass = NULL;
    struct httpc_resp resp = {0};
    int ret = -1;

    atomic_fetch_add(&q->requests, 1);
    *out = (struct matrix){0};
    if (q->bearer_file && !(token = secret_read(q->bearer_file, "bearer token", err, errlen)))
        goto out;
    if (q->basic_user && q->basic_pass_file &&
        !(pass = secret_read(q->basic_pass_file, "password", err, errlen)))
        goto out;

    static const char *const headers[] = {
        "Content-Type: application/x-www-form-urlencoded",
        "Accept: application/json",
    };
    struct httpc_req req = {
        .method = "POST",
        .url = url,
        .headers = headers,
        .nheaders = ARRAY_LEN(headers),
        .body = form->buf,
        .body_len = form->len,
        .timeout = q->timeout,
        .ca_file = q->ca_file,
        .insecure = q->insecure,
        .bearer_token = token,
        .basic_user = q->basic_user,
        .basic_pass = pass,
    };
    if (httpc_do(&req, &resp, err, errlen) < 0)
        goto out;
    ret = promq_parse_as(resp.body.buf, resp.body.len, resp.status, want, out, err, errlen);
    log_debug("prometheus %s %s: HTTP %ld, %zu bytes, %.3f s%s", path, form->buf, resp.status,
              resp.body.len, resp.elapsed, ret < 0 ? " (failed)" : "");
out:
    if (ret < 0)
        atomic_fetch_add(&q->failures, 1);
    httpc_resp_free(&resp);
    secret_free(token);
    secret_free(pass);
    free(url);
    return ret;
}

int promq_range(struct promq *q, const char *expr, double start, double end, double step,
                struct matrix *out, char *err, size_t errlen)
{
    if (!isfinite(start) || !isfinite(end) || !isfinite(step) || step <= 0 || end < start) {
        *out = (struct matrix){0};
        snprintf(err, errlen, "invalid range [%.3f, %.3f] with step %g", start, end, step);
        return -1;
    }
    struct sbuf form = {0};
    promq_form(&form, "query", expr);
    promq_form_num(&form, "start", start);
    promq_form_num(&form, "end", end);
    promq_form_num(&form, "step", step);
    promq_form_num(&form, "timeout", q->timeout);
    int ret = promq_request(q, "/api/v1/query_range", &form, PROMQ_MATRIX, out, err, errlen);
    sbuf_free(&form);
    return ret;
}

int promq_instant(struct promq *q, const char *expr, double t, struct matrix *out, char *err,
                  size_t errlen)
{
    if (!isfinite(t)) {
        *out = (struct matrix){0};
        snprintf(err, errlen, "invalid evaluation time %g", t);
        return -1;
    }
    struct sbuf form = {0};
    promq_form(&form, "query", expr);
    promq_form_num(&form, "time", t);
    promq_form_num(&form, "timeout", q->timeout);
    int ret =
        promq_request(q, "/api/v1/query", &form, PROMQ_VECTOR | PROMQ_SCALAR, out, err, errlen);
    sbuf_free(&form);
    return ret;
}
