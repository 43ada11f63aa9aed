# tools/gpu_summary.py on synthetic rows (tests/data/gpu_summary, built so each verdict is known): every
# verdict it must reach, and a missing part reported as not measured.
execute_process(COMMAND ${PYTHON} ${SCRIPT} ${DATA} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gpu_summary.py failed (${rc}): ${err}")
endif()
foreach(needle
    "- rows measured: 3 of the peer file's 11"
    "faster than the peer on 3 of 3 rows \\(target: all\\) -> met on the rows run, 8 not run"
    "geometric mean speedup 1.57x"
    "- mma 3: test_kernel passed; checked rows: 2 passed, 1 failed; steps not ending in 0: mma3_kivi_checked; registers 142, 32, 190"
    "- mma 5: test_kernel FAILED \\(exit 1\\)"
    "int8 K/V in the matrix shape \\(mma_more.csv\\): 2.00x the lane shape's speed in geometric mean over 2 shapes"
    "- G = 16 in two transposed groups \\(mma=5,mma_group_rows=8\\), checked rows: 2 passed, 0 failed"
    "- G = 16, 32,128,8,64,2048 \\(mma_g16.csv, alternating rounds\\): mma=1 80.0 us \\(1.00x the first's time\\), mma=3,mma_group_rows=8 100.0 us \\(1.25x the first's time\\), mma=5,mma_group_rows=8 60.0 us \\(0.75x the first's time\\); fastest: mma=5,mma_group_rows=8"
    "- the combine's work-group, 1,32,8,128,32768 \\(combine_wg.csv, alternating rounds\\): combine_work_group_size=64 120.0 us \\(1.00x the first's time, tail 15.0 us\\), combine_work_group_size=256 108.0 us \\(0.90x the first's time, tail 4.5 us\\); fastest: combine_work_group_size=256"
    "B = 1, 8192 tokens: 18.0 us \\(target <= 20 us\\) -> met"
    "8,64,8,128,8192 1.58x \\(target >= 1.7x\\) -> missed"
    "load width vl1: geomean speedup 1.55x"
    "against PyTorch SDPA timed on the same card \\(TEST CARD\\): faster on 2 of 3 rows, geomean 1.48x"
    "\\| vector_loads=1,key_tile=1 \\| 100.0 \\| 0.50x \\|"
    "fastest: vector_loads=1,key_tile=1"
    "- vector_loads=0: global u16 x2, shared f32 x1"
    "- vector_loads=1,key_tile=1: global v4.u32 x2, shared v4.u32 x1"
    "proposed cv_min_rows = 16 \\(G x S1 from which cv wins; matches every row\\)"
    "the planner chose the winner on 2 of 4 rows"
    "geometric mean 1.075 -> proposed split_rowmax = 1"
    "NVIDIA row work_group_size 128, chunk_rows 256, vector_loads 1"
    "not measured: no h100_mla.csv"
    "4,32,4,256,8192, matrix shape \\(mma 5\\): 32 splits 200.0 us \\(main 180.0 us for 256 rows a split, 671 GB/s\\), 16 splits 140.0 us \\(main 130.0 us for 512 rows a split, 959 GB/s\\), 8 splits 100.0 us \\(main 95.0 us for 1024 rows a split, 1342 GB/s\\); fastest: split_min_tokens=1024"
    "- 4,32,4,256,8192 float16: before 140.0 us, after 112.0 us: 0.80x the time \\(3 and 3 rounds\\)"
    "- 1,32,8,128,8192 float16: one side missing"
    "- geometric mean: 0.800x the time over 2 rows"
    "- int8, 16,32,8,128,8192 \\(h100_int8_depth.csv, alternating rounds\\): mma_int8=1 150.0 us \\(1.00x the first's time, tail 0.0 us\\), mma_int8=2 100.0 us \\(0.67x the first's time, tail 0.0 us\\); fastest: mma_int8=2"
    "- mma_int8=2 against mma_int8=1: 0.730x the time in geometric mean over 2 shapes -> set mma_int8 2 in the NVIDIA row"
    "8,32,8,128,32768, 1 query tokens, mean length 5120.0: planner \\(balanced\\) 100.0 us, equal splits \\(partial\\) 250.0 us: 2.50x, 87 % of read bw"
    "decode_float16 \\(exit 0\\):"
    "tokens generated 67 "
    "decode_float16_draft4 \\(exit 0\\):"
    "speculative steps 2.16 tokens per request and step verified, 1.52 accepted"
    "\\| 4,32,4,256,8192 \\| unfused \\| 70.5 \\(1.00x\\) \\| 78.5 \\(1.11x\\) \\| 70.5 \\(1.00x\\) \\|"
    "- int4: mma_int4=1 0.250x the work-group shape's time in geometric mean over 1 shapes"
    "- mma_int4: feature cases on the card passed; checked rows \\(h100_peers_int4_mma.csv\\): 2 passed, 0 failed"
    "- mma_int4=2 against 1: 1.100x the time"
    "- mma_int4 -> set mma_int4 1 in the NVIDIA row"
    "- int8: mma=3 0.800x the time of mma=5 in geometric mean over 1 shapes"
    "- int8: kernels=op_kernel 0.850x the time of kernels=build/kernels_15bbc41 in geometric mean over 1 shapes -> keep the changes"
    "- int4, 16,32,8,128,8192 \\(h100_bytes.csv, alternating rounds\\): kernels=build/kernels_15bbc41 100.0 us \\(1.00x the first.s time, tail 0.0 us\\), kernels=op_kernel 95.0 us"
    "## The lane shape's K/V types and head dims \\(part lanekv\\)\n- float16, 8,32,32,80,4096 [^\n]*lanes=0 420.0 us \\(3.50x[^\n]*\n- checks: every row passed\n- verdict: keep the lane shape for them"
    "- verdict: look again: the kernels before them faster by more than 2 % at int8 16,32,8,128,8192"
    "## The latent tile for MLA \\(part mlatile\\)\n- float16, 1,16,1,576,8192 [^\n]*default 300.0 us \\(6.00x[^\n]*mma_mla=1,mma_mla_split_tokens=0 120.0 us \\(2.40x[^\n]*fastest: mma_mla=1\n- checks: every row passed\n- verdict: set mma_mla 1 in the NVIDIA row"
    "BNSD, 16-row blocks: faster than the peer on 2 of 3 rows, geomean 1.05x; against contiguous BNSD geomean 1.23x the time, at worst 1.30x \\(64,32,8,128,4096\\)")
  if(NOT out MATCHES "${needle}")
    message(FATAL_ERROR "gpu_summary.py's output lacks \"${needle}\":\n${out}")
  endif()
endforeach()
