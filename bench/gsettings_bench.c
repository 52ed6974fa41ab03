/* gsettings_bench: the in-process GSettings (dconf backend) peer of
 * `prefsbench`. Same output lines: <name> ops=N ops_per_s=X p50_us=X p99_us=X.
 *
 *   gsettings_bench latency N     N get_int of one key, then N set_int + g_settings_sync
 *   gsettings_bench storm C N     C threads, each with its own GSettings, N set+sync each
 *
 * Schema org.apphome.prefsbench (made by bench/prefsd_bench.sh): int keys
 * counter and k0..k15.
 */
#include <gio/gio.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *name, double *lat, int n, double elapsed) {
    qsort(lat, n, sizeof *lat, cmp);
    int p50 = n ? (int)(lat[n / 2] * 1e6) : 0, p99 = n ? (int)(lat[(int)(n * 0.99) < n ? (int)(n * 0.99) : n - 1] * 1e6) : 0;
    printf("%s ops=%d ops_per_s=%d p50_us=%d p99_us=%d\n", name, n, (int)(n / elapsed), p50, p99);
}

typedef struct { int id, n; double *lat; } worker_t;

static gpointer storm_worker(gpointer data) {
    worker_t *w = data;
    GSettings *s = g_settings_new("org.apphome.prefsbench");
    char key[8];
    snprintf(key, sizeof key, "k%d", w->id % 16);
    for (int i = 0; i < w->n; i++) {
        double t = now();
        g_settings_set_int(s, key, i + 1);
        g_settings_sync();
        w->lat[i] = now() - t;
    }
    g_object_unref(s);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "latency") == 0) {
        int n = atoi(argv[2]);
        double *lat = calloc(n, sizeof *lat);
        GSettings *s = g_settings_new("org.apphome.prefsbench");
        g_settings_set_int(s, "counter", 1);
        g_settings_sync();
        long sum = 0;
        double start = now();
        for (int i = 0; i < n; i++) {
            double t = now();
            sum += g_settings_get_int(s, "counter");
            lat[i] = now() - t;
        }
        report("gsettings-read", lat, n, now() - start);
        start = now();
        for (int i = 0; i < n; i++) {
            double t = now();
            g_settings_set_int(s, "counter", i + 2);
            g_settings_sync();
            lat[i] = now() - t;
        }
        report("gsettings-write", lat, n, now() - start);
        if (g_settings_get_int(s, "counter") != n + 1) { fprintf(stderr, "gsettings_bench: last write not read back\n"); return 1; }
        g_object_unref(s);
        return sum > 0 ? 0 : 1;
    }
    if (argc >= 4 && strcmp(argv[1], "storm") == 0) {
        int c = atoi(argv[2]), n = atoi(argv[3]);
        worker_t *w = calloc(c, sizeof *w);
        GThread **threads = calloc(c, sizeof *threads);
        double *all = calloc((size_t)c * n, sizeof *all);
        double start = now();
        for (int i = 0; i < c; i++) {
            w[i] = (worker_t){ i, n, all + (size_t)i * n };
            threads[i] = g_thread_new("storm", storm_worker, &w[i]);
        }
        for (int i = 0; i < c; i++) g_thread_join(threads[i]);
        char name[32];
        snprintf(name, sizeof name, "gsettings-storm-%d", c);
        report(name, all, c * n, now() - start);
        return 0;
    }
    fprintf(stderr, "usage: gsettings_bench latency N | storm C N\n");
    return 2;
}
