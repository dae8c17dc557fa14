/*
 * `gpureclaim-enforcer run`: the evaluation loop, live rule reloads and the self-metrics.
 *
 * Every interval (the first at start) the loop fetches each rule's data, decides, logs the
 * reclaim decisions and publishes counters and gauges about it. The rules file is reloaded
 * on SIGHUP and whenever its content changes (mtime and size are checked every few
 * seconds, the content hash at every cycle); a file that does not load keeps the last good
 * rules in force and sets gpureclaim_enforcer_rules_reload_success to 0, as Prometheus does
 * with its own configuration. SIGTERM and SIGINT end the cycle under way without starting
 * another API call (a Prometheus query or Kubernetes/runtime call under way finishes, bounded
 * by its timeout, and its result is recorded), stop the HTTP server and return 0.
 */
#ifndef GPURECLAIM_DAEMON_H
#define GPURECLAIM_DAEMON_H

#include <signal.h>
#include <stdbool.h>

#include "httpd.h"
#include "promq.h"

struct act;
struct lease;
struct perm;

struct daemon_cfg {
    const char *rules_file;
    struct promq_cfg prom;
    double interval;            /* seconds between evaluations */
    const char *listen;         /* --web.listen-address */
    const char *telemetry_path; /* --web.telemetry-path */
    struct httpd_web web;       /* --web.config.file, connection limits (httpd.h) */
    bool dry_run;               /* global dry run: every decision is only reported */
    double at;                  /* evaluate at this fixed Unix time (tests); NaN = wall clock */
    bool at_advance;            /* with `at`: the clock starts there and advances (tests) */
    double reload_check;        /* seconds between checks of the rules file's mtime; 0 = 2 s */
    struct act *act;            /* action engine (act.h) run after every decide(); NULL: report */
    struct lease *lease;        /* leader election (lease.h); NULL: this replica always acts */
    struct perm *perm;          /* permission check at start and on every reload (perm.h);
                                   NULL: none. Not with `once` (a single cycle: tests, cron) */
    bool once;                  /* one cycle, no HTTP server, then exit (0, or 1 on query error) */
    /*
     * Issue 26: the state carried from cycle to cycle (replay.h, replay_live_*). With
     * full_read_interval > 0 each cycle reads only the raw samples since the last read,
     * overlapping it by read_overlap seconds, and the whole window every full_read_interval;
     * 0: every cycle reads the whole window (fetch_evaluate, as `plan`).
     */
    double read_overlap;       /* --prometheus.read-overlap */
    double full_read_interval; /* --enforce.full-read-interval */
    /* Tests only: with `at`, cycle k evaluates at at + k * at_step (a clock that advances one
       step per cycle, whatever the wall clock); before each cycle, before_cycle (a shell
       command) runs with GPURECLAIM_CYCLE_TIME set to the cycle time, and a non-zero exit
       status stops `run` as SIGTERM does. */
    double at_step;
    const char *before_cycle;
    const char *decisions_file; /* tests: each cycle's decisions appended, "@ TIME" + JSON */
};

/*
 * Load the rules (a startup error is fatal: returns 1 after logging every problem), start
 * the HTTP server and loop until SIGTERM/SIGINT. Returns the process exit status.
 */
int daemon_run(const struct daemon_cfg *cfg);

/*
 * The flag SIGTERM and SIGINT set during daemon_run, for the clients that must stop starting
 * calls at once (act_set_stop, kube_cfg.stop). Valid for the life of the process.
 */
const volatile sig_atomic_t *daemon_stop_flag(void);

#endif
