/*
 * Tests of the leader-election decision (lease_next) as a table of the cases client-go's
 * tryAcquireOrRenew distinguishes, and of the Lease JSON both ways. The thread and the HTTP
 * calls are tested end to end against the fake API server (tests/e2e/leader_election.sh).
 */
#include "lease.c"

#include "test.h"

static const struct lease_cfg cfg = {"gpureclaim", "gpureclaim-enforcer", "me", 15, 10, 2, 5};

static struct lease_record rec(const char *holder, double dur, double acq, double ren, long tr,
                               const char *rv)
{
    struct lease_record r = {0};
    str_copy(r.holder, sizeof(r.holder), holder);
    r.duration = dur;
    r.acquire_time = acq;
    r.renew_time = ren;
    r.transitions = tr;
    str_copy(r.resource_version, sizeof(r.resource_version), rv);
    return r;
}

TEST(absent_lease_is_created)
{
    struct lease_state st = {0};
    struct lease_record next;
    TEST_CHECK_INT(lease_next(&cfg, &st, false, NULL, 1000, 5, &next), LEASE_OP_CREATE);
    TEST_CHECK_STR(next.holder, "me");
    TEST_CHECK_DBL(next.acquire_time, 1000, 0);
    TEST_CHECK_DBL(next.renew_time, 1000, 0);
    TEST_CHECK_DBL(next.duration, 15, 0);
    TEST_CHECK_STR(next.resource_version, "");
}

TEST(live_lease_of_another_is_respected)
{
    struct lease_state st = {0};
    struct lease_record cur = rec("other", 15, 900, 990, 3, "7"), next;
    /* First sight: the expiry clock starts now (mono 100), whatever renewTime says. */
    TEST_CHECK_INT(lease_next(&cfg, &st, true, &cur, 5000, 100, &next), LEASE_OP_NONE);
    /* Unchanged for 14.9 s of our clock: still live. */
    TEST_CHECK_INT(lease_next(&cfg, &st, true, &cur, 5000, 114.9, &next), LEASE_OP_NONE);
    /* A renewal (new resourceVersion) restarts the clock. */
    struct lease_record renewed = rec("other", 15, 900, 1002, 3, "8");
    TEST_CHECK_INT(lease_next(&cfg, &st, true, &renewed, 5000, 112, &next), LEASE_OP_NONE);
    TEST_CHECK_INT(lease_next(&cfg, &st, true, &renewed, 5000, 126.9, &next), LEASE_OP_NONE);
    /* 15 s without a change: expired, taken over with the resourceVersion read. */
    TEST_CHECK_INT(lease_next(&cfg, &st, true, &renewed, 5000, 127.1, &next), LEASE_OP_UPDATE);
    TEST_CHECK_STR(next.holder, "me");
    TEST_CHECK_STR(next.resource_version, "8");
    TEST_CHECK_INT(next.transitions, 4);
    TEST_CHECK_DBL(next.acquire_time, 5000, 0);
}

TEST(clock_skew_does_not_matter)
{
    /* renewTime far in the past by our wall clock: still live until our own clock says so. */
    struct lease_state st = {0};
    struct lease_record cur = rec("other", 15, 1, 2, 0, "1"), next;
    TEST_CHECK_INT(lease_next(&cfg, &st, true, &cur, 1e9, 50, &next), LEASE_OP_NONE);
}

TEST(released_lease_is_taken_at_once)
{
    struct lease_state st = {0};
    struct lease_record cur = rec("", 1, 900, 990, 2, "9"), next;
    TEST_CHECK_INT(lease_next(&cfg, &st, true, &cur, 5000, 100, &next), LEASE_OP_UPDATE);
    TEST_CHECK_INT(next.transitions, 3);
}

TEST(own_lease_is_renewed)
{
    struct lease_state st = {0};
    struct lease_record cur = rec("me", 15, 800, 990, 5, "12"), next;
    TEST_CHECK_INT(lease_next(&cfg, &st, true, &cur, 1000, 100, &next), LEASE_OP_UPDATE);
    TEST_CHECK_DBL(next.acquire_time, 800, 0);
    TEST_CHECK_DBL(next.renew_time, 1000, 0);
    TEST_CHECK_INT(next.transitions, 5);
    TEST_CHECK_STR(next.resource_version, "12");
}

