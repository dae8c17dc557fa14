/* Duration text (dur.h): Prometheus' Duration.String for a double number of seconds. */
#include "dur.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

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
