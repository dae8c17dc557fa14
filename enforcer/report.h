/*
 * What `plan` and `explain` print: the decisions of one evaluation as a table or as JSON,
 * and the per-workload explanation with a terminal sparkline of its activity window.
 *
 * Everything here renders into a `struct sbuf` and does no I/O, so the outputs are unit
 * tested byte for byte and the same code serves the command line and the tests. Times are
 * printed in UTC (RFC 3339), durations in Prometheus syntax ("15m", "1h30m").
 */
#ifndef GPURECLAIM_REPORT_H
#define GPURECLAIM_REPORT_H

#include <stddef.h>

#include "decide.h"
#include "series.h"
#include "util.h"

/*
 * Render a window of points as one character per expected step: "▁▂▃▄▅▆▇█" scaled to
 * [0, max(1, largest value)], "·" where no point exists (a gap), "×" for NaN or Inf.
 * `marker` (may be NULL) gets one column per step too: "^" where value * 100 >= `threshold`
 * (percent, as in rules), "_" for a gap, "!" for NaN/Inf, a space otherwise. Points are snapped to
 * the grid start + k * step, k = 0 .. floor((end - start) / step).
 */
void report_sparkline(const struct point *p, size_t n, double start, double end, double step,
                      double threshold, struct sbuf *spark, struct sbuf *marker);

/* `plan --output table`: one row per decision, then a summary line. */
void report_render_table(const struct decisions *d, struct sbuf *out);
/* `plan --output json`: a JSON array, one object per decision (README.md, "Reading a decision"). */
void report_render_json(const struct decisions *d, struct sbuf *out);

/*
 * `backtest --decisions`: one decision as the object of `plan --output json` with the cycle
 * time added ("cycle"), on one line.
 */
void report_render_json_line(const struct decision_rec *r, double cycle, struct sbuf *out);

/* JSON values as plan's output writes them: a number (NULL, i.e. null, when not finite) and
   an RFC 3339 time (null when not finite). */
struct json_object;
struct json_object *report_json_number(double v);
struct json_object *report_json_time(double t);

/*
 * `explain`: for every decision whose labels contain all of `want` (and whose rule is
 * `rule_name`, when not NULL), the rule's settings, the activity window as a sparkline with
 * its marker row, min/max/mean and the decision with a sentence saying why. `data` is what
 * the decisions were made from (the activity points are taken from it). Returns the number
 * of decisions explained.
 */
size_t report_render_explain(const struct rule_data *data, size_t ndata, const struct decisions *d,
                             const struct labels *want, const char *rule_name, struct sbuf *out);

/* True when every label in `want` has the same value in `have`. */
bool report_labels_match(const struct labels *want, const struct labels *have);

#endif
