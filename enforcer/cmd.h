/*
 * The enforcer's commands (git's builtin.h): one `cmd_*` function per command, each in its own
 * cmd_NAME.c, dispatched by main.c's command table; and what they share, in cmd_flags.c: the
 * flag table, in which every flag names the group it belongs to (main.c's table says which
 * groups apply to which command), and the helpers that turn flags into clients and rules, so
 * that no command builds a Kubernetes client or loads a rules file its own way.
 *
 * Adding a command: a cmd_NAME.c with `int cmd_NAME(char *const *args, size_t nargs)`, its
 * prototype below, and one row in main.c's table (name, function, arity, flag groups).
 */
#ifndef GPURECLAIM_CMD_H
#define GPURECLAIM_CMD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "flags.h"
#include "kube.h"
#include "promq.h"
#include "rules.h"

#define CMD_EXIT_USAGE      FLAGS_EXIT_USAGE
#define CMD_EXIT_NO_MATCH   2
#define CMD_EXIT_RULE_ERROR 3

/*
 * Flag groups: a flag belongs to one (cmd_flag_group), a command takes a set of them (main.c).
 * A flag of a group its command does not take is refused when set. The global flags (--log.*,
 * --help, --version) are in none and apply everywhere.
 */
enum {
    CMD_G_RULES = 1u << 0,      /* --rules.file */
    CMD_G_PROM = 1u << 1,       /* --prometheus.*: the client of every evaluation */
    CMD_G_DRY_RUN = 1u << 2,    /* --dry-run */
    CMD_G_AT = 1u << 3,         /* --at */
    CMD_G_OUTPUT = 1u << 4,     /* --output */
    CMD_G_STATS = 1u << 5,      /* --stats */
    CMD_G_EXPLAIN = 1u << 6,    /* --workload, --rule */
    CMD_G_BACKTEST = 1u << 7,   /* --compare, --top, --decisions, --backtest.source */
    CMD_G_LOOP = 1u << 8,       /* --enforce.interval, --enforce.max-actions-per-hour */
    CMD_G_PROTECT = 1u << 9,    /* --enforce.protected-namespaces */
    CMD_G_AUDIT = 1u << 10,     /* --audit.file */
    CMD_G_KUBE = 1u << 11,      /* --kube.*: the Kubernetes client (cmd_kube_new) */
    CMD_G_RUN = 1u << 12,       /* the daemon's own: --web.*, --notify.*, --leader-elect.*, ... */
    CMD_G_RESTORE = 1u << 13,   /* --namespace */
    CMD_G_RANGE = 1u << 14,     /* the range read: --from, --to, --return-within, --by, ... */
    CMD_G_RECOMMEND = 1u << 15, /* the grid and the target of `recommend` */
    CMD_G_RUNTIME = 1u << 16,   /* --runtime.socket, --runtime.scope-label: the container API */
};

/* The flags, in the order --help prints them (cmd_flags.c has the rows). */
enum {
    F_RULES_FILE,
    F_PROM_URL,
    F_PROM_TIMEOUT,
    F_PROM_BEARER,
    F_PROM_USER,
    F_PROM_PASS,
    F_PROM_CA,
    F_PROM_INSECURE,
    F_PROM_MAX_ANSWER,
    F_PROM_READ_PATH,
    F_PROM_READ_OVERLAP,
    F_PROM_INSECURE_CREDS,
    F_DRY_RUN,
    F_AT,
    F_AT_ADVANCE,
    F_AT_STEP,
    F_AT_BEFORE_CYCLE,
    F_AT_DECISIONS,
    F_OUTPUT,
    F_STATS,
    F_FROM,
    F_TO,
    F_RETURN_WITHIN,
    F_BY,
    F_TOP,
    F_COMPARE,
    F_DECISIONS,
    F_BT_MAX_RANGE,
    F_BT_SOURCE,
    F_BT_EVERY_CYCLE,
    F_MAX_RETURN_SHARE,
    F_THRESHOLDS,
    F_IDLE_TIMERS,
    F_NOTICE_PERIODS,
    F_HOLDOUT,
    F_MIN_HISTORY,
    F_MIN_IDLE_PERIODS,
    F_RECOMMEND_ENGINE,
    F_WORKLOAD,
    F_RULE,
    F_INTERVAL,
    F_FULL_READ,
    F_ONCE,
    F_STATE_FILE,
    F_AUDIT_FILE,
    F_PROTECTED,
    F_MAX_PER_HOUR,
    F_RT_SOCKET,
    F_RT_STOP_TIMEOUT,
    F_RT_SCOPE,
    F_KUBE_URL,
    F_KUBE_TOKEN,
    F_KUBE_CA,
    F_KUBE_INSECURE,
    F_KUBE_INSECURE_CREDS,
    F_KUBE_TIMEOUT,
    F_KUBE_CONFIRM,
    F_NAMESPACE,
    F_LE,
    F_LE_NS,
    F_LE_NAME,
    F_LE_DURATION,
    F_LE_RENEW,
    F_LE_RETRY,
    F_NOTIFY_QUEUE,
    F_NOTIFY_TIMEOUT,
    F_NOTIFY_ATTEMPTS,
    F_NOTIFY_DRAIN,
    F_LISTEN,
    F_TELEMETRY,
    F_WEB_CONFIG,
    F_WEB_PER_IP,
    F_WEB_HEADER_TIMEOUT,
    F_LOG_LEVEL,
    F_LOG_FORMAT,
    F_HELP,
    F_VERSION,
    CMD_NFLAGS
};

