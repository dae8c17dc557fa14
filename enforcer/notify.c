/*
 * Webhook delivery (notify.h): a bounded FIFO queue filled by the enforcement cycle and
 * drained by one worker thread.
 *
 * The item at the head stays in the queue while it is being sent or waits for its retry, so
 * the queue's bound covers everything the process holds, and the cycle thread never has to
 * put anything back. The mutex is never held across a network call or a file read: the
 * cycle waits at most for the worker to pick the next item or record an outcome.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "annot.h"
#include "dur.h"
#include "enfmetrics.h"
#include "file.h"
#include "httpc.h"
#include "log.h"
#include "rfc3339.h"
#include "notify.h"
#include "util.h"

struct notify_item {
    char *rule, *url_file, *body;
    unsigned attempts;
    double not_before; /* monotonic time of the next attempt */
};

struct notify {
    struct notify_cfg cfg;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* new item, stop, or the worker finished */
    struct notify_item *q;
    size_t head, count;
    bool stopping, done, in_flight;
    double deadline;    /* monotonic end of the drain, once stopping */
    atomic_bool cancel; /* abandon the request under way (end of the drain) */
    unsigned long sent, failed, dropped, retries;
};

/* ---- payloads ----------------------------------------------------------------------------- */

char *notify_redact_url(const char *url)
{
    const char *scheme = strstr(url, "://");
    if (!scheme)
        return xstrdup("(url)");
    const char *host = scheme + 3;
    size_t hl = strcspn(host, "/?#");
    const char *at = memchr(host, '@', hl);
    if (at) {
        hl -= (size_t)(at + 1 - host);
        host = at + 1;
    }
    return xasprintf("%.*s%.*s/...", (int)(scheme + 3 - url), url, (int)hl, host);
}

/*
 * Replace every single-quoted part of an httpc message that holds a URL ("timeout after 2 s
 * requesting 'https://...'") with the redacted form: httpc names the whole URL, path
 * included, and a webhook's path is its secret.
 */
static char *notify_scrub(const char *msg, const char *redacted)
{
    struct sbuf b = {0};
    const char *p = msg;
    for (;;) {
        const char *open = strchr(p, '\'');
        const char *close = open ? strchr(open + 1, '\'') : NULL;
        if (!close) {
            sbuf_puts(&b, p);
            break;
        }
        sbuf_add(&b, p, (size_t)(open - p) + 1);
        size_t len = (size_t)(close - open - 1);
        char *inner = xstrndup(open + 1, len);
        sbuf_puts(&b, strstr(inner, "://") ? redacted : inner);
        free(inner);
        sbuf_putc(&b, '\'');
        p = close + 1;
    }
    return sbuf_take(&b);
}

/* Slack's mrkdwn gives &, < and > a meaning; label values must not inject links. */
static void notify_slack_escape(struct sbuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '&')
            sbuf_puts(b, "&amp;");
        else if (*s == '<')
            sbuf_puts(b, "&lt;");
        else if (*s == '>')
            sbuf_puts(b, "&gt;");
        else
            sbuf_putc(b, *s);
    }
}

static const char *notify_verb(const char *action, bool past)
{
    static const char *const v[][3] = {
        {"scaleToZero", "scale to zero", "scaled to zero"},
        {"suspend", "suspension", "suspended"},
        {"evict", "eviction", "evicted"},
        {"delete", "deletion", "deleted"},
        {"stop", "stop", "stopped"},
    };
    for (size_t i = 0; action && i < ARRAY_LEN(v); i++)
        if (strcmp(action, v[i][0]) == 0)
            return v[i][past ? 2 : 1];
    return past ? "reclaimed" : "reclaim";
}

