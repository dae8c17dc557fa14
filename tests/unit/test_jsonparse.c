/*
 * Unit tests of strict json-c parsing (common/jsonparse.c), which replaced the tokener
 * set-ups of docker.c, kube.c, ledger.c, lease.c and act.c (two). Of those, only three
 * refused trailing data, and none used json-c's strict mode or checked UTF-8.
 */
#include "jsonparse.c"

#include "test.h"
#include "util.h"

TEST(accepts_and_refuses)
{
    static const struct {
        const char *in;
        size_t len;      /* 0: strlen(in) */
        const char *err; /* NULL: parsed */
    } cases[] = {
        {"{\"a\":1}", 0, NULL},
        {"  {\"a\":[1,2,{\"b\":null}]} \r\n\t", 0, NULL}, /* blanks around */
        {"[]", 0, NULL},
        {"\"x\"", 0, NULL},
        {"", 0, "empty answer for doc"},
        {"{\"a\":1", 0, "truncated JSON in doc (6 bytes)"},
        {"{\"a\":1} x", 0, "trailing data in doc at offset 8"},
        {"{\"a\":1}{\"b\":2}", 0, "trailing data in doc at offset 7"}, /* two documents */
        {"{\"a\":1}\0", 8, "trailing data in doc at offset 7"},        /* a NUL after it */
        {"[\"a\0b\"]", 7, "invalid JSON in doc at offset "},           /* a NUL inside */
        {"<html>502</html>", 0, "invalid JSON in doc at offset 0: "},
        {"{\"a\":1,}", 0, "invalid JSON in doc at offset 7: "}, /* strict: trailing comma */
        {"[\"\xc3\x28\"]", 0, "invalid UTF-8 in doc"},
        {"[\"\xc0\xaf\"]", 0, "invalid UTF-8 in doc"},        /* overlong "/": json-c lets it by */
        {"[\"\xed\xa0\x80\"]", 0, "invalid UTF-8 in doc"},    /* a surrogate */
        {"[[[[[1]]]]]", 0, "invalid JSON in doc at offset "}, /* deeper than 4 */
        {"null ", 0, "doc is null"},
        /* A scalar at the very end may go on ("12" of "123"): json-c waits for more. */
        {"null", 0, "truncated JSON in doc (4 bytes)"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char err[256] = "";
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].in);
        json_object *o = jsonparse_strict(cases[i].in, len, 4, "doc", err, sizeof(err));
        if (!cases[i].err) {
            if (!o)
                fprintf(stderr, "case %zu: %s\n", i, err);
            TEST_CHECK(o != NULL);
        } else {
            TEST_CHECK(o == NULL);
            /* A want ending in a blank is a prefix: json-c's wording and offsets vary. */
            size_t n = strlen(cases[i].err);
            if (cases[i].err[n - 1] == ' ') {
                if (strncmp(err, cases[i].err, n) != 0 || strlen(err) <= n)
                    fprintf(stderr, "case %zu: '%s'\n", i, err);
                TEST_CHECK(strncmp(err, cases[i].err, n) == 0 && strlen(err) > n);
            } else {
                TEST_CHECK_STR(err, cases[i].err);
            }
        }
        json_object_put(o);
    }
}

/* The length is the caller's: bytes after it are not read, and no NUL is needed. */
TEST(reads_only_len_bytes)
{
    const char buf[] = {'[', '1', ']', 'x'};
    char err[128];
    json_object *o = jsonparse_strict(buf, 3, 4, "doc", err, sizeof(err));
    TEST_CHECK(o != NULL && json_object_is_type(o, json_type_array));
    json_object_put(o);
}

int main(void)
{
    RUN(accepts_and_refuses);
    RUN(reads_only_len_bytes);
    return test_done();
}
