/*
 * Unit tests of util.c's monotonic deadline helpers, which replaced the copies in lease.c,
 * notify.c and collector_ownership.c, of the string set's look-up, and of the exact sum.
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

/*
 * The set's hash reads every byte: keys of every length up to 40 that differ only in their
 * last byte, and 20,000 keys shaped as the engine's (a label set printed, differing in the
 * last digits), are all found, and no run of occupied slots grows long (a hash that skipped
 * a tail, or mixed its low bits poorly, piles such keys into one run of thousands).
 */
TEST(strset_spreads_keys)
{
    struct strset set = {0};
    enum { NKEYS = 20000 };
    static char keys[NKEYS][64], tails[41][2][48];
    size_t n = 0;
    for (size_t len = 1; len <= 40; len++)
        for (int k = 0; k < 2; k++) {
            memset(tails[len][k], 'x', len);
            tails[len][k][len - 1] = (char)('a' + k);
            TEST_CHECK(strset_put(&set, tails[len][k], len, (void *)(uintptr_t)(++n)) == NULL);
        }
    TEST_CHECK(strset_put(&set, "", 0, (void *)(uintptr_t)(++n)) == NULL);
    for (size_t i = 0; i < NKEYS; i++) {
        snprintf(keys[i], sizeof(keys[i]), "{namespace=\"team-%02zu\", pod=\"wl-%05zu\"}", i % 50,
                 i);
        TEST_CHECK(strset_put(&set, keys[i], strlen(keys[i]), (void *)(uintptr_t)(++n)) == NULL);
    }
    TEST_CHECK_INT(set.n, n);
    size_t v = 0;
    for (size_t len = 1; len <= 40; len++)
        for (int k = 0; k < 2; k++)
            TEST_CHECK(strset_get(&set, tails[len][k], len) == (void *)(uintptr_t)(++v));
    TEST_CHECK(strset_get(&set, "", 0) == (void *)(uintptr_t)(++v));
    for (size_t i = 0; i < NKEYS; i++)
        TEST_CHECK(strset_get(&set, keys[i], strlen(keys[i])) == (void *)(uintptr_t)(++v));
    size_t run = 0, longest = 0;
    for (size_t i = 0; i < 2 * set.cap; i++) { /* twice round: a run may wrap */
        run = set.slots[i % set.cap].s ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    TEST_CHECK(longest < 64);
    strset_free(&set);
}

/*
 * strset_remove keeps every other string findable: 4,000 keys in a small table (long runs,
 * some wrapping past its end), removed in a scrambled order and some put back, checked
 * against what should be in the set after every step; strset_slot names the slot whose
 * value a caller may change.
 */
TEST(strset_remove_keeps_the_rest)
{
    enum { NKEYS = 4000 };
    static char keys[NKEYS][24];
    static bool in[NKEYS];
    struct strset set = {0};
    for (size_t i = 0; i < NKEYS; i++) {
        snprintf(keys[i], sizeof(keys[i]), "k%zu", i);
        TEST_CHECK(strset_put(&set, keys[i], strlen(keys[i]), (void *)(uintptr_t)(i + 1)) == NULL);
        in[i] = true;
    }
    TEST_CHECK(strset_slot(&set, "absent", 6) == NULL);
    struct strset_slot *s7 = strset_slot(&set, "k7", 2);
    TEST_CHECK(s7 && s7->val == (void *)(uintptr_t)8);
    s7->val = (void *)(uintptr_t)99;
    TEST_CHECK(strset_get(&set, "k7", 2) == (void *)(uintptr_t)99);
    s7->val = (void *)(uintptr_t)8;
    unsigned seed = 11;
    size_t wrong = 0, removed = 0;
    for (int step = 0; step < 12000; step++) {
        seed = seed * 1103515245u + 12345u;
        size_t k = (seed >> 8) % NKEYS;
        struct strset_slot *slot = strset_slot(&set, keys[k], strlen(keys[k]));
        wrong += (slot != NULL) != in[k];
        if (slot && step % 4 != 3) {
            strset_remove(&set, slot);
            in[k] = false;
            removed++;
        } else if (!slot) {
            TEST_CHECK(strset_put(&set, keys[k], strlen(keys[k]), (void *)(uintptr_t)(k + 1)) ==
                       NULL);
            in[k] = true;
        }
        if (step % 1000 == 0) /* now and then, every key */
            for (size_t i = 0; i < NKEYS; i++)
                wrong += strset_get(&set, keys[i], strlen(keys[i])) !=
                         (in[i] ? (void *)(uintptr_t)(i + 1) : NULL);
    }
    size_t n = 0;
    for (size_t i = 0; i < NKEYS; i++) {
        n += in[i];
        wrong += strset_get(&set, keys[i], strlen(keys[i])) !=
                 (in[i] ? (void *)(uintptr_t)(i + 1) : NULL);
    }
    TEST_CHECK_INT(wrong, 0);
    TEST_CHECK_INT(set.n, n);
    TEST_CHECK(removed > 2000);
    strset_free(&set);
}

/* fsum: the correctly rounded sum, the same in any order (where a running sum of doubles
   is not), and the cases math.fsum's documentation and tests name. */
TEST(fsum_exact_any_order)
{
    struct fsum a = {0};
    for (int i = 0; i < 10; i++)
        fsum_add(&a, 0.1);
    TEST_CHECK(fsum_value(&a) == 1.0); /* a running sum gives 0.9999999999999999 */
    static const double v[] = {1e100, 1.0, -1e100, 1e-100, 1e50, -1.0, -1e50};
    struct fsum b = {0};
    for (size_t i = 0; i < ARRAY_LEN(v); i++)
        fsum_add(&b, v[i]);
    TEST_CHECK(fsum_value(&b) == 1e-100);
    struct fsum c = {0}; /* half-even across partials: 1 + 1e-16 rounds up with 1e16 */
    fsum_add(&c, 1e-16);
    fsum_add(&c, 1.0);
    fsum_add(&c, 1e16);
    TEST_CHECK(fsum_value(&c) == 10000000000000002.0);
    /* GPU-seconds as the backtest adds them: every order of 40 terms gives one value. */
    double t[40];
    uint64_t x = 88172645463325252u;
    for (size_t i = 0; i < ARRAY_LEN(t); i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        t[i] = (double)(1 + x % 4) * ((double)(x % 86400000) / 1000.0 + 0.015);
    }
    struct fsum ref = {0};
    for (size_t i = 0; i < ARRAY_LEN(t); i++)
        fsum_add(&ref, t[i]);
    bool naive_differs = false;
    for (int round = 0; round < 50; round++) {
        for (size_t i = ARRAY_LEN(t) - 1; i > 0; i--) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t j = x % (i + 1);
            double y = t[i];
            t[i] = t[j];
            t[j] = y;
        }
        struct fsum s = {0};
        double naive = 0;
        for (size_t i = 0; i < ARRAY_LEN(t); i++) {
            fsum_add(&s, t[i]);
            naive += t[i];
        }
        TEST_CHECK(fsum_value(&s) == fsum_value(&ref));
        naive_differs |= naive != fsum_value(&ref);
    }
    TEST_CHECK(naive_differs); /* else the orders tried prove nothing */
    struct fsum z = {0};
    TEST_CHECK(fsum_value(&z) == 0.0);
    fsum_add(&z, INFINITY);
    TEST_CHECK(isinf(fsum_value(&z)));
    fsum_add(&z, -INFINITY);
    TEST_CHECK(isnan(fsum_value(&z)));
}

