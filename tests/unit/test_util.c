/*
 * Unit tests of util.c's monotonic deadline helpers, which replaced the copies in lease.c,
 * notify.c and collector_ownership.c, and of the string set's look-up.
 */
#include "util.c"

#include <errno.h>
#include <math.h>

#include "test.h"

TEST(mono_timespec_cases)
{
    static const struct {
        double t;
        time_t sec;
        long nsec;
    } cases[] = {
        {1.5, 1, 500000000},
        {100, 100, 0},
        {0.25, 0, 250000000},
        {0, 0, 0},
        {-3, 0, 0}, /* a deadline already past */
        {NAN, 0, 0},
        {-INFINITY, 0, 0},
        {INFINITY, 1000000000000000, 0}, /* far enough, and no undefined cast */
        {1e300, 1000000000000000, 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct timespec ts = mono_timespec(cases[i].t);
        TEST_CHECK_INT(ts.tv_sec, cases[i].sec);
        TEST_CHECK(labs(ts.tv_nsec - cases[i].nsec) <= 1);
        TEST_CHECK(ts.tv_nsec >= 0 && ts.tv_nsec <= 999999999L);
    }
}

/* A wait on a mono_cond_init condition times out at a mono_timespec deadline. */
TEST(mono_cond_waits_until_the_deadline)
{
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv;
    mono_cond_init(&cv);
    pthread_mutex_lock(&mu);
    double t0 = mono_now();
    struct timespec ts = mono_timespec(t0 + 0.05);
    int rc;
    while ((rc = pthread_cond_timedwait(&cv, &mu, &ts)) == 0)
        ;
    double waited = mono_now() - t0;
    pthread_mutex_unlock(&mu);
    TEST_CHECK_INT(rc, ETIMEDOUT);
    TEST_CHECK(waited >= 0.049);
    /* A past deadline returns at once. */
    ts = mono_timespec(t0 - 1);
    pthread_mutex_lock(&mu);
    TEST_CHECK_INT(pthread_cond_timedwait(&cv, &mu, &ts), ETIMEDOUT);
    pthread_mutex_unlock(&mu);
    pthread_cond_destroy(&cv);
}

/* strset_get finds what strset_put stored, by content and length, and adds nothing. */
TEST(strset_get_finds)
{
    struct strset set = {0};
    TEST_CHECK(strset_get(&set, "a", 1) == NULL); /* empty: no slots at all */
    static const char *keys[] = {"a", "ab",
                                 "a\x1f"
                                 "b",
                                 "workload-17"};
    for (size_t i = 0; i < 4; i++)
        TEST_CHECK(strset_put(&set, keys[i], strlen(keys[i]), (void *)(uintptr_t)(i + 1)) == NULL);
    char buf[16];
    for (size_t i = 0; i < 4; i++) {
        snprintf(buf, sizeof(buf), "%s", keys[i]); /* another pointer, the same bytes */
        TEST_CHECK(strset_get(&set, buf, strlen(buf)) == (void *)(uintptr_t)(i + 1));
    }
    TEST_CHECK(strset_get(&set, "abc", 2) == (void *)(uintptr_t)2); /* the length counts */
    TEST_CHECK(strset_get(&set, "b", 1) == NULL);
    TEST_CHECK_INT(set.n, 4);
    strset_free(&set);
}

int main(void)
{
    RUN(mono_timespec_cases);
    RUN(mono_cond_waits_until_the_deadline);
    RUN(strset_get_finds);
    return test_done();
}