/* The table flags_parse fills (cmd_flags.c). */
extern struct flags_def cmd_flags[CMD_NFLAGS];

/* The group flag `i` belongs to (0: a global flag). */
unsigned cmd_flag_group(int i);

/* A boolean flag's value; a string flag's value or NULL when empty; a duration in seconds. */
bool cmd_flag_bool(int i);
const char *cmd_flag_str(int i);
double cmd_flag_num(int i);

/* 0, or -1 with "error: 'CMD' needs --rules.file" on stderr. */
int cmd_need_rules_file(const char *cmd);

/*
 * Load the rules file `path` (--rules.file, --compare): every error on stderr, then
 * "error: rules file 'PATH' did not load". 0 or -1; free rs with rules_free either way.
 */
int cmd_load_rules(const char *path, struct ruleset *rs);

/* The --prometheus.* flags as a client's configuration: 0, or -1 with the error on stderr. */
int cmd_prom_config(struct promq_cfg *c);

/* --at as Unix seconds (now when unset): 0, or -1 with the error on stderr. */
int cmd_eval_time(double *at);

/* A --from or --to flag: RFC 3339, Unix seconds, or a duration back from `now` ("7d"). */
int cmd_range_time(int flag, double now, double *out);

/*
 * --from and --to of `cmd` (backtest, recommend) checked: --from given, before --to, --to not
 * in the future, within --backtest.max-range. 0, or -1 with the error on stderr.
 */
int cmd_range(const char *cmd, double now, double *from, double *to);

/* Whether the Kubernetes API is to be used: --kube.api-url, or inside a cluster. */
bool cmd_kube_wanted(void);

/*
 * The one Kubernetes client built from the --kube.* flags, for every command that talks to
 * the API. `extra` gives what is the caller's (stop, gate, gate_arg, and a timeout when not
 * 0, else --kube.timeout); NULL for none. NULL with "error: ..." on stderr when it cannot be
 * built (a token over http://, an unreadable CA).
 */
struct kube *cmd_kube_new(const struct kube_cfg *extra);

/*
 * backtest's and recommend's look-up of the workloads as they are now (btlookup.h): through
 * the --kube.* client (cmd_kube_wanted) and the --runtime.* container API when given, either
 * alone, or neither (nothing can then be checked, and the output says so). NULL with
 * "error: ..." on stderr when the Kubernetes client cannot be built.
 */
struct btl *cmd_lookup_new(void);

/* The commands: `args` are the positional arguments after the command's name. */
int cmd_check(char *const *args, size_t nargs);
int cmd_rules_schema(char *const *args, size_t nargs);
int cmd_plan(char *const *args, size_t nargs);
int cmd_explain(char *const *args, size_t nargs);
int cmd_run(char *const *args, size_t nargs);
int cmd_backtest(char *const *args, size_t nargs);
int cmd_recommend(char *const *args, size_t nargs);
int cmd_restore(char *const *args, size_t nargs);

#endif
