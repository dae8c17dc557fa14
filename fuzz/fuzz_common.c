/*
 * libFuzzer target for the text helpers in common/ that both programs link (they are in
 * FUZZ_COMMON, so this target calls them rather than #including them): any byte string
 * goes through rfc3339_parse, utf8_valid and jsonparse_strict. A time that parses and that
 * RFC 3339 can write must read back as itself through every precision; every number it
 * yields must format as a duration that fits DUR_LEN; a refused JSON document must say why.
 * Seeds: fuzz/corpus/common.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dur.h"
#include "jsonparse.h"
#include "rfc3339.h"
#include "utf8.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = xstrndup((const char *)data, size);
    double t;
    char err[256], buf[RFC3339_LEN], dur[DUR_LEN];

    if (rfc3339_parse(s, &t, err, sizeof(err)) == 0) {
        if (isnan(t))
            __builtin_trap();
        static const enum rfc3339_prec ps[] = {RFC3339_SEC, RFC3339_MILLI_FRAC, RFC3339_MILLI,
                                               RFC3339_MICRO};
        static const double res[] = {1, 1e-3, 1e-3, 1e-6};
        for (size_t i = 0; i < ARRAY_LEN(ps); i++) {
            rfc3339_format(buf, sizeof(buf), t, ps[i]);
            if (strcmp(buf, "-") == 0)
                continue;
            double back;
            if (rfc3339_parse(buf, &back, err, sizeof(err)) != 0 ||
                fabs(back - t) > res[i] + 1e-9 * fabs(t))
                __builtin_trap();
        }
        dur_format(dur, sizeof(dur), t);
        if (!dur[0] || strlen(dur) >= DUR_LEN - 1)
            __builtin_trap();
    } else if (!err[0]) {
        __builtin_trap();
    }

    (void)utf8_valid(data, size);

    err[0] = '\0';
    json_object *o = jsonparse_strict((const char *)data, size, 8, "input", err, sizeof(err));
    if (!o && !err[0])
        __builtin_trap();
    json_object_put(o);
    free(s);
    return 0;
}
