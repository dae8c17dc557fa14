/*
 * Reader of VictoriaMetrics' raw-sample export, `/api/v1/export` (docs/promql-plan.md §5.7):
 * one JSON object per line,
 *   {"metric":{"__name__":"x","pod":"a"},"values":[0.5,+Inf,NaN],"timestamps":[1700000000000,...]}
 * with times in milliseconds. Values are written by Go's float formatting, so besides JSON
 * numbers they may be the bare tokens `+Inf`, `-Inf` and `NaN`, which are not JSON
 * (VictoriaMetrics app/vmselect/prometheus/export.qtpl, ExportJSONLine). VictoriaMetrics
 * drops ordinary NaN samples at ingestion and its decimal storage has one NaN, Prometheus'
 * staleness marker (lib/decimal/decimal.go, StaleNaN), so `NaN` is read as that marker.
 *
 * A push parser: the answer is fed as it arrives, each complete line is parsed and stored,
 * and the text is never held beyond one line. Strict: a line that is not exactly that
 * object (unknown or repeated keys, counts that differ, a timestamp that is not an integer,
 * timestamps not strictly ascending), a last line without its newline (a cut answer), or
 * more parsed data than the cap fails the whole answer, never a shorter series. Pure: no
 * I/O.
 */
#ifndef GPURECLAIM_VMEXPORT_H
#define GPURECLAIM_VMEXPORT_H

#include <stddef.h>

#include "series.h"

struct vmx;

/* A reader whose parsed data (points, labels, one line of text) may not exceed max_bytes. */
struct vmx *vmx_new(size_t max_bytes);
/*
 * Feed the next `len` bytes. Returns 0, or -1 with a message once the answer is known bad
 * (later calls keep failing with the same message).
 */
int vmx_feed(struct vmx *x, const char *buf, size_t len, char *err, size_t errlen);
/*
 * End of the answer: `out` gets one series per distinct label set (with `__name__`), points
 * strictly ascending, t in seconds (ms / 1000), v bit-exact. A series split over several
 * lines is joined; a time that two lines of one series both hold fails. Returns 0, or -1
 * with a message and an empty `out`.
 */
int vmx_finish(struct vmx *x, struct matrix *out, char *err, size_t errlen);
void vmx_free(struct vmx *x);

/* The whole answer at once (tests and fuzzing): vmx_new + vmx_feed + vmx_finish. */
int vmx_parse(const char *body, size_t len, size_t max_bytes, struct matrix *out, char *err,
              size_t errlen);

#endif
