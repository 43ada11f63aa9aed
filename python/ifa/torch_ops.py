"""ifa's ops as PyTorch custom ops (torch.library), for a host framework that runs a model in PyTorch:

    import torch, ifa.torch_ops
    out, lse = torch.ops.ifa.incre_flash_attention(q, k, v, num_heads=32, num_key_value_heads=8, scale_value=0.088)
    torch.ops.ifa.kv_cache_append(k_new, v_new, k_cache, v_cache, cache_seq_lengths=[...], num_key_value_heads=8)
    out, lse = torch.ops.ifa.merge_attention_states(partial_outputs, partial_lses)

The ops take CPU tensors (float32, float16, bfloat16; int8 caches with their antiquant scales) and run on ifa's
default device (IFA_DEVICE; PoCL on a CPU, where the tensors' memory is used in place when aligned as the device
asks, else copied). kv_cache_append is declared as mutating its caches (torch.library's mutates_args), and each op
has a fake kernel, so torch.compile(fullgraph=True) traces a model that calls them. A call plans once per
distinct shapes, dtypes and attributes (ifa.Plan; the latest 64 kept) and then only runs.
"""
from collections import OrderedDict
from typing import List, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

import ifa

# the plans of the latest distinct calls, least recently used first: a decode loop's lengths change every step, so
# the cache is bounded and an evicted plan's workspace released at once
_plans = OrderedDict()
_PLANS_KEPT = 64


def _array(t: Tensor):
    """A CPU tensor as ifa takes it, without a copy where it is contiguous: a NumPy view, or an ifa.Tensor of the
    bits for bfloat16."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return ifa.Tensor(t.view(torch.int16).numpy().view(np.uint16), "bfloat16")
    return t.numpy()


def _plan(op: str, tensors: dict, attrs: dict) -> "ifa.Plan":
    key = (op, tuple((n, tuple(t.shape), str(t.dtype)) for n, t in sorted(tensors.items())),
           tuple(sorted((k, tuple(v) if isinstance(v, (list, tuple)) else v) for k, v in attrs.items())))
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = ifa.plan(op, **{n: _array(t) for n, t in tensors.items()}, **attrs)
        if len(_plans) > _PLANS_KEPT:
            _plans.popitem(last=False)[1].close()
    else:
        _plans.move_to_end(key)
    return plan


def _attention_attrs(num_heads, num_key_value_heads, scale_value, input_layout, actual_seq_lengths, block_table,
                     block_table_cols, block_size, window, softcap, antiquant_mode, softmax_lse):
    attrs = dict(num_heads=num_heads, num_key_value_heads=num_key_value_heads, scale_value=scale_value,
                 input_layout=input_layout, softmax_lse_flag=softmax_lse)
    if actual_seq_lengths is not None:
        attrs["actual_seq_lengths"] = list(actual_seq_lengths)
    if block_table is not None:
        attrs.update(block_table=list(block_table), block_table_cols=block_table_cols, block_size=block_size)
    if window:
        attrs["window"] = window
    if softcap:
        attrs["softcap"] = softcap
    if antiquant_mode:
        attrs["antiquant_mode"] = antiquant_mode
    return attrs


def _lse_shape(query: Tensor, num_heads: int, input_layout: str):
    b = query.shape[0]
    s1 = query.shape[2] if input_layout in ("BNSD", "HND") else query.shape[1]
    return (b, num_heads, s1)


@torch.library.custom_op("ifa::incre_flash_attention", mutates_args=(), device_types="cpu")
def incre_flash_attention(query: Tensor, key: Tensor, value: Tensor, num_heads: int, num_key_value_heads: int,
                          scale_value: float, input_layout: str = "BNSD",
                          actual_seq_lengths: Optional[List[int]] = None, block_table: Optional[List[int]] = None,
                          block_table_cols: int = 0, block_size: int = 0, window: int = 0, softcap: float = 0.0,
                          antiquant_scale: Optional[Tensor] = None, antiquant_offset: Optional[Tensor] = None,
                          antiquant_mode: int = 0) -> Tuple[Tensor, Tensor]:
    """IncreFlashAttention (docs/op.md): the output in the query's shape and dtype, and the LSE (B, N, S1) float32."""
    attrs = _attention_attrs(num_heads, num_key_value_heads, scale_value, input_layout, actual_seq_lengths,
                             block_table, block_table_cols, block_size, window, softcap, antiquant_mode, True)
    tensors = dict(query=query, key=key, value=value)
    if antiquant_scale is not None:
        tensors["antiquant_scale"] = antiquant_scale
    if antiquant_offset is not None:
        tensors["antiquant_offset"] = antiquant_offset
    out = torch.empty_like(query)
    lse = torch.empty(_lse_shape(query, num_heads, input_layout), dtype=torch.float32)
    plan = _plan("IncreFlashAttention", tensors, attrs)
    plan.run(**{n: _array(t) for n, t in tensors.items()}, attention_out=_array(out), softmax_lse=lse.numpy())
    return out, lse


