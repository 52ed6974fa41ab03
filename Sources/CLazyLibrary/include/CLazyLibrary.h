// A shared library opened on the first call that needs it, never linked: the
// one dlopen-and-resolve of CSQLite, CSeccomp and CSecret.
//
// Each of them lists its functions once, as X(return type, name, (arguments)),
// and builds from that list a struct of pointers and its table of symbols:
//
//   static struct { FUNCTIONS(APPHOME_LAZY_FIELD) } api;
//   static const apphome_lazy_symbol symbols[] = { FUNCTIONS(APPHOME_LAZY_SYMBOL) };
//   failure = apphome_lazy_library_open("libfoo.so.1", symbols, APPHOME_LAZY_COUNT(symbols));
//
// A program may link the library's archive instead (the static `apphome` links
// libseccomp.a: its sandbox's filter is on the way to every app's start). Such a
// library's functions are declared weak, FUNCTIONS(APPHOME_LAZY_WEAK), and listed
// with APPHOME_LAZY_LINKED: when every one of them is linked in, their addresses
// fill the table and nothing is opened; in a program that does not link them they
// are NULL, and the library is opened as above.
#ifndef APPHOME_CLAZYLIBRARY_H
#define APPHOME_CLAZYLIBRARY_H

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

#endif
