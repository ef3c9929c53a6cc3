/*
 * gen_checkpoint - writes checkpoint-like data for the demo, the tests and the benchmarks.
 * Deterministic (xoshiro256** with a fixed seed, restarted by every invocation), so runs and
 * machines are comparable. Sizes are in MiB.
 *
 * Kinds of tensor data (as in ../shared/notes/machine-limits.md, data sets a-e):
 *   f32          float32 weights N(0, 0.02)
 *   bf16         bf16 weights: top 16 bits of float32 N(0, 0.02)
 *   adam_m       Adam exp_avg-like: float32 N(0, 1e-3)
 *   adam_v       Adam exp_avg_sq-like: float32 (N(0,1) * 1e-3)^2
 *   f32_zeros30  float32 N(0, 0.02) with 30 % exact zeros
 *   random       random bytes
 *
 * usage: gen_checkpoint DIR [TOTAL_MB] [SHARD_FILES]   the demo layout (default 300 MiB, 200
 *                                                      shard files of equal size)
 *        gen_checkpoint --file KIND MIB FILE           one file of one kind
 *        gen_checkpoint --shards MIB DIR               a tree of small files (4 KiB..1 MiB,
 *                                                      log-uniform sizes, mixed float kinds)
 *        gen_checkpoint --mixed MIB DIR                the benchmark's mixed checkpoint: every
 *                                                      kind above plus a shard tree
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

enum kind { F32_WEIGHTS, BF16_WEIGHTS, ADAM_M, ADAM_V, F32_ZEROS30, RANDOM_BYTES, KIND_COUNT };

static const char *const kind_names[KIND_COUNT] = {"f32",    "bf16",        "adam_m",
                                                   "adam_v", "f32_zeros30", "random"};

static float sample(enum kind k)
{
    float x;

    if (k == F32_ZEROS30 && uniform() < 0.3)
        return 0.0f;
    x = normal();
    return k == ADAM_M ? x * 1e-3f : k == ADAM_V ? (x * 1e-3f) * (x * 1e-3f) : x * 0.02f;
}

/* Fills buf (n bytes, a multiple of 8) with data of kind k; returns the bytes of output, which
 * is n / 2 for bf16 (the top halves of n / 4 floats). */
static size_t fill(float *buf, size_t n, enum kind k)
{
    uint16_t *h = (uint16_t *)buf;
    size_t i;

    if (k == RANDOM_BYTES) {
        for (i = 0; i < n / 8; i++) {
            uint64_t r = next();

            memcpy((char *)buf + 8 * i, &r, 8);
        }
        return n;
    }
    for (i = 0; i < n / sizeof(float); i++)
        buf[i] = sample(k);
    if (k != BF16_WEIGHTS)
        return n;
    for (i = 0; i < n / sizeof(float); i++) {
        uint32_t u;

        memcpy(&u, &buf[i], 4);
        h[i] = (uint16_t)(u >> 16);
    }
    return n / 2;
}

