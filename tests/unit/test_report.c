/*
 * Unit tests of report.c: sparkline levels, gaps and NaN, the JSON shape of `plan --output
 * json` (parsed back with json-c), the table rows and the explanation sentences, all from
 * hand-made decisions. (Duration and time text are tested in test_dur.c and test_rfc3339.c.)
 */
#include "report.c"

#include "test.h"

static const char *const identity_names[] = {"namespace", "pod"};

static struct rule make_rule(const char *name)
{
    return (struct rule){.name = (char *)name,
                         .enabled = true,
                         .policy = POLICY_ALWAYS,
                         .threshold = 10,
                         .idle_timer = 900,
                         .step = 15,
                         .tolerated_gap = 30,
                         .identity = (char **)identity_names,
                         .nidentity = 2};
}

static struct decision_rec make_rec(const struct rule *r, const char *ns, const char *pod)
{
    struct decision_rec d = {.rule = r,
                             .decision = DECISION_KEEP,
                             .reason = REASON_ACTIVE,
                             .threshold = r->threshold,
                             .idle_timer = r->idle_timer,
                             .idle_since = NAN,
                             .window_start = 1700000000 - r->idle_timer,
                             .window_end = 1700000000,
                             .max = NAN,
                             .mean = NAN,
                             .last = NAN,
                             .allocated = NAN};
    labels_set(&d.identity, "namespace", ns);
    labels_set(&d.identity, "pod", pod);
    labels_copy(&d.all, &d.identity);
    labels_set(&d.all, "gpu_id", "3");
    return d;
}

static void free_recs(struct decisions *d)
{
    for (size_t i = 0; i < d->n; i++) {
        labels_free(&d->v[i].identity);
        labels_free(&d->v[i].all);
        free(d->v[i].note);
        d->v[i].note = NULL;
    }
}

static char *spark(const struct point *p, size_t n, double start, double end, double step,
                   double threshold, char **marker)
{
    struct sbuf s = {0}, m = {0};
    report_sparkline(p, n, start, end, step, threshold, &s, &m);
    *marker = sbuf_take(&m);
    return sbuf_take(&s);
}

TEST(sparkline_levels)
{
    struct point p[9];
    for (int i = 0; i < 9; i++)
        p[i] = (struct point){.t = 100 + i, .v = i * 0.125};
    char *m, *s = spark(p, 9, 100, 108, 1, 50, &m);
    TEST_CHECK_STR(s, "▁▂▃▄▅▆▇██");
    TEST_CHECK_STR(m, "    ^^^^^");
    free(s);
    free(m);
}

TEST(sparkline_gaps_and_nan)
{
    /* Slots 1 and 3 have no point; slot 2 is NaN, slot 5 +Inf. */
    struct point p[] = {{0, 0}, {2, NAN}, {4, 0.5}, {5, INFINITY}};
    char *m, *s = spark(p, ARRAY_LEN(p), 0, 5, 1, 50, &m);
    TEST_CHECK_STR(s, "▁·×·▅×");
    TEST_CHECK_STR(m, " _!_^!");
    free(s);
    free(m);
    /* No point at all: every slot is a gap, distinct from a zero value. */
    s = spark(NULL, 0, 0, 3, 1, 10, &m);
    TEST_CHECK_STR(s, "····");
    TEST_CHECK_STR(m, "____");
    free(s);
    free(m);
}

TEST(sparkline_grid)
{
    /* Off-grid points snap to the nearest step; outside the window they are dropped;
     * two points in one slot keep the larger; values above 1 rescale the bars. */
    struct point p[] = {{-15, 1}, {0.4, 0}, {15, 0.2}, {15.2, 1}, {30, 2}, {60, 1}};
    char *m, *s = spark(p, ARRAY_LEN(p), 0, 45, 15, 60, &m);
    TEST_CHECK_STR(s, "▁▅█·");
    TEST_CHECK_STR(m, " ^^_");
    free(s);
    free(m);
    /* A value exactly at the threshold is marked (same >= as decide). */
    struct point q[] = {{0, 0.1}, {1, 0.0999}};
    s = spark(q, 2, 0, 1, 1, 10, &m);
    TEST_CHECK_STR(m, "^ ");
    free(s);
    free(m);
}

