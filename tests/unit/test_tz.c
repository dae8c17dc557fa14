/*
 * Tests for the TZif reader and DST-aware windows (enforcer/tz.c) against the system tz
 * database (tzdata, installed by tests/deps.sh): offsets on both sides of the 2026
 * transitions of Europe/Berlin and Australia/Sydney (southern hemisphere), the documented
 * behaviour of windows on spring-forward and fall-back days, the POSIX TZ footer (checked
 * against "slim" files written by zic, which end their transitions early and leave later
 * years to the footer), and refusals of bad names and bad files.
 */
#include "tz.c"

#include "test.h"
#include "tmptree.h"

#define MON      0x02u
#define SUN      0x01u
#define SAT      0x40u
#define WEEKDAYS 0x3eu
#define ALLDAYS  0x7fu

/* Seconds since the epoch of a UTC date and time. */
static int64_t utc(int y, int mo, int d, int h, int mi)
{
    return days_from_civil(y, mo, d) * DAY + h * 3600 + mi * 60;
}

static void load(const char *name, struct tz_zone *z)
{
    char err[256] = "";
    int rc = tz_load(name, z, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "tz_load(%s): %s\n", name, err);
    TEST_CHECK_INT(rc, 0);
}

TEST(offsets_across_2026_transitions)
{
    static const struct {
        const char *zone;
        int64_t t;
        int32_t off;
    } cases[] = {
        /* Europe/Berlin: CET -> CEST at 2026-03-29 01:00Z, back at 2026-10-25 01:00Z. */
        {"Europe/Berlin", 0, 3600},
        {"Europe/Berlin", 1, 7200},
        {"Europe/Berlin", 2, 3600},
        /* Australia/Sydney: AEDT -> AEST at 2026-04-04 16:00Z, back at 2026-10-03 16:00Z. */
        {"Australia/Sydney", 3, 39600},
        {"Australia/Sydney", 4, 36000},
        {"Australia/Sydney", 5, 39600},
    };
    const int64_t at[] = {utc(2026, 3, 29, 0, 59) + 59, utc(2026, 3, 29, 1, 0),
                          utc(2026, 10, 25, 1, 0),      utc(2026, 4, 4, 15, 59) + 59,
                          utc(2026, 4, 4, 16, 0),       utc(2026, 10, 3, 16, 0)};
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct tz_zone z;
        load(cases[i].zone, &z);
        TEST_CHECK_INT(tz_offset(&z, at[cases[i].t]), cases[i].off);
        tz_free(&z);
    }
    struct tz_zone z;
    load("Europe/Berlin", &z);
    TEST_CHECK_INT(tz_offset(&z, utc(2026, 10, 25, 0, 59) + 59), 7200);
    TEST_CHECK_INT(tz_offset(&z, utc(2026, 1, 15, 12, 0)), 3600);
    TEST_CHECK_INT(tz_offset(&z, utc(1970, 1, 1, 0, 0)), 3600);
    TEST_CHECK_INT(tz_offset(&z, utc(2090, 7, 1, 0, 0)), 7200); /* past the file: the footer */
    tz_free(&z);
    load("UTC", &z);
    TEST_CHECK_INT(tz_offset(&z, utc(2026, 7, 1, 0, 0)), 0);
    tz_free(&z);
}

