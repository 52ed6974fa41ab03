// A shared library opened on the first call that needs it, never linked: the
// one dlopen-and-resolve of CSQLite, CSeccomp and CSecret.
//
// Each of them lists its functions once, as X(return type, name, (arguments)).
// CSQLite and CSeccomp make from that list, with APPHOME_LAZY_LIBRARY, the
// struct of pointers `api` and a loader that opens the library once:
//
//   APPHOME_LAZY_LIBRARY(FUNCTIONS, "libfoo.so.1", apphome_foo_load)
//
// A program may link such a library's archive instead (the static `apphome`
// links libseccomp.a: its sandbox's filter is on the way to every app's start).
// APPHOME_LAZY_LIBRARY declares the functions weak: when every one of them is
// linked in, their addresses fill `api` and nothing is opened; in a program that
// does not link them they are NULL, and the library is opened.
//
// CSecret, which refuses to load inside a sandbox first and is never linked,
// builds the same struct and its table of symbols by hand:
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
    void *linked;  // the function linked into this program, or NULL
} apphome_lazy_symbol;

#define APPHOME_LAZY_FIELD(ret, name, args) ret (*name) args;
#define APPHOME_LAZY_SYMBOL(ret, name, args) { #name, (void **)&api.name, NULL },
#define APPHOME_LAZY_WEAK(ret, name, args) extern __typeof__(name) name __attribute__((weak));
#define APPHOME_LAZY_LINKED(ret, name, args) { #name, (void **)&api.name, (void *)name },
#define APPHOME_LAZY_COUNT(symbols) (sizeof(symbols) / sizeof((symbols)[0]))

/// When every symbol is linked into the program, stores their addresses and
/// opens nothing. Otherwise opens `soname` (RTLD_NOW | RTLD_LOCAL; its own dependencies come with it and
/// dlsym on its handle searches them too) and stores each symbol's address in
/// its slot. Returns NULL when every symbol resolved, else why not, allocated
/// for the life of the process: dlerror's text, or "<soname> has no <symbol>".
char *apphome_lazy_library_open(const char *soname, const apphome_lazy_symbol *symbols, size_t count);

/// Defines, in the file that uses it, `api` (a struct with a pointer for each
/// function FUNCTIONS lists) and `const char *loader(void)`: the first call
/// fills `api` from the functions linked in, else opens `soname` (once, under pthread_once); every call
/// returns NULL when every symbol resolved, else why not
/// (apphome_lazy_library_open's text).
#define APPHOME_LAZY_LIBRARY(FUNCTIONS, soname, loader) \
    FUNCTIONS(APPHOME_LAZY_WEAK) \
    static struct { FUNCTIONS(APPHOME_LAZY_FIELD) } api; \
    static pthread_once_t loader##_once = PTHREAD_ONCE_INIT; \
    static char *loader##_failure; /* NULL once everything resolved */ \
    static void loader##_open(void) { \
        static const apphome_lazy_symbol symbols[] = { FUNCTIONS(APPHOME_LAZY_LINKED) }; \
        loader##_failure = apphome_lazy_library_open(soname, symbols, APPHOME_LAZY_COUNT(symbols)); \
    } \
    const char *loader(void) { \
        pthread_once(&loader##_once, loader##_open); \
        return loader##_failure; \
    }

#endif
