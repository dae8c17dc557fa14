/*
 * A reader of the protobuf wire format (protobuf.dev/programming-guides/encoding): the fields
 * of a message one by one, varints, fixed-width values, length-delimited payloads, skipped
 * groups and nested messages up to a depth limit, with errors that name the message and the
 * byte offset; and the few writers a request needs (varint and length-delimited fields). What
 * the fields mean is the caller's (exporter/podres.c for the kubelet's pod-resources messages,
 * enforcer/remoteread.c for Prometheus remote read); this knows only the encoding.
 */
#ifndef GPURECLAIM_PBWIRE_H
#define GPURECLAIM_PBWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

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

/*
 * Writers, appending to a struct sbuf (binary-safe: sbuf_add). A sub-message is built in its
 * own buffer and appended with pb_put_bytes, since its length comes first.
 */
void pb_put_varint(struct sbuf *b, uint64_t v);
/* Key of field `num` with wire type `wire`. */
void pb_put_key(struct sbuf *b, uint32_t num, unsigned wire);
/* A VARINT field (int32, int64, uint64, bool, enum; a negative int64 takes 10 bytes). */
void pb_put_uint(struct sbuf *b, uint32_t num, uint64_t v);
/* A LEN field: string, bytes, a sub-message or a packed run. */
void pb_put_bytes(struct sbuf *b, uint32_t num, const void *data, size_t len);

#endif
