/*
 * `plan` and `explain`: one evaluation at --at (fetch_evaluate, the very evaluation a `run`
 * cycle makes), printed as every decision (plan: a table or JSON, report.h) or as why one
 * workload is kept or reclaimed with a sparkline of its window (explain); with the Kubernetes
 * API, the object each reclaim would act on (act_describe, which only reads). Called by
 * main.c's command table. Exit status: 2 explain matched nothing; 3 a rule could not be
 * evaluated (its workloads are printed as kept, the error once on stderr: a script must not
 * read "everything kept" as "nothing idle").
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "cmd.h"
#include "decide.h"
#include "fetch.h"
#include "log.h"
#include "report.h"
#include "rfc3339.h"
#include "series.h"
#include "util.h"

/* One evaluation: everything plan and explain print. */
struct evaluation {
    struct ruleset rules;
    struct rule_data *data;
    struct decisions decisions;
    double fetch_seconds, decide_seconds;
    unsigned long requests, failures;
    bool *failed;           /* per rule: a query of the rule failed in this evaluation */
    struct sbuf read_paths; /* "rule:path,..." for --stats */
};

static void evaluation_free(struct evaluation *ev)
{
    decisions_free(&ev->decisions);
    fetch_free(ev->data, ev->rules.n);
    free(ev->data);
    free(ev->failed);
    sbuf_free(&ev->read_paths);
    rules_free(&ev->rules);
}

/*
 * plan and explain with the Kubernetes API: for each reclaim decision of a Kubernetes action
 * (those matching `want`, when not NULL), what the action engine would act on and how, from
 * its own resolve-only path (act_describe), which only reads, and what the objects say beyond
 * the data (the owner's keep-until, a restart) as a note. Without the API, says once that
 * the targets were not resolved. 0, or -1 with a message when the flags are unusable.
 */
static int resolve_targets(struct evaluation *ev, const struct labels *want, double at)
{
    size_t reclaims = 0;
    for (size_t i = 0; i < ev->decisions.n; i++) {
        const struct decision_rec *r = &ev->decisions.v[i];
        reclaims += r->decision == DECISION_RECLAIM && r->rule->action != ACTION_REPORT &&
                    r->rule->action != ACTION_STOP &&
                    (!want || report_labels_match(want, &r->identity) ||
                     report_labels_match(want, &r->all));
    }
    if (!reclaims)
        return 0;
    if (!cmd_kube_wanted()) {
        fprintf(stderr, "note: targets not resolved: give the --kube.* flags of 'run' (or run in "
                        "the cluster) to see the object each reclaim would act on\n");
        return 0;
    }
    struct kube *k = cmd_kube_new(NULL);
    if (!k)
        return -1;
    char err[512];
    struct act_backend *b = act_kube_new(k);
    act_kube_set_kinds(b, ev->rules.kinds);
    for (size_t i = 0; i < ev->decisions.n; i++) {
        struct decision_rec *r = &ev->decisions.v[i];
        if (r->decision != DECISION_RECLAIM || r->rule->action == ACTION_REPORT ||
            r->rule->action == ACTION_STOP ||
            (want && !report_labels_match(want, &r->identity) &&
             !report_labels_match(want, &r->all)))
            continue;
        char *how = NULL, note[400] = "";
        err[0] = '\0';
        enum act_result ar = act_describe(b, r, cmd_flags[F_PROTECTED].value, at, &how, note,
                                          sizeof(note), NULL, err, sizeof(err));
        if (note[0])
            r->note = xstrdup(note);
        if (ar == ACT_OK)
            r->target = how;
        else if (str_has_prefix(err, "kept: "))
            r->target_kept = xstrdup(err);
        else
            r->target_kept = xasprintf("not resolved (%s): %s", act_result_name(ar), err);
    }
    b->free(b);
    return 0;
}

/*
 * Fetch and decide at `at`. fetch_rules logs each failed query as a warning; here the
 * errors are printed once each (rules sharing a failed query share the message) instead.
 */
static void evaluate(struct promq *q, double at, struct evaluation *ev)
{
    size_t n = ev->rules.n;
    /* The very evaluation a `run` cycle makes (fetch_evaluate): plan and explain show what the
       loop would act on. */
    fetch_evaluate(q, &ev->rules, at, cmd_flag_bool(F_DRY_RUN), &ev->data, &ev->decisions,
                   &ev->fetch_seconds, &ev->decide_seconds);
    for (size_t i = 0; i < n; i++)
        if (ev->data[i].read_path && ev->data[i].read_path[0])
            sbuf_printf(&ev->read_paths, "%s%s:%s", ev->read_paths.len ? "," : "",
                        ev->rules.rules[i].name, ev->data[i].read_path);

    ev->failed = xcalloc(n ? n : 1, sizeof(*ev->failed));
    for (size_t i = 0; i < n; i++) {
        if (!ev->data[i].error && !ev->data[i].pending_error)
            continue;
        ev->failed[i] = true;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = (ev->data[j].error || ev->data[j].pending_error) &&
                   strcmp(ev->data[j].errmsg, ev->data[i].errmsg) == 0;
        if (seen)
            continue;
        struct sbuf names = {0};
        for (size_t j = i; j < n; j++) {
            if ((ev->data[j].error || ev->data[j].pending_error) &&
                strcmp(ev->data[j].errmsg, ev->data[i].errmsg) == 0)
                sbuf_printf(&names, "%s'%s'", names.len ? ", " : "", ev->rules.rules[j].name);
        }
        fprintf(stderr, "error: prometheus query failed for rule %s: %s\n", names.buf,
                ev->data[i].errmsg);
        sbuf_free(&names);
    }

    ev->requests = promq_requests(q);
    ev->failures = promq_failures(q);
}

