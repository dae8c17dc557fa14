/*
 * A C interface to the few RE2 calls that label matchers need (compile with a memory bound,
 * full match, free), so that the rest of the enforcer stays C. RE2 is C++; this header is
 * the whole of what C code sees of it. See match.c for why RE2.
 */
#ifndef GPURECLAIM_RE2_SHIM_H
#define GPURECLAIM_RE2_SHIM_H

#include <stddef.h>

#ifdef __cplusplus
#define RE2_SHIM_NOEXCEPT noexcept
extern "C" {
#else
#define RE2_SHIM_NOEXCEPT
#endif

struct re2_shim;

/*
 * Compile `pattern` (len bytes, UTF-8) with RE2 syntax, `.` matching a newline too, no
 * capturing groups and at most `max_mem` bytes for the compiled program and its DFA cache.
 * Returns NULL and RE2's message in `err` on a syntax error or a pattern too large for
 * `max_mem`. Never throws and never prints.
 */
struct re2_shim *re2_shim_compile(const char *pattern, size_t len, long long max_mem, char *err,
                                  size_t errlen) RE2_SHIM_NOEXCEPT;
/* 1 when the whole of `text` matches (anchored at both ends), 0 when not. Thread-safe. */
int re2_shim_full_match(const struct re2_shim *re, const char *text, size_t len) RE2_SHIM_NOEXCEPT;
/* Size of the compiled program in instructions (RE2::ProgramSize), a measure of its cost. */
size_t re2_shim_program_size(const struct re2_shim *re) RE2_SHIM_NOEXCEPT;
void re2_shim_free(struct re2_shim *re) RE2_SHIM_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif
