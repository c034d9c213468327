/* TLC_API marks the functions libtlc.so exports. The library is compiled
 * with hidden visibility, so a function of include/tlc/ without TLC_API is
 * not reachable from outside it (tests/package checks that the exported
 * symbols and the declared functions are the same set). */
#ifndef TLC_EXPORT_H
#define TLC_EXPORT_H
#if defined(__GNUC__) || defined(__clang__)
#define TLC_API __attribute__((visibility("default")))
#else
#define TLC_API
#endif
#endif
