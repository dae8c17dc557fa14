/* RFC 3339 time text (rfc3339.h), through gmtime_r so the calendar is libc's. */
#include "rfc3339.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

#include "util.h"

/* 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z in Unix seconds. */
#define RFC3339_MIN (-62167219200.0)
#define RFC3339_END 253402300800.0

char *rfc3339_format(char *buf, size_t cap, double t, enum rfc3339_prec prec)
{
    static const struct {
        double scale;
        int digits;
    } p[] = {[RFC3339_SEC] = {1, 0},
             [RFC3339_MILLI_FRAC] = {1e3, 3},
             [RFC3339_MILLI] = {1e3, 3},
             [RFC3339_MICRO] = {1e6, 6}};
    if (!isfinite(t) || t < RFC3339_MIN || t >= RFC3339_END || (unsigned)prec >= ARRAY_LEN(p)) {
        str_copy(buf, cap, "-");
        return buf;
    }
    double whole = floor(t);
    long frac = prec == RFC3339_SEC ? 0 : lround((t - whole) * p[prec].scale);
    if (frac >= (long)p[prec].scale) {
        whole += 1;
        frac = 0;
    }
    time_t secs = (time_t)whole;
    struct tm tm;
    char date[64];
    if (whole >= RFC3339_END || !gmtime_r(&secs, &tm)) {
        str_copy(buf, cap, "-");
        return buf;
    }
    /* Not strftime's %Y: RFC 3339 wants four digits for the years before 1000 too. */
    snprintf(date, sizeof(date), "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (p[prec].digits == 0 || (prec == RFC3339_MILLI_FRAC && frac == 0))
        snprintf(buf, cap, "%sZ", date);
    else
        snprintf(buf, cap, "%s.%0*ldZ", date, p[prec].digits, frac);
    return buf;
}
