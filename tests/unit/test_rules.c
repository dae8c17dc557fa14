/*
 * Tests for the rules loader (enforcer/rules.c). The fixture directories are walked, so a
 * new tests/rules/valid/X.yaml or tests/rules/invalid/X.yaml + X.err is picked up without
 * touching this file: every valid file must load with no error, and every invalid file
 * must produce exactly the lines of its .err (file named by its base name), in order.
 * The example rule sets in rules/ must load clean too. Run from the repository root.
 */
#include "rules.c"

#include <dirent.h>
#include <unistd.h>

#include "decide.h"
#include "test.h"

#define VALID_DIR   "tests/rules/valid"
#define INVALID_DIR "tests/rules/invalid"
#define EXAMPLE_DIR "rules"

struct names {
    char **v;
    size_t n;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the *.yaml files in `dir`. */
static void list_yaml(const char *dir, struct names *out)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    memset(out, 0, sizeof(*out));
    if (!d)
        return;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0) {
            out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
            out->v[out->n++] = xstrdup(e->d_name);
        }
    }
    closedir(d);
    if (out->n > 1)
        qsort(out->v, out->n, sizeof(*out->v), cmp_str);
}

static void names_free(struct names *n)
{
    for (size_t i = 0; i < n->n; i++)
        free(n->v[i]);
    free(n->v);
}

static int load_path(const char *path, struct ruleset *rs, struct rules_errors *errs)
{
    memset(errs, 0, sizeof(*errs));
    int rc = rules_load_file(path, rs, errs);
    for (size_t i = 0; i < errs->n; i++)
        fprintf(stderr, "  %s\n", errs->msg[i]);
    return rc;
}

/* Load a file under its base name, so messages match the .err files wherever tests run. */
static int load_named(const char *dir, const char *name, struct ruleset *rs,
                      struct rules_errors *errs)
{
    char *path = xasprintf("%s/%s", dir, name);
    size_t len = 0;
    char *buf = test_read_file(path, &len);
    int rc = -2;

    memset(errs, 0, sizeof(*errs));
    if (buf)
        rc = rules_load_buffer(name, buf, len, rs, errs);
    else
        fprintf(stderr, "cannot read '%s'\n", path);
    free(buf);
    free(path);
    return rc;
}

TEST(valid_files_load)
{
    struct names files;
    list_yaml(VALID_DIR, &files);
    TEST_CHECK(files.n >= 6);
    for (size_t i = 0; i < files.n; i++) {
        char *path = xasprintf("%s/%s", VALID_DIR, files.v[i]);
        struct ruleset rs;
        struct rules_errors errs;
        int rc = load_path(path, &rs, &errs);
        if (rc != 0)
            fprintf(stderr, "valid file '%s' failed to load\n", path);
        TEST_CHECK_INT(rc, 0);
        TEST_CHECK_INT(errs.n, 0);
        TEST_CHECK(rs.n >= 1);
        TEST_CHECK_STR(rs.api_version, RULES_API_VERSION);
        TEST_CHECK_STR(rs.file, path);
        TEST_CHECK_INT(strlen(rs.hash), 16);
        rules_free(&rs);
        rules_errors_free(&errs);
        free(path);
    }
    names_free(&files);
}

TEST(invalid_files_match_err)
{
    struct names files;
    list_yaml(INVALID_DIR, &files);
    TEST_CHECK(files.n >= 20);
    for (size_t i = 0; i < files.n; i++) {
        char *err_path =
            xasprintf("%s/%.*s.err", INVALID_DIR, (int)strlen(files.v[i]) - 5, files.v[i]);
        char *expected = test_read_file(err_path, NULL);
        struct ruleset rs;
        struct rules_errors errs;
        int rc = load_named(INVALID_DIR, files.v[i], &rs, &errs);

        TEST_CHECK_INT(rc, -1);
        TEST_CHECK(rs.rules == NULL && rs.n == 0);
        if (!expected) {
            fprintf(stderr, "missing '%s'\n", err_path);
            TEST_CHECK(expected != NULL);
        } else {
            struct sbuf got = {0};
            for (size_t j = 0; j < errs.n; j++) {
                sbuf_puts(&got, errs.msg[j]);
                sbuf_putc(&got, '\n');
            }
            if (strcmp(got.buf ? got.buf : "", expected) != 0)
                fprintf(stderr, "'%s': expected\n%sgot\n%s", files.v[i], expected,
                        got.buf ? got.buf : "");
            TEST_CHECK_STR(got.buf ? got.buf : "", expected);
            TEST_CHECK(errs.n >= 1);
            sbuf_free(&got);
        }
        rules_errors_free(&errs);
        free(expected);
        free(err_path);
    }
    names_free(&files);
}

