/*
 * The `run` loop (see daemon.h): evaluation every interval, rule reloads, self-metrics.
 *
 * Only the main thread touches the loop state. After every change (a cycle, a reload) it
 * renders the whole exposition into a string and swaps it in under a mutex; the HTTP pool
 * threads only copy that string. A scrape therefore never sees half a cycle, and a slow
 * cycle never blocks a scrape.
 *
 * Signals only set flags. The loop sleeps in short slices so that SIGTERM is honoured
 * within a fraction of a second between cycles. During a cycle the action engine and the
 * Kubernetes client read the same flag and start no new call once it is set: an operator who
 * stops the enforcer expects it to stop acting at once, not after the rest of the cycle. The
 * call under way finishes (bounded by --kube.timeout, or --prometheus.timeout for a query)
 * and its result reaches the ledger and the audit file before the process exits.
 */
#include "daemon.h"

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "act.h"
#include "enfmetrics.h"
#include "fetch.h"
#include "decide.h"
#include "expo.h"
#include "file.h"
#include "httpd.h"
#include "lease.h"
#include "log.h"
#include "perm.h"
#include "replay.h"
#include "report.h"
#include "rfc3339.h"
#include "report.h"
#include "rules.h"

#ifndef GPURECLAIM_VERSION
#define GPURECLAIM_VERSION "unknown"
#endif

/* Rules files are small; a bigger one is a mistake (or not a rules file). */

static volatile sig_atomic_t got_stop, got_hup;

const volatile sig_atomic_t *daemon_stop_flag(void)
{
    return &got_stop;
}

static void on_stop(int sig)
{
    (void)sig;
    got_stop = 1;
}

static void on_hup(int sig)
{
    (void)sig;
    got_hup = 1;
}

/* (rule, decision, reason) -> count, for the decisions counter and gauge. */
struct tally {
    char *rule;
    enum decision decision;
    enum reason reason;
    double n;
};

struct tallies {
    struct tally *v;
    size_t n;
};

/* Per rule name: evaluations that failed (a query error), and whether the last one did. */
struct rule_eval {
    char *rule;
    double errors;
    bool failed;
    const char *read_path; /* static (fetch.c); NULL before the first cycle */
    double samples[2];     /* raw samples read in full [0] and incrementally [1] (issue 26) */
    double late;           /* samples of the read overlap that arrived after their read */
    bool read_raw;         /* the rule was read as raw samples at least once */
};

struct idle_entry {
    char *rule;
    struct labels identity;
    double since;
};

struct daemon {
    const struct daemon_cfg *cfg;
    double started; /* monotonic time at start, for --at.advance */
    struct promq *q;

    struct ruleset rules; /* in force */
    bool file_seen;       /* st_mtim/st_size below are valid */
    struct timespec mtime;
    off_t size;
    uint64_t tried_hash; /* content hash of the last load attempt (good or bad) */

    double cycles_ok, cycles_err, cycle_duration, last_success;
    struct tallies total, last;
    struct idle_entry *idle;
    size_t nidle;
    struct rule_eval *evals; /* every rule name seen since start (counters persist) */
    size_t nevals;
    double reload_success, last_reload_ok, reloads_ok, reloads_fail;

    /* Issue 26: the state carried between cycles (NULL: every cycle reads the whole window),
       the data of the cycle under way for the re-proof, the lead at the last cycle, the
       phases of the last cycle (read, decide, act) and the cycles run. */
    struct replay *live;
    const struct rule_data *cycle_data;
    bool was_leader;
    double phase[3];
    double ncycles;

    pthread_mutex_t mu;
    char *snapshot; /* rendered exposition, guarded by mu */
};

static void tally_add(struct tallies *t, const char *rule, enum decision d, enum reason r)
{
    for (size_t i = 0; i < t->n; i++) {
        struct tally *x = &t->v[i];
        if (x->decision == d && x->reason == r && strcmp(x->rule, rule) == 0) {
            x->n++;
            return;
        }
    }
    t->v = xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
    t->v[t->n++] = (struct tally){.rule = xstrdup(rule), .decision = d, .reason = r, .n = 1};
}

static void tallies_free(struct tallies *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].rule);
    free(t->v);
    *t = (struct tallies){0};
}

