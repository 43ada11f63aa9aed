# ctest nvptx_lanes: the lane shape's NVIDIA-only path (-D IFA_NV=1: warp shuffles in inline PTX), which no CI
# device runs, compiled by clang for nvptx64 (OpenCL C, NVIDIA's target) in several variants: it must compile,
# and hold lanes x query rows x log2(D / 8) shuffles, stage by stage (a stage's shuffles, which do not depend on
# each other, together); with lane_scores (LANE_SC=1) the transposing butterfly's count and its broadcasts
# (shfl.sync.idx), and no float array in local (stack) memory: an array indexed at run time leaves registers.
# The matrix shape's variants (MMA=1) must hold their exact count of warp matrix products and transposes, and every
# variant its exponentials by the exp2 unit (IFA_GEXP's ex2.approx.ftz.f32; exp calls only for the sink and the
# fused combine). NVIDIA's compiler takes `asm`; clang's OpenCL C wants `__asm__` (-Dasm=__asm__).
# Builtins stay external calls, so the PTX is for structure only. Skipped (exit 77) without a clang that
# targets nvptx64.
#   cmake -DCLANG=clang -DTILING=build/ifa-tiling -DSRC=op_kernel/ -DOUT=DIR -P check_nvptx.cmake
cmake_policy(SET CMP0007 NEW) # "64|": the empty changes stay an element
if(NOT CLANG)
  message("no clang: skipped")
  cmake_language(EXIT 77)
endif()
file(MAKE_DIRECTORY ${OUT})
# the fused kernel's programs, one per kernel shape: their files in the order the library builds them (ifa-tiling
# --sources SHAPE; the last one's includes are read from SRC)
foreach(shape lanes matrix matrix_t latent_tile vector)
  execute_process(COMMAND ${TILING} --sources ${shape} RESULT_VARIABLE rc OUTPUT_VARIABLE sources
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR sources STREQUAL "")
    message(FATAL_ERROR "${TILING} --sources ${shape} failed (exit ${rc})")
  endif()
  string(REPLACE " " ";" sources "${sources}")
  file(WRITE ${OUT}/${shape}.cl "")
  foreach(s ${sources})
    file(READ ${SRC}/${s} text)
    file(APPEND ${OUT}/${shape}.cl "${text}")
  endforeach()
endforeach()
# The defines templates/all_vector.c passes (a fp16 plan of the NVIDIA row at D = 128, G = 4), then each
# variant's changes: NAME=VALUE pairs replacing the base's, and the shuffles it must hold (butterfly[/broadcast]).
# lane_scores at G = 4, D = 128, 4 rows a step: 8+4+2+1 = 15 to sum 16 dot products, 2 for the row max, 2 after
# the loop for the row sum; 16 probabilities and 4 rescales a step, 4 maxima and 4 sums after the loop.
set(base IFA_CPU=0 IFA_NV=1 Q_T=1 KV_T=1 O_T=1 HEAD_DIM=128 VDIM=128 WG=128 VW=1 XB=1 PV_RB=0 RS_MAX=0 CHUNK=128
  GT=4 SQ=1 HAS_LSE=0 CAUSAL=0 HAS_MASK=0 HAS_PSE=0 HAS_ALIBI=0 SOFTCAP=0 HAS_PAD=0 QLEN=0 PAGED=0 ANTIQUANT=0
  AQ_T=0 AQ_OFF=0 VAQ=0 VAQ_T=0 VAQ_OFF=0 ROPE=0 ROPE_DIM=0 ROPE_TAB=0 ROPE_OFF=0 QUANT_OUT=0 Q2_T=0 Q2_OFF=0
  PREFIX_SLOTS=0 SINK=0 MH=1 RB_MH=4 GSQ=4 PREFETCH=0 PV_PREFETCH=0 SPREAD_PF=0 BATCH_FAST=1 V8=0 KTILE=0 LANES=4
  LANE_PF=0 SPLIT=0 BALANCED=0 ROWMAX=1 MAX_PASS=0)
