/* The in-process peer of keychainbench: N look-ups of one password with
 * libsecret's secret_password_lookupv_sync (what secret-tool lookup does),
 * in one process.   secret_lookup_bench <attr> <value> <attr> <value> <N> */
#include <libsecret/secret.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
    if (argc != 6) { fprintf(stderr, "usage: secret_lookup_bench a1 v1 a2 v2 N\n"); return 2; }
    int n = atoi(argv[5]);
    GHashTable *attrs = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(attrs, argv[1], argv[2]);
    g_hash_table_insert(attrs, argv[3], argv[4]);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    size_t bytes = 0;
    for (int i = 0; i < n; i++) {
        GError *error = NULL;
        gchar *pw = secret_password_lookupv_sync(NULL, attrs, NULL, &error);
        if (!pw) { fprintf(stderr, "lookup failed: %s\n", error ? error->message : "not found"); return 1; }
        bytes += strlen(pw);
        secret_password_free(pw);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double total = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    printf("libsecret: %d look-ups in %.3f s, %.1f µs per look-up (%zu secret bytes)\n", n, total, total / n * 1e6, bytes);
    return 0;
}
