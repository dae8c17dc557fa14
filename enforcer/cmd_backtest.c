/*
 * `backtest`: what the rules (and --compare's) would have done over [--from, --to], simulated
 * by backtest.c from the history the replay reads (replay.h), printed by btreport.c, and
 * compared with an --audit.file of a real run over the same range; with the --kube.* or
 * --runtime.* flags each workload is looked up as it is now (btlookup.h, cmd_lookup_new,
 * shared with `recommend`). Called by main.c's command table.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "act.h"
#include "backtest.h"
#include "btreport.h"
#include "cmd.h"
#include "dur.h"
#include "log.h"
#include "rfc3339.h"
#include "util.h"

int cmd_range_time(int flag, double now, double *out)
{
    char err[256];
    double ago;
    if (rfc3339_parse(cmd_flags[flag].value, out, err, sizeof(err)) == 0)
        return 0;
    if (dur_parse(cmd_flags[flag].value, &ago) == 0) {
        *out = now - ago;
        return 0;
    }
    fprintf(stderr,
            "error: invalid time '%s' for '--%s': want RFC 3339, Unix seconds or a duration "
            "back from now such as '7d'\n",
            cmd_flags[flag].value, cmd_flags[flag].name);
    return -1;
}

int cmd_range(const char *cmd, double now, double *from, double *to)
{
    if (!cmd_flag_str(F_FROM)) {
        fprintf(stderr, "error: '%s' needs --from, e.g. --from 7d\n", cmd);
        return -1;
    }
    *to = now;
    if (cmd_range_time(F_FROM, now, from) || (cmd_flag_str(F_TO) && cmd_range_time(F_TO, now, to)))
        return -1;
    char a[RFC3339_LEN], b[RFC3339_LEN], d1[DUR_LEN], d2[DUR_LEN];
    rfc3339_format(a, sizeof(a), *from, RFC3339_SEC);
    rfc3339_format(b, sizeof(b), *to, RFC3339_SEC);
    if (!(*from < *to)) {
        fprintf(stderr, "error: --from (%s) is not before --to (%s)\n", a, b);
        return -1;
    }
    /* The future has no data: its cycles would only ever be no_data. */
    if (*to > now + 60) {
        fprintf(stderr, "error: --to (%s) is in the future: a backtest reads history\n", b);
        return -1;
    }
    if (*to - *from > cmd_flag_num(F_BT_MAX_RANGE)) {
        fprintf(stderr,
                "error: the range %s .. %s is %s, longer than the cap of %s: raise it with "
                "--backtest.max-range\n",
                a, b, dur_format(d1, sizeof(d1), *to - *from),
                dur_format(d2, sizeof(d2), cmd_flag_num(F_BT_MAX_RANGE)));
        return -1;
    }
    return 0;
}

struct btl *cmd_lookup_new(void)
{
    struct act_backend *kube = NULL, *runtime = NULL;
    if (cmd_kube_wanted()) {
        struct kube *k = cmd_kube_new(NULL);
        if (!k)
            return NULL;
        kube = act_kube_new(k);
    }
    if (cmd_flag_str(F_RT_SOCKET)) {
        /* The stop timeout is run's: a look-up never stops anything. */
        struct docker_cfg dc = {.socket = cmd_flag_str(F_RT_SOCKET), .timeout = 10};
        runtime = act_runtime_new(&dc, 0, cmd_flag_str(F_RT_SCOPE));
    }
    return btl_new(kube, runtime, cmd_flags[F_PROTECTED].value, wall_now());
}

static struct bt_sim *backtest_one(struct promq *q, struct ruleset *rs, const struct bt_cfg *cfg,
                                   FILE *decisions, const char *label)
{
    char err[512];
    struct bt_source *src = strcmp(cmd_flags[F_BT_SOURCE].value, "per-cycle") == 0
                                ? bt_source_per_cycle(q, rs, cfg->from, cfg->to, cfg->interval)
                                : bt_source_replay(q, rs, cfg->from, cfg->to, cfg->interval,
                                                   decisions != NULL, err, sizeof(err));
    if (!src) {
        fprintf(stderr, "error: %s\n", err);
        return NULL;
    }
    struct bt_sim *s = bt_run(rs, cfg, src, decisions, stderr, label, err, sizeof(err));
    if (!s)
        fprintf(stderr, "error: %s\n", err);
    else if (cmd_flag_bool(F_STATS))
        fprintf(stderr, "%s: %lu workload-cycles judged, %lu carried\n", label,
                bt_sim_result(s)->judged, bt_sim_result(s)->carried);
    return s;
}

/* btreport_sink: the report to stdout as it is rendered. */
static void backtest_write(void *arg, const char *buf, size_t len)
{
    fwrite(buf, 1, len, arg);
}

/* Exit status 3 and the message naming the failed parts, when a rule was not evaluated. */
static int backtest_failures(const struct bt_result *r)
{
    int status = 0;
    for (size_t i = 0; i < r->nrules; i++) {
        if (!r->rule[i].nfail)
            continue;
        struct sbuf b = {0};
        btreport_failures(r, i, &b);
        fprintf(stderr,
                "error: rule '%s' of '%s' could not be evaluated over part of the range, its "
                "workloads kept there (query_error): %s\n",
                r->rule[i].name, r->rules_file, b.buf);
        sbuf_free(&b);
        status = CMD_EXIT_RULE_ERROR;
    }
    return status;
}

