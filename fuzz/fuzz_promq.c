/*
 * libFuzzer target for the Prometheus answer parser, differential against json-c: the first
 * byte picks an HTTP status and the result types accepted (as promq_range, promq_instant or
 * promq_parse would), the rest is the body. Every input goes through both the purpose-built
 * parser and the json-c reference it replaced (promq_ref_compare): the same matrix bit for
 * bit, or errors of the same class, else a trap. The parser also promises no read past
 * `len` (ASan checks it on an exact-size copy), an empty matrix and a message on error, and
 * on success strictly ascending timestamps and sorted, unique label names. The body is
 * also fed to the streaming parser in chunks of random sizes (as libcurl's write callback
 * cuts it; the sizes come from the top bits of the first byte and a hash of the input),
 * which must give the whole-buffer result exactly: the same matrix or the same message.
 * Seeds: fuzz/corpus/promq.
 */
#include "httpc.c"
#include "jsonpush.c"
#include "promjson.c"
#include "promq.c"
#include "../tests/unit/promq_ref.c"
#include "series.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const long fuzz_status[] = {200, 200, 200, 400, 422, 500, 502, 503};
static const unsigned fuzz_want[] = {PROMJSON_ANY, PROMJSON_MATRIX,
                                     PROMJSON_VECTOR | PROMJSON_SCALAR, PROMJSON_ANY};

static void fuzz_check_matrix(const struct matrix *m)
{
    for (size_t i = 0; i < m->n; i++) {
        const struct series *s = &m->s[i];
        if (s->n && !s->p)
            __builtin_trap();
        for (size_t j = 1; j < s->n; j++)
            if (!(s->p[j].t > s->p[j - 1].t))
                __builtin_trap();
        for (size_t j = 1; j < s->labels.n; j++)
            if (strcmp(s->labels.v[j - 1].name, s->labels.v[j].name) >= 0)
                __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    long status = fuzz_status[data[0] & 7];
    unsigned want = fuzz_want[(data[0] >> 3) & 3];
    size_t len = size - 1;
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return 0;
    memcpy(copy, data + 1, len);

    struct matrix m;
    char err[256];
    err[0] = '\0';
    if (promq_parse_as(copy, len, status, want, &m, err, sizeof(err)) == 0) {
        if (status != 200 || err[0])
            __builtin_trap();
        fuzz_check_matrix(&m);
        matrix_free(&m);
    } else if (m.n != 0 || m.s != NULL || err[0] == '\0') {
        __builtin_trap();
    }

    char why[600];
    if (promq_ref_compare(copy, len, status, want, why, sizeof(why)) < 0) {
        fprintf(stderr, "parsers disagree: %s\n", why);
        __builtin_trap();
    }
    uint64_t seed = (uint64_t)(data[0] >> 5) << 56 | 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < len; i++)
        seed = (seed ^ (unsigned char)copy[i]) * 0x100000001b3ull;
    if (promq_ref_chunked(copy, len, status, want, seed, why, sizeof(why)) < 0) {
        fprintf(stderr, "whole and chunked parses disagree: %s\n", why);
        __builtin_trap();
    }
    free(copy);
    return 0;
}
