/*
 * Tests of exprcov.c: the raw-sample proof of an expression rule. Each case builds raw
 * series by hand (samples every 15 s, tolerated gap 120 s, idle timer 600 s, now = 10000)
 * and checks the verdict per workload: covered, a hole, a stop, a staleness marker, a late
 * start (also through a range's reach), node-level series that concern every workload, a
 * relabelled identity, a device missing from one selector or from the result, a gate that
 * may lack it, no raw series at all. Then decide() with and without the proof: the same idle
 * result reclaims without it and keeps with it.
 */
#include "exprcov.c"
#include "decide.h"
#include "test.h"

#define NOW 10000.0
#define WS  (NOW - 600.0)

static char *identity[] = {"namespace", "pod"};

static struct rule mkrule(const char *expr)
{
    return (struct rule){.name = "expr",
                         .enabled = true,
                         .policy = POLICY_ALWAYS,
                         .threshold = 10,
                         .idle_timer = 600,
                         .step = 60,
                         .tolerated_gap = 120,
                         .max_terminations = 10,
                         .resource_label = "resource",
                         .q_activity = (char *)expr,
                         .identity = identity,
                         .nidentity = 2};
}

/* A series with labels "a=x,b=y" and samples every 15 s in [from, to] but in (hole_a, hole_b). */
static void add_series(struct matrix *m, const char *labels, double from, double to, double hole_a,
                       double hole_b)
{
    struct series *s = matrix_push(m);
    char *copy = xstrdup(labels), *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        *eq = '\0';
        labels_set(&s->labels, kv, eq + 1);
    }
    free(copy);
    size_t cap = (size_t)((to - from) / 15) + 2;
    s->p = xmalloc(cap * sizeof(*s->p));
    for (double t = from; t <= to; t += 15)
        if (!(t > hole_a && t < hole_b))
            s->p[s->n++] = (struct point){t, 0.01};
}

static struct labels wl(const char *pod)
{
    struct labels l = {0};
    labels_set(&l, "namespace", "ml");
    labels_set(&l, "pod", pod);
    return l;
}

/* Judge `pod` with everything added and an empty result (no parts to compare). */
static enum reason judge_pod(struct exprcov *ec, const char *pod, char *detail, size_t len)
{
    struct labels id = wl(pod);
    detail[0] = '\0';
    enum reason r = exprcov_judge(ec, &id, WS, detail, len);
    labels_free(&id);
    return r;
}

TEST(covered_gap_stale_young)
{
    struct rule r = mkrule("max by (namespace, pod) (x)");
    char err[256], d[256];
    struct exprcov *ec = exprcov_new(&r, decide_lookback(&r), err, sizeof(err));
    TEST_CHECK(ec != NULL);
    TEST_CHECK_DBL(exprcov_read_start(ec, 0, NOW), NOW - 1200 - 120, 0);
    struct matrix m = {0};
    add_series(&m, "__name__=x,namespace=ml,pod=idle", 8000, NOW, 0, 0);
    /* Samples at 9590 and 9725, 135 s apart: more than the 120 s tolerated. */
    add_series(&m, "__name__=x,namespace=ml,pod=hole", 8000, NOW, 9591, 9724);
    /* At 9590 and 9710: exactly 120 s, tolerated. */
    add_series(&m, "__name__=x,namespace=ml,pod=hole120", 8000, NOW, 9591, 9709);
    add_series(&m, "__name__=x,namespace=ml,pod=stale", 8000, NOW - 135, 0, 0);
    add_series(&m, "__name__=x,namespace=ml,pod=young", WS + 15, NOW, 0, 0);
    TEST_CHECK_INT(exprcov_add(ec, 0, &m, NOW, err, sizeof(err)), 0);
    TEST_CHECK_INT(m.n, 0);
    struct matrix out = {0};
    exprcov_index(ec, &out);
    TEST_CHECK_INT(judge_pod(ec, "idle", d, sizeof(d)), REASON_IDLE);
    TEST_CHECK_INT(judge_pod(ec, "hole120", d, sizeof(d)), REASON_IDLE);
    TEST_CHECK_INT(judge_pod(ec, "hole", d, sizeof(d)), REASON_GAP);
    TEST_CHECK_STR(d, "selector 'x' {}: no raw sample from 1970-01-01T02:39:50Z to "
                      "1970-01-01T02:42:05Z, more than the tolerated gap 2m");
    TEST_CHECK_INT(judge_pod(ec, "stale", d, sizeof(d)), REASON_STALE);
    TEST_CHECK_CONTAINS(d, "last raw sample at 1970-01-01T02:44:20Z, none within the tolerated "
                           "gap 2m before now");
    TEST_CHECK_INT(judge_pod(ec, "young", d, sizeof(d)), REASON_TOO_YOUNG);
    TEST_CHECK_CONTAINS(d, "first raw sample at 1970-01-01T02:36:55Z, after 1970-01-01T02:36:40Z");
    /* No raw series of its own and no node-level one: not proven. */
    TEST_CHECK_INT(judge_pod(ec, "other", d, sizeof(d)), REASON_NO_DATA);
    TEST_CHECK_CONTAINS(d, "no raw series of the selectors of 'activity' has its identity labels");
    exprcov_free(ec);
}

