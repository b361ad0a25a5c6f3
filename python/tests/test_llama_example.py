"""python/examples/llama_decode.py, 2 layers: a Llama-architecture model
(transformers, random weights) generates with every nn.Linear on tcgemm and
without, and says how they compare. Skipped without a GPU tcgemm runs on or
without transformers (on a machine without network access, install it from
wheels brought along)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO, gpu_skip_reason

_skip = gpu_skip_reason()
if _skip:
    pytest.skip(_skip, allow_module_level=True)
pytest.importorskip("transformers", reason="transformers is not installed")


def test_two_layer_model_generates_on_tcgemm() -> None:
    result = subprocess.run([sys.executable, str(REPO / "python" / "examples" / "llama_decode.py"), "--layers", "2",
                             "--batch", "2", "--new-tokens", "8", "--rounds", "1", "--check-invariance"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "eager: tcgemm" in out and "tokens/s" in out, out
    assert "logits on cuBLAS's tokens, max |tcgemm - cuBLAS| per step" in out, out
    # On the same tokens, tcgemm's logits are about as far from an fp32 copy of the model as cuBLAS's are
    # (both round every layer's output to bf16): the largest per-step error within 2x of cuBLAS's.
    def largest(label: str) -> float:
        line = next(l for l in out.splitlines() if l.startswith(f"logits on cuBLAS's tokens, max |{label} - fp32"))
        return float(line.rsplit("max ", 1)[1])
    assert largest("tcgemm") <= 2.0 * largest("cuBLAS"), out
    # tcgemm's own promise: wherever a linear layer's inputs are the same, so are its output rows.
    line = next(l for l in out.splitlines() if l.startswith("batch invariance, tcgemm"))
    counted = line.split("where they do, ")[1].split(" ")[0]
    given, layers = counted.split("/")
    assert int(layers) > 0, f"no layer saw the same inputs alone and in the batch: nothing compared: {line}"
    assert given == layers, line
