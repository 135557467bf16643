// scan.h: internal byte scanners of the codec (SSE2 on x86-64, a table loop elsewhere). They
// read whole 16-byte blocks as long as `readable_end` allows (bytes past `end` but inside the
// caller's buffer are loaded and masked off, never judged), so short lines need no scalar tail.
//
// Thread-safety: pure functions.
#ifndef PORTICO_GATEWAY_HTTP_SCAN_H_
#define PORTICO_GATEWAY_HTTP_SCAN_H_

#include <cstddef>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "gateway/http/header_util.h"

namespace portico::gateway::http::internal {

// FindInvalidValueByte returns the first byte of [p, end) that IsFieldValueChar rejects (CTLs
// but HTAB, DEL), or end.
inline const char* FindInvalidValueByte(const char* p, const char* end, const char* readable_end) {
#if defined(__SSE2__)
  const __m128i k1f = _mm_set1_epi8(0x1f);
  const __m128i k7f = _mm_set1_epi8(0x7f);
  while (p < end && readable_end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, k1f), v);  // v <= 0x1f
    const __m128i del = _mm_cmpeq_epi8(v, k7f);
    unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(ctl, del)));
    const size_t avail = static_cast<size_t>(end - p);
    if (avail < 16) mask &= (1u << avail) - 1;
    if (mask == 0) {
      if (avail <= 16) return end;
      p += 16;
      continue;
    }
    const char* bad = p + __builtin_ctz(mask);
    if (*bad != '\t') return bad;
    p = bad + 1;  // HTAB is allowed: go on after it.
  }
#else
  (void)readable_end;
#endif
  while (p < end && IsFieldValueChar(*p)) ++p;
  return p;
}

// FindInvalidTargetByte returns the first byte of [p, end) outside 0x21-0x7E or equal to '#'
// (the request-target scan; the SP after the target is such a byte), or end.
inline const char* FindInvalidTargetByte(const char* p, const char* end, const char* readable_end) {
#if defined(__SSE2__)
  const __m128i k20 = _mm_set1_epi8(0x20);
  const __m128i k7f = _mm_set1_epi8(0x7f);
  const __m128i hash = _mm_set1_epi8('#');
  while (p < end && readable_end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i low = _mm_cmpeq_epi8(_mm_min_epu8(v, k20), v);   // v <= 0x20
    const __m128i high = _mm_cmpeq_epi8(_mm_max_epu8(v, k7f), v);  // v >= 0x7f
    const __m128i bad = _mm_or_si128(_mm_or_si128(low, high), _mm_cmpeq_epi8(v, hash));
    unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(bad));
    const size_t avail = static_cast<size_t>(end - p);
    if (avail < 16) mask &= (1u << avail) - 1;
    if (mask != 0) return p + __builtin_ctz(mask);
    if (avail <= 16) return end;
    p += 16;
  }
#else
  (void)readable_end;
#endif
  while (p < end) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c <= 0x20 || c >= 0x7f || c == '#') break;
    ++p;
  }
  return p;
}

}  // namespace portico::gateway::http::internal

#endif  // PORTICO_GATEWAY_HTTP_SCAN_H_