TEST(example_rule_sets_load)
{
    static const char *const required[] = {"amd-walkthrough.yaml", "during-pressure.yaml",
                                           "business-hours.yaml", "exemptions.yaml"};
    struct names files;
    list_yaml(EXAMPLE_DIR, &files);
    for (size_t i = 0; i < ARRAY_LEN(required); i++) {
        bool found = false;
        for (size_t j = 0; j < files.n; j++)
            found = found || strcmp(files.v[j], required[i]) == 0;
        if (!found)
            fprintf(stderr, "missing example '%s'\n", required[i]);
        TEST_CHECK(found);
    }
    for (size_t i = 0; i < files.n; i++) {
        char *path = xasprintf("%s/%s", EXAMPLE_DIR, files.v[i]);
        struct ruleset rs;
        struct rules_errors errs;
        TEST_CHECK_INT(load_path(path, &rs, &errs), 0);
        rules_free(&rs);
        rules_errors_free(&errs);
        free(path);
    }
    names_free(&files);
}

TEST(amd_walkthrough_values)
{
    struct ruleset rs;
    struct rules_errors errs;
    TEST_CHECK_INT(load_path(EXAMPLE_DIR "/amd-walkthrough.yaml", &rs, &errs), 0);
    TEST_CHECK_INT(rs.n, 1);
    if (rs.n == 1) {
        TEST_CHECK_INT(rs.rules[0].policy, POLICY_ALWAYS);
        TEST_CHECK_DBL(rs.rules[0].threshold, 10, 0);
        TEST_CHECK_DBL(rs.rules[0].idle_timer, 15 * 60, 0);
    }
    rules_free(&rs);
    rules_errors_free(&errs);
}

TEST(minimal_defaults)
{
    struct ruleset rs;
    struct rules_errors errs;
    TEST_CHECK_INT(load_named(VALID_DIR, "minimal.yaml", &rs, &errs), 0);
    TEST_CHECK_INT(rs.n, 1);
    if (rs.n != 1)
        return;
    const struct rule *r = &rs.rules[0];
    TEST_CHECK_STR(r->name, "notebooks");
    TEST_CHECK_STR(r->file, "minimal.yaml");
    TEST_CHECK_INT(r->line, 5);
    TEST_CHECK_INT(r->col, 3);
    TEST_CHECK(r->enabled);
    TEST_CHECK_INT(r->policy, POLICY_DURING_PRESSURE);
    TEST_CHECK_DBL(r->threshold, 10, 0);
    TEST_CHECK_DBL(r->idle_timer, 900, 0);
    TEST_CHECK_DBL(r->step, 60, 0);
    TEST_CHECK_DBL(r->tolerated_gap, 120, 0);
    TEST_CHECK_DBL(r->notice_period, 0, 0);
    TEST_CHECK_INT(r->max_terminations, 1);
    TEST_CHECK(!r->dry_run);
    TEST_CHECK_INT(r->action, ACTION_REPORT);
    TEST_CHECK_STR(r->q_activity, "gpureclaim:workload_busy:ratio");
    TEST_CHECK_STR(r->q_allocation, "gpureclaim:workload_devices:count");
    TEST_CHECK_STR(
        r->q_pending,
        "sum by (resource) (kube_pod_container_resource_requests{resource=~\"amd_com_.+\"}"
        " * on (namespace, pod) group_left () max by (namespace, pod) "
        "(kube_pod_status_unschedulable == 1))");
    TEST_CHECK(r->q_priority == NULL);
    TEST_CHECK_INT(r->nidentity, 2);
    TEST_CHECK_STR(r->identity[0], "namespace");
    TEST_CHECK_STR(r->identity[1], "pod");
    TEST_CHECK_STR(r->resource_label, "resource");
    TEST_CHECK_INT(r->nnamespaces, 0);
    TEST_CHECK_INT(r->scope.n, 0);
    TEST_CHECK_INT(r->nexemptions, 0);
    TEST_CHECK_INT(r->noverrides, 0);
    TEST_CHECK_INT(r->nwindows, 0);
    rules_free(&rs);
    rules_errors_free(&errs);
}

