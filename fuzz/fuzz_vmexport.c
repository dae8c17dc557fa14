/*
 * libFuzzer target for the VictoriaMetrics export reader (enforcer/vmexport.c) and the grid
 * built from its samples (enforcer/raw.c). The first byte picks the chunk size the body is
 * fed in (as libcurl's write callback cuts it) and a cap; the rest is the body. Promises
 * checked: no read past `len` (ASan, exact-size copy); on error an empty matrix and a
 * message; on success strictly ascending times, sorted unique label names, unique label sets;
 * the same result (or the same message) whether fed whole or in chunks; and raw_to_grid on
 * the result either fails with a message or gives coverage values in [0, 1) only (covered steps are
 * not listed) and activity points on the grid. Seeds: fuzz/corpus/vmexport.
 */
#include "proof.c"
#include "raw.c"
#include "series.c"
#include "vmexport.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check(const struct matrix *m)
{
    for (size_t i = 0; i < m->n; i++) {
        const struct series *s = &m->s[i];
        for (size_t j = 1; j < s->n; j++)
            if (!(s->p[j].t > s->p[j - 1].t))
                __builtin_trap();
        for (size_t j = 1; j < s->labels.n; j++)
            if (strcmp(s->labels.v[j - 1].name, s->labels.v[j].name) >= 0)
                __builtin_trap();
        if (i > 0 && labels_compare(&m->s[i - 1].labels, &s->labels) >= 0)
            __builtin_trap();
    }
}

static bool fuzz_same(const struct matrix *a, const struct matrix *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (!labels_equal(&a->s[i].labels, &b->s[i].labels) || a->s[i].n != b->s[i].n)
            return false;
        if (a->s[i].n && memcmp(a->s[i].p, b->s[i].p, a->s[i].n * sizeof(struct point)) != 0)
            return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = (size_t)(data[0] & 31) + 1;
    size_t cap = data[0] & 0x80 ? 1u << 20 : 2048;
    size_t len = size - 1;
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return 0;
    memcpy(copy, data + 1, len);

    struct matrix whole, parts;
    char e1[256] = "", e2[256] = "";
    int r1 = vmx_parse(copy, len, cap, &whole, e1, sizeof(e1));
    if (r1 < 0 && (whole.n || whole.s || !e1[0]))
        __builtin_trap();
    if (r1 == 0)
        fuzz_check(&whole);

    struct vmx *x = vmx_new(cap);
    int r2 = 0;
    for (size_t off = 0; off < len && r2 == 0; off += chunk)
        r2 = vmx_feed(x, copy + off, len - off < chunk ? len - off : chunk, e2, sizeof(e2));
    if (r2 == 0)
        r2 = vmx_finish(x, &parts, e2, sizeof(e2));
    else
        parts = (struct matrix){0};
    vmx_free(x);
    if (r1 != r2 || strcmp(e1, e2) != 0 || (r1 == 0 && !fuzz_same(&whole, &parts)))
        __builtin_trap();
    matrix_free(&parts);

    if (r1 == 0) {
        struct raw_grid g = {.start = 1000, .end = 1240, .step = 60, .gap = 45};
        struct matrix act, cov;
        char err[256] = "";
        if (raw_to_grid(&whole, &g, &act, &cov, err, sizeof(err)) == 0) {
            if (act.n != cov.n)
                __builtin_trap();
            for (size_t i = 0; i < cov.n; i++) {
                if (cov.s[i].n > 5 || act.s[i].n == 0 || act.s[i].n > 5 ||
                    !labels_equal(&cov.s[i].labels, &act.s[i].labels))
                    __builtin_trap();
                for (size_t j = 0; j < cov.s[i].n; j++)
                    if (!(cov.s[i].p[j].v >= 0 && cov.s[i].p[j].v < 1))
                        __builtin_trap();
            }
        } else if (act.n || cov.n || !err[0]) {
            __builtin_trap();
        }
        matrix_free(&act);
        matrix_free(&cov);
    }
    free(copy);
    return 0;
}
