/*
 * gen_checkpoint - writes a checkpoint-like directory for the demo and benchmarks: float32
 * weights N(0, 0.02), the same weights as bf16, Adam moments (exp_avg ~ N(0, 1e-3), exp_avg_sq ~
 * (N(0,1) * 1e-3)^2), a small JSON training state, and a shard tree of many small files.
 * Deterministic (xoshiro256** with a fixed seed), so runs are comparable.
 *
 * usage: gen_checkpoint DIR [TOTAL_MB] [SHARD_FILES]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t s[4] = {0x9E3779B97F4A7C15ull, 0xBF58476D1CE4E5B9ull, 0x94D049BB133111EBull,
                        0x2545F4914F6CDD1Dull};

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t next(void)
{
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

static double uniform(void)
{
    return ((double)(next() >> 11) + 0.5) / 9007199254740992.0;
}

static float normal(void)
{
    return (float)(sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform()));
}

enum kind { F32_WEIGHTS, BF16_WEIGHTS, ADAM_M, ADAM_V };

static int write_tensor(const char *path, enum kind k, uint64_t bytes)
{
    FILE *f = fopen(path, "wb");
    static float buf[1 << 16];
    uint16_t *h = (uint16_t *)buf;

    if (!f)
        return -1;
    while (bytes) {
        size_t i, n = sizeof(buf);

        for (i = 0; i < n / sizeof(float); i++) {
            float x = normal();

            buf[i] = k == ADAM_M ? x * 1e-3f : k == ADAM_V ? (x * 1e-3f) * (x * 1e-3f) : x * 0.02f;
        }
        if (k == BF16_WEIGHTS) {
            for (i = 0; i < n / sizeof(float); i++) {
                uint32_t u;

                memcpy(&u, &buf[i], 4);
                h[i] = (uint16_t)(u >> 16);
            }
            n /= 2;
        }
        if (n > bytes)
            n = (size_t)bytes;
        if (fwrite(buf, 1, n, f) != n) {
            fclose(f);
            return -1;
        }
        bytes -= n;
    }
    return fclose(f);
}

static void mk(const char *p)
{
    if (mkdir(p, 0755) && errno != EEXIST) {
        perror(p);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    char p[4096];
    uint64_t mb = argc > 2 ? strtoull(argv[2], NULL, 10) : 300, total = mb << 20;
    unsigned shards = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 200, i;
    FILE *f;

    if (argc < 2) {
        fprintf(stderr, "usage: gen_checkpoint DIR [TOTAL_MB] [SHARD_FILES]\n");
        return 2;
    }
    mk(argv[1]);
    snprintf(p, sizeof(p), "%s/optimizer", argv[1]);
    mk(p);
    snprintf(p, sizeof(p), "%s/shards", argv[1]);
    mk(p);
    struct {
        const char *name;
        enum kind k;
        uint64_t bytes;
    } files[] = {
        {"model.f32.bin", F32_WEIGHTS, total / 100 * 45},
        {"model.bf16.bin", BF16_WEIGHTS, total / 100 * 15},
        {"optimizer/exp_avg.f32.bin", ADAM_M, total / 100 * 15},
        {"optimizer/exp_avg_sq.f32.bin", ADAM_V, total / 100 * 15},
    };
    for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(p, sizeof(p), "%s/%s", argv[1], files[i].name);
        if (write_tensor(p, files[i].k, files[i].bytes & ~(uint64_t)3)) {
            perror(p);
            return 1;
        }
    }
    for (i = 0; i < shards; i++) {
        uint64_t b = shards ? (total / 10) / shards : 0;

        snprintf(p, sizeof(p), "%s/shards/layer_%03u", argv[1], i / 50);
        mk(p);
        snprintf(p, sizeof(p), "%s/shards/layer_%03u/shard-%05u.f32", argv[1], i / 50, i);
        if (write_tensor(p, F32_WEIGHTS, b & ~(uint64_t)3)) {
            perror(p);
            return 1;
        }
    }
    snprintf(p, sizeof(p), "%s/trainer_state.json", argv[1]);
    f = fopen(p, "w");
    if (!f) {
        perror(p);
        return 1;
    }
    fprintf(f,
            "{\"epoch\": 3, \"global_step\": 1200, \"learning_rate\": 0.0003, "
            "\"rng_state\": [%llu, %llu, %llu, %llu], \"best_metric\": 0.8125}\n",
            (unsigned long long)s[0], (unsigned long long)s[1], (unsigned long long)s[2],
            (unsigned long long)s[3]);
    return fclose(f) ? 1 : 0;
}
