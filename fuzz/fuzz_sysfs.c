/*
 * libFuzzer target for the exporter's text parsers that are not covered by their own
 * targets: the strict number parsers every sysfs value goes through, and the KFD topology
 * `properties` parser used by GPU discovery.
 */
#include "gpu.c"
#include "attrfd.c"
#include "sysfs.c"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    uint64_t u = 0;
    int64_t i = 0;
    double d = 0;
    volatile int sink = parse_u64(s, &u) + parse_i64(s, &i) + parse_double(s, &d);
    struct kfd_node k;
    parse_properties(s, &k);
    /* Touch every output so the calls are not optimised away. */
    sink += (int)(u & 1) + (int)(i & 1) + (d > 0) + (int)(k.simd_count & 1) + k.has_minor +
            k.has_location + (int)(k.num_xcc & 1);
    (void)sink;
    free(s);
    return 0;
}
