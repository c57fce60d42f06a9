/* monocypher_driver.c - a deterministic, CPU-bound run of Monocypher
 * through its public API: each round generates messages of varying sizes
 * and keys from a seeded generator and, for each message, hashes it
 * (BLAKE2b plain and keyed, SHA-512), authenticates it (Poly1305),
 * encrypts it (ChaCha20 and XChaCha20-Poly1305, decrypted again and
 * decrypted with a corrupted tag), signs it and checks the signature
 * (EdDSA and Ed25519, also against a corrupted message), and makes two
 * parties agree on a key (X25519); then derives a key from a password
 * (Argon2, a small work area). It prints one line per round: the number
 * of messages and bytes, how many checks came out as expected, and a
 * checksum of every output.
 *
 * usage: monocypher_driver ROUNDS [MESSAGES]   ROUNDS 0: run until killed
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monocypher-ed25519.h"
#include "monocypher.h"

#define MAX_MSG 4096

static unsigned long long next_rand(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static void fill(unsigned long long *s, uint8_t *buf, size_t size)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = (uint8_t)next_rand(s);
}

/* FNV-1a over every output. */
static uint64_t fnv = 14695981039346656037ULL;

static void mix(const uint8_t *buf, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        fnv ^= buf[i];
        fnv *= 1099511628211ULL;
    }
}

static void mix_int(long v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)((unsigned long)v >> (8 * i));
    mix(b, sizeof b);
}

/* Counts of checks that came out as expected, and of checks made. */
static long good, checks;

static void expect(int ok)
{
    good += ok != 0;
    checks++;
}

static void one_message(unsigned long long *s, const uint8_t *msg, size_t size, uint8_t *cipher,
                        uint8_t *plain)
{
    uint8_t key[32], nonce[24], ad[40], hash[64], mac[16], mac2[16];
    uint8_t seed[32], sk[64], pk[32], sig[64];
    uint8_t x_sk1[32], x_sk2[32], x_pk1[32], x_pk2[32], shared1[32], shared2[32];
    size_t ad_size = next_rand(s) % sizeof ad;
    size_t hash_size = 1 + next_rand(s) % 64;
    size_t key_size = 1 + next_rand(s) % 32;

    fill(s, key, sizeof key);
    fill(s, nonce, sizeof nonce);
    fill(s, ad, ad_size);

    /* Hashes. */
    crypto_blake2b(hash, 64, msg, size);
    mix(hash, 64);
    crypto_blake2b_keyed(hash, hash_size, key, key_size, msg, size);
    mix(hash, hash_size);
    crypto_sha512(hash, msg, size);
    mix(hash, 64);

    /* One-time authenticator, computed at once and in pieces. */
    crypto_poly1305(mac, msg, size, key);
    mix(mac, 16);
    crypto_poly1305_ctx pctx;
    size_t cut = size ? next_rand(s) % size : 0;
    crypto_poly1305_init(&pctx, key);
    crypto_poly1305_update(&pctx, msg, cut);
    crypto_poly1305_update(&pctx, msg + cut, size - cut);
    crypto_poly1305_final(&pctx, mac2);
    expect(crypto_verify16(mac, mac2) == 0);

    /* Stream cipher: encrypting twice gives the message back. */
    uint64_t ctr = next_rand(s) % 1000;
    uint64_t end = crypto_chacha20_djb(cipher, msg, size, key, nonce, ctr);
    mix(cipher, size);
    mix_int((long)end);
    crypto_chacha20_djb(plain, cipher, size, key, nonce, ctr);
    expect(memcmp(plain, msg, size) == 0);

    /* Authenticated encryption: round trip, then a corrupted tag. */
    crypto_aead_lock(cipher, mac, key, nonce, ad, ad_size, msg, size);
    mix(cipher, size);
    mix(mac, 16);
    memset(plain, 0, size);
    expect(crypto_aead_unlock(plain, mac, key, nonce, ad, ad_size, cipher, size) == 0 &&
           memcmp(plain, msg, size) == 0);
    mac[next_rand(s) % 16] ^= (uint8_t)(1 + next_rand(s) % 255);
    expect(crypto_aead_unlock(plain, mac, key, nonce, ad, ad_size, cipher, size) == -1);

    /* Key exchange: both parties get the same secret. */
    fill(s, x_sk1, 32);
    fill(s, x_sk2, 32);
    crypto_x25519_public_key(x_pk1, x_sk1);
    crypto_x25519_public_key(x_pk2, x_sk2);
    crypto_x25519(shared1, x_sk1, x_pk2);
    crypto_x25519(shared2, x_sk2, x_pk1);
    mix(x_pk1, 32);
    mix(shared1, 32);
    expect(crypto_verify32(shared1, shared2) == 0);

    /* Signatures: EdDSA (BLAKE2b) and Ed25519 (SHA-512). The key pair
     * functions wipe their seed. */
    fill(s, seed, 32);
    crypto_eddsa_key_pair(sk, pk, seed);
    crypto_eddsa_sign(sig, sk, msg, size);
    mix(pk, 32);
    mix(sig, 64);
    expect(crypto_eddsa_check(sig, pk, msg, size) == 0);
    sig[next_rand(s) % 64] ^= 0x10;
    expect(crypto_eddsa_check(sig, pk, msg, size) == -1);

    fill(s, seed, 32);
    crypto_ed25519_key_pair(sk, pk, seed);
    crypto_ed25519_sign(sig, sk, msg, size);
    mix(pk, 32);
    mix(sig, 64);
    expect(crypto_ed25519_check(sig, pk, msg, size) == 0);
    if (size > 0) {
        memcpy(plain, msg, size);
        plain[next_rand(s) % size] ^= 0x01;
        expect(crypto_ed25519_check(sig, pk, plain, size) == -1);
    }
}

