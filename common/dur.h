/*
 * Durations as text, one format for every message, plan, notice and log line: Prometheus'
 * (prometheus/common model/time.go, Duration.String), so that what the enforcer prints can be
 * pasted back into a rules file or a PromQL range. 5400 s is "1h30m", 0 is "0s", 1.5 s is
 * "1s500ms", 7 days "1w", 30 days "30d" (years and weeks only when they divide exactly).
 * Parsing stays with the syntax that is parsed (rules_parse_duration, promq's Go durations).
 */
#ifndef GPURECLAIM_DUR_H
#define GPURECLAIM_DUR_H

#include <stddef.h>

/* Enough for every output of dur_format. */
#define DUR_LEN 48

/*
 * Write `seconds` into buf (cap > 0; truncated to fit) and return buf. Rounded to whole
 * milliseconds, Prometheus' resolution, so a duration under half a millisecond is "0s".
 * Negative: "-" and the magnitude, as Prometheus prints it. NaN and infinities are not
 * durations anyone measured: "-", the plan's mark for "unknown". Beyond Prometheus' range
 * (about 292 million years) the seconds in "%g" form.
 */
char *dur_format(char *buf, size_t cap, double seconds);

#endif