TEST(full_values)
{
    struct ruleset rs;
    struct rules_errors errs;
    TEST_CHECK_INT(load_named(VALID_DIR, "full.yaml", &rs, &errs), 0);
    TEST_CHECK_INT(rs.n, 1);
    if (rs.n != 1)
        return;
    const struct rule *r = &rs.rules[0];
    TEST_CHECK_STR(r->name, "vision-notebooks");
    TEST_CHECK(r->enabled);
    TEST_CHECK_INT(r->policy, POLICY_ALWAYS);
    TEST_CHECK_DBL(r->threshold, 7.5, 0);
    TEST_CHECK_DBL(r->idle_timer, 5400, 0);
    TEST_CHECK_DBL(r->step, 30, 0);
    TEST_CHECK_DBL(r->tolerated_gap, 90, 0);
    TEST_CHECK_DBL(r->notice_period, 600, 0);
    TEST_CHECK_INT(r->max_terminations, 3);
    TEST_CHECK(r->dry_run);
    TEST_CHECK_INT(r->action, ACTION_SCALE_TO_ZERO);
    TEST_CHECK_INT(r->nidentity, 2);
    TEST_CHECK_STR(r->identity[1], "workload");
    TEST_CHECK_STR(r->resource_label, "gpu_resource");
    TEST_CHECK_STR(r->q_activity, "max by (namespace, workload) (my:busy:ratio)");
    TEST_CHECK_STR(r->q_allocation, "my:devices:count");
    TEST_CHECK_STR(r->q_pending, "sum by (gpu_resource) (my:pending:devices)");
    TEST_CHECK_STR(r->q_priority, "my:priority");
    TEST_CHECK_INT(r->nnamespaces, 2);
    TEST_CHECK_STR(r->namespaces[1], "research");
    TEST_CHECK_INT(r->scope.n, 2);
    TEST_CHECK_STR(r->scope.m[0].name, "team");
    TEST_CHECK_INT(r->scope.m[1].op, MATCH_NRE);
    TEST_CHECK_INT(r->nexemptions, 2);
    TEST_CHECK_STR(r->exemptions[0].reason, "pinned by SRE");
    TEST_CHECK(r->exemptions[1].reason == NULL);
    TEST_CHECK_INT(r->exemptions[1].match.n, 2);
    TEST_CHECK_INT(r->noverrides, 2);
    const struct rule_override *o = &r->overrides[0];
    TEST_CHECK(o->has_threshold && o->has_idle_timer && !o->has_enabled);
    TEST_CHECK_DBL(o->threshold, 5, 0);
    TEST_CHECK_DBL(o->idle_timer, 7200, 0);
    o = &r->overrides[1];
    TEST_CHECK(!o->has_threshold && !o->has_idle_timer && o->has_enabled && !o->enabled);
    TEST_CHECK_INT(r->nwindows, 1);
    TEST_CHECK_INT(r->windows[0].days, 0x3e); /* Mon..Fri */
    TEST_CHECK_INT(r->windows[0].start_min, 9 * 60);
    TEST_CHECK_INT(r->windows[0].end_min, 18 * 60);
    TEST_CHECK_INT(r->windows[0].utc_offset_min, 60);
    rules_free(&rs);
    rules_errors_free(&errs);
}

TEST(defaults_inheritance)
{
    struct ruleset rs;
    struct rules_errors errs;
    TEST_CHECK_INT(load_named(VALID_DIR, "defaults.yaml", &rs, &errs), 0);
    TEST_CHECK_INT(rs.n, 2);
    if (rs.n != 2)
        return;
    const struct rule *a = &rs.rules[0], *b = &rs.rules[1];
    TEST_CHECK_STR(a->name, "inherits");
    TEST_CHECK_DBL(a->step, 30, 0);
    TEST_CHECK_DBL(a->tolerated_gap, 60, 0); /* twice the inherited step */
    TEST_CHECK_DBL(a->threshold, 5, 0);
    TEST_CHECK_DBL(a->idle_timer, 1800, 0);
    TEST_CHECK_INT(a->action, ACTION_DELETE);
    TEST_CHECK_INT(a->nidentity, 3);
    TEST_CHECK_STR(a->identity[2], "container");
    TEST_CHECK_STR(a->q_pending, "sum by (resource) (my_pending_gpus)");
    TEST_CHECK_STR(a->q_activity, "gpureclaim:workload_busy:ratio");

    TEST_CHECK_STR(b->name, "overrides-some");
    TEST_CHECK_DBL(b->step, 60, 0);
    TEST_CHECK_DBL(b->tolerated_gap, 120, 0);
    TEST_CHECK_DBL(b->threshold, 20, 0);
    TEST_CHECK_DBL(b->idle_timer, 1800, 0);
    TEST_CHECK_INT(b->action, ACTION_EVICT);
    TEST_CHECK_INT(b->nidentity, 3);
    /* queries merge query by query */
    TEST_CHECK_STR(b->q_activity, "other:busy:ratio");
    TEST_CHECK_STR(b->q_pending, "sum by (resource) (my_pending_gpus)");
    TEST_CHECK_STR(b->q_allocation, "gpureclaim:workload_devices:count");
    rules_free(&rs);
    rules_errors_free(&errs);
}

TEST(window_values)
{
    struct ruleset rs;
    struct rules_errors errs;
    TEST_CHECK_INT(load_named(VALID_DIR, "windows.yaml", &rs, &errs), 0);
    if (rs.n != 1)
        return;
    const struct rule *r = &rs.rules[0];
    TEST_CHECK_INT(r->nwindows, 3);
    TEST_CHECK_INT(r->windows[0].days, (1 << 5) | (1 << 6));
    TEST_CHECK_INT(r->windows[0].start_min, 22 * 60);
    TEST_CHECK_INT(r->windows[0].end_min, 6 * 60);
    TEST_CHECK_INT(r->windows[0].utc_offset_min, -330);
    TEST_CHECK_INT(r->windows[1].days, 1);
    TEST_CHECK_INT(r->windows[1].end_min, 24 * 60);
    TEST_CHECK_INT(r->windows[1].utc_offset_min, 0);
    TEST_CHECK_INT(r->windows[2].start_min, 12 * 60 + 30);
    TEST_CHECK_INT(r->windows[2].end_min, 12 * 60 + 30);
    rules_free(&rs);
    rules_errors_free(&errs);
}

