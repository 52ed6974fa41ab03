// libseccomp, imported only by Containers (the sandbox's filter). The static
// `apphome` links its archive (libseccomp.a: nothing to load or bind at start);
// every other program loads it on the first call (dlopen), never linked: only
// `apphome run` and `launch` build a filter, while bubblewrap makes the sandbox. The
// types and constants are libseccomp's own header's; the calls are these,
// `apphome_seccomp_…` for `seccomp_…`.
#ifndef APPHOME_CSECCOMP_H
#define APPHOME_CSECCOMP_H
#include <seccomp.h>

/// Loads libseccomp (once): NULL when it is loaded, else why it is not.
/// The calls below load it first; when it cannot be loaded, init gives
/// NULL and the others -ELIBACC.
const char *apphome_seccomp_load(void);

scmp_filter_ctx apphome_seccomp_init(uint32_t default_action);
void apphome_seccomp_release(scmp_filter_ctx ctx);
int apphome_seccomp_syscall_resolve_name(const char *name);
int apphome_seccomp_rule_add_array(scmp_filter_ctx ctx, uint32_t action, int syscall, unsigned int count, const struct scmp_arg_cmp *conditions);
int apphome_seccomp_export_bpf(const scmp_filter_ctx ctx, int fd);
#endif
