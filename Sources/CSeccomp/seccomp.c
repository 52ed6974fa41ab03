// libseccomp, linked in or through dlopen: see include/CSeccomp.h.
#include "CSeccomp.h"
#include "CLazyLibrary.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define APPHOME_SECCOMP_FUNCTIONS(X) \
    X(scmp_filter_ctx, seccomp_init, (uint32_t)) \
    X(void, seccomp_release, (scmp_filter_ctx)) \
    X(int, seccomp_syscall_resolve_name, (const char *)) \
    X(int, seccomp_rule_add_array, (scmp_filter_ctx, uint32_t, int, unsigned int, const struct scmp_arg_cmp *)) \
    X(int, seccomp_export_bpf, (const scmp_filter_ctx, int))

// Linked in by the static `apphome` (libseccomp.a), else opened.
APPHOME_LAZY_LIBRARY(APPHOME_SECCOMP_FUNCTIONS, "libseccomp.so.2", apphome_seccomp_load)

#define LOADED (apphome_seccomp_load() == NULL)

scmp_filter_ctx apphome_seccomp_init(uint32_t default_action) { return LOADED ? api.seccomp_init(default_action) : NULL; }
void apphome_seccomp_release(scmp_filter_ctx ctx) { if (LOADED) api.seccomp_release(ctx); }
int apphome_seccomp_syscall_resolve_name(const char *name) { return LOADED ? api.seccomp_syscall_resolve_name(name) : __NR_SCMP_ERROR; }
int apphome_seccomp_rule_add_array(scmp_filter_ctx ctx, uint32_t action, int syscall, unsigned int count, const struct scmp_arg_cmp *conditions) {
    return LOADED ? api.seccomp_rule_add_array(ctx, action, syscall, count, conditions) : -ELIBACC;
}
int apphome_seccomp_export_bpf(const scmp_filter_ctx ctx, int fd) { return LOADED ? api.seccomp_export_bpf(ctx, fd) : -ELIBACC; }
