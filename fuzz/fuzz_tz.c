/*
 * libFuzzer target for the TZif reader (enforcer/tz.c): any byte string goes through
 * tz_parse; a zone that parses is evaluated at instants from 1900 to 2100 and through a
 * window, which must return offsets within RFC 8536's range. The same bytes are also tried
 * as a POSIX TZ footer string. Seeds: fuzz/corpus/tz (real zones, fat and slim).
 */
#include "tz.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tz_zone z;
    char err[160];

    if (tz_parse(data, size, &z, err, sizeof(err)) == 0) {
        for (int64_t t = -2208988800LL; t < 4102444800LL; t += 86400 * 97 + 3599) {
            int32_t off = tz_offset(&z, t);
            if (off < -MAX_OFF || off > MAX_OFF)
                __builtin_trap();
        }
        (void)tz_window_active(&z, 0x7f, 9 * 60, 18 * 60, 1774746000);
        (void)tz_window_active(&z, 0x7f, 22 * 60, 2 * 60 + 30, 1792890000);
        tz_free(&z);
    } else if (!err[0]) {
        __builtin_trap();
    }

    char *s = xstrndup((const char *)data, size);
    struct tz_footer f;
    if (parse_footer(s, &f)) {
        int32_t off = footer_offset(&f, 1774746000);
        if (off < -25 * 3600 || off > 25 * 3600)
            __builtin_trap();
    }
    free(s);
    return 0;
}
