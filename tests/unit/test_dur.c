/*
 * Unit tests of duration text (common/dur.c): Prometheus' ParseDuration and Duration.String,
 * the latter with the cases the four former copies disagreed on (5400 s was "90m" in act.c,
 * "1h30m" in plan.c).
 */
#include "dur.c"

#include <math.h>

#include "test.h"

TEST(prometheus_format)
{
    static const struct {
        double in;
        const char *want;
    } cases[] = {
        {5400, "1h30m"}, /* act.c printed "90m" */
        {0, "0s"},
        {-0.0, "0s"},
        {45, "45s"},
        {900, "15m"},
        {3600, "1h"},
        {86400, "1d"}, /* act.c printed "24h" */
        {97200, "1d3h"},
        {3661, "1h1m1s"},
        {172800 + 60, "2d1m"},
        {7 * 86400, "1w"},   /* weeks only when exact ... */
        {30 * 86400, "30d"}, /* ... "30d", not "4w2d" */
        {14 * 86400 + 1, "14d1s"},
        {365 * 86400, "1y"},
        {2 * 365 * 86400, "2y"},
        {59.6, "59s600ms"}, /* plan.c rounded this to "1m" */
        {0.5, "500ms"},     /* sub-second: milliseconds, Prometheus' resolution */
        {1.5, "1s500ms"},   /* act.c printed "2s" */
        {0.0004, "0s"},     /* under half a millisecond */
        {0.0005, "1ms"},
        {22.5, "22s500ms"},
        {-1, "-1s"}, /* negative: sign and magnitude (plan.c printed "-") */
        {-5400, "-1h30m"},
        {NAN, "-"}, /* unknown */
        {INFINITY, "-"},
        {-INFINITY, "-"},
        {1e16, "1e+16s"}, /* past int64 milliseconds */
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char buf[DUR_LEN];
        TEST_CHECK_STR(dur_format(buf, sizeof(buf), cases[i].in), cases[i].want);
    }
}

TEST(largest_output_fits_and_small_buffers_truncate)
{
    char buf[DUR_LEN];
    /* Just under the int64 millisecond limit: every unit but y and w present. */
    dur_format(buf, sizeof(buf), 9.1e15 + 0.123 * 86400);
    TEST_CHECK(strlen(buf) < DUR_LEN - 1);
    TEST_CHECK(buf[strlen(buf) - 1] == 's');
    char small[4];
    TEST_CHECK_STR(dur_format(small, sizeof(small), 3661), "1h1");
    char one[1];
    TEST_CHECK_STR(dur_format(one, sizeof(one), -3661), "");
}

TEST(prometheus_parse)
{
    static const struct {
        const char *in;
        int rc;
        double secs;
    } cases[] = {
        {"30s", 0, 30},
        {"15m", 0, 900},
        {"1h30m", 0, 5400},
        {"2d", 0, 172800},
        {"1w", 0, 604800},
        {"1y", 0, 31536000},
        {"0", 0, 0},
        {"0s", 0, 0},
        {"1500ms", 0, 1.5},
        {"1m30s500ms", 0, 90.5},
        {"1d2h3m4s", 0, 93784},
        {"", -1, 0},
        {"15", -1, 0},
        {"m", -1, 0},
        {"1h1h", -1, 0},
        {"1m1h", -1, 0},
        {"1s1ms1s", -1, 0},
        {"-5m", -1, 0},
        {"1.5h", -1, 0},
        {"15 m", -1, 0},
        {"15M", -1, 0},
        {"1x", -1, 0},
        {"9999999999999999s", -1, 0},
        {"300000000y", -1, 0},
        {"1000000y", 0, 31536000000000.0},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        double s = -1;
        int rc = dur_parse(cases[i].in, &s);
        if (rc != cases[i].rc)
            fprintf(stderr, "duration '%s'\n", cases[i].in);
        TEST_CHECK_INT(rc, cases[i].rc);
        if (cases[i].rc == 0)
            TEST_CHECK_DBL(s, cases[i].secs, 1e-9);
    }
    double s;
    TEST_CHECK_INT(dur_parse(NULL, &s), -1);
}

/* What dur_format prints parses back to the same milliseconds (the reason both live here). */
TEST(format_parses_back)
{
    static const double cases[] = {
        0,          0.001,           0.5,           1.5, 45, 59.6, 5400, 86400, 97200, 7 * 86400,
        30 * 86400, 365 * 86400 + 1, 14 * 86400 + 1};
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char buf[DUR_LEN];
        double back = -1;
        TEST_CHECK_INT(dur_parse(dur_format(buf, sizeof(buf), cases[i]), &back), 0);
        TEST_CHECK_DBL(back, cases[i], 1e-9);
    }
}

int main(void)
{
    RUN(prometheus_format);
    RUN(largest_output_fits_and_small_buffers_truncate);
    RUN(prometheus_parse);
    RUN(format_parses_back);
    return test_done();
}
