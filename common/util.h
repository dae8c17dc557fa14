/*
 * Small helpers both programs need: allocation that aborts on out-of-memory (the one fatal
 * run-time error, as in chrony's Malloc), a growable string buffer, and number parsing that
 * rejects trailing garbage instead of silently reading a prefix.
 */
#ifndef GPURECLAIM_UTIL_H
#define GPURECLAIM_UTIL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Make room for element `n` of an array that holds n elements of `size` bytes, doubling the
 * allocation when n is 0 or a power of two, so that appending n elements one by one costs
 * O(n) copies and no capacity field is needed.
 */
void *xgrow(void *p, size_t n, size_t size);

/* Growable NUL-terminated buffer. Zero-initialise (`struct sbuf b = {0};`) before use. */
struct sbuf {
    char *buf;
    size_t len, cap;
};
void sbuf_add(struct sbuf *b, const char *s, size_t n);
void sbuf_puts(struct sbuf *b, const char *s);
void sbuf_putc(struct sbuf *b, char c);
void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap);
void sbuf_reset(struct sbuf *b);
void sbuf_free(struct sbuf *b);
/* Hand the buffer to the caller (never NULL) and reset `b`. */
char *sbuf_take(struct sbuf *b);

/*
 * Strict decimal parsers: the whole string (after optional leading blanks and one trailing
 * newline) must be a number. Return 0 on success, -1 with errno EINVAL/ERANGE otherwise.
 */
int parse_u64(const char *s, uint64_t *out);
int parse_i64(const char *s, int64_t *out);
int parse_double(const char *s, double *out);

/* Value 0-15 of a hexadecimal digit, or -1 when `c` is not one. */
int hex_value(int c);

/* Copy a NUL-terminated string, truncating to fit `cap` (which must be > 0). */
void str_copy(char *dst, size_t cap, const char *src);
/* Append `src` to the string in dst (cap > 0), truncating as snprintf of the whole would. */
void str_append(char *dst, size_t cap, const char *src);
/*
 * printf's "%g" of v into buf (at least 32 bytes): the digits of a whole number below a
 * million by hand, as %g prints them, and anything else by snprintf. For the texts made for
 * every workload at every cycle of a backtest (a threshold), where printf was a tenth of it.
 */
const char *str_g(char *buf, double v);
/*
 * Format a message into a caller's error buffer (nothing when err is NULL or errlen 0) and
 * return -1, for `return err_printf(err, errlen, "cannot ...: %s", why);`.
 */
int err_printf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Remove trailing whitespace in place; return s. */
char *str_rtrim(char *s);
bool str_has_prefix(const char *s, const char *prefix);

/* Monotonic clock in seconds. */
double mono_now(void);
/*
 * Monotonic time `t` (seconds, as from mono_now) as the absolute timespec that
 * pthread_cond_timedwait wants of a condition variable on CLOCK_MONOTONIC. A time that is
 * NaN or not after the epoch of that clock gives {0, 0}, a deadline already past.
 */
struct timespec mono_timespec(double t);
/* Initialise a condition variable whose timed waits take mono_timespec deadlines. */
void mono_cond_init(pthread_cond_t *cv);
/* Wall-clock (Unix) time in seconds. */
double wall_now(void);

/*
 * An exact sum of doubles (Shewchuk's non-overlapping partials, as Python's math.fsum):
 * fsum_value is the sum correctly rounded, so it does not depend on the order the terms
 * were added in. The backtest sums GPU-seconds of its reclaims in the order they close and
 * recommend in the order they were made; two grid points that free the same seconds must
 * compare equal however they got there. At most 41 partials stay for finite doubles.
 * Zero-initialise (`struct fsum s = {0};`) before use. A non-finite term makes the value
 * that term (NaN for +Inf and -Inf both).
 */
#define FSUM_PARTIALS 48
struct fsum {
    double p[FSUM_PARTIALS];
    size_t n;
    double special; /* the non-finite terms, summed as doubles */
};
void fsum_add(struct fsum *s, double x);
double fsum_value(const struct fsum *s);

/* 64-bit FNV-1a, for content hashes shown to users (not for security). */
uint64_t fnv1a64(const void *data, size_t n);

/*
 * A set of byte strings with a value each (open addressing, a word-at-a-time hash), for finding
 * duplicates in linear time. The strings are the caller's and must outlive the set.
 * Zero-initialise (`struct strset s = {0};`) before use.
 */
struct strset_slot {
    const char *s; /* NULL: free slot */
    size_t len;
    const void *val;
};
struct strset {
    struct strset_slot *slots;
    size_t cap, n;
};
/*
 * Add `s` with `val` (not NULL); returns NULL when it was added, or the value stored with an
 * equal key (the set is then unchanged).
 */
const void *strset_put(struct strset *set, const char *s, size_t len, const void *val);
/* The value stored with `s`, or NULL when it is not in the set. */
const void *strset_get(const struct strset *set, const char *s, size_t len);
/*
 * The slot holding `s`, or NULL: its value may be replaced, and its string by one with the
 * same bytes (when the one stored is about to be freed), until the set next changes.
 */
struct strset_slot *strset_slot(struct strset *set, const char *s, size_t len);
/* Take a slot strset_slot returned out of the set (the others may move). */
void strset_remove(struct strset *set, struct strset_slot *slot);
void strset_free(struct strset *set);

#endif
