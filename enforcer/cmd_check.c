/*
 * `check FILE...`: validate rules files (rules.h), exit 1 on any error, and warn about rules
 * whose activity costs more or proves less than the user may think; and the hidden
 * `rules-schema TABLE`, the key tables of rules/README.md (tests/rules-readme.sh) printed from
 * the spec. Called by main.c's command table.
 */
#include <stdio.h>

#include "cmd.h"
#include "fetch.h"
#include "promsel.h"
#include "rules.h"

/*
 * `check`: warn about each rule whose activity is an expression. A plain selector's raw sample
 * times are read directly (fetch.c). An expression's selectors look back up to 5 minutes in
 * PromQL, so the enforcer reads the raw samples of each selector it contains and proves them
 * gap-free (exprcov.h): that needs remote read or VictoriaMetrics' export, costs one raw read
 * per selector, and is impossible when the selectors cannot be extracted safely (promsel.h);
 * then every workload of the rule is kept. Warnings do not change the exit status.
 */
static void check_warnings(char *const *paths, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct ruleset rs = {0};
        struct rules_errors errs = {0};
        if (rules_load_file(paths[i], &rs, &errs) == 0) {
            for (size_t j = 0; j < rs.n; j++) {
                const struct rule *r = &rs.rules[j];
                char buf[64], err[256];
                if (!r->q_activity || fetch_coverage_expr(r, buf, sizeof(buf)) != 1)
                    continue;
                printf("%s:%d:%d: warning: rule '%s': 'activity' (%s) is an expression, so its "
                       "result bridges raw holes (its selectors look back up to 5m): ",
                       paths[i], r->activity_line ? r->activity_line : r->line,
                       r->activity_line ? r->activity_col : r->col, r->name, r->q_activity);
                struct promsel ps;
                if (promsel_extract(r->q_activity, &ps, err, sizeof(err)) < 0) {
                    printf("its selectors cannot be extracted safely (%s), so its raw samples "
                           "cannot be proven gap-free and every workload of the rule is kept; ",
                           err);
                } else {
                    printf("the raw samples of its %zu selector%s are read and proven gap-free "
                           "instead, which needs remote read or VictoriaMetrics' export (on a "
                           "server with neither every workload of the rule is kept); ",
                           ps.nsel, ps.nsel == 1 ? "" : "s");
                    promsel_free(&ps);
                }
                printf("a recording rule whose series is used as 'activity' is cheaper and "
                       "works on every server\n");
            }
        }
        rules_errors_free(&errs);
        rules_free(&rs);
    }
}

int cmd_check(char *const *args, size_t nargs)
{
    int status = rules_check_files(args, nargs, stdout) == 0 ? 0 : 1;
    check_warnings(args, nargs);
    return status;
}

int cmd_rules_schema(char *const *args, size_t nargs)
{
    (void)nargs;
    if (rules_schema_markdown(args[0], stdout) == 0)
        return 0;
    fprintf(stderr, "error: unknown table '%s' (rule-keys or queries)\n", args[0]);
    return 1;
}
