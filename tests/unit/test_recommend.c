/*
 * Unit tests of recommend.c: the grid's lists and shares, the Wilson interval against
 * published values, the choice under the target (ties to the longer idle timer, then the
 * lower threshold), "not enough data", no point inside the target, and the frontier.
 */
#include "recommend.c"

#include "test.h"

#define P(th, it, no, rc, rw, gh)                                                                  \
    {                                                                                              \
        .threshold = (th), .idle_timer = (it), .notice = (no), .reclaims = (rc),                   \
        .returns_within = (rw), .gpu_seconds = (gh)*3600.0, .median_return = NAN                   \
    }

TEST(lists)
{
    double *v;
    size_t n;
    char err[256];
    TEST_CHECK_INT(
        rec_parse_list("20,1,5%,2,5", false, false, "thresholds", &v, &n, err, sizeof(err)), 0);
    TEST_CHECK_INT(n, 4);
    TEST_CHECK_DBL(v[0], 1, 0);
    TEST_CHECK_DBL(v[2], 5, 0);
    TEST_CHECK_DBL(v[3], 20, 0);
    free(v);
    TEST_CHECK_INT(
        rec_parse_list("1h,10m,24h", true, false, "idle-timers", &v, &n, err, sizeof(err)), 0);
    TEST_CHECK_INT(n, 3);
    TEST_CHECK_DBL(v[0], 600, 0);
    TEST_CHECK_DBL(v[2], 86400, 0);
    free(v);
    TEST_CHECK_INT(rec_parse_list("0s,15m", true, true, "notice-periods", &v, &n, err, sizeof(err)),
                   0);
    TEST_CHECK_INT(n, 2);
    free(v);
    TEST_CHECK_INT(rec_parse_list("1,x,5", false, false, "thresholds", &v, &n, err, sizeof(err)),
                   -1);
    TEST_CHECK_STR(err, "invalid value 'x' in '--thresholds': want a percent above 0 and at "
                        "most 100, e.g. 5 or 5%");
    TEST_CHECK_INT(rec_parse_list("1,,5", false, false, "thresholds", &v, &n, err, sizeof(err)),
                   -1);
    TEST_CHECK_CONTAINS(err, "an empty item");
    TEST_CHECK_INT(rec_parse_list("150", false, false, "thresholds", &v, &n, err, sizeof(err)), -1);
    TEST_CHECK_INT(rec_parse_list("0s,1h", true, false, "idle-timers", &v, &n, err, sizeof(err)),
                   -1);
    TEST_CHECK_STR(err, "invalid value '0s' in '--idle-timers': want a duration above 0 such as "
                        "15m");
    TEST_CHECK_INT(rec_parse_list("", true, false, "idle-timers", &v, &n, err, sizeof(err)), -1);
}

TEST(shares)
{
    double s = NAN; /* set by each call that succeeds */
    char err[256];
    TEST_CHECK_INT(rec_parse_share("10%", 100, "max-return-share", &s, err, sizeof(err)), 0);
    TEST_CHECK_DBL(s, 0.1, 1e-12);
    TEST_CHECK_INT(rec_parse_share("25", 100, "holdout", &s, err, sizeof(err)), 0);
    TEST_CHECK_DBL(s, 0.25, 1e-12);
    TEST_CHECK_INT(rec_parse_share("0", 100, "holdout", &s, err, sizeof(err)), 0);
    TEST_CHECK_DBL(s, 0, 0);
    TEST_CHECK_INT(rec_parse_share("120%", 100, "max-return-share", &s, err, sizeof(err)), -1);
    TEST_CHECK_STR(err, "invalid share '120%' for '--max-return-share': want a percent from 0 to "
                        "100, e.g. 10%");
    TEST_CHECK_INT(rec_parse_share("-1", 100, "max-return-share", &s, err, sizeof(err)), -1);
    TEST_CHECK_INT(rec_parse_share("abc", 100, "max-return-share", &s, err, sizeof(err)), -1);
    TEST_CHECK_INT(rec_parse_share("60", 50, "holdout", &s, err, sizeof(err)), -1);
}

TEST(wilson)
{
    double lo, hi;
    /* Published values (e.g. Newcombe 1998, Table I: 81/263 -> 0.2553, 0.3662; 0/10 ->
       0, 0.2775; 10/10 -> 0.7225, 1). */
    rec_wilson(81, 263, &lo, &hi);
    TEST_CHECK_DBL(lo, 0.2553, 5e-5);
    TEST_CHECK_DBL(hi, 0.3662, 5e-5);
    rec_wilson(0, 10, &lo, &hi);
    TEST_CHECK_DBL(lo, 0, 1e-12);
    TEST_CHECK_DBL(hi, 0.2775, 5e-5);
    rec_wilson(10, 10, &lo, &hi);
    TEST_CHECK_DBL(lo, 0.7225, 5e-5);
    TEST_CHECK_DBL(hi, 1, 1e-12);
    rec_wilson(0, 0, &lo, &hi);
    TEST_CHECK(isnan(lo) && isnan(hi));
}

