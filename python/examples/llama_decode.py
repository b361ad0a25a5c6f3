"""A Llama-architecture model on tcgemm, end to end: greedy decoding with and
without tcgemm (the same model object, patched and unpatched), eager and with
torch.compile(mode="reduce-overhead"), and batch invariance at the level of
each linear layer.

    python3 python/examples/llama_decode.py [--layers 8] [--batch 8] [--new-tokens 64] [--compile]

The model is built from a config with random weights (no download): hidden
2048, intermediate 5632, 16 heads, bf16 (Hugging Face `transformers`). Every
nn.Linear is moved onto tcgemm with `tcgemm.patch_linear`.

Reported: tokens/s of each variant (warmed up at the full generation length,
then timed in alternating rounds, so that neither side profits from caches
the other warmed), whether the greedy tokens agree, the largest logit
difference per decode step between tcgemm and cuBLAS on the same tokens, and
each one's against an fp32 copy of the model (bf16 rounds every layer's
output: both are off from fp32 by about the same, and from each other by
about as much), and, with
--check-invariance, for every linear layer whether a prompt's output rows are
bit-identical alone and inside a batch of different prompts (for layers whose
inputs are identical too: the GEMM's own batch invariance).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import tcgemm


def build_model(layers: int, seed: int) -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=layers, num_attention_heads=16,
                         num_key_value_heads=16, vocab_size=32000, max_position_embeddings=1024,
                         bos_token_id=1, eos_token_id=None, pad_token_id=0)
    return LlamaForCausalLM(config).to("cuda", torch.bfloat16).eval()


def generate(model, prompts: torch.Tensor, new_tokens: int):
    out = model.generate(prompts, attention_mask=torch.ones_like(prompts), max_new_tokens=new_tokens,
                         min_new_tokens=new_tokens, do_sample=False, return_dict_in_generate=True)
    return out


def tokens_per_s(model, prompts: torch.Tensor, new_tokens: int) -> float:
    torch.cuda.synchronize()
    start = time.perf_counter()
    generate(model, prompts, new_tokens)
    torch.cuda.synchronize()
    return prompts.shape[0] * new_tokens / (time.perf_counter() - start)


def set_variant(model, patched: bool) -> None:
    if patched and getattr(model, "_tcgemm_patch", None) is None:
        tcgemm.patch_linear(model)
    elif not patched:
        tcgemm.unpatch_linear(model)


def forced_logits(model, tokens: torch.Tensor, prompt_len: int) -> list[torch.Tensor]:
    """The last position's logits (fp32) after the prompt and after each next token of `tokens`, one decode
    step at a time with a KV cache: the same inputs at every step whatever the model would have picked."""
    from transformers import DynamicCache

    cache = DynamicCache()
    out = []
    with torch.no_grad():
        ids = tokens[:, :prompt_len]
        for step in range(tokens.shape[1] - prompt_len):
            out.append(model(input_ids=ids, past_key_values=cache, use_cache=True).logits[:, -1].float())
            ids = tokens[:, prompt_len + step:prompt_len + step + 1]
    return out


def compare_runs(model, prompts: torch.Tensor, new_tokens: int) -> None:
    """Free-running greedy tokens of both variants, then their logits at every step on the same tokens
    (cuBLAS's), each against an fp32 copy of the model: how far tcgemm and cuBLAS are from each other
    beside how far each is from the fp32 result (the numerics predict the same order for both)."""
    import copy

    outs = {}
    for patched in (False, True):
        set_variant(model, patched)
        outs[patched] = generate(model, prompts, new_tokens).sequences
    same = torch.equal(outs[False], outs[True])
    tokens, prompt_len = outs[False], prompts.shape[1]
    logits = {}
    for patched in (False, True):
        set_variant(model, patched)
        logits[patched] = forced_logits(model, tokens, prompt_len)
    set_variant(model, False)
    reference = copy.deepcopy(model).float()
    exact = forced_logits(reference, tokens, prompt_len)
    del reference

    def per_step(a: list[torch.Tensor], b: list[torch.Tensor]) -> list[float]:
        return [(x - y).abs().max().item() for x, y in zip(a, b)]

    def summary(d: list[float]) -> str:
        return f"median {statistics.median(d):.3g}, max {max(d):.3g}"

    print(f"greedy tokens of the two variants: {'identical' if same else 'differ'}")
    print(f"logits on cuBLAS's tokens, max |tcgemm - cuBLAS| per step: {summary(per_step(logits[True], logits[False]))}")
    for patched in (True, False):
        label = "tcgemm" if patched else "cuBLAS"
        print(f"logits on cuBLAS's tokens, max |{label} - fp32 model| per step: "
              f"{summary(per_step(logits[patched], exact))}")


def check_invariance(model, prompts: torch.Tensor, steps: int, row: int) -> None:
    """Per linear layer: the outputs for prompt `row` alone vs inside the batch, at prefill and each decode step."""
    from transformers import DynamicCache

    def run(batch: torch.Tensor) -> dict[str, list[tuple[torch.Tensor, torch.Tensor]]]:
        seen: dict[str, list[tuple[torch.Tensor, torch.Tensor]]] = {}
        hooks = []
        for name, module in model.named_modules():
            if isinstance(module, torch.nn.Linear):
                def hook(mod, inputs, output, name=name):
                    seen.setdefault(name, []).append((inputs[0].detach().clone(), output.detach().clone()))
                hooks.append(module.register_forward_hook(hook))
        try:
            cache = DynamicCache()
            ids = batch
            with torch.no_grad():
                for _ in range(steps + 1):
                    logits = model(input_ids=ids, past_key_values=cache, use_cache=True).logits
                    ids = logits[:, -1:].argmax(-1)
        finally:
            for h in hooks:
                h.remove()
        return seen

    for patched in (False, True):
        set_variant(model, patched)
        alone = run(prompts[row:row + 1])
        batch = run(prompts)
        layers = same_out = same_in = same_out_given_in = 0
        for name, calls in alone.items():
            layers += 1
            ok_out = ok_in = ok_given = True
            for (x1, y1), (xb, yb) in zip(calls, batch[name]):
                eq_in = torch.equal(x1[0], xb[row])
                eq_out = torch.equal(y1[0], yb[row])
                ok_in &= eq_in
                ok_out &= eq_out
                ok_given &= eq_out or not eq_in
            same_out += ok_out
            same_in += ok_in
            same_out_given_in += ok_given
        label = "tcgemm" if patched else "cuBLAS"
        print(f"batch invariance, {label}: {same_out}/{layers} linear layers give the prompt's rows bit-identical "
              f"alone and in a batch of {prompts.shape[0]} over {steps + 1} steps; {same_in}/{layers} receive "
              f"identical inputs, and where they do, {same_out_given_in}/{layers} give identical outputs")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--prompt-len", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compile", action="store_true", help="also torch.compile(mode='reduce-overhead')")
    parser.add_argument("--check-invariance", action="store_true")
    args = parser.parse_args()

    model = build_model(args.layers, seed=0)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    prompts = torch.randint(2, 32000, (args.batch, args.prompt_len), device="cuda", generator=gen)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, tcgemm {tcgemm.__version__}; "
          f"{args.layers} layers, batch {args.batch}, prompt {args.prompt_len}, {args.new_tokens} new tokens")

    modes = ["eager"] + (["compiled"] if args.compile else [])
    for mode in modes:
        if mode == "compiled":
            # transformers compiles the decode steps itself when the cache is
            # static (generation_config.compile_config; its default mode is
            # "reduce-overhead"), and keeps the prefill eager: the static
            # cache's tensors are created there and marked as static
            # addresses for the CUDA graphs. Compiling model.forward by hand
            # instead also compiles the prefill, where the cache is created
            # inside the graph and never marked: the decode graphs are
            # skipped ("mutated inputs") and the next step reads freed
            # memory (a segfault in inductor's launcher; PyTorch issue
            # 192748). One compiled call for both variants: swapping the
            # modules fails its guards once per variant, and the compiled
            # code of each stays cached for the timed rounds.
            from transformers import CompileConfig

            torch._dynamo.reset()
            model.generation_config.cache_implementation = "static"
            model.generation_config.compile_config = CompileConfig(mode="reduce-overhead")
        results: dict[bool, list[float]] = {False: [], True: []}
        for patched in (False, True):  # warm-up at the full length, each variant (compiled: compiles it)
            set_variant(model, patched)
            for _ in range(2):
                generate(model, prompts, args.new_tokens)
        if mode == "compiled" and getattr(model, "_compiled_call", None) is None:
            # (What generate() compiled, transformers keeps there.)
            raise RuntimeError("transformers did not compile the decode steps: the 'compiled' figures would be eager")
        for r in range(args.rounds):
            for patched in ((False, True) if r % 2 == 0 else (True, False)):
                set_variant(model, patched)
                results[patched].append(tokens_per_s(model, prompts, args.new_tokens))
        ours, theirs = statistics.median(results[True]), statistics.median(results[False])
        print(f"{mode}: tcgemm {ours:.0f} tokens/s, cuBLAS {theirs:.0f} tokens/s ({ours / theirs:.3f}x)")
        model.generation_config.cache_implementation = None
        model.generation_config.compile_config = None

    compare_runs(model, prompts, args.new_tokens)
    if args.check_invariance:
        check_invariance(model, prompts, steps=8, row=min(3, args.batch - 1))
    set_variant(model, False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
