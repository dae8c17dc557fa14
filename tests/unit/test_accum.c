/*
 * Tests of the process-monotonic accumulator counters (accum.c): wraps are followed, resets,
 * sentinels, cached tables, implausible advances and width changes are discarded for the
 * numerator and its denominator together, totals never go back, and concurrent updates of
 * one group stay consistent.
 */
#include "accum.c"

#include "test.h"

static struct gpum_acc a32(uint64_t v)
{
    return (struct gpum_acc){v & 0xFFFFFFFFu, 32};
}

static struct gpum_acc a64(uint64_t v)
{
    return (struct gpum_acc){v, 64};
}

static const struct gpum_acc none = {0, 0};

static struct accum_reading rd(double when, struct gpum_acc den, struct gpum_acc num)
{
    struct accum_reading r = {.when = when, .den = den, .nnum = 1};
    r.num[0] = num;
    return r;
}

/* Apply and return the totals. */
static struct accum_totals step(struct accum_state *s, struct accum_reading r)
{
    struct accum_totals t;
    accum_step(s, &r, &t);
    return t;
}

TEST(first_reading_is_a_baseline_at_zero)
{
    struct accum_state s = {0};
    struct accum_totals t = step(&s, rd(1, a32(54536484), a32(123456)));
    TEST_CHECK(t.den_valid && t.num_valid[0]);
    TEST_CHECK_DBL(t.den_total, 0, 0);
    TEST_CHECK_DBL(t.num_total[0], 0, 0);
    t = step(&s, rd(2, a32(54537484), a32(123456 + 20000)));
    TEST_CHECK_DBL(t.den_total, 1000, 0);
    TEST_CHECK_DBL(t.num_total[0], 20000, 0); /* 20 % busy: 20000 / 1000 / 100 */
}

/*
 * A U32 busy accumulator at 100 per tick wraps in about 12 h. Prometheus would read the
 * raw wrap as a reset and count only the post-wrap part: here the whole delta is counted.
 */
TEST(u32_wrap_is_followed)
{
    struct accum_state s = {0};
    step(&s, rd(1, a32(0xFFFFFF00u), a32(0xFFFFF000u)));
    struct accum_totals t =
        step(&s, rd(2, a32(0x100000000ull + 0x300), a32(0x100000000ull + 0x1000)));
    TEST_CHECK_DBL(t.den_total, 0x400, 0);
    TEST_CHECK_DBL(t.num_total[0], 0x2000, 0);
    TEST_CHECK_INT(s.discarded, 0);
}

/* A driver reload restarts the raw values: that interval is dropped, the next one counts. */
TEST(reset_discards_the_interval)
{
    struct accum_state s = {0};
    step(&s, rd(1, a32(54536484), a32(5000000)));
    step(&s, rd(2, a32(54537484), a32(5050000)));
    struct accum_totals t = step(&s, rd(3, a32(100), a32(10)));
    TEST_CHECK_DBL(t.den_total, 1000, 0);
    TEST_CHECK_DBL(t.num_total[0], 50000, 0);
    TEST_CHECK_INT(s.discarded, 1);
    t = step(&s, rd(4, a32(1100), a32(90010)));
    TEST_CHECK_DBL(t.den_total, 2000, 0);
    TEST_CHECK_DBL(t.num_total[0], 140000, 0);
}

/* A numerator absent at one end: neither total moves (never counter without busy). */
TEST(sentinel_discards_both)
{
    struct accum_state s = {0};
    step(&s, rd(1, a32(1000), a32(500)));
    struct accum_totals t = step(&s, rd(2, a32(2000), none));
    TEST_CHECK(t.den_valid && !t.num_valid[0]);
    TEST_CHECK_DBL(t.den_total, 0, 0);
    t = step(&s, rd(3, a32(3000), a32(80000)));
    TEST_CHECK_DBL(t.den_total, 0, 0); /* from the reading without numerator: discarded */
    TEST_CHECK_DBL(t.num_total[0], 0, 0);
    t = step(&s, rd(4, a32(4000), a32(90000)));
    TEST_CHECK_DBL(t.den_total, 1000, 0);
    TEST_CHECK_DBL(t.num_total[0], 10000, 0);
    /* The denominator absent: nothing is published. */
    t = step(&s, rd(5, none, a32(95000)));
    TEST_CHECK(!t.den_valid && !t.num_valid[0]);
}

