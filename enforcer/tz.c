/*
 * TZif reader and wall-clock arithmetic for rule windows (see tz.h).
 *
 * The format is RFC 8536: a version 1 block with 32-bit times, then (version 2 and later) a
 * second header and block with 64-bit times, then a footer holding a POSIX TZ string
 * (POSIX.1-2017 section 8.3, with the RFC's extensions: hours up to 167 and negative rule
 * times) that describes every instant after the last transition. Debian's tzdata ships
 * "fat" files with transitions up to 2037, but "slim" files (zic -b slim, the default of
 * upstream zic) stop at the last rule change, so the footer is evaluated rather than
 * ignored. Every count is checked against the input length before anything is allocated,
 * so a hostile file costs at most its own size.
 */
#include "tz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "util.h"

/* RFC 8536 section 3.2 limits UT offsets to -89999..93599 seconds; one day more is slack. */
#define MAX_OFF (26 * 3600)
#define DAY     86400

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* ---- civil calendar (proleptic Gregorian, days since 1970-01-01) ------------------------- */

static bool is_leap(int64_t y)
{
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int64_t year_of_days(int64_t z)
{
    z += 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int m = (int)(mp < 10 ? mp + 3 : mp - 9);
    return yoe + era * 400 + (m <= 2);
}

/* 0 = Sunday; 1970-01-01 was a Thursday. */
static int weekday(int64_t days)
{
    return (int)(((days % 7) + 7 + 4) % 7);
}

/* ---- POSIX TZ string (the footer) ------------------------------------------------------- */

static bool parse_name(const char **pp)
{
    const char *p = *pp;
    size_t n = 0;

    if (*p == '<') {
        for (p++; (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                  (*p >= '0' && *p <= '9') || *p == '+' || *p == '-';
             p++)
            n++;
        if (*p != '>' || n < 3)
            return false;
        *pp = p + 1;
        return true;
    }
    for (; (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'); p++)
        n++;
    *pp = p;
    return n >= 3;
}

/* ":NN" with NN 00..59 at *pp. */
static bool two_digits(const char **pp, int *out)
{
    const char *p = *pp + 1;

    if (!(p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9'))
        return false;
    *out = (p[0] - '0') * 10 + (p[1] - '0');
    *pp = p + 2;
    return *out <= 59;
}

/* [+-]h[h[h]][:mm[:ss]] with hours up to max_h; seconds, sign applied. */
static bool parse_hms(const char **pp, int max_h, int32_t *out)
{
    const char *p = *pp;
    int sign = 1, h = 0, m = 0, s = 0, digits = 0;

    if (*p == '+' || *p == '-')
        sign = *p++ == '-' ? -1 : 1;
    while (*p >= '0' && *p <= '9' && digits < 3) {
        h = h * 10 + (*p++ - '0');
        digits++;
    }
    if (!digits || h > max_h)
        return false;
    if (*p == ':' && !two_digits(&p, &m))
        return false;
    if (*p == ':' && !two_digits(&p, &s))
        return false;
    *out = sign * (h * 3600 + m * 60 + s);
    *pp = p;
    return true;
}

static bool parse_num(const char **pp, int min, int max, int *out)
{
    const char *p = *pp;
    int v = 0, digits = 0;

    while (*p >= '0' && *p <= '9' && digits < 4) {
        v = v * 10 + (*p++ - '0');
        digits++;
    }
    if (!digits || v < min || v > max)
        return false;
    *out = v;
    *pp = p;
    return true;
}

static bool parse_date(const char **pp, struct tz_rule_date *d)
{
    const char *p = *pp;

    if (*p == 'J') {
        p++;
        d->kind = 'J';
        if (!parse_num(&p, 1, 365, &d->day))
            return false;
    } else if (*p == 'M') {
        p++;
        d->kind = 'M';
        if (!parse_num(&p, 1, 12, &d->month) || *p++ != '.' || !parse_num(&p, 1, 5, &d->week) ||
            *p++ != '.' || !parse_num(&p, 0, 6, &d->day))
            return false;
    } else {
        d->kind = 'n';
        if (!parse_num(&p, 0, 365, &d->day))
            return false;
    }
    d->time_s = 2 * 3600;
    if (*p == '/') {
        p++;
        if (!parse_hms(&p, 167, &d->time_s))
            return false;
    }
    *pp = p;
    return true;
}

/* "std offset [dst [offset] ,start[/time],end[/time]]"; POSIX offsets count west. */
static bool parse_footer(const char *s, struct tz_footer *f)
{
    const char *p = s;
    int32_t off;

    memset(f, 0, sizeof(*f));
    if (!parse_name(&p) || !parse_hms(&p, 24, &off))
        return false;
    f->std_off = -off;
    f->dst_off = f->std_off;
    f->present = true;
    if (!*p)
        return true;
    if (!parse_name(&p))
        return false;
    f->has_dst = true;
    f->dst_off = f->std_off + 3600;
    if (*p && *p != ',') {
        if (!parse_hms(&p, 24, &off))
            return false;
        f->dst_off = -off;
    }
    /* POSIX allows an implementation-defined default rule; zic always writes one. */
    if (*p++ != ',' || !parse_date(&p, &f->start) || *p++ != ',' || !parse_date(&p, &f->end))
        return false;
    return *p == '\0';
}

/* Day (since the epoch) on which a rule date falls in year y. */
static int64_t rule_day(const struct tz_rule_date *d, int64_t y)
{
    int64_t jan1 = days_from_civil(y, 1, 1);

    if (d->kind == 'J')
        return jan1 + d->day - 1 + (is_leap(y) && d->day >= 60);
    if (d->kind == 'n')
        return jan1 + d->day;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int dim = mdays[d->month - 1] + (d->month == 2 && is_leap(y));
    int64_t first = days_from_civil(y, d->month, 1);
    int dom = (d->day - weekday(first) + 7) % 7 + (d->week - 1) * 7;
    while (dom >= dim)
        dom -= 7;
    return first + dom;
}

static int32_t footer_offset(const struct tz_footer *f, int64_t t)
{
    if (!f->has_dst)
        return f->std_off;
    int64_t y = year_of_days(floor_div(t + f->std_off, DAY));
    /* The start is given in standard time, the end in daylight time (POSIX). */
    int64_t start = rule_day(&f->start, y) * DAY + f->start.time_s - f->std_off;
    int64_t end = rule_day(&f->end, y) * DAY + f->end.time_s - f->dst_off;
    bool dst = start < end ? (t >= start && t < end) : (t < end || t >= start);
    return dst ? f->dst_off : f->std_off;
}

/* ---- TZif ------------------------------------------------------------------------------- */

struct hdr {
    unsigned char version;
    uint32_t isut, isstd, leap, time, type, chars;
};

static int read_header(const unsigned char *p, size_t len, struct hdr *h)
{
    if (len < 44 || memcmp(p, "TZif", 4) != 0)
        return -1;
    h->version = p[4];
    h->isut = be32(p + 20);
    h->isstd = be32(p + 24);
    h->leap = be32(p + 28);
    h->time = be32(p + 32);
    h->type = be32(p + 36);
    h->chars = be32(p + 40);
    return 0;
}

static uint64_t block_size(const struct hdr *h, unsigned tsize)
{
    return (uint64_t)h->time * (tsize + 1) + (uint64_t)h->type * 6 + h->chars +
           (uint64_t)h->leap * (tsize + 4) + h->isstd + h->isut;
}

void tz_fixed(struct tz_zone *z, int32_t off_seconds)
{
    memset(z, 0, sizeof(*z));
    z->fixed_off = off_seconds;
}

int tz_parse(const unsigned char *buf, size_t len, struct tz_zone *out, char *err, size_t errlen)
{
    struct hdr h;
    const unsigned char *p = buf;
    unsigned tsize = 4;

    memset(out, 0, sizeof(*out));
    if (read_header(p, len, &h) < 0) {
        snprintf(err, errlen, "not a TZif file");
        return -1;
    }
    if (h.version != 0 && h.version < '2') {
        snprintf(err, errlen, "unsupported TZif version 0x%02x", h.version);
        return -1;
    }
    if (h.version >= '2') {
        /* Skip the 32-bit block: the 64-bit one after it says the same for all times. */
        uint64_t skip = 44 + block_size(&h, 4);
        if (skip > len || read_header(p + skip, len - skip, &h) < 0) {
            snprintf(err, errlen, "truncated TZif file");
            return -1;
        }
        p += skip;
        len -= (size_t)skip;
        tsize = 8;
    }
    if (h.type == 0 || h.type > 256 || (h.isut && h.isut != h.type) ||
        (h.isstd && h.isstd != h.type)) {
        snprintf(err, errlen, "invalid TZif counts");
        return -1;
    }
    if (h.leap) {
        snprintf(err, errlen, "TZif files with leap seconds are not supported");
        return -1;
    }
    if (44 + block_size(&h, tsize) > len) {
        snprintf(err, errlen, "truncated TZif file");
        return -1;
    }
    const unsigned char *times = p + 44, *idx = times + (size_t)h.time * tsize;
    const unsigned char *types = idx + h.time;
    const unsigned char *end = p + 44 + block_size(&h, tsize);

    out->ntrans = h.time;
    out->ntypes = h.type;
    out->trans = xcalloc(h.time ? h.time : 1, sizeof(*out->trans));
    out->trans_idx = xcalloc(h.time ? h.time : 1, 1);
    out->type_off = xcalloc(h.type, sizeof(*out->type_off));
    for (uint32_t i = 0; i < h.type; i++) {
        int32_t off = (int32_t)be32(types + 6 * i);
        if (off < -MAX_OFF || off > MAX_OFF) {
            snprintf(err, errlen, "UT offset %d out of range", (int)off);
            goto fail;
        }
        out->type_off[i] = off;
    }
    for (uint32_t i = 0; i < h.time; i++) {
        out->trans[i] = tsize == 8 ? be64(times + 8 * (size_t)i) : (int32_t)be32(times + 4 * i);
        out->trans_idx[i] = idx[i];
        if (idx[i] >= h.type || (i > 0 && out->trans[i] <= out->trans[i - 1])) {
            snprintf(err, errlen, "invalid TZif transition %u", i);
            goto fail;
        }
    }
    if (tsize == 8) {
        /* Footer: "\n" TZ string "\n"; an empty string means no rule for later times. */
        size_t rest = len - (size_t)(end - p);
        const unsigned char *nl =
            rest > 1 && end[0] == '\n' ? memchr(end + 1, '\n', rest - 1) : NULL;
        if (!nl) {
            snprintf(err, errlen, "missing TZif footer");
            goto fail;
        }
        size_t flen = (size_t)(nl - end - 1);
        char *s = xstrndup((const char *)end + 1, flen);
        bool ok = flen == 0 || (strlen(s) == flen && parse_footer(s, &out->footer));
        if (!ok)
            snprintf(err, errlen, "invalid TZ string in the TZif footer");
        free(s);
        if (!ok)
            goto fail;
    }
    return 0;
fail:
    tz_free(out);
    return -1;
}

void tz_free(struct tz_zone *z)
{
    if (!z)
        return;
    free(z->name);
    free(z->trans);
    free(z->trans_idx);
    free(z->type_off);
    memset(z, 0, sizeof(*z));
}

static bool valid_name(const char *s)
{
    size_t len = strlen(s);

    if (len == 0 || len > 255 || s[0] == '/' || strstr(s, "..") || strcmp(s, "localtime") == 0)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("/_+-.", *s)))
            return false;
    return true;
}

int tz_load(const char *name, struct tz_zone *out, char *err, size_t errlen)
{
    const char *dir = getenv("TZDIR");
    unsigned char *buf = NULL;
    char msg[160];
    size_t len = 0;

    memset(out, 0, sizeof(*out));
    if (!valid_name(name)) {
        snprintf(err, errlen, "invalid time zone name");
        return -1;
    }
    if (strcmp(name, "UTC") == 0) {
        /* As Go's time.LoadLocation: UTC needs no database. */
        tz_fixed(out, 0);
        out->name = xstrdup(name);
        return 0;
    }
    if (!dir || !*dir)
        dir = "/usr/share/zoneinfo";
    char *path = xasprintf("%s/%s", dir, name);
    char why[128];
    buf = (unsigned char *)file_read(path, TZ_MAX_FILE, &len, why, sizeof(why));
    if (!buf) {
        if (errno == ENOENT || errno == ENOTDIR)
            snprintf(err, errlen, "unknown time zone (not found in '%s')", dir);
        else
            snprintf(err, errlen, "unknown time zone (cannot read '%s': %s)", path, why);
        free(path);
        return -1;
    }
    if (tz_parse(buf, len, out, msg, sizeof(msg)) < 0)
        snprintf(err, errlen, "unknown time zone ('%s': %s)", path, msg);
    else
        out->name = xstrdup(name);
    free(buf);
    free(path);
    return out->name ? 0 : -1;
}

int32_t tz_offset(const struct tz_zone *z, int64_t t)
{
    if (z->ntypes == 0)
        return z->fixed_off;
    if (z->ntrans == 0 || t < z->trans[0]) {
        /* RFC 8536 3.2: before the first transition, type 0; with none, the footer rules. */
        return z->ntrans == 0 && z->footer.present ? footer_offset(&z->footer, t) : z->type_off[0];
    }
    size_t lo = 0, hi = z->ntrans; /* trans[lo] <= t < trans[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->trans[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    if (lo == z->ntrans - 1 && z->footer.present)
        return footer_offset(&z->footer, t);
    return z->type_off[z->trans_idx[lo]];
}

/* ---- wall clock -> instants -------------------------------------------------------------- */

static int64_t wall(const struct tz_zone *z, int64_t t)
{
    return t + tz_offset(z, t);
}

/*
 * The offsets in effect within a day either side of wall time w: enough to find every
 * instant whose wall time is w, given that zones change offset at most once in two days.
 */
static size_t near_offsets(const struct tz_zone *z, int64_t w, int32_t o[5])
{
    const int64_t probes[] = {w - MAX_OFF, w, w + MAX_OFF};
    size_t n = 0;

    for (size_t i = 0; i < 3; i++) {
        int32_t cand[2] = {tz_offset(z, probes[i]), 0};
        cand[1] = tz_offset(z, w - cand[0]);
        for (size_t c = 0; c < 2; c++) {
            size_t j = 0;
            while (j < n && o[j] != cand[c])
                j++;
            if (j == n && n < 5)
                o[n++] = cand[c];
        }
    }
    return n;
}

/* The first instant whose wall time is w or later (w in a gap: the instant the gap ends). */
static int64_t first_at_or_after(const struct tz_zone *z, int64_t w, const int32_t *o, size_t n)
{
    int64_t lo = w - o[0], hi = w - o[0];

    for (size_t i = 1; i < n; i++) {
        if (w - o[i] < lo)
            lo = w - o[i];
        if (w - o[i] > hi)
            hi = w - o[i];
    }
    if (!(wall(z, lo) < w && wall(z, hi) >= w))
        return w - tz_offset(z, w); /* not a gap after all; cannot happen with sane data */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (wall(z, mid) >= w)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* Instant at which a window boundary at wall time w falls; see tz_window_active. */
static int64_t boundary(const struct tz_zone *z, int64_t w, bool start)
{
    int32_t o[5];
    size_t n = near_offsets(z, w, o);
    bool found = false;
    int64_t best = 0;

    for (size_t i = 0; i < n; i++) {
        int64_t t = w - o[i];
        if (tz_offset(z, t) != o[i])
            continue;
        if (!found || (start ? t > best : t < best))
            best = t;
        found = true;
    }
    return found ? best : first_at_or_after(z, w, o, n);
}

bool tz_window_active(const struct tz_zone *z, unsigned days, int start_min, int end_min, int64_t t)
{
    int64_t today = floor_div(wall(z, t), DAY);

    /* A window lasts at most 24 h, so it started yesterday, today or (around an overlap at
     * midnight) tomorrow by the wall clock. */
    for (int64_t d = today - 1; d <= today + 1; d++) {
        if (!(days >> weekday(d) & 1u))
            continue;
        int64_t s = d * DAY + (int64_t)start_min * 60;
        int64_t e = d * DAY + (int64_t)end_min * 60 + (end_min <= start_min ? DAY : 0);
        if (boundary(z, s, true) <= t && t < boundary(z, e, false))
            return true;
    }
    return false;
}
