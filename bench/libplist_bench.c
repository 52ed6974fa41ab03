/*
 * Times libplist's binary codec on the same file plistbench measures.
 *
 *   gcc -O2 bench/libplist_bench.c $(pkg-config --cflags --libs libplist-2.0) -o /tmp/libplist_bench
 *   /tmp/libplist_bench <file.plist> [iterations]
 *
 * decode is plist_from_bin of the file's bytes; encode is plist_to_bin of
 * the decoded tree (no file I/O in either). Output matches plistbench.
 */
#include <plist/plist.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, size_t size, double *times, int n) {
    qsort(times, n, sizeof times[0], compare);
    printf("%s %.1f MB: best %.1f ms, median %.1f ms\n", what, size / 1048576.0, times[0], times[n / 2]);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <file.plist> [iterations]\n", argv[0]);
        return 2;
    }
    int iterations = argc > 2 ? atoi(argv[2]) : 10;
    if (iterations < 1) iterations = 1;
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc(size);
    if (!data || fread(data, 1, size, f) != (size_t)size) { fprintf(stderr, "short read\n"); return 1; }
    fclose(f);

    double *times = calloc(iterations, sizeof *times);
    plist_t root = NULL;
    for (int i = 0; i < iterations; i++) {
        if (root) plist_free(root);
        root = NULL;
        double t0 = now_ms();
        plist_from_bin(data, (uint32_t)size, &root);
        times[i] = now_ms() - t0;
        if (!root) { fprintf(stderr, "plist_from_bin failed\n"); return 1; }
    }
    report("libplist decode", size, times, iterations);

    uint32_t out_size = 0;
    for (int i = 0; i < iterations; i++) {
        char *out = NULL;
        double t0 = now_ms();
        plist_to_bin(root, &out, &out_size);
        times[i] = now_ms() - t0;
        if (!out) { fprintf(stderr, "plist_to_bin failed\n"); return 1; }
        free(out);
    }
    report("libplist encode", out_size, times, iterations);
    plist_free(root);
    free(times);
    free(data);
    return 0;
}