/* Office hours 09:00-18:00 Mon-Fri in Berlin: 08:00Z in winter, 07:00Z in summer. */
TEST(office_hours_follow_dst)
{
    struct tz_zone z;
    load("Europe/Berlin", &z);
    /* Thursday 2026-01-15 (CET, +1) and Thursday 2026-07-16 (CEST, +2). */
    TEST_CHECK(!tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 1, 15, 7, 59)));
    TEST_CHECK(tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 1, 15, 8, 0)));
    TEST_CHECK(tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 1, 15, 16, 59)));
    TEST_CHECK(!tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 1, 15, 17, 0)));
    TEST_CHECK(!tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 7, 16, 6, 59)));
    TEST_CHECK(tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 7, 16, 7, 0)));
    TEST_CHECK(tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 7, 16, 15, 59)));
    TEST_CHECK(!tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 7, 16, 16, 0)));
    /* The Monday after each change already follows the new offset. */
    TEST_CHECK(tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 3, 30, 7, 0)));
    TEST_CHECK(!tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 10, 26, 7, 0)));
    TEST_CHECK(tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 10, 26, 8, 0)));
    tz_free(&z);

    /* Sydney, 09:00-18:00 Mon-Fri: 22:00Z the day before in January (AEDT, +11), 23:00Z in
     * July (AEST, +10). */
    load("Australia/Sydney", &z);
    TEST_CHECK(!tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 1, 14, 21, 59)));
    TEST_CHECK(tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 1, 14, 22, 0)));
    TEST_CHECK(!tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 7, 15, 22, 0)));
    TEST_CHECK(tz_window_active(&z, WEEKDAYS, 9 * 60, 18 * 60, utc(2026, 7, 15, 23, 0)));
    tz_free(&z);
}

/*
 * Spring forward: Berlin skips 02:00-03:00 on Sunday 2026-03-29 (01:00Z), Sydney skips
 * 02:00-03:00 on Sunday 2026-10-04 (16:00Z the day before). A window starting in the skipped
 * hour starts when the gap ends; one lying entirely inside it does not happen that day.
 */
TEST(spring_forward)
{
    struct tz_zone z;
    load("Europe/Berlin", &z);
    TEST_CHECK(!tz_window_active(&z, SUN, 2 * 60 + 30, 4 * 60, utc(2026, 3, 29, 0, 59)));
    TEST_CHECK(tz_window_active(&z, SUN, 2 * 60 + 30, 4 * 60, utc(2026, 3, 29, 1, 0)));
    TEST_CHECK(tz_window_active(&z, SUN, 2 * 60 + 30, 4 * 60, utc(2026, 3, 29, 1, 59)));
    TEST_CHECK(!tz_window_active(&z, SUN, 2 * 60 + 30, 4 * 60, utc(2026, 3, 29, 2, 0)));
    /* A window ending in the gap (Sat 23:00 - 02:30) ends when the gap starts. */
    TEST_CHECK(tz_window_active(&z, SAT, 23 * 60, 2 * 60 + 30, utc(2026, 3, 29, 0, 59)));
    TEST_CHECK(!tz_window_active(&z, SAT, 23 * 60, 2 * 60 + 30, utc(2026, 3, 29, 1, 0)));
    int active = 0;
    for (int64_t t = utc(2026, 3, 28, 12, 0); t < utc(2026, 3, 30, 0, 0); t += 60)
        active += tz_window_active(&z, SUN, 2 * 60 + 10, 2 * 60 + 50, t);
    TEST_CHECK_INT(active, 0);
    /* The same window on the next Sunday lasts its 40 minutes. */
    active = 0;
    for (int64_t t = utc(2026, 4, 4, 12, 0); t < utc(2026, 4, 6, 0, 0); t += 60)
        active += tz_window_active(&z, SUN, 2 * 60 + 10, 2 * 60 + 50, t);
    TEST_CHECK_INT(active, 40);
    tz_free(&z);

    load("Australia/Sydney", &z);
    TEST_CHECK(!tz_window_active(&z, SUN, 2 * 60 + 30, 6 * 60, utc(2026, 10, 3, 15, 59)));
    TEST_CHECK(tz_window_active(&z, SUN, 2 * 60 + 30, 6 * 60, utc(2026, 10, 3, 16, 0)));
    TEST_CHECK(tz_window_active(&z, SUN, 2 * 60 + 30, 6 * 60, utc(2026, 10, 3, 18, 59)));
    TEST_CHECK(!tz_window_active(&z, SUN, 2 * 60 + 30, 6 * 60, utc(2026, 10, 3, 19, 0)));
    active = 0;
    for (int64_t t = utc(2026, 10, 3, 0, 0); t < utc(2026, 10, 5, 0, 0); t += 60)
        active += tz_window_active(&z, SUN, 2 * 60 + 15, 2 * 60 + 45, t);
    TEST_CHECK_INT(active, 0);
    tz_free(&z);
}