TEST(staleness_marker_ends_series)
{
    struct rule r = mkrule("max by (namespace, pod) (x)");
    char err[256], d[256];
    struct exprcov *ec = exprcov_new(&r, decide_lookback(&r), err, sizeof(err));
    struct matrix m = {0};
    add_series(&m, "__name__=x,namespace=ml,pod=a", 8000, NOW - 60, 0, 0);
    struct series *s = &m.s[0];
    uint64_t bits = RAW_STALE_NAN_BITS;
    double marker;
    memcpy(&marker, &bits, sizeof(marker));
    s->p = xrealloc(s->p, (s->n + 1) * sizeof(*s->p));
    s->p[s->n++] = (struct point){NOW - 30, marker};
    TEST_CHECK_INT(exprcov_add(ec, 0, &m, NOW, err, sizeof(err)), 0);
    struct matrix out = {0};
    exprcov_index(ec, &out);
    /* The last sample is 60 s old (within 120 s) but the marker ended the series. */
    TEST_CHECK_INT(judge_pod(ec, "a", d, sizeof(d)), REASON_STALE);
    exprcov_free(ec);
}

TEST(reach_of_a_range)
{
    /* x[10m]: its samples must cover from 10 minutes before the window start. */
    struct rule r = mkrule("max by (namespace, pod) (max_over_time(x[10m]))");
    char err[256], d[256];
    struct exprcov *ec = exprcov_new(&r, decide_lookback(&r), err, sizeof(err));
    TEST_CHECK_DBL(exprcov_read_start(ec, 0, NOW), NOW - 1200 - 600 - 120, 0);
    struct matrix m = {0};
    add_series(&m, "__name__=x,namespace=ml,pod=a", WS - 300, NOW, 0, 0);
    add_series(&m, "__name__=x,namespace=ml,pod=b", WS - 600, NOW, 0, 0);
    TEST_CHECK_INT(exprcov_add(ec, 0, &m, NOW, err, sizeof(err)), 0);
    struct matrix out = {0};
    exprcov_index(ec, &out);
    TEST_CHECK_INT(judge_pod(ec, "a", d, sizeof(d)), REASON_TOO_YOUNG);
    TEST_CHECK_INT(judge_pod(ec, "b", d, sizeof(d)), REASON_IDLE);
    exprcov_free(ec);
}

