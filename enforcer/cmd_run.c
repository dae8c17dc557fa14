/*
 * `run`: the daemon (daemon.c, which owns the loop, the reload and the metrics server), and
 * what this file builds for it from the flags: the action engine with its backends (act.h:
 * Kubernetes, container runtime, webhooks), the permission check (perm.h) and the
 * leader-election Lease (lease.h), each Kubernetes client from cmd_kube_new. Called by
 * main.c's command table.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "act.h"
#include "cmd.h"
#include "daemon.h"
#include "file.h"
#include "lease.h"
#include "log.h"
#include "notify.h"
#include "perm.h"
#include "util.h"

/* The webhook sender of the rules' notify: sections (notify.h). */
static int make_notify(struct act *a)
{
    struct notify_cfg nc = {0};
    nc.timeout = cmd_flag_num(F_NOTIFY_TIMEOUT);
    nc.drain_timeout = cmd_flag_num(F_NOTIFY_DRAIN);
    nc.queue_size = (size_t)cmd_flag_num(F_NOTIFY_QUEUE);
    nc.max_attempts = (unsigned)cmd_flag_num(F_NOTIFY_ATTEMPTS);
    char err[512];
    struct notify *n = notify_new(&nc, err, sizeof(err));
    if (!n) {
        fprintf(stderr, "error: %s\n", err);
        return -1;
    }
    act_set_notify(a, n);
    return 0;
}

/*
 * The action engine for `run`. With --no-dry-run a state or audit file that cannot be used
 * is a startup error: acting without a record could act twice or exceed the hourly cap. In
 * dry run nothing is ever mutated, so the engine then falls back to memory and no audit file
 * (with a warning) rather than refusing to report.
 */
static int make_act(bool dry_run, struct lease *lease, struct act **out)
{
    *out = NULL;
    double stop_timeout = cmd_flag_num(F_RT_STOP_TIMEOUT);
    struct act_cfg ac = {.state_file = cmd_flag_str(F_STATE_FILE),
                         .audit_file = cmd_flag_str(F_AUDIT_FILE),
                         .protected_namespaces = cmd_flags[F_PROTECTED].value,
                         .max_actions_per_hour = (unsigned)cmd_flag_num(F_MAX_PER_HOUR)};
    char err[512];
    struct act *a = act_new(&ac, err, sizeof(err));
    if (!a && !dry_run) {
        fprintf(stderr, "error: %s; refusing to act without it\n", err);
        return -1;
    }
    if (!a) {
        log_warn("%s; dry run: continuing without a state and audit file", err);
        ac.state_file = ac.audit_file = NULL;
        a = act_new(&ac, err, sizeof(err));
        if (!a) {
            fprintf(stderr, "error: %s\n", err);
            return -1;
        }
    }
    if (cmd_flag_str(F_RT_SOCKET)) {
        struct docker_cfg dcfg = {.socket = cmd_flag_str(F_RT_SOCKET), .timeout = 10};
        act_set_runtime(
            a, act_runtime_new(&dcfg, (int)(stop_timeout + 0.5), cmd_flag_str(F_RT_SCOPE)));
    }
    if (cmd_kube_wanted()) {
        struct kube_cfg kc = {
            .stop = daemon_stop_flag(), .gate = lease ? lease_gate : NULL, .gate_arg = lease};
        struct kube *k = cmd_kube_new(&kc);
        if (!k) {
            act_free(a);
            return -1;
        }
        act_set_kube(a, act_kube_new(k));
        if (cmd_flag_bool(F_KUBE_CONFIRM))
            act_set_kube_confirm(a, act_kube_confirm_pressure);
    }
    if (make_notify(a) != 0) {
        act_free(a);
        return -1;
    }
    act_set_stop(a, daemon_stop_flag());
    if (lease)
        act_set_gate(a, lease_gate, lease);
    *out = a;
    return 0;
}

/* The leader-election Lease's namespace: the flag, else the pod's own ("" when neither). */
static void le_namespace(char *ns, size_t size)
{
    char err[512];
    ns[0] = '\0';
    if (cmd_flag_str(F_LE_NS)) {
        str_copy(ns, size, cmd_flag_str(F_LE_NS));
    } else {
        char *s = secret_read(KUBE_SA_DIR "/namespace", "namespace", err, sizeof(err));
        if (s) {
            str_copy(ns, size, str_rtrim(s));
            secret_free(s);
        }
    }
}

/*
 * The permission check (perm.h) when the Kubernetes backend is in use: a client of its own
 * (a standby checks too, so no leader gate), stopped by the signal like the engine's.
 */
