#define grid_size_x 64
#define grid_size_y 1
#define grid_size_z 1
#define block_size_x 64
#define block_size_y 1
#define block_size_z 1
#define kernel_tuner 1
#line 1

__kernel void vector_add(__global float *c, __global const float *a, __global const float *b, int n) {
    int i = get_global_id(0);
#if block_size_x == 64
    this is not OpenCL;
#endif
    if (i < n) {
#if block_size_x == 8
        float acc = a[i];
        for (long k = 0; k < 400000000000L; k++)  /* hours: only a kill ends it */
            acc = acc * 0.999999f + b[i];
        c[i] = acc;
#elif block_size_x == 16
        c[i] = a[i] - b[i];
#else
        c[i] = a[i] + b[i];
#endif
    }
}
