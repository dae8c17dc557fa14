/*
 * Tests of webhook notices (notify.c) against receivers in this process: a libmicrohttpd
 * server answering a scripted list of statuses and recording the bodies, and a socket that
 * listens but never accepts (a receiver that hangs). Covered: both payload formats, which
 * events a rule's notify: sends, retries after 500 then success, 4xx not retried, giving up
 * after max attempts, a hanging receiver that does not hold up the caller, a full queue
 * counted as dropped, a bounded shutdown that cancels the hanging call, a URL file read at
 * each attempt, the URL kept out of the log, and the notify: section of a rules file.
 */
#include "notify.c"

#include <fcntl.h>
#include <unistd.h>

#include "../fakes/fakehttp.h"
#include "test.h"
#include "tmptree.h"

/* ---- receivers -------------------------------------------------------------------------- */

struct receiver {
    struct MHD_Daemon *d;
    unsigned port;
    pthread_mutex_t mu;
    unsigned statuses[8]; /* answers to successive requests, then 200 */
    size_t nstatuses, nreq;
    char bodies[8][2048];
    char ctype[8][64];
    char paths[8][128];
};

static struct receiver rcv = {.mu = PTHREAD_MUTEX_INITIALIZER};

static MHD_RESULT receiver_fn(struct MHD_Connection *conn, const char *url, const char *method,
                              struct sbuf *body)
{
    (void)method;
    pthread_mutex_lock(&rcv.mu);
    size_t i = rcv.nreq++;
    unsigned status = i < rcv.nstatuses ? rcv.statuses[i] : 200;
    if (i < 8) {
        str_copy(rcv.bodies[i], sizeof(rcv.bodies[i]), body->buf);
        const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
        str_copy(rcv.ctype[i], sizeof(rcv.ctype[i]), ct ? ct : "");
        str_copy(rcv.paths[i], sizeof(rcv.paths[i]), url);
    }
    pthread_mutex_unlock(&rcv.mu);
    return fakehttp_reply(conn, status, "text/plain", "ok");
}

static void receiver_start(const unsigned *statuses, size_t n)
{
    static fakehttp_fn handler = receiver_fn;
    pthread_mutex_lock(&rcv.mu);
    rcv.nreq = 0;
    rcv.nstatuses = n;
    if (n)
        memcpy(rcv.statuses, statuses, n * sizeof(*statuses));
    pthread_mutex_unlock(&rcv.mu);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rcv.d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0,
                             NULL, NULL, fakehttp_handler_, &handler, MHD_OPTION_SOCK_ADDR,
                             (struct sockaddr *)&addr, MHD_OPTION_NOTIFY_COMPLETED,
                             fakehttp_completed_, NULL, MHD_OPTION_END);
    TEST_CHECK(rcv.d != NULL);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(rcv.d, MHD_DAEMON_INFO_BIND_PORT);
    rcv.port = info ? info->port : 0;
}

static void receiver_stop(void)
{
    MHD_stop_daemon(rcv.d);
    rcv.d = NULL;
}

static size_t receiver_requests(void)
{
    pthread_mutex_lock(&rcv.mu);
    size_t n = rcv.nreq;
    pthread_mutex_unlock(&rcv.mu);
    return n;
}

/* A socket that listens and never accepts: the kernel completes the handshake and takes the
   request, and no answer ever comes. */