TEST(node_level_and_relabelled_series)
{
    /* A series without pod concerns every workload of its namespace (and any without one). */
    struct rule r = mkrule("max by (namespace, pod) (x * on (node) group_left y)");
    char err[256], d[256];
    struct exprcov *ec = exprcov_new(&r, decide_lookback(&r), err, sizeof(err));
    struct matrix m = {0}, n = {0};
    add_series(&m, "__name__=x,namespace=ml,pod=a,node=n1", 8000, NOW, 0, 0);
    add_series(&m, "__name__=x,namespace=ml,pod=b,node=n1", 8000, NOW, 0, 0);
    add_series(&n, "__name__=y,namespace=ml,node=n1", 8000, NOW, 9600, 9800);
    add_series(&n, "__name__=y,namespace=other,node=n1", 8000, NOW - 600, 0, 0);
    TEST_CHECK_INT(exprcov_add(ec, 0, &m, NOW, err, sizeof(err)), 0);
    TEST_CHECK_INT(exprcov_add(ec, 1, &n, NOW, err, sizeof(err)), 0);
    struct matrix out = {0};
    exprcov_index(ec, &out);
    TEST_CHECK_INT(judge_pod(ec, "a", d, sizeof(d)), REASON_GAP);
    /* Named by the labels beyond the workload's identity. */
    TEST_CHECK_CONTAINS(d, "selector 'y' {node=\"n1\"}: no raw sample from");
    TEST_CHECK_INT(judge_pod(ec, "b", d, sizeof(d)), REASON_GAP);
    exprcov_free(ec);

    /* label_replace writes pod: a series' own pod says nothing; every series concerns all. */
    struct rule r2 = mkrule(
        "max by (namespace, pod) (label_replace(x, \"pod\", \"$1\", \"exported_pod\", \"(.+)\"))");
    ec = exprcov_new(&r2, decide_lookback(&r2), err, sizeof(err));
    TEST_CHECK(ec && ec->unscoped);
    add_series(&m, "__name__=x,namespace=gpu-operator,pod=dcgm-1,exported_pod=a", 8000, NOW, 0, 0);
    add_series(&m, "__name__=x,namespace=gpu-operator,pod=dcgm-1,exported_pod=b", 8000, NOW - 300,
               0, 0);
    TEST_CHECK_INT(exprcov_add(ec, 0, &m, NOW, err, sizeof(err)), 0);
    exprcov_index(ec, &out);
    TEST_CHECK_INT(judge_pod(ec, "a", d, sizeof(d)), REASON_STALE);
    TEST_CHECK_CONTAINS(d, "exported_pod=\"b\"");
    exprcov_free(ec);

    /* Unscoped, the deciding series are found once: a hole beats a late start, any workload. */
    ec = exprcov_new(&r2, decide_lookback(&r2), err, sizeof(err));
    add_series(&m, "__name__=x,exported_pod=a", WS + 15, NOW, 0, 0);
    add_series(&m, "__name__=x,exported_pod=b", 8000, NOW, WS + 100, WS + 300);
    add_series(&m, "__name__=x,exported_pod=c", 8000, NOW, 0, 0);
    TEST_CHECK_INT(exprcov_add(ec, 0, &m, NOW, err, sizeof(err)), 0);
    exprcov_index(ec, &out);
    TEST_CHECK_INT(judge_pod(ec, "z", d, sizeof(d)), REASON_GAP);
    TEST_CHECK_CONTAINS(d, "exported_pod=\"b\"");
    exprcov_free(ec);
    ec = exprcov_new(&r2, decide_lookback(&r2), err, sizeof(err));
    add_series(&m, "__name__=x,exported_pod=a", WS + 15, NOW, 0, 0);
    add_series(&m, "__name__=x,exported_pod=c", 8000, NOW, 0, 0);
    TEST_CHECK_INT(exprcov_add(ec, 0, &m, NOW, err, sizeof(err)), 0);
    exprcov_index(ec, &out);
    TEST_CHECK_INT(judge_pod(ec, "z", d, sizeof(d)), REASON_TOO_YOUNG);
    /* A workload whose window starts later (an override) is proven. */
    struct labels id = wl("z");
    TEST_CHECK_INT(exprcov_judge(ec, &id, WS + 30, d, sizeof(d)), REASON_IDLE);
    labels_free(&id);
    exprcov_free(ec);
}

