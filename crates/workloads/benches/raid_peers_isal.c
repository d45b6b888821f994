/* ISA-L's pq_gen (Debian libisal-dev) driven for crates/workloads/benches/raid_peers.rs.
 * Each of THREADS threads owns one stripe of DATA data blocks + P + Q of CHUNK bytes (64-byte
 * aligned, filled in the thread with the xorshift64* bytes of hwsurvey's
 * raid6::fill_pseudo_random, seed thread*1000 + block + 1), and calls pq_gen on it until
 * SECONDS have passed; the threads start together.
 * Usage: raid_peers_isal DATA CHUNK THREADS SECONDS
 *   -> "bytes_per_s X" (data bytes, all threads) and "pq_fnv1a H" (FNV-1a 64 of thread 0's
 *      P then Q, for the benchmark's check against hwsurvey's P and Q). */
#include <isa-l/raid.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int data, threads;
static size_t chunk;
static double seconds;
static pthread_barrier_t start;
static uint64_t calls[1024], hash0;
static double elapsed[1024];

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void fill(unsigned char *b, size_t len, uint64_t seed) {
    uint64_t s = seed | 1;
    for (size_t i = 0; i < len; i += 8) {
        s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
        uint64_t v = s * 0x2545f4914f6cdd1dULL;
        memcpy(b + i, &v, len - i < 8 ? len - i : 8); /* little-endian, as to_le_bytes */
    }
}

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg;
    void *blocks[258];
    for (int i = 0; i < data + 2; i++) {
        blocks[i] = aligned_alloc(64, chunk);
        if (!blocks[i]) exit(1);
        fill(blocks[i], chunk, (uint64_t)t * 1000 + i + 1);
    }
    if (pq_gen(data + 2, (int)chunk, blocks) != 0) exit(3);
    if (t == 0) {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (int i = data; i < data + 2; i++)
            for (size_t k = 0; k < chunk; k++) h = (h ^ ((unsigned char *)blocks[i])[k]) * 0x100000001b3ULL;
        hash0 = h;
    }
    pthread_barrier_wait(&start);
    double t0 = now(), t1;
    uint64_t n = 0;
    do {
        for (int r = 0; r < 8; r++) pq_gen(data + 2, (int)chunk, blocks);
        n += 8;
    } while ((t1 = now()) - t0 < seconds);
    calls[t] = n;
    elapsed[t] = t1 - t0;
    for (int i = 0; i < data + 2; i++) free(blocks[i]);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 5) return 2;
    data = atoi(argv[1]);
    chunk = strtoull(argv[2], 0, 10);
    threads = atoi(argv[3]);
    seconds = atof(argv[4]);
    if (data < 2 || data > 256 || chunk == 0 || chunk % 64 || threads < 1 || threads > 1024) return 2;
    pthread_t th[1024];
    pthread_barrier_init(&start, 0, threads);
    for (int t = 0; t < threads; t++) pthread_create(&th[t], 0, worker, (void *)(intptr_t)t);
    double bytes = 0, longest = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(th[t], 0);
        bytes += (double)calls[t] * data * chunk;
        if (elapsed[t] > longest) longest = elapsed[t];
    }
    printf("bytes_per_s %.0f\npq_fnv1a %016llx\n", bytes / longest, (unsigned long long)hash0);
    return 0;
}
