/*
 * Leveled logging (see log.h). Lines are written with one write(2)-sized fputs under the
 * stdio lock so concurrent scrape threads never interleave half lines.
 */
#include "log.h"
#include "rfc3339.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum log_level log_threshold = LOG_INFO;
static bool log_json;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

int log_set_level(const char *name)
{
    for (int i = 0; i < 4; i++) {
        if (strcmp(name, level_names[i]) == 0) {
            log_threshold = (enum log_level)i;
            return 0;
        }
    }
    return -1;
}

int log_set_format(const char *name)
{
    if (strcmp(name, "logfmt") == 0)
        log_json = false;
    else if (strcmp(name, "json") == 0)
        log_json = true;
    else
        return -1;
    return 0;
}

/* Quote for both logfmt and JSON: the escapes they share (\\, \", \n, \t) suffice. */
static size_t put_quoted(char *dst, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 3 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            dst[n++] = '\\';
            dst[n++] = (char)c;
        } else if (c == '\n') {
            dst[n++] = '\\';
            dst[n++] = 'n';
        } else if (c == '\t') {
            dst[n++] = '\\';
            dst[n++] = 't';
        } else if (c < 0x20) {
            dst[n++] = '?';
        } else {
            dst[n++] = (char)c;
        }
    }
    dst[n] = '\0';
    return n;
}

void log_write(enum log_level level, const char *fmt, ...)
{
    char msg[2048], quoted[4200], ts[40];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    put_quoted(quoted, sizeof(quoted), msg);

    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    rfc3339_format(ts, sizeof(ts), (double)now.tv_sec + (double)now.tv_nsec / 1e9, RFC3339_MILLI);

    char line[4400];
    if (log_json)
        snprintf(line, sizeof(line), "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"%s\"}\n", ts,
                 level_names[level], quoted);
    else
        snprintf(line, sizeof(line), "ts=%s level=%s msg=\"%s\"\n", ts, level_names[level], quoted);
    flockfile(stderr);
    fputs(line, stderr);
    funlockfile(stderr);
}

void log_limited(struct log_limit *l, enum log_level level, unsigned per_minute, const char *fmt,
                 ...)
{
    if (level < log_threshold)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double t = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    pthread_mutex_lock(&l->mu);
    unsigned long dropped = 0;
    if (l->window_start == 0 || t - l->window_start >= 60) {
        dropped = l->suppressed;
        l->window_start = t;
        l->lines = 0;
        l->suppressed = 0;
    }
    bool emit = l->lines < per_minute;
    if (emit)
        l->lines++;
    else
        l->suppressed++;
    pthread_mutex_unlock(&l->mu);
    if (!emit)
        return;
    if (dropped)
        log_write(level, "%s (%lu similar messages suppressed in the last minute)", msg, dropped);
    else
        log_write(level, "%s", msg);
}

/*
 * Conditions (see log.h). A small array searched linearly: a node has a handful of
 * conditions at a time, and a lookup costs less than formatting the message. A cleared
 * condition leaves the table, so the bound is on conditions active at once.
 */
#define COND_MAX 1024

struct cond {
    char key[128];
    char text[512];
    bool reported; /* since the last sweep of a prefix that covers it */
};

static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cond *conds[COND_MAX];
static size_t nconds;

/* Index of the condition `key` (compared as stored: truncated), or -1. */
static long cond_find_locked(const char *key)
{
    char k[sizeof(conds[0]->key)];
    snprintf(k, sizeof(k), "%s", key);
    for (size_t i = 0; i < nconds; i++)
        if (strcmp(conds[i]->key, k) == 0)
            return (long)i;
    return -1;
}

/* Remove conds[i] (order does not matter); its text is copied to `text` for the clear line. */
static void cond_remove_locked(size_t i, char *text, size_t cap)
{
    snprintf(text, cap, "%s", conds[i]->text);
    free(conds[i]);
    conds[i] = conds[--nconds];
    conds[nconds] = NULL;
}

void log_cond(const char *key, enum log_level level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    enum log_level at = level;
    pthread_mutex_lock(&cond_lock);
    long at_i = cond_find_locked(key);
    struct cond *c = at_i >= 0 ? conds[at_i] : NULL;
    if (c && strcmp(c->text, msg) == 0) {
        at = LOG_DEBUG;
    } else if (!c && nconds < COND_MAX && (c = calloc(1, sizeof(*c)))) {
        snprintf(c->key, sizeof(c->key), "%s", key);
        conds[nconds++] = c;
    } else if (!c) {
        /* Full (or out of memory): still said, but at debug, never growing. */
        at = LOG_DEBUG;
    }
    if (c) {
        snprintf(c->text, sizeof(c->text), "%s", msg);
        c->reported = true;
    }
    pthread_mutex_unlock(&cond_lock);
    log_at(at, "%s", msg);
}

void log_cond_clear(const char *key)
{
    char text[512] = "";
    bool was = false;
    pthread_mutex_lock(&cond_lock);
    long i = cond_find_locked(key);
    if (i >= 0) {
        cond_remove_locked((size_t)i, text, sizeof(text));
        was = true;
    }
    pthread_mutex_unlock(&cond_lock);
    if (was)
        log_info("cleared: %s", text);
}

void log_cond_sweep(const char *prefix)
{
    size_t plen = strlen(prefix);
    for (;;) {
        char text[512] = "";
        bool cleared = false;
        pthread_mutex_lock(&cond_lock);
        for (size_t i = 0; i < nconds; i++) {
            if (strncmp(conds[i]->key, prefix, plen) != 0)
                continue;
            if (!conds[i]->reported) {
                cond_remove_locked(i, text, sizeof(text));
                cleared = true;
                break;
            }
        }
        if (!cleared)
            for (size_t i = 0; i < nconds; i++)
                if (strncmp(conds[i]->key, prefix, plen) == 0)
                    conds[i]->reported = false;
        pthread_mutex_unlock(&cond_lock);
        if (!cleared)
            return;
        /* Logged outside the lock, one line per cleared condition. */
        log_info("cleared: %s", text);
    }
}

bool log_cond_active(const char *key)
{
    pthread_mutex_lock(&cond_lock);
    bool active = cond_find_locked(key) >= 0;
    pthread_mutex_unlock(&cond_lock);
    return active;
}
