/*
 * Process-monotonic Prometheus counters from the driver's raw accumulators.
 *
 * The SMU keeps busy and throttle accumulators (percent x ticks, ticks) next to an
 * accumulation counter (ticks); the exact busy ratio over a window is
 * increase(busy) / increase(counter) / 100. Published raw, they would break that formula:
 * U32 fields wrap (gfx_activity_acc at 100 per tick in about 12 hours) and Prometheus reads
 * a wrap as a counter reset, which adds only the post-wrap value to increase() and so
 * UNDER-states busy time - the direction that gets a busy workload reclaimed. A driver
 * reload, or a later kernel widening a field from U32 to U64, also restarts the raw values.
 *
 * So each group (one denominator and the numerators divided by it) keeps, per device, the
 * last raw reading across scrapes and adds the deltas, taken modulo the encoded width, to
 * totals that start at 0 when the exporter starts and never decrease. An interval is added
 * to every total of the group or to none: it is discarded when a numerator that the group
 * has seen at least once is absent at either end (all-ones, a table cut short, a read that
 * failed: busy time must not stand still while ticks advance), the counter did not advance (the
 * driver serves a cached table), a value went back by more than half its range (a reset, not a
 * wrap), a numerator advanced faster than 100 per tick, the encoded width changed, or the
 * denominator's source changed. A discarded interval restarts from the new reading, so no busy time
 * is invented and a busy ratio is never computed from a numerator and a denominator that did not
 * cover the same interval.
 *
 * State is shared by concurrent scrapes behind one mutex; a reading older than the last
 * one applied (two scrapes racing) is ignored.
 */
#ifndef GPURECLAIM_ACCUM_H
#define GPURECLAIM_ACCUM_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu_metrics.h"

#define ACCUM_MAX_NUM 8

/* One reading of a group. */
struct accum_reading {
    double when;      /* monotonic time the source was read */
    unsigned den_src; /* which file the denominator came from; a change restarts the group */
    struct gpum_acc den;
    int nnum;
    struct gpum_acc num[ACCUM_MAX_NUM];
};

/* The group's totals after a reading. */
struct accum_totals {
    bool den_valid;                /* den_total is publishable (the group has a baseline) */
    double den_total;              /* ticks since the exporter started */
    bool num_valid[ACCUM_MAX_NUM]; /* numerator present in this reading */
    double num_total[ACCUM_MAX_NUM];
};

/* Per-group state; exposed for the unit tests, otherwise owned by accum.c. */
struct accum_state {
    bool have;
    double when;
    struct accum_reading last;
    uint64_t den_total;
    uint64_t num_total[ACCUM_MAX_NUM];
    bool num_seen[ACCUM_MAX_NUM];  /* numerator present in some reading since the start */
    unsigned intervals, discarded; /* for tests and debug logs */
};

/*
 * Apply reading `r` to `s` (pure; no locking) and fill `out`. Exposed for tests; the
 * collectors use accum_update.
 */
void accum_step(struct accum_state *s, const struct accum_reading *r, struct accum_totals *out);

/*
 * Apply reading `r` to the group named `key` (e.g. "0000:05:00.0/partition/3") and fill
 * `out`. Thread-safe. Returns -1 (out all invalid) when the table of groups is full.
 */
int accum_update(const char *key, const struct accum_reading *r, struct accum_totals *out);

/* Whether the group `key` has seen any numerator since the exporter started. */
bool accum_seen(const char *key);

/* Forget every group (exporter shutdown, tests). */
void accum_reset(void);

#endif
