/*
 * The notice annotation's codec (notice.c): the bytes it writes are those the engine has always
 * written (members in order, slashes escaped unless there is an `acted` record, "-" for an
 * unknown idleSince), they read back to the same struct, and the parser is strict: not an
 * object, a member of the wrong type, a time that is not one, or a string with a NUL is an
 * error naming the member; unknown members and null are ignored.
 */
#include "notice.c"

#include "test.h"

#define T0 1700000000.0 /* 2023-11-14T22:13:20Z */

static struct notice sample(void)
{
    struct notice n;
    notice_init(&n);
    n.act_at = T0 + 300;
    n.rule = xstrdup("a/b");
    n.action = xstrdup("scaleToZero");
    n.idle_since = T0 - 900.7;
    n.window = xstrdup("15m");
    n.threshold = xstrdup("10%");
    n.noticed_at = T0 + 0.9;
    n.uid = xstrdup("pod-1");
    return n;
}

TEST(encodes_the_engine_bytes)
{
    struct notice n = sample();
    char *s = notice_encode(&n);
    TEST_CHECK_STR(s, "{\"actAt\":\"2023-11-14T22:18:20Z\",\"rule\":\"a\\/b\",\"action\":"
                      "\"scaleToZero\",\"idleSince\":\"2023-11-14T21:58:19Z\",\"window\":\"15m\","
                      "\"threshold\":\"10%\",\"noticedAt\":\"2023-11-14T22:13:20Z\",\"uid\":"
                      "\"pod-1\"}");
    free(s);
    n.acted_at = T0 + 300;
    n.idle_since = NAN;
    free(n.uid);
    n.uid = NULL;
    n.acted = (struct notice_acted){.present = true,
                                    .way = xstrdup("patch"),
                                    .uid = xstrdup("rc-1"),
                                    .has_generation = true,
                                    .generation = 3,
                                    .undo = xstrdup("{\"spec\":{\"suspend\":false}}")};
    s = notice_encode(&n);
    TEST_CHECK_STR(s, "{\"actAt\":\"2023-11-14T22:18:20Z\",\"rule\":\"a/b\",\"action\":"
                      "\"scaleToZero\",\"idleSince\":\"-\",\"window\":\"15m\",\"threshold\":"
                      "\"10%\",\"noticedAt\":\"2023-11-14T22:13:20Z\",\"actedAt\":"
                      "\"2023-11-14T22:18:20Z\",\"acted\":{\"way\":\"patch\",\"uid\":\"rc-1\","
                      "\"generation\":3,\"undo\":{\"spec\":{\"suspend\":false}}}}");
    free(s);
    notice_free(&n);
}

TEST(round_trip)
{
    struct notice n = sample(), back;
    n.acted = (struct notice_acted){.present = true,
                                    .way = xstrdup("scale"),
                                    .uid = xstrdup("d-1"),
                                    .has_replicas_before = true,
                                    .replicas_before = 2,
                                    .key = xstrdup("k"),
                                    .value = xstrdup("")};
    char err[160] = "";
    char *s = notice_encode(&n);
    TEST_CHECK_INT(notice_parse(s, strlen(s), &back, err, sizeof(err)), 0);
    TEST_CHECK_DBL(back.noticed_at, T0, 0);       /* whole seconds */
    TEST_CHECK_DBL(back.idle_since, T0 - 901, 0); /* floored */
    TEST_CHECK(!notice_equal(&n, &back));         /* n had fractions */
    char *again = notice_encode(&back);
    TEST_CHECK_STR(again, s);
    struct notice third;
    TEST_CHECK_INT(notice_parse(again, strlen(again), &third, err, sizeof(err)), 0);
    TEST_CHECK(notice_equal(&back, &third));
    notice_free(&third);
    free(again);
    free(s);
    notice_free(&back);
    notice_free(&n);
}

TEST(lenient_where_it_always_was)
{
    struct notice n;
    char err[160] = "";
    const char *s = "{\"rule\":\"r\",\"idleSince\":null,\"actAt\":\"-\",\"future\":[1,2],"
                    "\"acted\":null}";
    TEST_CHECK_INT(notice_parse(s, strlen(s), &n, err, sizeof(err)), 0);
    TEST_CHECK_STR(n.rule, "r");
    TEST_CHECK(isnan(n.idle_since) && isnan(n.act_at) && isnan(n.noticed_at));
    TEST_CHECK(!n.acted.present && !n.uid);
    notice_free(&n);
}

static void refused(const char *s, const char *want)
{
    struct notice n;
    char err[160] = "";
    TEST_CHECK_INT(notice_parse(s, strlen(s), &n, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, want);
    notice_free(&n);
}

TEST(strict)
{
    refused("", "empty");
    refused("[1]", "not a JSON object");
    refused("{\"rule\":1}", "member 'rule' is not a string");
    refused("{\"noticedAt\":\"yesterday\"}", "member 'noticedAt' is not a time");
    refused("{\"noticedAt\":\"99999999999999\"}", "member 'noticedAt' is not a time");
    refused("{\"uid\":\"a\\u0000b\"}", "member 'uid' is not valid UTF-8 text");
    refused("{\"acted\":[]}", "member 'acted' is not an object");
    refused("{\"acted\":{\"generation\":\"3\"}}", "acted record member 'generation' is not an "
                                                  "integer");
    refused("{\"acted\":{\"undo\":\"{}\"}}", "acted record member 'undo' is not an object");
    refused("{\"rule\":\"r\"} x", "trailing data");
}

int main(void)
{
    RUN(encodes_the_engine_bytes);
    RUN(round_trip);
    RUN(lenient_where_it_always_was);
    RUN(strict);
    return test_done();
}
