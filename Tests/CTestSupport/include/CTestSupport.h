#ifndef APPHOME_CTESTSUPPORT_H
#define APPHOME_CTESTSUPPORT_H

#include <stddef.h>

/// A `pwrite` that stops in the middle of its copy, the way a write sleeps
/// when the kernel throttles dirty pages or waits for a page of its source:
/// the file's times are already stamped, its inode lock is held, part of
/// the new bytes are in the file and the rest are not.
///
/// The source's pages from `stall_at` on are left missing under a
/// userfaultfd; the write sleeps on the first of them until
/// `apphome_test_stalled_write_release` hands them over.
typedef struct apphome_stalled_write apphome_stalled_write;

/// Starts `pwrite(fd, data, length, 0)` on a new thread. `stall_at` and
/// `length` are multiples of the page size, `stall_at < length`. Returns
/// NULL with `*error` set (errno) when the system does not allow it
/// (userfaultfd needs CAP_SYS_PTRACE or vm.unprivileged_userfaultfd).
apphome_stalled_write *apphome_test_stalled_write_begin(int fd, const unsigned char *data, size_t length,
                                                        size_t stall_at, int *error);

/// Waits up to `timeout_ms` for the write to reach the missing pages.
/// 1 when it is stopped there, 0 on timeout, -1 on an error.
int apphome_test_stalled_write_wait(apphome_stalled_write *write, int timeout_ms);

/// After `delay_ms`, on another thread, hands the missing pages over so
/// the write ends. Returns at once.
int apphome_test_stalled_write_release(apphome_stalled_write *write, int delay_ms);

/// Waits for the write to end; frees everything. The write's result
/// (bytes written, or -1).
long apphome_test_stalled_write_finish(apphome_stalled_write *write);

/// 1 when this process may create a userfaultfd that handles the kernel's
/// own faults (what `apphome_test_stalled_write_begin` needs).
int apphome_test_userfaultfd_available(void);

#endif
