#!/usr/bin/env bash
# ctest nvptx_registers: the fused kernels the NVIDIA row plans on an H100 for the peer file's 11 rows (fp16), their
# int8 rows (per-channel scales, two steps in flight: mma_int8=2, the query's words in local memory:
# mma_q_local=1), bf16, float8 and int4 (mma_int4=1), ragged batches (balanced units, the per-batch lengths of a
# serving loop), the lane shape's wider plans (odd D / 8, D = 512, MLA), MLA's latent tile (mma_mla=1) and the
# examples' attention cases, each compiled offline by scripts/nv-regs (clang for nvptx64, CUDA's ptxas for sm_90a):
# none may spill or keep a stack frame (local memory, at every step of the loop on the card). Skipped (77) without
# clang's nvptx64 target, ptxas or libdevice: CI has no CUDA.
#   tests/check_nv_regs.sh NV_REGS IFA_TILING EXAMPLES_DIR
set -u
nv_regs="$1" tiling="$2" examples="$3"
export IFA_TILING="$tiling"
failed=0 count=0
check() { # LABEL ARGS...: one plan
  local label="$1" out rc
  shift
  out="$("$nv_regs" --fail-on-spill --label "$label" "$@" 2>&1)"
  rc=$?
  printf '%s\n' "$out"
  if [ "$rc" = 77 ]; then exit 77; fi
  count=$((count + 1))
  if [ "$rc" != 0 ]; then
    failed=$((failed + 1))
    echo "FAIL ($rc): $label"
  fi
}
for s in 1,32,8,128,8192 1,32,8,128,32768 1,32,8,128,131072 16,32,8,128,8192 64,32,8,128,4096 64,32,8,128,8192 \
         1,32,32,128,32768 32,32,32,128,4096 32,128,8,64,2048 8,64,8,128,16384 4,32,4,256,8192; do
  check "fp16 $s" --shape "$s" --layout BNSD
done
for s in 16,32,8,128,8192 8,64,8,128,16384 4,32,4,256,8192; do
  check "int8 $s" --shape "$s" --layout BNSD --kv-dtype int8
done
for s in 16,32,8,128,8192 8,64,8,128,16384; do
  IFA_TUNING=mma_int8=2 check "int8 mma_int8=2 $s" --shape "$s" --layout BNSD --kv-dtype int8
  IFA_TUNING=mma_q_local=1 check "int8 mma_q_local=1 $s" --shape "$s" --layout BNSD --kv-dtype int8
done
for t in int8 float16; do # D = 256's query words in local memory (mma_q_local since 2026-11-29 (Zen 4))
  IFA_TUNING=mma_q_local=1 check "$t mma_q_local=1 4,32,4,256,8192" --shape 4,32,4,256,8192 --layout BNSD --kv-dtype "$t"
done
check "bf16 16,32,8,128,8192" --shape 16,32,8,128,8192 --layout BNSD --dtype bfloat16
for t in float8_e4m3fn float8_e5m2; do # the matrix shapes' float8 (the NVIDIA row's since 2026-11-27 (H100))
  for s in 16,32,8,128,8192 4,32,4,256,8192; do
    check "$t $s" --shape "$s" --layout BNSD --kv-dtype "$t"
  done
done
for s in 16,32,8,128,8192 4,32,4,256,8192; do # int4 (not yet in the NVIDIA row: mma_int4=1)
  IFA_TUNING=mma_int4=1 check "int4 mma_int4=1 $s" --shape "$s" --layout BNSD --kv-dtype int4
done
IFA_TUNING=mma_float8=2 check "float8_e4m3fn mma_float8=2" --shape 16,32,8,128,8192 --layout BNSD --kv-dtype float8_e4m3fn
for s in 16,32,8,128,8192 4,32,4,256,8192; do # e4m3fn by the card's cvt.rn.f16x2.e4m3x2 (ptxas checks it for sm_90a)
  IFA_TUNING=mma_f8_cvt=1 check "float8_e4m3fn mma_f8_cvt=1 $s" --shape "$s" --layout BNSD --kv-dtype float8_e4m3fn
done
IFA_TUNING=mma_int4=2 check "int4 mma_int4=2" --shape 16,32,8,128,8192 --layout BNSD --kv-dtype int4
for s in 8,64,8,128,16384 4,32,4,256,8192 32,128,8,64,2048; do
  check "ragged fp16 $s" --shape "$s" --layout BNSD --per-batch
done
# the lane shape's plans of 2026-11-29: padded lanes (D = 80, 96, 112), float8, fp32 and int4 K/V, two
# chunks a lane (D = 512, int8 at G = 8: 255 registers) and MLA's three (2 rows a head group)
for ks in float16:4,32,32,80,4096 float16:4,32,8,80,4096 int8:4,32,32,96,4096 float8_e4m3fn:4,32,8,96,4096 \
          float8_e5m2:4,32,32,112,4096 float32:4,32,8,128,4096 int4:4,32,8,128,4096 float16:4,32,8,512,4096 \
          int8:4,64,8,512,4096; do
  check "lanes ${ks%%:*} ${ks#*:}" --shape "${ks#*:}" --layout BNSD --kv-dtype "${ks%%:*}"
