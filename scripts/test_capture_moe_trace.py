#!/usr/bin/env python3
"""Tests for capture_moe_trace.py: python3 scripts/test_capture_moe_trace.py

The routing-to-matrix rules run everywhere and are checked against the hand-worked case of
schedules/trace (and its golden file, so Python and Go agree). The capture itself needs torch and
transformers: it runs a tiny randomly initialised Mixtral-style model, and is skipped with a
message where those are not installed.
"""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import capture_moe_trace as cap  # noqa: E402

ROUTING = os.path.join(HERE, "..", "schedules", "trace", "testdata", "routing", "small.jsonl")
GOLDEN = os.path.join(HERE, "..", "schedules", "trace", "testdata", "golden", "routing-small.json")

try:
    import torch  # noqa: F401
    import transformers  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def load_records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class RecordsToTrace(unittest.TestCase):
    def test_hand_worked(self):
        # Experts 0, 1 on GPU 0 and 2, 3 on GPU 1; 8 bytes per routing; see the Go test.
        tr = cap.records_to_trace(load_records(ROUTING), gpus=2, experts=4, hidden=4, dtype_bytes=2)
        self.assertEqual(tr["matrices"][0]["bytes"], [[8, 24], [24, 8]])
        self.assertEqual(tr["matrices"][1]["bytes"], [[8, 24], [24, 8]])
        self.assertEqual(tr["matrices"][2]["bytes"], [[0, 0], [16, 0]])
        self.assertEqual(tr["matrices"][3]["bytes"], [[0, 16], [0, 0]])
        one = cap.records_to_trace(load_records(ROUTING), 2, 4, 4, 2, one_copy_per_gpu=True)
        self.assertEqual(one["matrices"][0]["bytes"], [[8, 16], [16, 8]])

    def test_agrees_with_go_importer(self):
        with open(GOLDEN) as f:
            go = json.load(f)
        py = cap.records_to_trace(load_records(ROUTING), 2, 4, 4, 2)
        self.assertEqual([m["bytes"] for m in py["matrices"]], [m["bytes"] for m in go["matrices"]])
        self.assertEqual(py["meta"]["expert_gpus"], go["meta"]["expert_gpus"])

    def test_row_sums(self):
        # 40 tokens of one request, top-2, on 4 GPUs: every row sends 10 x 2 x 16 x 2 bytes.
        recs = [{"layer": 0, "token_idx": t, "experts": [t % 8, (t + 3) % 8]} for t in range(40)]
        tr = cap.records_to_trace(recs, gpus=4, experts=8, hidden=16, dtype_bytes=2)
        for row in tr["matrices"][0]["bytes"]:
            self.assertEqual(sum(row), 10 * 2 * 16 * 2)

    def test_placements(self):
        self.assertEqual(cap.contiguous_placement(6, 4), [[0], [1], [1], [2], [3], [3]])
        self.assertEqual(cap.contiguous_placement(2, 4), [[0, 1], [2, 3]])
        self.assertEqual(cap.round_robin_placement(2, 5), [[0, 2, 4], [1, 3]])

    def test_rejects_bad_experts(self):
        with self.assertRaises(ValueError):
            cap.records_to_trace([{"layer": 0, "experts": [1, 1]}], 2, 4, 4, 2)
        with self.assertRaises(ValueError):
            cap.records_to_trace([{"layer": 0, "experts": [4]}], 2, 4, 4, 2)


@unittest.skipUnless(HAVE_TORCH, "torch and transformers are not installed here: the capture test "
                     "runs where they are (pip install torch transformers)")
class CaptureTinyMixtral(unittest.TestCase):
    def setUp(self):
        from transformers import MixtralConfig, MixtralForCausalLM

        torch.manual_seed(0)
        self.cfg = MixtralConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                 num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
                                 num_experts_per_tok=2, max_position_embeddings=64)
        self.model = MixtralForCausalLM(self.cfg).eval()

    def test_records_match_the_models_own_routing(self):
        prompts = [[1, 5, 9, 2, 7], [3, 3, 8]]
        recs = cap.capture(self.model, prompts)
        self.assertEqual(len(recs), (5 + 3) * 2)  # every token at every layer
        with torch.no_grad():
            out = self.model(torch.tensor([prompts[0]]), output_router_logits=True)
        for layer, logits in enumerate(out.router_logits):
            want = torch.topk(logits, 2, dim=-1).indices.tolist()
            got = [r["experts"] for r in recs if r["problem_id"] == 0 and r["layer"] == layer]
            self.assertEqual(got, want)

    def test_trace_row_sums(self):
        recs = cap.capture(self.model, [[1, 2, 3, 4], [5, 6, 7, 8]], source_ranks=2)
        tr = cap.records_to_trace(recs, gpus=2, experts=4, hidden=32, dtype_bytes=2)
        for m in tr["matrices"][::2]:
            for row in m["bytes"]:
                self.assertEqual(sum(row), 4 * 2 * 32 * 2)

    def test_main_writes_jsonl_and_config(self):
        with tempfile.TemporaryDirectory() as d:
            self.model.save_pretrained(d)
            recs = cap.capture(self.model, [[1, 2, 3]])
            out = os.path.join(d, "r.jsonl")
            cap.write_jsonl(recs, out)
            self.assertEqual(load_records(out), recs)
            self.assertEqual(cap.config_record(self.cfg, "tiny")["experts"], 4)


if __name__ == "__main__":
    unittest.main(verbosity=2)