/* Two workloads: one reclaimed after 20 minutes idle, one kept for a gap with no stats. */
static void two_decisions(const struct rule *r, struct decision_rec v[2])
{
    v[0] = make_rec(r, "ml", "idle-a");
    v[0].decision = DECISION_RECLAIM;
    v[0].reason = REASON_IDLE;
    v[0].idle_since = 1700000000 - 1200;
    v[0].samples = 61;
    v[0].max = 0.042;
    v[0].mean = 0.01;
    v[0].last = 0;
    v[0].allocated = 2;
    snprintf(v[0].resource, sizeof(v[0].resource), "amd.com/gpu");
    v[0].dry_run = true;
    v[1] = make_rec(r, "ml", "gappy \"b\"");
    v[1].reason = REASON_GAP;
    snprintf(v[1].detail, sizeof(v[1].detail), "no data from 22:00:00 to 22:04:00");
}

TEST(json_shape)
{
    struct rule r = make_rule("notebooks");
    struct decision_rec v[2];
    two_decisions(&r, v);
    struct decisions d = {.v = v, .n = 2};
    struct sbuf out = {0};
    report_render_json(&d, &out);
    TEST_CHECK(strstr(out.buf, "amd.com/gpu") != NULL); /* no "\/" escaping */

    struct json_object *arr = json_tokener_parse(out.buf);
    TEST_CHECK(arr && json_object_is_type(arr, json_type_array));
    if (!arr || json_object_array_length(arr) != 2) {
        TEST_CHECK(!"two objects expected");
        goto out;
    }
    struct json_object *a = json_object_array_get_idx(arr, 0),
                       *b = json_object_array_get_idx(arr, 1);
    struct json_object *x, *w, *win;
    TEST_CHECK(json_object_object_get_ex(a, "rule", &x));
    TEST_CHECK_STR(json_object_get_string(x), "notebooks");
    TEST_CHECK(json_object_object_get_ex(a, "workload", &w));
    TEST_CHECK_INT(json_object_object_length(w), 2);
    TEST_CHECK(json_object_object_get_ex(w, "pod", &x));
    TEST_CHECK_STR(json_object_get_string(x), "idle-a");
    TEST_CHECK(json_object_object_get_ex(a, "decision", &x));
    TEST_CHECK_STR(json_object_get_string(x), "reclaim");
    TEST_CHECK(json_object_object_get_ex(a, "reason", &x));
    TEST_CHECK_STR(json_object_get_string(x), "idle");
    TEST_CHECK(json_object_object_get_ex(a, "idleSince", &x));
    TEST_CHECK_STR(json_object_get_string(x), "2023-11-14T21:53:20Z");
    TEST_CHECK(json_object_object_get_ex(a, "threshold", &x));
    TEST_CHECK_DBL(json_object_get_double(x), 10, 0);
    TEST_CHECK(json_object_object_get_ex(a, "idleTimer", &x));
    TEST_CHECK_STR(json_object_get_string(x), "15m");
    TEST_CHECK(json_object_object_get_ex(a, "window", &win));
    TEST_CHECK(json_object_object_get_ex(win, "start", &x));
    TEST_CHECK_STR(json_object_get_string(x), "2023-11-14T21:58:20Z");
    TEST_CHECK(json_object_object_get_ex(win, "end", &x));
    TEST_CHECK_STR(json_object_get_string(x), "2023-11-14T22:13:20Z");
    TEST_CHECK(json_object_object_get_ex(win, "samples", &x));
    TEST_CHECK_INT(json_object_get_int(x), 61);
    TEST_CHECK(json_object_object_get_ex(win, "max", &x));
    TEST_CHECK_DBL(json_object_get_double(x), 0.042, 0);
    TEST_CHECK(json_object_object_get_ex(win, "last", &x));
    TEST_CHECK(json_object_is_type(x, json_type_int) || json_object_is_type(x, json_type_double));
    TEST_CHECK(json_object_object_get_ex(a, "allocated", &x));
    TEST_CHECK_DBL(json_object_get_double(x), 2, 0);
    TEST_CHECK(json_object_object_get_ex(a, "resource", &x));
    TEST_CHECK_STR(json_object_get_string(x), "amd.com/gpu");
    TEST_CHECK(json_object_object_get_ex(a, "dryRun", &x));
    TEST_CHECK(json_object_get_boolean(x));

    /* Unknowns are null, never NaN (which is not JSON) and never 0. */
    TEST_CHECK(json_object_object_get_ex(b, "workload", &w));
    TEST_CHECK(json_object_object_get_ex(w, "pod", &x));
    TEST_CHECK_STR(json_object_get_string(x), "gappy \"b\"");
    TEST_CHECK(json_object_object_get_ex(b, "decision", &x));
    TEST_CHECK_STR(json_object_get_string(x), "keep");
    TEST_CHECK(json_object_object_get_ex(b, "reason", &x));
    TEST_CHECK_STR(json_object_get_string(x), "gap");
    TEST_CHECK(json_object_object_get_ex(b, "detail", &x));
    TEST_CHECK_STR(json_object_get_string(x), "no data from 22:00:00 to 22:04:00");
    TEST_CHECK(json_object_object_get_ex(b, "idleSince", &x) && x == NULL);
    TEST_CHECK(json_object_object_get_ex(b, "allocated", &x) && x == NULL);
    TEST_CHECK(json_object_object_get_ex(b, "resource", &x) && x == NULL);
    TEST_CHECK(json_object_object_get_ex(b, "window", &win));
    TEST_CHECK(json_object_object_get_ex(win, "max", &x) && x == NULL);
    TEST_CHECK(json_object_object_get_ex(win, "mean", &x) && x == NULL);
    TEST_CHECK(json_object_object_get_ex(b, "dryRun", &x) && !json_object_get_boolean(x));
out:
    json_object_put(arr);
    sbuf_free(&out);
    free_recs(&d);

    /* No decisions: still a JSON array. */
    struct decisions none = {0};
    struct sbuf e = {0};
    report_render_json(&none, &e);
    struct json_object *empty = json_tokener_parse(e.buf);
    TEST_CHECK(empty && json_object_is_type(empty, json_type_array) &&
               json_object_array_length(empty) == 0);
    json_object_put(empty);
    sbuf_free(&e);
}