/* "namespace/pod", else the identity labels as "k=v, k=v". */
static void notify_workload(struct sbuf *b, const struct labels *w)
{
    const char *ns = w ? labels_get(w, "namespace") : NULL;
    const char *pod = w ? labels_get(w, "pod") : NULL;
    if (ns && pod) {
        sbuf_printf(b, "%s/%s", ns, pod);
        return;
    }
    for (size_t i = 0; w && i < w->n; i++)
        sbuf_printf(b, "%s%s=%s", i ? ", " : "", w->v[i].name, w->v[i].value);
}

/* How to keep the workload: the exemption label, on the root owner when it is known. */
static void notify_how_to_keep(struct sbuf *b, const struct audit_rec *r)
{
    const struct audit_ref *root = r->nchain ? &r->chain[r->nchain - 1] : NULL;
    if (root && root->kind && root->name) {
        char *kind = xstrdup(root->kind);
        for (char *p = kind; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        sbuf_puts(b, "To keep it, label it " ANNOT_EXEMPT "=true: kubectl label");
        if (root->ns && root->ns[0])
            sbuf_printf(b, " -n %s", root->ns);
        sbuf_printf(b, " %s/%s " ANNOT_EXEMPT "=true", kind, root->name);
        free(kind);
    } else {
        sbuf_puts(b, "To keep it, give it the label " ANNOT_EXEMPT "=true");
    }
}

char *notify_slack_payload(const struct audit_rec *r)
{
    struct sbuf t = {0}, w = {0};
    char since[40] = "", at[40] = "";
    notify_workload(&w, r->workload);
    if (r->d)
        rfc3339_format(since, sizeof(since), r->d->idle_since, RFC3339_SEC);
    rfc3339_format(at, sizeof(at), r->act_after, RFC3339_SEC);
    const char *rule = r->rule ? r->rule : "";
    if (strcmp(r->event, "spared") == 0 && r->d && r->d->reason == REASON_ACTIVE) {
        sbuf_printf(&t,
                    "gpureclaim: GPU workload %s is active again: the planned %s by rule '%s' "
                    "is cancelled.",
                    w.buf ? w.buf : "", notify_verb(r->action, false), rule);
    } else if (strcmp(r->event, "spared") == 0) {
        /* Spared for another reason (exempted, data gap, re-created, rule disabled): saying
         * "active again" would tell the owner something the enforcer did not see. */
        sbuf_printf(&t, "gpureclaim: the planned %s of GPU workload %s by rule '%s' is cancelled",
                    notify_verb(r->action, false), w.buf ? w.buf : "", rule);
        sbuf_printf(&t, r->message && r->message[0] ? ": %s." : ".", r->message ? r->message : "");
    } else if (strcmp(r->event, "action") == 0) {
        sbuf_printf(&t, "gpureclaim: GPU workload %s was %s by rule '%s'", w.buf ? w.buf : "",
                    notify_verb(r->action, true), rule);
        if (since[0])
            sbuf_printf(&t, ", idle since %s", since);
        sbuf_puts(&t, ". ");
        /* The way back (the audit line's message on a successful action, restore.h). */
        if (r->message && r->message[0] && strcmp(r->result ? r->result : "", "ok") == 0) {
            char first = r->message[0];
            sbuf_printf(&t, "%c%s. ", first >= 'a' && first <= 'z' ? first - 'a' + 'A' : first,
                        r->message + 1);
        }
        notify_how_to_keep(&t, r);
        sbuf_puts(&t, " before it runs again.");
    } else {
        sbuf_printf(&t, "gpureclaim: GPU workload %s has been idle", w.buf ? w.buf : "");
        if (since[0])
            sbuf_printf(&t, " since %s", since);
        if (r->d && isfinite(r->d->threshold))
            sbuf_printf(&t, " (below %g%% of its GPU)", r->d->threshold);
        sbuf_printf(&t, "; rule '%s' plans its %s (%s)", rule, notify_verb(r->action, false),
                    r->action ? r->action : "");
        sbuf_printf(&t, at[0] ? " at %s. " : ". ", at);
        notify_how_to_keep(&t, r);
        sbuf_puts(&t, ", or use its GPU.");
        /* An owner may ask for time when the rule allows it (keep.h). */
        if (r->d && r->d->rule && r->d->rule->max_keep_until > 0) {
            char d[32];
            dur_format(d, sizeof(d), r->d->rule->max_keep_until);
            sbuf_printf(&t,
                        " To postpone it, annotate it " ANNOT_KEEP_UNTIL "=<RFC 3339 time>, at "
                        "most %s after this notice.",
                        d);
        }
    }
    struct sbuf esc = {0};
    notify_slack_escape(&esc, t.buf ? t.buf : "");
    json_object *o = json_object_new_object();
    json_object_object_add(o, "text", json_object_new_string(esc.buf ? esc.buf : ""));
    char *out = xstrdup(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    sbuf_free(&t);
    sbuf_free(&w);
    sbuf_free(&esc);
    return out;
}

/* ---- the queue ---------------------------------------------------------------------------- */

static void notify_item_free(struct notify_item *it)
{
    free(it->rule);
    free(it->url_file);
    free(it->body);
    memset(it, 0, sizeof(*it));
}

int notify_enqueue(struct notify *n, const char *rule, const char *url_file, const char *body)
{
    pthread_mutex_lock(&n->mu);
    if (n->count >= n->cfg.queue_size || n->stopping) {
        n->dropped++;
        if (n->stopping)
            log_warn("shutting down: dropping a webhook notification of rule '%s'", rule);
        else {
            /* One warning while the queue stays full; each dropped rule at debug. */
            log_cond("webhook queue full", LOG_WARN,
                     "webhook queue full (%zu notifications): dropping notifications",
                     n->cfg.queue_size);
            log_debug("webhook queue full: dropping a notification of rule '%s'", rule);
        }
        pthread_mutex_unlock(&n->mu);
        return -1;
    }
    struct notify_item *it = &n->q[(n->head + n->count) % n->cfg.queue_size];
    *it = (struct notify_item){
        .rule = xstrdup(rule), .url_file = xstrdup(url_file), .body = xstrdup(body)};
    n->count++;
    pthread_cond_broadcast(&n->cv);
    pthread_mutex_unlock(&n->mu);
    return 1;
}

int notify_audit(struct notify *n, const struct rule *r, const struct audit_rec *rec)
{
    if (!n || !r || !r->notify.url_file || !rec->event)
        return 0;
    /* A notice or action that failed is tried again next cycle: only success is news. */
    bool ok = rec->result && strcmp(rec->result, "ok") == 0;
    unsigned ev = 0;
    if (strcmp(rec->event, "notice") == 0 && ok)
        ev = RULE_NOTIFY_NOTICE;
    else if (strcmp(rec->event, "action") == 0 && ok)
        ev = RULE_NOTIFY_ACTION;
    else if (strcmp(rec->event, "spared") == 0)
        ev = RULE_NOTIFY_SPARE;
    if (!(r->notify.events & ev))
        return 0;
    char *body =
        r->notify.format == NOTIFY_FORMAT_SLACK ? notify_slack_payload(rec) : audit_format(rec);
    int ret = notify_enqueue(n, r->name, r->notify.url_file, body);
    free(body);
    return ret;
}

/* ---- the worker --------------------------------------------------------------------------- */

enum notify_outcome { NOTIFY_SENT, NOTIFY_RETRY, NOTIFY_FAILED };

/* One attempt. `why` gets a message free of the URL's secret parts. */
static enum notify_outcome notify_send(struct notify *n, const struct notify_item *it,
                                       double timeout, char *why, size_t whylen)
{
    char err[512] = "";
    char *url = secret_read(it->url_file, "webhook url", err, sizeof(err));
    if (!url) {
        /* The file may appear (a Secret mounted late): worth retrying. */
        str_copy(why, whylen, err);
        return NOTIFY_RETRY;
    }
    char *red = notify_redact_url(url);
    if (!str_has_prefix(url, "http://") && !str_has_prefix(url, "https://")) {
        snprintf(why, whylen, "webhook url file '%s' does not hold an http(s) URL", it->url_file);
        secret_free(url);
        free(red);
        return NOTIFY_FAILED;
    }
    const char *const headers[] = {"Content-Type: application/json"};
    struct httpc_req req = {.method = "POST",
                            .url = url,
                            .headers = headers,
                            .nheaders = 1,
                            .body = it->body,
                            .body_len = strlen(it->body),
                            .timeout = timeout,
                            .max_body = 1 << 20, /* the answer is not used */
                            .cancel = &n->cancel};
    struct httpc_resp resp = {0};
    enum notify_outcome out;
    if (httpc_do(&req, &resp, err, sizeof(err)) < 0) {
        char *clean = notify_scrub(err, red);
        str_copy(why, whylen, clean);
        free(clean);
        out = NOTIFY_RETRY;
    } else if (resp.status >= 200 && resp.status < 300) {
        out = NOTIFY_SENT;
    } else {
        snprintf(why, whylen, "'%s' answered HTTP %ld", red, resp.status);
        out = resp.status == 429 || resp.status >= 500 ? NOTIFY_RETRY : NOTIFY_FAILED;
    }
    httpc_resp_free(&resp);
    secret_free(url);
    free(red);
    return out;
}

/* Delay before the attempt after `attempts` failed ones: backoff, 2 x backoff, ... capped. */
static double notify_backoff(const struct notify_cfg *cfg, unsigned attempts)
{
    double d = cfg->backoff * pow(2.0, (double)(attempts > 0 ? attempts - 1 : 0));
    return fmin(d, cfg->backoff_max);
}

static void notify_wait_until(struct notify *n, double mono_deadline)
{
    double d = mono_deadline - mono_now();
    if (d <= 0)
        return;
    struct timespec ts = mono_timespec(mono_deadline);
    pthread_cond_timedwait(&n->cv, &n->mu, &ts);
}

static void *notify_worker(void *arg)
{
    struct notify *n = arg;
    size_t cut = 0; /* cancelled by the end of the drain */
    pthread_mutex_lock(&n->mu);
    for (;;) {
        while (!n->count && !n->stopping)
            pthread_cond_wait(&n->cv, &n->mu);
        double now = mono_now();
        if (!n->count || (n->stopping && now >= n->deadline))
            break;
        struct notify_item *it = &n->q[n->head];
        if (it->not_before > now) {
            notify_wait_until(n, n->stopping && n->deadline < it->not_before ? n->deadline
                                                                             : it->not_before);
            continue;
        }
        double timeout = n->cfg.timeout;
        if (n->stopping && n->deadline - now < timeout)
            timeout = n->deadline - now;
        n->in_flight = true;
        pthread_mutex_unlock(&n->mu);

        char why[512] = "";
        enum notify_outcome out = notify_send(n, it, timeout, why, sizeof(why));

        pthread_mutex_lock(&n->mu);
        n->in_flight = false;
        it->attempts++;
        if (out == NOTIFY_RETRY && it->attempts < n->cfg.max_attempts && !atomic_load(&n->cancel)) {
            double delay = notify_backoff(&n->cfg, it->attempts);
            it->not_before = mono_now() + delay;
            n->retries++;
            log_debug("webhook notification of rule '%s' failed (attempt %u, retrying in %.1f s): "
                      "%s",
                      it->rule, it->attempts, delay, why);
            continue;
        }
        if (out == NOTIFY_SENT) {
            n->sent++;
        } else if (atomic_load(&n->cancel)) {
            n->dropped++; /* cut off by the end of the drain: counted with what is left */
            cut++;
        } else {
            n->failed++;
            log_warn("cannot deliver the webhook notification of rule '%s' (attempts: %u): %s",
                     it->rule, it->attempts, why);
        }
        notify_item_free(it);
        n->head = (n->head + 1) % n->cfg.queue_size;
        n->count--;
        if (n->count < n->cfg.queue_size / 2)
            log_cond_clear("webhook queue full");
    }
    if (n->count + cut)
        log_warn("shutting down: %zu webhook notifications not delivered", n->count + cut);
    while (n->count) {
        notify_item_free(&n->q[n->head]);
        n->head = (n->head + 1) % n->cfg.queue_size;
        n->count--;
        n->dropped++;
    }
    n->done = true;
    pthread_cond_broadcast(&n->cv);
    pthread_mutex_unlock(&n->mu);
    return NULL;
}

struct notify *notify_new(const struct notify_cfg *cfg, char *err, size_t errlen)
{
    struct notify *n = xcalloc(1, sizeof(*n));
    n->cfg = *cfg;
    if (!n->cfg.queue_size)
        n->cfg.queue_size = 1000;
    if (!(n->cfg.timeout > 0))
        n->cfg.timeout = 10;
    if (!n->cfg.max_attempts)
        n->cfg.max_attempts = 5;
    if (!(n->cfg.backoff > 0))
        n->cfg.backoff = 1;
    if (!(n->cfg.backoff_max > 0))
        n->cfg.backoff_max = 60;
    if (n->cfg.drain_timeout == 0)
        n->cfg.drain_timeout = 5;
    n->q = xcalloc(n->cfg.queue_size, sizeof(*n->q));
    atomic_init(&n->cancel, false);
    mono_cond_init(&n->cv);
    pthread_mutex_init(&n->mu, NULL);
    int rc = pthread_create(&n->thread, NULL, notify_worker, n);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the webhook thread: %s", strerror(rc));
        pthread_cond_destroy(&n->cv);
        pthread_mutex_destroy(&n->mu);
        free(n->q);
        free(n);
        return NULL;
    }
    return n;
}

void notify_free(struct notify *n)
{
    if (!n)
        return;
    pthread_mutex_lock(&n->mu);
    n->stopping = true;
    double drain = n->cfg.drain_timeout > 0 ? n->cfg.drain_timeout : 0;
    n->deadline = mono_now() + drain;
    pthread_cond_broadcast(&n->cv);
    while (!n->done && mono_now() < n->deadline)
        notify_wait_until(n, n->deadline);
    /* A request still under way (a receiver that hangs) is cancelled rather than waited for:
       libcurl checks the flag about once a second, which bounds the shutdown. */
    atomic_store(&n->cancel, true);
    pthread_mutex_unlock(&n->mu);
    pthread_join(n->thread, NULL);
    if (n->dropped)
        log_info("webhook notifications: %lu sent, %lu failed, %lu dropped", n->sent, n->failed,
                 n->dropped);
    pthread_cond_destroy(&n->cv);
    pthread_mutex_destroy(&n->mu);
    free(n->q);
    free(n);
}

void notify_get_stats(struct notify *n, struct notify_stats *s)
{
    pthread_mutex_lock(&n->mu);
    *s = (struct notify_stats){.sent = n->sent,
                               .failed = n->failed,
                               .dropped = n->dropped,
                               .retries = n->retries,
                               .queued = n->count,
                               .in_flight = n->in_flight};
    pthread_mutex_unlock(&n->mu);
}

void notify_metrics(struct notify *n, struct expo *e)
{
    struct notify_stats s;
    if (!n)
        return;
    notify_get_stats(n, &s);
    expo_put(e, EMX(NOTIFICATIONS_TOTAL), (double)s.sent, "result", "sent", (const char *)NULL);
    expo_put(e, EMX(NOTIFICATIONS_TOTAL), (double)s.failed, "result", "failed", (const char *)NULL);
    expo_put(e, EMX(NOTIFICATIONS_TOTAL), (double)s.dropped, "result", "dropped",
             (const char *)NULL);
    expo_put(e, EMX(NOTIFICATION_RETRIES_TOTAL), (double)s.retries, (const char *)NULL);
    expo_put(e, EMX(NOTIFICATION_QUEUE_LENGTH), (double)s.queued, (const char *)NULL);
}
