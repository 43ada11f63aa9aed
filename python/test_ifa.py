"""Tests of the Python binding against NumPy references written here (float64)."""
import os
import re
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ifa  # noqa: E402


def attention_ref(q, k, v, n, nkv, scale, lengths=None, sinks=None, alibi=None, dv=None, q_tokens=None):
    """BSH decode attention in float64: q (B, S1, N*D), k/v (B, S, Nkv*D); query token i of the batch's
    Q = q_tokens[b] (S1 without them) sees the positions < len - Q + 1 + i, tokens from Q on are padding that
    sees nothing; sinks (N) join each head's softmax sum as keys without values; alibi slopes (N) or (B, N)
    add -slope * (len - Q + i - j) to the score of position j; dv: only the first dv of each value row's D
    elements count. Returns out (B, S1, N*dv) and lse (B, N, S1)."""
    b, s1, h = q.shape
    d = h // n
    dv = d if dv is None else dv
    s = k.shape[1]
    q = q.astype(np.float64).reshape(b, s1, n, d)
    k = k.astype(np.float64).reshape(b, s, nkv, d)
    v = v.astype(np.float64).reshape(b, s, nkv, d)[..., :dv]
    out = np.zeros((b, s1, n, dv))
    lse = np.full((b, n, s1), -np.inf)
    for bi in range(b):
        length = s if lengths is None else lengths[bi]
        tokens = s1 if q_tokens is None else q_tokens[bi]
        for i in range(s1):
            end = length - (tokens - 1 - i) if i < tokens else 0
            for hi in range(n):
                kh = hi // (n // nkv)
                z = -np.inf if sinks is None else float(sinks[hi])
                if end <= 0:
                    lse[bi, hi, i] = z
                    continue
                scores = k[bi, :end, kh] @ q[bi, i, hi] * scale
                if alibi is not None:
                    slope = float(alibi[hi] if alibi.ndim == 1 else alibi[bi, hi])
                    scores -= slope * (end - 1 - np.arange(end))
                m = max(scores.max(), z)
                p = np.exp(scores - m)
                total = p.sum() + np.exp(z - m)
                out[bi, i, hi] = p @ v[bi, :end, kh] / total
                lse[bi, hi, i] = m + np.log(total)
    return out.reshape(b, s1, n * dv), lse


