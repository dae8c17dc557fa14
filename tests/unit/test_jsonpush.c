/*
 * Unit tests for the JSON push tokenizer's event interface (enforcer/jsonpush.c): the events
 * a document gives, the same whether it is fed whole or a byte at a time, a handler that
 * stops the tokenizer, the token cap, and the errors with their offsets. What the events
 * mean to Prometheus' answers is tested in test_promq.c.
 */
#include "jsonpush.c"
#include "test.h"

/* The events as text: "O0" an object at depth 0, "K1:a" a key, "C0" a close, and so on. */
struct rec {
    struct sbuf b;
    size_t stop_at; /* stop at this event (counted from 1), 0 never */
    size_t n;
};

static int rec_stop(struct rec *r)
{
    return r->stop_at && ++r->n == r->stop_at ? -1 : 0;
}

static int rec_value(void *arg, size_t depth, enum jsonpush_kind kind, const char *s, size_t len)
{
    static const char tag[] = "OASNLZ";
    struct rec *r = arg;
    char head[32];
    snprintf(head, sizeof(head), "%c%zu", tag[kind], depth);
    sbuf_puts(&r->b, head);
    if (kind == JSONPUSH_STRING || kind == JSONPUSH_NUMBER) {
        sbuf_putc(&r->b, ':');
        sbuf_add(&r->b, s, len);
        TEST_CHECK(s[len] == '\0');
    }
    sbuf_putc(&r->b, ' ');
    return rec_stop(r);
}

static void rec_key(void *arg, size_t depth, const char *s, size_t len)
{
    struct rec *r = arg;
    char head[32];
    snprintf(head, sizeof(head), "K%zu:", depth);
    sbuf_puts(&r->b, head);
    sbuf_add(&r->b, s, len);
    sbuf_putc(&r->b, ' ');
}

static int rec_close(void *arg, size_t depth)
{
    struct rec *r = arg;
    char head[32];
    snprintf(head, sizeof(head), "C%zu ", depth);
    sbuf_puts(&r->b, head);
    return rec_stop(r);
}

static const struct jsonpush_events rec_events = {rec_value, rec_key, rec_close};

/*
 * Tokenize `doc` fed in chunks of `chunk` bytes (0: whole); the events in `events` (its
 * buffer to free), the error and its offset as the result.
 */
static enum jsonpush_err tokenize(const char *doc, size_t chunk, size_t stop_at, size_t max,
                                  struct rec *r, size_t *pos)
{
    *r = (struct rec){.stop_at = stop_at};
    sbuf_puts(&r->b, "");
    struct jsonpush *p = jsonpush_new(&rec_events, r, max);
    size_t len = strlen(doc);
    for (size_t i = 0; i < len;) {
        size_t n = chunk && chunk < len - i ? chunk : len - i;
        if (jsonpush_feed(p, doc + i, n) < 0) {
            i += n;
            break;
        }
        i += n;
    }
    enum jsonpush_err e = jsonpush_end(p, pos);
    jsonpush_free(p);
    return e;
}

TEST(events_of_a_document)
{
    const char *doc = " {\"a\": [1, -2.5e3, \"x\\u00e9\\n\", true, false, null], \"b\": {}, "
                      "\"\\ud83d\\ude00\": []} ";
    const char *want = "O0 K1:a A1 N2:1 N2:-2.5e3 S2:x\xc3\xa9\n L2 L2 Z2 C1 K1:b O1 C1 "
                       "K1:\xf0\x9f\x98\x80 A1 C1 C0 ";
    for (size_t chunk = 0; chunk <= 3; chunk++) {
        struct rec r;
        size_t pos;
        TEST_CHECK_INT(tokenize(doc, chunk, 0, SIZE_MAX, &r, &pos), JSONPUSH_OK);
        TEST_CHECK_STR(r.b.buf, want);
        sbuf_free(&r.b);
    }
}

TEST(top_level_scalars)
{
    struct rec r;
    size_t pos;
    TEST_CHECK_INT(tokenize("\"s\"", 0, 0, SIZE_MAX, &r, &pos), JSONPUSH_OK);
    TEST_CHECK_STR(r.b.buf, "S0:s ");
    sbuf_free(&r.b);
    /* A number or literal that reaches the end could go on, as json-c reads it. */
    TEST_CHECK_INT(tokenize("12", 0, 0, SIZE_MAX, &r, &pos), JSONPUSH_E_TRUNCATED);
    TEST_CHECK_INT(pos, 2);
    sbuf_free(&r.b);
    TEST_CHECK_INT(tokenize("12 ", 1, 0, SIZE_MAX, &r, &pos), JSONPUSH_OK);
    TEST_CHECK_STR(r.b.buf, "N0:12 ");
    sbuf_free(&r.b);
}

