// libgcrypt (the library libsecret itself uses), imported only by the
// SecretServiceProvider target: the `dh-ietf1024-sha256-aes128-cbc-pkcs7`
// session of the Secret Service API (spec 0.2, "Transfer of Secrets").
// Swift cannot call gcry_control (variadic), so the whole exchange is here.
#include <gcrypt.h>
#include <string.h>

/// The 1024-bit MODP group of RFC 2409 ("Second Oakley Group"), generator 2.
#define APPHOME_MODP1024_HEX \
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74" \
    "020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F1437" \
    "4FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED" \
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF"

/// Initializes libgcrypt once (secure memory for keys). Returns 1 on success.
static inline int apphome_gcrypt_init(void) {
    if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) return 1;
    if (gcry_check_version("1.8.0") == NULL) return 0;
    gcry_control(GCRYCTL_SUSPEND_SECMEM_WARN);
    gcry_control(GCRYCTL_INIT_SECMEM, 65536, 0);
    gcry_control(GCRYCTL_RESUME_SECMEM_WARN);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    return 1;
}

/// HMAC-SHA256 of `data` under `key` into `out` (32 bytes). Returns 0 on success.
static inline int apphome_hmac_sha256(const unsigned char *key, size_t key_len, const unsigned char *data, size_t data_len,
                                      unsigned char *out) {
    gcry_md_hd_t h;
    if (gcry_md_open(&h, GCRY_MD_SHA256, GCRY_MD_FLAG_HMAC | GCRY_MD_FLAG_SECURE) != 0) return -1;
    if (gcry_md_setkey(h, key, key_len) != 0) { gcry_md_close(h); return -1; }
    gcry_md_write(h, data, data_len);
    memcpy(out, gcry_md_read(h, GCRY_MD_SHA256), 32);
    gcry_md_close(h);
    return 0;
}

/// The server side of the exchange: a fresh private key, our public key
/// (big-endian, into `our_public`, 128 bytes; its length in `our_length`),
/// the shared secret with the client's `peer` key, and from it the 16-byte
/// AES key by HKDF-SHA256 (no salt, no info) into `aes_key`.
/// Returns 0, or -1 for a peer key outside 2..p-2, -2 on a library failure.
static inline int apphome_dh_exchange(const unsigned char *peer, size_t peer_len, unsigned char *our_public,
                                      size_t *our_length, unsigned char *aes_key) {
    gcry_mpi_t p = NULL, g = NULL, y = NULL, x = NULL, pub = NULL, k = NULL, bound = NULL;
    int rc = -2;
    unsigned char *secret = NULL;
    size_t n_secret = 0;
    if (peer_len == 0 || peer_len > 256) return -1;
    if (gcry_mpi_scan(&p, GCRYMPI_FMT_HEX, APPHOME_MODP1024_HEX, 0, NULL) != 0) goto done;
    g = gcry_mpi_set_ui(NULL, 2);
    if (gcry_mpi_scan(&y, GCRYMPI_FMT_USG, peer, peer_len, NULL) != 0) { rc = -1; goto done; }
    bound = gcry_mpi_new(1024);
    gcry_mpi_sub_ui(bound, p, 1);
    if (gcry_mpi_cmp_ui(y, 1) <= 0 || gcry_mpi_cmp(y, bound) >= 0) { rc = -1; goto done; }
    // A 256-bit private exponent, as OpenSSL and most DH implementations use
    // for a safe-prime group: the group itself gives about 80 bits of
    // security, and finding an exponent of 2n bits takes about 2^n steps
    // (NIST SP 800-56A asks for at least twice the group's strength; RFC 3526,
    // section 8). Each modular exponentiation then costs a quarter of one
    // with a full-size exponent: every libsecret client opens a session.
    x = gcry_mpi_snew(256);
    do { gcry_mpi_randomize(x, 256, GCRY_STRONG_RANDOM); } while (gcry_mpi_cmp_ui(x, 1) <= 0);
    pub = gcry_mpi_new(1024);
    gcry_mpi_powm(pub, g, x, p);
    if (gcry_mpi_print(GCRYMPI_FMT_USG, our_public, 128, our_length, pub) != 0) goto done;
    k = gcry_mpi_snew(1024);
    gcry_mpi_powm(k, y, x, p);
    // The shared secret as libsecret (0.20 and later) and secretstorage write
    // it: big-endian, padded with leading zeros to the prime's 128 bytes.
    secret = gcry_malloc_secure(128);
    if (secret == NULL) goto done;
    n_secret = 128;
    {
        size_t n = 0;
        if (gcry_mpi_print(GCRYMPI_FMT_USG, secret, 128, &n, k) != 0 || n > 128) goto done;
        if (n < 128) { memmove(secret + (128 - n), secret, n); memset(secret, 0, 128 - n); }
    }
    {
        unsigned char zeros[32] = {0}, prk[32], t1[32], one = 1;
        if (apphome_hmac_sha256(zeros, sizeof zeros, secret, n_secret, prk) != 0) goto wipe;
        if (apphome_hmac_sha256(prk, sizeof prk, &one, 1, t1) != 0) goto wipe;
        memcpy(aes_key, t1, 16);
        rc = 0;
    wipe:
        memset(prk, 0, sizeof prk);
        memset(t1, 0, sizeof t1);
    }
done:
    if (secret) { memset(secret, 0, n_secret); gcry_free(secret); }
    gcry_mpi_release(p); gcry_mpi_release(g); gcry_mpi_release(y); gcry_mpi_release(x);
    gcry_mpi_release(pub); gcry_mpi_release(k); gcry_mpi_release(bound);
    return rc;
}

