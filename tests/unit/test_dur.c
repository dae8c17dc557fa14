/*
 * Unit tests of duration text (common/dur.c): Prometheus' Duration.String, including the
 * cases the four former copies disagreed on (5400 s was "90m" in act.c, "1h30m" in plan.c).
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

int main(void)
{
    RUN(prometheus_format);
    RUN(largest_output_fits_and_small_buffers_truncate);
    return test_done();
}
