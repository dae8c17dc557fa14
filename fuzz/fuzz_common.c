/*
 * libFuzzer target for the text helpers in common/ that both programs link (they are in
 * FUZZ_COMMON, so this target calls them rather than #including them): any byte string
 * goes through rfc3339_parse, dur_parse, utf8_valid and jsonparse_strict. A time that parses
 * and that RFC 3339 can write must read back as itself through every precision; every number
 * it yields must format as a duration that fits DUR_LEN; a duration that parses must read
 * back from its dur_format text; a refused JSON document must say why. The same bytes, cut
 * at NULs, are a command line for the flag parser (flags.c, #included): a parse that succeeds
 * leaves every value within its row's type and range, and one that fails says why.
 * Seeds: fuzz/corpus/common.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dur.h"
#include "flags.c"
#include "jsonparse.h"
#include "rfc3339.h"
#include "utf8.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One row of each type, with and without a range. */
static struct flags_def rows[] = {
    [0] = {"web.listen-address", FLAGS_STRING, ":9841", "h"},
    [1] = {"dry-run", FLAGS_BOOL, "true", "h"},
    [2] = {"web.read-header-timeout", FLAGS_DURATION, "10s", "h", .min = 0.1, .max = 3600},
    [3] = {"gpu.rediscover-interval", FLAGS_DURATION, "1m", "h", .min = 0, .max = 86400},
    [4] = {"enforce.interval", FLAGS_DURATION, "1m", "h"},
    [5] = {"web.max-connections-per-ip", FLAGS_COUNT, "32", "h", .min = 1, .max = 100000},
    [6] = {"notify.queue-size", FLAGS_COUNT, "1000", "h"},
    [7] = {"log.level", FLAGS_CHOICE, "info", "h", .choices = "debug,info,warn,error"},
    [8] = {"web.telemetry-path", FLAGS_URL_PATH, "/metrics", "h"},
    [9] = {"help", FLAGS_SWITCH, "false", "h"},
};

static void fuzz_flags(const uint8_t *data, size_t size)
{
    char *copy = xmalloc(size + 1), *argv[33] = {"prog"}, *pos[33], err[512] = "";
    int argc = 1;
    size_t npos;
    memcpy(copy, data, size);
    copy[size] = '\0';
    for (char *p = copy; argc < 33 && p <= copy + size; p += strlen(p) + 1)
        argv[argc++] = p;
    if (flags_parse(rows, ARRAY_LEN(rows), argc, argv, pos, &npos, err, sizeof(err)) != 0) {
        if (!err[0])
            __builtin_trap();
        free(copy);
        return;
    }
    if (npos >= (size_t)argc)
        __builtin_trap();
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const struct flags_def *f = &rows[i];
        double lo = f->max > 0 ? f->min : 0, hi = f->max > 0 ? f->max : INFINITY;
        switch (f->type) {
        case FLAGS_BOOL:
        case FLAGS_SWITCH:
            if (f->num != 0 && f->num != 1)
                __builtin_trap();
            break;
        case FLAGS_DURATION:
            if (!(f->num >= lo && f->num <= hi) || (f->max == 0 && !(f->num > 0)))
                __builtin_trap();
            break;
        case FLAGS_COUNT:
            if (!(f->num >= lo && f->num <= hi) || f->num != floor(f->num))
                __builtin_trap();
            break;
        case FLAGS_CHOICE:
            if (!is_choice(f->choices, f->value))
                __builtin_trap();
            break;
        case FLAGS_URL_PATH:
            if (f->value[0] != '/')
                __builtin_trap();
            break;
        case FLAGS_STRING:
            break;
        }
    }
    free(copy);
}

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

    double secs, back;
    /* Past 9.2e15 s (int64 milliseconds) dur_format writes "%gs", which is not a duration. */
    if (dur_parse(s, &secs) == 0) {
        if (!(secs >= 0))
            __builtin_trap();
        if (secs < 9.2e15 &&
            (dur_parse(dur_format(dur, sizeof(dur), secs), &back) != 0 || back != secs))
            __builtin_trap();
    }

    fuzz_flags(data, size);

    (void)utf8_valid(data, size);

    err[0] = '\0';
    json_object *o = jsonparse_strict((const char *)data, size, 8, "input", err, sizeof(err));
    if (!o && !err[0])
        __builtin_trap();
    json_object_put(o);
    free(s);
    return 0;
}
