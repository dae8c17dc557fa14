/*
 * JSON push tokenizer (jsonpush.h): a byte-level state machine fed chunk by chunk, which
 * checks RFC 8259 and hands each key, value and container end to its reader as an event.
 *
 * It owns the syntax and nothing else, so that what a document means (promjson.c for
 * Prometheus' answers) is read apart from how it is spelled, and each can be tested alone
 * (tests/unit/test_jsonpush.c). The state lives between bytes, never in a buffer of the
 * document: a chunk may end anywhere, inside a string, an escape, a UTF-8 sequence or a
 * number, and the events and errors are the same as for the document fed whole (checked in
 * tests and fuzz/fuzz_promq.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpush.h"
#include "utf8.h"
#include "util.h"

/*
 * The grammar is RFC 8259 with json-c's nesting limit; the errors from JSONPUSH_E_CONTROL on
 * are constructs json-c 0.16 accepts even in strict mode and Prometheus never writes (Go's
 * encoder escapes control characters and writes valid UTF-8): refusing them keeps a mangled
 * answer from passing.
 */
static const char *const pj_err_desc[] = {
    [JSONPUSH_OK] = "success",
    [JSONPUSH_E_TRUNCATED] = "unexpected end of data",
    [JSONPUSH_E_SYNTAX] = "unexpected character",
    [JSONPUSH_E_DEPTH] = "nesting too deep",
    [JSONPUSH_E_CONTROL] = "control character in a string",
    [JSONPUSH_E_UTF8] = "invalid UTF-8",
    [JSONPUSH_E_NUL] = "\\u0000 in a string",
    [JSONPUSH_E_SURROGATE] = "unpaired UTF-16 surrogate",
    [JSONPUSH_E_NUMBER] = "malformed number",
    [JSONPUSH_E_LITERAL] = "NaN or Infinity literal",
    [JSONPUSH_E_QUOTE] = "key in single quotes",
};

static bool pj_is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool pj_is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Where the tokenizer is between two bytes. */
enum {
    T_VALUE, /* a value must start */
    T_OPEN,  /* just after '{' or '[': the container may close at once */
    T_KEY,   /* a key must start */
    T_COLON, /* after a key */
    T_AFTER, /* after a value inside a container: ',' or the closing bracket */
    T_DONE,  /* after the top-level value */
    T_STR,   /* inside a string */
    T_NUM,   /* inside a number */
    T_WORD,  /* inside true, false or null */
    T_STOP,  /* a final error: the rest is not read */
};

/* Inside a string. */
enum { S_CHAR, S_ESC, S_HEX, S_UTF8, S_HIBS, S_HIU, S_LOHEX };

/* Inside a number: after '-', in "0", in the integer part, after '.', ... */
enum { N_MINUS, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP };

struct jsonpush {
    int state;
    size_t depth;
    unsigned char stack[JSONPUSH_DEPTH]; /* '{' or '[' of each open container */
    bool is_key;                         /* the string read is a key */
    bool word;                           /* the top-level value is a number or literal */
    bool after;                          /* a byte followed the top-level value */
    int sst, nst;
    unsigned u, lo;
    int nhex;
    unsigned char utf_lo, utf_hi; /* bounds of the next continuation byte */
    int utf_need;                 /* continuation bytes still to come */
    size_t utf_pos, hi_pos;
    const char *wrest; /* the rest of the literal being read */
    enum jsonpush_kind wkind;
    struct sbuf tok; /* the decoded string or the number's text */
    size_t off;      /* bytes fed before the current chunk */
    enum jsonpush_err err;
    size_t err_pos;
    bool trailing; /* bytes after the top-level value, at trail_pos */
    size_t trail_pos;
    const struct jsonpush_events *ev;
    void *arg;
    size_t max_token;
    bool too_long; /* a string or number grew over max_token */
};

struct jsonpush *jsonpush_new(const struct jsonpush_events *ev, void *arg, size_t max_token)
{
    struct jsonpush *p = xcalloc(1, sizeof(*p));
    p->ev = ev;
    p->arg = arg;
    p->max_token = max_token;
    return p;
}

void jsonpush_free(struct jsonpush *p)
{
    if (!p)
        return;
    sbuf_free(&p->tok);
    free(p);
}

static void ps_fail(struct jsonpush *p, enum jsonpush_err e, size_t pos)
{
    p->err = e;
    p->err_pos = pos;
    p->state = T_STOP;
}

/* A value of `kind` (scalar or container) starts at the current depth. */
static void ps_value(struct jsonpush *p, enum jsonpush_kind kind)
{
    if (p->depth == 0)
        p->word = kind == JSONPUSH_NUMBER || kind == JSONPUSH_LITERAL || kind == JSONPUSH_NULL;
    if (p->ev->value(p->arg, p->depth, kind, p->tok.buf ? p->tok.buf : "", p->tok.len))
        p->state = T_STOP;
}