set(variants
  "64|"
  "64|LANE_PF=1"
  "64|KV_T=3,ANTIQUANT=3,VAQ=3,AQ_T=0,VAQ_T=0,PAGED=1,LANE_PF=1"
  "64|KV_T=2,SPLIT=1,ROWMAX=2,MAX_PASS=1"
  "64|HAS_MASK=1,HAS_PSE=1,SOFTCAP=1,HAS_ALIBI=1,BALANCED=1,CAUSAL=1,HAS_LSE=1,SINK=1"
  "160|HEAD_DIM=256,VDIM=256,GT=8,RB_MH=8,GSQ=8"
  "96|HEAD_DIM=64,VDIM=64,QLEN=1,SQ=2,GSQ=8,RB_MH=8,LANES=4"
  "24|LANES=3,GT=2,RB_MH=2,GSQ=2"
  "19/28|LANE_SC=1"
  "19/28|LANE_SC=1,KV_T=3,ANTIQUANT=3,VAQ=3,AQ_T=0,VAQ_T=0,PAGED=1,LANE_PF=1"
  "17/4|LANE_SC=1,KV_T=2,SPLIT=1,ROWMAX=2,MAX_PASS=1"
  "19/28|LANE_SC=1,HAS_MASK=1,HAS_PSE=1,SOFTCAP=1,HAS_ALIBI=1,BALANCED=1,CAUSAL=1,HAS_LSE=1,SINK=1"
  "35/56|LANE_SC=1,HEAD_DIM=256,VDIM=256,GT=8,RB_MH=8,GSQ=8"
  "28/56|LANE_SC=1,HEAD_DIM=64,VDIM=64,QLEN=1,SQ=2,GSQ=8,RB_MH=8"
  "9/7|LANE_SC=1,GT=1,RB_MH=1,GSQ=1"
  "19/28|LANE_SC=1,LANE_QL=1"
  "64|LANE_QL=1,LANE_PF=1"
  "8|LANES=0,MMA=1"
  "8|LANES=0,MMA=1,HEAD_DIM=64,VDIM=64,GT=16,RB_MH=16,GSQ=16"
  "8|LANES=0,MMA=1,HEAD_DIM=96,VDIM=96,QLEN=1,SQ=2,GSQ=8,RB_MH=8"
  "8|LANES=0,MMA=1,HAS_MASK=1,HAS_PSE=1,SOFTCAP=1,HAS_ALIBI=1,BALANCED=1,CAUSAL=1,HAS_LSE=1,SINK=1,PAGED=1"
  "8|LANES=0,MMA=1,HEAD_DIM=32,VDIM=32,SPLIT=1"
  "8|LANES=0,MMA=2"
  "8|LANES=0,MMA=2,HEAD_DIM=64,VDIM=64,GT=16,RB_MH=16,GSQ=16,PAGED=1,HAS_MASK=1"
  "12|LANES=0,MMA=1,KV_T=3,ANTIQUANT=1,VAQ=1,AQ_T=1,VAQ_T=1"
  "8|LANES=0,MMA=2,KV_T=3,ANTIQUANT=2,VAQ=2,AQ_T=0,VAQ_T=0,HEAD_DIM=64,VDIM=64,GT=16,RB_MH=16,GSQ=16"
  "12|LANES=0,MMA=1,ROPE=1,ROPE_DIM=128"
  "8|LANES=0,MMA=1,KV_T=2,Q_T=2"
  "12|LANES=0,MMA=2,KV_T=2,Q_T=1,HEAD_DIM=64,VDIM=64,GT=16,RB_MH=16,GSQ=16"
  "12|LANES=0,MMA=3"
  "12|LANES=0,MMA=3,HEAD_DIM=256,VDIM=256,GT=8,RB_MH=8,GSQ=8"
  "12|LANES=0,MMA=3,HEAD_DIM=64,VDIM=64,GT=1,RB_MH=1,GSQ=1,SPLIT=1"
  "12|LANES=0,MMA=3,HAS_MASK=1,HAS_PSE=1,SOFTCAP=1,HAS_ALIBI=1,BALANCED=1,CAUSAL=1,HAS_LSE=1,SINK=1,PAGED=1"
  "12|LANES=0,MMA=3,KV_T=3,ANTIQUANT=1,VAQ=1,AQ_T=1,VAQ_T=1,PAGED=1"
  "12|LANES=0,MMA=3,KV_T=2,Q_T=2,HEAD_DIM=256,VDIM=256,GT=8,RB_MH=8,GSQ=8"
  "12|LANES=0,MMA=3,ROPE=1,ROPE_DIM=128"
  "24|LANES=0,MMA=3,KV_T=3,ANTIQUANT=3,VAQ=3,AQ_T=0,VAQ_T=0"
  "24|LANES=0,MMA=4,KV_T=3,ANTIQUANT=5,VAQ=5,AQ_T=1,VAQ_T=1,PAGED=1,HEAD_DIM=256,VDIM=256,GT=8,RB_MH=8,GSQ=8"
  "24|LANES=0,MMA=3,KV_T=3,ANTIQUANT=1,VAQ=4,AQ_T=1,VAQ_T=1"
  "12|LANES=0,MMA=5"
  "12|LANES=0,MMA=5,HEAD_DIM=64,VDIM=64,GT=8,RB_MH=8,GSQ=8,PAGED=1,SPLIT=1"
  "12|LANES=0,MMA=5,HEAD_DIM=64,VDIM=64,GT=8,RB_MH=8,GSQ=8,PAGED=1,SPLIT=1,FUSED=1,HAS_LSE=1,SINK=1"
  "12|LANES=0,MMA=5,KV_T=3,ANTIQUANT=1,VAQ=1,AQ_T=1,VAQ_T=1"
  "12|LANES=0,MMA=6,KV_T=3,ANTIQUANT=1,VAQ=1,AQ_T=1,VAQ_T=1,SPLIT=1"
  "64|SPLIT=1,FUSED=1"
  "12|LANES=0,MMA=4"
  "12|LANES=0,MMA=4,KV_T=3,ANTIQUANT=2,VAQ=2,AQ_T=0,VAQ_T=0,HEAD_DIM=64,VDIM=64,GT=8,RB_MH=8,GSQ=8"
  "8|LANES=0,MMA=7,MMA_AL=1,HEAD_DIM=576,VDIM=512,GT=16,RB_MH=16,GSQ=128"
  "8|LANES=0,MMA=7,KV_T=2,Q_T=2,HEAD_DIM=576,VDIM=512,GT=16,RB_MH=16,GSQ=16,PAGED=1,SPLIT=1,FUSED=1,HAS_LSE=1,SINK=1"
  "8|LANES=0,MMA=7,MMA_AL=1,HEAD_DIM=320,VDIM=256,GT=8,SQ=2,GSQ=16,RB_MH=16,HAS_MASK=1,HAS_PSE=1,SOFTCAP=1,HAS_ALIBI=1,BALANCED=1,CAUSAL=1,HAS_LSE=1"
  "8|LANES=0,MMA=7,MMA_AL=1,KV_T=2,Q_T=2,HEAD_DIM=576,VDIM=512,GT=16,RB_MH=16,GSQ=16,ROPE=2,ROPE_DIM=64,ROPE_OFF=512,PAGED=1"
  "8|LANES=0,MMA=7,MMA_AL=1,KV_T=2,Q_T=1,HEAD_DIM=576,VDIM=512,GT=5,SQ=3,GSQ=15,RB_MH=15,CAUSAL=1"
  "8|LANES=0,MMA=7,KV_T=9,ANTIQUANT=2,VAQ=2,AQ_T=0,VAQ_T=0,HEAD_DIM=576,VDIM=512,GT=16,RB_MH=16,GSQ=16,PAGED=1"
  "8|LANES=0,MMA=7,MMA_AL=1,F8CVT=1,KV_T=9,HEAD_DIM=576,VDIM=512,GT=16,RB_MH=16,GSQ=16"
  "8|LANES=0,MMA=7,MMA_AL=1,KV_T=10,Q_T=2,HEAD_DIM=576,VDIM=512,GT=16,RB_MH=16,GSQ=16")