TEST(table_rows)
{
    struct rule r = make_rule("notebooks");
    struct decision_rec v[2];
    two_decisions(&r, v);
    struct decisions d = {.v = v, .n = 2};
    struct sbuf out = {0};
    report_render_table(&d, &out);
    /* Header, two rows, summary. */
    size_t lines = 0;
    for (size_t i = 0; i < out.len; i++)
        lines += out.buf[i] == '\n';
    TEST_CHECK_INT(lines, 4);
    TEST_CHECK(str_has_prefix(out.buf, "RULE"));
    TEST_CHECK_CONTAINS(out.buf, "WORKLOAD");
    TEST_CHECK_CONTAINS(out.buf, "IDLE FOR");
    const char *row1 = strstr(out.buf, "namespace=\"ml\",pod=\"idle-a\"");
    const char *row2 = strstr(out.buf, "namespace=\"ml\",pod=\"gappy \\\"b\\\"\"");
    TEST_CHECK(row1 && row2 && row1 < row2);
    TEST_CHECK_CONTAINS(row1, "reclaim (dry run)");
    TEST_CHECK_CONTAINS(row1, "20m");  /* idle for */
    TEST_CHECK_CONTAINS(row1, "4.2%"); /* max */
    TEST_CHECK_CONTAINS(row2, "keep");
    TEST_CHECK_CONTAINS(row2, "gap");
    TEST_CHECK_CONTAINS(out.buf,
                        "2 workloads: 1 reclaim, 1 keep (1 gap); dry run: reported only\n");
    /* Columns line up: DECISION starts at the same offset on every line. */
    const char *h = strstr(out.buf, "DECISION"), *k = strstr(row2, "keep");
    const char *line2 = row2;
    while (line2 > out.buf && line2[-1] != '\n')
        line2--;
    TEST_CHECK(h && k && h - out.buf == k - line2);
    sbuf_free(&out);
    free_recs(&d);
}

/* One workload's activity, a point every `step` from `start`. */
static void add_series(struct rule_data *rd, const char *pod, const double *v, size_t n,
                       double start, double step)
{
    struct series *s = matrix_push(&rd->activity);
    labels_set(&s->labels, "namespace", "ml");
    labels_set(&s->labels, "pod", pod);
    labels_set(&s->labels, "gpu_id", "0");
    s->p = xcalloc(n, sizeof(*s->p));
    s->n = 0;
    for (size_t i = 0; i < n; i++)
        s->p[s->n++] = (struct point){start + (double)i * step, v[i]};
}

