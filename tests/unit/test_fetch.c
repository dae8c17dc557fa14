/*
 * Tests of the per-cycle fetch: the activity expression (selector vs subquery form) and,
 * against tests/fakes/fake_prom, which queries a cycle sends for a set of rules built by hand
 * (request count depends on rules, not workloads; identical queries are sent once; pending
 * only for DuringGPUPressure rules; a failing query affects only its rule).
 */
#include <signal.h>

#include <curl/curl.h>

#include "fetch.c"
#include "fake.h"
#include "test.h"
#include "tmptree.h"

#define NOW 1700000000.0

static char fake_path[4096];
static char tmpdir[256];

static char *write_tmp(const char *name, const char *content)
{
    TEST_CHECK_INT(tmptree_put(tmpdir, name, content), 0);
    return xasprintf("%s/%s", tmpdir, name);
}

/* A range answer with `n` workloads, each at 0 for the whole range. */
static char *range_answer(int n)
{
    struct sbuf b = {0};
    sbuf_puts(&b, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[");
    for (int i = 0; i < n; i++)
        sbuf_printf(&b,
                    "%s{\"metric\":{\"namespace\":\"ml\",\"pod\":\"w%03d\"},\"values\":"
                    "[[1699998800,\"0\"],[1699998860,\"0\"]]}",
                    i ? "," : "", i);
    sbuf_puts(&b, "]}}");
    return sbuf_take(&b);
}

static const char instant_answer[] =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":"
    "{\"namespace\":\"ml\",\"pod\":\"w000\",\"resource\":\"amd_com_gpu\"},\"value\":"
    "[1700000000,\"1\"]}]}}";

static struct promq *client(int port)
{
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    struct promq_cfg cfg = {.url = url, .timeout = 5};
    return promq_new(&cfg);
}

static struct rule mkrule(char *name, enum rule_policy policy, double idle_timer)
{
    return (struct rule){
        .name = name,
        .enabled = true,
        .policy = policy,
        .threshold = 10,
        .idle_timer = idle_timer,
        .step = 60,
        .q_activity = "gpureclaim:workload_busy:ratio",
        .q_allocation = "gpureclaim:workload_devices:count",
        .q_pending = "sum by (resource) (kube_pod_container_resource_requests)",
    };
}

/* ---- tests ------------------------------------------------------------------------------- */

TEST(activity_expr)
{
    static const struct {
        const char *expr;
        double step;
        const char *want;
    } cases[] = {
        {"gpureclaim:workload_busy:ratio", 60,
         "max_over_time(gpureclaim:workload_busy:ratio[60s])"},
        {"gpu_busy{pod!=\"\", namespace=~\"ml|dev\"}", 60,
         "max_over_time(gpu_busy{pod!=\"\", namespace=~\"ml|dev\"}[60s])"},
        {"{__name__=\"gpu_busy\"}", 30, "max_over_time({__name__=\"gpu_busy\"}[30s])"},
        {" gpu_busy ", 60, "max_over_time( gpu_busy [60s])"},
        {"gpu_busy{a=\"}\",b='{(',c=`\\`}", 60,
         "max_over_time(gpu_busy{a=\"}\",b='{(',c=`\\`}[60s])"},
        {"gpu_busy{a=\"\\\"}\"}", 60, "max_over_time(gpu_busy{a=\"\\\"}\"}[60s])"},
        {"avg by (pod) (gpu_busy)", 60, "max_over_time((avg by (pod) (gpu_busy))[60s:15s])"},
        {"gpu_busy / 100", 60, "max_over_time((gpu_busy / 100)[60s:15s])"},
        {"gpu_busy offset 5m", 60, "max_over_time((gpu_busy offset 5m)[60s:15s])"},
        {"rate(x[5m])", 120, "max_over_time((rate(x[5m]))[120s:15s])"},
        {"gpu_busy{a=\"open", 60, "max_over_time((gpu_busy{a=\"open)[60s:15s])"},
        {"gpu_busy{} {}", 60, "max_over_time((gpu_busy{} {})[60s:15s])"},
        {"NaN", 60, "max_over_time((NaN)[60s:15s])"},
        {"Inf", 60, "max_over_time((Inf)[60s:15s])"},
        {"nano_seconds", 60, "max_over_time(nano_seconds[60s])"},
        {"sum(x)", 10, "max_over_time((sum(x))[10s:10s])"},
        {"sum(x)", 1.5, "max_over_time((sum(x))[1500ms:1500ms])"},
        {"x", 0, "max_over_time(x[60s])"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct rule r = mkrule("r", POLICY_ALWAYS, 600);
        r.q_activity = (char *)cases[i].expr;
        r.step = cases[i].step;
        char buf[512];
        TEST_CHECK_INT(fetch_activity_expr(&r, buf, sizeof(buf)), 0);
        /* The non-finite check runs sum_over_time over the very same range, in the same
           request: its steps take the place of max_over_time's. */
        char *want = xasprintf("(sum%s * 0 != 0) or %s", cases[i].want + 3, cases[i].want);
        TEST_CHECK_STR(buf, want);
        free(want);
    }
    struct rule r = mkrule("r", POLICY_ALWAYS, 600);
    char small[20];
    TEST_CHECK_INT(fetch_activity_expr(&r, small, sizeof(small)), -1);
}

/* The coverage query: only for selectors, R = min(step, 15 s, toleratedGap / 4). */
TEST(coverage_expr)
{
    static const struct {
        const char *expr;
        double step, gap;
        int rc;
        const char *want;
    } cases[] = {
        {"x", 60, 120, 0, "count_over_time(present_over_time(x[105s])[60s:15s])"},
        {"x", 60, 0, 0, "count_over_time(present_over_time(x[105s])[60s:15s])"},
        {"x{pod!=\"\"}", 15, 30, 0,
         "count_over_time(present_over_time(x{pod!=\"\"}[22500ms])[15s:7500ms])"},
        {"x", 600, 3600, 0, "count_over_time(present_over_time(x[3585s])[600s:15s])"},
        {"x", 1, 1, 0, "count_over_time(present_over_time(x[750ms])[1s:250ms])"},
        {"sum(x)", 60, 120, 1, ""},
        {"x / 100", 60, 120, 1, ""},
        /* Prometheus 3's quoted names (issue 34): a selector, its text kept as written. */
        {"{\"gpu.busy\", \"k8s.pod.name\"=~\"a}\"}", 60, 120, 0,
         "count_over_time(present_over_time({\"gpu.busy\", \"k8s.pod.name\"=~\"a}\"}[105s])"
         "[60s:15s])"},
        {"sum by (\"k8s.pod.name\") ({\"gpu.busy\"})", 60, 120, 1, ""},
        {"\"gpu.busy\"", 60, 120, 1, ""},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct rule r = mkrule("r", POLICY_ALWAYS, 600);
        r.q_activity = (char *)cases[i].expr;
        r.step = cases[i].step;
        r.tolerated_gap = cases[i].gap;
        char buf[512] = "";
        TEST_CHECK_INT(fetch_coverage_expr(&r, buf, sizeof(buf)), cases[i].rc);
        if (cases[i].rc == 0)
            TEST_CHECK_STR(buf, cases[i].want);
    }
    struct rule r = mkrule("r", POLICY_ALWAYS, 600);
    char small[40];
    TEST_CHECK_INT(fetch_coverage_expr(&r, small, sizeof(small)), -1);
    char buf[128];
    r.tolerated_gap = 30;
    r.step = 15;
    TEST_CHECK_INT(fetch_subpoints_expr(&r, buf, sizeof(buf)), 0);
    TEST_CHECK_STR(buf, "count_over_time(vector(1)[15s:7500ms])");
}

/* The covered share: the count divided by the sub-points of the same step; none is 0. */
TEST(coverage_ratio)
{
    struct matrix cov = {0}, sub = {0};
    struct series *s = matrix_push(&cov);
    s->n = 4;
    s->p = xcalloc(4, sizeof(*s->p));
    const double t0 = NOW - 180;
    for (int i = 0; i < 4; i++)
        s->p[i] = (struct point){t0 + 60 * i, i == 1 ? 2 : 4};
    struct series *d = matrix_push(&sub);
    d->n = 3;
    d->p = xcalloc(3, sizeof(*d->p));
    for (int i = 0; i < 3; i++) /* no count for the last step */
        d->p[i] = (struct point){t0 + 60 * i, i == 2 ? 5 : 4};
    fetch_coverage_ratio(&cov, &sub);
    TEST_CHECK_DBL(s->p[0].v, 1, 0);
    TEST_CHECK_DBL(s->p[1].v, 0.5, 0);
    TEST_CHECK_DBL(s->p[2].v, 0.8, 1e-12);
    TEST_CHECK_DBL(s->p[3].v, 0, 0);
    matrix_free(&sub);
    fetch_coverage_ratio(&cov, &sub); /* no count at all: nothing is covered */
    TEST_CHECK_DBL(s->p[0].v, 0, 0);
    matrix_free(&cov);
}

TEST(fetch_queries_and_dedupe)
{
    char *range = range_answer(3), *many = range_answer(200);
    char *range_file = write_tmp("range.json", range);
    char *many_file = write_tmp("many.json", many);
    char *instant_file = write_tmp("instant.json", instant_answer);
    struct rule rules[5] = {
        mkrule("always", POLICY_ALWAYS, 600),
        mkrule("pressure-same-sources", POLICY_DURING_PRESSURE, 600),
        mkrule("pressure-longer-timer", POLICY_DURING_PRESSURE, 1800),
        mkrule("disabled", POLICY_DURING_PRESSURE, 600),
        mkrule("with-priority", POLICY_ALWAYS, 600),
    };
    rules[3].enabled = false;
    rules[4].q_priority = "max by (namespace, pod) (kube_pod_priority)";
    struct ruleset rs = {.rules = rules, .n = ARRAY_LEN(rules)};

    /*
     * always: activity + non-finite + coverage + sub-points + allocation (5);
     * pressure-same-sources: pending (1, the rest is shared); pressure-longer-timer: its own
     * four ranges (4); disabled: nothing; with-priority: priority (1). The same count
     * however many workloads answer.
     */
    const char *files[] = {range_file, many_file};
    const size_t workloads[] = {3, 200};
    for (size_t k = 0; k < 2; k++) {
        struct fake f;
        if (fake_start(&f, fake_path, tmpdir, "0", "ok", files[k], instant_file, NULL) < 0) {
            TEST_CHECK(!"fake_prom started");
            continue;
        }
        struct promq *q = client(f.port);
        struct rule_data d[5];
        TEST_CHECK_INT(fetch_rules(q, &rs, NOW, d), 0);
        TEST_CHECK_INT(promq_requests(q), 11);
        for (size_t i = 0; i < 5; i++) {
            TEST_CHECK(d[i].rule == &rules[i]);
            TEST_CHECK_INT(d[i].error, 0);
            TEST_CHECK_INT(d[i].pending_error, 0);
            TEST_CHECK_STR(d[i].errmsg, "");
            TEST_CHECK_DBL(d[i].end, NOW, 0);
        }
        TEST_CHECK_DBL(d[0].start, NOW - 1200, 0);
        TEST_CHECK_DBL(d[2].start, NOW - 3600, 0);
        TEST_CHECK_INT(d[0].activity.n, workloads[k]);
        TEST_CHECK_INT(d[1].activity.n, workloads[k]);
        TEST_CHECK_INT(d[2].activity.n, workloads[k]);
        TEST_CHECK_INT(d[0].allocation.n, 1);
        TEST_CHECK_INT(d[2].allocation.n, 1);
        /* No raw path on this server: PromQL for every rule, the disabled one read nothing. */
        TEST_CHECK_STR(d[0].read_path, "promql");
        TEST_CHECK_STR(d[2].read_path, "promql");
        TEST_CHECK(d[3].read_path == NULL);
        /* Selector rules get the raw coverage too. */
        TEST_CHECK(d[0].raw_coverage && d[2].raw_coverage);
        TEST_CHECK_INT(d[0].coverage.n, workloads[k]);
        /* Pending only for pressure rules, priority only where set. */
        TEST_CHECK_INT(d[0].pending.n, 0);
        TEST_CHECK_INT(d[1].pending.n, 1);
        TEST_CHECK_INT(d[2].pending.n, 1);
        TEST_CHECK_INT(d[4].pending.n, 0);
        TEST_CHECK_INT(d[4].priority.n, 1);
        TEST_CHECK_INT(d[0].priority.n, 0);
        /* A disabled rule gets nothing. */
        TEST_CHECK_INT(d[3].activity.n + d[3].allocation.n + d[3].pending.n + d[3].priority.n, 0);
        /* Each rule owns its copy. */
        if (d[0].activity.n && d[1].activity.n)
            TEST_CHECK(d[0].activity.s != d[1].activity.s &&
                       d[0].activity.s[0].p != d[1].activity.s[0].p);
        if (d[0].activity.n)
            TEST_CHECK_STR(labels_get(&d[0].activity.s[0].labels, "pod"), "w000");
        fetch_free(d, 5);
        promq_free(q);
        fake_stop(&f);

        TEST_CHECK_INT(fake_log_count(f.log, "request "), 11);
        char *log = test_read_file(f.log, NULL);
        /* The server has neither /flags (not VictoriaMetrics) nor remote read: PromQL. */
        TEST_CHECK_CONTAINS(log, "request GET /flags");
        TEST_CHECK_CONTAINS(log, "request POST /api/v1/read ");
        TEST_CHECK_CONTAINS(log, "request POST /api/v1/query_range "
                                 "query=%28sum_over_time%28gpureclaim%3Aworkload_busy%3Aratio%5B"
                                 "60s%5D%29%20%2A%200%20%21%3D%200%29%20or%20max_over_time%28"
                                 "gpureclaim%3Aworkload_busy%3Aratio%5B60s%5D%29&start="
                                 "1699998800.000&end=1700000000.000&step=60.000");
        TEST_CHECK_CONTAINS(log, "request POST /api/v1/query_range query=count_over_time%28present_"
                                 "over_time%28gpureclaim%3Aworkload_busy%3Aratio%5B105s%5D%29%5B"
                                 "60s%3A15s%5D%29&start=1699998800.000&end=1700000000.000&step="
                                 "60.000");
        TEST_CHECK_CONTAINS(log, "request POST /api/v1/query_range query=count_over_time%28vector"
                                 "%281%29%5B60s%3A15s%5D%29&start=1699998800.000&end=1700000000."
                                 "000&step=60.000");
        TEST_CHECK_CONTAINS(log, "&start=1699996400.000&end=1700000000.000&step=60.000");
        TEST_CHECK_CONTAINS(log, "request POST /api/v1/query query=gpureclaim%3Aworkload_devices"
                                 "%3Acount&time=1700000000.000");
        TEST_CHECK_CONTAINS(log, "query=sum%20by%20%28resource%29%20%28kube_pod_container_"
                                 "resource_requests%29&time=1700000000.000");
        TEST_CHECK_CONTAINS(log, "query=max%20by%20%28namespace%2C%20pod%29%20%28kube_pod_"
                                 "priority%29&time=");
        free(log);
    }
    free(range);
    free(many);
    free(range_file);
    free(many_file);
    free(instant_file);
}

/* A failing query marks only the rule that uses it; the pending query has its own flag. */
TEST(fetch_error_isolation)
{
    char *range = range_answer(2);
    char *range_file = write_tmp("range2.json", range);
    char *instant_file = write_tmp("instant2.json", instant_answer);
    struct rule rules[5] = {
        mkrule("fine", POLICY_DURING_PRESSURE, 600),
        mkrule("bad-activity", POLICY_ALWAYS, 600),
        mkrule("bad-pending", POLICY_DURING_PRESSURE, 600),
        mkrule("bad-allocation", POLICY_ALWAYS, 600),
        mkrule("bad-priority", POLICY_ALWAYS, 600),
    };
    rules[1].q_activity = "broken_activity";
    rules[2].q_pending = "broken_pending";
    rules[3].q_allocation = "broken_allocation";
    rules[4].q_priority = "broken_priority";
    struct ruleset rs = {.rules = rules, .n = ARRAY_LEN(rules)};
    struct fake f;
    if (fake_start(&f, fake_path, tmpdir, "-E", "broken", "0", "ok", range_file, instant_file,
                   NULL) < 0) {
        TEST_CHECK(!"fake_prom started");
        goto out;
    }
    struct promq *q = client(f.port);
    struct rule_data d[5];
    TEST_CHECK_INT(fetch_rules(q, &rs, NOW, d), -1);

    TEST_CHECK_INT(d[0].error, 0);
    TEST_CHECK_INT(d[0].pending_error, 0);
    TEST_CHECK_STR(d[0].errmsg, "");
    TEST_CHECK_INT(d[0].activity.n, 2);
    TEST_CHECK_INT(d[0].pending.n, 1);

    TEST_CHECK_INT(d[1].error, 1);
    TEST_CHECK_STR(d[1].errmsg, "activity query: prometheus error (bad_data): invalid parameter "
                                "\"query\": injected failure for 'broken'");
    TEST_CHECK_INT(d[1].activity.n, 0);
    TEST_CHECK_INT(d[1].allocation.n, 1); /* the allocation query itself succeeded */

    TEST_CHECK_INT(d[2].error, 0);
    TEST_CHECK_INT(d[2].pending_error, 1);
    TEST_CHECK_CONTAINS(d[2].errmsg, "pending query: prometheus error (bad_data)");
    TEST_CHECK_INT(d[2].activity.n, 2);

    TEST_CHECK_INT(d[3].error, 1);
    TEST_CHECK_CONTAINS(d[3].errmsg, "allocation query: prometheus error (bad_data)");
    TEST_CHECK_INT(d[3].activity.n, 2);

    TEST_CHECK_INT(d[4].error, 1);
    TEST_CHECK_CONTAINS(d[4].errmsg, "priority query: ");
    fetch_free(d, 5);
    /* /flags and /api/v1/read (asked once: neither is offered); fine: 5; bad-activity: 1
     * (nothing more after a failed activity; allocation shared); bad-pending: 1;
     * bad-allocation: 1; bad-priority: 1. */
    TEST_CHECK_INT(promq_requests(q), 11);
    TEST_CHECK_INT(promq_failures(q), 4);
    promq_free(q);
    fake_stop(&f);
out:
    free(range);
    free(range_file);
    free(instant_file);
}

/* A failed coverage query is a failed rule: its raw sample times are unknown. */
TEST(fetch_coverage_error)
{
    char *range = range_answer(2);
    char *range_file = write_tmp("range3.json", range);
    char *instant_file = write_tmp("instant3.json", instant_answer);
    struct rule rules[2] = {mkrule("selector", POLICY_ALWAYS, 600),
                            mkrule("expression", POLICY_ALWAYS, 600)};
    rules[1].q_activity = "avg by (namespace, pod) (gpu_busy)";
    struct ruleset rs = {.rules = rules, .n = 2};
    struct fake f;
    if (fake_start(&f, fake_path, tmpdir, "-E", "present_over_time", "0", "ok", range_file,
                   instant_file, NULL) < 0) {
        TEST_CHECK(!"fake_prom started");
        goto out;
    }
    struct promq *q = client(f.port);
    struct rule_data d[2];
    TEST_CHECK_INT(fetch_rules(q, &rs, NOW, d), -1);
    TEST_CHECK_INT(d[0].error, 1);
    TEST_CHECK_CONTAINS(d[0].errmsg, "coverage query: prometheus error (bad_data)");
    TEST_CHECK(!d[0].raw_coverage);
    /* An expression has no coverage query, and this server no raw read to prove its
       selectors' samples with (exprcov.h): it fails, so its workloads keep. */
    TEST_CHECK_INT(d[1].error, 1);
    TEST_CHECK_CONTAINS(d[1].errmsg, "activity selector 'gpu_busy': the server offers no raw read");
    TEST_CHECK(d[1].inner == NULL);
    TEST_CHECK(!d[1].raw_coverage);
    /* The expression's activity asks for a lookback of the tolerated gap (2 steps here) from
       servers that honour one; the selector's queries do not. */
    char *log = test_read_file(f.log, NULL);
    TEST_CHECK_CONTAINS(log, "query=%28sum_over_time%28%28avg%20by%20%28namespace%2C%20pod%29%20"
                             "%28gpu_busy%29%29");
    TEST_CHECK_CONTAINS(log, "&lookback_delta=120.000&max_lookback=120.000&nocache=1");
    /* Thanos Query fails a query a store did not answer instead of leaving its series out. */
    TEST_CHECK_CONTAINS(log, "&nocache=1&partial_response=false");
    /* The selector's activity and (failing) coverage, the expression's activity. */
    TEST_CHECK_INT(fake_log_count(f.log, "request POST /api/v1/query_range "), 3);
    const char *lb = log ? strstr(log, "lookback_delta") : NULL;
    TEST_CHECK(lb && !strstr(lb + 1, "lookback_delta"));
    free(log);
    TEST_CHECK_INT(d[1].coverage.n, 0);
    TEST_CHECK_INT(d[1].activity.n, 2);
    fetch_free(d, 2);
    promq_free(q);
    fake_stop(&f);
out:
    free(range);
    free(range_file);
    free(instant_file);
}

/* With Prometheus down every enabled rule carries the error and nothing is left allocated. */
TEST(fetch_server_down)
{
    struct fake f;
    if (fake_start(&f, fake_path, tmpdir, "0", "garbage", NULL) < 0) {
        TEST_CHECK(!"fake_prom started");
        return;
    }
    int port = f.port;
    fake_stop(&f);
    struct rule rules[3] = {mkrule("a", POLICY_DURING_PRESSURE, 600),
                            mkrule("b", POLICY_ALWAYS, 60), mkrule("c", POLICY_ALWAYS, 60)};
    rules[1].enabled = false;
    rules[2].q_activity = NULL;
    struct ruleset rs = {.rules = rules, .n = 3};
    struct promq *q = client(port);
    struct rule_data d[3];
    TEST_CHECK_INT(fetch_rules(q, &rs, NOW, d), -1);
    TEST_CHECK_INT(d[0].error, 1);
    TEST_CHECK_INT(d[0].pending_error, 1);
    TEST_CHECK_CONTAINS(d[0].errmsg, "activity query: cannot connect to 'http://127.0.0.1:");
    TEST_CHECK_INT(d[1].error, 0);
    TEST_CHECK_INT(d[2].error, 1);
    TEST_CHECK_STR(d[2].errmsg, "rule has no activity query");
    TEST_CHECK_INT(promq_requests(q), 3);
    fetch_free(d, 3);
    promq_free(q);
}

/* A matrix of `n` series, pod=p<i>, with i + 1 points each. */
static struct matrix mkmatrix(size_t n)
{
    struct matrix m = {0};
    for (size_t i = 0; i < n; i++) {
        struct series *s = matrix_push(&m);
        char pod[16];
        snprintf(pod, sizeof(pod), "p%zu", i);
        labels_set(&s->labels, "pod", pod);
        s->n = i + 1;
        s->p = xmalloc(s->n * sizeof(*s->p));
        for (size_t j = 0; j < s->n; j++)
            s->p[j] = (struct point){.t = NOW + (double)j, .v = (double)(i * 10 + j)};
    }
    return m;
}

static bool same_content(const struct matrix *a, const struct matrix *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!labels_equal(&a->s[i].labels, &b->s[i].labels) || a->s[i].n != b->s[i].n ||
            memcmp(a->s[i].p, b->s[i].p, a->s[i].n * sizeof(struct point)) != 0)
            return false;
    return true;
}

/*
 * A result used by one rule is handed over, not copied; one shared by several is copied
 * for all but the last use, which takes the original. Each rule still owns what it gets.
 */
TEST(deliver_moves_last_use)
{
    struct fetch_cache c = {0};
    c.n = 3;
    c.v = xcalloc(c.n, sizeof(*c.v));
    for (size_t i = 0; i < c.n; i++) {
        c.v[i].expr = xasprintf("q%zu", i);
        c.v[i].m = mkmatrix(i + 2);
    }
    struct matrix want0 = mkmatrix(2), want1 = mkmatrix(3);
    const struct series *orig0 = c.v[0].m.s, *orig1 = c.v[1].m.s;
    struct matrix a, b, d, e;
    const struct fetch_use uses[] = {{0, &a}, {1, &d}, {0, &b}, {0, &e}};
    c.nuses = ARRAY_LEN(uses);
    c.uses = xmalloc(sizeof(uses));
    memcpy(c.uses, uses, sizeof(uses));
    fetch_deliver(&c);

    TEST_CHECK(e.s == orig0); /* last use of q0 */
    TEST_CHECK(d.s == orig1); /* only use of q1 */
    TEST_CHECK(a.s != orig0 && b.s != orig0 && a.s != b.s);
    TEST_CHECK(a.n && b.n && a.s[0].p != e.s[0].p && b.s[0].p != e.s[0].p);
    TEST_CHECK(a.n && a.s[0].labels.v != e.s[0].labels.v);
    TEST_CHECK(same_content(&a, &want0) && same_content(&b, &want0) && same_content(&e, &want0));
    TEST_CHECK(same_content(&d, &want1));
    /* Moved-out entries are empty; the unused q2 stays for fetch_cache_free. */
    TEST_CHECK(c.v[0].m.n == 0 && c.v[0].m.s == NULL);
    TEST_CHECK(c.v[1].m.n == 0 && c.v[1].m.s == NULL);
    TEST_CHECK_INT(c.v[2].m.n, 4);
    fetch_cache_free(&c);
    struct matrix *all[] = {&a, &b, &d, &e, &want0, &want1};
    for (size_t i = 0; i < ARRAY_LEN(all); i++)
        matrix_free(all[i]);

    /* An empty result copies to an empty matrix. */
    struct matrix empty = {0}, copy;
    fetch_matrix_copy(&copy, &empty);
    TEST_CHECK(copy.n == 0 && copy.s == NULL);
}

/*
 * Remote read where the server offers it (a real Prometheus 2.42 capture served by the fake):
 * the rule reads raw samples; a stream cut short or with a damaged byte fails the rule's
 * query with a message, never a shorter series. A rule alone on its selector streams the
 * answer into its grids series by series: a stream cut inside its last frame, after every
 * other series went into the grids, fails the rule with no activity at all; and the streamed
 * grids are those of two rules sharing the selector, which read the answer whole.
 */
/* The end of the capture's samples (scrape.expected). */
#define RR_NOW 1795668540.0

TEST(fetch_remote_read_faults)
{
    size_t len = 0;
    char *cap = test_read_file("tests/fixtures/remoteread/scrape.bin", &len);
    TEST_CHECK(cap && len > 64);
    if (!cap || len <= 64)
        return;
    char *range = range_answer(1);
    char *range_file = write_tmp("rr-range.json", range);
    char *instant_file = write_tmp("rr-instant.json", instant_answer);
    struct {
        const char *name;
        size_t len;
        size_t flip; /* 0: none */
        bool fails;
    } cases[] = {
        {"whole", len, 0, false},
        {"cut", len / 2, 0, true},
        {"damaged", len, len / 3, true},
        {"last-frame-cut", len - 3, 0, true},
    };
    for (size_t k = 0; k < ARRAY_LEN(cases); k++) {
        char *path = xasprintf("%s/rr-%s.bin", tmpdir, cases[k].name);
        FILE *f = fopen(path, "wb");
        TEST_CHECK(f != NULL);
        if (!f) {
            free(path);
            continue;
        }
        if (cases[k].flip)
            cap[cases[k].flip] ^= 0x5a;
        fwrite(cap, 1, cases[k].len, f);
        if (cases[k].flip)
            cap[cases[k].flip] ^= 0x5a;
        fclose(f);
        struct fake fk;
        if (fake_start(&fk, fake_path, tmpdir, "-R", path, "0", "ok", range_file, instant_file,
                       NULL) < 0) {
            TEST_CHECK(!"fake_prom started");
            free(path);
            continue;
        }
        struct rule rules[] = {mkrule("r", POLICY_ALWAYS, 600)};
        rules[0].q_activity = "{__name__=~\"rr_scrape_.*\"}";
        struct ruleset rs = {.rules = rules, .n = 1};
        struct promq *q = client(fk.port);
        struct rule_data d[1];
        int rc = fetch_rules(q, &rs, RR_NOW, d);
        TEST_CHECK_INT(rc, cases[k].fails ? -1 : 0);
        TEST_CHECK_INT(d[0].error, cases[k].fails ? 1 : 0);
        TEST_CHECK_STR(d[0].read_path, "remote_read");
        if (cases[k].fails) {
            TEST_CHECK_CONTAINS(d[0].errmsg, "activity query (remote_read): remote read: ");
            TEST_CHECK_INT(d[0].activity.n, 0);
            TEST_CHECK_INT(d[0].coverage.n, 0);
        } else {
            TEST_CHECK(d[0].raw_coverage && d[0].coverage_tail);
            TEST_CHECK_STR(d[0].errmsg, "");
            TEST_CHECK(d[0].activity.n > 1);
            /* Two rules on one selector: one read, kept whole, the same grids. */
            struct rule two[] = {mkrule("r", POLICY_ALWAYS, 600), mkrule("s", POLICY_ALWAYS, 600)};
            two[0].q_activity = two[1].q_activity = rules[0].q_activity;
            struct ruleset rs2 = {.rules = two, .n = 2};
            struct rule_data d2[2];
            TEST_CHECK_INT(fetch_rules(q, &rs2, RR_NOW, d2), 0);
            for (size_t i = 0; i < 2; i++) {
                TEST_CHECK(same_content(&d2[i].activity, &d[0].activity));
                TEST_CHECK(same_content(&d2[i].coverage, &d[0].coverage));
            }
            fetch_free(d2, 2);
        }
        fetch_free(d, 1);
        promq_free(q);
        fake_stop(&fk);
        TEST_CHECK_INT(fake_log_count(fk.log, "request POST /api/v1/read "),
                       cases[k].fails ? 1 : 2);
        TEST_CHECK_INT(fake_log_count(fk.log, "request POST /api/v1/query_range "), 0);
        free(path);
    }
    free(cap);
    free(range);
    free(range_file);
    free(instant_file);
}

int main(int argc, char **argv)
{
    fake_bin_path(fake_path, sizeof(fake_path), argv[0], "fake_prom");
    if (tmptree_make(tmpdir, sizeof(tmpdir), "gpureclaim-test_fetch") < 0) {
        perror("mkdtemp");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    log_threshold = LOG_ERROR;

    RUN(activity_expr);
    RUN(coverage_expr);
    RUN(coverage_ratio);
    RUN(fetch_queries_and_dedupe);
    RUN(fetch_error_isolation);
    RUN(fetch_coverage_error);
    RUN(fetch_server_down);
    RUN(deliver_moves_last_use);
    RUN(fetch_remote_read_faults);

    tmptree_finish(tmpdir);
    curl_global_cleanup();
    return test_done();
}