/* timeZone windows are loaded with their zone, and decide_rule_active follows DST. */
TEST(time_zone_windows)
{
    struct ruleset rs;
    struct rules_errors errs;
    TEST_CHECK_INT(load_named(VALID_DIR, "timezones.yaml", &rs, &errs), 0);
    if (rs.n != 1)
        return;
    const struct rule *r = &rs.rules[0];
    TEST_CHECK_INT(r->nwindows, 4);
    TEST_CHECK_STR(r->windows[0].zone.name, "Europe/Berlin");
    TEST_CHECK_STR(r->windows[1].zone.name, "Australia/Sydney");
    TEST_CHECK_STR(r->windows[2].zone.name, "UTC");
    TEST_CHECK(r->windows[3].zone.name == NULL);
    TEST_CHECK_INT(r->windows[3].utc_offset_min, -180);
    /* Monday 2026-01-19 and Monday 2026-07-20: 09:00 Berlin is 08:00Z, then 07:00Z. */
    const double winter = 1768780800, summer = 1784505600; /* 00:00Z on those days */
    TEST_CHECK(!decide_rule_active(r, winter + 7 * 3600));
    TEST_CHECK(decide_rule_active(r, winter + 8 * 3600));
    TEST_CHECK(decide_rule_active(r, summer + 7 * 3600));
    TEST_CHECK(!decide_rule_active(r, summer + 16 * 3600));
    rules_free(&rs);
    rules_errors_free(&errs);
}

/* The exemption that did not exempt: written the PromQL way, it matches nb-12m now. */
TEST(promql_exemption_exempts)
{
    static const char in[] = "apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n"
                             "- name: nb\n  threshold: 5\n  idleTimer: 1h\n  exemptions:\n"
                             "  - matchers: ['pod=~\"nb-\\\\d+m\"']\n";
    struct ruleset rs;
    struct rules_errors errs = {0};
    TEST_CHECK_INT(rules_load_buffer("x", in, strlen(in), &rs, &errs), 0);
    if (rs.n != 1 || rs.rules[0].nexemptions != 1)
        return;
    struct labels ls = {0};
    labels_set(&ls, "namespace", "nb");
    labels_set(&ls, "pod", "nb-12m");
    const struct matcher_set *ms = &rs.rules[0].exemptions[0].match;
    TEST_CHECK(match_all(ms->m, ms->n, &ls));
    labels_set(&ls, "pod", "nb-dm");
    TEST_CHECK(!match_all(ms->m, ms->n, &ls));
    labels_free(&ls);
    rules_free(&rs);
}

/* Prometheus 3 names (issue 34): dotted identity labels and quoted matchers load and match. */
TEST(utf8_label_names)
{
    static const char in[] =
        "apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n"
        "- name: otel\n  threshold: 5\n  idleTimer: 1h\n"
        "  queries:\n    activity: '{\"gpu.busy\", \"k8s.namespace.name\"=~\"t-.*\"}'\n"
        "  identity: [k8s.namespace.name, \"k8s.pod.name\"]\n"
        "  exemptions:\n  - matchers: ['\"k8s.pod.name\"=~\"nb-.*\"']\n";
    struct ruleset rs;
    struct rules_errors errs = {0};
    TEST_CHECK_INT(rules_load_buffer("x", in, strlen(in), &rs, &errs), 0);
    if (rs.n != 1 || rs.rules[0].nexemptions != 1 || rs.rules[0].nidentity != 2) {
        TEST_CHECK(false);
        rules_errors_free(&errs);
        return;
    }
    TEST_CHECK_STR(rs.rules[0].identity[0], "k8s.namespace.name");
    struct labels ls = {0};
    labels_set(&ls, "k8s.pod.name", "nb-1");
    const struct matcher_set *ms = &rs.rules[0].exemptions[0].match;
    TEST_CHECK(match_all(ms->m, ms->n, &ls));
    labels_free(&ls);
    rules_free(&rs);
    /* An unquoted dotted name in a matcher is refused with its position. */
    static const char bad[] = "apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n"
                              "- name: otel\n  threshold: 5\n  idleTimer: 1h\n"
                              "  exemptions:\n  - matchers: ['k8s.pod.name=\"x\"']\n";
    TEST_CHECK_INT(rules_load_buffer("x", bad, strlen(bad), &rs, &errs), -1);
    TEST_CHECK(errs.n == 1 && strncmp(errs.msg[0], "x:8:16: invalid matcher", 23) == 0);
    if (errs.n)
        fprintf(stderr, "%s\n", errs.msg[0]);
    rules_errors_free(&errs);
}

/* `n` rules of about 63 bytes each, as in the 10 MB file that took 73 s to load. */
static void many_rules(struct sbuf *b, size_t n, const char *last_name)
{
    sbuf_reset(b);
    sbuf_puts(b, "apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n");
    for (size_t i = 0; i < n; i++)
        sbuf_printf(b, "- name: rule-%zu\n  threshold: 10\n  idleTimer: 15m\n  step: 1m\n", i);
    if (last_name)
        sbuf_printf(b, "- name: %s\n  threshold: 10\n  idleTimer: 15m\n", last_name);
}

