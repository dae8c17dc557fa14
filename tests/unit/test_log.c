/*
 * Unit tests of the condition log (common/log.c): a condition repeated on every scrape is one
 * line at its level, again only when its text changes, one "cleared" line when it clears,
 * and sweeps clear exactly the conditions of their prefix that were not reported again.
 */
#include "log.c"

#include <unistd.h>

#include "test.h"

/* stderr goes to a temporary file while `capture` is on; lines_at() reads it back. */
static FILE *cap;
static int saved_stderr = -1;

static void capture_start(void)
{
    fflush(stderr);
    cap = tmpfile();
    saved_stderr = dup(2);
    if (cap)
        dup2(fileno(cap), 2);
}

/* Stop capturing; return how many lines contain `level=<level>` and `needle`. */
static int capture_count(const char *level, const char *needle)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    if (!cap)
        return -1;
    rewind(cap);
    char line[4500], lv[32];
    snprintf(lv, sizeof(lv), "level=%s ", level);
    int n = 0;
    while (fgets(line, sizeof(line), cap))
        if (strstr(line, lv) && strstr(line, needle))
            n++;
    fclose(cap);
    cap = NULL;
    return n;
}

TEST(repeated_condition_is_one_warning)
{
    log_threshold = LOG_DEBUG;
    capture_start();
    for (int i = 0; i < 20; i++)
        log_cond("t1", LOG_WARN, "cannot open '%s': %s", "/x/class/drm", "No such file");
    int warns = capture_count("warn", "cannot open '/x/class/drm'");
    capture_start();
    for (int i = 0; i < 3; i++)
        log_cond("t1", LOG_WARN, "cannot open '%s': %s", "/x/class/drm", "No such file");
    int debugs = capture_count("debug", "cannot open '/x/class/drm'");
    TEST_CHECK_INT(warns, 1);
    TEST_CHECK_INT(debugs, 3);
    TEST_CHECK(log_cond_active("t1"));
    log_cond_clear("t1");
}

TEST(changed_text_is_logged_again_and_clear_once)
{
    log_threshold = LOG_INFO;
    capture_start();
    log_cond("t3", LOG_WARN, "aaa");
    log_cond("t3", LOG_WARN, "aaa");
    log_cond("t3", LOG_WARN, "changed to ccc"); /* changed: said again, at its level */
    log_cond("t3", LOG_WARN, "changed to ccc");
    log_cond_clear("t3");
    TEST_CHECK_INT(capture_count("warn", "changed to ccc"), 1);
    capture_start();
    log_cond("t3", LOG_WARN, "bbb");
    log_cond("t3", LOG_WARN, "bbb");
    log_cond_clear("t3");
    log_cond("t3", LOG_WARN, "bbb"); /* back after clearing: said again */
    log_cond_clear("t3");
    TEST_CHECK_INT(capture_count("warn", "bbb"), 2);
    capture_start();
    log_cond("t3", LOG_WARN, "bbb");
    log_cond_clear("t3");
    log_cond_clear("t3");
    TEST_CHECK_INT(capture_count("info", "cleared: bbb"), 1);
}

TEST(sweep_clears_only_unreported_keys_of_its_prefix)
{
    log_threshold = LOG_INFO;
    log_cond("c devices: a", LOG_WARN, "problem a");
    log_cond("c devices: b", LOG_WARN, "problem b");
    log_cond("c other: z", LOG_WARN, "problem z");
    log_cond_sweep("c devices: "); /* both were reported in this round: kept */
    TEST_CHECK(log_cond_active("c devices: a") && log_cond_active("c devices: b"));
    capture_start();
    log_cond("c devices: a", LOG_WARN, "problem a"); /* repeats: debug, not shown */
    log_cond_sweep("c devices: ");                   /* b was not reported again: cleared */
    int cleared_b = capture_count("info", "cleared: problem b");
    capture_start();
    log_cond_sweep("c devices: ");
    int cleared_a = capture_count("info", "cleared: problem a");
    TEST_CHECK_INT(cleared_b, 1);
    TEST_CHECK_INT(cleared_a, 1);
    TEST_CHECK(!log_cond_active("c devices: a") && !log_cond_active("c devices: b"));
    TEST_CHECK(log_cond_active("c other: z"));
    log_cond_clear("c other: z");
}

TEST(table_is_bounded)
{
    log_threshold = LOG_ERROR;
    char key[32];
    for (int i = 0; i < COND_MAX + 50; i++) {
        snprintf(key, sizeof(key), "bound %d", i);
        log_cond(key, LOG_WARN, "distinct %d", i);
    }
    TEST_CHECK_INT(nconds, COND_MAX);
    /* Past the bound a new condition is not remembered (said at debug only). */
    TEST_CHECK(!log_cond_active("bound 1030"));
    TEST_CHECK(log_cond_active("bound 5"));
    log_cond_sweep("bound ");
    log_cond_sweep("bound ");
    TEST_CHECK_INT(nconds, 0);
}

TEST(level_below_threshold_still_tracks)
{
    /* At --log.level=error a warning is not printed, yet its condition is known, so the
     * clear line and a later change are consistent with what was (not) said. */
    log_threshold = LOG_ERROR;
    log_cond("t4", LOG_WARN, "quiet");
    TEST_CHECK(log_cond_active("t4"));
    log_cond_clear("t4");
    TEST_CHECK(!log_cond_active("t4"));
}

int main(void)
{
    RUN(repeated_condition_is_one_warning);
    RUN(changed_text_is_logged_again_and_clear_once);
    RUN(sweep_clears_only_unreported_keys_of_its_prefix);
    RUN(table_is_bounded);
    RUN(level_below_threshold_still_tracks);
    return test_done();
}
