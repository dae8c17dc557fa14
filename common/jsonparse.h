/*
 * Strict JSON parsing into a json-c tree, for every document the programs parse with
 * json-c (Kubernetes, Docker and Podman answers, the state file, notice annotations,
 * Leases). One place decides what is accepted: json-c's strict mode (no trailing commas or
 * comments; json-c still takes single-quoted strings), strict UTF-8 (utf8.h), a depth limit,
 * and the whole input consumed, so "{...} garbage" or two documents back to back are refused
 * rather than read as the first.
 */
#ifndef GPURECLAIM_JSONPARSE_H
#define GPURECLAIM_JSONPARSE_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * Parse s[0..len) (no NUL needed; one inside is an error) with nesting at most `depth`.
 * Returns the root (the caller puts it), or NULL with one of these in err, `what` naming
 * the document ("pod list", "state file"):
 *   "empty answer for <what>", "invalid UTF-8 in <what>",
 *   "truncated JSON in <what> (<n> bytes)" (also a bare scalar at the very end, which json-c
 *   waits to see finished),
 *   "invalid JSON in <what> at offset <n>: <json-c's reason>",
 *   "trailing data in <what> at offset <n>", "<what> of <n> bytes is too large",
 *   "<what> is null" (a bare `null`, which json-c returns as NULL).
 * Blanks after the document are fine; anything else after it is trailing data.
 */
json_object *jsonparse_strict(const char *s, size_t len, int depth, const char *what, char *err,
                              size_t errlen);

#endif
