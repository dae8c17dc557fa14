/*
 * A tiny unit-test harness (in the manner of chrony's and redis's): each test file
 * #includes the module's .c to reach its static functions, defines TEST functions and
 * calls them from main() with RUN(). Every test prints one "PASS: file/test" or
 * "FAIL: file/test" line on stdout; tests/run-suite.sh counts those lines. A failed check
 * prints file:line and the values on stderr and the test goes on, so one run shows all
 * failures. main() ends with `return test_done();` (exit status = failed tests).
 */
#ifndef GPURECLAIM_TEST_H
#define GPURECLAIM_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_checks_failed_;
static int test_passed_, test_failed_;

#define TEST(name) static void name(void)

#define TEST_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            test_checks_failed_++;                                                                 \
        }                                                                                          \
    } while (0)

#define TEST_CHECK_INT(a, b)                                                                       \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b,  \
                    a_, b_);                                                                       \
            test_checks_failed_++;                                                                 \
        }                                                                                          \
    } while (0)

#define TEST_CHECK_STR(a, b)                                                                       \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                   \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a,  \
                    #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                   \
            test_checks_failed_++;                                                                 \
        }                                                                                          \
    } while (0)

#define TEST_CHECK_DBL(a, b, eps)                                                                  \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (eps)) && !(isnan(a_) && isnan(b_))) {                              \
            fprintf(stderr, "%s:%d: %s == %s failed: %.17g != %.17g\n", __FILE__, __LINE__, #a,    \
                    #b, a_, b_);                                                                   \
            test_checks_failed_++;                                                                 \
        }                                                                                          \
    } while (0)

/* Substring check, for error messages. */
#define TEST_CHECK_CONTAINS(hay, needle)                                                           \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (!h_ || !strstr(h_, n_)) {                                                              \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,         \
                    h_ ? h_ : "(null)", n_);                                                       \
            test_checks_failed_++;                                                                 \
        }                                                                                          \
    } while (0)

static inline void test_run_(const char *file, const char *name, void (*fn)(void))
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    int before = test_checks_failed_;
    fn();
    if (test_checks_failed_ == before) {
        printf("PASS: %s/%s\n", base, name);
        test_passed_++;
    } else {
        printf("FAIL: %s/%s\n", base, name);
        test_failed_++;
    }
    fflush(stdout);
}

#define RUN(fn) test_run_(__FILE__, #fn, fn)

static inline int test_done(void)
{
    fprintf(stderr, "%d passed, %d failed\n", test_passed_, test_failed_);
    return test_failed_ ? 1 : 0;
}

/*
 * How many of `full` random histories a differential test runs: all of them, but under
 * memcheck (tests/valgrind.sh sets TEST_QUICK) one in `div`, at least one. Memcheck looks for
 * memory errors, which a few histories walk as well as many (the same code paths), at some 50
 * times the native cost; the native and sanitizer runs keep the full count, which is what
 * finds a wrong answer. Checks on counts scale with the number run.
 */
static inline int test_reps(int full, int div)
{
    if (!getenv("TEST_QUICK"))
        return full;
    return full / div > 0 ? full / div : 1;
}

/* Read a whole file into a NUL-terminated buffer (caller frees); NULL if unreadable. */
static inline char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

#endif