static struct rule_eval *rule_eval_get(struct daemon *dm, const char *rule)
{
    for (size_t i = 0; i < dm->nevals; i++)
        if (strcmp(dm->evals[i].rule, rule) == 0)
            return &dm->evals[i];
    dm->evals = xrealloc(dm->evals, (dm->nevals + 1) * sizeof(*dm->evals));
    dm->evals[dm->nevals] = (struct rule_eval){.rule = xstrdup(rule)};
    return &dm->evals[dm->nevals++];
}

static void rule_evals_free(struct daemon *dm)
{
    for (size_t i = 0; i < dm->nevals; i++)
        free(dm->evals[i].rule);
    free(dm->evals);
}

static void idle_free(struct daemon *dm)
{
    for (size_t i = 0; i < dm->nidle; i++) {
        free(dm->idle[i].rule);
        labels_free(&dm->idle[i].identity);
    }
    free(dm->idle);
    dm->idle = NULL;
    dm->nidle = 0;
}

static void add_tallies(struct expo *e, const struct expo_family *f, const struct tallies *t)
{
    for (size_t i = 0; i < t->n; i++)
        expo_put(e, f, t->v[i].n, "rule", t->v[i].rule, "decision",
                 decide_decision_name(t->v[i].decision), "reason",
                 decide_reason_name(t->v[i].reason), (const char *)NULL);
}

static void add_idle(struct expo *e, const struct idle_entry *w)
{
    const char **lv = xcalloc(2 * (w->identity.n + 1), sizeof(*lv));
    size_t n = 0;
    lv[2 * n] = "rule";
    lv[2 * n++ + 1] = w->rule;
    for (size_t i = 0; i < w->identity.n; i++) {
        /* The rule label is ours; an identity label of the same name would collide. */
        if (strcmp(w->identity.v[i].name, "rule") == 0)
            continue;
        lv[2 * n] = w->identity.v[i].name;
        lv[2 * n++ + 1] = w->identity.v[i].value;
    }
    expo_putv(e, EMX(WORKLOAD_IDLE_SINCE_TIMESTAMP_SECONDS), w->since, lv, n);
    free(lv);
}

