/*
 * Wall-clock times as RFC 3339 text in UTC ("2023-11-14T22:13:20Z"), the one format of the
 * audit log, notices, Kubernetes objects, plans and log lines, and the one parser of the
 * times read back (notices, Leases, object creation times, --at). The precisions differ by
 * reader, not by writer: people and annotations get whole seconds, the plan milliseconds
 * when a time is not whole, a Lease metav1.MicroTime always six digits, log lines always
 * three.
 */
#ifndef GPURECLAIM_RFC3339_H
#define GPURECLAIM_RFC3339_H

#include <stddef.h>

/* Enough for every output of rfc3339_format. */
#define RFC3339_LEN 40

enum rfc3339_prec {
    RFC3339_SEC,        /* whole seconds, the fraction dropped: "...T22:13:20Z" */
    RFC3339_MILLI_FRAC, /* milliseconds only when not whole: "...:20Z", "...:20.500Z" */
    RFC3339_MILLI,      /* always milliseconds: "...:20.000Z" */
    RFC3339_MICRO,      /* always microseconds (metav1.MicroTime): "...:20.000000Z" */
};

/*
 * Write Unix time `t` (seconds) into buf (cap > 0; truncated to fit) and return buf.
 * Fractions are rounded to the precision (carrying into the second), except RFC3339_SEC,
 * which floors: a second is shown only once it has begun. A time that is not finite or
 * falls outside the years 0000-9999 that RFC 3339 can write is "-", the plan's mark for
 * "unknown" (it can be no valid time, so no reader takes it for one).
 */
char *rfc3339_format(char *buf, size_t cap, double t, enum rfc3339_prec prec);

/*
 * Parse RFC 3339 ("2023-11-14T22:13:20Z", "...+01:00", fractional seconds; 't', 'z' and a
 * blank for 'T' as RFC 3339 section 5.6 allows) or Unix seconds ("1700000000.25", not
 * negative) into *out. Returns 0, or -1 with "invalid time '<s>': ..." in err. A date that
 * does not exist (30 February) is refused, not normalised.
 */
int rfc3339_parse(const char *s, double *out, char *err, size_t errlen);

#endif