static void password_hash(unsigned long long *s, long round)
{
    uint8_t pass[32], salt[16], key[32], ad[12], hash[48];
    uint32_t nb_blocks = 8 + (uint32_t)(next_rand(s) % 9);
    void *work_area = malloc((size_t)nb_blocks * 1024);
    if (work_area == NULL) {
        printf("out of memory\n");
        exit(1);
    }
    fill(s, pass, sizeof pass);
    fill(s, salt, sizeof salt);
    fill(s, key, sizeof key);
    fill(s, ad, sizeof ad);

    crypto_argon2_config config;
    config.algorithm = (uint32_t)(round % 3); /* Argon2d, Argon2i, Argon2id */
    config.nb_blocks = nb_blocks;
    config.nb_passes = 1 + (uint32_t)(next_rand(s) % 3);
    config.nb_lanes = 1;
    crypto_argon2_inputs inputs;
    inputs.pass = pass;
    inputs.salt = salt;
    inputs.pass_size = sizeof pass;
    inputs.salt_size = sizeof salt;

    crypto_argon2(hash, sizeof hash, work_area, config, inputs, crypto_argon2_no_extras);
    mix(hash, sizeof hash);

    crypto_argon2_extras extras;
    extras.key = key;
    extras.ad = ad;
    extras.key_size = sizeof key;
    extras.ad_size = sizeof ad;
    crypto_argon2(hash, 32, work_area, config, inputs, extras);
    mix(hash, 32);
    free(work_area);
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 10;
    int messages = argc > 2 ? atoi(argv[2]) : 24;
    uint8_t *msg = malloc(MAX_MSG), *cipher = malloc(MAX_MSG), *plain = malloc(MAX_MSG);
    if (msg == NULL || cipher == NULL || plain == NULL) {
        printf("out of memory\n");
        return 1;
    }
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        unsigned long long s = (unsigned long long)r * 7919;
        long bytes = 0;
        fnv = 14695981039346656037ULL;
        good = checks = 0;
        for (int m = 0; m < messages; m++) {
            size_t size = next_rand(&s) % (m % 4 == 0 ? 64 : MAX_MSG);
            fill(&s, msg, size);
            one_message(&s, msg, size, cipher, plain);
            bytes += (long)size;
        }
        password_hash(&s, r);
        printf("round %ld: messages %d bytes %ld checks %ld/%ld sum %016llx\n", r, messages, bytes,
               good, checks, (unsigned long long)fnv);
        fflush(stdout);
    }
    free(msg);
    free(cipher);
    free(plain);
    return 0;
}
