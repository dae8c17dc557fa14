/*
 * Tests of vmexport.c, the VictoriaMetrics /api/v1/export reader: the lines VictoriaMetrics
 * 1.79 writes (+Inf, -Inf and huge numbers in Go's format, escaped label values) and those a
 * current release writes (null, "Infinity", "-Infinity"), NaN read as
 * the staleness marker, a series split over two lines joined, fed in every chunk size; and
 * the failures: a cut last line, values and timestamps of different counts, timestamps out
 * of order or not integers, unknown keys, invalid JSON, the cap.
 */
#include "vmexport.c"
#include "test.h"

/* What VictoriaMetrics 1.79 answered (tests/e2e/enforcer_vm.sh loads such data). */
static const char answer[] =
    "{\"metric\":{\"__name__\":\"x\",\"pod\":\"a\"},\"values\":[0.5,+Inf,NaN,1000000000000000000"
    "000,1.25e-7],\"timestamps\":[1700000000000,1700000015000,1700000030000,1700000045000,"
    "1700000060000]}\n"
    "{\"metric\":{\"__name__\":\"x\",\"pod\":\"b\\\"q\\u00e9\\ud83d\\ude00\"},\"values\":[-Inf],"
    "\"timestamps\":[1700000060000]}\n";

static void check_answer(const struct matrix *m)
{
    TEST_CHECK_INT(m->n, 2);
    if (m->n != 2)
        return;
    const struct series *a = &m->s[0], *b = &m->s[1];
    TEST_CHECK_STR(labels_get(&a->labels, "__name__"), "x");
    TEST_CHECK_STR(labels_get(&a->labels, "pod"), "a");
    TEST_CHECK_INT(a->n, 5);
    TEST_CHECK_DBL(a->p[0].t, 1700000000.0, 1e-9);
    TEST_CHECK_DBL(a->p[0].v, 0.5, 0);
    TEST_CHECK(isinf(a->p[1].v) && a->p[1].v > 0);
    TEST_CHECK(series_is_stale(a->p[2].v));
    TEST_CHECK_DBL(a->p[3].v, 1e21, 0);
    TEST_CHECK_DBL(a->p[4].v, 1.25e-7, 0);
    TEST_CHECK_STR(labels_get(&b->labels, "pod"), "b\"q\xc3\xa9\xf0\x9f\x98\x80");
    TEST_CHECK(isinf(b->p[0].v) && b->p[0].v < 0);
}

TEST(test_answer_in_any_chunks)
{
    char err[256] = "";
    struct matrix m;
    TEST_CHECK_INT(vmx_parse(answer, strlen(answer), 1 << 20, &m, err, sizeof(err)), 0);
    check_answer(&m);
    matrix_free(&m);
    for (size_t chunk = 1; chunk < 40; chunk++) {
        struct vmx *x = vmx_new(1 << 20);
        int rc = 0;
        for (size_t off = 0; off < strlen(answer) && rc == 0; off += chunk) {
            size_t n = strlen(answer) - off < chunk ? strlen(answer) - off : chunk;
            rc = vmx_feed(x, answer + off, n, err, sizeof(err));
        }
        TEST_CHECK_INT(rc, 0);
        TEST_CHECK_INT(vmx_finish(x, &m, err, sizeof(err)), 0);
        check_answer(&m);
        matrix_free(&m);
        vmx_free(x);
    }
}

/* What v1.153.0 answers for the same data (export.qtpl, convertValueToSpecialJSON). */
static const char answer_current[] =
    "{\"metric\":{\"__name__\":\"x\",\"pod\":\"a\"},\"values\":[0.5,\"Infinity\",null,1e+21,"
    "1.25e-7],\"timestamps\":[1700000000000,1700000015000,1700000030000,1700000045000,"
    "1700000060000]}\n"
    "{\"metric\":{\"__name__\":\"x\",\"pod\":\"b\\\"q\\u00e9\\ud83d\\ude00\"},\"values\":"
    "[\"-Infinity\"],\"timestamps\":[1700000060000]}\n";

TEST(test_answer_current_release)
{
    char err[256] = "";
    struct matrix m;
    TEST_CHECK_INT(vmx_parse(answer_current, strlen(answer_current), 1 << 20, &m, err, sizeof(err)),
                   0);
    check_answer(&m);
    matrix_free(&m);
    /* Only those two strings: any other string value is still refused. */
    static const char bad[] = "{\"metric\":{},\"values\":[\"Inf\"],\"timestamps\":[1]}\n";
    TEST_CHECK_INT(vmx_parse(bad, strlen(bad), 1 << 20, &m, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "expected a number") != NULL);
}

