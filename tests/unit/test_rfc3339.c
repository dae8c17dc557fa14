/*
 * Unit tests of RFC 3339 time text (common/rfc3339.c), which replaced five copies: audit.c,
 * decide.c, kube.c (whole seconds), plan.c (milliseconds when not whole), lease.c
 * (microseconds) and log.c's own (milliseconds always).
 */
#include "rfc3339.c"

#include <math.h>

#include "test.h"

TEST(precisions)
{
    static const struct {
        double t;
        enum rfc3339_prec p;
        const char *want;
    } cases[] = {
        {1700000000, RFC3339_SEC, "2023-11-14T22:13:20Z"},
        {1700000000.999, RFC3339_SEC, "2023-11-14T22:13:20Z"}, /* floored: not yet :21 */
        {1700000000, RFC3339_MILLI_FRAC, "2023-11-14T22:13:20Z"},
        {1700000000.5, RFC3339_MILLI_FRAC, "2023-11-14T22:13:20.500Z"},
        {1700000000.9996, RFC3339_MILLI_FRAC, "2023-11-14T22:13:21Z"}, /* rounds, carries */
        {1700000000, RFC3339_MILLI, "2023-11-14T22:13:20.000Z"},
        {1700000000.25, RFC3339_MILLI, "2023-11-14T22:13:20.250Z"},
        {1700000000.25, RFC3339_MICRO, "2023-11-14T22:13:20.250000Z"},
        {1700000000.0000004, RFC3339_MICRO, "2023-11-14T22:13:20.000000Z"},
        {1767225599.9999996, RFC3339_MICRO, "2026-01-01T00:00:00.000000Z"}, /* year carry */
        {0, RFC3339_SEC, "1970-01-01T00:00:00Z"},
        {-1, RFC3339_SEC, "1969-12-31T23:59:59Z"},
        {-0.5, RFC3339_MILLI_FRAC, "1969-12-31T23:59:59.500Z"},
        {951782400, RFC3339_SEC, "2000-02-29T00:00:00Z"},
        {-62135596800.0, RFC3339_SEC, "0001-01-01T00:00:00Z"}, /* four-digit year */
        {-62167219200.0, RFC3339_SEC, "0000-01-01T00:00:00Z"},
        {253402300799.0, RFC3339_SEC, "9999-12-31T23:59:59Z"},
        /* What RFC 3339 cannot write, and unknown times: "-", never a plausible time. */
        {253402300800.0, RFC3339_SEC, "-"},
        {253402300799.9999, RFC3339_MILLI, "-"}, /* rounds into year 10000 */
        {-62167219201.0, RFC3339_SEC, "-"},
        {NAN, RFC3339_SEC, "-"},
        {INFINITY, RFC3339_MICRO, "-"},
        {-INFINITY, RFC3339_MILLI_FRAC, "-"},
        {1700000000, (enum rfc3339_prec)42, "-"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char buf[RFC3339_LEN];
        TEST_CHECK_STR(rfc3339_format(buf, sizeof(buf), cases[i].t, cases[i].p), cases[i].want);
    }
}

TEST(small_buffer_truncates)
{
    char buf[11];
    TEST_CHECK_STR(rfc3339_format(buf, sizeof(buf), 1700000000, RFC3339_MICRO), "2023-11-14");
    /* The longest text takes 28 bytes: written in place from there, truncated below. */
    char fits[28], short1[27];
    TEST_CHECK_STR(rfc3339_format(fits, sizeof(fits), 253402300799.5, RFC3339_MICRO),
                   "9999-12-31T23:59:59.500000Z");
    TEST_CHECK_STR(rfc3339_format(short1, sizeof(short1), 253402300799.5, RFC3339_MICRO),
                   "9999-12-31T23:59:59.500000");
}

/* What rfc3339_format writes of t, through gmtime_r and printf (the formats and the calendar
   the hand-written digits and rfc3339_civil replaced). */
static void want_of(double t, enum rfc3339_prec prec, char *want, size_t len)
{
    static const double scale[] = {1, 1e3, 1e3, 1e6};
    static const int digits[] = {0, 3, 3, 6};
    char date[64];
    double whole = floor(t);
    long frac = prec == RFC3339_SEC ? 0 : lround((t - whole) * scale[prec]);
    if (frac >= (long)scale[prec])
        whole += 1, frac = 0;
    time_t secs = (time_t)whole;
    struct tm tm;
    if (whole >= RFC3339_END || !gmtime_r(&secs, &tm)) {
        snprintf(want, len, "-");
    } else {
        snprintf(date, sizeof(date), "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        if (digits[prec] == 0 || (prec == RFC3339_MILLI_FRAC && frac == 0))
            snprintf(want, len, "%sZ", date);
        else
            snprintf(want, len, "%s.%0*ldZ", date, digits[prec], frac);
    }
}

/* The digits written by hand (rfc3339_put) are what the printf formats they replaced wrote,
   over random times of the whole range and every precision. */
TEST(format_matches_printf)
{
    unsigned long long x = 88172645463325252ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double t =
            RFC3339_MIN + (double)(x % 10000000000000ull) / 1e13 * (RFC3339_END - RFC3339_MIN);
        if (i % 3 == 0)
            t = 1.6e9 + (double)(x % 400000000000ull) / 1000.0; /* this century, to the ms */
        enum rfc3339_prec prec = (enum rfc3339_prec)(x >> 60) % 4;
        char want[64], got[RFC3339_LEN];
        want_of(t, prec, want, sizeof(want));
        rfc3339_format(got, sizeof(got), t, prec);
        if (strcmp(got, want) != 0) {
            TEST_CHECK_STR(got, want);
            break;
        }
    }
}

/* The calendar (rfc3339_civil) is gmtime_r's at the edges of days, months, years and eras:
   the first and last second of every 7th day of the years 0000-9999 (so every day of the
   week, month and leap cycle comes up), and the ends of the range. */
TEST(calendar_matches_gmtime)
{
    static const double ends[] = {
        RFC3339_MIN, RFC3339_MIN + 86399, -86400,           -1, 0, 951782400, 951868799,
        4107542400,  RFC3339_END - 1,     RFC3339_END - 0.5};
    char want[64], got[RFC3339_LEN];
    for (size_t i = 0; i < ARRAY_LEN(ends); i++) {
        want_of(ends[i], RFC3339_SEC, want, sizeof(want));
        TEST_CHECK_STR(rfc3339_format(got, sizeof(got), ends[i], RFC3339_SEC), want);
    }
    for (double d = RFC3339_MIN / 86400; d < RFC3339_END / 86400; d += 7) {
        for (int k = 0; k < 2; k++) {
            double t = d * 86400 + (k ? 86399 : 0);
            want_of(t, RFC3339_SEC, want, sizeof(want));
            if (strcmp(rfc3339_format(got, sizeof(got), t, RFC3339_SEC), want) != 0) {
                TEST_CHECK_STR(got, want);
                return;
            }
        }
    }
}

TEST(parse)
{
    static const struct {
        const char *in;
        int rc;
        double want;
    } cases[] = {
        {"1700000000", 0, 1700000000},
        {"1700000000.25", 0, 1700000000.25},
        {"2023-11-14T22:13:20Z", 0, 1700000000},
        {"2023-11-14t22:13:20z", 0, 1700000000},
        {"2023-11-14 22:13:20Z", 0, 1700000000},
        {"2023-11-14T23:13:20+01:00", 0, 1700000000},
        {"2023-11-14T20:43:20-01:30", 0, 1700000000},
        {"2023-11-14T22:13:20.25Z", 0, 1700000000.25},
        {"2023-11-14T22:13:20.000001Z", 0, 1700000000.000001},
        {"2000-02-29T00:00:00Z", 0, 951782400},
        {"2023-02-29T00:00:00Z", -1, 0}, /* not a leap year: refused, not 1 March */
        {"2023-02-30T00:00:00Z", -1, 0},
        {"2023-11-14T22:13:20", -1, 0}, /* no offset */
        {"2023-11-14", -1, 0},
        {"2023-11-14T22:13:20.Z", -1, 0},
        {"2023-11-14T24:00:00Z", -1, 0},
        {"2023-11-14T22:13:20+24:00", -1, 0},
        {"yesterday", -1, 0},
        {"", -1, 0},
        {"-5", -1, 0},
        {"NaN", -1, 0},
        {"2023-11-14T22:13:20Zjunk", -1, 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        double t = -1;
        char err[128] = "";
        int rc = rfc3339_parse(cases[i].in, &t, err, sizeof(err));
        TEST_CHECK_INT(rc, cases[i].rc);
        if (cases[i].rc == 0)
            TEST_CHECK_DBL(t, cases[i].want, 1e-6);
        else
            TEST_CHECK_CONTAINS(err, "invalid time '");
    }
}

/* Every precision reads back as what it wrote (to its resolution). */
TEST(format_parse_round_trip)
{
    static const double ts[] = {0, 1700000000, 1700000000.5, 1767225599.123456, 951782400.25};
    static const struct {
        enum rfc3339_prec p;
        double res;
    } ps[] = {
        {RFC3339_SEC, 1}, {RFC3339_MILLI_FRAC, 1e-3}, {RFC3339_MILLI, 1e-3}, {RFC3339_MICRO, 1e-6}};
    for (size_t i = 0; i < ARRAY_LEN(ts); i++)
        for (size_t j = 0; j < ARRAY_LEN(ps); j++) {
            char buf[RFC3339_LEN], err[128];
            double back = -1;
            TEST_CHECK_INT(rfc3339_parse(rfc3339_format(buf, sizeof(buf), ts[i], ps[j].p), &back,
                                         err, sizeof(err)),
                           0);
            TEST_CHECK(fabs(back - ts[i]) <= ps[j].res);
        }
}

int main(void)
{
    RUN(precisions);
    RUN(small_buffer_truncates);
    RUN(parse);
    RUN(format_parse_round_trip);
    RUN(format_matches_printf);
    RUN(calendar_matches_gmtime);
    return test_done();
}
