/* Unit tests of the exposition renderer: escaping, value formatting, grouping, sorting. */
#include "expo.c"

#include <math.h>

#include "test.h"

static char *render(struct expo *e)
{
    struct sbuf b = {0};
    expo_render(e, &b);
    return sbuf_take(&b);
}

TEST(escapes_exactly_three_characters)
{
    struct expo *e = expo_new();
    expo_add(e, "x_info", EXPO_GAUGE, "help with \\ and\nnewline", 1, "l", "a\\b\"c\nd\te", NULL);
    char *out = render(e);
    TEST_CHECK_CONTAINS(out, "x_info{l=\"a\\\\b\\\"c\\nd\te\"} 1\n");
    TEST_CHECK_CONTAINS(out, "# HELP x_info help with \\\\ and\\nnewline\n");
    free(out);
    expo_free(e);
}

TEST(values)
{
    struct {
        double v;
        const char *want;
    } cases[] = {
        {0, "0"},
        {1, "1"},
        {-3, "-3"},
        {0.1, "0.1"},
        {1e21, "1e+21"},
        {8573157376, "8573157376"},
        {NAN, "NaN"},
        {INFINITY, "+Inf"},
        {-INFINITY, "-Inf"},
        {0.04, "0.04"},
        {1.0 / 3, "0.33333333333333331"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char buf[40];
        expo_format_value(cases[i].v, buf);
        TEST_CHECK_STR(buf, cases[i].want);
    }
}

/* The integer fast path prints exactly what "%.0f" prints, sign of zero included. */
TEST(integers_as_printf_prints_them)
{
    const double v[] = {0,
                        -0.0,
                        1,
                        -1,
                        9,
                        10,
                        99,
                        100,
                        12345678,
                        -987654321,
                        4294967295.0,
                        4294967296.0,
                        1e15,
                        -1e15,
                        9007199254740991.0,
                        -9007199254740991.0};
    for (size_t i = 0; i < ARRAY_LEN(v); i++) {
        char got[40], want[64];
        expo_format_value(v[i], got);
        snprintf(want, sizeof(want), "%.0f", v[i]);
        TEST_CHECK_STR(got, want);
    }
    char got[40];
    for (double x = -100000; x <= 100000; x += 7) {
        char want[64];
        expo_format_value(x * 1000003, got);
        snprintf(want, sizeof(want), "%.0f", x * 1000003);
        TEST_CHECK_STR(got, want);
    }
}

TEST(families_grouped_and_sorted)
{
    struct expo *e = expo_new();
    expo_add(e, "b_metric", EXPO_GAUGE, "b", 2, "gpu", "2", NULL);
    expo_add(e, "a_total", EXPO_COUNTER, "a", 5, NULL);
    expo_add(e, "b_metric", EXPO_GAUGE, "b", 1, "gpu", "1", NULL);
    char *out = render(e);
    TEST_CHECK_STR(out, "# HELP a_total a\n# TYPE a_total counter\na_total 5\n"
                        "# HELP b_metric b\n# TYPE b_metric gauge\n"
                        "b_metric{gpu=\"1\"} 1\nb_metric{gpu=\"2\"} 2\n");
    free(out);
    expo_free(e);
}

TEST(duplicates_keep_first_and_are_counted)
{
    struct expo *e = expo_new();
    for (int i = 0; i < 5; i++)
        expo_add(e, "d", EXPO_GAUGE, "d", i, "k", "v", NULL);
    char *out = render(e);
    TEST_CHECK_STR(out, "# HELP d d\n# TYPE d gauge\nd{k=\"v\"} 0\n");
    TEST_CHECK_INT(expo_duplicates(e), 4);
    free(out);
    expo_free(e);
}

TEST(disagreeing_help_or_type_is_counted)
{
    /* Two places describing one family differently: the first HELP and TYPE are kept (one of
     * each in the output), and every disagreeing sample is counted instead of lost silently. */
    char same_text[] = "first"; /* equal text at another address is no conflict */
    struct expo *e = expo_new();
    expo_add(e, "c", EXPO_GAUGE, "first", 1, "k", "1", NULL);
    expo_add(e, "c", EXPO_GAUGE, same_text, 2, "k", "2", NULL);
    TEST_CHECK_INT(expo_conflicts(e), 0);
    expo_add(e, "c", EXPO_GAUGE, "second", 3, "k", "3", NULL);
    expo_add(e, "c", EXPO_COUNTER, "first", 4, "k", "4", NULL);
    static const struct expo_family fam = {"c", EXPO_GAUGE, "first"};
    expo_put(e, &fam, 5, "k", "5", NULL);
    char *out = render(e);
    TEST_CHECK_STR(out, "# HELP c first\n# TYPE c gauge\nc{k=\"1\"} 1\nc{k=\"2\"} 2\n"
                        "c{k=\"3\"} 3\nc{k=\"4\"} 4\nc{k=\"5\"} 5\n");
    TEST_CHECK_INT(expo_conflicts(e), 2);
    free(out);
    expo_free(e);
}

TEST(null_label_values_are_skipped)
{
    struct expo *e = expo_new();
    expo_add(e, "n", EXPO_GAUGE, "n", 1, "a", "x", "b", (const char *)NULL, NULL);
    /* The NULL value ends the list in expo_add: only "a" is present. */
    char *out = render(e);
    TEST_CHECK_CONTAINS(out, "n{a=\"x\"} 1\n");
    free(out);
    const char *labels[] = {"a", NULL, "b", "y"};
    struct expo *e2 = expo_new();
    expo_addv(e2, "m", EXPO_GAUGE, "m", 2, labels, 2);
    out = render(e2);
    TEST_CHECK_CONTAINS(out, "m{b=\"y\"} 2\n");
    free(out);
    expo_free(e);
    expo_free(e2);
}

TEST(many_families_rehash)
{
    struct expo *e = expo_new();
    char name[32];
    for (int i = 0; i < 500; i++) {
        snprintf(name, sizeof(name), "f%03d", i);
        expo_add(e, name, EXPO_GAUGE, "h", i, NULL);
        expo_add(e, name, EXPO_GAUGE, "h", i, "x", "1", NULL);
    }
    TEST_CHECK_INT(expo_samples(e), 1000);
    char *out = render(e);
    TEST_CHECK_CONTAINS(out, "f000 0\nf000{x=\"1\"} 0\n");
    TEST_CHECK_CONTAINS(out, "f499 499\n");
    /* Still usable after rendering (hash slots rebuilt). */
    expo_add(e, "f250", EXPO_GAUGE, "h", 1, "y", "2", NULL);
    struct sbuf b = {0};
    expo_render(e, &b);
    TEST_CHECK_CONTAINS(b.buf, "f250{y=\"2\"} 1\n");
    sbuf_free(&b);
    free(out);
    expo_free(e);
}

/* An empty exposition (a program with nothing to say yet) renders as nothing, and is well
   defined doing so: under UBSan, qsort and memset of its NULL arrays aborted (make check-san). */
TEST(empty_renders_nothing)
{
    struct expo *e = expo_new();
    char *out = render(e);
    TEST_CHECK_STR(out ? out : "", "");
    free(out);
    expo_free(e);
}

int main(void)
{
    RUN(escapes_exactly_three_characters);
    RUN(empty_renders_nothing);
    RUN(values);
    RUN(integers_as_printf_prints_them);
    RUN(families_grouped_and_sorted);
    RUN(duplicates_keep_first_and_are_counted);
    RUN(disagreeing_help_or_type_is_counted);
    RUN(null_label_values_are_skipped);
    RUN(many_families_rehash);
    return test_done();
}