static int make_perm(struct perm **out)
{
    *out = NULL;
    if (!cmd_kube_wanted())
        return 0;
    struct kube_cfg kc = {.stop = daemon_stop_flag()};
    char ns[254] = "";
    struct kube *k = cmd_kube_new(&kc);
    if (!k)
        return -1;
    if (cmd_flag_bool(F_LE))
        le_namespace(ns, sizeof(ns));
    struct perm_cfg pc = {.confirm_pressure = cmd_flag_bool(F_KUBE_CONFIRM),
                          .protected_namespaces = cmd_flags[F_PROTECTED].value,
                          .lease_ns = ns[0] ? ns : NULL,
                          .lease_name = cmd_flags[F_LE_NAME].value};
    *out = perm_new(k, &pc);
    return 0;
}

/*
 * --leader-elect: a Kubernetes client of its own for the election thread (a client is not
 * shared between threads) and the Lease settings, client-go's defaults.
 */
static int make_lease(struct lease **out)
{
    *out = NULL;
    if (!cmd_flag_bool(F_LE))
        return 0;
    struct lease_cfg lc = {.name = cmd_flags[F_LE_NAME].value};
    double kube_timeout = cmd_flag_num(F_KUBE_TIMEOUT);
    lc.lease_duration = cmd_flag_num(F_LE_DURATION);
    lc.renew_deadline = cmd_flag_num(F_LE_RENEW);
    lc.retry_period = cmd_flag_num(F_LE_RETRY);
    char ns[254] = "", host[256] = "", err[512];
    le_namespace(ns, sizeof(ns));
    if (!ns[0]) {
        fprintf(stderr, "error: --leader-elect needs --leader-elect.namespace outside a pod\n");
        return -1;
    }
    lc.ns = ns;
    lc.call_timeout = kube_timeout;
    /* The pod name, as client-go deployments pass it through the downward API. */
    lc.identity = getenv("POD_NAME");
    if (!lc.identity || !*lc.identity) {
        gethostname(host, sizeof(host) - 1);
        lc.identity = host;
    }
    /* A hung renewal must not outlast the deadline it counts against. No stop flag: the
       Lease is released after the signal (kube_cfg.stop). */
    struct kube_cfg kc = {.timeout = fmin(kube_timeout, lc.renew_deadline / 2)};
    struct kube *k = cmd_kube_new(&kc);
    if (!k)
        return -1;
    if (!(*out = lease_start(&lc, k, err, sizeof(err)))) {
        kube_free(k);
        fprintf(stderr, "error: %s\n", err);
        return -1;
    }
    return 0;
}

int cmd_run(char *const *args, size_t nargs)
{
    (void)args, (void)nargs;
    struct daemon_cfg dc = {.rules_file = cmd_flags[F_RULES_FILE].value,
                            .listen = cmd_flags[F_LISTEN].value,
                            .telemetry_path = cmd_flags[F_TELEMETRY].value,
                            .dry_run = cmd_flag_bool(F_DRY_RUN),
                            .once = cmd_flag_bool(F_ONCE),
                            .at_advance = cmd_flag_bool(F_AT_ADVANCE),
                            .at = NAN};
    if (cmd_need_rules_file("run") || cmd_prom_config(&dc.prom))
        return CMD_EXIT_USAGE;
    dc.interval = cmd_flag_num(F_INTERVAL);
    dc.read_overlap = cmd_flag_num(F_PROM_READ_OVERLAP);
    dc.full_read_interval = cmd_flag_num(F_FULL_READ);
    dc.at_step = cmd_flag_num(F_AT_STEP);
    dc.prom.proofs = true; /* as plan: selector rules judged from proofs */
    dc.before_cycle = cmd_flag_str(F_AT_BEFORE_CYCLE);
    dc.decisions_file = cmd_flag_str(F_AT_DECISIONS);
    if (cmd_flag_str(F_AT) && cmd_eval_time(&dc.at) != 0)
        return CMD_EXIT_USAGE;
    dc.web.header_timeout = cmd_flag_num(F_WEB_HEADER_TIMEOUT);
    dc.web.max_conn_per_ip = (unsigned)cmd_flag_num(F_WEB_PER_IP);
    dc.web.config_file = cmd_flag_str(F_WEB_CONFIG);
    if (make_lease(&dc.lease) != 0)
        return CMD_EXIT_USAGE;
    if (make_act(dc.dry_run, dc.lease, &dc.act) != 0) {
        lease_stop(dc.lease);
        return CMD_EXIT_USAGE;
    }
    if (make_perm(&dc.perm) != 0) {
        act_free(dc.act);
        lease_stop(dc.lease);
        return CMD_EXIT_USAGE;
    }
    int status = daemon_run(&dc);
    lease_stop(dc.lease);
    act_free(dc.act);
    perm_free(dc.perm);
    return status;
}
