/*
 * libFuzzer target for the gpu_metrics / xcp_metrics parser: any byte string goes through
 * both gpum_parse and gpum_parse_partition. The parser promises no read past `len`, a full
 * NaN-initialised result on error and a message in err; ASan/UBSan check the first, the
 * asserts below the others. Seeds: fuzz/corpus/gpu_metrics (real and generated blobs).
 */
#include "gpu_metrics.c"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Folds every double so that the compiler cannot drop the decoding. */
static volatile double fuzz_sink;

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
    if (gpum_parse(copy, size, &m, err, sizeof(err)) == 0) {
        if (!m.layout || size < m.structure_size || m.num_partition < -1 ||
            m.num_partition > GPUM_MAX_XCP)
            abort();
    } else {
        if (err[0] == '\0' || m.layout || m.num_partition != -1 || !isnan(m.gfx_activity))
            abort();
    }
    double s = m.temp_edge + m.temp_hotspot + m.temp_mem + m.temp_vrgfx + m.temp_vrsoc +
               m.temp_vrmem + m.gfx_activity + m.umc_activity + m.mm_activity + m.socket_power +
               m.energy + m.uclk + m.pcie_link_width + m.pcie_link_speed + m.num_partition;
    s += sum_doubles(m.temp_hbm, GPUM_NUM_HBM) + sum_doubles(m.gfxclk, GPUM_MAX_GFXCLK);
    s += sum_doubles(m.socclk, GPUM_MAX_CLK) + sum_doubles(m.vclk0, GPUM_MAX_CLK) +
         sum_doubles(m.dclk0, GPUM_MAX_CLK);
    for (size_t x = 0; x < GPUM_MAX_XCP; x++)
        s += sum_doubles(m.xcp[x].gfx_busy, GPUM_MAX_XCC) +
             sum_doubles(m.xcp[x].gfx_busy_acc, GPUM_MAX_XCC);
    fuzz_sink = s;

    err[0] = '\0';
    if (gpum_parse_partition(copy, size, &p, err, sizeof(err)) == 0) {
        if (size < sizeof(struct gpum_partition_v1_0))
            abort();
    } else if (err[0] == '\0' || !isnan(p.uclk)) {
        abort();
    }
    fuzz_sink += sum_doubles(p.gfxclk, GPUM_MAX_XCC) + p.uclk +
                 sum_doubles(p.gfx_busy, GPUM_MAX_XCC) + sum_doubles(p.gfx_busy_acc, GPUM_MAX_XCC);

    free(copy);
    return 0;
}
