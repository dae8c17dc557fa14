/*
 * libFuzzer target for GPU pressure as the cluster reports it (enforcer/pressure.c, with the
 * list parsing of kube_json.c it uses): the first byte picks the reader (bit 0x40: a Kueue
 * WorkloadList, pressure_parse_kueue; else a PodList, pressure_parse_pending) and the rule's
 * resource name (bit 0x80: "amd.com/gpu", bit 0x20: its sanitized form "amd_com_gpu", else
 * "r"), the rest is the body. The readers promise no read past `len` (ASan checks it on an
 * exact-size copy), on failure a message and an empty result, on success a count no larger
 * than the input, requests only with a count, names that all read as the resource once
 * sanitized, and an ambiguous answer that confirms nothing; the checks below trap otherwise.
 * Seeds: fuzz/corpus/pressure.
 */
#include "kube_json.c"
#include "pressure.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t len = size - 1;
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return 0;
    memcpy(copy, data + 1, len);
    char err[256] = "";
    const char *res = (data[0] & 0x80) ? "amd.com/gpu" : (data[0] & 0x20) ? "amd_com_gpu" : "r";
    struct pressure_demand d;
    int ret;
    if (data[0] & 0x40) {
        /* The skip list is cut from the input too. */
        const char *skip[] = {"9b1c0a52-1f0e-4c3b-9a55-0f2a1e000512", copy};
        ret = pressure_parse_kueue(copy, len, res, skip, len ? 1 : 0, &d, err, sizeof(err));
        if (d.requested != 0)
            __builtin_trap();
    } else {
        ret = pressure_parse_pending(copy, len, res, &d, err, sizeof(err));
    }
    if (d.requested < 0 || (ret < 0 && (!err[0] || d.count || d.requested || d.nnames)) ||
        (ret == 0 && d.count > len) || (d.count == 0 && d.requested != 0) ||
        (d.ambiguous && (d.count || d.requested)))
        __builtin_trap();
    for (size_t i = 0; i < d.nnames && i < PRESSURE_NAMES_MAX; i++)
        if (!pressure_same(d.names[i], res))
            __builtin_trap();
    if (d.ambiguous) {
        char why[1024];
        pressure_ambiguity(&d, res, why, sizeof(why));
        if (!strstr(why, "which one the rule means is unknown"))
            __builtin_trap();
    }
    free(copy);
    return 0;
}