/* Shared start of plan and explain: flags, rules, Prometheus client. */
static int prepare(const char *cmd, struct evaluation *ev, struct promq **q, double *at)
{
    struct promq_cfg pc;
    if (cmd_need_rules_file(cmd) || cmd_prom_config(&pc) || cmd_eval_time(at))
        return -1;
    /* plan judges selector rules from proofs (no per-step grid of the window); explain keeps
       the grids its sparkline draws. decide() says the same of both. */
    pc.proofs = strcmp(cmd, "plan") == 0;
    if (cmd_load_rules(cmd_flags[F_RULES_FILE].value, &ev->rules) != 0)
        return -1;
    if (pc.insecure)
        log_warn("TLS verification of '%s' is disabled (--prometheus.insecure-skip-verify)",
                 pc.url);
    *q = promq_new(&pc);
    return 0;
}

int cmd_plan(char *const *args, size_t nargs)
{
    (void)args, (void)nargs;
    const char *fmt = cmd_flags[F_OUTPUT].value;
    if (strcmp(fmt, "table") != 0 && strcmp(fmt, "json") != 0) {
        fprintf(stderr, "error: invalid output '%s': want table or json\n", fmt);
        return CMD_EXIT_USAGE;
    }
    struct evaluation ev = {0};
    struct promq *q = NULL;
    double at;
    if (prepare("plan", &ev, &q, &at) != 0) {
        rules_free(&ev.rules);
        return CMD_EXIT_USAGE;
    }
    double t0 = mono_now();
    evaluate(q, at, &ev);
    /* Only decisions are printed: the fetched series (with 100,000 workloads, a third of the
       memory) go before the output is built; evaluation_free then finds them empty. */
    fetch_free(ev.data, ev.rules.n);
    if (resolve_targets(&ev, NULL, at) != 0) {
        evaluation_free(&ev);
        promq_free(q);
        return CMD_EXIT_USAGE;
    }
    struct sbuf out = {0};
    if (strcmp(fmt, "json") == 0)
        report_render_json(&ev.decisions, &out);
    else
        report_render_table(&ev.decisions, &out);
    fwrite(out.buf, 1, out.len, stdout);
    fflush(stdout);
    if (cmd_flag_bool(F_STATS))
        fprintf(stderr,
                "stats: rules=%zu decisions=%zu requests=%lu failures=%lu fetch_seconds=%.3f "
                "decide_seconds=%.3f total_seconds=%.3f proof=full read=%s\n",
                ev.rules.n, ev.decisions.n, ev.requests, ev.failures, ev.fetch_seconds,
                ev.decide_seconds, mono_now() - t0, ev.read_paths.buf ? ev.read_paths.buf : "");
    sbuf_free(&out);
    int status = 0;
    for (size_t i = 0; i < ev.rules.n; i++)
        if (ev.failed[i])
            status = CMD_EXIT_RULE_ERROR;
    evaluation_free(&ev);
    promq_free(q);
    return status;
}

int cmd_explain(char *const *args, size_t nargs)
{
    (void)args, (void)nargs;
    const char *wl = cmd_flag_str(F_WORKLOAD);
    if (!wl) {
        fprintf(stderr, "error: 'explain' needs --workload, e.g. 'namespace=\"ml\",pod=\"x\"'\n");
        return CMD_EXIT_USAGE;
    }
    struct labels want = {0};
    char err[256];
    if (labels_parse(wl, &want, err, sizeof(err)) != 0) {
        fprintf(stderr, "error: invalid --workload '%s': %s\n", wl, err);
        labels_free(&want);
        return CMD_EXIT_USAGE;
    }
    struct evaluation ev = {0};
    struct promq *q = NULL;
    double at;
    int status = CMD_EXIT_USAGE;
    if (prepare("explain", &ev, &q, &at) != 0)
        goto out;
    const char *rule = cmd_flag_str(F_RULE);
    if (rule) {
        bool found = false;
        for (size_t i = 0; i < ev.rules.n && !found; i++)
            found = strcmp(ev.rules.rules[i].name, rule) == 0;
        if (!found) {
            fprintf(stderr, "error: no rule '%s' in '%s'\n", rule, cmd_flags[F_RULES_FILE].value);
            goto out;
        }
    }
    evaluate(q, at, &ev);
    if (resolve_targets(&ev, &want, at) != 0)
        goto out;
    struct sbuf out = {0};
    size_t shown = report_render_explain(ev.data, ev.rules.n, &ev.decisions, &want, rule, &out);
    if (shown) {
        fwrite(out.buf, 1, out.len, stdout);
        status = 0;
        /* A failed rule explained here (every rule without --rule) is an error too. */
        for (size_t i = 0; i < ev.rules.n; i++)
            if (ev.failed[i] && (!rule || strcmp(ev.rules.rules[i].name, rule) == 0))
                status = CMD_EXIT_RULE_ERROR;
    } else {
        char when[48];
        rfc3339_format(when, sizeof(when), at, RFC3339_MILLI_FRAC);
        fprintf(stderr, "error: no workload matches '%s' at %s\n", wl, when);
        status = CMD_EXIT_NO_MATCH;
    }
    sbuf_free(&out);
out:
    evaluation_free(&ev);
    promq_free(q);
    labels_free(&want);
    return status;
}
