// A shared library opened on the first call that needs it, never linked: the
// one dlopen-and-resolve of CSQLite, CSeccomp and CSecret.
//
// Each of them lists its functions once, as X(return type, name, (arguments)).
// CSQLite and CSeccomp make from that list, with APPHOME_LAZY_LIBRARY, the
// struct of pointers `api` and a loader that opens the library once:
//
//   APPHOME_LAZY_LIBRARY(FUNCTIONS, "libfoo.so.1", apphome_foo_load)
//
// CSecret, which refuses to load inside a sandbox first, builds the same
// struct and its table of symbols by hand:
//
//   static struct { FUNCTIONS(APPHOME_LAZY_FIELD) } api;
//   static const apphome_lazy_symbol symbols[] = { FUNCTIONS(APPHOME_LAZY_SYMBOL) };
//   failure = apphome_lazy_library_open("libfoo.so.1", symbols, APPHOME_LAZY_COUNT(symbols));
#ifndef APPHOME_CLAZYLIBRARY_H
#define APPHOME_CLAZYLIBRARY_H

#include <pthread.h>
#include <stddef.h>

typedef struct {
    const char *name;
    void **slot;
} apphome_lazy_symbol;

#define APPHOME_LAZY_FIELD(ret, name, args) ret (*name) args;
#define APPHOME_LAZY_SYMBOL(ret, name, args) { #name, (void **)&api.name },
#define APPHOME_LAZY_COUNT(symbols) (sizeof(symbols) / sizeof((symbols)[0]))

/// Opens `soname` (RTLD_NOW | RTLD_LOCAL; its own dependencies come with it and
/// dlsym on its handle searches them too) and stores each symbol's address in
/// its slot. Returns NULL when every symbol resolved, else why not, allocated
/// for the life of the process: dlerror's text, or "<soname> has no <symbol>".
char *apphome_lazy_library_open(const char *soname, const apphome_lazy_symbol *symbols, size_t count);

/// Defines, in the file that uses it, `api` (a struct with a pointer for each
/// function FUNCTIONS lists) and `const char *loader(void)`: the first call
/// opens `soname` and fills `api` (once, under pthread_once); every call
/// returns NULL when every symbol resolved, else why not
/// (apphome_lazy_library_open's text).
#define APPHOME_LAZY_LIBRARY(FUNCTIONS, soname, loader) \
    static struct { FUNCTIONS(APPHOME_LAZY_FIELD) } api; \
    static pthread_once_t loader##_once = PTHREAD_ONCE_INIT; \
    static char *loader##_failure; /* NULL once everything resolved */ \
    static void loader##_open(void) { \
        static const apphome_lazy_symbol symbols[] = { FUNCTIONS(APPHOME_LAZY_SYMBOL) }; \
        loader##_failure = apphome_lazy_library_open(soname, symbols, APPHOME_LAZY_COUNT(symbols)); \
    } \
    const char *loader(void) { \
        pthread_once(&loader##_once, loader##_open); \
        return loader##_failure; \
    }

#endif
