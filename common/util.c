/*
 * Helpers shared by both programs (see util.h). Allocation failure aborts: every caller
 * would otherwise need an error path for a condition the process cannot recover from.
 */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void oom(void)
{
    fputs("fatal: out of memory\n", stderr);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        oom();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        oom();
    return p;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void *xgrow(void *p, size_t n, size_t size)
{
    if (n == 0 || (n & (n - 1)) == 0)
        p = xrealloc(p, (n ? 2 * n : 1) * size);
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    struct sbuf b = {0};
    va_list ap;
    va_start(ap, fmt);
    sbuf_vprintf(&b, fmt, ap);
    va_end(ap);
    return sbuf_take(&b);
}

static void sbuf_grow(struct sbuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->buf = xrealloc(b->buf, cap);
    b->cap = cap;
}

void sbuf_add(struct sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap)
        sbuf_grow(b, n);
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = '\0';
}

void sbuf_puts(struct sbuf *b, const char *s)
{
    sbuf_add(b, s, strlen(s));
}

void sbuf_putc(struct sbuf *b, char c)
{
    /* The exposition renderer calls this per character of every label: no memcpy. */
    if (b->len + 2 > b->cap)
        sbuf_grow(b, 1);
    b->buf[b->len++] = c;
    b->buf[b->len] = '\0';
}

void sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof(small), fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(small)) {
        sbuf_add(b, small, (size_t)n);
        return;
    }
    sbuf_grow(b, (size_t)n);
    vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

void sbuf_reset(struct sbuf *b)
{
    b->len = 0;
    if (b->buf)
        b->buf[0] = '\0';
}

void sbuf_free(struct sbuf *b)
{
    free(b->buf);
    b->buf = NULL;
    b->len = b->cap = 0;
}

char *sbuf_take(struct sbuf *b)
{
    char *p = b->buf ? b->buf : xstrdup("");
    b->buf = NULL;
    b->len = b->cap = 0;
    return p;
}

/* Accept leading blanks and a single trailing newline, as sysfs prints "%d\n". */
static int check_tail(const char *end)
{
    if (*end == '\n')
        end++;
    if (*end != '\0') {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int parse_u64(const char *s, uint64_t *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (!isdigit((unsigned char)*s)) {
        errno = EINVAL;
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    if (check_tail(end))
        return -1;
    *out = v;
    return 0;
}

int parse_i64(const char *s, int64_t *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    const char *d = (*s == '-' || *s == '+') ? s + 1 : s;
    if (!isdigit((unsigned char)*d)) {
        errno = EINVAL;
        return -1;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno)
        return -1;
    if (check_tail(end))
        return -1;
    *out = v;
    return 0;
}

int parse_double(const char *s, double *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '\0') {
        errno = EINVAL;
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s)
        return errno ? -1 : (errno = EINVAL, -1);
    if (check_tail(end))
        return -1;
    /* "inf" and "nan" parse, but no caller wants them: a NaN interval or threshold breaks
       every comparison made with it. */
    if (!isfinite(v)) {
        errno = EINVAL;
        return -1;
    }
    *out = v;
    return 0;
}

int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

void str_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memmove(dst, src, n);
    dst[n] = '\0';
}

void str_append(char *dst, size_t cap, const char *src)
{
    size_t have = strnlen(dst, cap - 1);
    str_copy(dst + have, cap - have, src);
}

const char *str_g(char *buf, double v)
{
    /* %g with its default precision of 6 prints a whole number of at most six digits as
       those digits; zero's sign (-0) and everything else go to printf. */
    if (v >= 1 && v < 1e6 && v == floor(v)) {
        char tmp[8];
        size_t n = 0;
        for (long x = (long)v; x > 0; x /= 10)
            tmp[n++] = (char)('0' + x % 10);
        for (size_t i = 0; i < n; i++)
            buf[i] = tmp[n - 1 - i];
        buf[n] = '\0';
        return buf;
    }
    snprintf(buf, 32, "%g", v);
    return buf;
}

int err_printf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

char *str_rtrim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

bool str_has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct timespec mono_timespec(double t)
{
    struct timespec ts = {0, 0};
    /* 1e15 s is 30 million years of uptime: beyond it time_t and the nanoseconds lose sense. */
    if (!(t > 0))
        return ts;
    if (t > 1e15)
        t = 1e15;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec > 999999999L)
        ts.tv_nsec = 999999999L;
    return ts;
}

