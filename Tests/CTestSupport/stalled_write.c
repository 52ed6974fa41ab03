// A pwrite stopped in the middle of its copy, for tests of readers that
// must not take a half-written file for a whole one (see the header).
#define _GNU_SOURCE
#include "CTestSupport.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct apphome_stalled_write {
    int fd;
    int uffd;
    unsigned char *region;      // the write's source: present up to stall_at, missing after
    unsigned char *rest;        // the bytes from stall_at on, handed over on release
    size_t length, stall_at;
    long result;
    int delay_ms;
    pthread_t writer, releaser;
    int releasing;
};

static int new_userfaultfd(void) {
    return (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
}

int apphome_test_userfaultfd_available(void) {
    int uffd = new_userfaultfd();
    if (uffd < 0) return 0;
    struct uffdio_api api = { .api = UFFD_API, .features = 0 };
    int ok = ioctl(uffd, UFFDIO_API, &api) == 0;
    close(uffd);
    return ok;
}

static void *run_write(void *arg) {
    apphome_stalled_write *w = arg;
    size_t done = 0;
    while (done < w->length) {
        ssize_t n = pwrite(w->fd, w->region + done, w->length - done, (off_t)done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { w->result = -1; return NULL; }
        done += (size_t)n;
    }
    w->result = (long)done;
    return NULL;
}

apphome_stalled_write *apphome_test_stalled_write_begin(int fd, const unsigned char *data, size_t length,
                                                        size_t stall_at, int *error) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (stall_at == 0 || stall_at >= length || stall_at % page || length % page) { *error = EINVAL; return NULL; }
    apphome_stalled_write *w = calloc(1, sizeof *w);
    if (!w) { *error = ENOMEM; return NULL; }
    w->fd = fd;
    w->length = length;
    w->stall_at = stall_at;
    w->uffd = -1;
    w->region = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    w->rest = malloc(length - stall_at);
    if (w->region == MAP_FAILED || !w->rest) { *error = ENOMEM; goto fail; }
    // Small pages only: a huge page would bring the missing part in with the first.
    madvise(w->region, length, MADV_NOHUGEPAGE);
    memcpy(w->rest, data + stall_at, length - stall_at);
    w->uffd = new_userfaultfd();
    if (w->uffd < 0) { *error = errno; goto fail; }
    struct uffdio_api api = { .api = UFFD_API, .features = 0 };
    if (ioctl(w->uffd, UFFDIO_API, &api) != 0) { *error = errno; goto fail; }
    struct uffdio_register reg = {
        .range = { .start = (unsigned long)(w->region + stall_at), .len = length - stall_at },
        .mode = UFFDIO_REGISTER_MODE_MISSING,
    };
    if (ioctl(w->uffd, UFFDIO_REGISTER, &reg) != 0) { *error = errno; goto fail; }
    memcpy(w->region, data, stall_at);   // present: the write copies these first
    if ((*error = pthread_create(&w->writer, NULL, run_write, w)) != 0) goto fail;
    return w;
fail:
    if (w->uffd >= 0) close(w->uffd);
    if (w->region && w->region != MAP_FAILED) munmap(w->region, length);
    free(w->rest);
    free(w);
    return NULL;
}

int apphome_test_stalled_write_wait(apphome_stalled_write *w, int timeout_ms) {
    struct pollfd p = { .fd = w->uffd, .events = POLLIN };
    int n;
    do { n = poll(&p, 1, timeout_ms); } while (n < 0 && errno == EINTR);
    if (n < 0) return -1;
    return n > 0 && (p.revents & POLLIN) ? 1 : 0;
}

static void *run_release(void *arg) {
    apphome_stalled_write *w = arg;
    struct timespec delay = { .tv_sec = w->delay_ms / 1000, .tv_nsec = (long)(w->delay_ms % 1000) * 1000000L };
    while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {}
    // Every missing page at once: the write then runs to its end.
    struct uffdio_copy copy = {
        .dst = (unsigned long)(w->region + w->stall_at),
        .src = (unsigned long)w->rest,
        .len = w->length - w->stall_at,
        .mode = 0,
    };
    while (ioctl(w->uffd, UFFDIO_COPY, &copy) != 0 && errno == EAGAIN) {
        size_t done = copy.copy > 0 ? (size_t)copy.copy : 0;
        copy.dst += done; copy.src += done; copy.len -= done; copy.copy = 0;
    }
    return NULL;
}

int apphome_test_stalled_write_release(apphome_stalled_write *w, int delay_ms) {
    w->delay_ms = delay_ms;
    int e = pthread_create(&w->releaser, NULL, run_release, w);
    if (e == 0) w->releasing = 1;
    return e;
}

long apphome_test_stalled_write_finish(apphome_stalled_write *w) {
    if (!w->releasing) {
        w->delay_ms = 0;
        run_release(w);
    } else {
        pthread_join(w->releaser, NULL);
    }
    pthread_join(w->writer, NULL);
    long result = w->result;
    close(w->uffd);
    munmap(w->region, w->length);
    free(w->rest);
    free(w);
    return result;
}
