/* A tiled 320x320 single-precision matrix multiply whose schedule is chosen at compile time.
 * Built by bayestune's build step (gcc -DTI=... -o {artefact}); its run step times one call
 * (after a warm-up) and prints "time_ms: <ms>". The checksum guards against a schedule that
 * computes the wrong answer (a wrong tiling bound would show here). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef N
#define N 320
#endif
#ifndef TI
#define TI 32
#endif
#ifndef TJ
#define TJ 32
#endif
#ifndef TK
#define TK 32
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

static float A[N][N], B[N][N], C[N][N];

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define STR(x) #x
#define PRAGMA(x) _Pragma(STR(x))

static void matmul(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) C[i][j] = 0.0f;
    for (int ii = 0; ii < N; ii += TI)
        for (int kk = 0; kk < N; kk += TK)
            for (int jj = 0; jj < N; jj += TJ)
                for (int i = ii; i < MIN(ii + TI, N); i++)
                    for (int k = kk; k < MIN(kk + TK, N); k++) {
                        float a = A[i][k];
                        PRAGMA(GCC unroll UNROLL)
                        for (int j = jj; j < MIN(jj + TJ, N); j++) C[i][j] += a * B[k][j];
                    }
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            A[i][j] = (float)((i * 7 + j * 3) % 11) / 11.0f;
            B[i][j] = (float)((i * 5 + j * 13) % 17) / 17.0f;
        }
    matmul(); /* warm-up: caches, page faults */
    double start = now_ms();
    matmul();
    double elapsed = now_ms() - start;
    double checksum = 0.0;
    for (int i = 0; i < N; i++) checksum += C[i][(i * 31) % N];
    printf("time_ms: %.4f\nchecksum: %.3f\n", elapsed, checksum);
    return 0;
}
