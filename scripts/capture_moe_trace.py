#!/usr/bin/env python3
"""Capture the expert routing of a Hugging Face MoE model as a tetris-hil trace.

Loads a Mixtral-, DeepSeek-MoE-, Qwen-MoE- or OLMoE-style model with PyTorch and transformers,
hooks every router (gate) module, runs the prompts of a text file (one prompt per line) through
the model, and writes either

  * token-routing JSONL (--format routing-jsonl, the default): one object per token per MoE layer,
    {"layer": L, "problem_id": P, "token_idx": T, "experts": [e1, e2, ...]} (plus "source" with
    --source-ranks), for `tetris-hil trace import --format routing-jsonl`; the model config goes to
    OUT.config.json beside it; or
  * the canonical trace (--format trace): per MoE layer a dispatch matrix (bytes from GPU i to GPU
    j) and its transpose, the combine matrix, computed by the same rules as `trace import`.

On an 8-GPU server (the model sharded over the GPUs by device_map="auto"):

  python3 scripts/capture_moe_trace.py --model mistralai/Mixtral-8x7B-v0.1 \\
      --prompts prompts.txt --max-tokens 2048 --out mixtral.jsonl
  tetris-hil trace import --format routing-jsonl --gpus 8 --experts 8 --hidden 4096 \\
      --dtype-bytes 2 mixtral.jsonl -o mixtral.json

Routing does not depend on where the model runs: the GPU-to-GPU traffic is derived afterwards from
an expert placement (contiguous: experts split in blocks over the GPUs) and each token's source
GPU (its --source-ranks rank, else the tokens of each prompt split contiguously over the GPUs).

Only the pure-Python parts (records_to_trace, the JSONL writer) run without torch.
"""

import argparse
import json
import os
import re
import sys

TRACE_VERSION = 1


# ---------------------------------------------------------------------------------------------
# Routing records → canonical trace (no torch needed). Same rules as tetris-hil's ImportRouting.