done
check "lanes MLA 4,128,1,576,4096" --shape 4,128,1,576,4096 --value-dim 512 --layout BNSD
# the latent tile (mma_mla=1, plan mma 7: 0 in every row until a card times it): MLA at G = 128 and 16 (paged bf16),
# with RoPE, and an e4m3fn cache with per-tensor scales
IFA_TUNING=mma_mla=1 check "MLA tile 4,128,1,576,4096" --shape 4,128,1,576,4096 --value-dim 512 --layout BNSD
IFA_TUNING=mma_mla=1 check "MLA tile paged bf16" "$examples/../tests/mla_tile_cases/paged_bf16.json"
IFA_TUNING=mma_mla=1 check "MLA tile RoPE (two-part query)" "$examples/mla_case.json"
IFA_TUNING=mma_mla=1 check "MLA tile e4m3fn, tensor scales" "$examples/../tests/mla_tile_cases/paged_e4m3fn_tensor_scales.json"
IFA_TUNING=mma_mla=1,mma_f8_cvt=1 check "MLA tile e4m3fn by cvt" --shape 4,128,1,576,4096 --value-dim 512 --layout BNSD \
  --kv-dtype float8_e4m3fn
# speculative decoding's 8-16 query tokens in the lane shape, the query's columns from local memory (16 rows' chunks:
# 254-255 registers offline, at the edge): fp32 D = 128 with 16 tokens, e4m3fn D = 96 with 8 (2 heads a group)
for kt in float32:128:16 float8_e4m3fn:96:8; do
  IFS=: read -r t d q <<< "$kt"
  case_json="$(mktemp --suffix=.json)"
  printf '{"op":"IncreFlashAttention","attrs":{"num_heads":32,"num_key_value_heads":8,"scale_value":0.1,"input_layout":"BSND"},"inputs":{"query":{"shape":[4,%s,32,%s],"dtype":"float16","random":{"seed":1}},"key":{"shape":[4,4096,8,%s],"dtype":"%s","random":{"seed":2}},"value":{"shape":[4,4096,8,%s],"dtype":"%s","random":{"seed":3}}}}' \
    "$q" "$d" "$d" "$t" "$d" "$t" > "$case_json"
  check "lanes $t D = $d S1 = $q" "$case_json"
  rm -f "$case_json"
done
# fp32 K/V's 16-row lane plans in BNSD (8 tokens at G = 2, 16 at G = 1): 2 key rows a step spilled 4-12 bytes; the
# planner takes 1 a step for them (Zen 4, 2026-11-29)
for gq in 2:8 1:16; do
  g=${gq%%:*} q=${gq#*:}
  case_json="$(mktemp --suffix=.json)"
  printf '{"op":"IncreFlashAttention","attrs":{"num_heads":%s,"num_key_value_heads":8,"scale_value":0.1,"input_layout":"BNSD"},"inputs":{"query":{"shape":[16,%s,%s,128],"dtype":"float16","random":{"seed":1}},"key":{"shape":[16,8,512,128],"dtype":"float32","random":{"seed":2}},"value":{"shape":[16,8,512,128],"dtype":"float32","random":{"seed":3}}}}' \
    "$((8 * g))" "$((8 * g))" "$q" > "$case_json"
  check "lanes float32 BNSD G = $g S1 = $q" "$case_json"
  rm -f "$case_json"
done
for f in alibi float8 int8_channel_kv int8_kv kivi mla paged_speculative ragged_speculative rope rope_fp16_partial \
         sample shared_prefix sinks; do
  check "example $f" "$examples/${f}_case.json"
done
# --loop's line: the int8 plan's main loop, with its 32 products a step (two-part query: 8 more than fp16's 24)
out="$("$nv_regs" --loop --label "int8 loop" --shape 16,32,8,128,8192 --layout BNSD --kv-dtype int8 2>&1)"
printf '%s\n' "$out"
count=$((count + 1))
if ! printf '%s\n' "$out" | grep -Eq '^int8 loop: main loop: [0-9]+ PTX instructions a step without moves, 32 matrix products'; then
  failed=$((failed + 1))
  echo "FAIL: int8 loop (--loop's line)"
fi
# tools/sass_hist.py on the fp16 plan's cubin: its 24 products a step are the kernel's 24 HMMA (the opcode table's
# anchor), and its value operands' 32 permutes a step are there
keep="$(mktemp -d)"
NV_REGS_KEEP="$keep" "$nv_regs" --label "fp16 sass" --shape 16,32,8,128,8192 --layout BNSD > /dev/null 2>&1
out="$(python3 "$(dirname "$0")/../tools/sass_hist.py" "$keep/k.cubin" 2>&1)"
rm -rf "$keep"
count=$((count + 1))
if ! printf '%s\n' "$out" | grep -Eq '^ +24  HMMA$' || ! printf '%s\n' "$out" | grep -Eq '^ +3[2-9]  PRMT.imm$'; then
  failed=$((failed + 1))
  printf '%s\n' "$out" | head -20
  echo "FAIL: sass_hist on the fp16 plan (24 HMMA, 32 or more PRMT)"
fi
echo "nvptx_registers: $count plans, $failed failed"
[ "$failed" = 0 ]