TEST(zero_duration_falls_back_to_ours)
{
    /* A holder with a missing duration must not be read as expired at once. */
    struct lease_state st = {0};
    struct lease_record cur = rec("other", 0, NAN, NAN, 0, "3"), next;
    TEST_CHECK_INT(lease_next(&cfg, &st, true, &cur, 1000, 100, &next), LEASE_OP_NONE);
    TEST_CHECK_INT(lease_next(&cfg, &st, true, &cur, 1000, 114, &next), LEASE_OP_NONE);
    TEST_CHECK_INT(lease_next(&cfg, &st, true, &cur, 1000, 116, &next), LEASE_OP_UPDATE);
}

TEST(json_round_trip)
{
    struct lease_record r = rec("pod-a", 15, 1764000000.25, 1764000002.5, 3, "42"), back;
    char *s = lease_json(&cfg, &r), err[128];
    TEST_CHECK_CONTAINS(s, "\"renewTime\":\"2025-11-24T16:00:02.500000Z\"");
    TEST_CHECK_CONTAINS(s, "\"resourceVersion\":\"42\"");
    TEST_CHECK_INT(lease_parse(s, strlen(s), &back, err, sizeof(err)), 0);
    TEST_CHECK_STR(back.holder, "pod-a");
    TEST_CHECK_DBL(back.acquire_time, 1764000000.25, 1e-6);
    TEST_CHECK_DBL(back.renew_time, 1764000002.5, 1e-6);
    TEST_CHECK_INT(back.transitions, 3);
    TEST_CHECK(lease_record_equal(&r, &back));
    free(s);
}

TEST(parse_rejects_bad_leases)
{
    struct lease_record r;
    char err[128];
    const char *no_rv = "{\"metadata\":{\"name\":\"x\"},\"spec\":{}}";
    TEST_CHECK_INT(lease_parse(no_rv, strlen(no_rv), &r, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "resourceVersion");
    const char *bad_time = "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"renewTime\":"
                           "\"yesterday\"}}";
    TEST_CHECK_INT(lease_parse(bad_time, strlen(bad_time), &r, err, sizeof(err)), -1);
    TEST_CHECK_INT(lease_parse("[]", 2, &r, err, sizeof(err)), -1);
    const char *no_spec = "{\"metadata\":{\"resourceVersion\":\"1\"}}";
    TEST_CHECK_INT(lease_parse(no_spec, strlen(no_spec), &r, err, sizeof(err)), 0);
    TEST_CHECK_STR(r.holder, "");
}

TEST(start_rejects_unsafe_timings)
{
    char err[128];
    struct lease_cfg c = cfg;
    c.renew_deadline = 20; /* longer than the lease: a leader could outlive it */
    TEST_CHECK(lease_start(&c, NULL, err, sizeof(err)) == NULL);
    TEST_CHECK_CONTAINS(err, "lease-duration > renew-deadline");
    c = cfg;
    c.call_timeout = 14; /* a call could outlast the lease another replica may then take */
    TEST_CHECK(lease_start(&c, NULL, err, sizeof(err)) == NULL);
    TEST_CHECK_CONTAINS(err, "kube.timeout");
    c = cfg;
    c.identity = "";
    TEST_CHECK(lease_start(&c, NULL, err, sizeof(err)) == NULL);
    TEST_CHECK(lease_is_leader(NULL)); /* no election: the single replica acts */
}

int main(void)
{
    RUN(absent_lease_is_created);
    RUN(live_lease_of_another_is_respected);
    RUN(clock_skew_does_not_matter);
    RUN(released_lease_is_taken_at_once);
    RUN(own_lease_is_renewed);
    RUN(zero_duration_falls_back_to_ours);
    RUN(json_round_trip);
    RUN(parse_rejects_bad_leases);
    RUN(start_rejects_unsafe_timings);
    return test_done();
}
