/*
 * What `backtest` prints (backtest.h has the simulation): per rule the workloads seen,
 * reclaims, GPU-hours freed, returns within --return-within (count, share, median time to
 * return) and the top reasons cycles were kept for; a --by breakdown; --top lists; a side by
 * side comparison of two rules files with the reclaims only one of them makes; as a table,
 * JSON or CSV.
 *
 * Like report.c, everything renders into a `struct sbuf` with no I/O, so the outputs are
 * unit tested byte for byte. Times are UTC RFC 3339, durations in Prometheus syntax.
 */
#ifndef GPURECLAIM_BTREPORT_H
#define GPURECLAIM_BTREPORT_H

#include <stddef.h>

#include "backtest.h"
#include "util.h"

enum btreport_format { BTREPORT_TABLE = 0, BTREPORT_JSON, BTREPORT_CSV };

/*
 * Render `a` (and, when `b` is not NULL, `b` beside it with the differences) in `fmt`.
 * `top` > 0 adds the lists of the workloads with the most GPU-hours freed and of the
 * reclaims interrupted soonest, `top` entries each. `cmp` (may be NULL) is the comparison
 * with an audit file of `a`.
 */
void btreport_render(const struct bt_result *a, const struct bt_result *b, size_t top,
                     const struct bt_audit_cmp *cmp, enum btreport_format fmt, struct sbuf *out);

/* Takes the output rendered so far (then dropped from `out`). */
typedef void (*btreport_sink)(void *arg, const char *buf, size_t len);
/*
 * btreport_render, handing the output to `sink` in pieces of about a megabyte as it is
 * rendered (NULL: all of it stays in `out`), so that the JSON list of a long backtest's
 * reclaims is never held whole; `out` holds the rest when it returns.
 */
void btreport_render_to(const struct bt_result *a, const struct bt_result *b, size_t top,
                        const struct bt_audit_cmp *cmp, enum btreport_format fmt, struct sbuf *out,
                        btreport_sink sink, void *arg);

/* The one-line summary of the runs of cycles rule `r` could not be evaluated in, "" if none. */
void btreport_failures(const struct bt_result *res, size_t rule, struct sbuf *out);

#endif
