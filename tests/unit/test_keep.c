/*
 * An owner's keep-until (keep.c): honoured up to the rule's maximum counted from the notice,
 * capped past it and said so, ignored when the rule allows none, and a value that is not a
 * time kept as long as the rule allows rather than turned into a reclaim.
 */
#include "keep.c"

#include "test.h"

#define T0 1700000000.0 /* 2023-11-14T22:13:20Z, the notice */

static void judge1(const char *value, double max, double now, struct keep_verdict *v)
{
    struct keep_request rq = {value, "Notebook ml/alice"};
    keep_judge(&rq, 1, max, T0, now, "notebooks", v);
}

TEST(no_annotation_changes_nothing)
{
    struct keep_verdict v;
    struct keep_request none[2] = {{NULL, "Pod ml/a"}, {NULL, "Notebook ml/a"}};
    keep_judge(none, 2, 86400, T0, T0, "r", &v);
    TEST_CHECK_INT(v.state, KEEP_NONE);
    TEST_CHECK(!v.in_force);
    TEST_CHECK_STR(v.msg, "");
}

TEST(within_the_maximum_is_honoured)
{
    struct keep_verdict v;
    judge1("2023-11-15T10:00:00Z", 86400, T0 + 60, &v);
    TEST_CHECK_INT(v.state, KEEP_HONOURED);
    TEST_CHECK(v.in_force);
    TEST_CHECK_DBL(v.until, 1700042400.0, 1e-6);
    TEST_CHECK_STR(v.msg, "kept until 2023-11-15T10:00:00Z at the owner's request "
                          "(gpureclaim.io/keep-until on Notebook ml/alice)");
    /* once the time is reached the action may go ahead */
    judge1("2023-11-15T10:00:00Z", 86400, 1700042400.0, &v);
    TEST_CHECK(!v.in_force);
    TEST_CHECK_CONTAINS(v.msg, "(that time has passed)");
}

TEST(past_the_maximum_is_capped_and_said)
{
    struct keep_verdict v;
    judge1("2023-12-31T00:00:00Z", 86400, T0 + 60, &v);
    TEST_CHECK_INT(v.state, KEEP_CAPPED);
    TEST_CHECK(v.in_force);
    TEST_CHECK_DBL(v.until, T0 + 86400, 1e-6);
    TEST_CHECK_STR(v.msg, "kept until 2023-11-15T22:13:20Z at the owner's request, capped: "
                          "gpureclaim.io/keep-until on Notebook ml/alice asks for "
                          "2023-12-31T00:00:00Z, rule 'notebooks' allows at most 1d after the "
                          "notice");
    judge1("2023-12-31T00:00:00Z", 86400, T0 + 86400, &v);
    TEST_CHECK_INT(v.state, KEEP_CAPPED);
    TEST_CHECK(!v.in_force);
}

TEST(rule_allowing_zero_ignores_it)
{
    struct keep_verdict v;
    judge1("2023-11-15T10:00:00Z", 0, T0, &v);
    TEST_CHECK_INT(v.state, KEEP_IGNORED);
    TEST_CHECK(!v.in_force);
    TEST_CHECK_STR(v.msg, "gpureclaim.io/keep-until '2023-11-15T10:00:00Z' on Notebook ml/alice "
                          "ignored: rule 'notebooks' allows 0 (maxKeepUntil is not set)");
    judge1("tomorrow", 0, T0, &v);
    TEST_CHECK_INT(v.state, KEEP_IGNORED);
    TEST_CHECK(!v.in_force);
}

TEST(malformed_keeps_as_long_as_the_rule_allows)
{
    struct keep_verdict v;
    judge1("tomorrow please", 3600, T0 + 10, &v);
    TEST_CHECK_INT(v.state, KEEP_MALFORMED);
    TEST_CHECK(v.in_force);
    TEST_CHECK_DBL(v.until, T0 + 3600, 1e-6);
    TEST_CHECK_STR(v.msg, "kept until 2023-11-14T23:13:20Z, the most rule 'notebooks' allows (1h "
                          "after the notice): gpureclaim.io/keep-until on Notebook ml/alice is "
                          "'tomorrow please', not an RFC 3339 time; fix or remove it");
    /* ... and never longer than a well-formed request could */
    judge1("tomorrow please", 3600, T0 + 3600, &v);
    TEST_CHECK(!v.in_force);
    judge1("2023-02-30T00:00:00Z", 3600, T0, &v); /* a date that does not exist */
    TEST_CHECK_INT(v.state, KEEP_MALFORMED);
}

TEST(the_longest_request_of_the_chain_decides)
{
    struct keep_verdict v;
    struct keep_request rq[3] = {{"2023-11-15T00:00:00Z", "Pod ml/a-0"},
                                 {NULL, "StatefulSet ml/a"},
                                 {"2023-11-15T06:00:00Z", "Notebook ml/a"}};
    keep_judge(rq, 3, 86400, T0, T0, "r", &v);
    TEST_CHECK_INT(v.state, KEEP_HONOURED);
    TEST_CHECK_STR(v.where, "Notebook ml/a");
    TEST_CHECK_DBL(v.until, 1700028000.0, 1e-6);
    /* a malformed one keeps up to the maximum, beyond a shorter well-formed one */
    rq[1].value = "soon";
    keep_judge(rq, 3, 86400, T0, T0, "r", &v);
    TEST_CHECK_INT(v.state, KEEP_MALFORMED);
    TEST_CHECK_STR(v.where, "StatefulSet ml/a");
    /* the maximum is counted from `from` (the notice), not from now */
    keep_judge(rq, 3, 86400, T0 - 86400, T0, "r", &v);
    TEST_CHECK(!v.in_force);
}

TEST(names)
{
    TEST_CHECK_STR(keep_state_name(KEEP_CAPPED), "capped");
    TEST_CHECK_STR(keep_state_name((enum keep_state)42), "?");
}

int main(void)
{
    RUN(no_annotation_changes_nothing);
    RUN(within_the_maximum_is_honoured);
    RUN(past_the_maximum_is_capped_and_said);
    RUN(rule_allowing_zero_ignores_it);
    RUN(malformed_keeps_as_long_as_the_rule_allows);
    RUN(the_longest_request_of_the_chain_decides);
    RUN(names);
    return test_done();
}
