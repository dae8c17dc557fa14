/*
 * Tests of GPU pressure as the cluster reports it (enforcer/pressure.c): the sanitizing of
 * resource names, the scheduler's "Insufficient <name>" and Kueue's "insufficient unused
 * quota for <name> in flavor" read in both spellings of a name (raw, as the scheduler,
 * Kueue and gpureclaim's exporter write it, and sanitized, as kube-state-metrics labels it),
 * names that collide once sanitized (ambiguous: nothing confirmed), and the canned lists of
 * tests/e2e/data/kube (pending.json, kueue-pending.json).
 */
#include <unistd.h>

#include "pressure.c"
#include "fake.h"
#include "test.h"

static char data_dir[4096];

#define UID(n) "9b1c0a52-1f0e-4c3b-9a55-0f2a1e" n

/* A PodList of Pending pods, each {message, request key, request}, unschedulable. */
static char *pods(const char *const (*p)[3], size_t n)
{
    struct sbuf b = {0};
    sbuf_puts(&b, "{\"items\":[");
    for (size_t i = 0; i < n; i++)
        sbuf_printf(&b,
                    "%s{\"metadata\":{\"name\":\"p%zu\"},\"spec\":{\"containers\":[{\"resources\":"
                    "{\"requests\":{\"%s\":\"%s\"}}}]},\"status\":{\"phase\":\"Pending\","
                    "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"
                    "\"Unschedulable\",\"message\":\"%s\"}]}}",
                    i ? "," : "", i, p[i][1], p[i][2], p[i][0]);
    sbuf_puts(&b, "]}");
    return sbuf_take(&b);
}

/* A WorkloadList, each Workload QuotaReserved=False with message m[i]. */
static char *workloads(const char *const *m, size_t n)
{
    struct sbuf b = {0};
    sbuf_puts(&b, "{\"items\":[");
    for (size_t i = 0; i < n; i++)
        sbuf_printf(&b,
                    "%s{\"metadata\":{\"name\":\"w%zu\",\"uid\":\"u%zu\"},\"spec\":{\"active\":"
                    "true},\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":"
                    "\"False\",\"reason\":\"Pending\",\"message\":\"%s\"}]}}",
                    i ? "," : "", i, i, m[i]);
    sbuf_puts(&b, "]}");
    return sbuf_take(&b);
}

/* tests/e2e/data/kube/NAME (NUL-terminated, "" when unreadable: the test then fails). */
static char *canned(const char *name, size_t *len)
{
    char *path = xasprintf("%s/%s", data_dir, name);
    char *body = test_read_file(path, len);
    TEST_CHECK(body != NULL);
    free(path);
    if (!body)
        *len = 0;
    return body ? body : xstrdup("");
}

TEST(sanitize)
{
    static const struct {
        const char *in, *want;
    } t[] = {
        {"amd.com/gpu", "amd_com_gpu"},
        {"amd_com_gpu", "amd_com_gpu"},
        {"amd.com/cpx-nps4", "amd_com_cpx_nps4"},
        {"", ""},
    };
    for (size_t i = 0; i < ARRAY_LEN(t); i++) {
        char out[96];
        pressure_sanitize(t[i].in, out, sizeof(out));
        TEST_CHECK_STR(out, t[i].want);
    }
    char small[4];
    pressure_sanitize("amd.com/gpu", small, sizeof(small));
    TEST_CHECK_STR(small, "amd");

    TEST_CHECK(pressure_same("amd.com/gpu", "amd_com_gpu"));
    TEST_CHECK(pressure_same("amd_com_gpu", "amd.com/gpu"));
    TEST_CHECK(pressure_same("amd.com/gpu", "amd_com/gpu")); /* a collision */
    TEST_CHECK(!pressure_same("amd.com/gpu", "amd.com/gpu_xcp"));
    TEST_CHECK(!pressure_same("amd_com_gpu", "amd_com_gpu_xcp"));
    TEST_CHECK(!pressure_same("amd.com", "amd.com/gpu"));
    TEST_CHECK(pressure_is_sanitized("amd_com_gpu") && !pressure_is_sanitized("amd.com/gpu"));
}

