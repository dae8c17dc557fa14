/*
 * What the enforcer's commands share (cmd.h): the flag table, each row naming its group, and
 * the helpers that turn flags into what a command needs: the Prometheus client's
 * configuration, the evaluation time, the rules (--rules.file and --compare alike) and the
 * one Kubernetes client every command that talks to the API builds (plan, explain, run's
 * engine, permission check and Lease, restore). A flag's meaning is here once, so a command
 * cannot read it differently from another.
 *
 * Flags follow node_exporter and are parsed by the module the exporter uses too (flags.h):
 * one row per flag, whose type and range are checked at parse time and from which --help and
 * docs/flags.md are printed (main.c), so parsing, defaults and help cannot drift apart.
 */
#include "cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "rawread.h"
#include "rfc3339.h"

struct flags_def cmd_flags[CMD_NFLAGS] = {
    [F_RULES_FILE] = {"rules.file", FLAGS_STRING, "", "rules file (YAML, apiVersion gpureclaim/v1)",
                      .group = CMD_G_RULES},
    [F_PROM_URL] = {"prometheus.url", FLAGS_STRING, "http://localhost:9090",
                    "base URL of the Prometheus HTTP API", .group = CMD_G_PROM},
    [F_PROM_TIMEOUT] = {"prometheus.timeout", FLAGS_DURATION, "30s", "timeout of one query",
                        .group = CMD_G_PROM},
    [F_PROM_BEARER] = {"prometheus.bearer-token-file", FLAGS_STRING, "",
                       "file with a bearer token for Prometheus (re-read on every request)",
                       .group = CMD_G_PROM},
    [F_PROM_USER] = {"prometheus.basic-auth-user", FLAGS_STRING, "", "basic auth user",
                     .group = CMD_G_PROM},
    [F_PROM_PASS] = {"prometheus.basic-auth-password-file", FLAGS_STRING, "",
                     "file with the basic auth password", .group = CMD_G_PROM},
    [F_PROM_CA] = {"prometheus.ca-file", FLAGS_STRING, "", "CA bundle to verify Prometheus (https)",
                   .group = CMD_G_PROM},
    [F_PROM_INSECURE] = {"prometheus.insecure-skip-verify", FLAGS_BOOL, "false",
                         "do not verify Prometheus' TLS certificate (logged as a warning)",
                         .group = CMD_G_PROM},
    [F_PROM_MAX_ANSWER] = {"prometheus.max-answer-bytes", FLAGS_COUNT, "134217728",
                           "cap on one answer's series once parsed; a larger answer fails the "
                           "query of the rules that use it",
                           .min = 1024, .max = 9007199254740992.0, .group = CMD_G_PROM},
    [F_PROM_READ_PATH] = {"prometheus.read-path", FLAGS_STRING, "auto",
                          "how rules with a selector as activity read it: auto (remote read or "
                          "VictoriaMetrics export where offered, else PromQL), remote-read, "
                          "export or promql",
                          .group = CMD_G_PROM},
    [F_PROM_READ_OVERLAP] = {"prometheus.read-overlap", FLAGS_DURATION, "30s",
                             "each cycle reads the raw samples since its last read and "
                             "this much before, for samples that arrive late",
                             .min = 0, .max = 86400.0, .group = CMD_G_RUN},
    [F_PROM_INSECURE_CREDS] = {"prometheus.allow-insecure-credentials", FLAGS_BOOL, "false",
                               "send the bearer token or basic auth password over plain http://",
                               .group = CMD_G_PROM},
    [F_DRY_RUN] = {"dry-run", FLAGS_BOOL, "true",
                   "only report decisions; --no-dry-run lets rules with an action act "
                   "(restore: acts unless --dry-run is given)",
                   .group = CMD_G_DRY_RUN},
    [F_AT] = {"at", FLAGS_STRING, "",
              "plan/explain: evaluation time, RFC 3339 or Unix seconds (default now); "
              "run: a fixed time for every cycle, for tests",
              .group = CMD_G_AT},
    [F_AT_ADVANCE] = {"at.advance", FLAGS_BOOL, "false",
                      "with --at, the clock starts at that time and advances (for tests)",
                      .group = CMD_G_RUN},
    [F_AT_STEP] = {"at.step", FLAGS_DURATION, "0s",
                   "with --at, cycle k evaluates at --at + k x this (for tests)", .min = 0,
                   .max = 86400.0 * 365, .group = CMD_G_RUN},
    [F_AT_BEFORE_CYCLE] = {"at.before-cycle", FLAGS_STRING, "",
                           "a shell command run before each cycle with "
                           "GPURECLAIM_CYCLE_TIME set; a non-zero exit stops run (for tests)",
                           .group = CMD_G_RUN},
    [F_AT_DECISIONS] = {"at.decisions", FLAGS_STRING, "",
                        "append each cycle's decisions to this file, a line '@ TIME' and "
                        "then plan's JSON (for tests)",
                        .group = CMD_G_RUN},
    [F_OUTPUT] = {"output", FLAGS_CHOICE, "table",
                  "plan: output format, table or json; backtest: table, json or csv; "
                  "recommend: table, json, csv, yaml (a rules file) or html (a page with a "
                  "chart per group)",
                  .choices = "table,json,csv,yaml,html", .group = CMD_G_OUTPUT},
    [F_STATS] = {"stats", FLAGS_BOOL, "false",
                 "print requests made and timings to stderr (backtest: the workload-cycles "
                 "judged and carried; recommend: the grid points the fast pass and the engine "
                 "scored)",
                 .group = CMD_G_STATS},
    [F_FROM] = {"from", FLAGS_STRING, "",
                "start of the range, RFC 3339, Unix seconds or a duration back from "
                "now ('7d')",
                .group = CMD_G_RANGE},
    [F_TO] = {"to", FLAGS_STRING, "", "end of the range, as --from (default now)",
              .group = CMD_G_RANGE},
    [F_RETURN_WITHIN] = {"return-within", FLAGS_DURATION, "1h",
                         "a reclaimed workload busy again this soon counts as a "
                         "return (work interrupted)",
                         .group = CMD_G_RANGE},
    [F_BY] = {"by", FLAGS_STRING, "",
              "break the results down by this label (e.g. namespace); recommend: "
              "one recommendation per value (default namespace)",
              .group = CMD_G_RANGE},
    [F_TOP] = {"top", FLAGS_COUNT, "0",
               "list this many workloads with the most GPU-hours freed and the "
               "reclaims interrupted soonest",
               .min = 0, .max = 10000, .group = CMD_G_BACKTEST},
    [F_COMPARE] = {"compare", FLAGS_STRING, "",
                   "a second rules file, run over the same range and shown beside",
                   .group = CMD_G_BACKTEST},
    [F_DECISIONS] = {"decisions", FLAGS_STRING, "",
                     "write every decision of every cycle to this file (JSON lines)",
                     .group = CMD_G_BACKTEST},
    [F_BT_MAX_RANGE] = {"backtest.max-range", FLAGS_DURATION, "31d", "longest range accepted",
                        .group = CMD_G_RANGE},
    [F_BT_SOURCE] = {"backtest.source", FLAGS_CHOICE, "replay",
                     "how the history is read: replay (each raw sample once) or "
                     "per-cycle (the queries of 'plan --at' at every cycle time, slow: to "
                     "compare)",
                     .choices = "replay,per-cycle", .group = CMD_G_BACKTEST},
    [F_BT_EVERY_CYCLE] = {"backtest.every-cycle", FLAGS_BOOL, "false",
                          "judge every workload and step the engine over every decision at "
                          "every cycle instead of only what can have changed (slow: to compare)",
                          .group = CMD_G_BACKTEST},
    [F_MAX_RETURN_SHARE] = {"max-return-share", FLAGS_STRING, "10%",
                            "the largest share of reclaims that may come back within "
                            "--return-within",
                            .group = CMD_G_RECOMMEND},
    [F_THRESHOLDS] = {"thresholds", FLAGS_STRING, "1,2,5,10,20",
                      "thresholds to try, percent, comma-separated", .group = CMD_G_RECOMMEND},
    [F_IDLE_TIMERS] = {"idle-timers", FLAGS_STRING, "10m,15m,30m,1h,2h,4h,8h,24h",
                       "idle timers to try, comma-separated", .group = CMD_G_RECOMMEND},
    [F_NOTICE_PERIODS] = {"notice-periods", FLAGS_STRING, "0s,15m",
                          "notice periods to try, comma-separated", .group = CMD_G_RECOMMEND},
    [F_HOLDOUT] = {"holdout", FLAGS_STRING, "25%",
                   "the last part of the range kept out of the choice and scored apart "
                   "(0: choose on the whole range)",
                   .group = CMD_G_RECOMMEND},
    [F_MIN_HISTORY] = {"min-history", FLAGS_DURATION, "3d",
                       "least data in the range chosen on; less: not enough data", .min = 0,
                       .max = 86400.0 * 365, .group = CMD_G_RECOMMEND},
    [F_MIN_IDLE_PERIODS] = {"min-idle-periods", FLAGS_COUNT, "10",
                            "least reclaims of the most eager grid point (idle periods seen); "
                            "fewer: not enough data",
                            .min = 0, .max = 1000000, .group = CMD_G_RECOMMEND},
    [F_RECOMMEND_ENGINE] = {"recommend.engine", FLAGS_BOOL, "false",
                            "score every grid point with a simulation of its own instead of "
                            "the fast pass (the reference it is compared with)",
                            .group = CMD_G_RECOMMEND},
    [F_WORKLOAD] = {"workload", FLAGS_STRING, "",
                    "labels of the workload, e.g. 'namespace=\"ml\",pod=\"x\"'",
                    .group = CMD_G_EXPLAIN},
    [F_RULE] = {"rule", FLAGS_STRING, "", "only this rule", .group = CMD_G_EXPLAIN},
    [F_INTERVAL] = {"enforce.interval", FLAGS_DURATION, "1m", "time between evaluations",
                    .group = CMD_G_LOOP},
    [F_FULL_READ] = {"enforce.full-read-interval", FLAGS_DURATION, "1h",
                     "time between reads of the whole window; in between a cycle reads "
                     "only what is new (0: the whole window every cycle)",
                     .min = 0, .max = 86400.0 * 365, .group = CMD_G_RUN},
    [F_ONCE] = {"once", FLAGS_BOOL, "false",
                "one evaluation (and its actions), no metrics server, then exit",
                .group = CMD_G_RUN},
    [F_STATE_FILE] = {"state.file", FLAGS_STRING, "/var/lib/gpureclaim/state.json",
                      "notices and actions taken, kept across restarts (must be writable "
                      "with --no-dry-run)",
                      .group = CMD_G_RUN},
    [F_AUDIT_FILE] = {"audit.file", FLAGS_STRING, "/var/log/gpureclaim/audit.jsonl",
                      "run: JSON-lines audit of notices, actions, spares and skips ('-': stdout); "
                      "backtest: an audit file to compare the simulation with; restore: the "
                      "audit of the restore (required when given, else best effort)",
                      .group = CMD_G_AUDIT},
    [F_PROTECTED] = {"enforce.protected-namespaces", FLAGS_STRING,
                     "kube-system,kube-public,kube-node-lease,gpureclaim",
                     "comma-separated namespaces never acted on", .group = CMD_G_PROTECT},
    [F_MAX_PER_HOUR] = {"enforce.max-actions-per-hour", FLAGS_COUNT, "10",
                        "cap on mutating calls per hour, all rules together (0: no "
                        "cap)",
                        .min = 0, .max = 1000000, .group = CMD_G_LOOP},
    [F_RT_SOCKET] = {"runtime.socket", FLAGS_STRING, "",
                     "Docker/Podman API socket for rules with action 'stop' (backtest, "
                     "recommend: to look their containers up)",
                     .group = CMD_G_RUNTIME},
    [F_RT_STOP_TIMEOUT] = {"runtime.stop-timeout", FLAGS_DURATION, "30s",
                           "time between SIGTERM and SIGKILL when stopping a container",
                           .group = CMD_G_RUN},
    [F_RT_SCOPE] = {"runtime.scope-label", FLAGS_STRING, "",
                    "act only on containers with this label ('key' or 'key=value'; '' for "
                    "all)",
                    .group = CMD_G_RUNTIME},
    [F_KUBE_URL] = {"kube.api-url", FLAGS_STRING, "",
                    "Kubernetes API URL (default in-cluster when KUBERNETES_SERVICE_HOST is "
                    "set)",
                    .group = CMD_G_KUBE},
    [F_KUBE_TOKEN] = {"kube.token-file", FLAGS_STRING, KUBE_SA_DIR "/token",
                      "bearer token file, re-read on every request ('' for none)",
                      .group = CMD_G_KUBE},
    [F_KUBE_CA] = {"kube.ca-file", FLAGS_STRING, KUBE_SA_DIR "/ca.crt",
                   "CA bundle of the Kubernetes API (https)", .group = CMD_G_KUBE},
    [F_KUBE_INSECURE] = {"kube.insecure-skip-tls-verify", FLAGS_BOOL, "false",
                         "do not verify the Kubernetes API certificate (logged as a warning)",
                         .group = CMD_G_KUBE},
    [F_KUBE_INSECURE_CREDS] = {"kube.allow-insecure-credentials", FLAGS_BOOL, "false",
                               "send the token over a plain http:// --kube.api-url",
                               .group = CMD_G_KUBE},
    [F_KUBE_TIMEOUT] = {"kube.timeout", FLAGS_DURATION, "10s",
                        "timeout of one Kubernetes API request", .group = CMD_G_KUBE},
    [F_KUBE_CONFIRM] = {"kube.confirm-pressure", FLAGS_BOOL, "false",
                        "notice and act on DuringGPUPressure rules only while a Pending "
                        "pod or a Kueue Workload waits for the workload's GPU resource",
                        .group = CMD_G_RUN},
    [F_NAMESPACE] = {"namespace", FLAGS_STRING, "default",
                     "namespace of KIND/NAME (-n; NS/KIND/NAME names it too)",
                     .group = CMD_G_RESTORE},
    [F_LE] = {"leader-elect", FLAGS_BOOL, "false",
              "elect a leader on a Kubernetes Lease; only the leader sends notices and "
              "acts (for more than one replica)",
              .group = CMD_G_RUN},
    [F_LE_NS] = {"leader-elect.namespace", FLAGS_STRING, "",
                 "namespace of the Lease (default: the service account's namespace)",
                 .group = CMD_G_RUN},
    [F_LE_NAME] = {"leader-elect.lease-name", FLAGS_STRING, "gpureclaim-enforcer",
                   "name of the Lease", .group = CMD_G_RUN},
    [F_LE_DURATION] = {"leader-elect.lease-duration", FLAGS_DURATION, "15s",
                       "how long standbys wait after the last renewal before taking over",
                       .group = CMD_G_RUN},
    [F_LE_RENEW] = {"leader-elect.renew-deadline", FLAGS_DURATION, "10s",
                    "the leader stops acting when it could not renew for this long",
                    .group = CMD_G_RUN},
    [F_LE_RETRY] = {"leader-elect.retry-period", FLAGS_DURATION, "2s",
                    "time between attempts to acquire or renew", .group = CMD_G_RUN},
    [F_NOTIFY_QUEUE] = {"notify.queue-size", FLAGS_COUNT, "1000",
                        "webhook notifications held at most; more are dropped (counted)", .min = 1,
                        .max = 1000000, .group = CMD_G_RUN},
    [F_NOTIFY_TIMEOUT] = {"notify.timeout", FLAGS_DURATION, "10s", "timeout of one webhook call",
                          .group = CMD_G_RUN},
    [F_NOTIFY_ATTEMPTS] = {"notify.max-attempts", FLAGS_COUNT, "5",
                           "webhook attempts (exponential backoff from 1s) before giving up",
                           .min = 1, .max = 100, .group = CMD_G_RUN},
    [F_NOTIFY_DRAIN] = {"notify.drain-timeout", FLAGS_DURATION, "5s",
                        "at shutdown, time left to send queued webhook notifications",
                        .group = CMD_G_RUN},
    [F_LISTEN] = {"web.listen-address", FLAGS_STRING, ":9842", "address to serve metrics on",
                  .group = CMD_G_RUN},
    [F_TELEMETRY] = {"web.telemetry-path", FLAGS_URL_PATH, "/metrics", "path of the metrics",
                     .group = CMD_G_RUN},
    [F_WEB_CONFIG] = {"web.config.file", FLAGS_STRING, "",
                      "TLS, basic auth and headers of the metrics server (exporter-toolkit "
                      "format; re-read when it changes)",
                      .group = CMD_G_RUN},
    [F_WEB_PER_IP] = {"web.max-connections-per-ip", FLAGS_COUNT, "32",
                      "connections one client address (IPv6: one /64) may hold", .min = 1,
                      .max = 100000, .group = CMD_G_RUN},
    [F_WEB_HEADER_TIMEOUT] = {"web.read-header-timeout", FLAGS_DURATION, "10s",
                              "time a client has to send a complete request header", .min = 0.1,
                              .max = 3600, .group = CMD_G_RUN},
    [F_LOG_LEVEL] = {"log.level", FLAGS_CHOICE, "info", "debug, info, warn or error",
                     .choices = "debug,info,warn,error"},
    [F_LOG_FORMAT] = {"log.format", FLAGS_CHOICE, "logfmt", "logfmt or json",
                      .choices = "logfmt,json"},
    [F_HELP] = {"help", FLAGS_SWITCH, "false", "show this help and exit"},
    [F_VERSION] = {"version", FLAGS_SWITCH, "false", "show the version and exit"},
};