/// AES-128-CBC of `in` with PKCS#7 padding under `key` and `iv` (16 bytes
/// each). `out` holds `in_len + 16` bytes; returns the length written or -1.
static inline long apphome_aes_encrypt(const unsigned char *key, const unsigned char *iv, const unsigned char *in, size_t in_len,
                                       unsigned char *out) {
    gcry_cipher_hd_t h;
    size_t pad = 16 - in_len % 16, total = in_len + pad;
    if (in_len > 0) memcpy(out, in, in_len);
    memset(out + in_len, (int)pad, pad);
    if (gcry_cipher_open(&h, GCRY_CIPHER_AES128, GCRY_CIPHER_MODE_CBC, GCRY_CIPHER_SECURE) != 0) return -1;
    long rc = -1;
    if (gcry_cipher_setkey(h, key, 16) == 0 && gcry_cipher_setiv(h, iv, 16) == 0
        && gcry_cipher_encrypt(h, out, total, NULL, 0) == 0) rc = (long)total;
    gcry_cipher_close(h);
    return rc;
}

/// The inverse: `out` holds `in_len` bytes; returns the plaintext's length,
/// or -1 (a length not a multiple of 16, or bad padding).
static inline long apphome_aes_decrypt(const unsigned char *key, const unsigned char *iv, const unsigned char *in, size_t in_len,
                                       unsigned char *out) {
    gcry_cipher_hd_t h;
    if (in_len == 0 || in_len % 16 != 0) return -1;
    if (gcry_cipher_open(&h, GCRY_CIPHER_AES128, GCRY_CIPHER_MODE_CBC, GCRY_CIPHER_SECURE) != 0) return -1;
    long rc = -1;
    if (gcry_cipher_setkey(h, key, 16) == 0 && gcry_cipher_setiv(h, iv, 16) == 0
        && gcry_cipher_decrypt(h, out, in_len, in, in_len) == 0) {
        unsigned char pad = out[in_len - 1];
        int ok = pad >= 1 && pad <= 16;
        for (size_t i = 0; ok && i < pad; i++) ok = out[in_len - 1 - i] == pad;
        if (ok) rc = (long)(in_len - pad);
    }
    gcry_cipher_close(h);
    return rc;
}

/// `n` random bytes (an IV).
static inline void apphome_random_bytes(unsigned char *out, size_t n) { gcry_randomize(out, n, GCRY_STRONG_RANDOM); }