TEST(parts)
{
    struct rule r = mkrule("max by (namespace, pod, gpu_id) (x and on (namespace, pod, gpu_id) "
                           "held) unless on (namespace, pod, gpu_id) maintenance");
    char err[256], d[256];
    struct exprcov *ec = exprcov_new(&r, decide_lookback(&r), err, sizeof(err));
    TEST_CHECK(ec != NULL);
    struct matrix x = {0}, held = {0}, maint = {0}, out = {0};
    add_series(&x, "__name__=x,namespace=ml,pod=a,gpu_id=0", 8000, NOW, 0, 0);
    add_series(&x, "__name__=x,namespace=ml,pod=a,gpu_id=1", 8000, NOW, 0, 0);
    add_series(&x, "__name__=x,namespace=ml,pod=b,gpu_id=0", 8000, NOW, 0, 0);
    add_series(&x, "__name__=x,namespace=ml,pod=b,gpu_id=1", 8000, NOW, 0, 0);
    add_series(&x, "__name__=x,namespace=ml,pod=c,gpu_id=0", 8000, NOW, 0, 0);
    add_series(&held, "__name__=held,namespace=ml,pod=a,gpu_id=0", 8000, NOW, 0, 0);
    add_series(&held, "__name__=held,namespace=ml,pod=a,gpu_id=1", 8000, NOW, 0, 0);
    add_series(&held, "__name__=held,namespace=ml,pod=b,gpu_id=0", 8000, NOW, 0, 0);
    add_series(&held, "__name__=held,namespace=ml,pod=c,gpu_id=0", 8000, NOW, 0, 0);
    /* The gate: only for c's GPU 0 (which the result then lacks: that is what unless does). */
    add_series(&maint, "__name__=maintenance,namespace=ml,pod=c,gpu_id=0", 8000, NOW, 0, 0);
    /* The result: a with GPU 0 only, b with GPU 0, c with nothing of its own. */
    add_series(&out, "namespace=ml,pod=a,gpu_id=0", WS, NOW, 0, 0);
    add_series(&out, "namespace=ml,pod=b,gpu_id=0", WS, NOW, 0, 0);
    TEST_CHECK_INT(exprcov_add(ec, 0, &x, NOW, err, sizeof(err)), 0);
    TEST_CHECK_INT(exprcov_add(ec, 1, &held, NOW, err, sizeof(err)), 0);
    TEST_CHECK_INT(exprcov_add(ec, 2, &maint, NOW, err, sizeof(err)), 0);
    exprcov_index(ec, &out);
    /* a: both selectors have GPU 1, the result lacks it. */
    TEST_CHECK_INT(judge_pod(ec, "a", d, sizeof(d)), REASON_NO_DATA);
    TEST_CHECK_STR(d, "gpu_id=\"1\" of its selectors is missing from the result of 'activity'");
    /* b: held lacks GPU 1 that x has. */
    TEST_CHECK_INT(judge_pod(ec, "b", d, sizeof(d)), REASON_NO_DATA);
    TEST_CHECK_STR(d,
                   "selector 'held' has no series with gpu_id=\"1\", which another selector has");
    /* c: x and held agree; the gate's series is no part, and the result is not judged for
       c here (it has no row: decide() finds no activity and says no_data itself). */
    TEST_CHECK_INT(judge_pod(ec, "c", d, sizeof(d)), REASON_IDLE);
    matrix_free(&out);
    exprcov_free(ec);
}

/* Without by/on: a series of a selector that the result lacks (x and y, y lacking GPU 1). */
TEST(series_missing_from_result)
{
    struct rule r = mkrule("x and y");
    char err[256], d[256];
    struct exprcov *ec = exprcov_new(&r, decide_lookback(&r), err, sizeof(err));
    struct matrix x = {0}, y = {0}, out = {0};
    add_series(&x, "__name__=x,namespace=ml,pod=a,gpu_id=0", 8000, NOW, 0, 0);
    add_series(&x, "__name__=x,namespace=ml,pod=a,gpu_id=1", 8000, NOW, 0, 0);
    add_series(&x, "__name__=x,namespace=ml,pod=b,gpu_id=0", 8000, NOW, 0, 0);
    add_series(&y, "__name__=y,namespace=ml,pod=a,gpu_id=0", 8000, NOW, 0, 0);
    add_series(&y, "__name__=y,namespace=ml,pod=b,gpu_id=0", 8000, NOW, 0, 0);
    /* A per-pod series of y without gpu_id is not compared. */
    add_series(&y, "__name__=y,namespace=ml,pod=b", 8000, NOW, 0, 0);
    add_series(&out, "namespace=ml,pod=a,gpu_id=0", WS, NOW, 0, 0);
    add_series(&out, "namespace=ml,pod=b,gpu_id=0", WS, NOW, 0, 0);
    TEST_CHECK_INT(exprcov_add(ec, 0, &x, NOW, err, sizeof(err)), 0);
    TEST_CHECK_INT(exprcov_add(ec, 1, &y, NOW, err, sizeof(err)), 0);
    exprcov_index(ec, &out);
    TEST_CHECK_INT(judge_pod(ec, "a", d, sizeof(d)), REASON_NO_DATA);
    TEST_CHECK_STR(d, "selector 'x' {gpu_id=\"1\"} is missing from the result of 'activity'");
    TEST_CHECK_INT(judge_pod(ec, "b", d, sizeof(d)), REASON_IDLE);
    matrix_free(&out);
    exprcov_free(ec);
}

