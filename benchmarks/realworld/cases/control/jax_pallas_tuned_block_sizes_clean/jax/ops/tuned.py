def get_tuned_block_sizes(num_heads_per_blk, pages_per_seq):
    bkv, bq = 128, 32
    if num_heads_per_blk > 4:
        bkv = 64
    return min(pages_per_seq, bkv), bq