/* The scheduler's message, whole words only, with the rule's name in both spellings. */
TEST(scheduler_message)
{
    static const struct {
        const char *msg;
        bool want;
    } words[] = {
        {"0/4 nodes are available: 4 Insufficient amd.com/gpu.", true},
        {"0/4 nodes are available: 2 Insufficient amd.com/gpu, 2 Insufficient cpu.", true},
        {"Insufficient amd.com/gpu", true},
        {"Insufficient amd.com/gpu..", true},
        {"0/4 nodes are available: 4 Insufficient amd.com/gpu_xcp.", false},
        {"0/4 nodes are available: 4 Insufficient amd.com/gpu-memory.", false},
        {"0/4 nodes are available: 4 Insufficient amd.com/gpu.x", false},
        {"0/4 nodes are available: 4 Insufficient cpu.", false},
        {"insufficient amd.com/gpu", false},
        {"Insufficient  amd.com/gpu", false},
    };
    for (size_t i = 0; i < ARRAY_LEN(words); i++) {
        struct pressure_demand d = {0}, s = {0};
        TEST_CHECK_INT(pressure_insufficient(words[i].msg, "amd.com/gpu", &d), words[i].want);
        TEST_CHECK_INT(pressure_insufficient(words[i].msg, "amd_com_gpu", &s), words[i].want);
        TEST_CHECK_INT(d.nnames, words[i].want);
        if (words[i].want)
            TEST_CHECK_STR(s.names[0], "amd.com/gpu"); /* the raw name, as the API wrote it */
    }
}

/*
 * Issue 24 §1: a kube-state-metrics rule (resource label amd_com_gpu) confirms the pod the
 * scheduler could not place for lack of amd.com/gpu, and counts its request.
 */
TEST(pending_both_spellings)
{
    const char *const p[][3] = {
        {"0/4 nodes are available: 4 Insufficient amd.com/gpu.", "amd.com/gpu", "2"},
        {"0/4 nodes are available: 4 Insufficient cpu.", "cpu", "1"},
        {"0/4 nodes are available: 4 Insufficient amd.com/gpu_xcp.", "amd.com/gpu_xcp", "1"},
    };
    char *body = pods(p, ARRAY_LEN(p)), err[256] = "";
    const char *spellings[] = {"amd.com/gpu", "amd_com_gpu"};
    for (size_t i = 0; i < ARRAY_LEN(spellings); i++) {
        struct pressure_demand d;
        TEST_CHECK_INT(
            pressure_parse_pending(body, strlen(body), spellings[i], &d, err, sizeof(err)), 0);
        TEST_CHECK_INT(d.count, 1);
        TEST_CHECK_INT(d.requested, 2);
        TEST_CHECK(!d.ambiguous);
        TEST_CHECK_INT(d.nnames, 1);
        TEST_CHECK_STR(d.names[0], "amd.com/gpu");
    }
    struct pressure_demand d;
    TEST_CHECK_INT(
        pressure_parse_pending(body, strlen(body), "amd_com_gpu_xcp", &d, err, sizeof(err)), 0);
    TEST_CHECK(d.count == 1 && d.requested == 1 && !d.ambiguous);
    free(body);
}

/*
 * Two resources that read alike once sanitized: the sanitized label cannot say which one the
 * rule means, and a raw name meeting another raw name of the same sanitized form is not sure
 * either. Nothing is confirmed, and the message names both.
 */