/* A scalar or a container has ended: what may follow. */
static void ps_value_done(struct jsonpush *p)
{
    if (p->state != T_STOP)
        p->state = p->depth == 0 ? T_DONE : T_AFTER;
}

static void ps_string_done(struct jsonpush *p)
{
    if (p->is_key) {
        p->ev->key(p->arg, p->depth, p->tok.buf ? p->tok.buf : "", p->tok.len);
        p->state = T_COLON;
        return;
    }
    ps_value(p, JSONPUSH_STRING);
    ps_value_done(p);
}

static void ps_number_done(struct jsonpush *p)
{
    ps_value(p, JSONPUSH_NUMBER);
    ps_value_done(p);
}

static void ps_put_utf8(struct sbuf *b, unsigned u)
{
    char buf[4];
    sbuf_add(b, buf, utf8_encode(u, buf));
}

/*
 * Bytes of a string from s[*i]; returns when the string ends (state changed) or the chunk
 * does. The checks and the offsets they report are those of Unicode 15 table 3-7 and
 * RFC 8259 section 7, in the order json-c met them.
 */
static void ps_string(struct jsonpush *p, const unsigned char *s, size_t n, size_t *pi)
{
    size_t i = *pi;
    while (i < n) {
        unsigned char c = s[i];
        size_t pos = p->off + i;
        if (p->sst == S_CHAR) {
            size_t j = i;
            while (j < n && s[j] >= 0x20 && s[j] < 0x80 && s[j] != '"' && s[j] != '\\')
                j++;
            if (j > i)
                sbuf_add(&p->tok, (const char *)s + i, j - i);
            i = j;
            if (i >= n)
                break;
            c = s[i];
            pos = p->off + i;
            if (c == '"') {
                i++;
                *pi = i;
                ps_string_done(p);
                return;
            }
            if (c < 0x20) {
                ps_fail(p, c == 0 ? JSONPUSH_E_SYNTAX : JSONPUSH_E_CONTROL, pos);
                break;
            }
            if (c == '\\') {
                p->sst = S_ESC;
                i++;
                continue;
            }
            /* A UTF-8 lead byte. */
            p->utf_lo = 0x80;
            p->utf_hi = 0xbf;
            if (c >= 0xc2 && c <= 0xdf)
                p->utf_need = 1;
            else if (c == 0xe0)
                p->utf_need = 2, p->utf_lo = 0xa0;
            else if (c == 0xed)
                p->utf_need = 2, p->utf_hi = 0x9f;
            else if (c >= 0xe1 && c <= 0xef)
                p->utf_need = 2;
            else if (c == 0xf0)
                p->utf_need = 3, p->utf_lo = 0x90;
            else if (c == 0xf4)
                p->utf_need = 3, p->utf_hi = 0x8f;
            else if (c >= 0xf1 && c <= 0xf3)
                p->utf_need = 3;
            else {
                ps_fail(p, JSONPUSH_E_UTF8, pos);
                break;
            }
            p->utf_pos = pos;
            p->sst = S_UTF8;
            sbuf_putc(&p->tok, (char)c);
            i++;
        } else if (p->sst == S_UTF8) {
            if (c < p->utf_lo || c > p->utf_hi) {
                ps_fail(p, JSONPUSH_E_UTF8, p->utf_pos);
                break;
            }
            p->utf_lo = 0x80;
            p->utf_hi = 0xbf;
            sbuf_putc(&p->tok, (char)c);
            i++;
            if (--p->utf_need == 0)
                p->sst = S_CHAR;
        } else if (p->sst == S_ESC) {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            if (c == 'u') {
                p->sst = S_HEX;
                p->u = 0;
                p->nhex = 0;
            } else if (c != '\0' && strchr(from, c)) {
                sbuf_putc(&p->tok, to[strchr(from, c) - from]);
                p->sst = S_CHAR;
            } else {
                ps_fail(p, JSONPUSH_E_SYNTAX, pos);
                break;
            }
            i++;
        } else if (p->sst == S_HEX || p->sst == S_LOHEX) {
            int h = hex_value(c);
            if (h < 0) {
                ps_fail(p, JSONPUSH_E_SYNTAX, pos);
                break;
            }
            i++;
            unsigned *u = p->sst == S_HEX ? &p->u : &p->lo;
            *u = *u << 4 | (unsigned)h;
            if (++p->nhex < 4)
                continue;
            if (p->sst == S_LOHEX) {
                if (p->lo < 0xdc00 || p->lo > 0xdfff) {
                    ps_fail(p, JSONPUSH_E_SURROGATE, pos + 1);
                    break;
                }
                ps_put_utf8(&p->tok, 0x10000 + ((p->u - 0xd800) << 10) + (p->lo - 0xdc00));
                p->sst = S_CHAR;
            } else if (p->u == 0) {
                ps_fail(p, JSONPUSH_E_NUL, pos + 1);
                break;
            } else if (p->u >= 0xdc00 && p->u <= 0xdfff) {
                ps_fail(p, JSONPUSH_E_SURROGATE, pos + 1);
                break;
            } else if (p->u >= 0xd800 && p->u <= 0xdbff) {
                p->sst = S_HIBS;
                p->hi_pos = pos + 1;
            } else {
                ps_put_utf8(&p->tok, p->u);
                p->sst = S_CHAR;
            }
        } else if (p->sst == S_HIBS) {
            if (c != '\\') {
                ps_fail(p, JSONPUSH_E_SURROGATE, p->hi_pos);
                break;
            }
            p->sst = S_HIU;
            i++;
        } else { /* S_HIU */
            if (c != 'u') {
                ps_fail(p, JSONPUSH_E_SURROGATE, p->hi_pos);
                break;
            }
            p->sst = S_LOHEX;
            p->lo = 0;
            p->nhex = 0;
            i++;
        }
    }
    *pi = i;
}