TEST(explain_sentences)
{
    struct rule r = make_rule("notebooks");
    struct rule_data rd = {.rule = &r, .start = 1700000000 - 1800, .end = 1700000000};
    double busy[121], idle[121];
    for (int i = 0; i < 121; i++) {
        busy[i] = 0.01;
        idle[i] = 0.02;
    }
    busy[100] = 0.42; /* two bursts inside the window (window starts at i = 60) */
    busy[110] = 0.12;
    busy[10] = 0.9; /* before the window: not counted */
    add_series(&rd, "busy", busy, 121, rd.start, 15);
    add_series(&rd, "idle", idle, 121, rd.start, 15);
    /* "gappy": points 80..95 (22:03:20 to 22:07:05) missing. */
    struct series *g = matrix_push(&rd.activity);
    labels_set(&g->labels, "namespace", "ml");
    labels_set(&g->labels, "pod", "gappy");
    g->p = xcalloc(121, sizeof(*g->p));
    for (int i = 0; i < 121; i++)
        if (i < 80 || i >= 96)
            g->p[g->n++] = (struct point){rd.start + i * 15.0, 0};

    struct decision_rec v[3];
    v[0] = make_rec(&r, "ml", "busy");
    v[0].reason = REASON_ACTIVE;
    v[1] = make_rec(&r, "ml", "gappy");
    v[1].reason = REASON_GAP;
    v[2] = make_rec(&r, "ml", "idle");
    v[2].decision = DECISION_RECLAIM;
    v[2].reason = REASON_IDLE;
    v[2].idle_since = rd.start;
    struct decisions d = {.v = v, .n = 3};

    struct labels want = {0};
    labels_set(&want, "pod", "busy");
    struct sbuf out = {0};
    TEST_CHECK_INT(report_render_explain(&rd, 1, &d, &want, NULL, &out), 1);
    TEST_CHECK_CONTAINS(out.buf, "workload namespace=\"ml\",pod=\"busy\", rule 'notebooks'");
    TEST_CHECK_CONTAINS(out.buf, "policy Always, threshold 10 %, idle timer 15m");
    TEST_CHECK_CONTAINS(out.buf, "window 2023-11-14T21:58:20Z .. 2023-11-14T22:13:20Z: 61 points");
    TEST_CHECK_CONTAINS(out.buf, "kept: 2 of 61 points at or above 10 % (max 42 % at 22:08:20)");
    TEST_CHECK_CONTAINS(out.buf, "▁▁▁▄▁"); /* the 42 % burst between idle points */
    TEST_CHECK_CONTAINS(out.buf, "min 1%, max 42%, mean");
    TEST_CHECK_CONTAINS(out.buf, "\n  21:58:20 ▁▁");
    TEST_CHECK(strstr(out.buf, "  22:13:20 ") == NULL); /* 61 points: one row */
    TEST_CHECK(strstr(out.buf, " \n") == NULL);         /* no trailing blanks */
    sbuf_reset(&out);
    labels_free(&want);

    labels_set(&want, "pod", "gappy");
    TEST_CHECK_INT(report_render_explain(&rd, 1, &d, &want, "notebooks", &out), 1);
    TEST_CHECK_CONTAINS(out.buf, "kept: no data for 4m15s between 22:03:05 and 22:07:20");
    TEST_CHECK_CONTAINS(out.buf, "················");
    TEST_CHECK_CONTAINS(out.buf, "________________");
    sbuf_reset(&out);
    labels_free(&want);

    labels_set(&want, "pod", "idle");
    labels_set(&want, "gpu_id", "3"); /* matched on all labels, not only identity */
    TEST_CHECK_INT(report_render_explain(&rd, 1, &d, &want, NULL, &out), 1);
    TEST_CHECK_CONTAINS(out.buf,
                        "reclaim: below 10 % for the whole 15m window since 2023-11-14T21:43:20Z");
    sbuf_reset(&out);
    labels_free(&want);

    /* No match: wrong rule, unknown pod. */
    labels_set(&want, "pod", "idle");
    TEST_CHECK_INT(report_render_explain(&rd, 1, &d, &want, "other", &out), 0);
    labels_free(&want);
    labels_set(&want, "pod", "nope");
    TEST_CHECK_INT(report_render_explain(&rd, 1, &d, &want, NULL, &out), 0);
    TEST_CHECK_INT(out.len, 0);
    labels_free(&want);
    sbuf_free(&out);
    free_recs(&d);
    matrix_free(&rd.activity);
}

