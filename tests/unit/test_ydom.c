/*
 * Tests for the YAML DOM (enforcer/yaml.c): positions of nested nodes, duplicate keys,
 * libyaml syntax errors with their positions, rejected anchors and aliases, a second
 * document, empty input, the nesting limit and core-schema scalar typing, explicit tags
 * that would change a type, and duplicates among 100,000 keys.
 */
#include "ydom.c"

#include "test.h"

static struct ydom_doc load(const char *s)
{
    struct ydom_doc d;
    ydom_load(s, strlen(s), &d);
    return d;
}

#define CHECK_POS(node, l, c)                                                                      \
    do {                                                                                           \
        TEST_CHECK((node) != NULL);                                                                \
        if (node) {                                                                                \
            TEST_CHECK_INT((node)->line, (l));                                                     \
            TEST_CHECK_INT((node)->col, (c));                                                      \
        }                                                                                          \
    } while (0)

TEST(nested_positions)
{
    struct ydom_doc d = load("# header\n"
                             "a:\n"
                             "  b: [1, {c: d}]\n"
                             "  e:\n"
                             "    - f\n"
                             "    - 'g'\n"
                             "h: |\n"
                             "  text\n");
    TEST_CHECK_INT(d.nerrors, 0);
    TEST_CHECK(d.root && d.root->kind == YDOM_KIND_MAPPING);
    CHECK_POS(d.root, 2, 1);
    TEST_CHECK_INT(d.root->npairs, 2);
    CHECK_POS(d.root->pairs[0].key, 2, 1);
    const struct ydom_node *a = ydom_map_get(d.root, "a");
    CHECK_POS(a, 3, 3);
    const struct ydom_node *b = ydom_map_get(a, "b");
    TEST_CHECK(b && b->kind == YDOM_KIND_SEQUENCE && b->nitems == 2);
    CHECK_POS(b, 3, 6);
    CHECK_POS(b->items[0], 3, 7);
    CHECK_POS(b->items[1], 3, 10);
    CHECK_POS(b->items[1]->pairs[0].key, 3, 11);
    CHECK_POS(ydom_map_get(b->items[1], "c"), 3, 14);
    TEST_CHECK_STR(ydom_map_get(b->items[1], "c")->str, "d");
    const struct ydom_node *e = ydom_map_get(a, "e");
    CHECK_POS(e, 5, 5);
    TEST_CHECK_INT(e->nitems, 2);
    CHECK_POS(e->items[1], 6, 7);
    TEST_CHECK(e->items[0]->plain && !e->items[1]->plain);
    const struct ydom_node *h = ydom_map_get(d.root, "h");
    TEST_CHECK_STR(h->str, "text\n");
    TEST_CHECK(!h->plain);
    TEST_CHECK(ydom_map_get(d.root, "zz") == NULL);
    TEST_CHECK(ydom_map_get(b, "a") == NULL); /* not a mapping */
    ydom_doc_free(&d);
}

TEST(key_order_kept)
{
    struct ydom_doc d = load("z: 1\na: 2\nm: 3\n");
    TEST_CHECK_INT(d.root->npairs, 3);
    TEST_CHECK_STR(d.root->pairs[0].key->str, "z");
    TEST_CHECK_STR(d.root->pairs[1].key->str, "a");
    TEST_CHECK_STR(d.root->pairs[2].key->str, "m");
    ydom_doc_free(&d);
}