/* Bytes of a number from s[*i]; a byte that cannot continue it ends it (not consumed). */
static void ps_number(struct jsonpush *p, const unsigned char *s, size_t n, size_t *pi)
{
    size_t i = *pi, start = i;
    while (i < n) {
        unsigned char c = s[i];
        size_t pos = p->off + i;
        bool digit = pj_is_digit(c);
        switch (p->nst) {
        case N_MINUS:
            if (c == 'I') {
                ps_fail(p, JSONPUSH_E_LITERAL, pos);
            } else if (c == '.') {
                ps_fail(p, JSONPUSH_E_NUMBER, pos);
            } else if (c == '0') {
                p->nst = N_ZERO;
            } else if (digit) {
                p->nst = N_INT;
            } else {
                ps_fail(p, JSONPUSH_E_SYNTAX, pos);
            }
            break;
        case N_ZERO:
        case N_INT:
        case N_FRAC:
        case N_EXP:
            if (digit) {
                if (p->nst == N_ZERO) {
                    ps_fail(p, JSONPUSH_E_NUMBER, pos);
                    break;
                }
                while (i + 1 < n && pj_is_digit(s[i + 1]))
                    i++;
                break;
            }
            if (c == '.' && (p->nst == N_ZERO || p->nst == N_INT)) {
                p->nst = N_DOT;
                break;
            }
            if ((c == 'e' || c == 'E') && p->nst != N_EXP) {
                p->nst = N_E;
                break;
            }
            sbuf_add(&p->tok, (const char *)s + start, i - start);
            *pi = i;
            ps_number_done(p);
            return;
        case N_DOT:
            if (!digit)
                ps_fail(p, JSONPUSH_E_NUMBER, pos);
            p->nst = N_FRAC;
            break;
        case N_E:
            if (c == '+' || c == '-')
                p->nst = N_ESIGN;
            else if (digit)
                p->nst = N_EXP;
            else
                ps_fail(p, JSONPUSH_E_SYNTAX, pos);
            break;
        case N_ESIGN:
            if (!digit)
                ps_fail(p, JSONPUSH_E_SYNTAX, pos);
            p->nst = N_EXP;
            break;
        }
        if (p->state == T_STOP)
            break;
        i++;
    }
    sbuf_add(&p->tok, (const char *)s + start, i - start);
    *pi = i;
}

static void ps_open(struct jsonpush *p, unsigned char c)
{
    ps_value(p, c == '{' ? JSONPUSH_OBJECT : JSONPUSH_ARRAY);
    if (p->state == T_STOP)
        return;
    p->stack[p->depth++] = c;
    p->state = T_OPEN;
}

static void ps_close(struct jsonpush *p)
{
    p->depth--;
    int stop = p->ev->close(p->arg, p->depth);
    ps_value_done(p);
    if (stop)
        p->state = T_STOP;
}

