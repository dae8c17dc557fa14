/*
 * IANA time zones for rule windows (`timeZone: Europe/Berlin`), read from the system's tz
 * database (TZif files, RFC 8536) by a small pure parser instead of through localtime_r.
 *
 * Why not the C library: glibc knows one zone per process, selected by the TZ environment
 * variable, and setenv()/tzset() are not safe while other threads run (the enforcer's HTTP
 * server and workers). A zone parsed here is an immutable value owned by the rule that
 * names it, so any number of zones can be in use at once, from any thread, and a rules
 * reload parses them again.
 */
#ifndef GPURECLAIM_TZ_H
#define GPURECLAIM_TZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The POSIX TZ rule of a TZif footer ("CET-1CEST,M3.5.0,M10.5.0/3"), for times after the
 * last transition. */
struct tz_rule_date {
    char kind;      /* 'J': Julian day 1..365 without Feb 29; 'n': day 0..365; 'M': month rule */
    int day;        /* J / n: the day; M: weekday 0 (Sunday) .. 6 */
    int week;       /* M: 1..5, 5 = last */
    int month;      /* M: 1..12 */
    int32_t time_s; /* local time of the change, seconds (may be negative or above 24 h) */
};

struct tz_footer {
    bool present;
    bool has_dst;
    int32_t std_off, dst_off; /* seconds east of UTC */
    struct tz_rule_date start, end;
};

struct tz_zone {
    char *name;         /* as written in the rules file; NULL for a fixed offset */
    int64_t *trans;     /* transition instants, strictly ascending */
    uint8_t *trans_idx; /* type of each transition */
    size_t ntrans;
    int32_t *type_off; /* UT offset of each type, seconds east */
    size_t ntypes;
    struct tz_footer footer;
    int32_t fixed_off; /* used when ntypes == 0 */
};

/* Largest TZif file read (the biggest in tzdata is under 4 KB; "fat" files under 8 KB). */
#define TZ_MAX_FILE 65536

/* A zone with one fixed offset (utcOffset); needs no tz_free. */
void tz_fixed(struct tz_zone *z, int32_t off_seconds);
/*
 * Parse TZif data (versions 1 to 4; the 64-bit block and footer when present). Pure.
 * Returns 0, or -1 with a reason in err. Leap-second ("right/") files are refused.
 */
int tz_parse(const unsigned char *buf, size_t len, struct tz_zone *out, char *err, size_t errlen);
/*
 * Load the zone called `name` (an IANA name such as "Europe/Berlin", or "UTC") from $TZDIR,
 * else /usr/share/zoneinfo. Names are checked as Go's time.LoadLocation does (no absolute
 * paths, no ".." element). Returns 0, or -1 with a reason ("unknown time zone ...").
 */
int tz_load(const char *name, struct tz_zone *out, char *err, size_t errlen);
void tz_free(struct tz_zone *z);

/* Offset from UTC (seconds east) in effect at instant `t` (seconds since the epoch). */
int32_t tz_offset(const struct tz_zone *z, int64_t t);

/*
 * Whether instant `t` falls in a weekly window given in the zone's wall-clock time: `days`
 * (bit d = weekday d, 0 = Sunday) on which it starts, from `start_min` to `end_min` minutes
 * after midnight (end <= start: it ends the next day). Around a DST change the window is the
 * shortest span its wall-clock times can denote, because an active window allows reclaims:
 *  - a start or end in a skipped hour (spring forward) is the first instant after the gap;
 *  - a start in a repeated hour (fall back) is its second occurrence, an end its first.
 */
bool tz_window_active(const struct tz_zone *z, unsigned days, int start_min, int end_min,
                      int64_t t);

#endif
