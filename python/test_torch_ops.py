"""Tests of ifa's PyTorch ops (ifa.torch_ops) against PyTorch's own attention: scaled_dot_product_attention with
enable_gqa on the attention shapes of real models, torch.compile(fullgraph=True) over the ops, and a decode loop of
a small Llama-style model whose attention runs on ifa, against the same model on SDPA. Skipped without torch."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the suite runs where torch is installed (scripts/python-package's venv)
    torch = None
if torch is not None:
    import ifa.torch_ops  # noqa: F401  (registers torch.ops.ifa)


def reference(q, k, v, scale, lengths=None, window=0, softcap=0.0):
    """Decode attention in float64 as PyTorch computes it: q (B, N, 1, D), k/v (B, N_kv, S, D); batch b sees its first
    lengths[b] positions (its last window of them with a window), scores soft-capped with softcap. SDPA with
    enable_gqa where it can express the case, a float64 softmax where it cannot (soft-cap)."""
    q, k, v = q.double(), k.double(), v.double()
    b, n, _, d = q.shape
    s = k.shape[2]
    lengths = lengths or [s] * b
    pos = torch.arange(s)
    mask = torch.stack([(pos < n_) & ((pos >= n_ - window) if window else True) for n_ in lengths])[:, None, None, :]
    if not softcap:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale, enable_gqa=True)
    g = n // k.shape[1]
    k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    scores = softcap * torch.tanh(q @ k.transpose(-1, -2) * scale / softcap)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1) @ v


def rel(a, b):
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm())


@unittest.skipIf(torch is None, "no torch")
class TorchOps(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(20261206)

    def check_model(self, name, n, nkv, d, s, dtype=None, window=0, softcap=0.0, lengths=None):
        dtype = dtype or torch.float16
        b = len(lengths) if lengths else 2
        q = torch.randn(b, n, 1, d).to(dtype)
        k = torch.randn(b, nkv, s, d).to(dtype)
        v = torch.randn(b, nkv, s, d).to(dtype)
        out, lse = torch.ops.ifa.incre_flash_attention(q, k, v, num_heads=n, num_key_value_heads=nkv,
                                                       scale_value=d ** -0.5, actual_seq_lengths=lengths,
                                                       window=window, softcap=softcap)
        ref = reference(q, k, v, d ** -0.5, lengths, window, softcap)
        tol = 8e-3 if dtype == torch.bfloat16 else 1e-3
        self.assertEqual(out.dtype, dtype)
        self.assertEqual(tuple(lse.shape), (b, n, 1))
        self.assertLess(rel(out, ref), tol, name)

    def test_models_against_sdpa(self):
        """The attention of Llama-3-8B (32 heads over 8 KV heads, D = 128), Qwen2-7B (28 over 4), Mistral-7B with its
        4096-token window, Gemma-2-9B (16 over 8, D = 256, scores soft-capped at 50), Falcon-40B (128 over 8,
        D = 64), in float16 and bfloat16, with ragged lengths: each within its storage precision of SDPA's."""
        self.check_model("llama3-8b", 32, 8, 128, 1000, lengths=[1000, 517])
        self.check_model("llama3-8b bf16", 32, 8, 128, 640, dtype=torch.bfloat16)
        self.check_model("qwen2-7b", 28, 4, 128, 777, lengths=[777, 300])
        self.check_model("mistral-7b window", 32, 8, 128, 4500, window=4096, lengths=[4500, 4100])
        self.check_model("gemma2-9b softcap", 16, 8, 256, 600, softcap=50.0)
        self.check_model("falcon-40b", 128, 8, 64, 512, lengths=[512, 33])

    def test_paged_and_int8_against_sdpa(self):
        """A paged cache (pool blocks in a shuffled order) against SDPA over the same rows gathered; an int8 cache with
        per-channel scales and offsets against SDPA over the dequantised cache."""
        b, n, nkv, d, bs, s = 2, 32, 8, 128, 16, 128
        q = torch.randn(b, n, 1, d).half()
        k = torch.randn(b, nkv, s, d).half()
        v = torch.randn(b, nkv, s, d).half()
        blocks = s // bs
        table = torch.randperm(b * blocks).reshape(b, blocks)
        pool_k = torch.empty(b * blocks, nkv, bs, d, dtype=torch.float16)  # HND pages: (blocks, N_kv, rows, D)
        pool_v = torch.empty_like(pool_k)
        for bi in range(b):
            for j in range(blocks):
                pool_k[table[bi, j]] = k[bi, :, j * bs:(j + 1) * bs]
                pool_v[table[bi, j]] = v[bi, :, j * bs:(j + 1) * bs]
        out, _ = torch.ops.ifa.incre_flash_attention(q, pool_k, pool_v, num_heads=n, num_key_value_heads=nkv,
                                                     scale_value=d ** -0.5, actual_seq_lengths=[128, 70],
                                                     block_table=table.flatten().tolist(), block_table_cols=blocks,
                                                     block_size=bs)
        self.assertLess(rel(out, reference(q, k, v, d ** -0.5, [128, 70])), 1e-3)
        scale = torch.rand(2, nkv, d) * 0.02 + 0.01
        offset = torch.randint(-3, 4, (2, nkv, d)).float()
        k8 = torch.randint(-127, 128, (b, nkv, s, d), dtype=torch.int8)
        v8 = torch.randint(-127, 128, (b, nkv, s, d), dtype=torch.int8)
        out, _ = torch.ops.ifa.incre_flash_attention(q, k8, v8, num_heads=n, num_key_value_heads=nkv,
                                                     scale_value=d ** -0.5, antiquant_scale=scale,
                                                     antiquant_offset=offset)
        kd = (k8.double() + offset[0, None, :, None, :]) * scale[0, None, :, None, :]
        vd = (v8.double() + offset[1, None, :, None, :]) * scale[1, None, :, None, :]
        self.assertLess(rel(out, reference(q, kd, vd, d ** -0.5)), 1e-3)

    def test_compile_fullgraph(self):
        """torch.compile(fullgraph=True) traces a step of append (declared as mutating its caches) and attention on
        the ops' fake kernels, and the compiled step writes the caches and matches the eager one."""
        b, n, nkv, d, s = 2, 8, 2, 64, 32

        def step(q, kn, vn, kc, vc):
            torch.ops.ifa.kv_cache_append(kn, vn, kc, vc, cache_seq_lengths=[5, 9], num_key_value_heads=nkv)
            out, lse = torch.ops.ifa.incre_flash_attention(q, kc, vc, num_heads=n, num_key_value_heads=nkv,
                                                           scale_value=0.125, actual_seq_lengths=[6, 10])
            return out * 2, lse

        q, kn, vn = torch.randn(b, n, 1, d).half(), torch.randn(b, nkv, 1, d).half(), torch.randn(b, nkv, 1, d).half()
        caches = [torch.randn(b, nkv, s, d).half() for _ in range(2)]
        eager_caches = [c.clone() for c in caches]
        compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
        out, lse = compiled(q, kn, vn, *caches)
        ref_out, ref_lse = step(q, kn, vn, *eager_caches)
        self.assertTrue(torch.equal(caches[0][0, :, 5], kn[0, :, 0]) and torch.equal(caches[1][1, :, 9], vn[1, :, 0]))
        self.assertTrue(torch.equal(caches[0], eager_caches[0]) and torch.equal(caches[1], eager_caches[1]))
        self.assertTrue(torch.equal(out, ref_out) and torch.equal(lse, ref_lse))

    def test_merge_against_logsumexp(self):
        po = torch.randn(3, 10, 64)
        pl = torch.randn(3, 10) * 3
        out, lse = torch.ops.ifa.merge_attention_states(po, pl)
        ref_lse = torch.logsumexp(pl.double(), dim=0)
        ref = (torch.exp(pl.double() - ref_lse)[:, :, None] * po.double()).sum(0)
        self.assertLess(rel(out, ref), 1e-5)
        self.assertLess(float((lse - ref_lse).abs().max()), 1e-5)

    def test_decode_loop_same_tokens_as_sdpa(self):
        """A small random-weight Llama-style model (2 layers, 8 query heads over 2 KV heads, D = 32, RMSNorm, SiLU
        MLP, tied embeddings) decodes 64 tokens greedily after an 8-token prompt twice: its attention on SDPA over a
        growing float16 cache, and on ifa (kv_cache_append into a preallocated float16 cache, then
        incre_flash_attention). Both produce the same tokens and logits within float16 precision; so do a paged int8
        cache quantised by the appends (per head and token, in the pages) under ifa's attention and under SDPA over
        the same cache dequantised."""
        torch.manual_seed(7)
        vocab, hidden, n, nkv, d, layers, steps, prompt = 256, 256, 8, 2, 32, 2, 64, 8
        w = {"emb": torch.randn(vocab, hidden) * 0.5}
        for i in range(layers):
            for name, shape in (("q", (hidden, n * d)), ("k", (hidden, nkv * d)), ("v", (hidden, nkv * d)),
                                ("o", (n * d, hidden)), ("up", (hidden, 512)), ("down", (512, hidden))):
                w["%d%s" % (i, name)] = torch.randn(*shape) / shape[0] ** 0.5

        def rms(x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)

        bs, blocks = 16, 6  # the int8 runs: a paged pool, the sequence's blocks in a shuffled order
        table = [4, 1, 5, 0, 3]

        def dequantised(i, kc, vc, sc, of, length):
            """The int8 pool's first length rows of the sequence, dequantised with the scales the appends wrote."""
            rows = []
            for c in (0, 1):
                pool = (kc, vc)[c].double()
                deq = (pool + of[c][..., None]) * sc[c][..., None]  # (blocks, N_kv, rows, D)
                rows.append(torch.cat([deq[blk] for blk in table], dim=1)[None, :, :length])
            return rows

        def run(use_ifa, int8=False):
            tokens = list(range(1, prompt + 1))
            if int8:
                cache = [[torch.zeros(blocks, nkv, bs, d, dtype=torch.int8) for _ in "kv"] +
                         [torch.zeros(2, blocks, nkv, bs) for _ in "so"] for _ in range(layers)]
            else:
                cache = [[torch.zeros(1, nkv, prompt + steps, d, dtype=torch.float16) for _ in "kv"]
                         for _ in range(layers)]
            logits_all = []
            length = 0
            for t in range(prompt + steps - 1):
                x = w["emb"][tokens[t]][None]
                for i in range(layers):
                    h = rms(x)
                    q = (h @ w["%dq" % i]).view(1, n, 1, d).half()
                    kn = (h @ w["%dk" % i]).view(1, nkv, 1, d).half()
                    vn = (h @ w["%dv" % i]).view(1, nkv, 1, d).half()
                    if int8:
                        kc, vc, sc, of = cache[i]
                        torch.ops.ifa.kv_cache_append(kn, vn, kc, vc, cache_seq_lengths=[length],
                                                      num_key_value_heads=nkv, block_table=table,
                                                      block_table_cols=len(table), block_size=bs,
                                                      antiquant_scale=sc, antiquant_offset=of)
                        if use_ifa:
                            a, _ = torch.ops.ifa.incre_flash_attention(
                                q, kc, vc, num_heads=n, num_key_value_heads=nkv, scale_value=d ** -0.5,
                                actual_seq_lengths=[length + 1], block_table=table, block_table_cols=len(table),
                                block_size=bs, antiquant_scale=sc, antiquant_offset=of, antiquant_mode=3)
                        else:
                            kd, vd = dequantised(i, kc, vc, sc, of, length + 1)
                            a = F.scaled_dot_product_attention(q.double(), kd, vd, enable_gqa=True)
                        x = x + a.float().reshape(1, n * d) @ w["%do" % i]
                        x = x + F.silu(rms(x) @ w["%dup" % i]) @ w["%ddown" % i]
                        continue
                    kc, vc = cache[i]
                    if use_ifa:
                        torch.ops.ifa.kv_cache_append(kn, vn, kc, vc, cache_seq_lengths=[length],
                                                      num_key_value_heads=nkv)
                        a, _ = torch.ops.ifa.incre_flash_attention(q, kc, vc, num_heads=n, num_key_value_heads=nkv,
                                                                   scale_value=d ** -0.5,
                                                                   actual_seq_lengths=[length + 1])
                    else:
                        kc[:, :, length], vc[:, :, length] = kn[:, :, 0], vn[:, :, 0]
                        a = F.scaled_dot_product_attention(q.float(), kc[:, :, :length + 1].float(),
                                                           vc[:, :, :length + 1].float(), enable_gqa=True)
                    x = x + a.float().reshape(1, n * d) @ w["%do" % i]
                    x = x + F.silu(rms(x) @ w["%dup" % i]) @ w["%ddown" % i]
                length += 1
                logits = rms(x) @ w["emb"].T
                if t >= prompt - 1:
                    logits_all.append(logits)
                    tokens.append(int(logits.argmax()))
            return tokens, torch.cat(logits_all)

        ifa_tokens, ifa_logits = run(True)
        self.assertLessEqual(len(ifa.torch_ops._plans), ifa.torch_ops._PLANS_KEPT)  # 2 x 71 steps' plans seen
        sdpa_tokens, sdpa_logits = run(False)
        self.assertEqual(ifa_tokens, sdpa_tokens)
        self.assertEqual(len(ifa_tokens), prompt + steps)
        self.assertLess(rel(ifa_logits, sdpa_logits), 2e-3)
        # a paged int8 cache, quantised by the appends: ifa's attention over it against SDPA over it dequantised
        int8_tokens, int8_logits = run(True, int8=True)
        sdpa_tokens, sdpa_logits = run(False, int8=True)
        self.assertEqual(int8_tokens, sdpa_tokens)
        self.assertLess(rel(int8_logits, sdpa_logits), 2e-3)
        self.assertGreater(rel(int8_logits, ifa_logits), 1e-4)  # the int8 runs did read quantised rows


if __name__ == "__main__":
    unittest.main()