/* A field the device never has (absent at both ends) does not block the others. */
TEST(field_absent_on_both_sides_is_ignored)
{
    struct accum_state s = {0};
    struct accum_reading r = rd(1, a32(1000), a32(0));
    r.nnum = 2;
    r.num[1] = none;
    step(&s, r);
    r = rd(2, a32(2000), a32(100));
    r.nnum = 2;
    r.num[1] = none;
    struct accum_totals t = step(&s, r);
    TEST_CHECK_DBL(t.den_total, 1000, 0);
    TEST_CHECK_DBL(t.num_total[0], 100, 0);
    TEST_CHECK(!t.num_valid[1]);
}

/*
 * A numerator seen once and then absent at both ends of an interval (all-ones, a table cut
 * short) drops the interval for the whole group: 100 % busy with readings present, absent,
 * absent, absent, present, present read 0.50 when the ticks of the absent intervals were
 * added without busy time.
 */
TEST(seen_numerator_absent_at_both_ends_discards)
{
    struct accum_state s = {0};
    const int present[] = {1, 0, 0, 0, 1, 1};
    struct accum_totals t = {0};
    for (int k = 0; k < 6; k++)
        t = step(&s, rd(k + 1, a32(1000 + 1000 * (uint64_t)k),
                        present[k] ? a32(100000 * (uint64_t)k) : none));
    TEST_CHECK(t.den_total > 0);
    TEST_CHECK_DBL(t.num_total[0] / t.den_total / 100, 1.0, 0);
    TEST_CHECK_DBL(t.den_total, 1000, 0);
}

/* A busy counter present only on isolated scrapes never lets ticks advance alone. */
TEST(isolated_numerator_never_reads_idle)
{
    struct accum_state s = {0};
    struct accum_totals t = {0};
    for (int k = 0; k < 10; k++)
        t = step(&s, rd(k + 1, a32(1000 + 1000 * (uint64_t)k),
                        k % 3 == 0 ? a32(100000 * (uint64_t)k) : none));
    TEST_CHECK_DBL(t.den_total, 0, 0);
    TEST_CHECK_DBL(t.num_total[0], 0, 0);
}

/* The driver served the cached table: no data, not idle; a moving numerator is bogus. */
TEST(counter_not_advancing)
{
    struct accum_state s = {0};
    step(&s, rd(1, a32(1000), a32(500)));
    struct accum_totals t = step(&s, rd(1.001, a32(1000), a32(500)));
    TEST_CHECK_DBL(t.den_total, 0, 0);
    TEST_CHECK_INT(s.discarded, 0);
    t = step(&s, rd(1.002, a32(1000), a32(600)));
    TEST_CHECK_INT(s.discarded, 1);
    t = step(&s, rd(2, a32(2000), a32(700)));
    TEST_CHECK_DBL(t.den_total, 1000, 0);
    TEST_CHECK_DBL(t.num_total[0], 100, 0);
}

/* More than 100 per tick, a width change, a source change, an absurd rate: discarded. */
TEST(implausible_intervals_discarded)
{
    struct accum_state s = {0};
    step(&s, rd(1, a32(1000), a32(0)));
    step(&s, rd(2, a32(2000), a32(100003))); /* 100.003 per tick */
    TEST_CHECK_INT(s.discarded, 1);
    step(&s, rd(3, a64(3000), a64(100003))); /* U32 -> U64: a kernel update */
    TEST_CHECK_INT(s.discarded, 2);
    struct accum_reading r = rd(4, a64(4000), a64(150003));
    r.den_src = 7;
    step(&s, r);
    TEST_CHECK_INT(s.discarded, 3);
    r = rd(5, a64(4000 + 50000000), a64(150003)); /* 5e7 ticks in 1 s */
    r.den_src = 7;
    step(&s, r);
    TEST_CHECK_INT(s.discarded, 4);
    TEST_CHECK_INT(s.intervals, 0);
    TEST_CHECK_INT(s.den_total, 0);
}