def rel_l2(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


class Binding(unittest.TestCase):
    # IFA_TEST_SEED=N draws other inputs, as in the C suites (tests/test_util.c)
    _salt = int(os.environ.get("IFA_TEST_SEED", "0") or 0)  # not a number: ValueError, as the C suites refuse it
    if _salt < 0:
        raise ValueError("IFA_TEST_SEED must be a non-negative decimal integer")
    rng = np.random.default_rng([20261122, _salt] if _salt else 20261122)

    def test_version(self):
        # the loaded library is the release include/ifa/version.h describes (the source tree: $IFA_SOURCE_DIR, else
        # this file's), and an installed package says the same
        src = os.environ.get("IFA_SOURCE_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        with open(os.path.join(src, "include", "ifa", "version.h")) as f:
            header = f.read()
        parts = [re.search(r"#define IFA_VERSION_%s (\d+)" % p, header).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
        self.assertEqual(ifa.version(), ".".join(parts))
        if "site-packages" in ifa.__file__:
            import importlib.metadata
            self.assertEqual(importlib.metadata.version("ifa"), ifa.version())

    def test_definitions(self):
        self.assertEqual(ifa.ops(), ["IncreFlashAttention", "MergeAttentionStates", "KVCacheAppend"])
        d = ifa.definition("IncreFlashAttention")
        self.assertEqual(d["inputs"][0]["name"], "query")
        self.assertIn("float16", d["inputs"][0]["dtypes"])
        self.assertIn("num_heads", [a["name"] for a in d["attrs"]])
        self.assertTrue(any(t.get("written") for t in ifa.definition("KVCacheAppend")["inputs"]))

    def test_attention_gqa_lengths_fp32(self):
        q = self.rng.uniform(-1, 1, (3, 1, 8 * 32)).astype(np.float32)
        k = self.rng.uniform(-1, 1, (3, 200, 2 * 32)).astype(np.float32)
        v = self.rng.uniform(-1, 1, (3, 200, 2 * 32)).astype(np.float32)
        lens = [200, 1, 77]
        r = ifa.run("IncreFlashAttention", query=q, key=k, value=v, num_heads=8, num_key_value_heads=2,
                    scale_value=0.17, actual_seq_lengths=lens, softmax_lse_flag=True)
        out, lse = attention_ref(q, k, v, 8, 2, 0.17, lens)
        self.assertLess(rel_l2(r["attention_out"], out), 1e-5)
        self.assertLess(np.abs(r["softmax_lse"] - lse).max(), 1e-4)

    def test_prepare_then_run(self):
        """prepare builds the kernel sets of every batch size up to 3 and every length up to 200 (at least one:
        the short unsplit plan), refuses what planning refuses, and a run afterwards still matches the reference;
        the other ops have nothing to prepare."""
        q = self.rng.uniform(-1, 1, (3, 1, 8 * 32)).astype(np.float16)
        k = self.rng.uniform(-1, 1, (3, 200, 2 * 32)).astype(np.float16)
        v = self.rng.uniform(-1, 1, (3, 200, 2 * 32)).astype(np.float16)
        sets = ifa.prepare("IncreFlashAttention", query=q, key=k, value=v, num_heads=8, num_key_value_heads=2,
                           actual_seq_lengths=[200, 1, 77])
        self.assertGreaterEqual(sets, 1)
        with self.assertRaises(ifa.Error) as e:
            ifa.prepare("IncreFlashAttention", query=q, key=k, value=v, num_heads=8, num_key_value_heads=3)
        self.assertEqual(e.exception.status, "INVALID_HEADS")
        r = ifa.run("IncreFlashAttention", query=q, key=k, value=v, num_heads=8, num_key_value_heads=2,
                    scale_value=0.17, actual_seq_lengths=[200, 1, 77])
        out, _ = attention_ref(q, k, v, 8, 2, 0.17, [200, 1, 77])
        self.assertLess(rel_l2(r["attention_out"], out), 1e-3)
        parts = self.rng.uniform(-1, 1, (2, 4, 16)).astype(np.float32)
        lses = self.rng.uniform(-1, 1, (2, 4)).astype(np.float32)
        self.assertEqual(ifa.prepare("MergeAttentionStates", partial_outputs=parts, partial_lses=lses), 0)

    def test_attention_fp16_multi_token(self):
        q = self.rng.uniform(-1, 1, (2, 3, 4 * 64)).astype(np.float16)
        k = self.rng.uniform(-1, 1, (2, 300, 4 * 64)).astype(np.float16)
        v = self.rng.uniform(-1, 1, (2, 300, 4 * 64)).astype(np.float16)
        r = ifa.run("IncreFlashAttention", query=q, key=k, value=v, num_heads=4, scale_value=0.125,
                    actual_seq_lengths=[300, 150])
        out, _ = attention_ref(q, k, v, 4, 4, 0.125, [300, 150])
        self.assertEqual(r["attention_out"].dtype, np.float16)
        self.assertLess(rel_l2(r["attention_out"], out), 1e-3)

    def test_attention_cv_template(self):
        """template_mode forces the CLBlast (cv) template; its result matches the reference and the fused one."""
        q = self.rng.uniform(-1, 1, (2, 2, 16 * 32)).astype(np.float32)
        k = self.rng.uniform(-1, 1, (2, 150, 2 * 32)).astype(np.float32)
        v = self.rng.uniform(-1, 1, (2, 150, 2 * 32)).astype(np.float32)
        kw = dict(query=q, key=k, value=v, num_heads=16, num_key_value_heads=2, scale_value=0.2,
                  actual_seq_lengths=[150, 40], softmax_lse_flag=True)
        cv = ifa.run("IncreFlashAttention", template_mode="cv", **kw)
        av = ifa.run("IncreFlashAttention", template_mode="all_vector", **kw)
        out, lse = attention_ref(q, k, v, 16, 2, 0.2, [150, 40])
        self.assertLess(rel_l2(cv["attention_out"], out), 1e-5)
        self.assertLess(np.abs(cv["softmax_lse"] - lse).max(), 1e-4)
        self.assertLess(rel_l2(cv["attention_out"], av["attention_out"]), 1e-5)
        with self.assertRaises(ifa.Error) as e:
            ifa.run("IncreFlashAttention", template_mode="gemm", **kw)
        self.assertIn("template_mode", str(e.exception))

    def test_attention_sinks(self):
        """sinks (gpt-oss): a per-head logit in the softmax sum; an empty batch gives zeros and lse = sink."""
        q = self.rng.uniform(-1, 1, (3, 1, 8 * 32)).astype(np.float32)
        k = self.rng.uniform(-1, 1, (3, 120, 2 * 32)).astype(np.float32)
        v = self.rng.uniform(-1, 1, (3, 120, 2 * 32)).astype(np.float32)
        sinks = self.rng.uniform(-2, 4, 8).astype(np.float32)
        lens = [120, 0, 33]
        for template in ("all_vector", "cv"):
            r = ifa.run("IncreFlashAttention", query=q, key=k, value=v, sinks=sinks, num_heads=8, num_key_value_heads=2,
                        scale_value=0.18, actual_seq_lengths=lens, softmax_lse_flag=True, template_mode=template)
            out, lse = attention_ref(q, k, v, 8, 2, 0.18, lens, sinks)
            self.assertLess(rel_l2(r["attention_out"], out), 1e-5)
            self.assertLess(np.abs(r["softmax_lse"] - lse).max(), 1e-4)
            self.assertTrue((r["attention_out"][1] == 0).all())
        with self.assertRaises(ifa.Error) as e:
            ifa.run("IncreFlashAttention", query=q, key=k, value=v, sinks=sinks[:4], num_heads=8, num_key_value_heads=2)
        self.assertIn("sinks has shape (4)", str(e.exception))

    def test_alibi(self):
        """alibi_slopes (N) and (B, N): -slope times the distance to the query token's position, in both templates,
        with multi-token queries; the wrong shape is refused with the rule."""
        q = self.rng.uniform(-1, 1, (3, 2, 8 * 32)).astype(np.float16)
        k = self.rng.uniform(-1, 1, (3, 150, 2 * 32)).astype(np.float16)
        v = self.rng.uniform(-1, 1, (3, 150, 2 * 32)).astype(np.float16)
        lens = [150, 0, 41]
        for slopes in (self.rng.uniform(0, 0.5, 8), self.rng.uniform(0, 0.5, (3, 8))):
            slopes = slopes.astype(np.float32)
            out, lse = attention_ref(q, k, v, 8, 2, 0.18, lens, alibi=slopes)
            for template in ("all_vector", "cv"):
                r = ifa.run("IncreFlashAttention", query=q, key=k, value=v, alibi_slopes=slopes, num_heads=8,
                            num_key_value_heads=2, scale_value=0.18, actual_seq_lengths=lens, softmax_lse_flag=True,
                            template_mode=template)
                self.assertLess(rel_l2(r["attention_out"], out), 1e-3)
                finite = np.isfinite(lse)
                self.assertTrue((np.isfinite(r["softmax_lse"]) == finite).all())
                self.assertLess(np.abs(r["softmax_lse"][finite] - lse[finite]).max(), 1e-3)
        with self.assertRaises(ifa.Error) as e:
            ifa.run("IncreFlashAttention", query=q, key=k, value=v, alibi_slopes=slopes[:2], num_heads=8,
                    num_key_value_heads=2)
        self.assertIn("alibi_slopes has shape (2, 8)", str(e.exception))

    def test_value_head_dim(self):
        """Multi-head latent attention: value_head_dim D_v < D, the key tensor itself as the value (one latent
        cache, N_kv = 1), in both templates; the output's last dimension is N·D_v; D_v > D is refused."""
        q = self.rng.uniform(-1, 1, (2, 1, 8 * 40)).astype(np.float16)
        k = self.rng.uniform(-1, 1, (2, 96, 40)).astype(np.float16)
        lens = [96, 33]
        out, lse = attention_ref(q, k, k, 8, 1, 0.15, lens, dv=32)
        for template in ("all_vector", "cv"):
            r = ifa.run("IncreFlashAttention", query=q, key=k, value=k, num_heads=8, num_key_value_heads=1,
                        scale_value=0.15, actual_seq_lengths=lens, softmax_lse_flag=True, value_head_dim=32,
                        template_mode=template)
            self.assertEqual(r["attention_out"].shape, (2, 1, 8 * 32))
            self.assertLess(rel_l2(r["attention_out"], out), 1e-3)
            self.assertLess(np.abs(r["softmax_lse"] - lse).max(), 1e-3)
        with self.assertRaises(ifa.Error) as e:
            ifa.run("IncreFlashAttention", query=q, key=k, value=k, num_heads=8, num_key_value_heads=1,
                    value_head_dim=41)
        self.assertIn("value_head_dim = 41 is outside [0, D = 40]", str(e.exception))

    def test_mla_rope_offset(self):
        """DeepSeek's MLA with the rotary part at the end of the latent row (rope_offset): KVCacheAppend rotates
        the trailing 8 of 40 key dims (gptj pairs) as it writes them, IncreFlashAttention the query's, each at its
        own default position; the key cache is also the value (its first 32 dims). Against NumPy's rotation of
        the original rows in float64."""
        b, n, d, dv, off, rows = 2, 8, 40, 32, 32, 50

        def rope(x, pos):
            x = x.astype(np.float64).copy()
            i = np.arange((d - off) // 2)
            ang = np.asarray(pos, dtype=np.float64)[:, None] * 10000.0 ** (-2.0 * i / (d - off))
            c, s = np.cos(ang), np.sin(ang)
            a, bb = x[..., off + 2 * i].copy(), x[..., off + 2 * i + 1].copy()
            x[..., off + 2 * i], x[..., off + 2 * i + 1] = a * c - bb * s, bb * c + a * s
            return x

        kn = self.rng.uniform(-1, 1, (b, rows, d)).astype(np.float32)
        cache = np.zeros((b, 64, d), dtype=np.float32)
        w = ifa.run("KVCacheAppend", key=kn, key_cache=cache, cache_seq_lengths=[0, 0], num_key_value_heads=1,
                    rope_mode="gptj", rope_offset=off)
        kr = np.stack([rope(kn[bi], np.arange(rows)) for bi in range(b)])
        self.assertLess(np.abs(w["key_cache"][:, :rows] - kr).max(), 1e-5)
        self.assertEqual(np.abs(w["key_cache"][:, rows:]).max(), 0)
        q = self.rng.uniform(-1, 1, (b, 1, n * d)).astype(np.float32)
        qr = np.stack([rope(q[bi].reshape(n, d), np.full(n, rows - 1)).reshape(1, n * d) for bi in range(b)])
        out, lse = attention_ref(qr, kr, kr, n, 1, 0.15, [rows, rows], dv=dv)
        for template in ("all_vector", "cv"):
            r = ifa.run("IncreFlashAttention", query=q, key=w["key_cache"], value=w["key_cache"], num_heads=n,
                        num_key_value_heads=1, scale_value=0.15, actual_seq_lengths=[rows, rows], softmax_lse_flag=True,
                        value_head_dim=dv, rope_mode="gptj", rope_offset=off, template_mode=template)
            self.assertLess(rel_l2(r["attention_out"], out), 1e-5)
            self.assertLess(np.abs(r["softmax_lse"] - lse).max(), 1e-5)
        with self.assertRaises(ifa.Error) as e:
            ifa.run("IncreFlashAttention", query=q, key=kn, value=kn, num_heads=n, num_key_value_heads=1,
                    rope_mode="neox", rope_offset=off, rope_dim=10)
        self.assertIn("rope_offset + rope_dim = 32 + 10 exceeds the head dimension D = 40", str(e.exception))

    def test_query_tokens_per_batch(self):
        """actual_seq_lengths_q: speculative batches with 3, 1 and 0 of S1 = 3 query tokens (the padding tokens
        NaN, never read) against the reference, in both templates; their rows are zeros with lse -inf."""
        q = self.rng.uniform(-1, 1, (3, 3, 4 * 16)).astype(np.float16)
        k = self.rng.uniform(-1, 1, (3, 80, 2 * 16)).astype(np.float16)
        v = self.rng.uniform(-1, 1, (3, 80, 2 * 16)).astype(np.float16)
        lens, tokens = [80, 41, 60], [3, 1, 0]
        for bi, t in enumerate(tokens):
            q[bi, t:] = np.nan
        out, lse = attention_ref(q, k, v, 4, 2, 0.25, lens, q_tokens=tokens)
        for template in ("all_vector", "cv"):
            r = ifa.run("IncreFlashAttention", query=q, key=k, value=v, num_heads=4, num_key_value_heads=2,
                        scale_value=0.25, actual_seq_lengths=lens, actual_seq_lengths_q=tokens,
                        softmax_lse_flag=True, template_mode=template)
            self.assertLess(rel_l2(r["attention_out"], out), 1e-3)
            self.assertTrue((r["attention_out"][2] == 0).all() and np.isneginf(r["softmax_lse"][2]).all())
            got = r["softmax_lse"]
            self.assertTrue((np.isneginf(got) == np.isneginf(lse)).all())
            self.assertLess(np.abs(got[np.isfinite(lse)] - lse[np.isfinite(lse)]).max(), 1e-3)
        with self.assertRaises(ifa.Error) as e:
            ifa.run("IncreFlashAttention", query=q, key=k, value=v, num_heads=4, num_key_value_heads=2,
                    actual_seq_lengths=lens, actual_seq_lengths_q=[3, 4, 0])
        self.assertIn("actual_seq_lengths_q[1] = 4 is outside [0, S1 = 3]", str(e.exception))

    def test_float8_conversions(self):
        codes = np.arange(256, dtype=np.uint8)
        values = ifa.from_float8_e4m3fn(codes)
        finite = (codes & 0x7F) != 0x7F
        self.assertTrue(np.isnan(values[~finite]).all())
        self.assertTrue((ifa.to_float8_e4m3fn(values[finite]).data == codes[finite]).all())
        self.assertEqual(list(ifa.to_float8_e4m3fn([1.0625, 1.1875, 3 * 2.0 ** -10, 500, -1e9, np.nan]).data),
                         [0x38, 0x3A, 0x02, 0x7E, 0xFE, 0x7F])

    def test_float8_e5m2_conversions(self):
        codes = np.arange(256, dtype=np.uint8)
        values = ifa.from_float8_e5m2(codes)
        finite = (codes & 0x7C) != 0x7C
        self.assertTrue(np.isinf(values[(codes & 0x7F) == 0x7C]).all())
        self.assertTrue(np.isnan(values[((codes & 0x7C) == 0x7C) & ((codes & 3) != 0)]).all())
        self.assertTrue((ifa.to_float8_e5m2(values[finite]).data == codes[finite]).all())
        # ties to even (1.125 between 1 and 1.25; 3 * 2^-17 between the first two subnormals), saturation, NaN;
        # 1.125 + 2^-11 rounds up, where rounding through float16 first (to 1.125) would then go down to 1
        self.assertEqual(list(ifa.to_float8_e5m2([1.125, 1.375, 3 * 2.0 ** -17, 60000, -1e9, np.nan,
                                                  1.125 + 2.0 ** -11]).data),
                         [0x3C, 0x3E, 0x02, 0x7B, 0xFB, 0x7F, 0x3D])

    def test_dtype_max(self):
        codes = np.arange(256, dtype=np.uint8)
        for name, decode in (("float8_e4m3fn", ifa.from_float8_e4m3fn), ("float8_e5m2", ifa.from_float8_e5m2)):
            values = decode(codes)
            self.assertEqual(ifa.dtype_max(name), values[np.isfinite(values)].max())
        self.assertEqual(ifa.dtype_max("float16"), float(np.finfo(np.float16).max))
        self.assertEqual(ifa.dtype_max("int8"), 127)
        with self.assertRaises(ValueError):
            ifa.dtype_max("float64")

    def check_float8_kv(self, to_float8, from_float8, low, high, scale, unscaled_scale_value):
        """float8 key/value through both templates, with a per-tensor scale (vLLM's k_scale / v_scale), and
        without a scale."""
        q = self.rng.uniform(-1, 1, (2, 1, 8 * 64)).astype(np.float16)
        k = to_float8(self.rng.uniform(low, high, (2, 150, 2 * 64)))
        v = to_float8(self.rng.uniform(low, high, (2, 150, 2 * 64)))
        kf, vf = from_float8(k), from_float8(v)
        scale = np.array(scale, dtype=np.float32)
        for template in ("all_vector", "cv"):
            r = ifa.run("IncreFlashAttention", query=q, key=k, value=v, antiquant_scale=scale, num_heads=8,
                        num_key_value_heads=2, scale_value=0.125, actual_seq_lengths=[150, 61], softmax_lse_flag=True,
                        template_mode=template)
            out, lse = attention_ref(q, kf * scale[0], vf * scale[1], 8, 2, 0.125, [150, 61])
            self.assertLess(rel_l2(r["attention_out"], out), 1e-3)
            self.assertLess(np.abs(r["softmax_lse"] - lse).max(), 1e-2)
        r = ifa.run("IncreFlashAttention", query=q, key=k, value=v, num_heads=8, num_key_value_heads=2,
                    scale_value=unscaled_scale_value)
        out, _ = attention_ref(q, kf, vf, 8, 2, unscaled_scale_value)
        self.assertLess(rel_l2(r["attention_out"], out), 1e-3)

    def test_attention_float8_kv(self):
        self.check_float8_kv(ifa.to_float8_e4m3fn, ifa.from_float8_e4m3fn, -300, 300, [1 / 256, 1 / 128], 1 / 4096)

    def test_attention_float8_e5m2_kv(self):
        self.check_float8_kv(ifa.to_float8_e5m2, ifa.from_float8_e5m2, -3, 3, [0.25, 2.0], 0.125)

    def test_attention_separate_key_value_scales(self):
        """KIVI's pairing through the separate form: int8 keys quantised per channel with zero points (one
        channel an outlier twenty times the others), values per token, each side's scales in its own tensor
        and mode. The output is float64 attention over the dequantised rows within float16 precision, in both
        templates, and the original rows' within int8 precision."""
        b, s, nkv, d, n = 2, 120, 2, 64, 8
        kf = self.rng.uniform(-1, 1, (b, s, nkv * d))
        kf[:, :, 5] *= 20
        vf = self.rng.uniform(-1, 1, (b, s, nkv * d))
        lo, hi = kf.min(axis=(0, 1)), kf.max(axis=(0, 1))
        ks = ((hi - lo) / 255).astype(np.float32)
        kz = (lo / ks + 128).astype(np.float32)  # x = (q + kz) * ks spans [lo, hi] for q in [-128, 127]
        kq = np.clip(np.rint(kf / ks - kz), -128, 127).astype(np.int8)
        vs = (np.abs(vf).max(axis=2) / 127).astype(np.float32)  # (B, S): one scale per token
        vq = np.clip(np.rint(vf / vs[:, :, None]), -127, 127).astype(np.int8)
        kd = (kq + kz.astype(np.float64)) * ks
        vd = vq * vs[:, :, None].astype(np.float64)
        q = self.rng.uniform(-1, 1, (b, 1, n * d)).astype(np.float16)
        want, lse = attention_ref(q, kd, vd, n, nkv, 0.125, [120, 77])
        orig, _ = attention_ref(q, kf, vf, n, nkv, 0.125, [120, 77])
        for template in ("all_vector", "cv"):
            r = ifa.run("IncreFlashAttention", query=q, key=kq, value=vq, key_antiquant_scale=ks,
                        key_antiquant_offset=kz, key_antiquant_mode=0, value_antiquant_scale=vs,
                        value_antiquant_mode=1, num_heads=n, num_key_value_heads=nkv, scale_value=0.125,
                        actual_seq_lengths=[120, 77], softmax_lse_flag=True, template_mode=template)
            self.assertLess(rel_l2(r["attention_out"], want), 1e-3)
            self.assertLess(np.abs(r["softmax_lse"] - lse).max(), 1e-2)
            self.assertLess(rel_l2(r["attention_out"], orig), 2.0 / 127)

    def test_append_kivi_then_attend(self):
        """KVCacheAppend in the separate form: keys quantised with given per-channel scales and zero points
        (read, not written), values online per token and head into value_antiquant_scale; attention over the
        cache in the same modes is within int8 precision of float64 attention over the original rows."""
        b, s, nkv, d, n = 2, 96, 2, 64, 8
        kn = self.rng.uniform(-1, 1, (b, s, nkv * d)).astype(np.float16)
        vn = self.rng.uniform(-1, 1, (b, s, nkv * d)).astype(np.float16)
        ks = np.full(nkv * d, 2.2 / 255, dtype=np.float32)  # each channel spans [-1.1, 1.1]
        kz = (-1.1 / ks + 128).astype(np.float32)
        cache = np.zeros((b, s, nkv * d), dtype=np.int8)
        vs = np.zeros((b, nkv, s), dtype=np.float32)
        w = ifa.run("KVCacheAppend", key=kn, value=vn, key_cache=cache, value_cache=cache.copy(), key_antiquant_scale=ks,
                    key_antiquant_offset=kz, value_antiquant_scale=vs, value_antiquant_offset=vs.copy(),
                    key_antiquant_mode=0, value_antiquant_mode=2, cache_seq_lengths=[0, 0], num_key_value_heads=nkv)
        np.testing.assert_array_equal(w["key_antiquant_scale"], ks)  # given: read, not written
        self.assertTrue(np.all(w["value_antiquant_scale"] > 0))
        q = self.rng.uniform(-1, 1, (b, 1, n * d)).astype(np.float16)
        r = ifa.run("IncreFlashAttention", query=q, key=w["key_cache"], value=w["value_cache"], num_heads=n,
                    num_key_value_heads=nkv, scale_value=0.125, key_antiquant_scale=ks, key_antiquant_offset=kz,
                    key_antiquant_mode=0, value_antiquant_scale=w["value_antiquant_scale"],
                    value_antiquant_offset=w["value_antiquant_offset"], value_antiquant_mode=2)
        out, _ = attention_ref(q, kn, vn, n, nkv, 0.125)
        self.assertLess(rel_l2(r["attention_out"], out), 2.0 / 255)

    def test_flashinfer_layout_names(self):
        """input_layout "NHD" and "HND" are BSND and BNSD: the same results as under ifa's names."""
        q = self.rng.uniform(-1, 1, (2, 8, 1, 64)).astype(np.float16)  # (B, N, S1, D)
        k = self.rng.uniform(-1, 1, (2, 2, 96, 64)).astype(np.float16)  # (B, N_kv, S, D)
        nhd = lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3))  # noqa: E731
        outs = {}
        for alias, name, qq, kv in (("HND", "BNSD", q, k), ("NHD", "BSND", nhd(q), nhd(k))):
            a = ifa.run("IncreFlashAttention", query=qq, key=kv, value=kv, num_heads=8, num_key_value_heads=2,
                        scale_value=0.125, input_layout=alias)["attention_out"]
            b = ifa.run("IncreFlashAttention", query=qq, key=kv, value=kv, num_heads=8, num_key_value_heads=2,
                        scale_value=0.125, input_layout=name)["attention_out"]
            np.testing.assert_array_equal(a, b)
            outs[alias] = a
        np.testing.assert_array_equal(nhd(outs["HND"]), outs["NHD"])

    def test_attention_bfloat16(self):
        qf = self.rng.uniform(-1, 1, (1, 1, 2 * 64)).astype(np.float32)
        kf = self.rng.uniform(-1, 1, (1, 128, 64)).astype(np.float32)
        vf = self.rng.uniform(-1, 1, (1, 128, 64)).astype(np.float32)
        q, k, v = ifa.to_bfloat16(qf), ifa.to_bfloat16(kf), ifa.to_bfloat16(vf)
        r = ifa.run("IncreFlashAttention", query=q, key=k, value=v, num_heads=2, num_key_value_heads=1,
                    scale_value=0.125)
        out, _ = attention_ref(ifa.from_bfloat16(q).reshape(qf.shape), ifa.from_bfloat16(k).reshape(kf.shape),
                               ifa.from_bfloat16(v).reshape(vf.shape), 2, 1, 0.125)
        if "bfloat16" in ifa._TENSOR_ONLY:
            self.assertIsInstance(r["attention_out"], ifa.Tensor)
        else:  # with ml_dtypes, a bfloat16 NumPy array
            self.assertEqual(r["attention_out"].dtype.name, "bfloat16")
        self.assertLess(rel_l2(ifa.from_bfloat16(r["attention_out"]).reshape(out.shape), out), 8e-3)

    def test_merge(self):
        po = self.rng.uniform(-1, 1, (3, 5, 16)).astype(np.float32)
        pl = self.rng.uniform(-4, 4, (3, 5)).astype(np.float32)
        r = ifa.run("MergeAttentionStates", partial_outputs=po, partial_lses=pl, merged_lse_flag=True)
        lse = np.log(np.exp(pl.astype(np.float64)).sum(axis=0))
        out = (np.exp(pl - lse)[:, :, None] * po).sum(axis=0)
        self.assertLess(rel_l2(r["merged_output"], out), 1e-5)
        self.assertLess(np.abs(r["merged_lse"] - lse).max(), 1e-5)

    def test_ml_dtypes_arrays(self):
        """With ml_dtypes, bfloat16 and float8 arrays are NumPy arrays in and out (no Tensor wrapper)."""
        try:
            import ml_dtypes
        except ImportError:
            self.skipTest("no ml_dtypes")
        b, n, nkv, d, s = 1, 4, 2, 64, 40
        q = self.rng.uniform(-1, 1, (b, 1, n * d)).astype(ml_dtypes.bfloat16)
        k = self.rng.uniform(-1, 1, (b, s, nkv * d)).astype(ml_dtypes.bfloat16)
        v = self.rng.uniform(-1, 1, (b, s, nkv * d)).astype(ml_dtypes.bfloat16)
        r = ifa.run("IncreFlashAttention", query=q, key=k, value=v, num_heads=n, num_key_value_heads=nkv,
                    scale_value=0.125)
        self.assertEqual(r["attention_out"].dtype, ml_dtypes.bfloat16)
        out, _ = attention_ref(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), n, nkv, 0.125)
        self.assertLess(rel_l2(r["attention_out"].astype(np.float32), out), 8e-3)
        k8, v8 = k.astype(ml_dtypes.float8_e4m3fn), v.astype(ml_dtypes.float8_e4m3fn)
        r = ifa.run("IncreFlashAttention", query=q.astype(np.float16), key=k8, value=v8, num_heads=n,
                    num_key_value_heads=nkv, scale_value=0.125)
        out, _ = attention_ref(q.astype(np.float32), k8.astype(np.float32), v8.astype(np.float32), n, nkv, 0.125)
        self.assertLess(rel_l2(r["attention_out"], out), 1e-3)

    def test_plan_once_run_many(self):
        """A plan made once runs three steps' new query, key and value of the planned shapes (each against float64);
        a tensor of another shape is refused as PLAN_MISMATCH, and an output given is written in place."""
        b, n, nkv, d, s = 2, 8, 2, 64, 96
        step = ifa.plan("IncreFlashAttention", query=np.empty((b, 1, n * d), np.float16),
                        key=np.empty((b, s, nkv * d), np.float16), value=np.empty((b, s, nkv * d), np.float16),
                        num_heads=n, num_key_value_heads=nkv, scale_value=0.125, actual_seq_lengths=[96, 40],
                        softmax_lse_flag=True)
        for _ in range(3):
            q = self.rng.uniform(-1, 1, (b, 1, n * d)).astype(np.float16)
            k = self.rng.uniform(-1, 1, (b, s, nkv * d)).astype(np.float16)
            v = self.rng.uniform(-1, 1, (b, s, nkv * d)).astype(np.float16)
            r = step.run(query=q, key=k, value=v)
            out, lse = attention_ref(q, k, v, n, nkv, 0.125, lengths=[96, 40])
            self.assertLess(rel_l2(r["attention_out"], out), 1e-3)
            self.assertLess(np.abs(r["softmax_lse"] - lse).max(), 1e-3)
        given = np.zeros((b, 1, n * d), np.float16)
        r = step.run(query=q, key=k, value=v, attention_out=given)
        self.assertIs(r["attention_out"], given)
        self.assertLess(rel_l2(given, out), 1e-3)
        with self.assertRaises(ifa.Error) as e:
            step.run(query=q, key=k[:, :64], value=v)
        self.assertEqual(e.exception.status, "PLAN_MISMATCH")

    def test_host_arrays_in_place_on_a_cpu_device(self):
        """On a CPU device, aligned NumPy arrays (Context.empty) are the kernels' buffers themselves: the output and
        an appended cache are written straight into them; unaligned ones are copied and give the same results."""
        ctx = ifa._default_context()
        if not ctx._host_align:
            self.skipTest("not a CPU device")
        b, n, nkv, d, s = 1, 4, 1, 64, 64
        q = ctx.empty((b, 1, n * d), np.float32)
        k, v = ctx.empty((b, s, nkv * d), np.float32), ctx.empty((b, s, nkv * d), np.float32)
        q[:], k[:], v[:] = (self.rng.uniform(-1, 1, x.shape) for x in (q, k, v))
        self.assertTrue(ctx._zero_copy(q) and ctx._zero_copy(k))
        out = ctx.empty((b, 1, n * d), np.float32)
        ref, _ = attention_ref(q, k, v, n, nkv, 0.125)
        r = ctx.run("IncreFlashAttention", query=q, key=k, value=v, attention_out=out, num_heads=n,
                    num_key_value_heads=nkv, scale_value=0.125)
        self.assertIs(r["attention_out"], out)
        self.assertLess(rel_l2(out, ref), 1e-5)
        odd = np.empty(q.size + 1, np.float32)[1:].reshape(q.shape)  # 4 bytes past an aligned start
        odd[:] = q
        self.assertFalse(ctx._zero_copy(odd))
        r = ctx.run("IncreFlashAttention", query=odd, key=k, value=v, num_heads=n, num_key_value_heads=nkv,
                    scale_value=0.125)
        self.assertLess(rel_l2(r["attention_out"], ref), 1e-5)
        kc, vc = ctx.empty((b, s, nkv * d), np.float32), ctx.empty((b, s, nkv * d), np.float32)
        kc.fill(0), vc.fill(0)
        ctx.run("KVCacheAppend", key=k[:, :3], value=v[:, :3], key_cache=kc, value_cache=vc, cache_seq_lengths=[7],
                num_key_value_heads=nkv)
        np.testing.assert_array_equal(kc[0, 7:10], k[0, :3])
        self.assertFalse(kc[0, :7].any() or kc[0, 10:].any())

    def test_pyopencl_arrays_stay_on_the_device(self):
        """With Context(queue=pyopencl queue), pyopencl arrays go in and come out without a copy: a paged fp16 cache
        on the device takes a step's rows (KVCacheAppend in place), the planned attention reads it and its output
        and LSE come back as device arrays; two partial results merge on the device (MergeAttentionStates)."""
        try:
            import pyopencl as cl
            import pyopencl.array as cla
        except ImportError:
            self.skipTest("no pyopencl (Debian: python3-pyopencl)")
        queue = cl.CommandQueue(cl.create_some_context(interactive=False))
        ctx = ifa.Context(queue=queue)
        b, n, nkv, d, bs, blocks = 2, 8, 2, 64, 16, 8
        lens = [37, 20]
        table = np.array([[5, 1, 7], [2, 6, 0]], dtype=np.int64)
        rows = self.rng.uniform(-1, 1, (b, 40, nkv * d)).astype(np.float16)
        vrows = self.rng.uniform(-1, 1, (b, 40, nkv * d)).astype(np.float16)
        kc = cla.zeros(queue, (blocks, bs, nkv * d), np.float16)
        vc = cla.zeros(queue, (blocks, bs, nkv * d), np.float16)
        append = ctx.plan("KVCacheAppend", key=rows[:, :20], value=vrows[:, :20], key_cache=kc, value_cache=vc,
                          cache_seq_lengths=[0, 0], num_key_value_heads=nkv, block_table=table.ravel(),
                          block_table_cols=3, block_size=bs)
        dev = lambda x: cla.to_device(queue, np.ascontiguousarray(x))  # noqa: E731
        w = append.run(key=dev(rows[:, :20]), value=dev(vrows[:, :20]), key_cache=kc, value_cache=vc)
        self.assertIs(w["key_cache"], kc)
        ctx.run("KVCacheAppend", key=dev(rows[:1, 20:37]), value=dev(vrows[:1, 20:37]), key_cache=kc, value_cache=vc,
                cache_seq_lengths=[20], num_key_value_heads=nkv,
                block_table=table[:1].ravel(), block_table_cols=3, block_size=bs)
        q = self.rng.uniform(-1, 1, (b, 1, n * d)).astype(np.float16)
        attend = ctx.plan("IncreFlashAttention", query=q, key=kc, value=vc, num_heads=n, num_key_value_heads=nkv,
                          scale_value=0.125, actual_seq_lengths=lens, block_table=table.ravel(), block_table_cols=3,
                          block_size=bs, softmax_lse_flag=True)
        r = attend.run(query=dev(q), key=kc, value=vc)
        self.assertIsInstance(r["attention_out"], cla.Array)
        self.assertIsInstance(r["softmax_lse"], cla.Array)
        out, lse = attention_ref(q, rows, vrows, n, nkv, 0.125, lengths=lens)
        self.assertLess(rel_l2(r["attention_out"].get(), out), 1e-3)
        self.assertLess(np.abs(r["softmax_lse"].get() - lse).max(), 1e-3)
        # the cache on the device holds the rows the appends wrote, block by block
        pool = kc.get()
        self.assertTrue(np.array_equal(pool[table[0, 2], 37 - 32 - 1], rows[0, 36]))
        po = cla.to_device(queue, self.rng.uniform(-1, 1, (2, 5, 16)).astype(np.float32))
        pl = cla.to_device(queue, self.rng.uniform(-4, 4, (2, 5)).astype(np.float32))
        m = ctx.run("MergeAttentionStates", partial_outputs=po, partial_lses=pl, merged_lse_flag=True)
        self.assertIsInstance(m["merged_output"], cla.Array)
        plh = pl.get().astype(np.float64)
        mlse = np.log(np.exp(plh).sum(axis=0))
        self.assertLess(rel_l2(m["merged_output"].get(), (np.exp(plh - mlse)[:, :, None] * po.get()).sum(axis=0)),
                        1e-5)
        ctx.close()

    def test_append_writes_the_callers_cache(self):
        """KVCacheAppend updates the caller's cache arrays in place (the returned ones equal them), as FlashInfer's
        append_paged_kv_cache and vLLM's reshape_and_cache_flash do; a read-only cache is refused before any work."""
        b, s, nkv, d = 2, 16, 2, 64
        kn = self.rng.uniform(-1, 1, (b, 3, nkv * d)).astype(np.float16)
        vn = self.rng.uniform(-1, 1, (b, 3, nkv * d)).astype(np.float16)
        kc = np.zeros((b, s, nkv * d), dtype=np.float16)
        vc = np.zeros((b, s, nkv * d), dtype=np.float16)
        w = ifa.run("KVCacheAppend", key=kn, value=vn, key_cache=kc, value_cache=vc, cache_seq_lengths=[5, 0],
                    num_key_value_heads=nkv)
        np.testing.assert_array_equal(kc[0, 5:8], kn[0])
        np.testing.assert_array_equal(vc[1, 0:3], vn[1])
        self.assertFalse(kc[0, :5].any() or kc[0, 8:].any())
        np.testing.assert_array_equal(w["key_cache"], kc)
        frozen = np.zeros_like(kc)
        frozen.flags.writeable = False
        with self.assertRaises(ifa.Error) as e:
            ifa.run("KVCacheAppend", key=kn, value=vn, key_cache=frozen, value_cache=vc, cache_seq_lengths=[0, 0],
                    num_key_value_heads=nkv)
        self.assertIn("key_cache must be a writeable NumPy array", str(e.exception))

    def test_append_int8_paged_then_attend(self):
        """Prefill 100 rows per batch into an int8 paged cache with online quantisation, then attend over it
        with the pages' scales (antiquant_mode 3): the output is within int8 storage precision of the
        float64 attention over the original rows."""
        b, nkv, d, bs, rows = 2, 2, 64, 16, 100
        kn = self.rng.uniform(-1, 1, (b, rows, nkv * d)).astype(np.float16)
        vn = self.rng.uniform(-1, 1, (b, rows, nkv * d)).astype(np.float16)
        blocks = 16
        table = np.array([[3, 7, 1, 12, 0, 9, 14], [2, 15, 4, 10, 6, 11, 8]], dtype=np.int64)
        kc = np.zeros((blocks, bs, nkv * d), dtype=np.int8)
        scales = np.zeros((2, blocks, nkv, bs), dtype=np.float32)
        w = ifa.run("KVCacheAppend", key=kn, value=vn, key_cache=kc, value_cache=kc.copy(), antiquant_scale=scales,
                    antiquant_offset=scales.copy(), cache_seq_lengths=[0, 0], num_key_value_heads=nkv,
                    block_table=table.ravel(), block_table_cols=7, block_size=bs)
        self.assertEqual(set(w), {"key_cache", "value_cache", "antiquant_scale", "antiquant_offset"})
        q = self.rng.uniform(-1, 1, (b, 1, 4 * d)).astype(np.float16)
        r = ifa.run("IncreFlashAttention", query=q, key=w["key_cache"], value=w["value_cache"], num_heads=4,
                    num_key_value_heads=nkv, scale_value=0.125, actual_seq_lengths=[rows, rows],
                    block_table=table.ravel(), block_table_cols=7, block_size=bs,
                    antiquant_scale=w["antiquant_scale"], antiquant_offset=w["antiquant_offset"], antiquant_mode=3)
        out, _ = attention_ref(q, kn, vn, 4, nkv, 0.125)
        self.assertLess(rel_l2(r["attention_out"], out), 2.0 / 255)

    def test_ragged_append(self):
        """new_seq_lengths: batches write 2, 0 and 1 of S1 = 2 new rows into a float16 cache; the written rows
        equal the new rows, every other row of the cache is unchanged."""
        kn = self.rng.uniform(-1, 1, (3, 2, 2 * 16)).astype(np.float16)
        vn = self.rng.uniform(-1, 1, (3, 2, 2 * 16)).astype(np.float16)
        kc = self.rng.uniform(-1, 1, (3, 10, 2 * 16)).astype(np.float16)
        vc = self.rng.uniform(-1, 1, (3, 10, 2 * 16)).astype(np.float16)
        lens, news = [4, 7, 0], [2, 0, 1]
        w = ifa.run("KVCacheAppend", key=kn, value=vn, key_cache=kc, value_cache=vc, cache_seq_lengths=lens,
                    new_seq_lengths=news, num_key_value_heads=2)
        for cache, new, got in ((kc, kn, w["key_cache"]), (vc, vn, w["value_cache"])):
            want = cache.copy()
            for b in range(3):
                want[b, lens[b]:lens[b] + news[b]] = new[b, :news[b]]
            self.assertTrue((got == want).all())

    def test_append_float8_then_attend(self):
        """KVCacheAppend into float8 caches of both formats: rounded as they are (the bytes equal the binding's own
        conversion of the rows), and into a paged cache with a scale per row, then attention over it with the
        pages' scales, within the format's half step (relative) of the float64 attention over the original rows
        (measured: 0.030 e4m3fn, 0.070 e5m2)."""
        b, nkv, d, bs, rows = 2, 2, 64, 16, 100
        kn = self.rng.uniform(-3, 3, (b, rows, nkv * d)).astype(np.float16)
        vn = self.rng.uniform(-3, 3, (b, rows, nkv * d)).astype(np.float16)
        table = np.array([[3, 7, 1, 12, 0, 9, 14], [2, 15, 4, 10, 6, 11, 8]], dtype=np.int64)
        q = self.rng.uniform(-1, 1, (b, 1, 4 * d)).astype(np.float16)
        for name, to_float8, step in (("float8_e4m3fn", ifa.to_float8_e4m3fn, 2.0 ** -4),
                                      ("float8_e5m2", ifa.to_float8_e5m2, 2.0 ** -3)):
            kc = ifa.Tensor(np.zeros((b, rows, nkv * d), dtype=np.uint8), name)
            w = ifa.run("KVCacheAppend", key=kn, value=vn, key_cache=kc,
                        value_cache=ifa.Tensor(kc.data.copy(), name), cache_seq_lengths=[0, 0], num_key_value_heads=nkv)
            self.assertEqual(w["key_cache"].dtype, name)
            self.assertTrue((w["key_cache"].data == to_float8(kn.astype(np.float64)).data).all())
            self.assertTrue((w["value_cache"].data == to_float8(vn.astype(np.float64)).data).all())
            pool = ifa.Tensor(np.zeros((16, bs, nkv * d), dtype=np.uint8), name)
            scales = np.zeros((2, 16, nkv, bs), dtype=np.float32)
            w = ifa.run("KVCacheAppend", key=kn, value=vn, key_cache=pool, value_cache=ifa.Tensor(pool.data.copy(), name),
                        antiquant_scale=scales, cache_seq_lengths=[0, 0], num_key_value_heads=nkv,
                        block_table=table.ravel(), block_table_cols=7, block_size=bs)
            r = ifa.run("IncreFlashAttention", query=q, key=w["key_cache"], value=w["value_cache"], num_heads=4,
                        num_key_value_heads=nkv, scale_value=0.125, actual_seq_lengths=[rows, rows],
                        block_table=table.ravel(), block_table_cols=7, block_size=bs,
                        antiquant_scale=w["antiquant_scale"], antiquant_mode=3)
            out, _ = attention_ref(q, kn, vn, 4, nkv, 0.125)
            self.assertLess(rel_l2(r["attention_out"], out), step, name)

    def test_errors(self):
        q = np.zeros((1, 1, 64), dtype=np.float16)
        k = np.zeros((1, 8, 32), dtype=np.float16)
        with self.assertRaises(ifa.Error) as e:
            ifa.run("IncreFlashAttention", query=q, key=k, value=k, num_heads=1)
        self.assertEqual(e.exception.status, "SHAPE_MISMATCH")
        self.assertIn("key", str(e.exception))
        with self.assertRaises(ifa.Error) as e:
            ifa.run("IncreFlashAttention", query=q, key=k, value=k, num_head=1)
        self.assertEqual(e.exception.status, "INVALID_ATTRIBUTE")
        with self.assertRaises(ifa.Error) as e:
            ifa.run("NoSuchOp")
        self.assertIn("no op is named", str(e.exception))
        with self.assertRaises(ifa.Error) as e:
            ifa.run("IncreFlashAttention", query=q.astype(np.float64), key=k, value=k, num_heads=1)
        self.assertEqual(e.exception.status, "UNSUPPORTED_DTYPE")


if __name__ == "__main__":
    unittest.main()
