/*
 * gpureclaim-enforcer: parsing, help, version and the command table (git's git.c with its
 * `commands[]`, Redis' command table with its arity). Each command is a cmd_* function in its
 * own cmd_NAME.c (cmd.h); the flag table and what the commands share is cmd_flags.c.
 *
 *   check FILE...           validate rules files (exit 1 on any error)        cmd_check.c
 *   plan                    one evaluation, printed as a table or JSON        cmd_plan.c
 *   explain                 why one workload is kept or reclaimed             cmd_plan.c
 *   run                     the daemon (daemon.c)                             cmd_run.c
 *   backtest                what the rules would have done over a past range  cmd_backtest.c
 *   recommend               the settings per group the history argues for     cmd_recommend.c
 *   restore [NS/]KIND/NAME  undo a reclaim from the record on the object      cmd_restore.c
 *
 * A row says which flag groups (cmd.h) a command takes; a flag of another group given to it
 * is refused, naming the command and the flag, rather than ignored: `plan --from 7d` reading
 * as a backtest that silently is not one. `help COMMAND` and `COMMAND --help` list only the
 * command's flags, and the hidden `flags-markdown` prints docs/flags.md's per-command tables
 * from the same rows (tests/e2e/flags.sh compares them).
 *
 * Exit status (0 and 1 as in flags.h, for both programs): 0 success; 1 usage, rules or
 * startup error; 2 `explain` matched nothing; 3 `plan`/`explain`/`backtest` could not evaluate
 * a rule (a Prometheus query failed: error, timeout, partial or too large an answer). Decisions
 * are still printed then (the rule's workloads are kept with reason query_error) and the
 * error once on stderr, but a script or CI job must not read "everything kept" as "nothing
 * idle".
 */
#include <ctype.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "flags.h"
#include "log.h"
#include "util.h"

#ifndef GPURECLAIM_VERSION
#define GPURECLAIM_VERSION "unknown"
#endif

#define PROG "gpureclaim-enforcer"

/* What every evaluation reads: the rules, Prometheus, and the Kubernetes objects it acts on. */
#define G_EVAL (CMD_G_RULES | CMD_G_PROM | CMD_G_DRY_RUN | CMD_G_AT | CMD_G_PROTECT | CMD_G_KUBE)

struct command {
    const char *name;
    int (*fn)(char *const *args, size_t nargs);
    /* positional arguments after the name: n exactly, or -n for at least n (Redis' arity) */
    int arity;
    unsigned groups; /* the flag groups it takes (cmd.h); the global flags always apply */
    const char *args, *summary; /* for help; summary NULL: hidden */
};

static const struct command commands[] = {
    {"check", cmd_check, -1, 0, "FILE...", "validate rules files; exit 1 on any error"},
    {"plan", cmd_plan, 0, G_EVAL | CMD_G_OUTPUT | CMD_G_STATS, "",
     "evaluate once and print every decision"},
    {"explain", cmd_explain, 0, G_EVAL | CMD_G_EXPLAIN, "",
     "explain the decision for one workload (--workload)"},
    {"run", cmd_run, 0, G_EVAL | CMD_G_LOOP | CMD_G_AUDIT | CMD_G_RUN | CMD_G_RUNTIME, "",
     "evaluate every --enforce.interval, act, and serve metrics"},
    {"backtest", cmd_backtest, 0,
     CMD_G_RULES | CMD_G_PROM | CMD_G_OUTPUT | CMD_G_STATS | CMD_G_RANGE | CMD_G_BACKTEST |
         CMD_G_LOOP | CMD_G_PROTECT | CMD_G_AUDIT | CMD_G_KUBE | CMD_G_RUNTIME,
     "", "what the rules would have done from --from to --to"},
    {"recommend", cmd_recommend, 0,
     CMD_G_RULES | CMD_G_PROM | CMD_G_OUTPUT | CMD_G_STATS | CMD_G_RANGE | CMD_G_LOOP |
         CMD_G_PROTECT | CMD_G_RECOMMEND | CMD_G_KUBE | CMD_G_RUNTIME,
     "", "the threshold, idle timer and notice period per group that free the most GPU-hours"},
    {"restore", cmd_restore, 1,
     CMD_G_RULES | CMD_G_DRY_RUN | CMD_G_AUDIT | CMD_G_KUBE | CMD_G_RESTORE, "[NS/]KIND/NAME",
     "undo a reclaim from the record on the object (--dry-run: show)"},
    /* Hidden: the key tables of rules/README.md (tests/rules-readme.sh), from the spec. */
    {"rules-schema", cmd_rules_schema, 1, 0, "TABLE", NULL},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *command_find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* Whether flag i applies to `c` (NULL: no command, every flag does). */
static bool applies(const struct command *c, int i)
{
    return !c || !cmd_flag_group(i) || (cmd_flag_group(i) & c->groups);
}

/* The rows of `c`'s flags (all with NULL) that are in `group` (any with ~0u), into rows. */
static size_t select_rows(const struct command *c, unsigned group, struct flags_def *rows)
{
    size_t n = 0;
    for (int i = 0; i < CMD_NFLAGS; i++)
        if (applies(c, i) && (group == ~0u || cmd_flag_group(i) == group))
            rows[n++] = cmd_flags[i];
    return n;
}

/* "plan, explain, run" : the visible commands that take `group` (0: every command). */
static void group_commands(unsigned group, char *out, size_t size)
{
    out[0] = '\0';
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (commands[i].summary && (!group || (commands[i].groups & group)))
            snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? ", " : "",
                     commands[i].name);
}

