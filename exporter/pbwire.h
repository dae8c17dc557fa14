/*
 * A reader of the protobuf wire format (protobuf.dev/programming-guides/encoding): the fields
 * of a message one by one, varints, fixed-width values, length-delimited payloads, skipped
 * groups and nested messages up to a depth limit, with errors that name the message and the
 * byte offset. What the fields mean is the caller's (podres.c for the kubelet's
 * pod-resources messages); this knows only the encoding.
 */
#ifndef GPURECLAIM_PBWIRE_H
#define GPURECLAIM_PBWIRE_H

#include <stddef.h>
#include <stdint.h>

/* Wire types (the low 3 bits of a field key). */
enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_SGROUP = 3, PB_EGROUP = 4, PB_I32 = 5 };

/* One decode: set base, err, errlen and max_depth (depth 0); `arg` is the caller's. */
struct pb_dec {
    const uint8_t *base; /* start of the whole message, for byte offsets in errors */
    char *err;
    size_t errlen;
    int depth;
    int max_depth; /* deepest nesting of sub-messages and groups accepted */
    void *arg;
};

/* The fields of one message still to read; `msg` names its type for errors. */
struct pb_reader {
    const uint8_t *p, *end;
    const char *msg; /* message type, for errors */
};

struct pb_field {
    uint32_t num;
    unsigned wire;
    uint64_t u;          /* value of VARINT, I64, I32 */
    const uint8_t *data; /* payload of LEN */
    size_t len;
    const uint8_t *at; /* where the key starts */
};

/* Write "malformed '<msg>' at byte <offset>: <why>" into d->err (when set); returns -1. */
int pb_fail(struct pb_dec *d, const char *msg, const uint8_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* 0, -1 if the input ends inside the varint, -2 if it is longer than 10 bytes or above 2^64. */
int pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out);

/*
 * Next field of a message body, its payload consumed (a group is skipped whole): 1 with *f
 * filled, 0 at the end of the message, -1 on malformed input (with d->err set).
 */
int pb_field_next(struct pb_dec *d, struct pb_reader *r, struct pb_field *f);

/* Open the payload of a LEN field as the message `name`; pair with pb_leave(). */
int pb_enter(struct pb_dec *d, const struct pb_reader *parent, const struct pb_field *f,
             const char *name, struct pb_reader *sub);
void pb_leave(struct pb_dec *d);

/*
 * A string field `field` the caller keeps: 1 when it is at most `max` bytes of NUL-free,
 * strict UTF-8 (f->data, f->len), 0 when its wire type is not LEN (an unknown field), -1
 * otherwise.
 */
int pb_string(struct pb_dec *d, const struct pb_reader *r, const struct pb_field *f,
              const char *field, size_t max);

/* repeated int64 `field`: unpacked (already read) or a packed run that must end exactly. */
int pb_int64s(struct pb_dec *d, const struct pb_reader *r, const struct pb_field *f,
              const char *field);

/* Walk a message nothing is kept from, calling `fn` (may be NULL) on each field. */
typedef int (*pb_field_fn)(struct pb_dec *d, struct pb_reader *r, const struct pb_field *f);
int pb_walk(struct pb_dec *d, const struct pb_reader *parent, const struct pb_field *f,
            const char *name, pb_field_fn fn);

#endif
