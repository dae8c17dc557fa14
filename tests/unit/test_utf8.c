/*
 * Unit tests of UTF-8 (common/utf8.c): the strict validator that podres.c had to itself
 * (now also what jsonparse.c checks JSON text with), and the encoder that was in util.c.
 */
#include "utf8.c"

#include <string.h>

#include "test.h"
#include "util.h"

TEST(validation)
{
    static const struct {
        const char *s;
        size_t n; /* 0: strlen */
        bool ok;
    } cases[] = {
        {"", 0, true},
        {"plain ascii", 0, true},
        {"gr\xc3\xbc\xc3\x9f"
         "e",
         0, true},                          /* 2-byte */
        {"\xe2\x82\xac", 0, true},          /* U+20AC, 3-byte */
        {"\xf0\x9f\x98\x80", 0, true},      /* U+1F600, 4-byte */
        {"\xf4\x8f\xbf\xbf", 0, true},      /* U+10FFFF, the last */
        {"a\0b", 3, true},                  /* NUL is UTF-8: refusing it is the caller's */
        {"\x80", 0, false},                 /* a continuation byte first */
        {"\xc3", 0, false},                 /* cut short */
        {"\xe2\x82", 0, false},             /* cut short */
        {"\xc3\x28", 0, false},             /* bad continuation */
        {"\xc0\xaf", 0, false},             /* overlong "/" */
        {"\xc1\xbf", 0, false},             /* overlong */
        {"\xe0\x80\xaf", 0, false},         /* overlong, 3 bytes */
        {"\xf0\x80\x80\xaf", 0, false},     /* overlong, 4 bytes */
        {"\xed\xa0\x80", 0, false},         /* U+D800, a surrogate */
        {"\xed\xbf\xbf", 0, false},         /* U+DFFF */
        {"\xf4\x90\x80\x80", 0, false},     /* U+110000, above the last */
        {"\xf8\x88\x80\x80\x80", 0, false}, /* 5-byte form */
        {"\xff", 0, false},
        {"ok\xe2\x82\xac\xe2\x82", 0, false}, /* valid, then cut short */
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        size_t n = cases[i].n ? cases[i].n : strlen(cases[i].s);
        if (utf8_valid(cases[i].s, n) != cases[i].ok)
            fprintf(stderr, "case %zu\n", i);
        TEST_CHECK(utf8_valid(cases[i].s, n) == cases[i].ok);
    }
}

TEST(encode_round_trips_through_valid)
{
    static const unsigned long cps[] = {0x41, 0x7f, 0x80, 0x7ff, 0x800, 0xfffd, 0x10000, 0x10ffff};
    static const size_t lens[] = {1, 1, 2, 2, 3, 3, 4, 4};
    for (size_t i = 0; i < ARRAY_LEN(cps); i++) {
        char out[4];
        size_t n = utf8_encode(cps[i], out);
        TEST_CHECK_INT(n, lens[i]);
        TEST_CHECK(utf8_valid(out, n));
    }
    char out[4];
    TEST_CHECK_INT(utf8_encode(0x20ac, out), 3);
    TEST_CHECK(memcmp(out, "\xe2\x82\xac", 3) == 0);
}

int main(void)
{
    RUN(validation);
    RUN(encode_round_trips_through_valid);
    return test_done();
}
