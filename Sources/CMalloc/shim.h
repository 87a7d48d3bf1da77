// glibc's allocator controls (malloc_trim), which its Swift module does not bring; part of libc, nothing to link.
#if defined(__GLIBC__) || (defined(__has_include) && __has_include(<malloc.h>) && defined(__linux__))
#include <malloc.h>
#endif
