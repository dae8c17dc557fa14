/*
 * libFuzzer target for the /proc/<pid>/cgroup parser: no crash or over-read on arbitrary
 * bytes, and whatever it returns as a container id or pod UID has the documented shape.
 */
#include "cgroup.c"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cgroup_owner o;
    int rc = cgroup_parse((const char *)data, size, &o);
    if (rc != 0 && rc != -1)
        abort();
    if (o.has_container_id) {
        if (strlen(o.container_id) != 64 || o.conmon || o.runtime == CGROUP_RUNTIME_NONE)
            abort();
        for (int i = 0; i < 64; i++)
            if (!is_lower_hex(o.container_id[i]))
                abort();
    } else if (o.runtime != CGROUP_RUNTIME_NONE) {
        abort();
    }
    if (o.has_pod_uid) {
        size_t n = strlen(o.pod_uid);
        if ((n != 36 && n != 32) || !o.in_kubernetes || o.qos == CGROUP_QOS_UNKNOWN)
            abort();
        for (size_t i = 0; i < n; i++)
            if (!is_lower_hex(o.pod_uid[i]) && !(n == 36 && o.pod_uid[i] == '-'))
                abort();
    } else if (o.in_kubernetes) {
        abort();
    }
    if (rc == -1 && (o.has_container_id || o.has_pod_uid || o.layout))
        abort();
    return strlen(cgroup_runtime_name(o.runtime)) + strlen(cgroup_qos_name(o.qos)) == 1;
}
