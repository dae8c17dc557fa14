/*
 * libFuzzer target for what `restore` and the engine read from objects an owner can edit
 * (enforcer/restore_plan.c, enforcer/keep.c): the bytes as an object's JSON go through
 * restore_obj_parse and restore_plan (a command way's object taken as still stopped), whose
 * plan must be one of the undoing ways with a patch
 * that parses back as a JSON object, or a refusal with a reason; the bytes as a notice go
 * through restore_record_parse and, when they are a JSON object, restore_record_add, whose
 * record must read back with the same way; and the bytes as a keep-until value go through
 * keep_judge, which must never keep past the rule's maximum. Seeds: fuzz/corpus/restore.
 */
#include "keep.c"
#include "notice.c"
#include "restore_plan.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[160] = "", msg[512] = "";
    /* an exact-size copy: ASan sees any read past `size` */
    char *exact = xcalloc(size ? size : 1, 1);
    memcpy(exact, data, size);
    struct restore_obj o;
    if (restore_obj_parse(exact, size, &o, err, sizeof(err)) == 0) {
        struct restore_op op;
        /* a command way's object as its row reads it, stopped (the caller's o.stopped) */
        o.stopped = o.rec.method == KIND_COMMAND ? 1 : -1;
        if (restore_plan(&o, 1700000000, &op, msg, sizeof(msg)) == 0) {
            if (op.method != KIND_SCALE && op.method != KIND_PATCH && op.method != KIND_ANNOTATE &&
                op.method != KIND_COMMAND)
                __builtin_trap();
            json_object *p = json_tokener_parse(op.patch);
            if (!p || !json_object_is_type(p, json_type_object))
                __builtin_trap();
            json_object_put(p);
            if (op.method == KIND_SCALE && op.replicas < 0)
                __builtin_trap();
            restore_op_free(&op);
        } else if (!msg[0]) {
            __builtin_trap();
        }
    } else if (!err[0]) {
        __builtin_trap();
    }
    restore_obj_free(&o);
    free(exact);

    char *s = xstrndup((const char *)data, size);
    struct restore_record r;
    if (restore_record_parse(s, &r, err, sizeof(err)) == 0 && r.method != KIND_NONE) {
        char *n = restore_record_add(s, &r);
        struct restore_record back;
        if (!n || restore_record_parse(n, &back, err, sizeof(err)) < 0 || back.method != r.method ||
            strcmp(back.uid, r.uid) != 0)
            __builtin_trap();
        restore_record_free(&back);
        free(n);
    }
    restore_record_free(&r);

    struct keep_request rq = {s, "Notebook ml/x"};
    struct keep_verdict v;
    keep_judge(&rq, 1, 3600, 1700000000, 1700000100, "r", &v);
    if (v.state == KEEP_NONE || (v.in_force && !(v.until <= 1700000000 + 3600)) || !v.msg[0])
        __builtin_trap();
    keep_judge(&rq, 1, 0, 1700000000, 1700000100, "r", &v);
    if (v.state != KEEP_IGNORED || v.in_force)
        __builtin_trap();
    free(s);
    return 0;
}