TEST(pending_collision)
{
    const char *const both[][3] = {
        {"0/4 nodes are available: 4 Insufficient amd.com/gpu.", "amd.com/gpu", "1"},
        {"0/4 nodes are available: 4 Insufficient amd_com/gpu.", "amd_com/gpu", "1"},
    };
    char *body = pods(both, ARRAY_LEN(both)), err[256] = "", why[512];
    const char *spellings[] = {"amd_com_gpu", "amd.com/gpu", "amd_com/gpu"};
    for (size_t i = 0; i < ARRAY_LEN(spellings); i++) {
        struct pressure_demand d;
        TEST_CHECK_INT(
            pressure_parse_pending(body, strlen(body), spellings[i], &d, err, sizeof(err)), 0);
        TEST_CHECK(d.ambiguous);
        TEST_CHECK(d.count == 0 && d.requested == 0);
        pressure_ambiguity(&d, spellings[i], why, sizeof(why));
        TEST_CHECK_CONTAINS(why, "'amd.com/gpu', 'amd_com/gpu'");
        TEST_CHECK_CONTAINS(why, "which one the rule means is unknown");
    }
    free(body);

    /* Only the other raw name waits: a raw rule name is never stood in for by it. */
    const char *const other[][3] = {
        {"0/4 nodes are available: 4 Insufficient amd.com_gpu.", "amd.com_gpu", "1"},
    };
    body = pods(other, ARRAY_LEN(other));
    struct pressure_demand d;
    TEST_CHECK_INT(pressure_parse_pending(body, strlen(body), "amd.com/gpu", &d, err, sizeof(err)),
                   0);
    TEST_CHECK(d.ambiguous && d.count == 0);
    pressure_ambiguity(&d, "amd.com/gpu", why, sizeof(why));
    TEST_CHECK_STR(why, "'amd.com/gpu' is more than one resource once sanitized ('amd.com_gpu', "
                        "'amd.com/gpu'): which one the rule means is unknown");
    /* ... but the sanitized label stands for the one raw name the API shows. */
    TEST_CHECK_INT(pressure_parse_pending(body, strlen(body), "amd_com_gpu", &d, err, sizeof(err)),
                   0);
    TEST_CHECK(!d.ambiguous && d.count == 1 && d.requested == 1);
    free(body);

    /* A pod that names one spelling and requests the other: one pod, two resources. */
    const char *const mixed[][3] = {
        {"0/4 nodes are available: 4 Insufficient amd.com/gpu.", "amd_com/gpu", "1"},
    };
    body = pods(mixed, ARRAY_LEN(mixed));
    TEST_CHECK_INT(pressure_parse_pending(body, strlen(body), "amd_com_gpu", &d, err, sizeof(err)),
                   0);
    TEST_CHECK(d.ambiguous && d.count == 0 && d.requested == 0);
    free(body);
}

