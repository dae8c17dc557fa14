/*
 * The table of the enforcer's metric families (see enfmetrics.h). Designated initialisers
 * tie each entry to its id, so the order here is free: families are grouped by the module
 * that publishes them.
 */
#include "enfmetrics.h"

#define P "gpureclaim_enforcer_"

const struct expo_family emx_family[EMX_COUNT] = {
    /* daemon.c */
    [EMX_BUILD_INFO] = {P "build_info", EXPO_GAUGE,
                        "Version of gpureclaim-enforcer; the value is always 1."},
    [EMX_CYCLES_TOTAL] = {P "cycles_total", EXPO_COUNTER,
                          "Evaluation cycles by result (error: a Prometheus query failed)."},
    [EMX_CYCLE_DURATION_SECONDS] = {P "cycle_duration_seconds", EXPO_GAUGE,
                                    "Duration of the last evaluation cycle."},
    [EMX_LAST_SUCCESS_TIMESTAMP_SECONDS] =
        {P "last_success_timestamp_seconds", EXPO_GAUGE,
         "Time the last cycle without a query error ended (0: never)."},
    [EMX_RULE_EVALUATION_FAILED] =
        {P "rule_evaluation_failed", EXPO_GAUGE,
         "Whether the last cycle could not evaluate the rule (a query failed: error, "
         "timeout, partial or too large an answer); its workloads were kept."},
    [EMX_RULE_READ_PATH] =
        {P "rule_read_path", EXPO_GAUGE,
         "How the rule's activity was read in the last cycle (remote_read, export: "
         "raw samples; promql: the PromQL plan); the value is always 1."},
    [EMX_RULE_EVALUATION_ERRORS_TOTAL] = {P "rule_evaluation_errors_total", EXPO_COUNTER,
                                          "Cycles in which the rule could not be evaluated."},
    [EMX_DECISIONS_TOTAL] = {P "decisions_total", EXPO_COUNTER,
                             "Decisions made, summed over cycles."},
    [EMX_DECISIONS] = {P "decisions", EXPO_GAUGE, "Decisions of the last cycle."},
    [EMX_PROMETHEUS_REQUESTS_TOTAL] = {P "prometheus_requests_total", EXPO_COUNTER,
                                       "HTTP requests sent to Prometheus."},
    [EMX_PROMETHEUS_ERRORS_TOTAL] = {P "prometheus_errors_total", EXPO_COUNTER,
                                     "Prometheus requests that failed."},
    [EMX_RULES_INFO] =
        {P "rules_info", EXPO_GAUGE,
         "The rules in force: file, apiVersion and content hash; the value is always 1."},
    [EMX_RULES_RELOAD_SUCCESS] = {P "rules_reload_success", EXPO_GAUGE,
                                  "Whether the last load of the rules file succeeded."},
    [EMX_RULES_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS] =
        {P "rules_last_reload_success_timestamp_seconds", EXPO_GAUGE,
         "Time the rules file was last loaded successfully."},
    [EMX_RULES_RELOADS_TOTAL] = {P "rules_reloads_total", EXPO_COUNTER,
                                 "Reloads of the rules file after start, by result."},
    [EMX_DRY_RUN] = {P "dry_run", EXPO_GAUGE,
                     "Whether the enforcer only reports its decisions (--dry-run)."},
    [EMX_WORKLOAD_IDLE_SINCE_TIMESTAMP_SECONDS] =
        {P "workload_idle_since_timestamp_seconds", EXPO_GAUGE,
         "Start of the current idle run of a workload decided idle in the last cycle."},
    [EMX_CYCLE_PHASE_SECONDS] = {P "cycle_phase_seconds", EXPO_GAUGE,
                                 "Duration of each phase (read, decide, act) of the last cycle."},
    [EMX_READ_SAMPLES_TOTAL] =
        {P "read_samples_total", EXPO_COUNTER,
         "Raw samples read for a rule's activity, by whole-window (full) or incremental read; "
         "rules sharing a selector each count its read."},
    [EMX_LATE_SAMPLES_TOTAL] =
        {P "late_samples_total", EXPO_COUNTER,
         "Samples of the read overlap that arrived after the read of their time."},
    [EMX_PROOF_SERIES] = {P "proof_series", EXPO_GAUGE,
                          "Activity series whose state run carries from cycle to cycle."},
    [EMX_PROOF_BYTES] = {P "proof_bytes", EXPO_GAUGE,
                         "Bytes of the state run carries from cycle to cycle."},
    [EMX_REPROOFS_TOTAL] =
        {P "reproofs_total", EXPO_COUNTER,
         "Full-window proofs of incremental decisions before a notice, report or action, by "
         "result (confirmed, refuted)."},
    /* act.c */
    [EMX_ACTIONS_TOTAL] = {P "actions_total", EXPO_COUNTER,
                           "Mutating calls made by the action engine, by result."},
    [EMX_NOTICES_TOTAL] = {P "notices_total", EXPO_COUNTER,
                           "Reclaim notices posted before acting."},
    [EMX_SPARED_TOTAL] = {P "spared_total", EXPO_COUNTER,
                          "Notices withdrawn because the workload was no longer idle."},
    [EMX_SKIPPED_TOTAL] = {P "skipped_total", EXPO_COUNTER,
                           "Reclaim candidates left alone (counted once per workload and "
                           "reason)."},
    [EMX_FREED_GPU_SECONDS_TOTAL] =
        {P "freed_gpu_seconds_total", EXPO_COUNTER,
         "GPU time freed by actions: devices held times the time the object acted on was seen "
         "to stay stopped (not counted for delete and evict)."},
    [EMX_RECLAIMED_GPUS] = {P "reclaimed_gpus", EXPO_GAUGE,
                            "Devices held by workloads acted on whose object is still stopped."},
    [EMX_RETURNS_TOTAL] = {P "returns_total", EXPO_COUNTER,
                           "Workloads acted on that were seen running again, by how soon after "
                           "the action (within: 1h, 1d, more)."},
    [EMX_PENDING_NOTICES] = {P "pending_notices", EXPO_GAUGE,
                             "Notices waiting for their planned action time."},
    [EMX_ACTIONS_LAST_HOUR] = {P "actions_last_hour", EXPO_GAUGE,
                               "Mutating calls in the last hour, as counted by the hourly cap."},
    [EMX_STATE_SAVE_FAILURES_TOTAL] = {P "state_save_failures_total", EXPO_COUNTER,
                                       "Writes of the state file that failed."},
    [EMX_AUDIT_WRITE_FAILURES_TOTAL] = {P "audit_write_failures_total", EXPO_COUNTER,
                                        "Audit lines that could not be written."},
    /* notify.c */
    [EMX_NOTIFICATIONS_TOTAL] =
        {P "notifications_total", EXPO_COUNTER,
         "Webhook notifications by outcome: sent (2xx), failed (refused, or every "
         "attempt failed) and dropped (queue full, or left at shutdown)."},
    [EMX_NOTIFICATION_RETRIES_TOTAL] = {P "notification_retries_total", EXPO_COUNTER,
                                        "Webhook attempts that failed and were retried."},
    [EMX_NOTIFICATION_QUEUE_LENGTH] = {P "notification_queue_length", EXPO_GAUGE,
                                       "Webhook notifications waiting or being sent."},
    /* lease.c */
    [EMX_LEADER] = {P "leader", EXPO_GAUGE,
                    "1 when this replica holds the leader-election Lease and may act (always 1 "
                    "without --leader-elect)"},
    [EMX_LEADER_CHANGES_TOTAL] = {P "leader_changes_total", EXPO_COUNTER,
                                  "Times this replica became or stopped being the leader"},
    [EMX_LEADER_ELECTION_ERRORS_TOTAL] =
        {P "leader_election_errors_total", EXPO_COUNTER,
         "Lease reads or writes that failed (a 409 lost race included)"},
    /* perm.c */
    [EMX_PERMISSION_MISSING] =
        {P "permission_missing", EXPO_GAUGE,
         "A permission the rules can use that the service account lacks "
         "(SelfSubjectAccessReview denied it); namespace \"\" is every namespace."},
    [EMX_PERMISSION_UNKNOWN] = {P "permission_unknown", EXPO_GAUGE,
                                "A permission the rules can use that could not be checked (the "
                                "review failed or decided nothing); never assumed granted."},
    [EMX_PERMISSION_CHECKS] = {P "permission_checks", EXPO_GAUGE,
                               "Permissions of the last check, by result."},
    [EMX_PERMISSION_LAST_CHECK_TIMESTAMP_SECONDS] = {P "permission_last_check_timestamp_seconds",
                                                     EXPO_GAUGE,
                                                     "Time of the last permission check."},
};