TEST(duplicate_keys)
{
    struct ydom_doc d = load("a: 1\n"
                             "b:\n"
                             "  x: 1\n"
                             "  x: [2]\n"
                             "a:\n"
                             "  deep: 3\n"
                             "c: 4\n");
    TEST_CHECK_INT(d.nerrors, 2);
    TEST_CHECK_INT(d.errors[0].line, 4);
    TEST_CHECK_INT(d.errors[0].col, 3);
    TEST_CHECK_STR(d.errors[0].msg, "duplicate key 'x' (first at 3:3)");
    TEST_CHECK_INT(d.errors[1].line, 5);
    TEST_CHECK_STR(d.errors[1].msg, "duplicate key 'a' (first at 1:1)");
    /* The first occurrence is kept, the rest of the document still loads. */
    TEST_CHECK(d.root != NULL);
    TEST_CHECK_INT(d.root->npairs, 3);
    TEST_CHECK_STR(ydom_map_get(d.root, "a")->str, "1");
    TEST_CHECK_STR(ydom_map_get(ydom_map_get(d.root, "b"), "x")->str, "1");
    TEST_CHECK_STR(ydom_map_get(d.root, "c")->str, "4");
    ydom_doc_free(&d);

    d = load("{a: 1, a: 2}");
    TEST_CHECK_INT(d.nerrors, 1);
    TEST_CHECK_STR(d.errors[0].msg, "duplicate key 'a' (first at 1:2)");
    ydom_doc_free(&d);
}