/* str_g is printf's %g for every value, the whole numbers it does by hand included, and
   str_append truncates as snprintf of the whole text would. */
TEST(str_g_is_printf)
{
    double vals[] = {0,   -0.0,     1,          2,   5,        10,       20,      99.5,
                     100, 1e5,      999999,     1e6, 1234567,  0.5,      1e-7,    -3,
                     NAN, INFINITY, 42.0000001, 7.0, 999999.5, 100000.0, 12345.0, 3.14159265};
    char a[32], b[32];
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        snprintf(b, sizeof(b), "%g", vals[i]);
        TEST_CHECK_STR(str_g(a, vals[i]), b);
    }
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v = i % 2 ? (double)(x % 2000000) : (double)(x % 100000) / 8.0;
        snprintf(b, sizeof(b), "%g", v);
        if (strcmp(str_g(a, v), b) != 0) {
            TEST_CHECK_STR(a, b);
            break;
        }
    }
    char d[12] = "", want[12];
    str_append(d, sizeof(d), "idle since ");
    str_append(d, sizeof(d), "2023");
    snprintf(want, sizeof(want), "idle since %s", "2023");
    TEST_CHECK_STR(d, want); /* "idle since " fills 11 of 12: the rest is cut */
    char e[64] = "below ";
    str_append(e, sizeof(e), "threshold ");
    str_append(e, sizeof(e), str_g(a, 10));
    str_append(e, sizeof(e), "%");
    TEST_CHECK_STR(e, "below threshold 10%");
}

int main(void)
{
    RUN(mono_timespec_cases);
    RUN(mono_cond_waits_until_the_deadline);
    RUN(strset_get_finds);
    RUN(strset_spreads_keys);
    RUN(strset_remove_keeps_the_rest);
    RUN(fsum_exact_any_order);
    RUN(str_g_is_printf);
    return test_done();
}