/* The flag groups in the order of their first flag in the table, into g; their count. */
static size_t groups_in_order(unsigned *g)
{
    size_t n = 0;
    for (int i = 0; i < CMD_NFLAGS; i++) {
        bool seen = false;
        for (size_t j = 0; j < n && !seen; j++)
            seen = g[j] == cmd_flag_group(i);
        if (!seen)
            g[n++] = cmd_flag_group(i);
    }
    return n;
}

static void exit_status_help(FILE *out)
{
    fprintf(out,
            "\nexit status: 0 ok, 1 usage/rules/startup error or restore refused/failed,\n"
            "2 explain matched nothing, 3 plan/explain/backtest could not evaluate a rule (its\n"
            "workloads are kept)\n");
}

/* --help without a command: the commands, then every flag under the commands that take it. */
static void usage(FILE *out)
{
    fprintf(out, "usage: " PROG " [flags] COMMAND [ARGS]\n\n"
                 "Reclaims idle GPUs: decides from Prometheus data which workloads have been "
                 "idle\nfor their rule's idle timer.\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const struct command *c = &commands[i];
        if (!c->summary)
            continue;
        char left[64];
        snprintf(left, sizeof(left), "%s%s%s", c->name, c->args[0] ? " " : "", c->args);
        if (strlen(left) > 23)
            fprintf(out, "  %s\n  %-24s %s\n", left, "", c->summary);
        else
            fprintf(out, "  %-24s %s\n", left, c->summary);
    }
    fprintf(out, "\n'" PROG " help COMMAND' lists only the flags of COMMAND.\n");
    unsigned g[CMD_NFLAGS];
    size_t ng = groups_in_order(g);
    struct flags_def rows[CMD_NFLAGS];
    for (size_t k = 0; k < ng; k++) {
        char who[256];
        group_commands(g[k], who, sizeof(who));
        fprintf(out, "\nflags of %s:\n", g[k] ? who : "every command");
        flags_help(out, rows, select_rows(NULL, g[k], rows));
    }
    exit_status_help(out);
}

static void command_usage(FILE *out, const struct command *c)
{
    struct flags_def rows[CMD_NFLAGS];
    fprintf(out, "usage: " PROG " [flags] %s%s%s\n\n%s\n\nflags:\n", c->name, c->args[0] ? " " : "",
            c->args, c->summary ? c->summary : "");
    flags_help(out, rows, select_rows(c, ~0u, rows));
    exit_status_help(out);
}

static void markdown_rows(const struct flags_def *rows, size_t n)
{
    printf("| flag | default | meaning |\n|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const struct flags_def *f = &rows[i];
        bool b = f->type == FLAGS_BOOL;
        printf("| `--%s%s` | ", b ? "[no-]" : "", f->name);
        if (b || f->type == FLAGS_SWITCH)
            printf("%s", f->type == FLAGS_SWITCH ? "" : strcmp(f->def, "true") ? "off" : "on");
        else
            printf(f->def[0] ? "`%s`" : "unset", f->def);
        printf(" | %s |\n", f->help);
    }
}

/*
 * Hidden `flags-markdown`: docs/flags.md's enforcer tables, one per command, from the rows
 * (tests/e2e/flags.sh checks the page holds exactly this).
 */