TEST(syntax_errors)
{
    static const struct {
        const char *in;
        int line, col;
        const char *msg;
    } cases[] = {
        {"a: b: c\n", 1, 5, "mapping values are not allowed in this context"},
        {"a: [1, 2\n", 2, 1,
         "did not find expected ',' or ']' (while parsing a flow sequence at 1:4)"},
        {"a:\n  - x\n  y: 1\n", 3, 3,
         "did not find expected '-' indicator (while parsing a block collection at 2:3)"},
        {"a: 'x\n", 2, 1, "found unexpected end of stream (while scanning a quoted scalar at 1:4)"},
        {"a:\n\tb: 1\n", 2, 1,
         "found character that cannot start any token (while scanning for the next token at 2:1)"},
        {"a: \"\\q\"\n", 1, 5,
         "found unknown escape character (while parsing a quoted scalar at 1:4)"},
        {"ok: 1\nbad: \xff\n", 2, 6, "invalid leading UTF-8 octet (byte 0xff)"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct ydom_doc d;
        TEST_CHECK_INT(ydom_load(cases[i].in, strlen(cases[i].in), &d), -1);
        TEST_CHECK(d.root == NULL);
        TEST_CHECK_INT(d.nerrors, 1);
        if (d.nerrors == 1) {
            TEST_CHECK_INT(d.errors[0].line, cases[i].line);
            TEST_CHECK_INT(d.errors[0].col, cases[i].col);
            TEST_CHECK_STR(d.errors[0].msg, cases[i].msg);
        }
        ydom_doc_free(&d);
    }
    /* An embedded NUL is a reader error, not a truncated document. */
    struct ydom_doc d;
    TEST_CHECK_INT(ydom_load("a: 1\0b: 2\n", 10, &d), -1);
    TEST_CHECK_STR(d.nerrors ? d.errors[0].msg : NULL,
                   "control characters are not allowed (byte 0x00)");
    ydom_doc_free(&d);
}

TEST(anchors_and_aliases_rejected)
{
    struct ydom_doc d = load("a: &x 1\n"
                             "b: *x\n"
                             "c: [*x, 2]\n"
                             "*x : 5\n"
                             "e: 6\n");
    TEST_CHECK_INT(d.nerrors, 4);
    TEST_CHECK_STR(d.errors[0].msg, "anchors and aliases are not supported ('&x')");
    TEST_CHECK_INT(d.errors[0].col, 4);
    TEST_CHECK_STR(d.errors[1].msg, "anchors and aliases are not supported ('*x')");
    TEST_CHECK_INT(d.errors[1].line, 2);
    TEST_CHECK_INT(d.errors[3].line, 4);
    TEST_CHECK_INT(d.errors[3].col, 1);
    /* Aliases are dropped with their key; everything else stays in step. */
    TEST_CHECK(d.root != NULL);
    TEST_CHECK_INT(d.root->npairs, 3);
    TEST_CHECK(ydom_map_get(d.root, "b") == NULL);
    TEST_CHECK_INT(ydom_map_get(d.root, "c")->nitems, 1);
    TEST_CHECK_STR(ydom_map_get(d.root, "e")->str, "6");
    ydom_doc_free(&d);

    d = load("*only\n");
    TEST_CHECK_INT(d.nerrors, 1);
    TEST_CHECK(d.root == NULL);
    ydom_doc_free(&d);
}

TEST(multiple_documents)
{
    struct ydom_doc d = load("a: 1\n---\nb: 2\n");
    TEST_CHECK_INT(d.nerrors, 1);
    TEST_CHECK_INT(d.errors[0].line, 2);
    TEST_CHECK_INT(d.errors[0].col, 1);
    TEST_CHECK_STR(d.errors[0].msg, "multiple YAML documents are not supported");
    TEST_CHECK(d.root && ydom_map_get(d.root, "a") && !ydom_map_get(d.root, "b"));
    ydom_doc_free(&d);

    /* One explicit document with an end marker is fine. */
    d = load("---\na: 1\n...\n");
    TEST_CHECK_INT(d.nerrors, 0);
    ydom_doc_free(&d);
}

TEST(empty_input)
{
    static const char *const empty[] = {"", "\n\n", "# only a comment\n", "\xef\xbb\xbf"};
    for (size_t i = 0; i < ARRAY_LEN(empty); i++) {
        struct ydom_doc d;
        TEST_CHECK_INT(ydom_load(empty[i], strlen(empty[i]), &d), 0);
        TEST_CHECK(d.root == NULL);
        TEST_CHECK_INT(d.nerrors, 0);
        ydom_doc_free(&d);
    }
    /* "---" alone is a document holding a null scalar. */
    struct ydom_doc d = load("---\n");
    TEST_CHECK(d.root && d.root->kind == YDOM_KIND_SCALAR);
    TEST_CHECK_STR(ydom_type_name(d.root), "null");
    ydom_doc_free(&d);
}

TEST(nesting_limit)
{
    struct sbuf ok = {0}, deep = {0};
    for (int i = 0; i < YDOM_MAX_DEPTH; i++)
        sbuf_putc(&ok, '[');
    for (int i = 0; i < YDOM_MAX_DEPTH; i++)
        sbuf_putc(&ok, ']');
    for (int i = 0; i < YDOM_MAX_DEPTH + 1; i++)
        sbuf_putc(&deep, '[');
    for (int i = 0; i < YDOM_MAX_DEPTH + 1; i++)
        sbuf_putc(&deep, ']');

    struct ydom_doc d;
    TEST_CHECK_INT(ydom_load(ok.buf, ok.len, &d), 0);
    TEST_CHECK(d.root != NULL);
    ydom_doc_free(&d);

    TEST_CHECK_INT(ydom_load(deep.buf, deep.len, &d), -1);
    TEST_CHECK(d.root == NULL);
    TEST_CHECK_INT(d.nerrors, 1);
    TEST_CHECK_STR(d.errors[0].msg, "nesting deeper than 64 levels");
    TEST_CHECK_INT(d.errors[0].col, YDOM_MAX_DEPTH + 1);
    ydom_doc_free(&d);

    /* Block style nests the same way: a -> b -> ... */
    struct sbuf blk = {0};
    for (int i = 0; i < 100; i++) {
        for (int j = 0; j < i; j++)
            sbuf_putc(&blk, ' ');
        sbuf_puts(&blk, "k:\n");
    }
    TEST_CHECK_INT(ydom_load(blk.buf, blk.len, &d), -1);
    TEST_CHECK_INT(d.nerrors, 1);
    TEST_CHECK_INT(d.errors[0].line, YDOM_MAX_DEPTH + 1);
    ydom_doc_free(&d);
    sbuf_free(&ok);
    sbuf_free(&deep);
    sbuf_free(&blk);
}

TEST(non_scalar_keys)
{
    struct ydom_doc d = load("? [a]\n: 1\nb: 2\n");
    TEST_CHECK_INT(d.nerrors, 1);
    TEST_CHECK_STR(d.errors[0].msg, "mapping keys must be scalars, got sequence");
    TEST_CHECK_INT(d.root->npairs, 1);
    TEST_CHECK_STR(ydom_map_get(d.root, "b")->str, "2");
    ydom_doc_free(&d);
}

TEST(scalar_types)
{
    static const struct {
        const char *in;
        enum ydom_scalar_type t;
        const char *name;
        double v; /* checked for numbers */
    } cases[] = {
        {"x: 10", YDOM_T_INT, "number", 10},      {"x: -3", YDOM_T_INT, "number", -3},
        {"x: 0x1f", YDOM_T_INT, "number", 31},    {"x: 0o17", YDOM_T_INT, "number", 15},
        {"x: 2.5", YDOM_T_FLOAT, "number", 2.5},  {"x: .5", YDOM_T_FLOAT, "number", 0.5},
        {"x: 1e3", YDOM_T_FLOAT, "number", 1000}, {"x: -.inf", YDOM_T_FLOAT, "number", -INFINITY},
        {"x: .NaN", YDOM_T_FLOAT, "number", NAN}, {"x: true", YDOM_T_BOOL, "boolean", 0},
        {"x: FALSE", YDOM_T_BOOL, "boolean", 0},  {"x: ~", YDOM_T_NULL, "null", 0},
        {"x:", YDOM_T_NULL, "null", 0},           {"x: null", YDOM_T_NULL, "null", 0},
        {"x: '10'", YDOM_T_STRING, "string", 0},  {"x: \"true\"", YDOM_T_STRING, "string", 0},
        {"x: yes", YDOM_T_STRING, "string", 0},   {"x: 09:00", YDOM_T_STRING, "string", 0},
        {"x: 15m", YDOM_T_STRING, "string", 0},   {"x: 1.2.3", YDOM_T_STRING, "string", 0},
        {"x: +.nan", YDOM_T_STRING, "string", 0}, {"x: 0x", YDOM_T_STRING, "string", 0},
        {"x: [1]", YDOM_T_STRING, "sequence", 0}, {"x: {a: 1}", YDOM_T_STRING, "mapping", 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct ydom_doc d = load(cases[i].in);
        const struct ydom_node *x = ydom_map_get(d.root, "x");
        TEST_CHECK(x != NULL);
        if (!x) {
            ydom_doc_free(&d);
            continue;
        }
        TEST_CHECK_INT(ydom_scalar_type(x), cases[i].t);
        TEST_CHECK_STR(ydom_type_name(x), cases[i].name);
        double v = 0;
        int rc = ydom_scalar_number(x, &v);
        if (cases[i].t == YDOM_T_INT || cases[i].t == YDOM_T_FLOAT) {
            TEST_CHECK_INT(rc, 0);
            if (isinf(cases[i].v))
                TEST_CHECK(isinf(v) && (v < 0) == (cases[i].v < 0));
            else
                TEST_CHECK_DBL(v, cases[i].v, 1e-12);
        } else {
            TEST_CHECK_INT(rc, -1);
        }
        bool bv;
        TEST_CHECK_INT(ydom_scalar_bool(x, &bv), cases[i].t == YDOM_T_BOOL ? 0 : -1);
        ydom_doc_free(&d);
    }
    struct ydom_doc d = load("a: True\nb: false\n");
    bool a = false, b = true;
    TEST_CHECK(ydom_scalar_bool(ydom_map_get(d.root, "a"), &a) == 0 && a);
    TEST_CHECK(ydom_scalar_bool(ydom_map_get(d.root, "b"), &b) == 0 && !b);
    ydom_doc_free(&d);
}

TEST(printable)
{
    char buf[12];
    TEST_CHECK_STR(ydom_printable("abc", 3, buf, sizeof(buf)), "abc");
    TEST_CHECK_STR(ydom_printable("a\nb\tc", 5, buf, sizeof(buf)), "a?b?c");
    TEST_CHECK_STR(ydom_printable("abcdefghijklmnop", 16, buf, sizeof(buf)), "abcdefgh...");
    /* "é" is two bytes: never cut in the middle. */
    TEST_CHECK_STR(ydom_printable("abcdefg\xc3\xa9xyz", 12, buf, sizeof(buf)), "abcdefg...");
}

/*
 * An explicit tag must state the type the node has anyway: `!!str 10` (a number made a
 * string) and `!!int "10"` (a quoted number made a number) were accepted before, which let a
 * tag bypass the rules' type checks.
 */
TEST(tags_cannot_change_types)
{
    static const struct {
        const char *in;
        const char *msg; /* NULL: accepted */
        int line, col;
    } cases[] = {
        {"a: !!str x\n", NULL, 0, 0},
        {"a: !!str 'x'\n", NULL, 0, 0},
        {"a: !!str \"10\"\n", NULL, 0, 0},
        {"a: !!int 10\n", NULL, 0, 0},
        {"a: !!float 1.5\n", NULL, 0, 0},
        {"a: !!bool true\n", NULL, 0, 0},
        {"a: !!null null\n", NULL, 0, 0},
        {"a: !!map {b: 1}\n", NULL, 0, 0},
        {"a: !!seq [1]\n", NULL, 0, 0},
        {"!!map\nb: 1\n", NULL, 0, 0},
        {"a: !!str 10\n", "tag '!!str' does not match the value's type (number)", 1, 4},
        {"a: !!int \"10\"\n", "tag '!!int' does not match the value's type (string)", 1, 4},
        {"a: !!float 10\n", "tag '!!float' does not match the value's type (number)", 1, 4},
        {"a: !!bool yes\n", "tag '!!bool' does not match the value's type (string)", 1, 4},
        {"a: !!str true\n", "tag '!!str' does not match the value's type (boolean)", 1, 4},
        {"a: !!seq {b: 1}\n", "tag '!!seq' does not match the value's type (mapping)", 1, 4},
        {"a:\n  - !!binary aGk=\n", "tag '!!binary' does not match", 2, 5},
        {"a: !local x\n", "unsupported tag '!local'", 1, 4},
        {"a: ! 10\n", "unsupported tag '!'", 1, 4},
        {"!!str a: 1\n", NULL, 0, 0}, /* the tag is the key's, a string */
        {"!!int 10: 1\n", NULL, 0, 0},
        {"a: !<tag:example.com,2000:x> 1\n", "unsupported tag 'tag:example.com,2000:x'", 1, 4},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct ydom_doc d = load(cases[i].in);
        if (!cases[i].msg) {
            if (d.nerrors)
                fprintf(stderr, "case %zu: %s\n", i, d.errors[0].msg);
            TEST_CHECK_INT(d.nerrors, 0);
        } else {
            TEST_CHECK_INT(d.nerrors, 1);
            TEST_CHECK_CONTAINS(d.nerrors ? d.errors[0].msg : NULL, cases[i].msg);
            if (d.nerrors && cases[i].line) {
                TEST_CHECK_INT(d.errors[0].line, cases[i].line);
                TEST_CHECK_INT(d.errors[0].col, cases[i].col);
            }
        }
        ydom_doc_free(&d);
    }
}

/* 100,000 keys in one mapping, the last a duplicate of the first: found, in linear time. */
TEST(many_keys_duplicate_found)
{
    struct sbuf b = {0};
    const size_t n = 100000;

    for (size_t i = 0; i < n; i++)
        sbuf_printf(&b, "k%zu: 1\n", i);
    sbuf_printf(&b, "k0: 2\n");
    struct ydom_doc d;
    ydom_load(b.buf, b.len, &d);
    TEST_CHECK_INT(d.nerrors, 1);
    TEST_CHECK_STR(d.nerrors ? d.errors[0].msg : NULL, "duplicate key 'k0' (first at 1:1)");
    TEST_CHECK(d.root && d.root->npairs == n);
    if (d.root && d.root->npairs == n)
        TEST_CHECK_STR(d.root->pairs[n - 1].key->str, "k99999");
    ydom_doc_free(&d);
    sbuf_free(&b);
}

int main(void)
{
    RUN(nested_positions);
    RUN(key_order_kept);
    RUN(duplicate_keys);
    RUN(syntax_errors);
    RUN(anchors_and_aliases_rejected);
    RUN(multiple_documents);
    RUN(empty_input);
    RUN(nesting_limit);
    RUN(non_scalar_keys);
    RUN(scalar_types);
    RUN(printable);
    RUN(tags_cannot_change_types);
    RUN(many_keys_duplicate_found);
    return test_done();
}
