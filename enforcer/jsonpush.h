/*
 * A push tokenizer of JSON (RFC 8259): it is fed the document in chunks of any size, as they
 * arrive, and tells its reader what it meets as events (a value starts, an object key, a
 * container closes), never holding the document or building a tree. The reader decides what
 * the values mean (promjson.c reads Prometheus' answers with it).
 *
 * It exists because answers are too large to hold: with 100,000 workloads a range answer is
 * some 70 MB of text, and json-c's tree of 13 MB took 0.5 s and 200 MB. It refuses what
 * json-c 0.16 accepts even in strict mode but no correct encoder writes (raw control
 * characters, invalid UTF-8, \u0000, lone surrogates, leading zeros, NaN, single quotes),
 * and keeps json-c's nesting limit and its error offsets (tests/unit/promq_ref.c compares).
 */
#ifndef GPURECLAIM_JSONPUSH_H
#define GPURECLAIM_JSONPUSH_H

#include <stdbool.h>
#include <stddef.h>

/* Nesting limit, as json-c counts it: no value inside this many containers. */
#define JSONPUSH_DEPTH 16

/* What a value is. */
enum jsonpush_kind {
    JSONPUSH_OBJECT,
    JSONPUSH_ARRAY,
    JSONPUSH_STRING,
    JSONPUSH_NUMBER,
    JSONPUSH_LITERAL, /* true or false */
    JSONPUSH_NULL,
};

/*
 * Why a document is not JSON. The errors from JSONPUSH_E_CONTROL on are constructs json-c
 * accepts and the tokenizer refuses on purpose.
 */
enum jsonpush_err {
    JSONPUSH_OK = 0,
    JSONPUSH_E_TRUNCATED, /* the input ends inside a value */
    JSONPUSH_E_SYNTAX,    /* unexpected character */
    JSONPUSH_E_DEPTH,     /* a value inside JSONPUSH_DEPTH containers */
    JSONPUSH_E_CONTROL,   /* raw control character in a string */
    JSONPUSH_E_UTF8,      /* invalid UTF-8 (overlong, surrogate, above U+10FFFF, cut short) */
    JSONPUSH_E_NUL,       /* \u0000, which a C string cannot hold */
    JSONPUSH_E_SURROGATE, /* \uD800-\uDFFF not forming a pair */
    JSONPUSH_E_NUMBER,    /* a leading zero, or a '.' without digits on one side */
    JSONPUSH_E_LITERAL,   /* NaN or Infinity */
    JSONPUSH_E_QUOTE,     /* a key in single quotes */
};

/*
 * The reader's handlers; `arg` is the pointer given to jsonpush_new. `depth` is the depth of
 * the value: 0 for the document, 1 for its members, and so on. A handler that returns
 * non-zero stops the tokenizer (jsonpush_stopped), nothing more is read or reported.
 */
struct jsonpush_events {
    /*
     * A value of `kind` starts. For a string `s` holds its decoded bytes (`len` of them, NUL
     * after them); for a number its text, for a literal or null its text ("true", "false", "null").
     * A container's members follow, then `close` at the same depth.
     */
    int (*value)(void *arg, size_t depth, enum jsonpush_kind kind, const char *s, size_t len);
    /* A key (decoded, NUL-terminated) of the object whose members sit at `depth`. */
    void (*key)(void *arg, size_t depth, const char *s, size_t len);
    /* The container that started at `depth` is complete. */
    int (*close)(void *arg, size_t depth);
};

struct jsonpush;

/*
 * A tokenizer for one document. A string or number longer than `max_token` bytes stops it
 * (jsonpush_too_long): one token that large is as much too large as the data it would hold.
 * The length is checked as a chunk is read, so a token that ends in it is still reported.
 */
struct jsonpush *jsonpush_new(const struct jsonpush_events *ev, void *arg, size_t max_token);
void jsonpush_free(struct jsonpush *p);

/*
 * Feed the next `n` bytes. Returns 0, or -1 once the tokenizer has stopped (a syntax error,
 * bytes after the document, a handler's stop, a token over the cap): the rest is not read.
 */
int jsonpush_feed(struct jsonpush *p, const char *buf, size_t n);

/*
 * The document has ended: JSONPUSH_OK, or the syntax error and in `*pos` its byte offset
 * (the end of the input when it is cut short). JSONPUSH_OK also after a stop that was no
 * syntax error (jsonpush_trailing, jsonpush_too_long, a handler's stop).
 */
enum jsonpush_err jsonpush_end(struct jsonpush *p, size_t *pos);

/* Bytes fed so far. */
size_t jsonpush_offset(const struct jsonpush *p);
/* Whether bytes other than white space followed the document, and the offset of the first. */
bool jsonpush_trailing(const struct jsonpush *p, size_t *pos);
/* Whether a string or number grew over `max_token`. */
bool jsonpush_too_long(const struct jsonpush *p);
/* The error in a few words ("unexpected end of data", ...). */
const char *jsonpush_strerror(enum jsonpush_err e);

#endif
