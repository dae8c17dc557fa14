/*
 * Decoder of one Prometheus XOR chunk, the compressed form in which the TSDB stores float
 * samples and in which remote read's STREAMED_XOR_CHUNKS answer carries them
 * (docs/remote-read.md §10.4). Pure: bytes in, points appended to a struct series out, no I/O.
 *
 * The decoder is strict because its output decides reclaims: a chunk whose bit stream ends
 * before the samples its header counts, has bytes or set bits left over after them, or whose
 * timestamps do not strictly increase (within the chunk and after the samples the series
 * already has) is an error, never a shorter series.
 */
#ifndef GPURECLAIM_XORCHUNK_H
#define GPURECLAIM_XORCHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "series.h"

/*
 * Where decoded samples go, kept by the caller across the chunks of one series. Points are
 * struct point {t = ms / 1000.0, v = the 64 bits stored, NaN payloads included}.
 */
struct xorchunk_sink {
    struct series *s; /* points appended to s->p, s->n */
    size_t cap;       /* points allocated at s->p: 0 for a series with none yet */
    bool has_last;    /* a sample was decoded into this sink before */
    int64_t last_ms;  /* its timestamp: every new sample must come strictly after it */
    bool clip;        /* keep only samples with min_ms <= t <= max_ms (all are still checked) */
    int64_t min_ms, max_ms;
};

/* Samples a chunk holds according to its 2-byte header, or -1 when it is shorter than that. */
int xorchunk_count(const uint8_t *data, size_t len);

/*
 * Decode the chunk at data (its 2-byte big-endian sample count, then the bit stream) and
 * append its samples to k->s. Returns 0, or -1 with a message in err; on error k is as on
 * entry (s->n and last_ms restored; s->p may have been reallocated, k->cap says how far).
 */
int xorchunk_decode(const uint8_t *data, size_t len, struct xorchunk_sink *k, char *err,
                    size_t errlen);

#endif