TEST(handler_stops)
{
    struct rec r;
    size_t pos;
    /* Stopped at the second event (the array): nothing after it is reported. */
    TEST_CHECK_INT(tokenize("{\"a\":[1,2],\"b\":3}", 0, 2, SIZE_MAX, &r, &pos), JSONPUSH_OK);
    TEST_CHECK_STR(r.b.buf, "O0 K1:a A1 ");
    sbuf_free(&r.b);
    /* Stopped by a close. */
    TEST_CHECK_INT(tokenize("[[],[1]]", 1, 3, SIZE_MAX, &r, &pos), JSONPUSH_OK);
    TEST_CHECK_STR(r.b.buf, "A0 A1 C1 ");
    sbuf_free(&r.b);
}

TEST(token_cap)
{
    struct rec r;
    struct jsonpush *p = jsonpush_new(&rec_events, &r, 4);
    r = (struct rec){0};
    TEST_CHECK_INT(jsonpush_feed(p, "[\"abcd\",", 8), 0);
    TEST_CHECK(!jsonpush_too_long(p));
    TEST_CHECK_INT(jsonpush_feed(p, "\"abcde\"]", 8), -1);
    TEST_CHECK(jsonpush_too_long(p));
    TEST_CHECK_INT(jsonpush_offset(p), 16);
    size_t pos;
    TEST_CHECK_INT(jsonpush_end(p, &pos), JSONPUSH_OK);
    /* The cap is checked as the chunk is read: a token that ends in it is still reported. */
    TEST_CHECK_STR(r.b.buf, "A0 S1:abcd S1:abcde ");
    jsonpush_free(p);
    sbuf_free(&r.b);
}

TEST(trailing_data)
{
    struct rec r;
    struct jsonpush *p = jsonpush_new(&rec_events, &r, SIZE_MAX);
    r = (struct rec){0};
    TEST_CHECK_INT(jsonpush_feed(p, "{} \n x", 6), -1);
    size_t pos;
    TEST_CHECK(jsonpush_trailing(p, &pos));
    TEST_CHECK_INT(pos, 5);
    TEST_CHECK_INT(jsonpush_end(p, &pos), JSONPUSH_OK);
    jsonpush_free(p);
    sbuf_free(&r.b);
}

TEST(errors_and_offsets)
{
    static const struct {
        const char *doc;
        enum jsonpush_err err;
        size_t pos;
    } cases[] = {
        {"", JSONPUSH_E_TRUNCATED, 0},
        {"{\"a\":", JSONPUSH_E_TRUNCATED, 5},
        {"{\"a\" 1}", JSONPUSH_E_SYNTAX, 5},
        {"[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]", JSONPUSH_E_DEPTH, 16},
        {"[\"a\tb\"]", JSONPUSH_E_CONTROL, 3},
        {"[\"\xc0\xaf\"]", JSONPUSH_E_UTF8, 2},
        {"[\"\xe2\x82\"]", JSONPUSH_E_UTF8, 2},
        {"[\"\\u0000\"]", JSONPUSH_E_NUL, 8},
        {"[\"\\udc00\"]", JSONPUSH_E_SURROGATE, 8},
        {"[\"\\ud800x\"]", JSONPUSH_E_SURROGATE, 8},
        {"[01]", JSONPUSH_E_NUMBER, 2},
        {"[1.]", JSONPUSH_E_NUMBER, 3},
        {"[NaN]", JSONPUSH_E_LITERAL, 1},
        {"[-Infinity]", JSONPUSH_E_LITERAL, 2},
        {"{'a':1}", JSONPUSH_E_QUOTE, 1},
        {"[tru]", JSONPUSH_E_SYNTAX, 4},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        for (size_t chunk = 0; chunk <= 1; chunk++) {
            struct rec r;
            size_t pos = SIZE_MAX;
            enum jsonpush_err e = tokenize(cases[i].doc, chunk, 0, SIZE_MAX, &r, &pos);
            if (e != cases[i].err || pos != cases[i].pos)
                fprintf(stderr, "case %zu ('%s', chunk %zu): %d at %zu\n", i, cases[i].doc, chunk,
                        (int)e, pos);
            TEST_CHECK_INT(e, cases[i].err);
            TEST_CHECK_INT(pos, cases[i].pos);
            sbuf_free(&r.b);
        }
    }
    TEST_CHECK_STR(jsonpush_strerror(JSONPUSH_E_DEPTH), "nesting too deep");
    TEST_CHECK_STR(jsonpush_strerror(JSONPUSH_E_TRUNCATED), "unexpected end of data");
}

int main(void)
{
    RUN(events_of_a_document);
    RUN(top_level_scalars);
    RUN(handler_stops);
    RUN(token_cap);
    RUN(trailing_data);
    RUN(errors_and_offsets);
    return test_done();
}