int jsonpush_feed(struct jsonpush *p, const char *buf, size_t n)
{
    const unsigned char *s = (const unsigned char *)buf;
    size_t i = 0;
    while (i < n && p->state != T_STOP) {
        unsigned char c = s[i];
        size_t pos = p->off + i;
        switch (p->state) {
        case T_STR:
        case T_NUM:
            if (p->state == T_STR)
                ps_string(p, s, n, &i);
            else
                ps_number(p, s, n, &i);
            /* One string or number longer than the cap is as much too large as many series. */
            if (p->tok.len > p->max_token) {
                p->too_long = true;
                p->state = T_STOP;
            }
            continue;
        case T_WORD:
            if (c != (unsigned char)*p->wrest) {
                ps_fail(p, JSONPUSH_E_SYNTAX, pos);
                continue;
            }
            sbuf_putc(&p->tok, (char)c);
            i++;
            if (*++p->wrest == '\0') {
                ps_value(p, p->wkind);
                ps_value_done(p);
            }
            continue;
        case T_DONE:
            p->after = true;
            if (pj_is_ws(c)) {
                i++;
                continue;
            }
            /* As json-c: the first byte after the value must not start a multi-byte one. */
            if (c >= 0x80)
                ps_fail(p, JSONPUSH_E_UTF8, pos);
            else {
                p->trailing = true;
                p->trail_pos = pos;
                p->state = T_STOP;
            }
            continue;
        default:
            break;
        }
        if (pj_is_ws(c)) {
            i++;
            continue;
        }
        switch (p->state) {
        case T_OPEN:
            if (c == (p->stack[p->depth - 1] == '{' ? '}' : ']')) {
                i++;
                ps_close(p);
                continue;
            }
            p->state = p->stack[p->depth - 1] == '{' ? T_KEY : T_VALUE;
            continue;
        case T_KEY:
            if (c != '"') {
                ps_fail(p, c == '\'' ? JSONPUSH_E_QUOTE : JSONPUSH_E_SYNTAX, pos);
                continue;
            }
            i++;
            sbuf_reset(&p->tok);
            p->is_key = true;
            p->sst = S_CHAR;
            p->state = T_STR;
            continue;
        case T_COLON:
            if (c != ':') {
                ps_fail(p, JSONPUSH_E_SYNTAX, pos);
                continue;
            }
            i++;
            p->state = T_VALUE;
            continue;
        case T_AFTER:
            if (c == (p->stack[p->depth - 1] == '{' ? '}' : ']')) {
                i++;
                ps_close(p);
            } else if (c == ',') {
                i++;
                p->state = p->stack[p->depth - 1] == '{' ? T_KEY : T_VALUE;
            } else {
                ps_fail(p, JSONPUSH_E_SYNTAX, pos);
            }
            continue;
        default: /* T_VALUE */
            break;
        }
        if (p->depth == JSONPUSH_DEPTH) {
            /* json-c's limit counts values: an empty container may sit at the last level. */
            ps_fail(p, JSONPUSH_E_DEPTH, pos);
            continue;
        }
        sbuf_reset(&p->tok);
        if (c == '{' || c == '[') {
            i++;
            ps_open(p, c);
        } else if (c == '"') {
            i++;
            p->is_key = false;
            p->sst = S_CHAR;
            p->state = T_STR;
        } else if (c == '-' || pj_is_digit(c)) {
            p->nst = c == '-' ? N_MINUS : c == '0' ? N_ZERO : N_INT;
            sbuf_putc(&p->tok, (char)c);
            i++;
            p->state = T_NUM;
        } else if (c == 't' || c == 'f' || c == 'n') {
            p->wrest = c == 't' ? "rue" : c == 'f' ? "alse" : "ull";
            p->wkind = c == 'n' ? JSONPUSH_NULL : JSONPUSH_LITERAL;
            sbuf_putc(&p->tok, (char)c); /* a literal's text is its value: "true" or "false" */
            i++;
            p->state = T_WORD;
        } else {
            ps_fail(p, c == 'N' || c == 'I' ? JSONPUSH_E_LITERAL : JSONPUSH_E_SYNTAX, pos);
        }
    }
    p->off += n;
    return p->state == T_STOP ? -1 : 0;
}

enum jsonpush_err jsonpush_end(struct jsonpush *p, size_t *pos)
{
    if (p->state == T_DONE) {
        /* As json-c: a number or literal that reaches the end could go on. */
        if (p->word && !p->after)
            ps_fail(p, JSONPUSH_E_TRUNCATED, p->off);
    } else if (p->state != T_STOP) {
        if (p->state == T_STR && p->sst == S_UTF8)
            ps_fail(p, JSONPUSH_E_UTF8, p->utf_pos);
        else
            ps_fail(p, JSONPUSH_E_TRUNCATED, p->off);
    }
    *pos = p->err_pos;
    return p->err;
}

size_t jsonpush_offset(const struct jsonpush *p)
{
    return p->off;
}

bool jsonpush_trailing(const struct jsonpush *p, size_t *pos)
{
    *pos = p->trail_pos;
    return p->trailing;
}

bool jsonpush_too_long(const struct jsonpush *p)
{
    return p->too_long;
}

const char *jsonpush_strerror(enum jsonpush_err e)
{
    return e <= JSONPUSH_E_QUOTE ? pj_err_desc[e] : "unknown error";
}
