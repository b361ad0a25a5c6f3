"""tcgemm as models use it, beyond one call on one stream: Python threads
each on its own stream with fresh tensors every call,
torch.cuda.make_graphed_callables over a patched model (forward and
backward graphed, replayed on new inputs), a compiled training step under
autocast, a parametrized (weight_norm) tcgemm Linear, tied weights through
patch_linear. Skipped without torch or a GPU tcgemm runs on.
"""

from __future__ import annotations

import threading

import pytest

from conftest import gpu_skip_reason

_skip = gpu_skip_reason()
if _skip:
    pytest.skip(_skip, allow_module_level=True)

import torch  # noqa: E402

import tcgemm  # noqa: E402
import tcgemm.nn  # noqa: E402


def _model(dtype: torch.dtype = torch.float32) -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 32)).to("cuda", dtype)


def test_threads_with_their_own_streams() -> None:
    # Six threads, each on its own stream, 40 calls of a decode-sized M with new tensors each time: every
    # result is the bits of the same call made again on that stream, and of one made on the default stream.
    gen = torch.Generator(device="cuda").manual_seed(3)
    w = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16, generator=gen)
    b = torch.randn(256, device="cuda", dtype=torch.bfloat16, generator=gen)
    inputs = [[torch.randn(1 + (7 * i + t) % 64, 512, device="cuda", dtype=torch.bfloat16, generator=gen)
               for i in range(40)] for t in range(6)]
    results: dict[int, list[torch.Tensor]] = {}
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                results[t] = [tcgemm.linear(x, w, b, "silu") for x in inputs[t]]
            stream.synchronize()
        except BaseException as error:  # noqa: BLE001 (reported below, in the test's thread)
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    for t in range(6):
        for x, y in zip(inputs[t], results[t]):
            assert torch.equal(y, tcgemm.linear(x, w, b, "silu"))


def test_make_graphed_callables_over_a_patched_model() -> None:
    model = tcgemm.patch_linear(_model(torch.bfloat16))
    sample = torch.randn(8, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    graphed = torch.cuda.make_graphed_callables(model, (sample,))
    for _ in range(3):
        x = torch.randn(8, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        y = graphed(x)
        y.float().square().sum().backward()
        x_eager = x.detach().clone().requires_grad_()
        y_eager = model(x_eager)
        y_eager.float().square().sum().backward()
        assert torch.equal(y, y_eager)
        assert torch.equal(x.grad, x_eager.grad)  # the graphed backward, on tcgemm too


def test_compiled_training_step_under_autocast() -> None:
    torch._dynamo.reset()
    model, reference = tcgemm.patch_linear(_model()), _model()
    compiled = torch.compile(model)
    x = torch.randn(16, 64, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y, y_ref = compiled(x), reference(x)
    y.float().square().mean().backward()
    y_ref.float().square().mean().backward()
    assert model[0].fallbacks == 0 and model[2].fallbacks == 0
    for got, want in ((model[0].weight.grad, reference[0].weight.grad), (model[2].bias.grad, reference[2].bias.grad)):
        assert got.dtype == torch.float32
        # Both are autocast gradients of one loss in a half dtype; they differ by roundings, not by more.
        torch.testing.assert_close(got, want, atol=5e-2 * want.abs().max().item(), rtol=5e-2)
    torch._dynamo.reset()


def test_weight_norm_on_a_tcgemm_linear() -> None:
    layer = tcgemm.nn.Linear(64, 32, dtype=torch.bfloat16, device="cuda")
    torch.nn.utils.parametrizations.weight_norm(layer)
    x = torch.randn(4, 64, device="cuda", dtype=torch.bfloat16)
    assert torch.equal(layer(x), tcgemm.linear(x, layer.weight, layer.bias))
    assert layer.fallbacks == 0


def test_tied_weights_stay_tied() -> None:
    first = torch.nn.Linear(64, 64, bias=False).to("cuda", torch.bfloat16)
    second = torch.nn.Linear(64, 64, bias=False).to("cuda", torch.bfloat16)
    second.weight = first.weight
    model = tcgemm.patch_linear(torch.nn.Sequential(first, second))
    assert model[0].weight is model[1].weight
    x = torch.randn(3, 64, device="cuda", dtype=torch.bfloat16)
    assert torch.equal(model(x), tcgemm.linear(tcgemm.linear(x, first.weight), first.weight))
