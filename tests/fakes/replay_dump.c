/*
 * A driver of the backtest's range reader (enforcer/replay.h) for tests and the benchmark,
 * until the `backtest` command uses it: replays a rules file over [FROM, TO] against a
 * Prometheus-compatible server and prints, per cycle time, what `plan --at t --output json`
 * prints at that time, so that a test can compare the two cycle by cycle.
 *
 * usage: replay_dump URL RULES FROM TO INTERVAL [CHUNK [READ_PATH [quiet]]]
 *   FROM, TO   Unix seconds or RFC 3339; INTERVAL, CHUNK seconds (CHUNK 0: the default);
 *   READ_PATH  auto, remote-read, export or promql (--prometheus.read-path);
 *   quiet      decide every cycle but print nothing per cycle (the benchmark);
 *   read       decide nothing: the cycles' data read and handed over only (the benchmark's
 *              share of a backtest spent in the read).
 * Output: per cycle a line `@ <t>` and then the plan's JSON array. Stats and the parts that
 * could not be read go to stderr:
 *   stats: cycles=N samples=N bytes=N requests=N failed_chunks=N fallback_rules=N
 *          peak_series=N data_start=T decisions=N seconds=S
 * Exit status 0, 3 when some part of the range could not be read, 1 on bad arguments.
 * REPLAY_MODE in the environment picks how the selector rules' activity is folded: `carry`
 * (the default, as `backtest --decisions`: proofs carried from cycle to cycle, every
 * record's window statistics computed), `lean` (as `backtest` without --decisions: window
 * statistics only where a verdict needs them) or `windowed` (each cycle's window folded
 * again, as `plan` folds its read). REPLAY_SYNC=1 reads every chunk in place when its first
 * cycle comes, without the read-ahead thread (replay_cfg.sync_reads).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "fetch.h"
#include "log.h"
#include "promq.h"
#include "rawread.h"
#include "replay.h"
#include "report.h"
#include "rfc3339.h"
#include "rules.h"
#include "util.h"

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr,
                "usage: replay_dump URL RULES FROM TO INTERVAL [CHUNK [READ_PATH [quiet]]]\n");
        return 1;
    }
    log_threshold = LOG_WARN;
    struct replay_cfg cfg = {0};
    char err[256];
    if (rfc3339_parse(argv[3], &cfg.from, err, sizeof(err)) < 0 ||
        rfc3339_parse(argv[4], &cfg.to, err, sizeof(err)) < 0) {
        fprintf(stderr, "replay_dump: %s\n", err);
        return 1;
    }
    cfg.interval = strtod(argv[5], NULL);
    cfg.chunk = argc > 6 ? strtod(argv[6], NULL) : 0;
    /* As `plan` judges selector rules: from proofs (cmd_plan.c). */
    struct promq_cfg pc = {.url = argv[1], .timeout = 120, .proofs = true};
    if (argc > 7 && rawread_path_parse(argv[7], &pc.read_path) < 0) {
        fprintf(stderr, "replay_dump: invalid read path '%s'\n", argv[7]);
        return 1;
    }
    bool read_only = argc > 8 && strcmp(argv[8], "read") == 0;
    bool quiet = read_only || (argc > 8 && strcmp(argv[8], "quiet") == 0);
    struct ruleset rs = {0};
    struct rules_errors errs = {0};
    if (rules_load_file(argv[2], &rs, &errs) != 0) {
        for (size_t i = 0; i < errs.n; i++)
            fprintf(stderr, "%s\n", errs.msg[i]);
        rules_errors_free(&errs);
        return 1;
    }
    rules_errors_free(&errs);
    const char *mode = getenv("REPLAY_MODE");
    if (mode && strcmp(mode, "carry") != 0 && strcmp(mode, "lean") != 0 &&
        strcmp(mode, "windowed") != 0) {
        fprintf(stderr, "replay_dump: REPLAY_MODE must be carry, lean or windowed\n");
        return 1;
    }
    cfg.carry = !mode || strcmp(mode, "windowed") != 0;
    cfg.window_stats = !mode || strcmp(mode, "carry") == 0;
    /* REPLAY_SYNC=1: every chunk read in place (the replay's read-ahead off), to compare. */
    cfg.sync_reads = getenv("REPLAY_SYNC") && strcmp(getenv("REPLAY_SYNC"), "1") == 0;
    cfg.q = promq_new(&pc);
    cfg.rs = &rs;
    double t0 = mono_now();
    struct replay *r = replay_open(&cfg, err, sizeof(err));
    if (!r) {
        fprintf(stderr, "replay_dump: %s\n", err);
        return 1;
    }
    struct rule_data *data = xcalloc(rs.n ? rs.n : 1, sizeof(*data));
    struct sbuf out = {0};
    size_t ndecisions = 0;
    double t;
    while (replay_next(r, &t, data) == 1) {
        struct decisions d = {0};
        if (!read_only)
            decide(data, rs.n, t, &d);
        /* As `plan` prints them under its default --dry-run (fetch_evaluate). */
        for (size_t i = 0; i < d.n; i++)
            d.v[i].dry_run = true;
        fetch_free(data, rs.n);
        ndecisions += d.n;
        if (!quiet) {
            sbuf_reset(&out);
            char when[RFC3339_LEN];
            sbuf_printf(&out, "@ %.3f %s\n", t, rfc3339_format(when, sizeof(when), t, RFC3339_SEC));
            report_render_json(&d, &out);
            fwrite(out.buf, 1, out.len, stdout);
        }
        decisions_free(&d);
    }
    struct replay_stats st;
    replay_stats(r, &st);
    size_t nf = 0;
    const char *const *fails = replay_failures(r, &nf);
    for (size_t i = 0; i < nf; i++)
        fprintf(stderr, "failed: %s\n", fails[i]);
    fprintf(stderr,
            "stats: cycles=%zu samples=%zu bytes=%zu requests=%zu failed_chunks=%zu "
            "fallback_rules=%zu peak_series=%zu data_start=%.3f decisions=%zu seconds=%.3f\n",
            st.cycles_done, st.samples, st.bytes, st.requests, st.failed_chunks, st.fallback_rules,
            st.peak_series, st.data_start, ndecisions, mono_now() - t0);
    replay_close(r);
    sbuf_free(&out);
    free(data);
    promq_free(cfg.q);
    rules_free(&rs);
    return nf ? 3 : 0;
}