/*
 * Fall back: Berlin repeats 02:00-03:00 on Sunday 2026-10-25 (00:00Z-01:00Z as CEST, then
 * 01:00Z-02:00Z as CET); Sydney repeats 02:00-03:00 on Sunday 2026-04-05 (15:00Z-16:00Z as
 * AEDT, 16:00Z-17:00Z as AEST). A window starting in the repeated hour starts at its second
 * occurrence, one ending in it ends at its first, and one spanning it lasts the real time.
 */
TEST(fall_back)
{
    struct tz_zone z;
    load("Europe/Berlin", &z);
    TEST_CHECK(!tz_window_active(&z, SUN, 2 * 60 + 30, 5 * 60, utc(2026, 10, 25, 0, 30)));
    TEST_CHECK(!tz_window_active(&z, SUN, 2 * 60 + 30, 5 * 60, utc(2026, 10, 25, 1, 29)));
    TEST_CHECK(tz_window_active(&z, SUN, 2 * 60 + 30, 5 * 60, utc(2026, 10, 25, 1, 30)));
    TEST_CHECK(tz_window_active(&z, SUN, 2 * 60 + 30, 5 * 60, utc(2026, 10, 25, 3, 59)));
    TEST_CHECK(!tz_window_active(&z, SUN, 2 * 60 + 30, 5 * 60, utc(2026, 10, 25, 4, 0)));
    /* Sat 22:00 - Sun 02:30 ends at the first 02:30 (00:30Z) and does not come back. */
    TEST_CHECK(tz_window_active(&z, SAT, 22 * 60, 2 * 60 + 30, utc(2026, 10, 25, 0, 29)));
    TEST_CHECK(!tz_window_active(&z, SAT, 22 * 60, 2 * 60 + 30, utc(2026, 10, 25, 0, 30)));
    TEST_CHECK(!tz_window_active(&z, SAT, 22 * 60, 2 * 60 + 30, utc(2026, 10, 25, 1, 15)));
    /* 01:00-04:00 spans the repeated hour: four real hours, 23:00Z Sat to 03:00Z. */
    int active = 0;
    for (int64_t t = utc(2026, 10, 24, 12, 0); t < utc(2026, 10, 26, 0, 0); t += 60)
        active += tz_window_active(&z, SUN, 60, 4 * 60, t);
    TEST_CHECK_INT(active, 4 * 60);
    TEST_CHECK(tz_window_active(&z, SUN, 60, 4 * 60, utc(2026, 10, 24, 23, 0)));
    TEST_CHECK(tz_window_active(&z, SUN, 60, 4 * 60, utc(2026, 10, 25, 2, 59)));
    tz_free(&z);

    load("Australia/Sydney", &z);
    TEST_CHECK(!tz_window_active(&z, SUN, 2 * 60 + 30, 6 * 60, utc(2026, 4, 4, 15, 30)));
    TEST_CHECK(tz_window_active(&z, SUN, 2 * 60 + 30, 6 * 60, utc(2026, 4, 4, 16, 30)));
    TEST_CHECK(!tz_window_active(&z, SUN, 2 * 60 + 30, 6 * 60, utc(2026, 4, 4, 20, 0)));
    active = 0;
    for (int64_t t = utc(2026, 4, 4, 0, 0); t < utc(2026, 4, 6, 0, 0); t += 60)
        active += tz_window_active(&z, SUN, 60, 4 * 60, t);
    TEST_CHECK_INT(active, 4 * 60);
    tz_free(&z);
}