TEST(explain_rows)
{
    /* A 1 h window at 15 s is 241 points: rows of 60 labelled with their first time. */
    struct rule r = make_rule("long");
    r.idle_timer = 3600;
    struct rule_data rd = {.rule = &r, .start = 1700000000 - 7200, .end = 1700000000};
    double zero[481] = {0};
    add_series(&rd, "quiet", zero, 481, rd.start, 15);
    struct decision_rec v = make_rec(&r, "ml", "quiet");
    v.decision = DECISION_RECLAIM;
    v.reason = REASON_IDLE;
    v.idle_since = rd.start;
    struct decisions d = {.v = &v, .n = 1};
    struct labels want = {0};
    labels_set(&want, "namespace", "ml");
    struct sbuf out = {0};
    TEST_CHECK_INT(report_render_explain(&rd, 1, &d, &want, NULL, &out), 1);
    static const char *const rows[] = {"  21:13:20 ", "  21:28:20 ", "  21:43:20 ", "  21:58:20 ",
                                       "  22:13:20 ▁\n"};
    for (size_t i = 0; i < ARRAY_LEN(rows); i++)
        TEST_CHECK_CONTAINS(out.buf, rows[i]);
    TEST_CHECK_CONTAINS(out.buf, "window 2023-11-14T21:13:20Z .. 2023-11-14T22:13:20Z: 241 points");
    TEST_CHECK_CONTAINS(out.buf, "since 2023-11-14T20:13:20Z");
    labels_free(&want);
    sbuf_free(&out);
    free_recs(&d);
    matrix_free(&rd.activity);
}

/* A series of `n` points every 15 s from `start`; NAN in `v` means no point there. */
static void push_series(struct matrix *m, const char *pod, const char *gpu, const double *v,
                        size_t n, double start)
{
    struct series *s = matrix_push(m);
    labels_set(&s->labels, "namespace", "ml");
    labels_set(&s->labels, "pod", pod);
    if (gpu)
        labels_set(&s->labels, "gpu_id", gpu);
    s->p = xcalloc(n, sizeof(*s->p));
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            s->p[s->n++] = (struct point){start + (double)i * 15, v[i]};
}

/* True when some marker row of `text` (a line of only blanks and markers) holds `c`. */
static bool marker_has(const char *text, char c)
{
    for (const char *l = text; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        bool marker = len > 0 && strspn(l, " ^_!") == len;
        if (marker && memchr(l, c, len))
            return true;
        l = e ? e + 1 : NULL;
    }
    return false;
}

/*
 * With raw coverage, the decisions of decide() and what explain draws agree: "_" exactly
 * where a step is not covered by raw samples, never on a workload decided idle; a hole the
 * raw samples cover is drawn "·" and said so; several series get a row each.
 */
