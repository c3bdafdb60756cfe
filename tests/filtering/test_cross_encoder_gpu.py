"""The cross-encoder on a CUDA device: it trains there, scores as the same model does on the CPU,
and saves a model that loads on the CPU. Marked ``gpu``: the default run (and CI) leaves it out;
``python -m pytest -m gpu`` runs it on a machine with a GPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xlnel.config import FilterConfig

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from xlnel.filtering.cross_encoder import CrossEncoderFilter  # noqa: E402

pytestmark = pytest.mark.gpu
NAME = "xlnel.cross_encoder.v1"
FAST = {"lr": 1e-3, "epochs": 2, "batch_size": 8, "dev_fraction": 0.25, "neg_ratio": None,
        "inference_batch_size": 16}


@pytest.fixture(scope="module", autouse=True)
def _cuda() -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")


@pytest.fixture(scope="module")
def trained_on_cuda(tiny_model_dir: Path, corpus, tmp_path_factory: pytest.TempPathFactory):
    docs, cands = corpus
    config = FilterConfig(name=NAME, options={**FAST, "model": str(tiny_model_dir),
                                              "device": "cuda"})
    filt = CrossEncoderFilter(config, "en").fit(docs[:12], cands[:12])
    folder = tmp_path_factory.mktemp("cross_encoder_cuda")
    filt.save(folder)
    return filt, folder


def test_cuda_scores_match_the_cpu_load_of_the_same_model(trained_on_cuda, corpus) -> None:
    filt, folder = trained_on_cuda
    docs, cands = corpus
    on_cpu = CrossEncoderFilter.load(folder, FilterConfig(name=NAME, options={"device": "cpu"}),
                                     "en")
    gpu = np.concatenate(filt.score_batch(docs[12:], cands[12:]))
    cpu = np.concatenate(on_cpu.score_batch(docs[12:], cands[12:]))
    assert gpu.shape == cpu.shape and gpu.size > 0
    np.testing.assert_allclose(gpu, cpu, rtol=0, atol=1e-3)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_inference_on_cuda_stays_close(trained_on_cuda, corpus, dtype) -> None:
    filt, folder = trained_on_cuda
    docs, cands = corpus
    low = CrossEncoderFilter.load(
        folder, FilterConfig(name=NAME, options={"device": "cuda", "inference_dtype": dtype}),
        "en")
    fp32 = np.concatenate(filt.score_batch(docs, cands))
    assert np.abs(fp32 - np.concatenate(low.score_batch(docs, cands))).max() < 0.05
