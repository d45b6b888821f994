/* Reference pointer chase for crates/workloads/benches/peers.rs: an independent few lines of C.
 * One random cyclic permutation (Sattolo) over the 64-byte lines of a SIZE-byte buffer,
 * each line's first word pointing at the next line; time STEPS dependent loads in SAMPLES
 * samples of STEPS / SAMPLES loads each and print the median sample's ns per load: the same
 * statistic as hwsurvey's figure (the median of its samples), so that a host's stalls, which
 * only ever lengthen a sample, weigh the same on both sides of the ratio.
 * Usage: peers_chase SIZE_BYTES STEPS [SAMPLES, default 1]  ->  prints "ns_per_load <value>". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t s = 88172645463325252ULL; /* xorshift64 (Marsaglia 2003) */
static uint64_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) return 2;
    size_t size = strtoull(argv[1], 0, 10), steps = strtoull(argv[2], 0, 10);
    size_t samples = argc == 4 ? strtoull(argv[3], 0, 10) : 1, n = size / 64, i, k;
    if (samples < 1 || samples > 1000 || steps / samples < 1) return 2;
    size_t per = steps / samples;
    double ns[1000];
    char *buf = aligned_alloc(4096, n * 64);
    size_t *perm = malloc(n * sizeof *perm);
    if (!buf || !perm || n < 2) return 1;
    for (i = 0; i < n; i++) perm[i] = i;
    for (i = n - 1; i > 0; i--) { /* Sattolo: j < i */
        size_t j = rnd() % i, t = perm[i];
        perm[i] = perm[j]; perm[j] = t;
    }
    for (i = 0; i < n; i++) *(void **)(buf + i * 64) = buf + perm[i] * 64;
    free(perm);
    void **p = (void **)buf;
    for (i = 0; i < n; i++) p = *p; /* warm-up: one full cycle */
    for (k = 0; k < samples; k++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (i = 0; i < per; i++) p = *p;
        clock_gettime(CLOCK_MONOTONIC, &b);
        ns[k] = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / per;
    }
    qsort(ns, samples, sizeof ns[0], cmp);
    /* the median: the middle sample, or the mean of the two middle ones */
    double med = samples % 2 ? ns[samples / 2] : (ns[samples / 2 - 1] + ns[samples / 2]) / 2;
    printf("ns_per_load %.3f\n", med);
    return p == 0; /* keeps the chase live */
}