/* Add every self-metric to `e`: the loop's, then the action engine's, the lease's, perm's. */
static void add_metrics(struct daemon *dm, struct expo *e)
{
    expo_put(e, EMX(BUILD_INFO), 1.0, "version", GPURECLAIM_VERSION, (const char *)NULL);
    expo_put(e, EMX(CYCLES_TOTAL), dm->cycles_ok, "result", "success", (const char *)NULL);
    expo_put(e, EMX(CYCLES_TOTAL), dm->cycles_err, "result", "error", (const char *)NULL);
    expo_put(e, EMX(CYCLE_DURATION_SECONDS), dm->cycle_duration, (const char *)NULL);
    expo_put(e, EMX(LAST_SUCCESS_TIMESTAMP_SECONDS), dm->last_success, (const char *)NULL);
    /* Every rule in force, so an alert on the gauge sees 0 before the first failure. */
    for (size_t i = 0; i < dm->rules.n; i++) {
        struct rule_eval *re = rule_eval_get(dm, dm->rules.rules[i].name);
        expo_put(e, EMX(RULE_EVALUATION_FAILED), re->failed ? 1.0 : 0.0, "rule", re->rule,
                 (const char *)NULL);
    }
    for (size_t i = 0; i < dm->rules.n; i++) {
        struct rule_eval *re = rule_eval_get(dm, dm->rules.rules[i].name);
        if (re->read_path)
            expo_put(e, EMX(RULE_READ_PATH), 1.0, "rule", re->rule, "path", re->read_path,
                     (const char *)NULL);
    }
    for (size_t i = 0; i < dm->nevals; i++)
        expo_put(e, EMX(RULE_EVALUATION_ERRORS_TOTAL), dm->evals[i].errors, "rule",
                 dm->evals[i].rule, (const char *)NULL);
    static const char *const phases[] = {"read", "decide", "act"};
    for (size_t i = 0; i < 3; i++)
        expo_put(e, EMX(CYCLE_PHASE_SECONDS), dm->phase[i], "phase", phases[i], (const char *)NULL);
    for (size_t i = 0; i < dm->nevals; i++) {
        if (!dm->evals[i].read_raw)
            continue;
        expo_put(e, EMX(READ_SAMPLES_TOTAL), dm->evals[i].samples[0], "rule", dm->evals[i].rule,
                 "kind", "full", (const char *)NULL);
        expo_put(e, EMX(READ_SAMPLES_TOTAL), dm->evals[i].samples[1], "rule", dm->evals[i].rule,
                 "kind", "incremental", (const char *)NULL);
        expo_put(e, EMX(LATE_SAMPLES_TOTAL), dm->evals[i].late, "rule", dm->evals[i].rule,
                 (const char *)NULL);
    }
    if (dm->live) {
        struct replay_live_stats ls;
        replay_live_stats(dm->live, &ls);
        expo_put(e, EMX(PROOF_SERIES), (double)ls.series, (const char *)NULL);
        expo_put(e, EMX(PROOF_BYTES), (double)ls.bytes, (const char *)NULL);
        expo_put(e, EMX(REPROOFS_TOTAL), (double)(ls.reproofs - ls.refuted), "result", "confirmed",
                 (const char *)NULL);
        expo_put(e, EMX(REPROOFS_TOTAL), (double)ls.refuted, "result", "refuted",
                 (const char *)NULL);
    }
    add_tallies(e, EMX(DECISIONS_TOTAL), &dm->total);
    add_tallies(e, EMX(DECISIONS), &dm->last);
    expo_put(e, EMX(PROMETHEUS_REQUESTS_TOTAL), (double)promq_requests(dm->q), (const char *)NULL);
    expo_put(e, EMX(PROMETHEUS_ERRORS_TOTAL), (double)promq_failures(dm->q), (const char *)NULL);
    if (dm->rules.file)
        expo_put(e, EMX(RULES_INFO), 1.0, "file", dm->rules.file, "version",
                 dm->rules.api_version ? dm->rules.api_version : "", "hash", dm->rules.hash,
                 (const char *)NULL);
    expo_put(e, EMX(RULES_RELOAD_SUCCESS), dm->reload_success, (const char *)NULL);
    expo_put(e, EMX(RULES_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS), dm->last_reload_ok,
             (const char *)NULL);
    expo_put(e, EMX(RULES_RELOADS_TOTAL), dm->reloads_ok, "result", "success", (const char *)NULL);
    expo_put(e, EMX(RULES_RELOADS_TOTAL), dm->reloads_fail, "result", "failure",
             (const char *)NULL);
    expo_put(e, EMX(DRY_RUN), dm->cfg->dry_run ? 1.0 : 0.0, (const char *)NULL);
    for (size_t i = 0; i < dm->nidle; i++)
        add_idle(e, &dm->idle[i]);
    if (dm->cfg->act)
        act_metrics(dm->cfg->act, e);
    lease_metrics(dm->cfg->lease, e);
    perm_metrics(dm->cfg->perm, e);
}

/* The heap in use (MiB), for the debug log's memory of each phase of a cycle: at a million
   workloads what a phase holds is the figure to watch (issue 26). */
static double heap_mib(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    return (double)(mi.uordblks + mi.hblkhd) / 1048576.0;
#else
    return NAN;
#endif
}

/* Render every self-metric into a new snapshot and swap it in. */
static void publish(struct daemon *dm)
{
    double t0 = mono_now();
    struct expo *e = expo_new();
    add_metrics(dm, e);
    struct sbuf out = {0};
    expo_render(e, &out);
    double h = log_threshold <= LOG_DEBUG ? heap_mib() : NAN;
    expo_free(e);
    log_debug("metrics rendered in %.3f s: %zu bytes, heap in use %.0f MiB before the renderer's "
              "is freed",
              mono_now() - t0, out.len, h);
    char *text = sbuf_take(&out);
    pthread_mutex_lock(&dm->mu);
    char *old = dm->snapshot;
    dm->snapshot = text;
    pthread_mutex_unlock(&dm->mu);
    free(old);
}

static int metrics_cb(void *arg, struct sbuf *out)
{
    struct daemon *dm = arg;
    pthread_mutex_lock(&dm->mu);
    sbuf_puts(out, dm->snapshot ? dm->snapshot : "");
    pthread_mutex_unlock(&dm->mu);
    return 0;
}

/*
 * Load the rules file if it changed (or when `force`). `stat_only`: skip the read when
 * mtime and size are unchanged. Returns 1 when new rules are in force, 0 when nothing
 * changed, -1 when the file could not be loaded.
 */