@incre_flash_attention.register_fake
def _(query, key, value, num_heads, num_key_value_heads, scale_value, input_layout="BNSD", actual_seq_lengths=None,
      block_table=None, block_table_cols=0, block_size=0, window=0, softcap=0.0, antiquant_scale=None,
      antiquant_offset=None, antiquant_mode=0):
    return torch.empty_like(query), query.new_empty(_lse_shape(query, num_heads, input_layout), dtype=torch.float32)


@torch.library.custom_op("ifa::kv_cache_append",
                         mutates_args=("key_cache", "value_cache", "antiquant_scale", "antiquant_offset"),
                         device_types="cpu")
def kv_cache_append(key: Tensor, value: Tensor, key_cache: Tensor, value_cache: Tensor,
                    cache_seq_lengths: List[int], num_key_value_heads: int, input_layout: str = "BNSD",
                    block_table: Optional[List[int]] = None, block_table_cols: int = 0, block_size: int = 0,
                    antiquant_scale: Optional[Tensor] = None, antiquant_offset: Optional[Tensor] = None) -> None:
    """KVCacheAppend (docs/kv-cache.md): key and value's rows written into the caches in place at each batch's
    cache_seq_lengths (paged through block_table); into an int8 cache quantised on the way, each row's scale and
    offset written into antiquant_scale and antiquant_offset (per head and token: (2, B, N_kv, S), paged
    (2, blocks, N_kv, block_size)), which the attention then takes."""
    attrs = dict(cache_seq_lengths=list(cache_seq_lengths), num_key_value_heads=num_key_value_heads,
                 input_layout=input_layout)
    if block_table is not None:
        attrs.update(block_table=list(block_table), block_table_cols=block_table_cols, block_size=block_size)
    tensors = dict(key=key, value=value, key_cache=key_cache, value_cache=value_cache)
    if antiquant_scale is not None:
        tensors["antiquant_scale"] = antiquant_scale
    if antiquant_offset is not None:
        tensors["antiquant_offset"] = antiquant_offset
    for name in ("key_cache", "value_cache", "antiquant_scale", "antiquant_offset"):
        if name in tensors and not tensors[name].is_contiguous():
            raise ValueError("kv_cache_append writes %s in place: it must be contiguous" % name)
    _plan("KVCacheAppend", tensors, attrs).run(**{n: _array(t) for n, t in tensors.items()})


@kv_cache_append.register_fake
def _(key, value, key_cache, value_cache, cache_seq_lengths, num_key_value_heads, input_layout="BNSD",
      block_table=None, block_table_cols=0, block_size=0, antiquant_scale=None, antiquant_offset=None):
    return None


@torch.library.custom_op("ifa::merge_attention_states", mutates_args=(), device_types="cpu")
def merge_attention_states(partial_outputs: Tensor, partial_lses: Tensor) -> Tuple[Tensor, Tensor]:
    """MergeAttentionStates (docs/op.md): P partial results (P, ..., D) with their LSEs (P, ...) merged into one
    output (..., D) and its LSE."""
    out = partial_outputs.new_empty(partial_outputs.shape[1:])
    lse = torch.empty(partial_lses.shape[1:], dtype=torch.float32)
    tensors = dict(partial_outputs=partial_outputs, partial_lses=partial_lses)
    _plan("MergeAttentionStates", tensors, dict(merged_lse_flag=True)).run(
        **{n: _array(t) for n, t in tensors.items()}, merged_output=_array(out), merged_lse=lse.numpy())
    return out, lse


@merge_attention_states.register_fake
def _(partial_outputs, partial_lses):
    return (partial_outputs.new_empty(partial_outputs.shape[1:]),
            partial_lses.new_empty(partial_lses.shape[1:], dtype=torch.float32))
