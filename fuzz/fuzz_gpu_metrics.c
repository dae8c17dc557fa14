/*
 * libFuzzer target for the gpu_metrics / xcp_metrics parser: any byte string goes through
 * both gpum_parse and gpum_parse_partition (fixed layouts and the v1_9 / partition v1_1
 * attribute tables). The parser promises no read past `len`, a full NaN-initialised result
 * on error and a message in err, accumulators only of a kernel type's width, and a partial
 * walk only on attribute tables; ASan/UBSan check the first, the asserts below the others.
 * Seeds: fuzz/corpus/gpu_metrics (real and generated blobs, attribute tables included).
 */
#include "gpu_metrics.c"

#include <stdbool.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Folds every double so that the compiler cannot drop the decoding. */
static volatile double fuzz_sink;

/* An accumulator is absent (0 bits) or as wide as a kernel integer type (signed: one less). */
static void check_acc(struct gpum_acc a)
{
    switch (a.bits) {
    case 0:
    case 7:
    case 8:
    case 15:
    case 16:
    case 31:
    case 32:
    case 63:
    case 64:
        break;
    default:
        abort();
    }
    if (a.bits && a.bits < 64 && (a.v >> a.bits) != 0)
        abort();
}

static double sum_doubles(const double *p, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i];
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size heap copy, so that ASan sees a read even one byte past the end. */
    uint8_t *copy = malloc(size ? size : 1);
    struct gpu_metrics m;
    struct gpu_partition_metrics p;
    char err[128];

    if (!copy)
        return 0;
    if (size)
        memcpy(copy, data, size);

    err[0] = '\0';
    int rc = gpum_parse(copy, size, &m, err, sizeof(err));
    if (rc == 0) {
        bool attr = strcmp(m.layout ? m.layout : "", "v1_9") == 0;
        if (!m.layout || m.num_partition < -1 || m.num_partition > GPUM_MAX_XCP)
            abort();
        /* Only an attribute table may be shorter than its structure_size, then partial. */
        if (size < m.structure_size && (!attr || !m.partial))
            abort();
        if (m.partial && !attr)
            abort();
        if (attr && (m.attrs_parsed > m.attr_count || m.attrs_unknown > m.attrs_parsed))
            abort();
    } else {
        if ((rc != -1 && rc != GPUM_SKIPPED) || err[0] == '\0' || m.layout ||
            m.num_partition != -1 || !isnan(m.gfx_activity) || m.accumulation_counter.bits)
            abort();
    }
    check_acc(m.accumulation_counter);
    check_acc(m.gfx_activity_acc);
    for (size_t r = 0; r < GPUM_RES_N; r++)
        check_acc(m.residency[r]);
    for (size_t c = 0; c < GPUM_MAX_XCC; c++) {
        check_acc(m.xcc_busy_acc[c]);
        for (size_t x = 0; x < GPUM_MAX_XCP; x++)
            check_acc(m.xcp[x].gfx_busy_acc[c]);
    }
    double s = m.temp_edge + m.temp_hotspot + m.temp_mem + m.temp_vrgfx + m.temp_vrsoc +
               m.temp_vrmem + m.gfx_activity + m.umc_activity + m.mm_activity + m.socket_power +
               m.energy + m.uclk + m.pcie_link_width + m.pcie_link_speed + m.num_partition;
    s += sum_doubles(m.temp_hbm, GPUM_NUM_HBM) + sum_doubles(m.gfxclk, GPUM_MAX_GFXCLK);
    s += sum_doubles(m.socclk, GPUM_MAX_CLK) + sum_doubles(m.vclk0, GPUM_MAX_CLK) +
         sum_doubles(m.dclk0, GPUM_MAX_CLK);
    for (size_t x = 0; x < GPUM_MAX_XCP; x++)
        s += sum_doubles(m.xcp[x].gfx_busy, GPUM_MAX_XCC);
    s += sum_doubles(m.xcc_busy, GPUM_MAX_XCC);
    fuzz_sink = s;

    err[0] = '\0';
    if (gpum_parse_partition(copy, size, &p, err, sizeof(err)) == 0) {
        if (!p.layout)
            abort();
        if (strcmp(p.layout, "partition_v1_0") == 0 && size < sizeof(struct gpum_partition_v1_0))
            abort();
        if (size < p.structure_size && !p.partial)
            abort();
    } else if (err[0] == '\0' || !isnan(p.uclk) || p.layout || p.accumulation_counter.bits) {
        abort();
    }
    check_acc(p.accumulation_counter);
    for (size_t c = 0; c < GPUM_MAX_XCC; c++)
        check_acc(p.gfx_busy_acc[c]);
    fuzz_sink +=
        sum_doubles(p.gfxclk, GPUM_MAX_XCC) + p.uclk + sum_doubles(p.gfx_busy, GPUM_MAX_XCC);

    free(copy);
    return 0;
}