void mono_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void fsum_add(struct fsum *s, double x)
{
    if (!isfinite(x)) {
        s->special += x;
        return;
    }
    /* Add x to the partials, smallest first, keeping each error term that is not zero. */
    size_t i = 0;
    for (size_t j = 0; j < s->n; j++) {
        double y = s->p[j];
        if (fabs(x) < fabs(y)) {
            double t = x;
            x = y;
            y = t;
        }
        double hi = x + y;
        double lo = y - (hi - x);
        if (lo != 0.0)
            s->p[i++] = lo;
        x = hi;
    }
    if (!isfinite(x)) { /* the sum itself left the doubles: as a plain sum would */
        s->n = 0;
        s->special += x;
        return;
    }
    s->n = i;
    if (x != 0.0 && s->n < FSUM_PARTIALS)
        s->p[s->n++] = x;
}

double fsum_value(const struct fsum *s)
{
    if (s->special != 0.0 || isnan(s->special))
        return s->special;
    size_t n = s->n;
    if (!n)
        return 0.0;
    double hi = s->p[--n], lo = 0.0;
    while (n > 0) {
        double x = hi, y = s->p[--n];
        hi = x + y;
        lo = y - (hi - x);
        if (lo != 0.0)
            break;
    }
    /* Round half to even across the partials below: when the next partial has lo's sign,
       the exact sum is past the halfway point hi + lo rounded to. */
    if (n > 0 && ((lo < 0.0 && s->p[n - 1] < 0.0) || (lo > 0.0 && s->p[n - 1] > 0.0))) {
        double y = lo * 2.0, x = hi + y;
        if (y == x - hi)
            hi = x;
    }
    return hi;
}

uint64_t fnv1a64(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/*
 * The set's hash: eight bytes a step, then a full avalanche (MurmurHash3's finaliser), so
 * the low bits that pick a slot depend on every byte. FNV-1a's byte a step was most of a
 * look-up of the engine's keys (namespace/pod strings of 40 to 80 bytes), which a backtest
 * makes a few times per candidate per cycle. Not shown to users, so free to differ from
 * fnv1a64.
 */
static uint64_t strset_hash(const char *s, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (len * 0xff51afd7ed558ccdULL);
    uint64_t w;
    for (; len >= 8; s += 8, len -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, s, len);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static struct strset_slot *strset_find(struct strset_slot *slots, size_t cap, const char *s,
                                       size_t len)
{
    size_t i = (size_t)strset_hash(s, len) & (cap - 1);
    while (slots[i].s && !(slots[i].len == len && memcmp(slots[i].s, s, len) == 0))
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

const void *strset_put(struct strset *set, const char *s, size_t len, const void *val)
{
    if (2 * (set->n + 1) > set->cap) {
        /* At most half full, so a probe sequence stays short; capacity is a power of two. */
        size_t cap = set->cap ? 2 * set->cap : 16;
        struct strset_slot *slots = xcalloc(cap, sizeof(*slots));
        for (size_t i = 0; i < set->cap; i++)
            if (set->slots[i].s)
                *strset_find(slots, cap, set->slots[i].s, set->slots[i].len) = set->slots[i];
        free(set->slots);
        set->slots = slots;
        set->cap = cap;
    }
    struct strset_slot *slot = strset_find(set->slots, set->cap, s, len);
    if (slot->s)
        return slot->val;
    *slot = (struct strset_slot){.s = s, .len = len, .val = val};
    set->n++;
    return NULL;
}

const void *strset_get(const struct strset *set, const char *s, size_t len)
{
    if (!set->cap)
        return NULL;
    const struct strset_slot *slot =
        strset_find((struct strset_slot *)set->slots, set->cap, s, len);
    return slot->s ? slot->val : NULL;
}

struct strset_slot *strset_slot(struct strset *set, const char *s, size_t len)
{
    if (!set->cap)
        return NULL;
    struct strset_slot *slot = strset_find(set->slots, set->cap, s, len);
    return slot->s ? slot : NULL;
}

/*
 * Linear probing's deletion without tombstones: every string after the freed slot in its run
 * that is not at or past its own home slot moves back into the hole, so a look-up never meets
 * a free slot before the string it looks for.
 */
void strset_remove(struct strset *set, struct strset_slot *slot)
{
    size_t mask = set->cap - 1, hole = (size_t)(slot - set->slots);
    for (size_t j = (hole + 1) & mask; set->slots[j].s; j = (j + 1) & mask) {
        size_t home = (size_t)strset_hash(set->slots[j].s, set->slots[j].len) & mask;
        /* j stays when its home lies cyclically in (hole, j]. */
        bool stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
        if (stays)
            continue;
        set->slots[hole] = set->slots[j];
        hole = j;
    }
    set->slots[hole] = (struct strset_slot){0};
    set->n--;
}

void strset_free(struct strset *set)
{
    free(set->slots);
    memset(set, 0, sizeof(*set));
}