TEST(test_split_series_joined)
{
    static const char two[] = "{\"metric\":{\"pod\":\"a\",\"__name__\":\"x\"},\"values\":[3,4],"
                              "\"timestamps\":[3000,4000]}\n"
                              "\n"
                              "{\"timestamps\":[1000,2000],\"values\":[1,2],\"metric\":{\"__name__"
                              "\":\"x\",\"pod\":\"a\"}}\n";
    char err[256] = "";
    struct matrix m;
    TEST_CHECK_INT(vmx_parse(two, strlen(two), 1 << 20, &m, err, sizeof(err)), 0);
    TEST_CHECK_INT(m.n, 1);
    TEST_CHECK_INT(m.s[0].n, 4);
    for (size_t i = 0; i < 4 && i < m.s[0].n; i++) {
        TEST_CHECK_DBL(m.s[0].p[i].t, (double)(i + 1), 0);
        TEST_CHECK_DBL(m.s[0].p[i].v, (double)(i + 1), 0);
    }
    matrix_free(&m);

    static const char clash[] =
        "{\"metric\":{\"pod\":\"a\"},\"values\":[3],\"timestamps\":[3000]}\n"
        "{\"metric\":{\"pod\":\"a\"},\"values\":[4],\"timestamps\":[3000]}\n";
    TEST_CHECK_INT(vmx_parse(clash, strlen(clash), 1 << 20, &m, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "two lines of one series") != NULL);
    TEST_CHECK_INT(m.n, 0);
}

static void bad(const char *body, const char *want)
{
    char err[256] = "";
    struct matrix m;
    int rc = vmx_parse(body, strlen(body), 4096, &m, err, sizeof(err));
    TEST_CHECK_INT(rc, -1);
    TEST_CHECK_INT(m.n, 0);
    if (!strstr(err, want))
        fprintf(stderr, "for %s: got '%s', want '%s'\n", body, err, want);
    TEST_CHECK(strstr(err, want) != NULL);
}

TEST(test_failures)
{
    bad("{\"metric\":{},\"values\":[1],\"timestamps\":[1000]}", "cut short");
    bad("{\"metric\":{},\"values\":[1,2],\"timestamps\":[1000]}\n", "2 values but 1 timestamps");
    bad("{\"metric\":{},\"values\":[1,2],\"timestamps\":[2000,1000]}\n", "out of order");
    bad("{\"metric\":{},\"values\":[1,2],\"timestamps\":[1000,1000]}\n", "out of order");
    bad("{\"metric\":{},\"values\":[1],\"timestamps\":[1000.5]}\n", "integer timestamp");
    bad("{\"metric\":{},\"values\":[1],\"timestamps\":[1000],\"x\":1}\n", "unexpected or repeated");
    bad("{\"metric\":{},\"metric\":{},\"values\":[1],\"timestamps\":[1000]}\n",
        "unexpected or repeated");
    bad("{\"metric\":{},\"values\":[1]}\n", "missing \"timestamps\"");
    bad("{\"metric\":{},\"values\":[\"1\"],\"timestamps\":[1000]}\n", "expected a number");
    bad("{\"metric\":{},\"values\":[01],\"timestamps\":[1000]}\n", "expected ',' or ']'");
    bad("{\"metric\":{\"a\":\"x\",\"a\":\"y\"},\"values\":[1],\"timestamps\":[1000]}\n",
        "repeated");
    bad("{\"metric\":{\"a\":\"\\ud800\"},\"values\":[1],\"timestamps\":[1000]}\n", "surrogate");
    bad("{\"metric\":{\"a\":\"\xff\"},\"values\":[1],\"timestamps\":[1000]}\n", "UTF-8");
    bad("{\"metric\":{},\"values\":[1],\"timestamps\":[1000]} x\n", "trailing data");
    bad("<html>502 Bad Gateway</html>\n", "expected an object");
    /* the cap: 300 points of 16 bytes do not fit in 4096 */
    struct sbuf b = {0};
    sbuf_puts(&b, "{\"metric\":{},\"values\":[");
    for (int i = 0; i < 300; i++)
        sbuf_printf(&b, "%s1", i ? "," : "");
    sbuf_puts(&b, "],\"timestamps\":[");
    for (int i = 0; i < 300; i++)
        sbuf_printf(&b, "%s%d", i ? "," : "", i);
    sbuf_puts(&b, "]}\n");
    bad(b.buf, "cap");
    sbuf_free(&b);
}

int main(void)
{
    RUN(test_answer_in_any_chunks);
    RUN(test_answer_current_release);
    RUN(test_split_series_joined);
    RUN(test_failures);
    return test_done();
}
