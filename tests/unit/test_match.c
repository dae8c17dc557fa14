/*
 * Tests for label matchers (enforcer/match.c): a table of matchers with the result
 * Prometheus gives for them (RE2 syntax, fully anchored, an absent label is the empty
 * string, PromQL string escapes), the patterns Prometheus rejects, and pathological patterns
 * that used to take gigabytes in glibc's regcomp and must now be refused or compiled within
 * RE2's memory bound. The same accept/reject cases are checked against a real Prometheus by
 * `promtool test rules tests/prometheus/matchers.yml` (make check-rules).
 *
 * Matchers below are C strings of the matcher's text, as a rules file holds it after YAML
 * unquoting: 'pod=~"train-\\d+"' in single-quoted YAML is "pod=~\"train-\\\\d+\"" here.
 */
#include "match.c"

#include "test.h"

static void one_label(struct labels *ls, const char *value)
{
    memset(ls, 0, sizeof(*ls));
    if (value)
        labels_set(ls, "pod", value);
}

TEST(prometheus_results)
{
    static const struct {
        const char *matcher;
        const char *value; /* NULL: label absent */
        bool want;
    } cases[] = {
        /* RE2 classes that POSIX ERE reads as something else. */
        {"pod=~\"train-\\\\d+\"", "train-12", true},
        {"pod=~\"train-\\\\d+\"", "train-x", false},
        {"pod=~\"train-\\\\d+\"", "train-d", false}, /* ERE would read \d as d */
        {"pod=~\"\\\\w+\"", "a_1", true},
        {"pod=~\"\\\\w+\"", "a-1", false},
        {"pod=~\"a\\\\sb\"", "a b", true},
        {"pod=~\"a\\\\sb\"", "asb", false},
        {"pod=~\"\\\\D\"", "x", true},
        {"pod=~\"[[:alpha:]]+\"", "abc", true},
        {"pod=~\"[[:alpha:]]+\"", "ab1", false},
        {"pod=~\"\\\\pL+\"", "\xc3\xa9t\xc3\xa9", true}, /* "été" */
        {"pod=~\"\\\\p{Greek}\"", "\xce\xb1", true},
        {"pod=~\"(?i)abc\"", "ABC", true},
        {"pod=~\"(?i:a)bc\"", "aBC", false},
        {"pod=~\"a.c\"",
         "a\xc3\xa9"
         "c",
         true}, /* . is one UTF-8 character */
        /* Anchored at both ends, around the whole alternation. */
        {"pod=~\"a|b\"", "a", true},
        {"pod=~\"a|b\"", "ab", false},
        {"pod=~\"a|b\"", "xa", false},
        {"pod=~\"a|b\"", "bx", false},
        {"pod=~\"nb-.*\"", "nb-1", true},
        {"pod=~\"nb-.*\"", "my-nb-1", false},
        {"pod!~\"nb-.*\"", "my-nb-1", true},
        {"pod=~\".*\"", "anything", true},
        /* The empty regex and absent labels (absent = ""). */
        {"pod=~\"\"", "", true},
        {"pod=~\"\"", "x", false},
        {"pod=~\"\"", NULL, true},
        {"pod!~\"\"", NULL, false},
        {"pod=~\".*\"", NULL, true},
        {"pod=~\".+\"", NULL, false},
        {"pod!~\".+\"", NULL, true},
        {"pod=\"\"", NULL, true},
        {"pod!=\"\"", NULL, false},
        {"pod!=\"x\"", NULL, true},
        /* PromQL string literals. */
        {"pod=\"a\\\"b\"", "a\"b", true},
        {"pod='a\\'b'", "a'b", true},
        {"pod=\"\\x41\\u00e9\\101\"",
         "A\xc3\xa9"
         "A",
         true},
        {"pod=~`nb-\\d+m`", "nb-12m", true}, /* raw string: no escapes */
        {"pod=\"a\\\\b\"", "a\\b", true},
        /* Literal characters that are special in ERE but escaped in the pattern. */
        {"pod=~\"a\\\\.b\"", "a.b", true},
        {"pod=~\"a\\\\.b\"", "axb", false},
        {"pod=~\"\\\\Q.*\\\\E\"", ".*", true},
        {"pod=~\"\\\\Q.*\\\\E\"", "ab", false},
        /* Non-greedy and bounded repetition are fine. */
        {"pod=~\"a{2,3}?\"", "aaa", true},
        {"pod=~\"a{1000}\"", "a", false},
        /* Prometheus 3: `.` matches a newline (regexes run with the s flag). */
        {"pod=~\"a.b\"", "a\nb", true},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct matcher m;
        struct labels ls;
        char err[256] = "";
        int rc = match_parse(cases[i].matcher, &m, err, sizeof(err));
        if (rc != 0) {
            fprintf(stderr, "case %zu '%s': %s\n", i, cases[i].matcher, err);
            TEST_CHECK_INT(rc, 0);
            continue;
        }
        one_label(&ls, cases[i].value);
        bool got = match_eval(&m, &ls);
        if (got != cases[i].want)
            fprintf(stderr, "case %zu '%s' on '%s': got %d\n", i, cases[i].matcher,
                    cases[i].value ? cases[i].value : "(absent)", got);
        TEST_CHECK(got == cases[i].want);
        labels_free(&ls);
        match_free(&m);
    }
}