unsigned cmd_flag_group(int i)
{
    return cmd_flags[i].group;
}

bool cmd_flag_bool(int i)
{
    return cmd_flags[i].num != 0;
}

const char *cmd_flag_str(int i)
{
    return cmd_flags[i].value[0] ? cmd_flags[i].value : NULL;
}

/* flags_parse has checked a duration or count against its row, so this cannot fail. */
double cmd_flag_num(int i)
{
    return cmd_flags[i].num;
}

int cmd_need_rules_file(const char *cmd)
{
    if (!cmd_flag_str(F_RULES_FILE)) {
        fprintf(stderr, "error: '%s' needs --rules.file\n", cmd);
        return -1;
    }
    return 0;
}

int cmd_load_rules(const char *path, struct ruleset *rs)
{
    struct rules_errors errs = {0};
    int rc = rules_load_file(path, rs, &errs);
    for (size_t i = 0; i < errs.n; i++)
        fprintf(stderr, "%s\n", errs.msg[i]);
    if (rc != 0)
        fprintf(stderr, "error: rules file '%s' did not load\n", path);
    rules_errors_free(&errs);
    return rc;
}

int cmd_prom_config(struct promq_cfg *c)
{
    *c = (struct promq_cfg){.url = cmd_flags[F_PROM_URL].value,
                            .bearer_file = cmd_flag_str(F_PROM_BEARER),
                            .basic_user = cmd_flag_str(F_PROM_USER),
                            .basic_pass_file = cmd_flag_str(F_PROM_PASS),
                            .ca_file = cmd_flag_str(F_PROM_CA),
                            .insecure = cmd_flag_bool(F_PROM_INSECURE)};
    if (!c->url[0]) {
        fprintf(stderr, "error: '--prometheus.url' is empty\n");
        return -1;
    }
    c->max_answer_bytes = (size_t)cmd_flag_num(F_PROM_MAX_ANSWER);
    if (rawread_path_parse(cmd_flags[F_PROM_READ_PATH].value, &c->read_path) < 0) {
        fprintf(stderr,
                "error: invalid read path '%s' for '--%s': want auto, remote-read, export or "
                "promql\n",
                cmd_flags[F_PROM_READ_PATH].value, cmd_flags[F_PROM_READ_PATH].name);
        return -1;
    }
    /* Credentials in clear text can be read and replayed by anyone on the path. */
    if ((c->bearer_file || c->basic_user || c->basic_pass_file) &&
        strncasecmp(c->url, "http://", 7) == 0 && !cmd_flag_bool(F_PROM_INSECURE_CREDS)) {
        fprintf(stderr,
                "error: refusing to send Prometheus credentials over plain http to '%s': use "
                "https or --prometheus.allow-insecure-credentials\n",
                c->url);
        return -1;
    }
    c->timeout = cmd_flag_num(F_PROM_TIMEOUT);
    return 0;
}