/* A fixed offset behaves as before timeZone existed (whole-day and wrapping windows). */
TEST(fixed_offset_windows)
{
    struct tz_zone z;
    tz_fixed(&z, 2 * 3600);
    /* 2026-01-15 is a Thursday: 22:30Z is Friday 00:30 at +02:00. */
    TEST_CHECK(tz_window_active(&z, 1u << 5, 0, 60, utc(2026, 1, 15, 22, 30)));
    TEST_CHECK(!tz_window_active(&z, 1u << 4, 0, 60, utc(2026, 1, 15, 22, 30)));
    TEST_CHECK(tz_window_active(&z, 1u << 4, 8 * 60, 8 * 60, utc(2026, 1, 16, 5, 0)));
    TEST_CHECK(!tz_window_active(&z, 1u << 4, 8 * 60, 8 * 60, utc(2026, 1, 16, 6, 0)));
}

/* Write a zic source into TZDIR-to-be and compile it "slim", so later years use the footer. */
static int zic_slim(const char *root, const char *src)
{
    char cmd[PATH_MAX * 2 + 64];
    if (tmptree_put(root, "src", src) < 0)
        return -1;
    snprintf(cmd, sizeof(cmd), "zic -b slim -d '%s/zi' '%s/src' 2>/dev/null", root, root);
    return system(cmd) == 0 ? 0 : -1;
}

TEST(footer_matches_fat_files)
{
    static const char src[] = "Rule EU 1981 max - Mar lastSun 1:00u 1:00 S\n"
                              "Rule EU 1996 max - Oct lastSun 1:00u 0 -\n"
                              "Zone Slim/Berlin 1:00 EU CE%sT\n"
                              "Rule AN 2008 max - Apr Sun>=1 2:00s 0 S\n"
                              "Rule AN 2008 max - Oct Sun>=1 2:00s 1:00 D\n"
                              "Zone Slim/Sydney 10:00 AN AE%sT\n"
                              "Rule Eire 1981 max - Mar lastSun 1:00u 0 -\n"
                              "Rule Eire 1996 max - Oct lastSun 1:00u -1:00 -\n"
                              "Zone Slim/Dublin 1:00 Eire IST/GMT\n";
    static const char *const pairs[][2] = {{"Slim/Berlin", "Europe/Berlin"},
                                           {"Slim/Sydney", "Australia/Sydney"},
                                           {"Slim/Dublin", "Europe/Dublin"}};
    char root[PATH_MAX], dir[PATH_MAX + 4];
    const char *old = getenv("TZDIR");
    char *saved = old ? xstrdup(old) : NULL;

    TEST_CHECK_INT(tmptree_make(root, sizeof(root), "test_tz"), 0);
    TEST_CHECK_INT(zic_slim(root, src), 0);
    snprintf(dir, sizeof(dir), "%s/zi", root);
    for (size_t i = 0; i < ARRAY_LEN(pairs); i++) {
        struct tz_zone slim, fat;
        setenv("TZDIR", dir, 1);
        load(pairs[i][0], &slim);
        unsetenv("TZDIR");
        load(pairs[i][1], &fat);
        TEST_CHECK(slim.footer.present && slim.footer.has_dst);
        TEST_CHECK(slim.ntrans < 100); /* the footer, not a transition table, covers 2030 */
        size_t diff = 0;
        /* Every hour from 2009 (the sources above are the rules since 2008) to 2045,
         * including years only the footer describes. */
        for (int64_t t = utc(2009, 1, 1, 0, 0); t < utc(2045, 1, 1, 0, 0); t += 3600)
            diff += tz_offset(&slim, t) != tz_offset(&fat, t);
        if (diff)
            fprintf(stderr, "%s: %zu hours differ\n", pairs[i][0], diff);
        TEST_CHECK_INT(diff, 0);
        tz_free(&slim);
        tz_free(&fat);
    }
    if (saved)
        setenv("TZDIR", saved, 1);
    free(saved);
    tmptree_remove(root);
}

