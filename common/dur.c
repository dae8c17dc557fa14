/* Duration text (dur.h): Prometheus' ParseDuration and Duration.String, for seconds as a double. */
#include "dur.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

int dur_parse(const char *s, double *seconds)
{
    /* Prometheus' model.ParseDuration: units in this order, each at most once, or "0". */
    static const struct {
        const char *unit;
        uint64_t ms;
    } units[] = {
        {"y", 365ULL * 86400000},
        {"w", 7ULL * 86400000},
        {"d", 86400000},
        {"h", 3600000},
        {"ms", 1},
        {"m", 60000},
        {"s", 1000},
    };
    /* Rank in the required order; "ms" is listed before "m" only so that it matches first. */
    static const int rank[] = {0, 1, 2, 3, 6, 4, 5};
    uint64_t total = 0;
    int last = -1;

    if (!s || !*s)
        return -1;
    if (strcmp(s, "0") == 0) {
        *seconds = 0;
        return 0;
    }
    while (*s) {
        uint64_t v = 0;
        int digits = 0;
        while (*s >= '0' && *s <= '9') {
            if (++digits > 15)
                return -1;
            v = v * 10 + (uint64_t)(*s++ - '0');
        }
        if (!digits)
            return -1;
        size_t i;
        for (i = 0; i < ARRAY_LEN(units); i++)
            if (str_has_prefix(s, units[i].unit))
                break;
        if (i == ARRAY_LEN(units) || rank[i] <= last)
            return -1;
        last = rank[i];
        s += strlen(units[i].unit);
        if (v > (UINT64_MAX / 2 - total) / units[i].ms)
            return -1;
        total += v * units[i].ms;
    }
    *seconds = (double)total / 1000.0;
    return 0;
}

char *dur_format(char *buf, size_t cap, double seconds)
{
    static const struct {
        const char *unit;
        int64_t ms;
        bool exact; /* only when it divides: "90d" reads better than "12w6d" */
    } units[] = {
        {"y", INT64_C(365) * 86400000, true},
        {"w", INT64_C(7) * 86400000, true},
        {"d", 86400000, false},
        {"h", 3600000, false},
        {"m", 60000, false},
        {"s", 1000, false},
        {"ms", 1, false},
    };
    if (!isfinite(seconds)) {
        str_copy(buf, cap, "-");
        return buf;
    }
    /* 9.2e15 s is INT64_MAX milliseconds. */
    if (fabs(seconds) >= 9.2e15) {
        snprintf(buf, cap, "%gs", seconds);
        return buf;
    }
    int64_t ms = llround(fabs(seconds) * 1000.0);
    if (ms == 0) {
        str_copy(buf, cap, "0s");
        return buf;
    }
    size_t off = 0;
    buf[0] = '\0';
    if (seconds < 0)
        off += (size_t)snprintf(buf, cap, "-");
    for (size_t i = 0; i < ARRAY_LEN(units) && off < cap; i++) {
        if (units[i].exact && ms % units[i].ms != 0)
            continue;
        int64_t v = ms / units[i].ms;
        if (v == 0)
            continue;
        int w = snprintf(buf + off, cap - off, "%" PRId64 "%s", v, units[i].unit);
        if (w < 0)
            break;
        off += (size_t)w;
        ms -= v * units[i].ms;
    }
    return buf;
}
