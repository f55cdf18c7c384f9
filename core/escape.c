/* SPDX-License-Identifier: MIT */
/*
 * Terminal-safe text. Strings that come from outside (board uname, platform names, agent versions,
 * file contents echoed in messages) can hold escape sequences that move the cursor, rewrite the
 * title, or hide earlier lines; printed raw they turn a report into a forgery. Every such string goes
 * through pd_esc_append before it reaches a terminal or a text report, so what the user reads is what
 * the bytes are. Escaping is reversible (a backslash is doubled) so nothing is silently lost.
 */
#include "core/pd_core.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes there are not one (overlong
 * forms, surrogates and code points above U+10FFFF are invalid, as in RFC 3629). *cp gets the code
 * point. */
static size_t utf8_len(const unsigned char *p, size_t left, uint32_t *cp)
{
	unsigned c = p[0];
	size_t n;
	uint32_t v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xE0) == 0xC0) {
		n = 2, v = c & 0x1F, min = 0x80;
	} else if ((c & 0xF0) == 0xE0) {
		n = 3, v = c & 0x0F, min = 0x800;
	} else if ((c & 0xF8) == 0xF0) {
		n = 4, v = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (left < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return n;
}

/* The escaped form of the unit (one byte or one UTF-8 sequence) at p into u (at most 8 bytes + NUL);
 * returns its length and sets *used to the input bytes it stands for. */
static size_t esc_unit(const unsigned char *p, size_t left, char u[16], size_t *used, bool keep_nl)
{
	uint32_t cp;
	size_t l = utf8_len(p, left, &cp);
	*used = l ? l : 1;
	if (l == 0)
		return (size_t)snprintf(u, 16, "\\x%02X", p[0]);
	if (cp == '\n' && keep_nl)
		return (size_t)snprintf(u, 16, "\n");
	switch (cp) {
	case '\\': return (size_t)snprintf(u, 16, "\\\\");
	case '\n': return (size_t)snprintf(u, 16, "\\n");
	case '\t': return (size_t)snprintf(u, 16, "\\t");
	case '\r': return (size_t)snprintf(u, 16, "\\r");
	case 0x1B: return (size_t)snprintf(u, 16, "\\e");
	default: break;
	}
	if (cp < 0x20 || cp == 0x7F)
		return (size_t)snprintf(u, 16, "\\x%02X", (unsigned)cp);
	if (cp >= 0x80 && cp <= 0x9F) /* C1 controls: CSI (U+009B) is an escape sequence on its own */
		return (size_t)snprintf(u, 16, "\\u{%02X}", (unsigned)cp);
	memcpy(u, p, l);
	u[l] = '\0';
	return l;
}

static int esc_append(pd_buf *out, const char *s, size_t n, bool keep_nl)
{
	if (!s)
		return 0;
	if (n == (size_t)-1)
		n = strlen(s);
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		char u[16];
		size_t used, l = esc_unit(p + i, n - i, u, &used, keep_nl);
		if (pd_buf_append(out, u, l) < 0)
			return -1;
		i += used;
	}
	return 0;
}

int pd_esc_append(pd_buf *out, const char *s, size_t n) { return esc_append(out, s, n, false); }

int pd_esc_append_lines(pd_buf *out, const char *s, size_t n) { return esc_append(out, s, n, true); }

const char *pd_esc(const char *s, char *buf, size_t n)
{
	if (!n)
		return buf;
	size_t o = 0;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t left = strlen((const char *)p);
	while (left) {
		char u[16];
		size_t used, l = esc_unit(p, left, u, &used, false);
		if (o + l > n - 1) /* never a unit cut in half */
			break;
		memcpy(buf + o, u, l);
		o += l, p += used, left -= used;
	}
	buf[o] = '\0';
	return buf;
}

int pd_esc_fputs(const char *s, FILE *f)
{
	pd_buf b;
	pd_buf_init(&b);
	int rc = pd_esc_append_lines(&b, s, (size_t)-1);
	if (rc == 0 && b.data)
		rc = fputs(b.data, f) < 0 ? -1 : 0;
	pd_buf_free(&b);
	return rc;
}
