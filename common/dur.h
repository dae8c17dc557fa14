/*
 * Durations as text, one format for every message, plan, notice and log line: Prometheus'
 * (prometheus/common model/time.go, Duration.String), so that what the enforcer prints can be
 * pasted back into a rules file or a PromQL range. 5400 s is "1h30m", 0 is "0s", 1.5 s is
 * "1s500ms", 7 days "1w", 30 days "30d" (years and weeks only when they divide exactly).
 * dur_parse reads that syntax back (model.ParseDuration) for rules files and duration flags
 * alike; promq's Go durations (an answer's "1.5s") are another syntax, parsed there.
 */
#ifndef GPURECLAIM_DUR_H
#define GPURECLAIM_DUR_H

#include <stddef.h>

/*
 * Parse a Prometheus duration: "90s", "15m", "1h30m", "2d", "1500ms"; units y w d h m s ms in
 * that order, each at most once, whole numbers only, or a bare "0". Sets *seconds and returns
 * 0, or -1 (NULL, empty, a bare number other than 0, a fraction, a sign, an overflow).
 */
int dur_parse(const char *s, double *seconds);

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
