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

/* A time for as_read_is_the_parse: fractions, negatives, the ends of 0000-9999, NaN, Inf. */
static double odd_time(unsigned long *x)
{
    *x = *x * 6364136223846793005ul + 1442695040888963407ul;
    double f = (double)(*x >> 40) / 16777216.0; /* [0, 1) */
    switch ((*x >> 33) % 9) {
    case 0:
        return NAN;
    case 1:
        return (*x >> 20) % 2 ? INFINITY : -INFINITY;
    case 2:
        return -62167219200.0 + f * 4 - 2; /* 0000-01-01T00:00:00Z, either side */
    case 3:
        return 253402300800.0 + f * 4 - 2; /* 10000-01-01T00:00:00Z, either side */
    case 4:
        return -f * 1e9; /* before 1970 */
    case 5:
        return floor(T0 + f * 1e6); /* whole */
    default:
        return T0 + f * 1e8;
    }
}

static char *odd_str(unsigned long *x)
{
    static const char *const v[] = {
        NULL,          "",     "a/b",          "quote\"back\\slash",  "tab\tnl\n", "\x7f",
        "caf\xc3\xa9", "\xc3", "\xed\xa0\x80", "\xf0\x9f\x98\x80 ok", "\x01",      "</script>"};
    *x = *x * 6364136223846793005ul + 1442695040888963407ul;
    const char *s = v[(*x >> 33) % ARRAY_LEN(v)];
    return s ? xstrdup(s) : NULL;
}

/* A notice without a record: odd times (actedAt only unless `unacted`), strings from str. */
static void random_notice(struct notice *n, unsigned long *x, bool unacted,
                          char *(*str)(unsigned long *))
{
    notice_init(n);
    n->act_at = odd_time(x);
    n->idle_since = odd_time(x);
    n->noticed_at = odd_time(x);
    n->acted_at = unacted ? NAN : odd_time(x);
    n->rule = str(x);
    n->action = str(x);
    n->window = str(x);
    n->threshold = str(x);
    n->uid = str(x);
}

/* A string of random bytes (every byte from 1 to 255 can come up, control bytes and the
   escaped ones often), or one of odd_str's. */
static char *random_str(unsigned long *x)
{
    *x = *x * 6364136223846793005ul + 1442695040888963407ul;
    if ((*x >> 33) % 4 == 0)
        return odd_str(x);
    static const char often[] = "\b\n\r\t\f\"\\/\x01\x1f\x7f a";
    size_t n = (*x >> 40) % 12;
    char *s = xmalloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        *x = *x * 6364136223846793005ul + 1442695040888963407ul;
        unsigned v = (unsigned)(*x >> 33);
        s[i] = v % 2 ? often[(v >> 1) % (sizeof(often) - 1)] : (char)(1 + (v >> 1) % 255);
    }
    s[n] = '\0';
    return s;
}

/* The notice without a record, written by hand, is json-c's bytes. */
TEST(encodes_as_json_c)
{
    unsigned long x = 7;
    for (int i = 0; i < 20000; i++) {
        struct notice n;
        random_notice(&n, &x, i % 3 != 0, random_str);
        char *got = notice_encode(&n), *want = notice_json(&n);
        bool same = strcmp(got, want) == 0;
        if (!same)
            TEST_CHECK_STR(got, want);
        free(got);
        free(want);
        notice_free(&n);
        if (!same)
            break;
    }
}

/* notice_as_read gives what the parse of the encoding gives, or fails where it fails. */
TEST(as_read_is_the_parse)
{
    unsigned long x = 99;
    size_t ok = 0, refused = 0;
    for (int i = 0; i < 20000; i++) {
        struct notice n;
        random_notice(&n, &x, i % 3 != 0, odd_str);
        char *text = notice_encode(&n), err[160];
        struct notice parsed, direct;
        int a = notice_parse(text, strlen(text), &parsed, err, sizeof(err));
        int b = notice_as_read(&n, &direct);
        bool same = a == b && (a != 0 || notice_equal(&parsed, &direct));
        if (!same)
            printf("  differs (%d, %d) for %s\n", a, b, text);
        TEST_CHECK(same);
        ok += a == 0;
        refused += a != 0;
        free(text);
        notice_free(&parsed);
        notice_free(&direct);
        notice_free(&n);
        if (!same)
            break;
    }
    TEST_CHECK(ok > 1000 && refused > 1000); /* both ways met */
    struct notice n = sample(), out;
    n.acted.present = true; /* an acted record: not modelled */
    TEST_CHECK_INT(notice_as_read(&n, &out), -1);
    TEST_CHECK(out.rule == NULL);
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
    RUN(as_read_is_the_parse);
    RUN(encodes_as_json_c);
    RUN(lenient_where_it_always_was);
    RUN(strict);
    return test_done();
}
