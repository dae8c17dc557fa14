/*
 * `restore [NS/]KIND/NAME`: the command, from the flags to the call: the target as typed,
 * the kinds table (built in, plus the `kinds:` of --rules.file when given), the Kubernetes
 * client (cmd_kube_new) and the audit file, handed to restore_run (restore_run.c), which
 * reads, decides (restore_plan.c), undoes and records. Called by main.c's command table.
 */
#include <stdbool.h>
#include <stdio.h>

#include "act.h"
#include "audit.h"
#include "cmd.h"
#include "kinds.h"
#include "log.h"
#include "restore.h"

/*
 * `restore [NS/]KIND/NAME`: undo a reclaim from the record on the object (restore.h, which
 * does the work); the table is the built-in one plus the `kinds:` of --rules.file when given.
 * Exit status: 0 restored (or, with --dry-run, would be), 1 refused or failed (a sentence on
 * stderr), CMD_EXIT_USAGE for a target that does not parse or a kind the table does not know.
 */
int cmd_restore(char *const *args, size_t nargs)
{
    (void)nargs;
    const char *target = args[0];
    struct restore_target t;
    char err[1024];
    if (restore_target_parse(target, cmd_flags[F_NAMESPACE].value, cmd_flags[F_NAMESPACE].set, &t,
                             err, sizeof(err)) < 0) {
        fprintf(stderr, "error: %s\n", err);
        return CMD_EXIT_USAGE;
    }
    int status = CMD_EXIT_USAGE;
    struct ruleset rs = {0};
    struct kube *k = NULL;
    struct audit *au = NULL;
    if (cmd_flag_str(F_RULES_FILE) && cmd_load_rules(cmd_flags[F_RULES_FILE].value, &rs) != 0)
        goto out;
    const struct kind_def *def =
        restore_kind(rs.kinds ? rs.kinds : kinds_builtin(), t.kind, err, sizeof(err));
    if (!def) {
        fprintf(stderr, "error: %s\n", err);
        goto out;
    }
    if (!cmd_kube_wanted()) {
        fprintf(stderr, "error: 'restore' needs the Kubernetes API: --kube.api-url, or run it in "
                        "a pod\n");
        goto out;
    }
    if (!(k = cmd_kube_new(NULL)))
        goto out;
    /* The audit trail: required when named, best effort at its default path (an SRE's
       laptop has no /var/log/gpureclaim); the Event on the object is the record then. */
    bool dry = cmd_flags[F_DRY_RUN].set && cmd_flag_bool(F_DRY_RUN);
    if (!dry && cmd_flag_str(F_AUDIT_FILE)) {
        au = audit_open(cmd_flag_str(F_AUDIT_FILE), err, sizeof(err));
        if (!au && cmd_flags[F_AUDIT_FILE].set) {
            fprintf(stderr, "error: %s\n", err);
            goto out;
        }
        if (!au)
            log_warn("%s: no audit line for this restore (the Event on the object remains)", err);
    }
    struct restore_api api;
    act_kube_restore_api(k, &api);
    status = restore_run(&api, def, t.ns, t.name, dry, au, stdout, stderr);
out:
    audit_close(au);
    kube_free(k);
    rules_free(&rs);
    restore_target_free(&t);
    return status;
}
