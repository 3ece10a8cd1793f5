/* 2-D convolution of an IMAGE_H x IMAGE_W image with an FILTER_H x FILTER_W filter ("valid" region;
 * the input is padded by the filter size). Tunable: block_size_x, block_size_y (work-group),
 * tile_size_x, tile_size_y (outputs per work-item), use_local (stage the input tile in local memory). */
#define INPUT_W (IMAGE_W + FILTER_W - 1)
#define TILE_W (block_size_x * tile_size_x + FILTER_W - 1)
#define TILE_H (block_size_y * tile_size_y + FILTER_H - 1)

__kernel void convolution_kernel(__global float *output, __global const float *input,
                                 __global const float *filter) {
    int x0 = get_group_id(0) * block_size_x * tile_size_x;
    int y0 = get_group_id(1) * block_size_y * tile_size_y;
    int tx = get_local_id(0);
    int ty = get_local_id(1);

#if use_local == 1
    __local float tile[TILE_H][TILE_W];
    for (int i = ty; i < TILE_H; i += block_size_y)
        for (int j = tx; j < TILE_W; j += block_size_x)
            tile[i][j] = input[(y0 + i) * INPUT_W + x0 + j];
    barrier(CLK_LOCAL_MEM_FENCE);
#define IN(yy, xx) tile[(yy) - y0][(xx) - x0]
#else
#define IN(yy, xx) input[(yy) * INPUT_W + (xx)]
#endif

    for (int ti = 0; ti < tile_size_y; ti++) {
        int y = y0 + ty + ti * block_size_y;
        for (int tj = 0; tj < tile_size_x; tj++) {
            int x = x0 + tx + tj * block_size_x;
            float sum = 0.0f;
            for (int i = 0; i < FILTER_H; i++)
                for (int j = 0; j < FILTER_W; j++)
                    sum += IN(y + i, x + j) * filter[i * FILTER_W + j];
            if (y < IMAGE_H && x < IMAGE_W)
                output[y * IMAGE_W + x] = sum;
        }
    }
}
