/* Tiled matrix multiply C = A * B (square, WIDTH x WIDTH), after Kernel Tuner's OpenCL matmul example.
 * Tunable: block_size_x, block_size_y (work-group), tile_size_x, tile_size_y (outputs per work-item).
 * Needs block_size_x == block_size_y * tile_size_y (sB holds block_size_x rows of B). */
__kernel void matmul_kernel(__global float *C, __global const float *A, __global const float *B) {
    __local float sA[block_size_y * tile_size_y][block_size_x];
    __local float sB[block_size_y * tile_size_y][block_size_x * tile_size_x];

    int tx = get_local_id(0);
    int ty = get_local_id(1);
    int x = get_group_id(0) * block_size_x * tile_size_x + tx;
    int y = get_group_id(1) * block_size_y * tile_size_y + ty;

    float sum[tile_size_y][tile_size_x];
    for (int i = 0; i < tile_size_y; i++)
        for (int j = 0; j < tile_size_x; j++)
            sum[i][j] = 0.0f;

    for (int k = 0; k < WIDTH; k += block_size_x) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = 0; i < tile_size_y; i++) {
            sA[ty + block_size_y * i][tx] = A[(y + i * block_size_y) * WIDTH + k + tx];
            for (int j = 0; j < tile_size_x; j++)
                sB[ty + block_size_y * i][tx + j * block_size_x] =
                    B[(k + ty + block_size_y * i) * WIDTH + x + j * block_size_x];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kb = 0; kb < block_size_x; kb++)
            for (int i = 0; i < tile_size_y; i++)
                for (int j = 0; j < tile_size_x; j++)
                    sum[i][j] += sA[ty + block_size_y * i][kb] * sB[kb][tx + j * block_size_x];
    }

    for (int i = 0; i < tile_size_y; i++)
        for (int j = 0; j < tile_size_x; j++)
            C[(y + i * block_size_y) * WIDTH + x + j * block_size_x] = sum[i][j];
}