TEST(choose_most_gpu_hours_inside_target)
{
    struct rec_point p[] = {
        P(10, 900, 0, 100, 80, 300), /* most GPU-hours, 80 % returns: out */
        P(10, 3600, 0, 20, 2, 200),  /* 10 %: inside (at the target) */
        P(5, 3600, 0, 10, 0, 150),   /* inside, fewer GPU-hours */
        P(10, 7200, 0, 5, 0, 0),     /* frees nothing */
    };
    TEST_CHECK_INT(rec_choose(p, 4, 0.10), 1);
    /* a stricter target leaves only the third */
    TEST_CHECK_INT(rec_choose(p, 4, 0.05), 2);
    /* a target of 0 %: still the third (no returns) */
    TEST_CHECK_INT(rec_choose(p, 4, 0), 2);
    /* 100 %: the most GPU-hours, whatever the returns */
    TEST_CHECK_INT(rec_choose(p, 4, 1), 0);
}

TEST(choose_ties)
{
    /* Same GPU-hours: the longer idle timer, then the lower threshold, then the longer
       notice period. */
    struct rec_point a[] = {P(10, 900, 0, 4, 0, 50), P(10, 3600, 0, 4, 0, 50),
                            P(5, 1800, 0, 4, 0, 50)};
    TEST_CHECK_INT(rec_choose(a, 3, 0.1), 1);
    struct rec_point b[] = {P(10, 3600, 0, 4, 0, 50), P(2, 3600, 0, 4, 0, 50),
                            P(5, 3600, 0, 4, 0, 50)};
    TEST_CHECK_INT(rec_choose(b, 3, 0.1), 1);
    struct rec_point c[] = {P(2, 3600, 0, 4, 0, 50), P(2, 3600, 900, 4, 0, 50)};
    TEST_CHECK_INT(rec_choose(c, 2, 0.1), 1);
}

TEST(none_inside_target)
{
    struct rec_point p[] = {P(10, 900, 0, 10, 9, 30), P(10, 3600, 0, 5, 3, 20),
                            P(1, 3600, 0, 0, 0, 0)};
    TEST_CHECK_INT(rec_choose(p, 3, 0.10), -1);
    TEST_CHECK_INT(rec_choose(p, 0, 0.10), -1);
}

TEST(not_enough_data)
{
    struct rec_point p[] = {P(5, 900, 0, 30, 1, 30), P(10, 900, 900, 12, 1, 20),
                            P(10, 900, 0, 14, 1, 20), P(10, 3600, 0, 9, 0, 10)};
    TEST_CHECK_INT(rec_most_eager(p, 4), 2);
    TEST_CHECK_INT(rec_most_eager(p, 0), -1);
    TEST_CHECK_INT(rec_enough(3 * 86400, 14, 3 * 86400, 10), REC_CHOSEN);
    TEST_CHECK_INT(rec_enough(3 * 86400 - 60, 14, 3 * 86400, 10), REC_SHORT_HISTORY);
    TEST_CHECK_INT(rec_enough(NAN, 14, 3 * 86400, 10), REC_SHORT_HISTORY);
    TEST_CHECK_INT(rec_enough(4 * 86400, 9, 3 * 86400, 10), REC_FEW_IDLE_SPELLS);
}

TEST(frontier)
{
    struct rec_point p[] = {
        P(10, 900, 0, 100, 80, 300), /* most GPU-hours: on */
        P(10, 3600, 0, 20, 2, 200),  /* on */
        P(5, 3600, 0, 20, 3, 150),   /* beaten by [1] on both */
        P(5, 7200, 0, 10, 0, 100),   /* fewest returns, but [4] is the same and gentler */
        P(1, 7200, 0, 10, 0, 100),   /* on */
        P(1, 86400, 0, 0, 0, 0),     /* frees nothing: off */
    };
    bool on[6];
    rec_frontier(p, 6, on);
    TEST_CHECK(on[0] && on[1] && !on[2] && !on[3] && on[4] && !on[5]);
}

int main(void)
{
    RUN(lists);
    RUN(shares);
    RUN(wilson);
    RUN(choose_most_gpu_hours_inside_target);
    RUN(choose_ties);
    RUN(none_inside_target);
    RUN(not_enough_data);
    RUN(frontier);
    return test_done();
}
