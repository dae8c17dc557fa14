/*
 * libFuzzer target for the web configuration parser (common/webcfg.c over common/ydom.c):
 * any byte string goes through webcfg_parse and everything is freed, so ASan/UBSan and
 * LeakSanitizer check the error paths. The parser's promises are asserted too: a success
 * with TLS names a certificate and a key, every user has a well-formed bcrypt hash, only
 * the allowed headers appear and relative file names were resolved; a failure has a
 * message that starts with the file name.
 * Seeds: fuzz/corpus/webcfg (valid and invalid configurations).
 */
#include "webcfg.c"
#include "ydom.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char path[] = "/etc/gpureclaim/web.yml";
    struct webcfg w;
    char err[600];
    int rc = webcfg_parse((const char *)data, size, path, &w, err, sizeof(err));
    if (rc == 0) {
        if (w.tls && ((!w.cert && !w.cert_file) || (!w.key && !w.key_file)))
            __builtin_trap();
        for (size_t i = 0; i < w.nusers; i++)
            if (!is_bcrypt(w.users[i].hash) || strchr(w.users[i].name, ':'))
                __builtin_trap();
        for (size_t i = 0; i < w.nheaders; i++) {
            bool known = false;
            for (size_t j = 0; j < ARRAY_LEN(allowed_headers); j++)
                known |= strcmp(w.headers[i].name, allowed_headers[j].name) == 0;
            if (!known || strpbrk(w.headers[i].value, "\r\n"))
                __builtin_trap();
        }
        const char *files[] = {w.cert_file, w.key_file, w.client_ca_file};
        for (size_t i = 0; i < 3; i++)
            if (files[i] && files[i][0] != '/')
                __builtin_trap();
        if (w.min_version && w.max_version && w.min_version > w.max_version)
            __builtin_trap();
        char prio[160];
        webcfg_priorities(&w, prio, sizeof(prio));
    } else if (strncmp(err, path, strlen(path)) != 0) {
        __builtin_trap();
    }
    webcfg_free(&w);
    return 0;
}
