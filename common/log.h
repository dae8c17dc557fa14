/*
 * Leveled logging to stderr in logfmt or JSON, shared by both programs.
 *
 * One module so that --log.level and --log.format mean the same in the exporter and the
 * enforcer. The macros test the level before evaluating their arguments, so debug lines
 * cost nothing on the scrape path when disabled. Messages follow git's rules: lower-case
 * start, no final full stop, the error first, the subject in single quotes.
 */
#ifndef GPURECLAIM_LOG_H
#define GPURECLAIM_LOG_H

#include <pthread.h>
#include <stdbool.h>

enum log_level { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR };

extern enum log_level log_threshold;

/* Parse "debug|info|warn|error" / "logfmt|json"; return 0 or -1 for an unknown name. */
int log_set_level(const char *name);
int log_set_format(const char *name);

void log_write(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_at(lvl, ...)                                                                           \
    do {                                                                                           \
        if ((lvl) >= log_threshold)                                                                \
            log_write((lvl), __VA_ARGS__);                                                         \
    } while (0)
#define log_debug(...) log_at(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)  log_at(LOG_INFO, __VA_ARGS__)
#define log_warn(...)  log_at(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_at(LOG_ERROR, __VA_ARGS__)

/*
 * Conditions: a problem (or a state such as "no AMD GPU on this node") that is met again and
 * again, on every scrape or every cycle, is one condition named by a stable `key` (for
 * example "collector devices" or "gpu unserved 0000:05:00.0"). It is logged at `level` the
 * first time and whenever its text changes, at debug while it repeats unchanged, and one
 * info line says when it clears. This is the one mechanism for "log once" in both programs,
 * so that no call site keeps a flag of its own. Thread-safe. Keys and texts are truncated to
 * 127 and 511 bytes; past 1024 conditions at once, new ones are logged at debug only, so a
 * flood of distinct problems cannot grow memory.
 */
void log_cond(const char *key, enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The condition `key` is over: if it was active, log "cleared: <its last text>" at info. */
void log_cond_clear(const char *key);

/*
 * For conditions reported from inside a round (a collector's run within a scrape): clear
 * every active condition whose key starts with `prefix` and that was not reported since the
 * previous sweep of the same prefix, then start a new round.
 */
void log_cond_sweep(const char *prefix);

/* Whether `key` is an active condition (for tests and for callers that act on a change). */
bool log_cond_active(const char *key);

/*
 * A message source that others control (a library reporting what clients send) gets at most
 * `per_minute` lines a minute; the rest are counted and the count is appended to the first
 * line of the next minute. The level is tested here.
 */
struct log_limit {
    pthread_mutex_t mu;
    double window_start;
    unsigned lines;
    unsigned long suppressed;
};
#define LOG_LIMIT_INIT                                                                             \
    {                                                                                              \
        .mu = PTHREAD_MUTEX_INITIALIZER                                                            \
    }
void log_limited(struct log_limit *l, enum log_level level, unsigned per_minute, const char *fmt,
                 ...) __attribute__((format(printf, 4, 5)));

#endif