/*
 * The command: the rules (and --compare's) simulated over [--from, --to] (backtest.h), printed
 * by btreport. Exit status as plan's: 3 when a rule could not be evaluated over part of the
 * range (named on stderr; those cycles count as query_error, never idle).
 */
int cmd_backtest(char *const *args, size_t nargs)
{
    (void)args, (void)nargs;
    double now = wall_now();
    struct bt_cfg cfg = {.return_within = cmd_flag_num(F_RETURN_WITHIN),
                         .max_actions_per_hour = (unsigned)cmd_flag_num(F_MAX_PER_HOUR),
                         .protected_namespaces = cmd_flags[F_PROTECTED].value,
                         .by = cmd_flag_str(F_BY),
                         .every_cycle = cmd_flag_bool(F_BT_EVERY_CYCLE)};
    if (cmd_range("backtest", now, &cfg.from, &cfg.to))
        return CMD_EXIT_USAGE;
    cfg.interval = cmd_flag_num(F_INTERVAL);
    const char *fmt = cmd_flags[F_OUTPUT].value;
    if (strcmp(fmt, "yaml") == 0 || strcmp(fmt, "html") == 0) {
        fprintf(stderr,
                "error: invalid output '%s' for 'backtest': want table, json or csv "
                "('recommend' writes rules files and pages)\n",
                fmt);
        return CMD_EXIT_USAGE;
    }
    enum btreport_format bf = strcmp(fmt, "json") == 0  ? BTREPORT_JSON
                              : strcmp(fmt, "csv") == 0 ? BTREPORT_CSV
                                                        : BTREPORT_TABLE;
    struct promq_cfg pc;
    if (cmd_need_rules_file("backtest") || cmd_prom_config(&pc))
        return CMD_EXIT_USAGE;
    struct ruleset ra = {0}, rb = {0};
    if (cmd_load_rules(cmd_flags[F_RULES_FILE].value, &ra) != 0) {
        rules_free(&ra);
        return CMD_EXIT_USAGE;
    }
    if (cmd_flag_str(F_COMPARE)) {
        if (cmd_load_rules(cmd_flags[F_COMPARE].value, &rb) != 0) {
            rules_free(&ra);
            rules_free(&rb);
            return CMD_EXIT_USAGE;
        }
    }
    FILE *dec = NULL;
    if (cmd_flag_str(F_DECISIONS) && !(dec = fopen(cmd_flags[F_DECISIONS].value, "w"))) {
        fprintf(stderr, "error: cannot write '%s': %s\n", cmd_flags[F_DECISIONS].value,
                strerror(errno));
        rules_free(&ra);
        rules_free(&rb);
        return CMD_EXIT_USAGE;
    }
    /* The engine's own lines (each simulated notice and action) are not news here. */
    if (!cmd_flags[F_LOG_LEVEL].set)
        log_set_level("warn");
    if (pc.insecure)
        log_warn("TLS verification of '%s' is disabled (--prometheus.insecure-skip-verify)",
                 pc.url);
    cfg.lookup = cmd_lookup_new();
    if (!cfg.lookup) {
        if (dec)
            fclose(dec);
        rules_free(&ra);
        rules_free(&rb);
        return CMD_EXIT_USAGE;
    }
    struct promq *q = promq_new(&pc);
    int status = 1;
    struct bt_sim *sa = backtest_one(q, &ra, &cfg, dec, "backtest");
    struct bt_sim *sb = sa && rb.n ? backtest_one(q, &rb, &cfg, NULL, "backtest --compare") : NULL;
    if (dec && fclose(dec) != 0)
        fprintf(stderr, "error: cannot write '%s': %s\n", cmd_flags[F_DECISIONS].value,
                strerror(errno));
    if (sa && (!rb.n || sb)) {
        struct bt_audit_cmp cmp = {0};
        struct sbuf diff = {0}, out = {0};
        cmp.diff = &diff;
        char err[512];
        bool audit = cmd_flags[F_AUDIT_FILE].set;
        if (audit && bt_audit_compare(bt_sim_result(sa), cmd_flags[F_AUDIT_FILE].value, &cmp, err,
                                      sizeof(err)) != 0) {
            fprintf(stderr, "error: %s\n", err);
            status = CMD_EXIT_USAGE;
        } else {
            btreport_render_to(bt_sim_result(sa), sb ? bt_sim_result(sb) : NULL,
                               (size_t)cmd_flag_num(F_TOP), audit ? &cmp : NULL, bf, &out,
                               backtest_write, stdout);
            fwrite(out.buf, 1, out.len, stdout);
            fflush(stdout);
            status = backtest_failures(bt_sim_result(sa));
            if (sb && backtest_failures(bt_sim_result(sb)))
                status = CMD_EXIT_RULE_ERROR;
        }
        sbuf_free(&out);
        sbuf_free(&diff);
    }
    bt_sim_free(sa);
    bt_sim_free(sb);
    btl_free(cfg.lookup);
    promq_free(q);
    rules_free(&ra);
    rules_free(&rb);
    return status;
}
