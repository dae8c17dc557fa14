/*
 * Leveled logging (see log.h). Lines are written with one write(2)-sized fputs under the
 * stdio lock so concurrent scrape threads never interleave half lines.
 */
#include "log.h"
#include "rfc3339.h"

#include <stdarg.h>
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