foreach(v ${variants})
  string(REPLACE "|" ";" parts "${v}")
  list(GET parts 0 want)
  set(want_idx 0)
  if(want MATCHES "^([0-9]+)/([0-9]+)$")
    set(want ${CMAKE_MATCH_1})
    set(want_idx ${CMAKE_MATCH_2})
  endif()
  list(LENGTH parts n)
  set(defs ${base})
  if(n GREATER 1)
    list(GET parts 1 changes)
    string(REPLACE "," ";" changes "${changes}")
    foreach(c ${changes})
      string(REGEX REPLACE "=.*" "" name "${c}")
      list(FILTER defs EXCLUDE REGEX "^${name}=")
      list(APPEND defs ${c})
    endforeach()
  endif()
  set(args)
  set(mma 0)
  set(lanes 0)
  foreach(d ${defs})
    list(APPEND args -D${d})
    if(d MATCHES "^MMA=([0-9]+)$")
      set(mma ${CMAKE_MATCH_1})
    elseif(d MATCHES "^LANES=([0-9]+)$")
      set(lanes ${CMAKE_MATCH_1})
    endif()
  endforeach()
  # the variant's kernel shape, as the plan's fields name it (ifa__shape_of)
  if(mma EQUAL 7)
    set(shape latent_tile)
  elseif(mma GREATER_EQUAL 3)
    set(shape matrix_t)
  elseif(mma GREATER_EQUAL 1)
    set(shape matrix)
  elseif(lanes GREATER 0)
    set(shape lanes)
  else()
    set(shape vector)
  endif()
  execute_process(COMMAND ${CLANG} -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header
    -Dasm=__asm__ -O2 -S -I ${SRC} ${args} ${OUT}/${shape}.cl -o ${OUT}/lanes.ptx RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    if(err MATCHES "unknown target|No available targets|unable to create target")
      message("${CLANG} has no nvptx64 target: skipped")
      cmake_language(EXIT 77)
    endif()
    message(FATAL_ERROR "variant ${v}: clang for nvptx64 failed:\n${err}")
  endif()
  file(STRINGS ${OUT}/lanes.ptx shuffles REGEX "shfl\\.sync\\.bfly\\.b32")
  list(LENGTH shuffles got)
  if(NOT got EQUAL want)
    message(FATAL_ERROR "variant ${v}: ${got} warp shuffles, expected ${want}")
  endif()
  # the last split's combine (FUSED=1): the count between two fences (builtins stay calls here: a call site
  # names the function on a line of its own, "NAME,")
  if(v MATCHES "FUSED=1")
    file(STRINGS ${OUT}/lanes.ptx counts REGEX "_Z10atomic_inc[A-Za-z0-9_]*,")
    file(STRINGS ${OUT}/lanes.ptx fences REGEX "_Z9mem_fencej,")
    list(LENGTH counts n_counts)
    list(LENGTH fences n_fences)
    if(n_counts LESS 1 OR n_fences LESS 2)
      message(FATAL_ERROR "variant ${v}: the split count or its fences are missing (${n_counts} atomic_inc, ${n_fences} mem_fence calls)")
    endif()
  endif()
  # the query's prologue on NVIDIA, unrolled so that a work-item's loads go out together (R x D / WG of them: 16 at
  # G = 8, D = 256 and 128 work-items) instead of one round trip each: a fp16 query's vload_half call sites here
  # (builtins stay calls; a call site names the function on a line of its own, "NAME, ")
  if(";${defs};" MATCHES ";HEAD_DIM=256;" AND ";${defs};" MATCHES ";GT=8;" AND ";${defs};" MATCHES ";Q_T=1;")
    file(STRINGS ${OUT}/lanes.ptx qloads REGEX "_Z10vload_half[A-Za-z0-9]*, ")
    list(LENGTH qloads n_q)
    if(n_q LESS 16)
      message(FATAL_ERROR "variant ${v}: ${n_q} query loads in the prologue, expected 16 (the loop unrolled)")
    endif()
  endif()
  file(STRINGS ${OUT}/lanes.ptx broadcasts REGEX "shfl\\.sync\\.idx\\.b32")
  list(LENGTH broadcasts got_idx)
  if(NOT got_idx EQUAL want_idx)
    message(FATAL_ERROR "variant ${v}: ${got_idx} broadcast shuffles, expected ${want_idx}")
  endif()
  # the matrix shape (MMA=1 or 2): per step 2 x D / 16 score products and 2 x D / 8 value products (hi and lo of
  # the probabilities), a transpose per value tile and 8-key half (2 x D / 8); 4 quad shuffles in the step, 4
  # after it. The transposed one (MMA=3, its lean variant 4, 5 with the next step's rows ahead): D / 16 score products, D / 8 value products (16-column tiles, hi and lo),
  # 4 transposes (P^T's two 8-key halves, hi and lo) and no query-range shuffles; 6 shuffles in the step (3 per
  # row's max over the 8 lanes of its rows), 6 after it; with the value's token scales (VAQ 3 to 5) 6 more in the
  # step (each row's largest p x scale) and 6 more after it (the rows' sums of p x scale x offset).
  # The latent tile (MMA=7): a warp's D / 64 score steps for both 8-key halves (twice with the query in two parts)
  # and D_v / 32 value tiles, hi and lo (D / 32 + D_v / 16 products), no transposes; 4 quad shuffles in the step, 4
  # after it (its rows' range without shuffles).
  set(shape 0)
  if(";${defs};" MATCHES ";MMA=([1-57]);")
    set(shape ${CMAKE_MATCH_1})
  endif()
  if(";${defs};" MATCHES ";MMA=[1-57];" AND ";${defs};" MATCHES ";HEAD_DIM=([0-9]+);")
    set(d ${CMAKE_MATCH_1})
    set(parts 1)
    set(op_t 1) # the operands' type: bf16 (2) for bf16 K/V, fp16 (1) otherwise
    if(";${defs};" MATCHES ";KV_T=2;")
      set(op_t 2)
    endif()
    # the query in two parts (and 4 more shuffles for its rows' range, in the counts above): a per-channel key
    # scale folded in (a per-tensor one scales the scores instead), RoPE, another query type
    if(";${defs};" MATCHES ";ANTIQUANT=1;" OR ";${defs};" MATCHES ";ROPE=[12];" OR NOT ";${defs};" MATCHES ";Q_T=${op_t};")
      set(parts 2)
    endif()
    math(EXPR want_mma "${d} / 8 * ${parts} + ${d} / 4")
    math(EXPR want_mov "${d} / 4")
    if(shape EQUAL 7)
      string(REGEX MATCH ";VDIM=([0-9]+);" vm ";${defs};")
      math(EXPR want_mma "${d} / 32 * ${parts} + ${CMAKE_MATCH_1} / 16")
      set(want_mov 0)
    elseif(shape GREATER_EQUAL 3)
      math(EXPR want_mma "${d} / 16 * ${parts} + ${d} / 8")
      set(want_mov 4)
    endif()
    file(STRINGS ${OUT}/lanes.ptx mmas REGEX "mma\\.sync\\.aligned\\.m16n8k16\\.row\\.col\\.f32\\.b?f16\\.b?f16\\.f32")
    file(STRINGS ${OUT}/lanes.ptx movs REGEX "movmatrix\\.sync\\.aligned\\.m8n8\\.trans\\.b16")
    list(LENGTH mmas got_mma)
    list(LENGTH movs got_mov)
    if(NOT got_mma EQUAL want_mma OR NOT got_mov EQUAL want_mov)
      message(FATAL_ERROR "variant ${v}: ${got_mma} matrix products and ${got_mov} transposes, expected ${want_mma} and ${want_mov}")
    endif()
  endif()
  file(STRINGS ${OUT}/lanes.ptx ex2s REGEX "ex2\\.approx\\.ftz\\.f32")
  file(STRINGS ${OUT}/lanes.ptx expcalls REGEX "_Z3expf,")
  list(LENGTH ex2s n_ex2)
  list(LENGTH expcalls n_exp)
  # e^x through the exp2 unit (IFA_GEXP): every variant with exponentials (not the max pass) holds it, and only the
  # sink's term and the last split's combine (SINK, FUSED: once a row, not a step) still call exp
  if(NOT ";${defs};" MATCHES ";MAX_PASS=1;" AND n_ex2 EQUAL 0)
    message(FATAL_ERROR "variant ${v}: no ex2.approx.ftz.f32: the exponentials do not go through IFA_GEXP")
  endif()
  if(NOT ";${defs};" MATCHES ";SINK=1;" AND NOT ";${defs};" MATCHES ";FUSED=1;" AND n_exp GREATER 0)
    message(FATAL_ERROR "variant ${v}: ${n_exp} calls of exp where the shapes' exponentials take IFA_GEXP")
  endif()
  file(STRINGS ${OUT}/lanes.ptx spilled REGEX "(ld|st)\\.local\\.(v[24]\\.)?f32")
  if(spilled)
    list(GET spilled 0 first)
    message(FATAL_ERROR "variant ${v}: floats in local (stack) memory, e.g. ${first}")
  endif()
  # stage by stage: the shuffles of a stage share one offset register, so the offset operand changes about once
  # a stage (chain by chain it would change at almost every shuffle)
  set(last "")
  set(changes 0)
  foreach(s ${shuffles})
    if(s MATCHES "shfl\\.sync\\.bfly\\.b32[^,]*,[^,]*, *([^,]+),")
      if(NOT CMAKE_MATCH_1 STREQUAL last)
        math(EXPR changes "${changes} + 1")
      endif()
      set(last "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  if(changes GREATER 10 AND NOT ";${defs};" MATCHES ";MMA=[1-6];") # the matrix shapes: quad and row chains
    message(FATAL_ERROR "variant ${v}: the shuffles' offset changes ${changes} times: not stage by stage")
  endif()
endforeach()
message(STATUS "the lane and matrix shapes' NVIDIA paths compile for nvptx64 in every variant, shuffles stage by stage, e^x by the exp2 unit")