static int reload(struct daemon *dm, bool force, bool stat_only)
{
    const char *path = dm->cfg->rules_file;
    struct stat st;
    if (stat(path, &st) != 0) {
        int err = errno;
        /* Once while it lasts; a reload that was asked for (start, SIGHUP) is answered even
         * when the condition is already known. */
        if (force && log_cond_active("rules file"))
            log_error("cannot stat rules file '%s': %s; keeping the rules in force", path,
                      strerror(err));
        log_cond("rules file", LOG_ERROR,
                 "cannot stat rules file '%s': %s; keeping the rules in force", path,
                 strerror(err));
        dm->file_seen = false;
        dm->tried_hash = 0; /* a file that comes back, even unchanged, is judged again */
        if (dm->reload_success != 0) {
            dm->reload_success = 0;
            dm->reloads_fail++;
        }
        return -1;
    }
    log_cond_clear("rules file");
    bool same_stat = dm->file_seen && st.st_mtim.tv_sec == dm->mtime.tv_sec &&
                     st.st_mtim.tv_nsec == dm->mtime.tv_nsec && st.st_size == dm->size;
    if (!force && stat_only && same_stat)
        return 0;

    char why[128];
    size_t len;
    char *buf = file_read(path, RULES_MAX_FILE_BYTES, &len, why, sizeof(why));
    if (!buf) {
        log_error("cannot read rules file '%s': %s; keeping the rules in force", path, why);
        if (dm->reload_success != 0) {
            dm->reload_success = 0;
            dm->reloads_fail++;
        }
        return -1;
    }
    dm->file_seen = true;
    dm->mtime = st.st_mtim;
    dm->size = st.st_size;
    uint64_t hash = fnv1a64(buf, len);
    if (!force && hash == dm->tried_hash) {
        free(buf);
        return 0;
    }
    dm->tried_hash = hash;

    struct ruleset rs = {0};
    struct rules_errors errs = {0};
    int rc = rules_load_buffer(path, buf, len, &rs, &errs);
    free(buf);
    if (rc != 0) {
        for (size_t i = 0; i < errs.n; i++)
            log_error("%s", errs.msg[i]);
        if (dm->rules.file)
            log_error("rules file '%s' has %zu error%s; keeping the rules in force (hash %s)", path,
                      errs.n, errs.n == 1 ? "" : "s", dm->rules.hash);
        else
            log_error("rules file '%s' has %zu error%s", path, errs.n, errs.n == 1 ? "" : "s");
        rules_errors_free(&errs);
        rules_free(&rs);
        dm->reload_success = 0;
        dm->reloads_fail++;
        return -1;
    }
    rules_errors_free(&errs);
    log_info("loaded rules file '%s' (%s, %zu rule%s, hash %s)", path, rs.api_version, rs.n,
             rs.n == 1 ? "" : "s", rs.hash);
    struct ruleset old = dm->rules;
    dm->rules = rs;
    /* The carried state follows the new rules before the old ones (whose selector strings
       it holds) are freed: what they still read is kept (replay.h). */
    if (dm->live)
        replay_live_rules(dm->live, &dm->rules);
    rules_free(&old);
    dm->reload_success = 1;
    dm->last_reload_ok = wall_now();
    dm->reloads_ok++;
    /* New rules may use other verbs, kinds or namespaces: check before they act. */
    if (!dm->cfg->once)
        perm_check(dm->cfg->perm, &dm->rules, wall_now());
    return 1;
}

static void log_reclaim(const struct decision_rec *r)
{
    struct sbuf b = {0};
    sbuf_printf(&b, "reclaim rule=%s", r->rule->name);
    for (size_t i = 0; i < r->identity.n; i++) {
        sbuf_printf(&b, " %s=", r->identity.v[i].name);
        /* logfmt: quote values that would otherwise split the line. */
        if (strpbrk(r->identity.v[i].value, " =\"") || !r->identity.v[i].value[0]) {
            sbuf_putc(&b, '\'');
            sbuf_puts(&b, r->identity.v[i].value);
            sbuf_putc(&b, '\'');
        } else {
            sbuf_puts(&b, r->identity.v[i].value);
        }
    }
    char since[48];
    rfc3339_format(since, sizeof(since), r->idle_since, RFC3339_MILLI_FRAC);
    sbuf_printf(&b, " reason=%s idle_since=%s dry_run=%s action=%s", decide_reason_name(r->reason),
                since, r->dry_run ? "true" : "false", rules_action_name(r->rule->action));
    log_info("%s", b.buf);
    sbuf_free(&b);
}

