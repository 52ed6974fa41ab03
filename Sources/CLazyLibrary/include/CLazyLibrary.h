// A shared library opened on the first call that needs it, never linked: the
// one dlopen-and-resolve of CSQLite, CSeccomp and CSecret.
//
// Each of them lists its functions once, as X(return type, name, (arguments)),
// and builds from that list a struct of pointers and its table of symbols:
//
//   static struct { FUNCTIONS(APPHOME_LAZY_FIELD) } api;
//   static const apphome_lazy_symbol symbols[] = { FUNCTIONS(APPHOME_LAZY_SYMBOL) };
//   failure = apphome_lazy_library_open("libfoo.so.1", symbols, APPHOME_LAZY_COUNT(symbols));
#ifndef APPHOME_CLAZYLIBRARY_H
#define APPHOME_CLAZYLIBRARY_H

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

#endif