/* A reading older than the one applied (a concurrent scrape finished first) is ignored. */
TEST(stale_reading_ignored)
{
    struct accum_state s = {0};
    step(&s, rd(1, a32(1000), a32(0)));
    step(&s, rd(3, a32(3000), a32(1000)));
    struct accum_totals t = step(&s, rd(2, a32(2000), a32(500)));
    TEST_CHECK_DBL(t.den_total, 2000, 0);
    TEST_CHECK_INT(s.discarded, 0);
    t = step(&s, rd(4, a32(4000), a32(1500)));
    TEST_CHECK_DBL(t.den_total, 3000, 0);
    TEST_CHECK_DBL(t.num_total[0], 1500, 0);
}

/* Random walks with wraps, resets and sentinels: totals never decrease and the ratio never
 * exceeds 100 per tick. */
TEST(random_walk_monotonic)
{
    srand(12345);
    for (int run = 0; run < 50; run++) {
        struct accum_state s = {0};
        uint64_t den = (uint64_t)rand(), num = (uint64_t)rand();
        double last_den = 0, last_num = 0;
        int bad = 0;
        for (int i = 0; i < 2000; i++) {
            int ev = rand() % 100;
            uint64_t d = (uint64_t)(rand() % 2000);
            den += d;
            num += d * (uint64_t)(rand() % 101);
            if (ev < 3) {
                den = (uint64_t)rand() % 1000;
                num = (uint64_t)rand() % 1000;
            }
            struct accum_totals t = step(&s, rd(i, a32(den), ev >= 3 && ev < 6 ? none : a32(num)));
            if (!t.den_valid)
                continue;
            if (t.den_total < last_den || (t.num_valid[0] && t.num_total[0] < last_num))
                bad++;
            if (t.num_valid[0] && t.num_total[0] > t.den_total * 100 + 2.0 * s.intervals)
                bad++;
            last_den = t.den_total;
            if (t.num_valid[0])
                last_num = t.num_total[0];
        }
        TEST_CHECK_INT(bad, 0);
    }
}

/*
 * The shared table: two scrapes per device read one advancing device (busy 50 %) and update
 * its group concurrently, as two Prometheus servers scraping one exporter do.
 */
static uint64_t device_ticks[2];

struct worker {
    const char *key;
    int dev;
    int bad;
};

static void *work(void *p)
{
    struct worker *w = p;
    for (int i = 1; i <= 2000; i++) {
        double when = mono_now(); /* taken before the "read", as the collectors do */
        uint64_t v = __atomic_add_fetch(&device_ticks[w->dev], 1000, __ATOMIC_SEQ_CST);
        struct accum_reading r = rd(when, a64(v), a64(v / 2));
        struct accum_totals t;
        if (accum_update(w->key, &r, &t) < 0 || !t.den_valid)
            w->bad++;
        else if (t.num_total[0] * 2 > t.den_total + 1)
            w->bad++;
    }
    return NULL;
}

TEST(shared_table_concurrent)
{
    pthread_t th[4];
    struct worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct worker){.key = i < 2 ? "gpu-a" : "gpu-b", .dev = i / 2};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        TEST_CHECK_INT(w[i].bad, 0);
    }
    struct accum_reading r = rd(mono_now(), a64(4000000), a64(2000000));
    struct accum_totals ta, tb;
    TEST_CHECK_INT(accum_update("gpu-a", &r, &ta), 0);
    TEST_CHECK_INT(accum_update("gpu-b", &r, &tb), 0);
    TEST_CHECK(ta.den_valid && tb.den_valid);
    /* 4000 readings of 1000 ticks each; a raced reading may be counted twice, not more. */
    TEST_CHECK(ta.den_total > 3000000 && ta.den_total < 8000000);
    TEST_CHECK(ta.num_total[0] * 2 <= ta.den_total + 1);
    TEST_CHECK(tb.num_total[0] * 2 <= tb.den_total + 1);
    accum_reset();
}

int main(void)
{
    RUN(first_reading_is_a_baseline_at_zero);
    RUN(u32_wrap_is_followed);
    RUN(reset_discards_the_interval);
    RUN(sentinel_discards_both);
    RUN(field_absent_on_both_sides_is_ignored);
    RUN(seen_numerator_absent_at_both_ends_discards);
    RUN(isolated_numerator_never_reads_idle);
    RUN(counter_not_advancing);
    RUN(implausible_intervals_discarded);
    RUN(stale_reading_ignored);
    RUN(random_walk_monotonic);
    RUN(shared_table_concurrent);
    return test_done();
}
