/*
 * Every metric family the enforcer publishes, declared once: its name, TYPE and HELP.
 *
 * A family used to be described at each call that added a sample, and where two calls
 * described it differently the first HELP of a scrape won silently. Now a sample refers to
 * its family by id (expo_put(e, EMX(CYCLES_TOTAL), value, labels..., NULL)), so one family
 * has one description; tests/unit/test_enfmetrics.c checks that every id is declared,
 * that no name is declared twice (here or in the HTTP server's table, common/httpd.h), that
 * no enforcer source adds a sample by a raw name, and that the metric functions publish only
 * declared families exactly as declared. Names are gpureclaim_enforcer_<id in lower case>.
 * The exporter's table is exporter/metrics.h.
 */
#ifndef GPURECLAIM_ENFMETRICS_H
#define GPURECLAIM_ENFMETRICS_H

#include "expo.h"

enum emx_id {
    /* daemon.c */
    EMX_BUILD_INFO,
    EMX_CYCLES_TOTAL,
    EMX_CYCLE_DURATION_SECONDS,
    EMX_LAST_SUCCESS_TIMESTAMP_SECONDS,
    EMX_RULE_EVALUATION_FAILED,
    EMX_RULE_READ_PATH,
    EMX_RULE_EVALUATION_ERRORS_TOTAL,
    EMX_DECISIONS_TOTAL,
    EMX_DECISIONS,
    EMX_PROMETHEUS_REQUESTS_TOTAL,
    EMX_PROMETHEUS_ERRORS_TOTAL,
    EMX_RULES_INFO,
    EMX_RULES_RELOAD_SUCCESS,
    EMX_RULES_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS,
    EMX_RULES_RELOADS_TOTAL,
    EMX_DRY_RUN,
    EMX_WORKLOAD_IDLE_SINCE_TIMESTAMP_SECONDS,
    EMX_CYCLE_PHASE_SECONDS,
    EMX_READ_SAMPLES_TOTAL,
    EMX_LATE_SAMPLES_TOTAL,
    EMX_PROOF_SERIES,
    EMX_PROOF_BYTES,
    EMX_REPROOFS_TOTAL,
    /* act.c */
    EMX_ACTIONS_TOTAL,
    EMX_NOTICES_TOTAL,
    EMX_SPARED_TOTAL,
    EMX_SKIPPED_TOTAL,
    EMX_FREED_GPU_SECONDS_TOTAL,
    EMX_RECLAIMED_GPUS,
    EMX_RETURNS_TOTAL,
    EMX_PENDING_NOTICES,
    EMX_ACTIONS_LAST_HOUR,
    EMX_STATE_SAVE_FAILURES_TOTAL,
    EMX_AUDIT_WRITE_FAILURES_TOTAL,
    /* notify.c */
    EMX_NOTIFICATIONS_TOTAL,
    EMX_NOTIFICATION_RETRIES_TOTAL,
    EMX_NOTIFICATION_QUEUE_LENGTH,
    /* lease.c */
    EMX_LEADER,
    EMX_LEADER_CHANGES_TOTAL,
    EMX_LEADER_ELECTION_ERRORS_TOTAL,
    /* perm.c */
    EMX_PERMISSION_MISSING,
    EMX_PERMISSION_UNKNOWN,
    EMX_PERMISSION_CHECKS,
    EMX_PERMISSION_LAST_CHECK_TIMESTAMP_SECONDS,
    EMX_COUNT
};

/* The declarations, indexed by enum emx_id. */
extern const struct expo_family emx_family[EMX_COUNT];

/* The family of id EMX_<id>, for expo_put / expo_putv. */
#define EMX(id) (&emx_family[EMX_##id])

#endif