/*
 * Size cap and linear loading: a file over RULES_MAX_FILE_BYTES is refused at once with a
 * clear message (through the file and the buffer entry points); a file just under the cap
 * with 60,000 rules loads, and a duplicate name among them is found with the position of
 * the first. Duration is measured in `make bench`-style runs, not asserted here.
 */
TEST(large_files)
{
    struct sbuf b = {0};
    struct ruleset rs;
    struct rules_errors errs = {0};

    many_rules(&b, 160000, NULL); /* ~10 MB */
    TEST_CHECK(b.len > RULES_MAX_FILE_BYTES);
    TEST_CHECK_INT(rules_load_buffer("big.yaml", b.buf, b.len, &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 1);
    TEST_CHECK_STR(errs.n ? errs.msg[0] : NULL,
                   "big.yaml: file too large (a rules file may have at most 4 MiB)");
    rules_errors_free(&errs);
    char path[] = "/tmp/test_rules.XXXXXX";
    int fd = mkstemp(path);
    TEST_CHECK(fd >= 0 && write(fd, b.buf, b.len) == (ssize_t)b.len);
    if (fd >= 0)
        close(fd);
    TEST_CHECK_INT(rules_load_file(path, &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 1);
    TEST_CHECK_CONTAINS(errs.n ? errs.msg[0] : NULL, ": file too large (a rules file may");
    rules_errors_free(&errs);
    unlink(path);

    many_rules(&b, 60000, NULL);
    TEST_CHECK(b.len < RULES_MAX_FILE_BYTES);
    TEST_CHECK_INT(rules_load_buffer("many.yaml", b.buf, b.len, &rs, &errs), 0);
    TEST_CHECK_INT(rs.n, 60000);
    rules_free(&rs);

    many_rules(&b, 60000, "rule-7");
    TEST_CHECK_INT(rules_load_buffer("dup.yaml", b.buf, b.len, &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 1);
    TEST_CHECK_STR(errs.n ? errs.msg[0] : NULL,
                   "dup.yaml:240004:9: duplicate rule name 'rule-7' (first at 32:3)");
    rules_errors_free(&errs);
    sbuf_free(&b);
}

/* One rule with 100,000 keys, and an identity of 100,000 labels with one duplicate. */
TEST(wide_rules)
{
    struct sbuf b = {0};
    struct ruleset rs;
    struct rules_errors errs = {0};

    sbuf_puts(&b, "apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n- name: wide\n"
                  "  threshold: 10\n  idleTimer: 15m\n");
    for (int i = 0; i < 100000; i++)
        sbuf_printf(&b, "  k%d: 1\n", i);
    TEST_CHECK_INT(rules_load_buffer("wide.yaml", b.buf, b.len, &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 100000);
    TEST_CHECK_STR(errs.n ? errs.msg[errs.n - 1] : NULL,
                   "wide.yaml:100006:3: unknown key 'k99999' in rule 'wide'");
    rules_errors_free(&errs);

    sbuf_reset(&b);
    sbuf_puts(&b, "apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n- name: wide\n"
                  "  threshold: 10\n  idleTimer: 15m\n  identity:\n");
    for (int i = 0; i < 100000; i++)
        sbuf_printf(&b, "  - l%d\n", i);
    sbuf_puts(&b, "  - l5\n");
    TEST_CHECK_INT(rules_load_buffer("wide.yaml", b.buf, b.len, &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 1);
    TEST_CHECK_STR(errs.n ? errs.msg[0] : NULL,
                   "wide.yaml:100008:5: duplicate label 'l5' in 'identity'");
    rules_errors_free(&errs);
    sbuf_free(&b);
}

/*
 * Each pattern is bounded by RE2's max_mem, and the file as a whole by RULES_MAX_RE_INSTS:
 * 200 matchers of 7,004 instructions each cross the budget once, reported at the matcher
 * that crosses it.
 */
TEST(regex_budget_per_file)
{
    struct sbuf b = {0};
    struct ruleset rs;
    struct rules_errors errs = {0};

    sbuf_puts(&b, "apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n- name: re\n"
                  "  threshold: 10\n  idleTimer: 15m\n  scope:\n    matchers:\n");
    for (int i = 0; i < 200; i++)
        sbuf_printf(&b, "    - 'l%d=~`[\\x{0}-\\x{10FFFF}]{1000}`'\n", i);
    TEST_CHECK_INT(rules_load_buffer("re.yaml", b.buf, b.len, &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 1);
    TEST_CHECK_STR(errs.n ? errs.msg[0] : NULL,
                   "re.yaml:151:7: the regular expressions of this file compile to more than "
                   "1000000 RE2 instructions (simplify the patterns or merge rules)");
    rules_errors_free(&errs);
    sbuf_free(&b);
}

TEST(policy_and_action_names)
{
    TEST_CHECK_STR(rules_policy_name(POLICY_ALWAYS), "Always");
    TEST_CHECK_STR(rules_policy_name(POLICY_DURING_PRESSURE), "DuringGPUPressure");
    TEST_CHECK_STR(rules_policy_name((enum rule_policy)42), "unknown");
    static const char *const actions[] = {"report", "scaleToZero", "suspend",
                                          "evict",  "delete",      "stop"};
    for (size_t i = 0; i < ARRAY_LEN(actions); i++)
        TEST_CHECK_STR(rules_action_name((enum rule_action)i), actions[i]);
    TEST_CHECK_STR(rules_action_name((enum rule_action)99), "unknown");
}

TEST(hash_of_content)
{
    static const char a[] = "apiVersion: gpureclaim/v1\nkind: ReclaimRules\n"
                            "rules: [{name: x, threshold: 1, idleTimer: 1h}]\n";
    struct ruleset rs;
    struct rules_errors errs = {0};
    char want[17];

    TEST_CHECK_INT(rules_load_buffer("a", a, strlen(a), &rs, &errs), 0);
    snprintf(want, sizeof(want), "%016" PRIx64, fnv1a64(a, strlen(a)));
    TEST_CHECK_STR(rs.hash, want);
    char first[17];
    memcpy(first, rs.hash, sizeof(first));
    rules_free(&rs);
    /* A comment changes the bytes, so the hash, not the rules. */
    char *b = xasprintf("%s# comment\n", a);
    TEST_CHECK_INT(rules_load_buffer("b", b, strlen(b), &rs, &errs), 0);
    TEST_CHECK(strcmp(rs.hash, first) != 0);
    rules_free(&rs);
    free(b);
}

TEST(every_error_reported_in_file_order)
{
    static const char in[] = "apiVersion: gpureclaim/v1\n"
                             "kind: ReclaimRules\n"
                             "rules:\n"
                             "- name: b\n"
                             "  threshold: 0\n"
                             "  idleTimer: 15m\n"
                             "  color: red\n"
                             "- name: a\n"
                             "  threshold: 10\n"
                             "  idleTimer: 10s\n"
                             "color: blue\n";
    struct ruleset rs;
    struct rules_errors errs = {0};
    TEST_CHECK_INT(rules_load_buffer("f.yaml", in, strlen(in), &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 4);
    if (errs.n == 4) {
        TEST_CHECK_STR(errs.msg[0], "f.yaml:5:14: 'threshold' must be greater than 0 and at most "
                                    "100 (percent), got 0");
        TEST_CHECK_STR(errs.msg[1], "f.yaml:7:3: unknown key 'color' in rule 'b'");
        TEST_CHECK_STR(errs.msg[2],
                       "f.yaml:10:14: 'idleTimer' must be between 1m and 30d, got 10s");
        TEST_CHECK_STR(errs.msg[3], "f.yaml:11:1: unknown top-level key 'color'");
    }
    rules_errors_free(&errs);
    /* errs may be NULL: the caller only wants the verdict. */
    TEST_CHECK_INT(rules_load_buffer("f.yaml", in, strlen(in), &rs, NULL), -1);
}

TEST(spec_messages)
{
    static const struct {
        const char *in;
        const char *msg;
    } cases[] = {
        {"apiVersion: gpureclaim/v2\nkind: ReclaimRules\nrules: []\n",
         "x:1:13: unsupported apiVersion 'gpureclaim/v2' (this build understands: gpureclaim/v1)"},
        {"apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n- name: n\n  threshold: 1\n"
         "  idleTimer: 1h\n  scope:\n    matchers: ['pod=~\"([\"']\n",
         "x:8:16: invalid regular expression '(['"},
        {"apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n- name: n\n  threshold: 1\n"
         "  idleTimer: 1h\n  idleTimer: 2h\n",
         "x:7:3: duplicate key 'idleTimer' (first at 6:3)"},
        {"apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n- name: n\n  threshold: \"1\"\n"
         "  idleTimer: 1h\n",
         "x:5:14: 'threshold' must be a number, got string"},
        {"apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n- name: n\n"
         "  threshold: !!str 10\n  idleTimer: 1h\n",
         "x:5:14: tag '!!str' does not match the value's type (number)"},
        {"apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n- name: x\n  threshold: 1\n",
         "x:4:3: missing required key 'idleTimer' in rule 'x'"},
        {"apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n- name: notebooks\n"
         "  treshold: 1\n  threshold: 1\n  idleTimer: 1h\n",
         "x:5:3: unknown key 'treshold' in rule 'notebooks'"},
        {"apiVersion: gpureclaim/v1\nkind: ReclaimRules\nrules:\n- name: \"a\\tb\"\n"
         "  threshold: 1\n  idleTimer: 1h\n",
         "x:4:9: invalid rule name 'a?b'"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct ruleset rs;
        struct rules_errors errs = {0};
        TEST_CHECK_INT(rules_load_buffer("x", cases[i].in, strlen(cases[i].in), &rs, &errs), -1);
        TEST_CHECK_INT(errs.n, 1);
        TEST_CHECK_CONTAINS(errs.n ? errs.msg[0] : NULL, cases[i].msg);
        rules_errors_free(&errs);
    }
}

/* maxKeepUntil: 0 (not honoured) unless set, from `defaults:` or the rule, within 0s..30d. */
TEST(max_keep_until)
{
    static const char in[] = "apiVersion: gpureclaim/v1\nkind: ReclaimRules\n"
                             "defaults:\n  maxKeepUntil: 2d\n  threshold: 1\n  idleTimer: 1h\n"
                             "rules:\n- name: inherits\n- name: own\n  maxKeepUntil: 6h\n";
    struct ruleset rs;
    struct rules_errors errs = {0};
    TEST_CHECK_INT(rules_load_buffer("x", in, strlen(in), &rs, &errs), 0);
    TEST_CHECK_INT(rs.n, 2);
    if (rs.n == 2) {
        TEST_CHECK_DBL(rs.rules[0].max_keep_until, 2 * 86400, 0);
        TEST_CHECK_DBL(rs.rules[1].max_keep_until, 6 * 3600, 0);
    }
    rules_free(&rs);
    static const char plain[] = "apiVersion: gpureclaim/v1\nkind: ReclaimRules\n"
                                "rules:\n- name: n\n  threshold: 1\n  idleTimer: 1h\n";
    TEST_CHECK_INT(rules_load_buffer("x", plain, strlen(plain), &rs, &errs), 0);
    TEST_CHECK_DBL(rs.n ? rs.rules[0].max_keep_until : -1, 0, 0);
    rules_free(&rs);
    static const char big[] = "apiVersion: gpureclaim/v1\nkind: ReclaimRules\n"
                              "rules:\n- name: n\n  threshold: 1\n  idleTimer: 1h\n"
                              "  maxKeepUntil: 31d\n";
    TEST_CHECK_INT(rules_load_buffer("x", big, strlen(big), &rs, &errs), -1);
    TEST_CHECK_CONTAINS(errs.n ? errs.msg[0] : NULL, "x:7:17: 'maxKeepUntil'");
    rules_errors_free(&errs);
}

TEST(load_file_errors)
{
    struct ruleset rs;
    struct rules_errors errs = {0};
    TEST_CHECK_INT(rules_load_file("tests/rules/no-such-file.yaml", &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 1);
    TEST_CHECK_STR(errs.n ? errs.msg[0] : NULL,
                   "tests/rules/no-such-file.yaml: cannot read: No such file or directory");
    rules_errors_free(&errs);
    TEST_CHECK_INT(rules_load_file("tests/rules", &rs, &errs), -1);
    TEST_CHECK_STR(errs.n ? errs.msg[0] : NULL, "tests/rules: cannot read: Is a directory");
    rules_errors_free(&errs);
}

TEST(check_files_output)
{
    char *const paths[] = {VALID_DIR "/minimal.yaml", INVALID_DIR "/duplicate-key.yaml",
                           INVALID_DIR "/nope.yaml"};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int n = rules_check_files(paths, ARRAY_LEN(paths), f);
    fclose(f);
    TEST_CHECK_INT(n, 3);

    size_t mlen = 0;
    char *min = test_read_file(VALID_DIR "/minimal.yaml", &mlen);
    TEST_CHECK(min != NULL);
    if (!min)
        return;
    char *want = xasprintf(
        "tests/rules/valid/minimal.yaml: OK (1 rules, version gpureclaim/v1, hash %016" PRIx64 ")\n"
        "tests/rules/invalid/duplicate-key.yaml:7:3: duplicate key 'threshold' (first at 5:3)\n"
        "tests/rules/invalid/duplicate-key.yaml:8:1: duplicate key 'kind' (first at 2:1)\n"
        "tests/rules/invalid/duplicate-key.yaml: 2 errors\n"
        "tests/rules/invalid/nope.yaml: cannot read: No such file or directory\n"
        "tests/rules/invalid/nope.yaml: 1 errors\n",
        fnv1a64(min, mlen));
    TEST_CHECK_STR(text, want);
    FILE *null = fopen("/dev/null", "w");
    TEST_CHECK_INT(rules_check_files(paths, 1, null), 0);
    fclose(null);
    free(want);
    free(min);
    free(text);
}

/*
 * The key specification is the one source of the schema: its built-in defaults load through
 * the same parser and range checks as a user's `defaults:` without an error, every key that
 * has a default gets it, and every range is written in a syntax the parser reads.
 */
TEST(key_spec_consistent)
{
    struct ctx c = {.file = "x"};
    struct ydom_doc doc;
    struct vals bv;
    TEST_CHECK_INT(builtin_load(&c, &doc, &bv), 0);
    TEST_CHECK_INT(c.n, 0);
    for (size_t k = 0; k < K__COUNT; k++) {
        const struct key_spec *ks = &key_specs[k];
        double d;
        TEST_CHECK(ks->name != NULL && ks->doc != NULL);
        if (!ks->name)
            continue;
        if (ks->dflt && !bv.at[k])
            fprintf(stderr, "built-in default of '%s' not loaded\n", ks->name);
        TEST_CHECK(!ks->dflt || bv.at[k] != NULL);
        TEST_CHECK((ks->type == KT_NESTED) == (ks->parse != NULL || k == K_NAME));
        TEST_CHECK(!ks->min == !ks->max);
        if (ks->type == KT_DURATION && ks->min) {
            TEST_CHECK_INT(dur_parse(ks->min, &d), 0);
            TEST_CHECK_INT(dur_parse(ks->max, &d), 0);
        }
        for (size_t j = 0; j < k; j++)
            TEST_CHECK(!(key_specs[j].flags & KS_QUERY) != !(ks->flags & KS_QUERY) ||
                       strcmp(key_specs[j].name, ks->name) != 0);
    }
    /* Spot checks that the table, not the parser, decides the built-in values. */
    TEST_CHECK_DBL(bv.v[K_STEP].d, 60, 0);
    TEST_CHECK_INT(bv.v[K_POLICY].i, POLICY_DURING_PRESSURE);
    TEST_CHECK_STR(bv.v[K_Q_PENDING].s, DEFAULT_Q_PENDING);
    TEST_CHECK_STR(bv.v[K_Q_PRIORITY].s, "");
    TEST_CHECK_INT(bv.v[K_IDENTITY].n ? bv.v[K_IDENTITY].n->nitems : 0, 2);
    ydom_doc_free(&doc);
}

/*
 * rules/README.md's key tables are generated from the specification (`gpureclaim-enforcer
 * rules-schema TABLE`, tests/rules-readme.sh -u): the text between each table's markers must
 * be exactly what the specification prints, so the documentation cannot drift from the code.
 */
TEST(readme_tables_match_spec)
{
    static const char *const tables[] = {"rule-keys", "queries"};
    size_t len = 0;
    char *readme = test_read_file("rules/README.md", &len);
    TEST_CHECK(readme != NULL);
    if (!readme)
        return;
    for (size_t i = 0; i < ARRAY_LEN(tables); i++) {
        char *marker =
            xasprintf("<!-- BEGIN generated: gpureclaim-enforcer rules-schema %s ", tables[i]);
        char *begin = strstr(readme, marker), *end = NULL, *want = NULL;
        size_t wlen = 0;
        if (begin && (begin = strchr(begin, '\n')))
            end = strstr(++begin, "<!-- END generated -->");
        TEST_CHECK(end != NULL);
        FILE *f = open_memstream(&want, &wlen);
        TEST_CHECK_INT(rules_schema_markdown(tables[i], f), 0);
        fclose(f);
        if (end) {
            *end = '\0';
            if (strcmp(begin, want) != 0)
                fprintf(stderr,
                        "rules/README.md table '%s' differs from the key specification: "
                        "run sh tests/rules-readme.sh -u\n",
                        tables[i]);
            TEST_CHECK_STR(begin, want);
            *end = '<';
        }
        free(want);
        free(marker);
    }
    /* The `defaults` row names exactly the keys the specification keeps out of `defaults:`. */
    struct sbuf only = {0};
    size_t n = 0, i = 0;
    for (size_t k = 0; k < K__COUNT; k++)
        n += (key_specs[k].flags & KS_RULE_ONLY) != 0;
    sbuf_puts(&only, "| any rule key except ");
    for (size_t k = 0; k < K__COUNT; k++)
        if (key_specs[k].flags & KS_RULE_ONLY)
            sbuf_printf(&only, "%s`%s`",
                        i++ == 0 ? ""
                        : i == n ? " and "
                                 : ", ",
                        key_specs[k].name);
    sbuf_puts(&only, "; ");
    if (!strstr(readme, only.buf))
        fprintf(stderr, "rules/README.md does not say '%s'\n", only.buf);
    TEST_CHECK(strstr(readme, only.buf) != NULL);
    sbuf_free(&only);
    FILE *null = fopen("/dev/null", "w");
    TEST_CHECK_INT(rules_schema_markdown("nope", null), -1);
    fclose(null);
    free(readme);
}

int main(void)
{
    RUN(valid_files_load);
    RUN(invalid_files_match_err);
    RUN(example_rule_sets_load);
    RUN(amd_walkthrough_values);
    RUN(minimal_defaults);
    RUN(full_values);
    RUN(defaults_inheritance);
    RUN(window_values);
    RUN(time_zone_windows);
    RUN(promql_exemption_exempts);
    RUN(utf8_label_names);
    RUN(large_files);
    RUN(wide_rules);
    RUN(regex_budget_per_file);
    RUN(policy_and_action_names);
    RUN(hash_of_content);
    RUN(every_error_reported_in_file_order);
    RUN(spec_messages);
    RUN(max_keep_until);
    RUN(load_file_errors);
    RUN(check_files_output);
    RUN(key_spec_consistent);
    RUN(readme_tables_match_spec);
    return test_done();
}
