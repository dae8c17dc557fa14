/*
 * libFuzzer target for the KFD per-process name classifier and value parser. Both are
 * strict, so anything they accept must print back to exactly the input (canonical decimal,
 * one optional trailing newline for values).
 */
#include "kfdproc.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t v;
    char back[64];
    if (kfdproc_parse_value((const char *)data, size, &v) == 0) {
        size_t n = size && data[size - 1] == '\n' ? size - 1 : size;
        int len = snprintf(back, sizeof(back), "%llu", (unsigned long long)v);
        /* leading zeros are allowed in values ("007"), so compare numerically */
        size_t skip = 0;
        while (skip + 1 < n && data[skip] == '0')
            skip++;
        if ((size_t)len != n - skip || memcmp(back, data + skip, (size_t)len) != 0)
            abort();
    }

    char *name = malloc(size + 1);
    if (!name)
        return 0;
    memcpy(name, data, size);
    name[size] = '\0';
    uint32_t gpu_id = 0, qid = 0;
    enum kfdproc_file k = kfdproc_classify(name, &gpu_id, &qid);
    char expect[64] = "";
    switch (k) {
    case KFDPROC_PASID:
        snprintf(expect, sizeof(expect), "pasid");
        break;
    case KFDPROC_VRAM:
        snprintf(expect, sizeof(expect), "vram_%u", gpu_id);
        break;
    case KFDPROC_SDMA:
        snprintf(expect, sizeof(expect), "sdma_%u", gpu_id);
        break;
    case KFDPROC_CU_OCCUPANCY:
        snprintf(expect, sizeof(expect), "stats_%u/cu_occupancy", gpu_id);
        break;
    case KFDPROC_EVICTED_MS:
        snprintf(expect, sizeof(expect), "stats_%u/evicted_ms", gpu_id);
        break;
    case KFDPROC_QUEUE_GPUID:
        snprintf(expect, sizeof(expect), "queues/%u/gpuid", qid);
        break;
    case KFDPROC_UNKNOWN:
        break;
    }
    /* an embedded NUL ends the name, as it would for a file name */
    if (k != KFDPROC_UNKNOWN && strcmp(expect, name) != 0)
        abort();
    free(name);
    return 0;
}
