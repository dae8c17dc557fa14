/* UTF-8 encoding and strict validation (utf8.h). */
#include "utf8.h"

#include <stdint.h>

size_t utf8_encode(unsigned long cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

bool utf8_valid(const void *s, size_t n)
{
    const uint8_t *b = s;
    size_t i = 0;

    while (i < n) {
        uint8_t c = b[i];
        size_t k;
        uint32_t cp, min;

        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xe0) == 0xc0)
            k = 1, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0)
            k = 2, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0)
            k = 3, cp = c & 0x07, min = 0x10000;
        else
            return false; /* a continuation byte first, or 0xf8-0xff */
        if (n - i - 1 < k)
            return false;
        for (size_t j = 1; j <= k; j++) {
            if ((b[i + j] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (b[i + j] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += k + 1;
    }
    return true;
}