static int hang_listen(unsigned *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

/* ---- helpers ---------------------------------------------------------------------------- */

struct tmpdir {
    char root[256];
};

static void tmpdir_init(struct tmpdir *t)
{
    TEST_CHECK(tmptree_make(t->root, sizeof(t->root), "test_notify") == 0);
}

#define SECRET_PATH "/services/T000/B000/s3cr3tT0ken"

static char url_file[4096];

static void write_url(const char *dir, const char *url)
{
    snprintf(url_file, sizeof(url_file), "%s/url", dir);
    FILE *f = fopen(url_file, "w");
    fprintf(f, "%s\n", url);
    fclose(f);
}

/* A temporary directory whose url file names a receiver answering `script`, then 200. */
static void setup_receiver(struct tmpdir *t, const unsigned *script, size_t n)
{
    tmpdir_init(t);
    receiver_start(script, n);
    char url[256];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u" SECRET_PATH, rcv.port);
    write_url(t->root, url);
}

/* Wait up to 60 s for the worker to settle on `cond`; the bound only guards a broken build. */
#define WAIT_FOR(n, s, cond)                                                                       \
    do {                                                                                           \
        for (int w_ = 0; w_ < 6000; w_++) {                                                        \
            notify_get_stats((n), &(s));                                                           \
            if (cond)                                                                              \
                break;                                                                             \
            usleep(10000);                                                                         \
        }                                                                                          \
    } while (0)

/* Capture what is logged (stderr) between log_capture_begin and log_capture_end. */
static int saved_stderr = -1;
static char capture_path[4200];

static void log_capture_begin(const char *dir)
{
    snprintf(capture_path, sizeof(capture_path), "%s/log", dir);
    fflush(stderr);
    saved_stderr = dup(2);
    int fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    dup2(fd, 2);
    close(fd);
}

static char *log_capture_end(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    FILE *f = fopen(capture_path, "r");
    struct sbuf b = {0};
    char buf[4096];
    size_t k;
    while (f && (k = fread(buf, 1, sizeof(buf), f)) > 0)
        sbuf_add(&b, buf, k);
    if (f)
        fclose(f);
    sbuf_add(&b, "", 0);
    return sbuf_take(&b);
}

/* A notice record as act.c builds it. */
struct sample {
    struct labels wl;
    struct decision_rec d;
    struct audit_ref chain[2];
    struct audit_rec rec;
    struct rule rule;
};

static void sample_init(struct sample *s, const char *event)
{
    memset(s, 0, sizeof(*s));
    labels_set(&s->wl, "namespace", "ml");
    labels_set(&s->wl, "pod", "nb-<1>&");
    s->rule.name = "notebooks";
    s->rule.action = ACTION_SCALE_TO_ZERO;
    s->d.rule = &s->rule;
    s->d.threshold = 10;
    s->d.idle_since = 1767261600; /* 2026-01-01T10:00:00Z */
    s->d.window_start = s->d.idle_since;
    s->d.window_end = 1767262500;
    s->d.max = s->d.mean = NAN;
    s->chain[0] = (struct audit_ref){"Pod", "ml", "nb-<1>&", "u1"};
    s->chain[1] = (struct audit_ref){"Deployment", "ml", "nb", "u2"};
    s->rec = (struct audit_rec){.time = 1767262500,
                                .event = event,
                                .rule = "notebooks",
                                .workload = &s->wl,
                                .chain = s->chain,
                                .nchain = 2,
                                .d = &s->d,
                                .action = "scaleToZero",
                                .result = "ok",
                                .act_after = 1767264300}; /* 10:45:00Z */
}

static void sample_free(struct sample *s)
{
    labels_free(&s->wl);
}

static const char *json_text(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

/* ---- payloads --------------------------------------------------------------------------- */

TEST(test_slack_notice_sentence)
{
    struct sample s;
    sample_init(&s, "notice");
    char *p = notify_slack_payload(&s.rec);
    json_object *o = json_tokener_parse(p);
    TEST_CHECK(o != NULL);
    const char *t = json_text(o, "text");
    TEST_CHECK_CONTAINS(t, "ml/nb-&lt;1&gt;&amp;"); /* workload, mrkdwn-escaped */
    TEST_CHECK_CONTAINS(t, "rule 'notebooks'");
    TEST_CHECK_CONTAINS(t, "idle since 2026-01-01T10:00:00Z");
    TEST_CHECK_CONTAINS(t, "at 2026-01-01T10:45:00Z");
    TEST_CHECK_CONTAINS(t, "scale to zero");
    TEST_CHECK_CONTAINS(t, "kubectl label -n ml deployment/nb gpureclaim.io/exempt=true");
    TEST_CHECK(strchr(t, '<') == NULL);
    TEST_CHECK(strstr(t, "keep-until") == NULL); /* the rule allows no time: not offered */
    json_object_put(o);
    free(p);
    sample_free(&s);
    /* a rule allowing time: the owner is told how to ask for it */
    sample_init(&s, "notice");
    s.rule.max_keep_until = 2 * 86400;
    p = notify_slack_payload(&s.rec);
    TEST_CHECK_CONTAINS(p, " To postpone it, annotate it gpureclaim.io/keep-until=&lt;RFC 3339 "
                           "time&gt;, at most 2d after this notice.");
    free(p);
    sample_free(&s);
}

TEST(test_slack_action_and_spare)
{
    struct sample s;
    sample_init(&s, "action");
    char *p = notify_slack_payload(&s.rec);
    TEST_CHECK_CONTAINS(p,
                        "was scaled to zero by rule 'notebooks', idle since 2026-01-01T10:00:00Z");
    TEST_CHECK_CONTAINS(p, "gpureclaim.io/exempt=true");
    free(p);
    sample_free(&s);
    /* the way back, from the action's audit message */
    sample_init(&s, "action");
    s.rec.message = "to bring it back: gpureclaim-enforcer restore ml/Deployment/nb, or scale it";
    p = notify_slack_payload(&s.rec);
    TEST_CHECK_CONTAINS(p, "idle since 2026-01-01T10:00:00Z. To bring it back: gpureclaim-enforcer "
                           "restore ml/Deployment/nb, or scale it. To keep it");
    free(p);
    sample_free(&s);

    sample_init(&s, "spared");
    s.d.reason = REASON_ACTIVE;
    p = notify_slack_payload(&s.rec);
    TEST_CHECK_CONTAINS(p, "is active again: the planned scale to zero by rule 'notebooks' is "
                           "cancelled");
    free(p);
    sample_free(&s);
    /* Spared because it was exempted: the text gives that reason, not "active again". */
    sample_init(&s, "spared");
    s.d.reason = REASON_EXEMPT;
    s.rec.message = "exempt: label gpureclaim.io/exempt=true";
    p = notify_slack_payload(&s.rec);
    TEST_CHECK(strstr(p, "active again") == NULL);
    TEST_CHECK_CONTAINS(p, "is cancelled: exempt: label gpureclaim.io/exempt=true.");
    free(p);
    sample_free(&s);
    /* a container (no owner kind): the label to set, without a kubectl line */
    sample_init(&s, "notice");
    s.rec.nchain = 0;
    labels_free(&s.wl);
    labels_set(&s.wl, "container_name", "train");
    p = notify_slack_payload(&s.rec);
    TEST_CHECK_CONTAINS(p, "GPU workload container_name=train has been idle");
    TEST_CHECK_CONTAINS(p, "give it the label gpureclaim.io/exempt=true");
    TEST_CHECK(strstr(p, "kubectl") == NULL);
    free(p);
    sample_free(&s);
}

TEST(test_redact_and_scrub)
{
    char *r = notify_redact_url("https://user:pw@hooks.example.com:8443" SECRET_PATH "?x=1");
    TEST_CHECK_STR(r, "https://hooks.example.com:8443/...");
    char *m = notify_scrub(
        "timeout after 2.0 s requesting 'https://***@hooks.example.com:8443" SECRET_PATH "': x 'y'",
        r);
    TEST_CHECK_STR(m, "timeout after 2.0 s requesting 'https://hooks.example.com:8443/...': x 'y'");
    free(m);
    free(r);
    r = notify_redact_url("no-scheme");
    TEST_CHECK_STR(r, "(url)");
    free(r);
}

/* ---- delivery --------------------------------------------------------------------------- */

TEST(test_backoff_doubles_up_to_max)
{
    const struct notify_cfg c = {.backoff = 1, .backoff_max = 60};
    TEST_CHECK_DBL(notify_backoff(&c, 1), 1, 1e-9);
    TEST_CHECK_DBL(notify_backoff(&c, 2), 2, 1e-9);
    TEST_CHECK_DBL(notify_backoff(&c, 3), 4, 1e-9);
    TEST_CHECK_DBL(notify_backoff(&c, 6), 32, 1e-9);
    TEST_CHECK_DBL(notify_backoff(&c, 7), 60, 1e-9);
    TEST_CHECK_DBL(notify_backoff(&c, 1000), 60, 1e-9);
}

static struct rule rule_with(const char *file, enum rule_notify_format format, unsigned events)
{
    struct rule r = {.name = "notebooks", .action = ACTION_SCALE_TO_ZERO};
    r.notify = (struct rule_notify){.url_file = (char *)file, .format = format, .events = events};
    return r;
}

TEST(test_json_and_slack_delivered)
{
    struct tmpdir t;
    setup_receiver(&t, NULL, 0);
    char err[256];
    struct notify *n = notify_new(&(struct notify_cfg){.timeout = 5}, err, sizeof(err));

    struct sample s;
    sample_init(&s, "notice");
    struct rule rj = rule_with(url_file, NOTIFY_FORMAT_JSON, RULE_NOTIFY_NOTICE);
    struct rule rs = rule_with(url_file, NOTIFY_FORMAT_SLACK, RULE_NOTIFY_NOTICE);
    TEST_CHECK_INT(notify_audit(n, &rj, &s.rec), 1);
    TEST_CHECK_INT(notify_audit(n, &rs, &s.rec), 1);
    struct notify_stats st;
    WAIT_FOR(n, st, st.sent == 2);
    TEST_CHECK_INT(st.sent, 2);
    TEST_CHECK_INT(receiver_requests(), 2);
    /* json: exactly the audit record */
    char *line = audit_format(&s.rec);
    TEST_CHECK_STR(rcv.bodies[0], line);
    free(line);
    TEST_CHECK_STR(rcv.ctype[0], "application/json");
    TEST_CHECK_STR(rcv.paths[0], SECRET_PATH);
    json_object *o = json_tokener_parse(rcv.bodies[1]);
    TEST_CHECK_CONTAINS(json_text(o, "text"), "rule 'notebooks'");
    json_object_put(o);
    notify_free(n);
    receiver_stop();
    sample_free(&s);
    tmptree_finish(t.root);
}

TEST(test_events_filter)
{
    struct notify *n = notify_new(&(struct notify_cfg){0}, (char[64]){0}, 64);
    struct sample s;
    sample_init(&s, "notice");
    /* no url file: nothing, whatever the event */
    struct rule none = {.name = "x"};
    TEST_CHECK_INT(notify_audit(n, &none, &s.rec), 0);
    struct rule r = rule_with("/nonexistent/url", NOTIFY_FORMAT_JSON, RULE_NOTIFY_SPARE);
    TEST_CHECK_INT(notify_audit(n, &r, &s.rec), 0); /* notice not wanted */
    r.notify.events = RULE_NOTIFY_NOTICE;
    s.rec.result = "error";
    TEST_CHECK_INT(notify_audit(n, &r, &s.rec), 0); /* the notice failed: posted next cycle */
    s.rec.event = "action";
    s.rec.result = "retry";
    r.notify.events = RULE_NOTIFY_ACTION;
    TEST_CHECK_INT(notify_audit(n, &r, &s.rec), 0); /* only a successful action is news */
    s.rec.event = "dry_run";
    r.notify.events = 7;
    TEST_CHECK_INT(notify_audit(n, &r, &s.rec), 0);
    s.rec.event = "skipped";
    TEST_CHECK_INT(notify_audit(n, &r, &s.rec), 0);
    s.rec.event = "spared";
    TEST_CHECK_INT(notify_audit(n, &r, &s.rec), 1);
    struct notify_stats st;
    notify_get_stats(n, &st);
    TEST_CHECK_INT(st.sent + st.failed + st.dropped + st.queued, 1);
    n->cfg.drain_timeout = -1; /* the url file does not exist: do not wait for retries */
    notify_free(n);
    sample_free(&s);
}

TEST(test_retry_after_500_then_sent)
{
    struct tmpdir t;
    const unsigned script[] = {500, 503};
    setup_receiver(&t, script, 2);
    struct notify *n =
        notify_new(&(struct notify_cfg){.backoff = 0.01, .max_attempts = 5}, (char[64]){0}, 64);
    log_capture_begin(t.root);
    TEST_CHECK_INT(notify_enqueue(n, "notebooks", url_file, "{\"a\":1}"), 1);
    struct notify_stats st;
    WAIT_FOR(n, st, st.sent == 1);
    char *log = log_capture_end();
    TEST_CHECK_INT(st.sent, 1);
    TEST_CHECK_INT(st.retries, 2);
    TEST_CHECK_INT(st.failed, 0);
    TEST_CHECK_INT(receiver_requests(), 3);
    TEST_CHECK_STR(rcv.bodies[2], "{\"a\":1}");
    TEST_CHECK(strstr(log, "s3cr3t") == NULL);
    free(log);
    notify_free(n);
    receiver_stop();
    tmptree_finish(t.root);
}

TEST(test_gives_up_and_4xx_not_retried)
{
    struct tmpdir t;
    const unsigned script[] = {500, 500, 500, 400};
    setup_receiver(&t, script, 4);
    struct notify *n =
        notify_new(&(struct notify_cfg){.backoff = 0.01, .max_attempts = 3}, (char[64]){0}, 64);
    log_capture_begin(t.root);
    notify_enqueue(n, "notebooks", url_file, "{}"); /* 500, 500, 500: gives up */
    notify_enqueue(n, "notebooks", url_file, "{}"); /* 400: refused, not retried */
    struct notify_stats st;
    WAIT_FOR(n, st, st.failed == 2);
    char *log = log_capture_end();
    TEST_CHECK_INT(st.failed, 2);
    TEST_CHECK_INT(st.retries, 2);
    TEST_CHECK_INT(st.sent, 0);
    TEST_CHECK_INT(receiver_requests(), 4);
    TEST_CHECK_CONTAINS(log, "rule 'notebooks'");
    TEST_CHECK_CONTAINS(log, "HTTP 400");
    TEST_CHECK_CONTAINS(log, "http://127.0.0.1:");
    TEST_CHECK(strstr(log, "s3cr3t") == NULL);
    free(log);
    notify_free(n);
    receiver_stop();
    tmptree_finish(t.root);
}

TEST(test_connect_error_keeps_url_out_of_log)
{
    struct tmpdir t;
    tmpdir_init(&t);
    unsigned port;
    int fd = hang_listen(&port);
    close(fd); /* nothing listens there now: connection refused */
    char url[256];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u" SECRET_PATH, port);
    write_url(t.root, url);
    struct notify *n =
        notify_new(&(struct notify_cfg){.backoff = 0.01, .max_attempts = 2}, (char[64]){0}, 64);
    log_capture_begin(t.root);
    notify_enqueue(n, "notebooks", url_file, "{}");
    struct notify_stats st;
    WAIT_FOR(n, st, st.failed == 1);
    char *log = log_capture_end();
    TEST_CHECK_INT(st.failed, 1);
    TEST_CHECK_CONTAINS(log, "cannot deliver the webhook notification of rule 'notebooks'");
    TEST_CHECK_CONTAINS(log, "/...");
    TEST_CHECK(strstr(log, "s3cr3t") == NULL);
    free(log);
    notify_free(n);
    tmptree_finish(t.root);
}

/*
 * A receiver that hangs: while the worker is stuck inside the request, notify_audit (what
 * the cycle calls) still returns at once, the queue fills up and the excess is dropped and
 * counted; at shutdown the hanging call is cancelled after the drain time instead of waiting
 * out its 60 s timeout.
 */
TEST(test_hanging_receiver_full_queue)
{
    struct tmpdir t;
    tmpdir_init(&t);
    unsigned port;
    int fd = hang_listen(&port);
    TEST_CHECK(fd >= 0);
    char url[256];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u" SECRET_PATH, port);
    write_url(t.root, url);
    struct notify *n =
        notify_new(&(struct notify_cfg){.queue_size = 4, .timeout = 60, .drain_timeout = 0.2},
                   (char[64]){0}, 64);
    struct sample s;
    sample_init(&s, "notice");
    struct rule r = rule_with(url_file, NOTIFY_FORMAT_SLACK, RULE_NOTIFY_NOTICE);
    TEST_CHECK_INT(notify_audit(n, &r, &s.rec), 1);
    struct notify_stats st;
    WAIT_FOR(n, st, st.in_flight);
    TEST_CHECK(st.in_flight); /* the worker is blocked in the hanging request */
    int queued = 0, dropped = 0;
    for (int i = 0; i < 6; i++) {
        int rc = notify_audit(n, &r, &s.rec);
        queued += rc == 1;
        dropped += rc == -1;
    }
    notify_get_stats(n, &st);
    TEST_CHECK(st.in_flight);  /* still blocked: the calls above did not wait for it */
    TEST_CHECK_INT(queued, 3); /* the request under way holds one of the 4 places */
    TEST_CHECK_INT(dropped, 3);
    TEST_CHECK_INT(st.dropped, 3);
    TEST_CHECK_INT(st.queued, 4);
    TEST_CHECK_INT(st.sent, 0);

    struct expo *e = expo_new();
    notify_metrics(n, e);
    struct sbuf out = {0};
    expo_render(e, &out);
    TEST_CHECK_CONTAINS(out.buf, "gpureclaim_enforcer_notifications_total{result=\"dropped\"} 3");
    TEST_CHECK_CONTAINS(out.buf, "gpureclaim_enforcer_notification_queue_length 4");
    TEST_CHECK(strstr(out.buf, "s3cr3t") == NULL);
    sbuf_free(&out);
    expo_free(e);

    double t0 = mono_now();
    notify_free(n); /* drains 0.2 s, then cancels the request and drops the rest */
    TEST_CHECK(mono_now() - t0 < 30); /* not the request's 60 s timeout */
    close(fd);
    sample_free(&s);
    tmptree_finish(t.root);
}

/* The URL file is read at each attempt: a missing file is retried, a rotated one used. */
TEST(test_url_file_read_at_send_time)
{
    struct tmpdir t;
    tmpdir_init(&t);
    receiver_start(NULL, 0);
    snprintf(url_file, sizeof(url_file), "%s/url", t.root);
    struct notify *n =
        notify_new(&(struct notify_cfg){.backoff = 0.05, .max_attempts = 50}, (char[64]){0}, 64);
    notify_enqueue(n, "notebooks", url_file, "{}");
    struct notify_stats st;
    WAIT_FOR(n, st, st.retries >= 1);
    TEST_CHECK(st.retries >= 1);
    TEST_CHECK_INT(st.sent, 0);
    char url[256];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/rotated", rcv.port);
    write_url(t.root, url);
    WAIT_FOR(n, st, st.sent == 1);
    TEST_CHECK_INT(st.sent, 1);
    TEST_CHECK_STR(rcv.paths[0], "/rotated");
    /* not an http(s) URL: refused at once */
    write_url(t.root, "file:///etc/passwd");
    notify_enqueue(n, "notebooks", url_file, "{}");
    WAIT_FOR(n, st, st.failed == 1);
    TEST_CHECK_INT(st.failed, 1);
    TEST_CHECK_INT(receiver_requests(), 1);
    notify_free(n);
    receiver_stop();
    tmptree_finish(t.root);
}

/* ---- the notify: section of a rules file ------------------------------------------------- */

static int load(const char *yaml, struct ruleset *rs, struct rules_errors *errs)
{
    memset(rs, 0, sizeof(*rs));
    memset(errs, 0, sizeof(*errs));
    return rules_load_buffer("t.yaml", yaml, strlen(yaml), rs, errs);
}

TEST(test_rules_notify_section)
{
    struct ruleset rs;
    struct rules_errors errs;
    const char *ok = "apiVersion: gpureclaim/v1\n"
                     "kind: ReclaimRules\n"
                     "defaults:\n"
                     "  threshold: 10\n"
                     "  idleTimer: 15m\n"
                     "  notify:\n"
                     "    urlFile: /etc/gpureclaim/webhook\n"
                     "    format: slack\n"
                     "rules:\n"
                     "- name: a\n"
                     "- name: b\n"
                     "  notify:\n"
                     "    events: [notice, spare]\n"
                     "- name: c\n"
                     "  notify:\n"
                     "    events: []\n"
                     "- name: d\n"
                     "  notify:\n"
                     "    urlFile: /other\n"
                     "    format: json\n";
    TEST_CHECK_INT(load(ok, &rs, &errs), 0);
    TEST_CHECK_INT(errs.n, 0);
    TEST_CHECK_INT(rs.n, 4);
    if (rs.n == 4) {
        TEST_CHECK_STR(rs.rules[0].notify.url_file, "/etc/gpureclaim/webhook");
        TEST_CHECK_INT(rs.rules[0].notify.format, NOTIFY_FORMAT_SLACK);
        TEST_CHECK_INT(rs.rules[0].notify.events, 7);
        TEST_CHECK_STR(rs.rules[1].notify.url_file, "/etc/gpureclaim/webhook");
        TEST_CHECK_INT(rs.rules[1].notify.format, NOTIFY_FORMAT_SLACK);
        TEST_CHECK_INT(rs.rules[1].notify.events, RULE_NOTIFY_NOTICE | RULE_NOTIFY_SPARE);
        TEST_CHECK(rs.rules[2].notify.url_file == NULL); /* events: [] turns it off */
        TEST_CHECK_STR(rs.rules[3].notify.url_file, "/other");
        TEST_CHECK_INT(rs.rules[3].notify.format, NOTIFY_FORMAT_JSON);
    }
    rules_free(&rs);
    rules_errors_free(&errs);

    const char *bad = "apiVersion: gpureclaim/v1\n"
                      "kind: ReclaimRules\n"
                      "rules:\n"
                      "- name: a\n"
                      "  threshold: 10\n"
                      "  idleTimer: 15m\n"
                      "  notify:\n"
                      "    format: teams\n"
                      "    events: [notice, notice, page]\n"
                      "    url: x\n"
                      "- name: b\n"
                      "  threshold: 10\n"
                      "  idleTimer: 15m\n"
                      "  notify:\n"
                      "    urlFile: relative/path\n"
                      "- name: c\n"
                      "  threshold: 10\n"
                      "  idleTimer: 15m\n"
                      "  notify:\n"
                      "    format: json\n";
    TEST_CHECK_INT(load(bad, &rs, &errs), -1);
    TEST_CHECK_INT(errs.n, 6);
    if (errs.n == 6) {
        TEST_CHECK_STR(errs.msg[0],
                       "t.yaml:8:13: invalid notify format 'teams' (expected json or slack)");
        TEST_CHECK_STR(errs.msg[1], "t.yaml:9:22: duplicate notify event 'notice'");
        TEST_CHECK_STR(
            errs.msg[2],
            "t.yaml:9:30: invalid notify event 'page' (expected notice, action or spare)");
        TEST_CHECK_STR(errs.msg[3], "t.yaml:10:5: unknown key 'url' in 'notify' of rule 'a'");
        TEST_CHECK_STR(errs.msg[4],
                       "t.yaml:15:14: 'urlFile' must be an absolute path, got 'relative/path'");
        TEST_CHECK_STR(errs.msg[5],
                       "t.yaml:20:5: missing required key 'urlFile' in 'notify' of rule 'c'");
    }
    rules_free(&rs);
    rules_errors_free(&errs);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    log_set_level("debug");
    RUN(test_slack_notice_sentence);
    RUN(test_slack_action_and_spare);
    RUN(test_redact_and_scrub);
    RUN(test_backoff_doubles_up_to_max);
    RUN(test_json_and_slack_delivered);
    RUN(test_events_filter);
    RUN(test_retry_after_500_then_sent);
    RUN(test_gives_up_and_4xx_not_retried);
    RUN(test_connect_error_keeps_url_out_of_log);
    RUN(test_hanging_receiver_full_queue);
    RUN(test_url_file_read_at_send_time);
    RUN(test_rules_notify_section);
    return test_done();
}
