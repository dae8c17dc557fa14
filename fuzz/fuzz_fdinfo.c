/*
 * libFuzzer target for the DRM fdinfo parser: arbitrary bytes (not NUL-terminated) must
 * never crash or over-read, and the result must respect the struct's invariants.
 */
#include "fdinfo.c"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fdinfo fi;
    char err[64];
    int rc = fdinfo_parse((const char *)data, size, &fi, err, sizeof(err));
    if (rc != 0 && rc != -1)
        abort();
    if (fi.n_engines > FDINFO_MAX_ENGINES || fi.n_regions > FDINFO_MAX_REGIONS)
        abort();
    if (fi.has_driver && strlen(fi.driver) >= sizeof(fi.driver))
        abort();
    uint64_t sum = fi.client_id + fi.pasid + fi.malformed;
    for (unsigned i = 0; i < fi.n_engines; i++) {
        const struct fdinfo_engine *e = &fi.engines[i];
        if (strlen(e->name) == 0 || strlen(e->name) >= FDINFO_NAME_MAX)
            abort();
        uint64_t ns;
        if (e->has_busy && (!fdinfo_engine_ns(&fi, e->name, &ns) || ns != e->busy_ns))
            abort();
        sum += e->busy_ns + e->capacity;
    }
    for (unsigned i = 0; i < fi.n_regions; i++) {
        uint64_t v;
        for (int k = 0; k < FDINFO_MEM_KINDS; k++)
            if (fdinfo_mem_bytes(&fi, fi.regions[i].name, (enum fdinfo_mem_kind)k, &v))
                sum += v;
        if (fdinfo_resident_bytes(&fi, fi.regions[i].name, &v))
            sum += v;
    }
    /* a second parse of the same bytes must give the same answer */
    static struct fdinfo again;
    fdinfo_parse((const char *)data, size, &again, NULL, 0);
    if (memcmp(&again, &fi, sizeof(fi)) != 0)
        abort();
    return sum == 42 ? 0 : 0;
}
