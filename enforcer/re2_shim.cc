/*
 * The C side of RE2 (re2_shim.h): one RE2 object per matcher behind an opaque pointer.
 *
 * Kept to what match.c needs so that the only C++ in the project is this file. RE2 reports
 * errors through ok()/error() rather than exceptions, and allocation failures inside RE2
 * abort like xmalloc does, so no exception can cross into C; the functions are still marked
 * noexcept to make that a compile-time promise.
 */
#include "re2_shim.h"

#include <re2/re2.h>

#include <cstdio>
#include <new>
#include <string>

struct re2_shim {
    re2::RE2 re;
    re2_shim(const re2::StringPiece &p, const re2::RE2::Options &o) : re(p, o)
    {
    }
};

extern "C" struct re2_shim *re2_shim_compile(const char *pattern, size_t len, long long max_mem,
                                             char *err, size_t errlen) noexcept
{
    re2::RE2::Options o;
    o.set_encoding(re2::RE2::Options::EncodingUTF8);
    o.set_log_errors(false);
    o.set_dot_nl(true);
    o.set_never_capture(true);
    o.set_max_mem(max_mem);
    re2_shim *s = new (std::nothrow) re2_shim(re2::StringPiece(pattern, len), o);
    if (!s) {
        std::snprintf(err, errlen, "out of memory");
        return nullptr;
    }
    if (!s->re.ok()) {
        std::snprintf(err, errlen, "%s", s->re.error().c_str());
        delete s;
        return nullptr;
    }
    return s;
}

extern "C" int re2_shim_full_match(const struct re2_shim *s, const char *text, size_t len) noexcept
{
    return re2::RE2::FullMatch(re2::StringPiece(text, len), s->re) ? 1 : 0;
}

extern "C" size_t re2_shim_program_size(const struct re2_shim *s) noexcept
{
    int n = s->re.ProgramSize();
    return n > 0 ? (size_t)n : 0;
}

extern "C" void re2_shim_free(struct re2_shim *s) noexcept
{
    delete s;
}