/* pending.json: the canned pods of the e2e tests, raw and sanitized rule names alike. */
TEST(pending_canned)
{
    size_t len;
    char *body = canned("pending.json", &len);
    const char *b = body;
    struct pressure_demand d;
    char err[256] = "";
    const char *gpu[] = {"amd.com/gpu", "amd_com_gpu"};
    for (size_t i = 0; i < ARRAY_LEN(gpu); i++) {
        TEST_CHECK_INT(pressure_parse_pending(b, len, gpu[i], &d, err, sizeof(err)), 0);
        TEST_CHECK_INT(d.count, 2); /* wait-gpu-1 (2 GPUs) and wait-gpu-2 (1 + 1, init 1) */
        TEST_CHECK_INT(d.requested, 4);
    }
    TEST_CHECK_INT(pressure_parse_pending(b, len, "amd.com/gpu_xcp", &d, err, sizeof(err)), 0);
    TEST_CHECK_INT(d.count, 1);
    TEST_CHECK_INT(d.requested, 0); /* it requests amd.com/gpu, not the partition resource */
    free(body);

    /* An init container asking for more than all containers sets the effective request. */
    const char init[] =
        "{\"items\":[{\"metadata\":{\"name\":\"a\"},\"spec\":{\"containers\":[{\"resources\":"
        "{\"limits\":{\"r/x\":\"1\"}}}],\"initContainers\":[{\"resources\":{\"requests\":"
        "{\"r/x\":\"3\"}}}]},\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":"
        "\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":\"1 "
        "Insufficient r/x.\"}]}}]}";
    TEST_CHECK_INT(pressure_parse_pending(init, strlen(init), "r/x", &d, err, sizeof(err)), 0);
    TEST_CHECK(d.count == 1 && d.requested == 3);
    TEST_CHECK_INT(pressure_parse_pending(init, strlen(init), "r_x", &d, err, sizeof(err)), 0);
    TEST_CHECK(d.count == 1 && d.requested == 3);
    const char frac[] =
        "{\"items\":[{\"metadata\":{\"name\":\"a\"},\"spec\":{\"containers\":[{\"resources\":"
        "{\"requests\":{\"r/x\":\"500m\"}}}]},\"status\":{\"phase\":\"Pending\",\"conditions\":"
        "[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\","
        "\"message\":\"Insufficient r/x\"}]}}]}";
    TEST_CHECK_INT(pressure_parse_pending(frac, strlen(frac), "r/x", &d, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "not a whole number");
    TEST_CHECK(d.count == 0 && d.requested == 0 && d.nnames == 0);
    TEST_CHECK_INT(pressure_parse_pending("{}", 2, "r/x", &d, err, sizeof(err)), -1);
    TEST_CHECK_STR(err, "'items' is missing");
}

/* Issue 24 §1, Kueue: "insufficient unused quota for amd.com/gpu in flavor mi300x". */
TEST(kueue_both_spellings_and_collision)
{
    const char *m[] = {
        "couldn't assign flavors to pod set main: insufficient unused quota for amd.com/gpu in "
        "flavor mi300x, 2 more needed",
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
        "default, 1 more needed",
    };
    char *body = workloads(m, ARRAY_LEN(m)), err[256] = "", why[512];
    struct pressure_demand d;
    const char *spellings[] = {"amd.com/gpu", "amd_com_gpu"};
    for (size_t i = 0; i < ARRAY_LEN(spellings); i++) {
        TEST_CHECK_INT(
            pressure_parse_kueue(body, strlen(body), spellings[i], NULL, 0, &d, err, sizeof(err)),
            0);
        TEST_CHECK(d.count == 1 && !d.ambiguous);
        TEST_CHECK_STR(d.names[0], "amd.com/gpu");
    }
    TEST_CHECK_INT(
        pressure_parse_kueue(body, strlen(body), "amd_com", NULL, 0, &d, err, sizeof(err)), 0);
    TEST_CHECK_INT(d.count, 0); /* a prefix of the name is not the name */
    free(body);

    const char *c[] = {
        "insufficient unused quota for amd.com/gpu in flavor mi300x, 1 more needed",
        "insufficient unused quota for amd.com_gpu in flavor other, 1 more needed",
    };
    body = workloads(c, ARRAY_LEN(c));
    TEST_CHECK_INT(
        pressure_parse_kueue(body, strlen(body), "amd_com_gpu", NULL, 0, &d, err, sizeof(err)), 0);
    TEST_CHECK(d.ambiguous && d.count == 0);
    pressure_ambiguity(&d, "amd_com_gpu", why, sizeof(why));
    TEST_CHECK_STR(why, "'amd_com_gpu' is more than one resource once sanitized ('amd.com/gpu', "
                        "'amd.com_gpu'): which one the rule means is unknown");
    TEST_CHECK_INT(
        pressure_parse_kueue(body, strlen(body), "amd.com/gpu", NULL, 0, &d, err, sizeof(err)), 0);
    TEST_CHECK(d.ambiguous && d.count == 0);
    free(body);
}

/*
 * Kueue Workloads in tests/e2e/data/kube/kueue-pending.json (namespace queue): waiting for
 * amd.com/gpu are job-wait-gpu, job-own and job-two-sets (the second pod set's clause); the
 * others are reserved, finished, deactivated, deleting, too big for the queue ("insufficient
 * quota ... > maximum capacity"), or short of cpu or amd.com/gpu_xcp.
 */
TEST(kueue_canned)
{
    size_t len;
    char *body = canned("kueue-pending.json", &len);
    const char *b = body;
    struct pressure_demand d;
    char err[256] = "";
    TEST_CHECK_INT(pressure_parse_kueue(b, len, "amd.com/gpu", NULL, 0, &d, err, sizeof(err)), 0);
    TEST_CHECK_INT(d.count, 3);
    TEST_CHECK_INT(pressure_parse_kueue(b, len, "amd_com_gpu", NULL, 0, &d, err, sizeof(err)), 0);
    TEST_CHECK_INT(d.count, 3);
    /* The candidate's own Workload, found by its owner's uid, its job-uid label or its uid. */
    const char *own_job[] = {UID("000512")}, *own_wl[] = {UID("000511")};
    TEST_CHECK_INT(pressure_parse_kueue(b, len, "amd.com/gpu", own_job, 1, &d, err, sizeof(err)),
                   0);
    TEST_CHECK_INT(d.count, 2);
    TEST_CHECK_INT(pressure_parse_kueue(b, len, "amd.com/gpu", own_wl, 1, &d, err, sizeof(err)), 0);
    TEST_CHECK_INT(d.count, 2);
    TEST_CHECK_INT(pressure_parse_kueue(b, len, "amd.com/gpu_xcp", NULL, 0, &d, err, sizeof(err)),
                   0);
    TEST_CHECK_INT(d.count, 1);
    TEST_CHECK_INT(pressure_parse_kueue(b, len, "amd.com", NULL, 0, &d, err, sizeof(err)), 0);
    TEST_CHECK_INT(d.count, 0);
    free(body);

    /* The label alone (no owner reference) also marks the candidate's own Workload. */
    const char lab[] =
        "{\"items\":[{\"metadata\":{\"name\":\"w\",\"uid\":\"w1\",\"labels\":{"
        "\"kueue.x-k8s.io/job-uid\":\"j1\"}},\"spec\":{\"active\":true},\"status\":{"
        "\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"False\",\"message\":"
        "\"insufficient unused quota for r/x in flavor f, 1 more needed\"}]}}]}";
    const char *j1[] = {"j1"};
    TEST_CHECK_INT(pressure_parse_kueue(lab, strlen(lab), "r/x", NULL, 0, &d, err, sizeof(err)), 0);
    TEST_CHECK_INT(d.count, 1);
    TEST_CHECK_INT(pressure_parse_kueue(lab, strlen(lab), "r/x", j1, 1, &d, err, sizeof(err)), 0);
    TEST_CHECK_INT(d.count, 0);
    /* No QuotaReserved condition yet (not looked at by the scheduler): nothing proven. */
    const char fresh[] = "{\"items\":[{\"metadata\":{\"name\":\"w\"},\"status\":{}}]}";
    TEST_CHECK_INT(pressure_parse_kueue(fresh, strlen(fresh), "r/x", NULL, 0, &d, err, sizeof(err)),
                   0);
    TEST_CHECK_INT(d.count, 0);
    TEST_CHECK_INT(pressure_parse_kueue("{}", 2, "r/x", NULL, 0, &d, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "'items' is missing");
    TEST_CHECK_INT(
        pressure_parse_kueue("{\"items\":[1]}", 11, "r/x", NULL, 0, &d, err, sizeof(err)), -1);
    TEST_CHECK_INT(d.count, 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    fake_data_dir(data_dir, sizeof(data_dir), argv[0], "KUBE_TEST_DATA", "tests/e2e/data/kube");
    RUN(sanitize);
    RUN(scheduler_message);
    RUN(pending_both_spellings);
    RUN(pending_collision);
    RUN(pending_canned);
    RUN(kueue_both_spellings_and_collision);
    RUN(kueue_canned);
    return test_done();
}
