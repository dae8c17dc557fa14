/*
 * Process-monotonic counters from raw driver accumulators (see accum.h for why).
 */
#include "accum.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

/*
 * A numerator advances at most 100 per tick (busy percent per firmware tick; a residency
 * advances at most 1). The SMU rounds each accumulator from Q10 fixed point on every read
 * (SMUQ10_ROUND in smu_v13_0_6_ppt.c), so one interval may be 1 over; 2 is the slack.
 */
#define MAX_PER_TICK 100
#define ROUND_SLACK  2

/*
 * The counter advances about once per millisecond (two MI300X captures 5 s apart differ by
 * 5008 ticks: SebastianM-C/GPUDiagnostics.jl test/gpu_metrics.jl). An advance of more than 10^7
 * ticks per second of wall time, 10^4 times that rate, is not a reading of the same counter: a
 * driver reload or garbage.
 */
#define MAX_TICKS_PER_SECOND 1e7

static uint64_t width_mask(uint8_t bits)
{
    return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/*
 * Forward distance from prev to cur modulo 2^bits. A distance above half the range means
 * the value went back (reset), not that it wrapped: false.
 */
static bool forward(uint64_t prev, uint64_t cur, uint8_t bits, uint64_t *d)
{
    uint64_t m = width_mask(bits);
    uint64_t dd = (cur - prev) & m;
    if (dd > (m >> 1))
        return false;
    *d = dd;
    return true;
}

static void fill_totals(const struct accum_state *s, const struct accum_reading *r,
                        struct accum_totals *out)
{
    memset(out, 0, sizeof(*out));
    if (!s->have || r->den.bits == 0)
        return;
    out->den_valid = true;
    out->den_total = (double)s->den_total;
    for (int i = 0; i < r->nnum && i < ACCUM_MAX_NUM; i++) {
        out->num_valid[i] = r->num[i].bits != 0;
        out->num_total[i] = (double)s->num_total[i];
    }
}

/* Whether the reading `r` continues the baseline `s->last`; fills the deltas if so. */
static bool interval(const struct accum_state *s, const struct accum_reading *r, uint64_t *dden,
                     uint64_t *dnum)
{
    const struct accum_reading *p = &s->last;
    if (!s->have || r->den.bits == 0 || r->den.bits != p->den.bits || r->den_src != p->den_src ||
        r->nnum != p->nnum)
        return false;
    if (!forward(p->den.v, r->den.v, r->den.bits, dden))
        return false;
    double dt = r->when - p->when;
    if ((double)*dden > (dt > 0 ? dt + 1 : 1) * MAX_TICKS_PER_SECOND)
        return false;
    for (int i = 0; i < r->nnum; i++) {
        const struct gpum_acc *a = &p->num[i], *b = &r->num[i];
        dnum[i] = 0;
        if (a->bits == 0 && b->bits == 0) {
            /*
             * Never seen: a field this device does not have. Seen before: a reading that
             * turned all-ones or was cut off; adding the ticks without busy time would read
             * a busy device as idle, so the whole interval is dropped.
             */
            if (s->num_seen[i])
                return false;
            continue;
        }
        if (a->bits != b->bits || !forward(a->v, b->v, b->bits, &dnum[i]))
            return false;
        if (dnum[i] > *dden * MAX_PER_TICK + ROUND_SLACK)
            return false;
    }
    return true;
}

void accum_step(struct accum_state *s, const struct accum_reading *r, struct accum_totals *out)
{
    struct accum_reading rr = *r;
    if (rr.nnum > ACCUM_MAX_NUM)
        rr.nnum = ACCUM_MAX_NUM;
    if (s->have && rr.when < s->when) {
        /* Older than what was applied (a concurrent scrape finished first): report only. */
        fill_totals(s, &rr, out);
        return;
    }
    s->when = rr.when;
    uint64_t dden, dnum[ACCUM_MAX_NUM];
    if (interval(s, &rr, &dden, dnum)) {
        if (dden == 0) {
            /*
             * The driver served the same table again (it caches it for a few ms): no
             * data, not idle. A numerator that moved while the counter did not is
             * inconsistent, so the interval is restarted.
             */
            bool same = true;
            for (int i = 0; i < rr.nnum; i++)
                same &= dnum[i] == 0;
            if (!same)
                s->discarded++;
            if (!same)
                s->last = rr;
            fill_totals(s, &rr, out);
            return;
        }
        s->den_total += dden;
        for (int i = 0; i < rr.nnum; i++)
            s->num_total[i] += dnum[i];
        s->intervals++;
    } else if (s->have) {
        s->discarded++;
    }
    s->last = rr;
    s->have = rr.den.bits != 0;
    for (int i = 0; i < rr.nnum; i++)
        s->num_seen[i] |= rr.num[i].bits != 0;
    fill_totals(s, &rr, out);
}

/* ---- the shared table of groups ------------------------------------------------------------- */

/*
 * 8 GPUs x (1 + 8 partitions) groups is under 100; 1024 leaves room for renumbered
 * partitions after mode changes. Groups are never freed while the exporter runs: a GPU
 * that comes back continues its counters.
 */
#define NSLOTS 1024

struct slot {
    char key[64];
    struct accum_state st;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots[NSLOTS];

/* The group `key`; a new one when `create` (NULL when not found or the table is full). */
static struct accum_state *lookup_locked(const char *key, bool create)
{
    uint32_t h = (uint32_t)(fnv1a64(key, strlen(key)) % NSLOTS);
    for (uint32_t i = 0; i < NSLOTS; i++) {
        struct slot **sp = &slots[(h + i) % NSLOTS];
        if (!*sp) {
            if (!create)
                return NULL;
            *sp = xcalloc(1, sizeof(**sp));
            str_copy((*sp)->key, sizeof((*sp)->key), key);
            return &(*sp)->st;
        }
        if (strcmp((*sp)->key, key) == 0)
            return &(*sp)->st;
    }
    return NULL;
}

int accum_update(const char *key, const struct accum_reading *r, struct accum_totals *out)
{
    pthread_mutex_lock(&lock);
    struct accum_state *s = lookup_locked(key, true);
    if (s)
        accum_step(s, r, out);
    pthread_mutex_unlock(&lock);
    if (!s) {
        memset(out, 0, sizeof(*out));
        /* The same text on every scrape, so one warning; which groups, at debug. */
        log_cond("accumulator table full", LOG_WARN,
                 "accumulator table full (%d groups): later groups are not published", NSLOTS);
        log_debug("accumulator group '%s' not published: table full", key);
        return -1;
    }
    return 0;
}

bool accum_seen(const char *key)
{
    bool seen = false;
    pthread_mutex_lock(&lock);
    const struct accum_state *s = lookup_locked(key, false);
    for (int k = 0; s && k < ACCUM_MAX_NUM; k++)
        seen |= s->num_seen[k];
    pthread_mutex_unlock(&lock);
    return seen;
}

void accum_reset(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < NSLOTS; i++) {
        free(slots[i]);
        slots[i] = NULL;
    }
    pthread_mutex_unlock(&lock);
    log_cond_clear("accumulator table full");
}