TEST(explain_raw_coverage)
{
    struct rule r = make_rule("raw");
    r.max_terminations = 10;
    struct rule_data rd = {
        .rule = &r, .start = 1700000000 - 1800, .end = 1700000000, .raw_coverage = true};
    double v[121], one[121], cov[121], silent[121], silent_cov[121];
    for (int i = 0; i < 121; i++) {
        v[i] = 0.01;
        one[i] = 1;
        cov[i] = 1;
        silent[i] = i <= 50 ? 0.9 : NAN;
        silent_cov[i] = i <= 51 ? 1 : i <= 53 ? 0 : NAN;
    }
    /* holey: no point at i = 100, but its raw samples are never 30 s apart (coverage 1). */
    v[100] = NAN;
    push_series(&rd.activity, "holey", NULL, v, 121, rd.start);
    push_series(&rd.coverage, "holey", NULL, one, 121, rd.start);
    v[100] = 0.01;
    /* rawgap: a point at every step, but a raw gap in the step ending at i = 105. */
    push_series(&rd.activity, "rawgap", NULL, v, 121, rd.start);
    cov[105] = 0;
    push_series(&rd.coverage, "rawgap", NULL, cov, 121, rd.start);
    /* two: GPU 0 at 90 % went silent 17 minutes ago, GPU 1 idle. */
    push_series(&rd.activity, "two", "0", silent, 121, rd.start);
    push_series(&rd.coverage, "two", "0", silent_cov, 121, rd.start);
    push_series(&rd.activity, "two", "1", v, 121, rd.start);
    push_series(&rd.coverage, "two", "1", one, 121, rd.start);

    struct decisions d;
    decide(&rd, 1, 1700000000, &d);
    TEST_CHECK_INT(d.n, 3);
    if (d.n == 3) {
        TEST_CHECK_INT(d.v[0].decision, DECISION_RECLAIM);
        TEST_CHECK_INT(d.v[1].reason, REASON_GAP);
        TEST_CHECK_INT(d.v[2].reason, REASON_STALE);
    }
    struct labels want = {0};
    struct sbuf out = {0};
    labels_set(&want, "pod", "holey");
    TEST_CHECK_INT(report_render_explain(&rd, 1, &d, &want, NULL, &out), 1);
    TEST_CHECK_CONTAINS(out.buf, "▁·▁");
    TEST_CHECK(!marker_has(out.buf, '_'));
    TEST_CHECK_CONTAINS(out.buf, "reclaim: below 10 % for the whole 15m window since "
                                 "2023-11-14T21:43:20Z (1 step without a point, raw samples never "
                                 "more than 30s apart)");
    sbuf_reset(&out);
    labels_free(&want);

    labels_set(&want, "pod", "rawgap");
    TEST_CHECK_INT(report_render_explain(&rd, 1, &d, &want, NULL, &out), 1);
    TEST_CHECK(marker_has(out.buf, '_'));
    TEST_CHECK(strstr(out.buf, "▁·") == NULL && strstr(out.buf, "·▁") == NULL);
    TEST_CHECK_CONTAINS(out.buf,
                        "kept: raw samples more than 30s apart in the step ending 22:09:35");
    sbuf_reset(&out);
    labels_free(&want);

    labels_set(&want, "pod", "two");
    TEST_CHECK_INT(report_render_explain(&rd, 1, &d, &want, NULL, &out), 1);
    TEST_CHECK_CONTAINS(out.buf, "kept: stale in one of its 2 series");
    TEST_CHECK_CONTAINS(out.buf, "  series {gpu_id=\"0\",namespace=\"ml\",pod=\"two\"}\n");
    TEST_CHECK_CONTAINS(out.buf, "  series {gpu_id=\"1\",namespace=\"ml\",pod=\"two\"}\n");
    TEST_CHECK_CONTAINS(out.buf, "detail: {gpu_id=\"0\",namespace=\"ml\",pod=\"two\"}: last point");
    TEST_CHECK(marker_has(out.buf, '_'));
    labels_free(&want);
    sbuf_free(&out);
    decisions_free(&d);
    matrix_free(&rd.activity);
    matrix_free(&rd.coverage);
}

/* What the objects say beyond the data (an owner's keep-until) goes with the decision. */
TEST(notes_are_shown)
{
    struct rule r = make_rule("notebooks");
    struct decision_rec v[2];
    two_decisions(&r, v);
    v[0].note = xstrdup("kept until 2023-11-15T10:00:00Z at the owner's request "
                        "(gpureclaim.io/keep-until on Notebook ml/alice)");
    struct decisions d = {.v = v, .n = 2};
    struct sbuf out = {0};
    report_render_table(&d, &out);
    TEST_CHECK_CONTAINS(out.buf, "dry run: reported only\nnote: namespace=\"ml\",pod=\"idle-a\", "
                                 "rule 'notebooks': kept until 2023-11-15T10:00:00Z at the "
                                 "owner's request");
    TEST_CHECK(strstr(out.buf, "idle-a\", rule") != NULL &&
               !strstr(out.buf, "gappy \\\"b\\\"\", rule"));
    sbuf_free(&out);
    report_render_json(&d, &out);
    TEST_CHECK_CONTAINS(out.buf, "\"note\": \"kept until 2023-11-15T10:00:00Z");
    struct json_object *arr = json_tokener_parse(out.buf), *n;
    TEST_CHECK(arr && !json_object_object_get_ex(json_object_array_get_idx(arr, 1), "note", &n));
    json_object_put(arr);
    sbuf_free(&out);
    struct labels want = {0};
    labels_set(&want, "pod", "idle-a");
    TEST_CHECK_INT(report_render_explain(NULL, 0, &d, &want, NULL, &out), 1);
    TEST_CHECK_CONTAINS(out.buf, "\n  note: kept until 2023-11-15T10:00:00Z at the owner's "
                                 "request (gpureclaim.io/keep-until on Notebook ml/alice)\n");
    labels_free(&want);
    sbuf_free(&out);
    free_recs(&d);
}

int main(void)
{
    RUN(sparkline_levels);
    RUN(sparkline_gaps_and_nan);
    RUN(sparkline_grid);
    RUN(json_shape);
    RUN(table_rows);
    RUN(explain_sentences);
    RUN(explain_rows);
    RUN(explain_raw_coverage);
    RUN(notes_are_shown);
    return test_done();
}
