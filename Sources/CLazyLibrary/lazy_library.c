// See include/CLazyLibrary.h.
#define _GNU_SOURCE
#include "CLazyLibrary.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/// "<soname> <what>[ <symbol>]"; never NULL, even when memory is short.
static char *reason(const char *soname, const char *what, const char *symbol) {
    char *text = NULL;
    if (asprintf(&text, "%s %s%s%s", soname, what, symbol ? " " : "", symbol ? symbol : "") < 0) {
        return (char *)"a library could not be loaded";
    }
    return text;
}

char *apphome_lazy_library_open(const char *soname, const apphome_lazy_symbol *symbols, size_t count) {
    size_t linked = 0;
    while (linked < count && symbols[linked].linked != NULL) linked++;
    if (linked == count) {
        for (size_t i = 0; i < count; i++) *symbols[i].slot = symbols[i].linked;
        return NULL;
    }
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        char *copy = why ? strdup(why) : NULL;
        return copy ? copy : reason(soname, "cannot be loaded", NULL);
    }
    for (size_t i = 0; i < count; i++) {
        *symbols[i].slot = dlsym(handle, symbols[i].name);
        if (*symbols[i].slot == NULL) return reason(soname, "has no", symbols[i].name);
    }
    return NULL;
}
