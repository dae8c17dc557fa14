/*
 * Tests of promsel.c: the series selectors of PromQL expressions. Real expressions first
 * (every `expr` of the shipped recording and alerting rules, the preset shapes of AMD's
 * device-metrics-exporter and NVIDIA's dcgm-exporter), then the reach each selector gets from
 * ranges, offsets and subqueries, the `unless` gates, precedence, keywords in any case, and
 * every construct that is refused with its message.
 */
#include "promsel.c"
#include "match.h"
#include "test.h"
#include "ydom.h"

static const struct promsel_sel *find(const struct promsel *p, const char *text)
{
    for (size_t i = 0; i < p->nsel; i++)
        if (strcmp(p->sel[i].text, text) == 0)
            return &p->sel[i];
    return NULL;
}

static bool grouped(const struct promsel *p, const char *name)
{
    for (size_t i = 0; i < p->ngrouping; i++)
        if (strcmp(p->grouping[i], name) == 0)
            return true;
    return false;
}

/* Extract, expecting success; the caller frees. */
static int ok(const char *expr, struct promsel *p)
{
    char err[256] = "";
    int rc = promsel_extract(expr, p, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "'%s': %s\n", expr, err);
    return rc;
}

/* Extract, expecting a refusal whose message contains `want`. */
static void refused(const char *expr, const char *want)
{
    struct promsel p;
    char err[256] = "";
    TEST_CHECK_INT(promsel_extract(expr, &p, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, want);
    promsel_free(&p);
}

/* Every `expr` scalar under a YAML node. */
static void collect_exprs(const struct ydom_node *n, char ***v, size_t *nv)
{
    if (!n)
        return;
    if (n->kind == YDOM_KIND_SEQUENCE)
        for (size_t i = 0; i < n->nitems; i++)
            collect_exprs(n->items[i], v, nv);
    if (n->kind == YDOM_KIND_MAPPING) {
        for (size_t i = 0; i < n->npairs; i++) {
            const struct ydom_node *val = n->pairs[i].value;
            if (strcmp(n->pairs[i].key->str, "expr") == 0 && val->kind == YDOM_KIND_SCALAR) {
                *v = xrealloc(*v, (*nv + 1) * sizeof(**v));
                (*v)[(*nv)++] = xstrdup(val->str);
            } else {
                collect_exprs(val, v, nv);
            }
        }
    }
}

/* Every `expr` of a rules file (copies; *nv = 0 when it cannot be read or parsed). */
static char **file_exprs(const char *path, size_t *nv)
{
    size_t len;
    char **v = NULL;
    *nv = 0;
    char *buf = test_read_file(path, &len);
    TEST_CHECK(buf != NULL);
    if (!buf)
        return NULL;
    struct ydom_doc doc;
    TEST_CHECK_INT(ydom_load(buf, len, &doc), 0);
    collect_exprs(doc.root, &v, nv);
    ydom_doc_free(&doc);
    free(buf);
    return v;
}

static void free_exprs(char **v, size_t nv)
{
    for (size_t i = 0; i < nv; i++)
        free(v[i]);
    free(v);
}

/*
 * Every recording and alerting rule shipped: each expression parses, except the alerts built
 * on absent(), which are refused with the reason. The recording rules are what a user would
 * paste as `activity` instead of the recorded series.
 */
TEST(test_shipped_rule_files)
{
    const char *files[] = {"rules/prometheus/gpureclaim.rules.yml",
                           "rules/prometheus/presets/amd-device-metrics-exporter.rules.yml",
                           "rules/prometheus/presets/dcgm-exporter.rules.yml"};
    size_t total = 0, parsed = 0, absent = 0;
    for (size_t f = 0; f < ARRAY_LEN(files); f++) {
        size_t nv;
        char **v = file_exprs(files[f], &nv);
        TEST_CHECK(nv >= 3);
        for (size_t i = 0; i < nv; i++) {
            struct promsel p;
            char err[256] = "";
            total++;
            if (promsel_extract(v[i], &p, err, sizeof(err)) == 0) {
                parsed++;
                TEST_CHECK(p.nsel >= 1);
            } else if (strstr(v[i], "absent(")) {
                absent++;
                TEST_CHECK_CONTAINS(err, "absent() stands for series that do not exist");
            } else {
                fprintf(stderr, "%s: '%s': %s\n", files[f], v[i], err);
                TEST_CHECK(!"shipped expression refused");
            }
            /* Every selector text is one remote read's matchers. */
            for (size_t j = 0; j < p.nsel; j++) {
                struct matcher *ms;
                size_t nm;
                char merr[256];
                TEST_CHECK_INT(match_parse_selector(p.sel[j].text, &ms, &nm, merr, sizeof(merr)),
                               0);
                match_free_all(ms, nm);
            }
            promsel_free(&p);
        }
        free_exprs(v, nv);
    }
    /* every expression of the three files: 30 until the idle-beyond group's 5 recording rules
       (the dashboard's GPU-hours idle beyond each timer) */
    TEST_CHECK_INT(total, 35);
    TEST_CHECK_INT(absent, 2);
    TEST_CHECK_INT(parsed + absent, total);
}

/* gpureclaim:partition_busy:ratio, the exporter's own per-device recording rule. */
TEST(test_partition_busy_rule)
{
    size_t nv;
    char **v = file_exprs("rules/prometheus/gpureclaim.rules.yml", &nv);
    if (!nv)
        return;
    struct promsel p;
    TEST_CHECK_INT(ok(v[0], &p), 0);
    /* `x - last_over_time(x[2m] offset 2m)` and resets(x[4m]): x reaches back 4 minutes. */
    const struct promsel_sel *x = find(&p, "gpureclaim_partition_gfx_busy_accumulator_total");
    TEST_CHECK(x != NULL);
    TEST_CHECK_DBL(x ? x->reach : -1, 240, 0);
    TEST_CHECK(x && !x->gate);
    /* Only in `unless` right-hand sides: gates. */
    const struct promsel_sel *info = find(&p, "gpureclaim_partition_info");
    TEST_CHECK(info != NULL);
    TEST_CHECK(info && !info->gate);
    TEST_CHECK(promsel_writes(&p, "activity_method"));
    TEST_CHECK(promsel_writes(&p, "partition")); /* group_left (partition) */
    TEST_CHECK(!promsel_writes(&p, "pod"));
    TEST_CHECK(grouped(&p, "gpu") && grouped(&p, "instance") && grouped(&p, "partition"));
    TEST_CHECK_INT(p.nsel, 7);
    promsel_free(&p);
    free_exprs(v, nv);
}

/* The AMD device-metrics-exporter preset's busy ratio, as an activity expression. */
TEST(test_amd_dme_shape)
{
    const char *e = "avg by (namespace, pod) (\n"
                    "  max by (namespace, pod, hostname, gpu_id) (\n"
                    "    gpu_gfx_activity{pod!=\"\", namespace!=\"\", gpu_partition_id=\"NA\"}\n"
                    "  )\n"
                    ") / 100\n"
                    "unless on (namespace, pod) (\n"
                    "  count by (namespace, pod) (max by (namespace, pod, hostname, gpu_id) (\n"
                    "    gpu_gfx_activity{pod!=\"\", namespace!=\"\", gpu_partition_id=\"NA\"}))\n"
                    "  < on (namespace, pod)\n"
                    "  sum by (namespace, pod) (gpureclaim:amd_dme_workload_devices:count)\n"
                    ")\n";
    struct promsel p;
    TEST_CHECK_INT(ok(e, &p), 0);
    TEST_CHECK_INT(p.nsel, 2);
    const struct promsel_sel *a =
        find(&p, "gpu_gfx_activity{pod!=\"\",namespace!=\"\",gpu_partition_id=\"NA\"}");
    const struct promsel_sel *d = find(&p, "gpureclaim:amd_dme_workload_devices:count");
    TEST_CHECK(a && !a->gate && a->reach == 0);
    TEST_CHECK(d && d->gate);
    TEST_CHECK(grouped(&p, "gpu_id") && grouped(&p, "hostname") && grouped(&p, "pod"));
    TEST_CHECK_INT(p.nwritten, 0);
    promsel_free(&p);

    /* Per device: the shape the e2e tests use. */
    TEST_CHECK_INT(ok("max by (namespace, pod, gpu_id) (gpu_gfx_activity) / 100", &p), 0);
    TEST_CHECK_INT(p.nsel, 1);
    TEST_CHECK_STR(p.sel[0].text, "gpu_gfx_activity");
    promsel_free(&p);
}

/* dcgm-exporter shapes: a ratio already, the old percent gauge, exported_pod relabelled. */
TEST(test_dcgm_shapes)
{
    struct promsel p;
    TEST_CHECK_INT(ok("avg by (namespace, pod) (DCGM_FI_PROF_GR_ENGINE_ACTIVE{pod!=\"\"})", &p), 0);
    TEST_CHECK_STR(p.sel[0].text, "DCGM_FI_PROF_GR_ENGINE_ACTIVE{pod!=\"\"}");
    TEST_CHECK_INT(p.nwritten, 0);
    promsel_free(&p);

    TEST_CHECK_INT(ok("max by (namespace, pod) (label_replace(label_replace("
                      "DCGM_FI_DEV_GPU_UTIL{exported_pod!=\"\"}, \"pod\", \"$1\", "
                      "\"exported_pod\", \"(.+)\"), \"namespace\", \"$1\", "
                      "\"exported_namespace\", \"(.+)\")) / 100",
                      &p),
                   0);
    TEST_CHECK_INT(p.nsel, 1);
    TEST_CHECK(promsel_writes(&p, "pod") && promsel_writes(&p, "namespace"));
    TEST_CHECK(!promsel_writes(&p, "exported_pod"));
    promsel_free(&p);

    /* Engine activity of MIG instances joined to the pod's requests. */
    TEST_CHECK_INT(ok("max by (namespace, pod) (DCGM_FI_PROF_GR_ENGINE_ACTIVE * on (namespace, "
                      "pod) group_left (node) kube_pod_info{node!=\"\"})",
                      &p),
                   0);
    TEST_CHECK_INT(p.nsel, 2);
    TEST_CHECK(promsel_writes(&p, "node") && grouped(&p, "node"));
    promsel_free(&p);
}

TEST(test_reach)
{
    struct promsel p;
    TEST_CHECK_INT(ok("rate(x[5m])[30m:1m]", &p), 0);
    TEST_CHECK_DBL(p.sel[0].reach, 2100, 0);
    promsel_free(&p);
    TEST_CHECK_INT(ok("max_over_time(x[10m] offset 5m)", &p), 0);
    TEST_CHECK_DBL(p.sel[0].reach, 900, 0);
    promsel_free(&p);
    TEST_CHECK_INT(ok("x offset 1h30m", &p), 0);
    TEST_CHECK_DBL(p.sel[0].reach, 5400, 0);
    promsel_free(&p);
    /* The same selector read twice: the larger reach. */
    TEST_CHECK_INT(ok("x + rate(x[5m]) * y[1m:] ", &p), 0);
    TEST_CHECK_INT(p.nsel, 2);
    TEST_CHECK_DBL(find(&p, "x") ? find(&p, "x")->reach : -1, 300, 0);
    TEST_CHECK_DBL(find(&p, "y") ? find(&p, "y")->reach : -1, 60, 0);
    promsel_free(&p);
    /* A subquery adds to every selector in its operand, not to its neighbours. */
    TEST_CHECK_INT(ok("a + max_over_time((b * c[2m:])[10m:30s]) + d[1m:]", &p), 0);
    TEST_CHECK_DBL(find(&p, "a")->reach, 0, 0);
    TEST_CHECK_DBL(find(&p, "b")->reach, 600, 0);
    TEST_CHECK_DBL(find(&p, "c")->reach, 720, 0);
    TEST_CHECK_DBL(find(&p, "d")->reach, 60, 0);
    promsel_free(&p);
    /* Prometheus 3: a number of seconds as a duration; ms units. */
    TEST_CHECK_INT(ok("avg_over_time(x[90])+avg_over_time(y[1500ms])", &p), 0);
    TEST_CHECK_DBL(find(&p, "x")->reach, 90, 0);
    TEST_CHECK_DBL(find(&p, "y")->reach, 1.5, 1e-9);
    promsel_free(&p);
}

TEST(test_gates_and_precedence)
{
    struct promsel p;
    /* unless binds looser than + and *: (a + b) unless (c * d). */
    TEST_CHECK_INT(ok("a + b unless c * d", &p), 0);
    TEST_CHECK(!find(&p, "a")->gate && !find(&p, "b")->gate);
    TEST_CHECK(find(&p, "c")->gate && find(&p, "d")->gate);
    promsel_free(&p);
    /* or binds looser than unless: a or (b unless c). */
    TEST_CHECK_INT(ok("a or b unless c", &p), 0);
    TEST_CHECK(!find(&p, "a")->gate && !find(&p, "b")->gate && find(&p, "c")->gate);
    promsel_free(&p);
    /* A gate that is also read as a value is no gate. */
    TEST_CHECK_INT(ok("a unless b or b", &p), 0);
    TEST_CHECK(!find(&p, "b")->gate);
    promsel_free(&p);
    /* and is a filter, not a gate: a device it lacks is missing from the result. */
    TEST_CHECK_INT(ok("a and on (pod, gpu_id) b", &p), 0);
    TEST_CHECK(!find(&p, "b")->gate);
    TEST_CHECK(grouped(&p, "gpu_id"));
    promsel_free(&p);
    /* ^ is right-associative, unary minus and bool comparisons. */
    TEST_CHECK_INT(ok("-a ^ -b ^ c > bool 0.5 * 1e-3 + 0x1f - Inf + nan", &p), 0);
    TEST_CHECK_INT(p.nsel, 3);
    promsel_free(&p);
    /* Keywords in any case; aggregation clauses before or after; atan2. */
    TEST_CHECK_INT(ok("SUM BY (pod) (x) AND ON (pod) sum(y) Without (gpu) Unless z atan2 w", &p),
                   0);
    TEST_CHECK_INT(p.nsel, 4);
    TEST_CHECK(find(&p, "z")->gate && find(&p, "w")->gate && !find(&p, "y")->gate);
    TEST_CHECK(grouped(&p, "pod") && !grouped(&p, "gpu"));
    promsel_free(&p);
    /* topk/quantile parameters; comments and newlines; group_right without labels. */
    TEST_CHECK_INT(ok("topk by (pod) (1, x) # the busiest device\n"
                      "+ on (pod) group_right quantile(0.9, y)",
                      &p),
                   0);
    TEST_CHECK_INT(p.nsel, 2);
    TEST_CHECK_INT(p.nwritten, 0);
    promsel_free(&p);
}

TEST(test_selector_text)
{
    struct promsel p;
    TEST_CHECK_INT(ok("x{ a = \"1\" , b=~'2|3', c!~`\\d+`, }", &p), 0);
    TEST_CHECK_STR(p.sel[0].text, "x{a=\"1\",b=~'2|3',c!~`\\d+`}");
    promsel_free(&p);
    TEST_CHECK_INT(ok("{__name__=~\"gpu_.*\", pod=\"a\\\"b\"}", &p), 0);
    TEST_CHECK_STR(p.sel[0].text, "{__name__=~\"gpu_.*\",pod=\"a\\\"b\"}");
    promsel_free(&p);
    /* Metric names with colons; keywords as label names. */
    TEST_CHECK_INT(ok("gpureclaim:workload_busy:ratio{on=\"x\", by=\"y\"}[5m:]", &p), 0);
    TEST_CHECK_STR(p.sel[0].text, "gpureclaim:workload_busy:ratio{on=\"x\",by=\"y\"}");
    promsel_free(&p);
}

/* Prometheus 3's quoted names (issue 34): read, kept as written in the selector text. */
TEST(test_utf8_names)
{
    struct promsel p;
    TEST_CHECK_INT(ok("sum by (\"k8s.namespace.name\", pod) "
                      "(rate({\"gpu.busy\", \"k8s.pod.name\"=~'a.*'}[5m]))",
                      &p),
                   0);
    TEST_CHECK_INT(p.nsel, 1);
    if (p.nsel == 1)
        TEST_CHECK_STR(p.sel[0].text, "{\"gpu.busy\",\"k8s.pod.name\"=~'a.*'}");
    TEST_CHECK_INT(p.ngrouping, 2);
    if (p.ngrouping == 2) {
        TEST_CHECK_STR(p.grouping[0], "k8s.namespace.name");
        TEST_CHECK_STR(p.grouping[1], "pod");
    }
    promsel_free(&p);
    TEST_CHECK_INT(ok("x * on (\"k8s.pod.name\") group_left (\"k8s.node.name\") y", &p), 0);
    TEST_CHECK(promsel_writes(&p, "k8s.node.name"));
    promsel_free(&p);
    /* A quoted name that is not UTF-8 is refused, as the raw read's matcher parser refuses it
       (fuzz_promsel found it accepted here and refused there). */
    refused("{\"a\xad\"}", "non-empty UTF-8");
    refused("{x=\"1\", \"k8s\xadpod\"=\"v\"}", "non-empty UTF-8");
    refused("sum by (\"a\xad"
            "b\") (x)",
            "non-empty UTF-8");
    /* A quoted metric name after `__name__=`: two names, refused as match.c refuses it. */
    refused("{__name__=\"/\",\"a\",b=`c`}", "metric name set twice");
}

TEST(test_refused)
{
    refused("x @ 1700000000", "@ modifier");
    refused("x @ start()", "@ modifier");
    refused("x offset -5m", "negative offset");
    refused("rate(x[5m])[10m:1m] offset 1m", "offset on a subquery");
    refused("rate(x[5m])[10m:1m] @ end()", "@ modifier");
    refused("absent(x{pod=\"a\"})", "absent() stands for series that do not exist");
    refused("x or absent_over_time(y[5m])", "absent_over_time()");
    refused("count_values(\"value\", x)", "count_values()");
    refused("rollup_candlestick(x)", "unknown function 'rollup_candlestick'");
    refused("Rate(x[5m])", "unknown function 'Rate'");
    refused("sum(x", "expected");
    refused("x{a=\"b\"", "expected");
    refused("x{a=\"b}", "unterminated string");
    refused("{a.b=\"x\"}", "unexpected character '.'");
    refused("{\"a\", \"b\"}", "metric name set twice");
    refused("x{\"b\"}", "metric name set twice");
    refused("{\"\"=\"x\"}", "a quoted name must be non-empty");
    refused("{\"a\\\"b\"=\"x\"}", "without escapes");
    refused("sum by (`a.b`) (x)", "a quoted name must be non-empty");
    refused("x{a=b}", "expected a string");
    refused("", "unexpected end of expression");
    refused("1 + 2", "no series selector");
    refused("time()", "no series selector");
    refused("sum(x)[5m]", "a range applies only to a series selector");
    refused("x[5m][10m:]", "a subquery of a range vector");
    refused("(x)offset 5m", "offset applies only");
    refused("x y", "unexpected 'y' after the expression");
    refused("x[5x]", "invalid number");
    refused("x[1h1h]", "invalid duration");
    refused("x $ y", "unexpected character");
    refused("{}", "needs a metric name or a matcher");
    refused("x{a:b=\"c\"}", "expected a label name");
    refused("sum by (a:b) (x)", "expected a label name");
    /* Bounded nesting. */
    char deep[1200];
    size_t n = 0;
    for (int i = 0; i < 300; i++)
        deep[n++] = '(';
    deep[n++] = 'x';
    for (int i = 0; i < 300; i++)
        deep[n++] = ')';
    deep[n] = '\0';
    refused(deep, "nested deeper than");
}

int main(void)
{
    RUN(test_shipped_rule_files);
    RUN(test_partition_busy_rule);
    RUN(test_amd_dme_shape);
    RUN(test_dcgm_shapes);
    RUN(test_reach);
    RUN(test_gates_and_precedence);
    RUN(test_selector_text);
    RUN(test_utf8_names);
    RUN(test_refused);
    return test_done();
}