/* The time of the next cycle. */
static double cycle_time(const struct daemon *dm)
{
    double now = isnan(dm->cfg->at) ? wall_now() : dm->cfg->at;
    /* --at.step: one step per cycle, so a test knows each cycle's time in advance. */
    if (!isnan(dm->cfg->at) && dm->cfg->at_step > 0)
        return now + dm->ncycles * dm->cfg->at_step;
    /* --at.advance: the clock starts at --at and runs, so tests can walk canned history. */
    if (!isnan(dm->cfg->at) && dm->cfg->at_advance)
        now += mono_now() - dm->started;
    return now;
}

/* --at.before-cycle (tests): run the command; its exit status, or -1 when it did not run. */
static int before_cycle(const struct daemon *dm)
{
    char t[64];
    snprintf(t, sizeof(t), "%.3f", cycle_time(dm));
    setenv("GPURECLAIM_CYCLE_TIME", t, 1);
    int st = system(dm->cfg->before_cycle);
    if (st == -1 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

/* act_reprove_fn: the full-window proof of an incremental decision of this cycle. */
static bool daemon_reprove(void *arg, const struct decision_rec *d, double now,
                           struct decision_rec *proven, char *msg, size_t msglen)
{
    struct daemon *dm = arg;
    if (!dm->live || !dm->cycle_data) {
        snprintf(msg, msglen, "full-window proof: no cycle data");
        return false;
    }
    return replay_live_reprove(dm->live, dm->cycle_data, d, now, proven, msg, msglen);
}

/*
 * Read and decide with the state carried from the last cycle (issue 26): as fetch_evaluate,
 * through replay_live_cycle. A replica that becomes the leader reads everything in full
 * first: a standby's state is as good, but acting starts from a fresh proof.
 */
static int live_evaluate(struct daemon *dm, double now, struct rule_data **data,
                         struct decisions *out)
{
    bool leader = lease_is_leader(dm->cfg->lease);
    if (leader && !dm->was_leader && dm->ncycles > 0) {
        log_info("became the leader: reading every rule's whole window");
        replay_live_invalidate(dm->live);
    }
    dm->was_leader = leader;
    size_t n = dm->rules.n;
    *data = xcalloc(n ? n : 1, sizeof(**data));
    double t0 = mono_now();
    int rc = replay_live_cycle(dm->live, now, *data);
    double t1 = mono_now();
    double h1 = log_threshold <= LOG_DEBUG ? heap_mib() : NAN;
    decide(*data, n, now, out);
    if (log_threshold <= LOG_DEBUG)
        log_debug("heap in use: %.0f MiB after the read, %.0f MiB after decide", h1, heap_mib());
    for (size_t i = 0; i < out->n; i++)
        out->v[i].dry_run |= dm->cfg->dry_run;
    dm->phase[0] = t1 - t0;
    dm->phase[1] = mono_now() - t1;
    for (size_t i = 0; i < n; i++) {
        struct replay_live_rule lr;
        replay_live_rule(dm->live, i, &lr);
        if (!lr.raw)
            continue;
        struct rule_eval *re = rule_eval_get(dm, dm->rules.rules[i].name);
        re->read_raw = true;
        re->samples[lr.full ? 0 : 1] += (double)lr.samples;
        re->late += (double)lr.late;
        log_debug("rule '%s': proof %s, %zu raw samples read%s%s", re->rule,
                  lr.full ? "full" : "incremental", lr.samples, lr.late ? ", late: " : "",
                  lr.late ? "yes" : "");
    }
    return rc;
}

static void run_cycle(struct daemon *dm)
{
    double t0 = mono_now();
    double now = cycle_time(dm);
    size_t n = dm->rules.n;
    dm->phase[2] = 0;
    /* The last cycle's idle workloads are in the published snapshot already, and this cycle
       lists them anew: not held through the read and decide (at a million workloads, some
       130 MB at the cycle's peak). */
    idle_free(dm);
    struct rule_data *data;
    struct decisions d = {0};
    int rc;
    if (dm->live) {
        rc = live_evaluate(dm, now, &data, &d);
    } else {
        /* The same evaluation as plan and explain (fetch_evaluate). */
        rc = fetch_evaluate(dm->q, &dm->rules, now, dm->cfg->dry_run, &data, &d, &dm->phase[0],
                            &dm->phase[1]);
    }
    dm->ncycles++;
    for (size_t i = 0; i < n; i++) {
        bool failed = data[i].error || data[i].pending_error;
        struct rule_eval *re = rule_eval_get(dm, dm->rules.rules[i].name);
        re->failed = failed;
        re->errors += failed ? 1 : 0;
        const char *path = data[i].read_path && data[i].read_path[0] ? data[i].read_path : NULL;
        if (path && (!re->read_path || strcmp(re->read_path, path) != 0))
            log_info("rule '%s': activity read through %s%s", re->rule, path,
                     strcmp(path, "promql") == 0 ? " (the PromQL plan)" : " (raw samples)");
        re->read_path = path ? path : re->read_path;
        char key[160];
        snprintf(key, sizeof(key), "rule evaluation %s", dm->rules.rules[i].name);
        if (failed)
            log_cond(key, LOG_ERROR, "rule '%s' could not be evaluated, its workloads are kept: %s",
                     dm->rules.rules[i].name, data[i].errmsg);
        else
            log_cond_clear(key);
    }

    if (dm->cfg->decisions_file) {
        FILE *f = fopen(dm->cfg->decisions_file, "a");
        if (f) {
            struct sbuf b = {0};
            report_render_json(&d, &b);
            fprintf(f, "@ %.3f\n", now);
            fwrite(b.buf, 1, b.len, f);
            fclose(f);
            sbuf_free(&b);
        } else {
            log_warn("cannot open '%s': %s", dm->cfg->decisions_file, strerror(errno));
        }
    }
    tallies_free(&dm->last);
    for (size_t i = 0; i < d.n; i++) {
        struct decision_rec *r = &d.v[i];
        tally_add(&dm->last, r->rule->name, r->decision, r->reason);
        tally_add(&dm->total, r->rule->name, r->decision, r->reason);
        if (r->decision == DECISION_RECLAIM)
            log_reclaim(r);
        if (!isnan(r->idle_since)) {
            dm->idle = xrealloc(dm->idle, (dm->nidle + 1) * sizeof(*dm->idle));
            struct idle_entry *w = &dm->idle[dm->nidle++];
            w->rule = xstrdup(r->rule->name);
            w->identity = (struct labels){0};
            labels_copy(&w->identity, &r->identity);
            w->since = r->idle_since;
        }
    }
    /* After the decisions are logged, so the log reads decision first, then notice/action;
       not at all once told to stop (a signal during the queries). */
    /*
     * A standby evaluates and serves the decisions as metrics, but sends no notice and takes
     * no action: that is the leader's alone (lease.h).
     */
    if (dm->cfg->act && got_stop)
        log_info("stopping: no notice or action in this cycle");
    else if (dm->cfg->act && lease_is_leader(dm->cfg->lease)) {
        act_set_kinds(dm->cfg->act, dm->rules.kinds); /* the table of the rules in force */
        double ta = mono_now();
        dm->cycle_data = data;
        act_cycle(dm->cfg->act, &d, now);
        dm->cycle_data = NULL;
        dm->phase[2] = mono_now() - ta;
    } else if (dm->cfg->act)
        log_debug("not the leader: %zu decisions evaluated, no notice or action", d.n);
    if (log_threshold <= LOG_DEBUG)
        log_debug("heap in use: %.0f MiB after act", heap_mib());
    decisions_free(&d);
    if (dm->live)
        replay_live_release(dm->live, data);
    fetch_free(data, n);
    free(data);

    dm->cycle_duration = mono_now() - t0;
    if (rc == 0) {
        dm->cycles_ok++;
        dm->last_success = wall_now();
    } else {
        dm->cycles_err++;
    }
    if (log_threshold <= LOG_DEBUG)
        log_debug("heap in use: %.0f MiB after the cycle", heap_mib());
    log_debug("cycle done in %.3f s (read %.3f s, decide %.3f s, act %.3f s): %zu rule%s, %lu "
              "prometheus requests so far",
              dm->cycle_duration, dm->phase[0], dm->phase[1], dm->phase[2], n, n == 1 ? "" : "s",
              promq_requests(dm->q));
}

static void sleep_slice(double seconds)
{
    if (seconds <= 0)
        return;
    if (seconds > 0.2)
        seconds = 0.2;
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(seconds * 1e9)};
    nanosleep(&ts, NULL); /* EINTR from a signal is what we want */
}

static void install_signals(void)
{
    struct sigaction sa = {0};
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_hup;
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
}

int daemon_run(const struct daemon_cfg *cfg)
{
    struct daemon dm = {.cfg = cfg, .started = mono_now()};
    pthread_mutex_init(&dm.mu, NULL);
    got_stop = got_hup = 0;
    install_signals();

    if (reload(&dm, true, false) != 1) {
        log_error("cannot start: rules file '%s' did not load", cfg->rules_file);
        pthread_mutex_destroy(&dm.mu);
        return 1;
    }
    /* The first load is the start, not a reload. */
    dm.reloads_ok = 0;
    if (cfg->prom.insecure)
        log_warn("TLS verification of '%s' is disabled (--prometheus.insecure-skip-verify)",
                 cfg->prom.url);
    dm.q = promq_new(&cfg->prom);
    if (cfg->full_read_interval > 0) {
        struct replay_live_cfg lc = {.overlap = cfg->read_overlap,
                                     .full_every = cfg->full_read_interval};
        dm.live = replay_live_open(dm.q, &dm.rules, &lc);
        if (cfg->act)
            act_set_reprove(cfg->act, daemon_reprove, &dm);
    }
    int status = 0;
    struct httpd *h = NULL;
    if (cfg->once) {
        run_cycle(&dm);
        status = dm.cycles_err > 0 ? 1 : 0;
        goto out;
    }
    publish(&dm);

    char err[256];
    struct httpd_cfg hc = {.listen = cfg->listen,
                           .metrics_path = cfg->telemetry_path,
                           .title = "gpureclaim enforcer",
                           .metrics = metrics_cb,
                           .arg = &dm,
                           .threads = 2,
                           .timeout = 10,
                           .web = cfg->web};
    h = httpd_start(&hc, err, sizeof(err));
    if (!h) {
        log_error("cannot serve metrics on '%s': %s", cfg->listen, err);
        status = 1;
        goto out;
    }
    log_info("serving metrics on port %d at '%s'; evaluating every %.0f s%s", httpd_port(h),
             cfg->telemetry_path, cfg->interval, cfg->dry_run ? " (dry run)" : "");

    double check_every = cfg->reload_check > 0 ? cfg->reload_check : 2;
    double next_cycle = mono_now(), next_check = mono_now() + check_every;
    double trimmed = 0; /* the cycle after which malloc_trim last ran */
    while (!got_stop) {
        bool changed = false;
        if (got_hup) {
            got_hup = 0;
            log_info("SIGHUP: reloading rules file '%s'", cfg->rules_file);
            reload(&dm, true, false);
            changed = true;
        }
        double t = mono_now();
        if (t >= next_check) {
            changed |= reload(&dm, false, true) != 0;
            next_check = t + check_every;
        }
        if (t >= next_cycle) {
            if (cfg->before_cycle && before_cycle(&dm) != 0) {
                log_info("--at.before-cycle did not succeed: stopping");
                break;
            }
            reload(&dm, false, false);
            if (perm_incomplete(cfg->perm))
                perm_check(cfg->perm, &dm.rules, wall_now());
            run_cycle(&dm);
            changed = true;
            next_cycle += cfg->interval;
            if (next_cycle <= mono_now())
                next_cycle = mono_now() + cfg->interval;
        }
        if (changed)
            publish(&dm);
        if (changed && dm.ncycles > 0 && dm.ncycles != trimmed) {
            /* What the cycle freed goes back to the system: malloc keeps freed memory for
               reuse, so a full read's transient (gigabytes at a million workloads) would
               stay the process' RSS in every later cycle. */
            double tt = mono_now();
            malloc_trim(0);
            trimmed = dm.ncycles;
            log_debug("memory returned after the cycle in %.3f s: heap in use %.0f MiB",
                      mono_now() - tt, heap_mib());
        }
        double wait = (next_cycle < next_check ? next_cycle : next_check) - mono_now();
        sleep_slice(wait);
    }
    log_info("stopping on signal");
    httpd_stop(h);
out:
    if (cfg->act)
        act_set_reprove(cfg->act, NULL, NULL);
    replay_close(dm.live);
    promq_free(dm.q);
    rules_free(&dm.rules);
    tallies_free(&dm.total);
    tallies_free(&dm.last);
    idle_free(&dm);
    rule_evals_free(&dm);
    free(dm.snapshot);
    pthread_mutex_destroy(&dm.mu);
    return status;
}
