/* status.h - JSON text written into a pc_wbuf (status.c): string
 * literals escaped so that any bytes make valid JSON, and formatted text.
 * A peer writes its status document with them (pc_status_json,
 * peer_private.h), and levctl writes the document it merges with the same
 * escaper.
 *
 * Internal (not installed). Depends on wire.h (pc_wbuf) only.
 */
#ifndef PC_STATUS_H
#define PC_STATUS_H

#include "wire.h"

/* Appends s (NULL: "") as a JSON string literal, always valid UTF-8
 * whatever s holds: '"' and '\\' are escaped with a backslash, control
 * bytes (below 0x20, and 0x7f) as \u00XX, well-formed UTF-8 sequences are
 * copied, and each byte of a malformed one (a stray continuation byte, a
 * sequence cut short, an overlong form, a surrogate, past U+10FFFF)
 * becomes \u00XX, the code point of the same number. */
void pc_json_str(pc_wbuf *w, const char *s);

/* Appends printf-formatted text. */
void pc_json_fmt(pc_wbuf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