def contiguous_placement(experts, gpus):
    """Expert → list of GPUs: blocks of experts per GPU, or replicas when experts < GPUs."""
    if experts >= gpus:
        place = [None] * experts
        for g in range(gpus):
            for e in range(g * experts // gpus, (g + 1) * experts // gpus):
                place[e] = [g]
        return place
    return [list(range(e * gpus // experts, (e + 1) * gpus // experts)) for e in range(experts)]


def round_robin_placement(experts, gpus):
    if experts >= gpus:
        return [[e % gpus] for e in range(experts)]
    return [list(range(e, gpus, experts)) for e in range(experts)]


def records_to_trace(records, gpus, experts, hidden, dtype_bytes, placement=None,
                     one_copy_per_gpu=False, meta_extra=None):
    """Turn routing records (dicts as in the JSONL) into a canonical trace dict.

    A token's GPU is its "source" if present; otherwise the tokens of each (layer, request), in
    token_idx order, are split contiguously: rank r of T goes to GPU floor(r * gpus / T). Each
    (token, expert) routing sends hidden * dtype_bytes bytes to the GPU holding the expert (replica
    source mod replicas); with one_copy_per_gpu a token goes once to a GPU however many of its
    experts live there. Combine is the transpose of dispatch.
    """
    placement = placement or contiguous_placement(experts, gpus)
    unit = hidden * dtype_bytes
    groups = {}
    for i, r in enumerate(records):
        if r.get("source") is None:
            req = r.get("problem_id", r.get("request"))
            groups.setdefault((r["layer"], json.dumps(req)), []).append(i)
    src = [r.get("source") for r in records]
    for idx in groups.values():
        idx.sort(key=lambda i: records[i].get("token_idx", -1))
        for rank, i in enumerate(idx):
            src[i] = rank * gpus // len(idx)
    dispatch, top_k = {}, 0
    for i, r in enumerate(records):
        es = r["experts"]
        if len(set(es)) != len(es) or any(not 0 <= e < experts for e in es):
            raise ValueError("record %d: experts %r are not distinct ids in [0, %d)" % (i, es, experts))
        top_k = max(top_k, len(es))
        d = dispatch.setdefault(r["layer"], [[0] * gpus for _ in range(gpus)])
        s, seen = src[i], set()
        for e in es:
            reps = placement[e]
            g = reps[s % len(reps)]
            if one_copy_per_gpu and g in seen:
                continue
            seen.add(g)
            d[s][g] += unit
    meta = {"gpus": gpus, "hidden_size": hidden, "dtype_bytes": dtype_bytes, "top_k": top_k,
            "experts": experts, "expert_gpus": placement}
    meta.update(meta_extra or {})
    matrices = []
    for layer in sorted(dispatch):
        d = dispatch[layer]
        matrices.append({"layer": layer, "phase": "dispatch", "bytes": d})
        matrices.append({"layer": layer, "phase": "combine", "bytes": [list(c) for c in zip(*d)]})
    return {"version": TRACE_VERSION, "meta": meta, "matrices": matrices}


def write_jsonl(records, path):
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r, separators=(", ", ": ")) + "\n")


# ---------------------------------------------------------------------------------------------
# Capture (torch + transformers).

LAYER_RE = re.compile(r"layers\.(\d+)\.")


def find_routers(model):
    """(layer, module) for every router: Mixtral's block_sparse_moe.gate, DeepSeek/Qwen/OLMoE's
    mlp.gate, and modules named *router."""
    found = []
    for name, mod in model.named_modules():
        m = LAYER_RE.search(name + ".")
        if not m:
            continue
        leaf = name.rsplit(".", 1)[-1]
        if leaf == "gate" and (".block_sparse_moe." in name + "." or ".mlp." in name + "."):
            found.append((int(m.group(1)), mod))
        elif leaf == "router":
            found.append((int(m.group(1)), mod))
    return found


def routing_from_output(out, top_k, experts):
    """Chosen expert ids [tokens, k] from a router's output: logits [tokens, experts] (Mixtral,
    Qwen-MoE, OLMoE: top-k of the logits is top-k of the softmax) or a tuple holding an integer
    index tensor (DeepSeek-MoE's MoEGate returns topk_idx first)."""
    import torch

    outs = out if isinstance(out, (tuple, list)) else (out,)
    for t in outs:
        if torch.is_tensor(t) and not t.is_floating_point() and t.dim() >= 1:
            return t.reshape(-1, t.shape[-1])
    for t in outs:
        if torch.is_tensor(t) and t.is_floating_point() and t.shape[-1] == experts:
            return torch.topk(t.reshape(-1, experts).float(), top_k, dim=-1).indices
    raise RuntimeError("router output %r has neither expert indices nor logits" % (type(out),))


def model_shape(config):
    """(experts, top_k, hidden, shared experts, dense layers) from a transformers config."""
    experts = (getattr(config, "num_local_experts", None) or getattr(config, "n_routed_experts", None)
               or getattr(config, "num_experts", None))
    top_k = getattr(config, "num_experts_per_tok", None) or getattr(config, "moe_top_k", None)
    if not experts or not top_k:
        raise ValueError("config has no expert count / top-k: not an MoE model?")
    shared = getattr(config, "n_shared_experts", 0) or 0
    dense = list(range(getattr(config, "first_k_dense_replace", 0) or 0))
    return int(experts), int(top_k), int(config.hidden_size), int(shared), dense


def capture(model, prompts_ids, source_ranks=0):
    """Run each prompt (a list of token ids) through model and return routing records."""
    import torch

    experts, top_k, _, _, _ = model_shape(model.config)
    routers = find_routers(model)
    if not routers:
        raise RuntimeError("found no router modules (looked for *.block_sparse_moe.gate, *.mlp.gate, *.router)")
    current, hooks = {}, []

    def hook_for(layer):
        def hook(_mod, _inp, out):
            current[layer] = routing_from_output(out, top_k, experts).detach().cpu().tolist()
        return hook

    for layer, mod in routers:
        hooks.append(mod.register_forward_hook(hook_for(layer)))
    records = []
    try:
        device = next(model.parameters()).device
        for p, ids in enumerate(prompts_ids):
            current.clear()
            with torch.no_grad():
                model(torch.tensor([ids], device=device))
            for layer in sorted(current):
                for t, es in enumerate(current[layer]):
                    r = {"layer": layer, "problem_id": p, "token_idx": t, "experts": [int(e) for e in es]}
                    if source_ranks:
                        r["source"] = p % source_ranks
                    records.append(r)
    finally:
        for h in hooks:
            h.remove()
    return records


def config_record(config, name):
    experts, top_k, hidden, shared, dense = model_shape(config)
    return {"model": name, "experts": experts, "top_k": top_k, "hidden_size": hidden,
            "shared_experts": shared, "dense_layers": dense,
            "layers": getattr(config, "num_hidden_layers", None), "model_type": getattr(config, "model_type", None)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="Hugging Face model id or local directory")
    ap.add_argument("--prompts", required=True, help="text file, one prompt per line")
    ap.add_argument("--out", required=True, help="output file (.jsonl or .json)")
    ap.add_argument("--format", choices=["routing-jsonl", "trace"], default="routing-jsonl")
    ap.add_argument("--max-tokens", type=int, default=2048, help="truncate each prompt to this many tokens")
    ap.add_argument("--dtype", default="bfloat16", help="torch dtype of the weights (bfloat16, float16, float32)")
    ap.add_argument("--device-map", default="auto", help='transformers device_map ("auto" shards over all GPUs)')
    ap.add_argument("--trust-remote-code", action="store_true", help="needed for DeepSeek-MoE")
    ap.add_argument("--source-ranks", type=int, default=0, help="give prompt p the source rank p mod N (data parallel)")
    ap.add_argument("--gpus", type=int, default=8, help="--format trace: GPUs")
    ap.add_argument("--dtype-bytes", type=int, default=2, help="--format trace: bytes per element sent")
    args = ap.parse_args(argv)
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as e:
        sys.exit("capture_moe_trace.py needs torch and transformers (pip install torch transformers): %s" % e)

    tok = AutoTokenizer.from_pretrained(args.model, trust_remote_code=args.trust_remote_code)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=getattr(torch, args.dtype),
                                                 device_map=args.device_map, trust_remote_code=args.trust_remote_code)
    model.eval()
    with open(args.prompts) as f:
        prompts = [line.rstrip("\n") for line in f if line.strip()]
    ids = [tok(p)["input_ids"][: args.max_tokens] for p in prompts]
    records = capture(model, ids, args.source_ranks)
    cfg = config_record(model.config, args.model)
    if args.format == "routing-jsonl":
        write_jsonl(records, args.out)
        with open(os.path.splitext(args.out)[0] + ".config.json", "w") as f:
            json.dump(cfg, f, indent=2)
    else:
        params = {"config": json.dumps(cfg, sort_keys=True), "prompts": str(len(prompts)),
                  "max_tokens": str(args.max_tokens)}
        tr = records_to_trace(records, args.gpus, cfg["experts"], cfg["hidden_size"], args.dtype_bytes,
                              meta_extra={"model": args.model, "shared_experts": cfg["shared_experts"],
                                          "dense_layers": cfg["dense_layers"], "placement": "contiguous",
                                          "source": args.prompts, "provenance": "scripts/capture_moe_trace.py",
                                          "params": params})
        with open(args.out, "w") as f:
            json.dump(tr, f)
    print("captured %d routing records from %d prompts, %d router modules" % (len(records), len(ids), len(find_routers(model))))


if __name__ == "__main__":
    main()