static int write_tensor(const char *path, enum kind k, uint64_t bytes)
{
    FILE *f = fopen(path, "wb");
    static float buf[1 << 16];

    if (!f)
        return -1;
    while (bytes) {
        size_t n = fill(buf, sizeof(buf), k);

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

static void tensor_or_die(const char *dir, const char *name, enum kind k, uint64_t bytes)
{
    char p[4096];

    snprintf(p, sizeof(p), "%s/%s", dir, name);
    if (write_tensor(p, k, bytes & ~(uint64_t)3)) {
        perror(p);
        exit(1);
    }
}

static void trainer_state(const char *dir)
{
    char p[4096];
    FILE *f;

    snprintf(p, sizeof(p), "%s/trainer_state.json", dir);
    f = fopen(p, "w");
    if (!f) {
        perror(p);
        exit(1);
    }
    fprintf(f,
            "{\"epoch\": 3, \"global_step\": 1200, \"learning_rate\": 0.0003, "
            "\"rng_state\": [%llu, %llu, %llu, %llu], \"best_metric\": 0.8125}\n",
            (unsigned long long)s[0], (unsigned long long)s[1], (unsigned long long)s[2],
            (unsigned long long)s[3]);
    if (fclose(f)) {
        perror(p);
        exit(1);
    }
}

/* The demo layout, unchanged since the first release (scripts/demo, smoke and test use it). */
static int demo_layout(const char *dir, uint64_t mb, unsigned shards)
{
    char p[4096], name[64];
    uint64_t total = mb << 20;
    unsigned i;

    mk(dir);
    snprintf(p, sizeof(p), "%s/optimizer", dir);
    mk(p);
    snprintf(p, sizeof(p), "%s/shards", dir);
    mk(p);
    tensor_or_die(dir, "model.f32.bin", F32_WEIGHTS, total / 100 * 45);
    tensor_or_die(dir, "model.bf16.bin", BF16_WEIGHTS, total / 100 * 15);
    tensor_or_die(dir, "optimizer/exp_avg.f32.bin", ADAM_M, total / 100 * 15);
    tensor_or_die(dir, "optimizer/exp_avg_sq.f32.bin", ADAM_V, total / 100 * 15);
    for (i = 0; i < shards; i++) {
        uint64_t b = (total / 10) / shards;

        snprintf(p, sizeof(p), "%s/shards/layer_%03u", dir, i / 50);
        mk(p);
        snprintf(name, sizeof(name), "shards/layer_%03u/shard-%05u.f32", i / 50, i);
        tensor_or_die(dir, name, F32_WEIGHTS, b);
    }
    trainer_state(dir);
    return 0;
}

/* A shard tree of about `bytes` bytes under dir/shards: files of 4 KiB..1 MiB (log-uniform, so
 * most are small), 50 per directory, cycling through the float kinds. Returns the file count. */
static unsigned shard_tree(const char *dir, uint64_t bytes)
{
    static const enum kind kinds[] = {F32_WEIGHTS, BF16_WEIGHTS, ADAM_M, ADAM_V};
    char p[4096], name[64];
    unsigned i;

    snprintf(p, sizeof(p), "%s/shards", dir);
    mk(p);
    for (i = 0; bytes > 0; i++) {
        uint64_t b = (uint64_t)(4096.0 * pow(256.0, uniform())) & ~(uint64_t)3;

        if (b > bytes)
            b = bytes < 4 ? 4 : bytes;
        snprintf(p, sizeof(p), "%s/shards/layer_%03u", dir, i / 50);
        mk(p);
        snprintf(name, sizeof(name), "shards/layer_%03u/shard-%05u.bin", i / 50, i);
        tensor_or_die(dir, name, kinds[i % 4], b);
        bytes = bytes > b ? bytes - b : 0;
    }
    return i;
}

static int mixed_layout(const char *dir, uint64_t mb)
{
    char p[4096];
    uint64_t total = mb << 20;

    mk(dir);
    snprintf(p, sizeof(p), "%s/model", dir);
    mk(p);
    snprintf(p, sizeof(p), "%s/optimizer", dir);
    mk(p);
    tensor_or_die(dir, "model/weights.f32.bin", F32_WEIGHTS, total / 100 * 30);
    tensor_or_die(dir, "model/weights.bf16.bin", BF16_WEIGHTS, total / 100 * 10);
    tensor_or_die(dir, "model/pruned.f32.bin", F32_ZEROS30, total / 100 * 10);
    tensor_or_die(dir, "optimizer/exp_avg.f32.bin", ADAM_M, total / 100 * 15);
    tensor_or_die(dir, "optimizer/exp_avg_sq.f32.bin", ADAM_V, total / 100 * 15);
    tensor_or_die(dir, "rng_state.bin", RANDOM_BYTES, total / 100 * 5);
    shard_tree(dir, total / 100 * 15);
    trainer_state(dir);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: gen_checkpoint DIR [TOTAL_MB] [SHARD_FILES]\n"
                    "       gen_checkpoint --file KIND MIB FILE\n"
                    "       gen_checkpoint --shards MIB DIR\n"
                    "       gen_checkpoint --mixed MIB DIR\n"
                    "KIND: f32 bf16 adam_m adam_v f32_zeros30 random\n");
    return 2;
}

int main(int argc, char **argv)
{
    uint64_t mb;
    unsigned k;

    if (argc < 2)
        return usage();
    if (argv[1][0] != '-')
        return demo_layout(argv[1], argc > 2 ? strtoull(argv[2], NULL, 10) : 300,
                           argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 200);
    if (!strcmp(argv[1], "--file") && argc == 5) {
        for (k = 0; k < KIND_COUNT && strcmp(argv[2], kind_names[k]); k++)
            ;
        if (k == KIND_COUNT)
            return usage();
        mb = strtoull(argv[3], NULL, 10);
        if (write_tensor(argv[4], (enum kind)k, mb << 20)) {
            perror(argv[4]);
            return 1;
        }
        return 0;
    }
    if (argc != 4)
        return usage();
    mb = strtoull(argv[2], NULL, 10);
    if (!strcmp(argv[1], "--mixed"))
        return mixed_layout(argv[3], mb);
    if (!strcmp(argv[1], "--shards")) {
        mk(argv[3]);
        printf("%u files\n", shard_tree(argv[3], mb << 20));
        return 0;
    }
    return usage();
}