TEST(read_errors)
{
    struct rule r = mkrule("max by (namespace, pod) (x)");
    char err[256];
    struct exprcov *ec = exprcov_new(&r, decide_lookback(&r), err, sizeof(err));
    struct matrix m = {0};
    add_series(&m, "__name__=x,namespace=ml,pod=a", 8000, NOW, 0, 0);
    m.s[0].p[3].t = m.s[0].p[2].t;
    TEST_CHECK_INT(exprcov_add(ec, 0, &m, NOW, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "out of order");
    TEST_CHECK_INT(m.n, 0);
    exprcov_free(ec);
    struct rule bad = mkrule("x @ 100");
    TEST_CHECK(exprcov_new(&bad, decide_lookback(&bad), err, sizeof(err)) == NULL);
    TEST_CHECK_CONTAINS(err, "@ modifier");
}

/* decide(): an idle result reclaims alone, and keeps when its selector's samples have a hole. */
TEST(decide_hook)
{
    struct rule r = mkrule("max by (namespace, pod) (x)");
    char err[256];
    struct rule_data rd = {.rule = &r, .start = NOW - 1200, .end = NOW};
    for (double t = NOW - 1200; t <= NOW; t += 60) {
        if (t == NOW - 1200) {
            struct series *s = matrix_push(&rd.activity);
            labels_set(&s->labels, "namespace", "ml");
            labels_set(&s->labels, "pod", "a");
            s->p = xmalloc(21 * sizeof(*s->p));
        }
        rd.activity.s[0].p[rd.activity.s[0].n++] = (struct point){t, 0.01};
    }
    struct decisions out;
    decide(&rd, 1, NOW, &out);
    TEST_CHECK_INT(out.n, 1);
    TEST_CHECK_INT(out.v[0].decision, DECISION_RECLAIM);
    decisions_free(&out);

    rd.inner = exprcov_new(&r, decide_lookback(&r), err, sizeof(err));
    struct matrix m = {0};
    add_series(&m, "__name__=x,namespace=ml,pod=a", 8000, NOW, 9600, 9840);
    TEST_CHECK_INT(exprcov_add(rd.inner, 0, &m, NOW, err, sizeof(err)), 0);
    exprcov_index(rd.inner, &rd.activity);
    decide(&rd, 1, NOW, &out);
    TEST_CHECK_INT(out.n, 1);
    TEST_CHECK_INT(out.v[0].decision, DECISION_KEEP);
    TEST_CHECK_INT(out.v[0].reason, REASON_GAP);
    TEST_CHECK(isnan(out.v[0].idle_since));
    TEST_CHECK_CONTAINS(out.v[0].detail, "selector 'x' {}: no raw sample from");
    decisions_free(&out);
    exprcov_free(rd.inner);
    matrix_free(&rd.activity);
}

int main(void)
{
    RUN(covered_gap_stale_young);
    RUN(staleness_marker_ends_series);
    RUN(reach_of_a_range);
    RUN(node_level_and_relabelled_series);
    RUN(parts);
    RUN(series_missing_from_result);
    RUN(read_errors);
    RUN(decide_hook);
    return test_done();
}
