/*
 * libFuzzer target for enforcer/proof.c, the idleness proof as a fold. The first 8 bytes pick
 * the rule (step, tolerated gap, lookback, longest idle timer, two thresholds); the rest is a
 * stream of samples, 3 bytes each: a signed time step in ms (so samples may go back in time
 * or repeat one) and a value kind (low, high, NaN, +-Inf, staleness marker, any bits). Beyond
 * memory errors it traps on broken promises: a sample not after the last one is refused with
 * a message and leaves the state byte for byte as it was; an accepted one moves proof_last;
 * proof_judge at several times at or after the last sample gives a verdict of the series'
 * reasons, present exactly when proof_present says so, an idle_since only when idle and then
 * NaN or within the grid, and the same verdict twice. Seeds: fuzz/corpus/proof.
 */
#include "proof.c"
#include "raw.c"
#include "series.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise: say which, then crash so that libFuzzer keeps the input. */
#define FUZZ_CHECK(c)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_proof: broken: %s\n", #c);                                       \
            __builtin_trap();                                                                      \
        }                                                                                          \
    } while (0)

static double fuzz_value(uint8_t k, uint8_t b)
{
    uint64_t bits;
    double v;
    switch (k % 8) {
    case 0:
        return (double)b / 2550.0; /* low */
    case 1:
        return (double)b / 255.0; /* up to 100 % */
    case 2:
        return NAN;
    case 3:
        return k & 8 ? INFINITY : -INFINITY;
    case 4:
        bits = RAW_STALE_NAN_BITS;
        memcpy(&v, &bits, sizeof(v));
        return v;
    case 5:
        bits = (uint64_t)b * UINT64_C(0x0101010101010101) ^ ((uint64_t)k << 52);
        memcpy(&v, &bits, sizeof(v));
        return v;
    default:
        return 0;
    }
}

static bool fuzz_reason_ok(int r)
{
    return r == REASON_IDLE || r == REASON_ACTIVE || r == REASON_NO_DATA || r == REASON_STALE ||
           r == REASON_GAP || r == REASON_TOO_YOUNG || r == REASON_NOT_A_NUMBER;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    struct proof_params pp = {0};
    pp.step_ms = 1000 * (int64_t)(1 + data[0] % 120);
    pp.gap_ms = (int64_t)data[1] * 997;
    pp.idle_max_ms = pp.step_ms * (int64_t)(1 + data[2] % 64) + data[3];
    pp.lookback_ms = pp.step_ms * (int64_t)(1 + data[4] % 200);
    pp.thresholds[pp.nthresholds++] = 1 + data[5] % 100;
    pp.thresholds[pp.nthresholds++] = 1 + data[6] % 100;
    pp.thresholds[pp.nthresholds++] = 1 + data[5] % 100;
    proof_params_init(&pp);
    FUZZ_CHECK(pp.nthresholds >= 1 && pp.nthresholds <= 2);
    uint8_t mode = data[7];

    size_t psize = proof_size(&pp);
    struct proof *p = proof_new(&pp), *before = malloc(psize);
    int64_t t = INT64_C(1767225600000);
    char err[160];
    for (size_t i = 8; i + 3 <= size; i += 3) {
        int64_t d = (int8_t)data[i];
        d = mode & 1 ? d * 997 : d * (pp.step_ms / 8 + 1);
        t += d;
        double v = fuzz_value(data[i + 1], data[i + 2]);
        memcpy(before, p, psize);
        int64_t last = proof_last(p);
        err[0] = '\0';
        int rc = proof_add(p, &pp, t, v, err, sizeof(err));
        bool in_order = last == PROOF_NONE || t > last;
        FUZZ_CHECK(rc == 0 || (!in_order && err[0] && memcmp(before, p, psize) == 0));
        FUZZ_CHECK(rc < 0 || (in_order && proof_last(p) == t));
    }

    int64_t last = proof_last(p);
    int64_t base = last == PROOF_NONE ? t : last;
    for (int k = 0; k < 6; k++) {
        int64_t now = base + (int64_t)k * (pp.step_ms * 3 / 2 + (mode >> 1));
        int64_t idle = k & 1 ? pp.idle_max_ms : pp.step_ms * (1 + k);
        double thr = pp.thresholds[k % pp.nthresholds];
        struct proof_verdict a, b;
        int rc = proof_judge(p, &pp, now, idle, thr, &a);
        FUZZ_CHECK(rc == 0 && fuzz_reason_ok(a.reason));
        FUZZ_CHECK(a.present == proof_present(p, &pp, now));
        FUZZ_CHECK(a.present || a.reason == REASON_NO_DATA);
        /* NaN when the last point is not below (decide.c series_idle_start). */
        FUZZ_CHECK(a.reason != REASON_IDLE || isnan(a.idle_since) ||
                   (a.idle_since >= (double)(now - pp.lookback_ms) / 1000.0 - 1e-9 &&
                    a.idle_since <= (double)now / 1000.0 + 1e-9));
        FUZZ_CHECK(a.reason == REASON_IDLE || isnan(a.idle_since));
        proof_judge(p, &pp, now, idle, thr, &b);
        FUZZ_CHECK(a.reason == b.reason && memcmp(a.detail, b.detail, sizeof(a.detail)) == 0);
    }
    /* A threshold that was not folded and a time before the last sample are errors. */
    struct proof_verdict e;
    FUZZ_CHECK(proof_judge(p, &pp, base, pp.step_ms, 1000, &e) < 0 &&
               e.reason == REASON_QUERY_ERROR);
    FUZZ_CHECK(last == PROOF_NONE ||
               (proof_judge(p, &pp, last - 1, pp.step_ms, pp.thresholds[0], &e) < 0 &&
                e.reason == REASON_QUERY_ERROR));
    free(before);
    free(p);
    return 0;
}