TEST(prometheus_rejects)
{
    static const struct {
        const char *matcher;
        const char *msg;
    } cases[] = {
        {"pod=~\"(a)\\\\1\"", "invalid escape sequence: \\1"}, /* backreference */
        {"pod=~\"a(?=b)\"", "invalid perl operator: (?="},     /* lookahead */
        {"pod=~\"a(?!b)\"", "invalid perl operator: (?!"},     /* negative lookahead */
        {"pod=~\"(?<=a)b\"", "invalid perl operator: (?<"},    /* lookbehind */
        {"pod=~\"a++\"", "bad repetition operator: ++"},       /* possessive */
        {"pod=~\"a**\"", "bad repetition operator: **"},
        {"pod=~\"a{1001}\"", "invalid repetition size: {1001}"},
        {"pod=~\"\\\\C\"", "invalid escape sequence: \\C"}, /* RE2 only, not Go */
        {"pod=~\"\\\\Z\"", "invalid escape sequence: \\Z"},
        {"pod=~\"[[:word:]\"", "missing ]"},
        {"pod=~\"[[:foo:]]\"", "invalid character class range: [:foo:]"},
        {"pod=~\"(\"", "missing )"},
        {"pod=~\"a)|(b\"", "unexpected )"}, /* no way out of the anchoring group */
        {"pod=~\"\\\\\"", "trailing \\"},
        {"pod=~\"\\xff\"", "invalid UTF-8"},
        /* PromQL string literals: unknown escapes are errors, not regex escapes. */
        {"pod=~\"nb-\\d+m\"", "unknown escape sequence '\\d'"},
        {"pod=\"\\400\"", "octal escape value 256 greater than 255"},
        {"pod=\"\\ud800\"", "not a valid Unicode code point"},
        {"pod=\"abc", "unterminated value"},
        {"pod=abc", "the value must be quoted"},
        {"pod=~`a`b", "unexpected 'b' after the value"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct matcher m;
        char err[256] = "";
        TEST_CHECK_INT(match_parse(cases[i].matcher, &m, err, sizeof(err)), -1);
        TEST_CHECK_CONTAINS(err, cases[i].msg);
    }
}

/* The exemption that failed: written the PromQL way, it must exempt nb-12m. */
TEST(promql_style_exemption)
{
    struct matcher m;
    struct labels ls;
    char err[256];

    TEST_CHECK_INT(match_parse("pod=~\"nb-\\\\d+m\"", &m, err, sizeof(err)), 0);
    one_label(&ls, "nb-12m");
    TEST_CHECK(match_eval(&m, &ls));
    labels_free(&ls);
    one_label(&ls, "nb-dm");
    TEST_CHECK(!match_eval(&m, &ls));
    labels_free(&ls);
    match_free(&m);
}

/*
 * About 100-byte patterns that blow up backtracking or automaton construction. Each must
 * either be refused or compile within MATCH_RE_MAX_MEM and match a long input; the test
 * asserts only that every call returns (a hang or an out-of-memory fails the suite).
 */
TEST(pathological_patterns_are_bounded)
{
    char pat[256], text[4096];
    struct sbuf b = {0};
    struct matcher m;
    struct labels ls;
    char err[512];

    /* The pattern that took gigabytes in regcomp: rejected by RE2's parser. */
    memcpy(pat, "pod=~\"a", 7);
    memset(pat + 7, '+', 100);
    strcpy(pat + 107, "\"");
    TEST_CHECK_INT(match_parse(pat, &m, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "bad repetition operator");

    memset(text, 'a', sizeof(text) - 2);
    text[sizeof(text) - 2] = 'b';
    text[sizeof(text) - 1] = '\0';
    static const char *const patterns[] = {
        "(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*c",
        "(a|aa)*(a|aa)*(a|aa)*(a|aa)*(a|aa)*(a|aa)*(a|aa)*(a|aa)*(a|aa)*(a|aa)*c",
        "((((((((((a*)*)*)*)*)*)*)*)*)*)*c",
        "(.*){20}(.*){20}(.*){20}(.*){20}(.*){20}c",
        "[\\x{0}-\\x{10FFFF}]{1000}",
        "(\\pL|\\pN|\\pP|\\pS){1000}",
        "((((a{1,1000}){1,1000}){1,1000}){1,1000})",
        "(?:(?:(?:(?:(?:(?:(?:.{0,99}){0,99}){0,99}){0,99}){0,99}){0,99}){0,99})",
    };
    int compiled = 0;
    for (size_t i = 0; i < ARRAY_LEN(patterns); i++) {
        sbuf_reset(&b);
        sbuf_printf(&b, "pod=~`%s`", patterns[i]);
        if (match_parse(b.buf, &m, err, sizeof(err)) < 0)
            continue;
        compiled++;
        one_label(&ls, text);
        (void)match_eval(&m, &ls); /* linear in the text whatever the pattern */
        labels_free(&ls);
        match_free(&m);
    }
    fprintf(stderr, "pathological patterns compiled: %d of %zu\n", compiled, ARRAY_LEN(patterns));
    TEST_CHECK(compiled > 0); /* the nested stars are fine in RE2, and must still match */
    sbuf_free(&b);
}

TEST(selectors)
{
    struct matcher *m;
    size_t n;
    char err[256] = "";
    TEST_CHECK_INT(
        match_parse_selector(" gpureclaim:workload_busy:ratio ", &m, &n, err, sizeof(err)), 0);
    TEST_CHECK_INT(n, 1);
    TEST_CHECK_STR(m[0].name, "__name__");
    TEST_CHECK_STR(m[0].value, "gpureclaim:workload_busy:ratio");
    match_free_all(m, n);

    TEST_CHECK_INT(
        match_parse_selector("x{a=\"b,}\", c!~'d\\'}', e=~`f|g`,}", &m, &n, err, sizeof(err)), 0);
    TEST_CHECK_INT(n, 4);
    if (n == 4) {
        TEST_CHECK_STR(m[1].name, "a");
        TEST_CHECK_STR(m[1].value, "b,}");
        TEST_CHECK(m[1].op == MATCH_EQ);
        TEST_CHECK_STR(m[2].value, "d'}");
        TEST_CHECK(m[2].op == MATCH_NRE);
        TEST_CHECK_STR(m[3].value, "f|g");
        TEST_CHECK(m[3].op == MATCH_RE);
    }
    match_free_all(m, n);

    TEST_CHECK_INT(match_parse_selector("{pod=\"a\"}", &m, &n, err, sizeof(err)), 0);
    TEST_CHECK_INT(n, 1);
    match_free_all(m, n);

    TEST_CHECK_INT(match_parse_selector("x{a=\"b\"", &m, &n, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "unterminated") != NULL);
    TEST_CHECK_INT(match_parse_selector("x{a=\"b}", &m, &n, err, sizeof(err)), -1);
    TEST_CHECK_INT(match_parse_selector("x offset 5m", &m, &n, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "unexpected text") != NULL);
    TEST_CHECK_INT(match_parse_selector("{}", &m, &n, err, sizeof(err)), -1);
    TEST_CHECK_INT(match_parse_selector("x{a=~\"(\"}", &m, &n, err, sizeof(err)), -1);
    TEST_CHECK(m == NULL && n == 0);
}

/* Prometheus 3's quoted names (issue 34): "k8s.pod.name"="x", {"my.metric"}. */
TEST(utf8_names)
{
    struct matcher m;
    char err[256] = "";
    TEST_CHECK_INT(match_parse("\"k8s.pod.name\" =~ \"nb-.*\"", &m, err, sizeof(err)), 0);
    TEST_CHECK_STR(m.name, "k8s.pod.name");
    struct labels ls = {0};
    labels_set(&ls, "k8s.pod.name", "nb-1");
    TEST_CHECK(match_eval(&m, &ls));
    labels_set(&ls, "k8s.pod.name", "x");
    TEST_CHECK(!match_eval(&m, &ls));
    labels_free(&ls);
    match_free(&m);
    TEST_CHECK_INT(match_parse("k8s.pod.name=\"x\"", &m, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "with '.' must be quoted") != NULL);
    TEST_CHECK_INT(match_parse("\"\"=\"x\"", &m, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "non-empty UTF-8") != NULL);
    TEST_CHECK_INT(match_parse("\"\\xff\"=\"x\"", &m, err, sizeof(err)), -1);
    TEST_CHECK_INT(match_parse("\"a\"", &m, err, sizeof(err)), -1);

    struct matcher *ms;
    size_t n;
    TEST_CHECK_INT(match_parse_selector("{\"gpu.busy\", \"k8s.pod.name\"=\"p\", job!=\"\"}", &ms,
                                        &n, err, sizeof(err)),
                   0);
    TEST_CHECK_INT(n, 3);
    if (n == 3) {
        TEST_CHECK_STR(ms[0].name, "__name__");
        TEST_CHECK_STR(ms[0].value, "gpu.busy");
        TEST_CHECK(ms[0].op == MATCH_EQ);
        TEST_CHECK_STR(ms[1].name, "k8s.pod.name");
        TEST_CHECK_STR(ms[1].value, "p");
    }
    match_free_all(ms, n);
    /* Never a broader read: a second metric name or a bad one is refused, not dropped. */
    TEST_CHECK_INT(match_parse_selector("{\"a\", \"b\"}", &ms, &n, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "set twice") != NULL);
    TEST_CHECK_INT(match_parse_selector("x{\"b\"}", &ms, &n, err, sizeof(err)), -1);
    TEST_CHECK_INT(match_parse_selector("{\"\"}", &ms, &n, err, sizeof(err)), -1);
    TEST_CHECK_INT(match_parse_selector("{k8s.pod.name=\"p\"}", &ms, &n, err, sizeof(err)), -1);
    TEST_CHECK(ms == NULL && n == 0);

    /* labels_format quotes a name PromQL needs quoted; labels_parse reads it back. */
    labels_set(&ls, "k8s.pod.name", "a\"b");
    labels_set(&ls, "pod", "c");
    char *f = labels_format(&ls);
    TEST_CHECK_STR(f, "{\"k8s.pod.name\"=\"a\\\"b\",pod=\"c\"}");
    struct labels back;
    TEST_CHECK_INT(labels_parse(f, &back, err, sizeof(err)), 0);
    TEST_CHECK(labels_equal(&back, &ls));
    labels_free(&back);
    free(f);
    labels_free(&ls);
}

int main(void)
{
    RUN(utf8_names);
    RUN(selectors);
    RUN(prometheus_results);
    RUN(prometheus_rejects);
    RUN(promql_style_exemption);
    RUN(pathological_patterns_are_bounded);
    return test_done();
}