static void flags_markdown(void)
{
    struct flags_def rows[CMD_NFLAGS];
    printf("<!-- generated by '" PROG " flags-markdown' from enforcer/cmd_flags.c; "
           "tests/e2e/flags.sh checks it -->\n\n### Every command\n\n");
    markdown_rows(rows, select_rows(NULL, 0, rows));
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const struct command *c = &commands[i];
        if (!c->summary)
            continue;
        size_t n = 0;
        for (int j = 0; j < CMD_NFLAGS; j++)
            if (cmd_flag_group(j) && applies(c, j))
                rows[n++] = cmd_flags[j];
        printf("\n### `%s%s%s`\n\n%c%s.", c->name, c->args[0] ? " " : "", c->args,
               toupper((unsigned char)c->summary[0]), c->summary + 1);
        if (n) {
            printf(" Its flags besides those of every command:\n\n");
            markdown_rows(rows, n);
        } else {
            printf(" It takes only the flags of every command.\n");
        }
    }
}

/* A flag that does not apply to `c` and was given: the first one, named, and 1. */
static int refuse_flags(const struct command *c)
{
    for (int i = 0; i < CMD_NFLAGS; i++) {
        if (cmd_flags[i].set && !applies(c, i)) {
            fprintf(stderr,
                    "error: flag '--%s' does not apply to '%s'\nrun '" PROG
                    " help %s' for its flags\n",
                    cmd_flags[i].name, c->name, c->name);
            return CMD_EXIT_USAGE;
        }
    }
    return 0;
}

static int check_arity(const struct command *c, char *const *args, size_t nargs)
{
    size_t want = (size_t)(c->arity < 0 ? -c->arity : c->arity);
    if (c->arity >= 0 ? nargs == want : nargs >= want)
        return 0;
    if (nargs > want)
        fprintf(stderr, "error: unexpected argument '%s' for '%s'\n", args[want], c->name);
    else
        fprintf(stderr, "error: '%s' needs %s %.*s\n", c->name,
                c->arity < 0 ? "at least one" : "one", (int)strcspn(c->args, "."), c->args);
    return CMD_EXIT_USAGE;
}

int main(int argc, char **argv)
{
#ifdef M_MXFAST
    /*
     * A cycle builds and frees millions of small json-c objects and labels. With glibc's
     * fastbins, every large allocation after such a burst runs malloc_consolidate, which
     * took a fifth of a 10,000-workload `plan` (perf); without them the cycle is ~20 %
     * faster (bench/enforcer.sh).
     */
    mallopt(M_MXFAST, 0);
#endif
    char **pos = xcalloc((size_t)argc + 1, sizeof(char *)), err[512];
    size_t npos;
    int status = CMD_EXIT_USAGE;
    /* kubectl's -n for restore's --namespace (before any "--": later it is a position) */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "-n") == 0)
            argv[i] = (char *)"--namespace";
    if (flags_parse(cmd_flags, CMD_NFLAGS, argc, argv, pos, &npos, err, sizeof(err)) != 0) {
        status = flags_usage_error(PROG, err);
        goto out;
    }
    log_set_level(cmd_flags[F_LOG_LEVEL].value);
    log_set_format(cmd_flags[F_LOG_FORMAT].value);
    flags_log_warnings(cmd_flags, CMD_NFLAGS);
    bool help = npos > 0 && strcmp(pos[0], "help") == 0;
    const char *name = help ? (npos > 1 ? pos[1] : NULL) : (npos > 0 ? pos[0] : NULL);
    const struct command *c = name ? command_find(name) : NULL;
    if (help || cmd_flag_bool(F_HELP)) {
        if (name && !c) {
            fprintf(stderr, "error: unknown command '%s'\n", name);
            goto out;
        }
        c ? command_usage(stdout, c) : usage(stdout);
        status = 0;
        goto out;
    }
    if (cmd_flag_bool(F_VERSION)) {
        printf(PROG " %s\n", GPURECLAIM_VERSION);
        status = 0;
        goto out;
    }
    if (name && strcmp(name, "flags-markdown") == 0 && npos == 1) {
        flags_markdown();
        status = 0;
        goto out;
    }
    if (!name) {
        usage(stderr);
        goto out;
    }
    if (!c) {
        fprintf(stderr, "error: unknown command '%s'\nrun '" PROG " --help' for usage\n", name);
        goto out;
    }
    if (refuse_flags(c) || check_arity(c, pos + 1, npos - 1))
        goto out;
    status = c->fn(pos + 1, npos - 1);
out:
    free(pos);
    return status;
}