TEST(footer_strings)
{
    static const struct {
        const char *s;
        bool ok;
        int32_t jan, jul; /* offsets on 15 January and 15 July 2030 */
    } cases[] = {
        {"CET-1CEST,M3.5.0,M10.5.0/3", true, 3600, 7200},
        {"AEST-10AEDT,M10.1.0,M4.1.0/3", true, 39600, 36000},
        {"IST-1GMT0,M10.5.0,M3.5.0/1", true, 0, 3600}, /* negative DST (Europe/Dublin) */
        {"EST5EDT,M3.2.0,M11.1.0", true, -18000, -14400},
        {"<-03>3", true, -10800, -10800},
        {"<+0545>-5:45", true, 20700, 20700},
        {"EST5EDT,0/0,J365/25", true, -14400, -14400}, /* daylight time all year */
        {"<-02>2<-01>,M3.5.0/-1,M10.5.0/0", true, -7200, -3600},
        {"JST-9", true, 32400, 32400},
        {"CET-1CEST", false, 0, 0}, /* DST without a rule */
        {"C-1", false, 0, 0},
        {"CET-25", false, 0, 0},
        {"CET-1CEST,M13.5.0,M10.5.0", false, 0, 0},
        {"CET-1CEST,M3.5.0,M10.5.0/168", false, 0, 0},
        {"CET-1CEST,M3.5.0,M10.5.0x", false, 0, 0},
        {"", false, 0, 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct tz_footer f;
        bool ok = parse_footer(cases[i].s, &f);
        if (ok != cases[i].ok)
            fprintf(stderr, "footer '%s': got %d\n", cases[i].s, ok);
        TEST_CHECK(ok == cases[i].ok);
        if (!ok || !cases[i].ok)
            continue;
        TEST_CHECK_INT(footer_offset(&f, utc(2030, 1, 15, 12, 0)), cases[i].jan);
        TEST_CHECK_INT(footer_offset(&f, utc(2030, 7, 15, 12, 0)), cases[i].jul);
    }
}

TEST(bad_names_and_files)
{
    static const char *const names[] = {
        "Europe/Berln",   "../../etc/passwd",    "/etc/localtime", "localtime", "Europe", "",
        "Europe/Ber lin", "right/Europe/Berlin", "Local"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        struct tz_zone z;
        char err[256] = "";
        TEST_CHECK_INT(tz_load(names[i], &z, err, sizeof(err)), -1);
        TEST_CHECK(err[0] != '\0');
    }
    struct tz_zone z;
    char err[256];
    TEST_CHECK_INT(tz_parse((const unsigned char *)"TZi", 3, &z, err, sizeof(err)), -1);

    /* Every truncation of a real file is refused cleanly. */
    size_t len = 0;
    char *buf = test_read_file("/usr/share/zoneinfo/Europe/Berlin", &len);
    TEST_CHECK(buf != NULL);
    if (!buf)
        return;
    int accepted = 0;
    for (size_t n = 0; n < len; n++) {
        if (tz_parse((const unsigned char *)buf, n, &z, err, sizeof(err)) == 0) {
            accepted++;
            tz_free(&z);
        }
    }
    TEST_CHECK_INT(accepted, 0);
    TEST_CHECK_INT(tz_parse((const unsigned char *)buf, len, &z, err, sizeof(err)), 0);
    tz_free(&z);
    free(buf);
}

int main(void)
{
    RUN(offsets_across_2026_transitions);
    RUN(office_hours_follow_dst);
    RUN(spring_forward);
    RUN(fall_back);
    RUN(fixed_offset_windows);
    RUN(footer_matches_fat_files);
    RUN(footer_strings);
    RUN(bad_names_and_files);
    return test_done();
}
