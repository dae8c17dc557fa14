/*
 * libFuzzer target for the Docker/Podman answer parsers: the first byte picks the inspect or
 * the list parser, the rest is the body, passed as an exact-size copy so ASan sees any read
 * past `len`. On success every string field must be NUL-terminated within its buffer, ids
 * hexadecimal, and label/device arrays consistent with their counts; the checks trap
 * otherwise. On failure the output must be empty and a message set. Seeds: fuzz/corpus/docker.
 */
#include "httpc.c"
#include "docker.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check(const struct docker_container *c)
{
    if (strnlen(c->id, sizeof(c->id)) == sizeof(c->id) ||
        strnlen(c->name, sizeof(c->name)) == sizeof(c->name) ||
        strnlen(c->status, sizeof(c->status)) == sizeof(c->status) ||
        strnlen(c->image, sizeof(c->image)) == sizeof(c->image) ||
        strnlen(c->created, sizeof(c->created)) == sizeof(c->created))
        __builtin_trap();
    if (!c->id[0] || strspn(c->id, "0123456789abcdefABCDEF") != strlen(c->id))
        __builtin_trap();
    if ((c->nlabels && !c->labels) || (c->ndevices && !c->devices))
        __builtin_trap();
    for (size_t i = 0; i < c->nlabels; i++)
        if (!c->labels[i].key || !c->labels[i].value || docker_label(c, c->labels[i].key) == NULL)
            __builtin_trap();
    for (size_t i = 0; i < c->ndevices; i++)
        if (!c->devices[i])
            __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t len = size - 1;
    char *copy = malloc(len ? len : 1);
    memcpy(copy, data + 1, len);
    char err[256] = "";
    if (data[0] & 1) {
        struct docker_container *v = NULL;
        size_t n = 0;
        if (docker_parse_list(copy, len, &v, &n, err, sizeof(err)) == 0) {
            for (size_t i = 0; i < n; i++)
                fuzz_check(&v[i]);
        } else if (v || n || !err[0]) {
            __builtin_trap();
        }
        docker_containers_free(v, n);
    } else {
        struct docker_container c;
        if (docker_parse_inspect(copy, len, &c, err, sizeof(err)) == 0)
            fuzz_check(&c);
        else if (c.nlabels || c.ndevices || c.labels || c.devices || !err[0])
            __builtin_trap();
        docker_container_free(&c);
    }
    free(copy);
    return 0;
}
