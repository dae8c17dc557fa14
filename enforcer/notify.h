/*
 * Webhook notices (a rule's `notify:`): tell a team before, when and if its GPU workload is
 * reclaimed, in the manner of an Alertmanager webhook receiver, without ever delaying an
 * enforcement cycle.
 *
 * The cycle only formats the payload and appends it to a bounded in-memory queue
 * (notify_audit never blocks on the network and never waits for the worker beyond a short
 * mutex hold). One worker thread sends the queue in order (FIFO, so a team never reads
 * "spared" before "notice") with libcurl: POST, Content-Type application/json, a timeout per
 * attempt, and on a transport error, 429 or 5xx a retry after an exponential backoff
 * (backoff, 2 x backoff, ... up to backoff_max), at most max_attempts attempts; another
 * status (4xx, 3xx: redirects are not followed) fails at once. A full queue drops the new
 * notification. Every outcome is counted:
 *   gpureclaim_enforcer_notifications_total{result="sent|failed|dropped"}
 *   gpureclaim_enforcer_notification_retries_total
 *   gpureclaim_enforcer_notification_queue_length
 * The URL is a secret read from the rule's urlFile at each attempt (so a rotated secret is
 * used at once); it never appears in logs or metrics: messages name the rule and at most
 * the scheme and host ("https://hooks.example.com/..."). notify_free drains the queue for at
 * most drain_timeout seconds, cancels an attempt still running then, and counts what is left
 * as dropped.
 *
 * Payloads: `json` is the audit record (audit_format) as written to --audit.file; `slack`
 * is {"text": "..."}: one readable sentence naming the workload, the rule, idle-since, when
 * it will be acted on and how to keep it (the gpureclaim.io/exempt=true label).
 */
#ifndef GPURECLAIM_NOTIFY_H
#define GPURECLAIM_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "audit.h"
#include "expo.h"
#include "rules.h"

struct notify_cfg {
    size_t queue_size;     /* 0: 1000 */
    double timeout;        /* seconds per attempt; 0: 10 */
    unsigned max_attempts; /* 0: 5 */
    double backoff;        /* first retry delay, seconds; 0: 1 */
    double backoff_max;    /* 0: 60 */
    double drain_timeout;  /* notify_free; 0: 5; < 0: do not drain */
};

struct notify_stats {
    unsigned long sent, failed, dropped, retries;
    size_t queued;  /* waiting or being sent */
    bool in_flight; /* the worker is inside an HTTP request */
};

struct notify;

/* Start the worker. NULL with a message in err when the thread cannot be created. */
struct notify *notify_new(const struct notify_cfg *cfg, char *err, size_t errlen);
/* Drain (bounded by drain_timeout), stop the worker and free; NULL is fine. */
void notify_free(struct notify *n);

/*
 * Queue the notification of audit record `rec` for rule `r` when the rule asks for it:
 * event "notice" or "action" with result "ok", or "spared", and r->notify has that event.
 * Returns 1 when queued, 0 when the rule does not want it, -1 when dropped (queue full).
 */
int notify_audit(struct notify *n, const struct rule *r, const struct audit_rec *rec);
/* Queue a ready payload for the URL in `url_file` (what notify_audit does after formatting). */
int notify_enqueue(struct notify *n, const char *rule, const char *url_file, const char *body);

void notify_get_stats(struct notify *n, struct notify_stats *s);
void notify_metrics(struct notify *n, struct expo *e);

/* The `slack` payload of `rec`, {"text": "..."}; caller frees. */
char *notify_slack_payload(const struct audit_rec *rec);
/* "scheme://host[:port]/..." of `url` for messages (no user info, path or query); caller frees. */
char *notify_redact_url(const char *url);

#endif