int cmd_eval_time(double *at)
{
    if (!cmd_flag_str(F_AT)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        *at = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
        return 0;
    }
    char err[256];
    if (rfc3339_parse(cmd_flags[F_AT].value, at, err, sizeof(err)) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return -1;
    }
    return 0;
}

bool cmd_kube_wanted(void)
{
    return cmd_flag_str(F_KUBE_URL) || getenv("KUBERNETES_SERVICE_HOST");
}

struct kube *cmd_kube_new(const struct kube_cfg *extra)
{
    struct kube_cfg kc = {0};
    if (extra)
        kc = *extra;
    kc.api_url = cmd_flag_str(F_KUBE_URL);
    kc.token_file = cmd_flags[F_KUBE_TOKEN].value;
    kc.ca_file = cmd_flag_str(F_KUBE_CA);
    kc.insecure = cmd_flag_bool(F_KUBE_INSECURE);
    kc.allow_insecure_credentials = cmd_flag_bool(F_KUBE_INSECURE_CREDS);
    if (!(kc.timeout > 0))
        kc.timeout = cmd_flag_num(F_KUBE_TIMEOUT);
    char err[512];
    struct kube *k = kube_new(&kc, err, sizeof(err));
    if (!k)
        fprintf(stderr, "error: %s\n", err);
    return k;
}
