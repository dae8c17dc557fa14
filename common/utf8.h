/*
 * UTF-8: writing one code point, and checking that bytes from outside (protobuf strings
 * from the kubelet, which become Prometheus labels) are strict UTF-8 before they are kept.
 * promq's streaming JSON lexer checks UTF-8 byte by byte as it goes and does not use this.
 */
#ifndef GPURECLAIM_UTF8_H
#define GPURECLAIM_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Write code point `cp` (at most 0x10FFFF) as UTF-8 into out; returns the length, 1 to 4. */
size_t utf8_encode(unsigned long cp, char out[4]);

/*
 * True when s[0..n) is strict UTF-8 (RFC 3629): no overlong forms, no surrogates
 * (U+D800-U+DFFF), nothing above U+10FFFF, no sequence cut short. NUL is valid UTF-8; a
 * caller that refuses it says so itself.
 */
bool utf8_valid(const void *s, size_t n);

#endif
