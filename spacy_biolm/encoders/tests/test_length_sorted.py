"""spacy-biolm.LengthSortedTransformerModel.v1: the same outputs and gradients as TransformerModel.v3
with less padding, and pipelines that save and load with the setting."""

import numpy
import pytest
import spacy
from spacy.training import Example
from thinc.api import Adam

from spacy_biolm.encoders.length_sorted import (
    align_by_offsets,
    length_sorted_chunks,
    length_sorted_forward,
    split_by_doc,
)
from spacy_biolm.testing import REPO

TEXTS = [
    "BRCA1 is a gene .",
    "",
    "Germline mutations in BRCA1 cause hereditary breast cancer and ovarian cancer in the family of the patient .",
    "TP53 .",
    " ".join(["Which drug treats cancer ?"] * 60),  # 300 tokens: several windows of 128
    "Is tamoxifen a drug ?",
]


def test_chunks_minimise_padding_plus_calls_within_the_budget():
    # Sorted: 10 (row 0), 9 (row 2), 3 (row 1), 2 (row 3). With 64 wordpieces a call, two chunks
    # (10+9 padded to 20, 3+2 padded to 6) beat three ({10}, {9,3,2}: 10 + 27) and four.
    chunks = length_sorted_chunks([10, 3, 9, 2], max_batch_tokens=20, call_cost=64)
    assert [c.tolist() for c in chunks] == [[0, 2], [1, 3]]
    # Calls for free: no padding at all, one row per chunk.
    assert [c.tolist() for c in length_sorted_chunks([10, 3, 9, 2], 20, call_cost=0)] == [[0], [2], [1], [3]]
    # A row longer than the budget runs alone; the others still share chunks within the budget.
    lengths = [50, 4, 4, 4, 4, 4]
    chunks = length_sorted_chunks(lengths, max_batch_tokens=12, call_cost=64)
    assert chunks[0].tolist() == [0]
    assert all(max(lengths[i] for i in c) * len(c) <= 12 for c in chunks[1:])
    assert sorted(i for c in chunks for i in c) == list(range(len(lengths)))
    assert length_sorted_chunks([], 100) == []


def _pipeline(encoder, **model_settings):
    """configs/ner.cfg on ``encoder``, with ``model_settings`` for the transformer's model."""
    config = spacy.util.load_config(REPO / "configs" / "ner.cfg", overrides={"paths.encoder": str(encoder)},
                                    interpolate=True)
    config["components"]["transformer"]["model"].update(model_settings)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    gold = nlp.make_doc("Germline mutations in BRCA1 cause hereditary breast cancer .")
    gold.ents = [gold.char_span(34, 58, label="Disease")]
    nlp.initialize(lambda: [Example(nlp.make_doc(gold.text), gold)])
    return nlp


@pytest.fixture(scope="module")
def nlp(tiny_qa_encoder):
    return _pipeline(tiny_qa_encoder)


def _outputs(nlp, texts):
    docs = list(nlp.pipe(texts))
    # An empty Doc gets spacy-transformers' empty TransformerData (no outputs at all).
    return docs, [d._.trf_data.model_output.get("last_hidden_state", numpy.zeros(0)) for d in docs]


def test_sorted_prediction_equals_the_stock_forward(nlp):
    model = nlp.get_pipe("transformer").model
    assert model._func is length_sorted_forward and model.attrs["max_batch_tokens"] == 2048
    model.attrs["max_batch_tokens"] = 40  # tiny chunks: several calls per batch
    sorted_docs, sorted_hidden = _outputs(nlp, TEXTS)
    model.attrs["max_batch_tokens"] = 0  # TransformerModel.v3's own pass
    stock_docs, stock_hidden = _outputs(nlp, TEXTS)
    model.attrs["max_batch_tokens"] = 2048
    for a, b, doc in zip(sorted_hidden, stock_hidden, stock_docs):
        assert a.shape == b.shape
        # Real wordpieces agree; padding positions differ (nothing reads them).
        for row, length in enumerate(doc._.trf_data.wordpieces.lengths if len(doc) else []):
            assert numpy.abs(a[row, :length] - b[row, :length]).max() < 1e-4
    for s, t in zip(sorted_docs, stock_docs):
        assert s._.trf_data.align.lengths.tolist() == t._.trf_data.align.lengths.tolist()
        assert s._.trf_data.align.data.tolist() == t._.trf_data.align.data.tolist()
        sw, tw = s._.trf_data.wordpieces, t._.trf_data.wordpieces
        assert sw.strings == tw.strings and sw.lengths == tw.lengths
        assert (sw.input_ids == tw.input_ids).all() and (sw.attention_mask == tw.attention_mask).all()
        assert [(e.start, e.end, e.label_) for e in s.ents] == [(e.start, e.end, e.label_) for e in t.ents]
    long_doc = sorted_docs[4]
    assert len(long_doc._.trf_data.wordpieces) > 2  # several windows, each one a row


def _training_pass(model, docs, d_seed: int):
    """The encoder's outputs on real wordpieces and every weight's gradient after backpropagating a
    fixed random gradient (zero at padding, as listeners send it) through one training pass."""
    import torch
    from spacy_transformers.data_classes import FullTransformerBatch
    from transformers.file_utils import ModelOutput

    hf_model = model.transformer
    hf_model.zero_grad()
    output, backprop = model.begin_update(docs)
    hidden = output.model_output.last_hidden_state
    mask = torch.as_tensor(numpy.asarray(output.wordpieces.attention_mask), dtype=hidden.dtype).unsqueeze(-1)
    d_hidden = torch.randn(hidden.shape, generator=torch.Generator().manual_seed(d_seed)) * mask
    backprop(FullTransformerBatch(spans=output.spans, wordpieces=output.wordpieces,
                                  model_output=ModelOutput(output_0=d_hidden), align=output.align))
    real = [hidden[row, :length].detach().clone() for row, length in enumerate(output.wordpieces.lengths)]
    return real, {name: p.grad.detach().clone() for name, p in hf_model.named_parameters() if p.grad is not None}


def test_training_on_sorted_chunks_gives_the_stock_outputs_and_gradients(tiny_qa_encoder):
    import torch

    nlp = _pipeline(tiny_qa_encoder)
    model = nlp.get_pipe("transformer").model
    for module in model.transformer.modules():  # dropout off: both passes must be deterministic
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    docs = [nlp.make_doc(t) for t in TEXTS]
    model.attrs["max_batch_tokens"] = 40  # several chunks, one window over the budget
    sorted_hidden, sorted_grads = _training_pass(model, docs, d_seed=0)
    model.attrs["max_batch_tokens"] = 0  # TransformerModel.v3's own pass
    stock_hidden, stock_grads = _training_pass(model, docs, d_seed=0)
    model.attrs["max_batch_tokens"] = 2048
    assert len(sorted_hidden) == len(stock_hidden) > 5
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(sorted_hidden, stock_hidden))
    assert sorted(sorted_grads) == sorted(stock_grads) and len(stock_grads) > 10
    for name, grad in stock_grads.items():
        # float32 sums in another order: an element's error scales with the tensor's largest terms,
        # not its own size (the embeddings' projection has entries near 0 among entries of hundreds).
        scale = float(grad.abs().max())
        assert torch.allclose(sorted_grads[name], grad, atol=1e-5 * max(scale, 1.0), rtol=1e-4), \
            (name, float((sorted_grads[name] - grad).abs().max()), scale)


def test_training_runs_the_chunks_as_one_graph(tiny_qa_encoder, monkeypatch):
    # A backward per chunk computed a dense gradient of the whole embedding matrix for each chunk:
    # the chunks' word embeddings are looked up in one call and backpropagated in one backward.
    import torch

    nlp = _pipeline(tiny_qa_encoder)
    model = nlp.get_pipe("transformer").model
    model.attrs["max_batch_tokens"] = 40  # several chunks
    lookups, encoder_calls, backwards = [], [], []
    model.transformer.get_input_embeddings().register_forward_hook(lambda module, args, out: lookups.append(out.shape))
    model.transformer.register_forward_hook(lambda module, args, out: encoder_calls.append(1))
    stock_backward = torch.autograd.backward
    monkeypatch.setattr(torch.autograd, "backward", lambda *args, **kwargs: (backwards.append(1), stock_backward(*args, **kwargs)))
    _, grads = _training_pass(model, [nlp.make_doc(t) for t in TEXTS], d_seed=0)
    assert len(encoder_calls) > 2 and len(lookups) == 1 and len(backwards) == 1
    assert float(grads["embeddings.word_embeddings.weight"].abs().sum()) > 0


def test_training_updates_and_the_setting_survives_save_and_load(nlp, tmp_path):
    gold = nlp.make_doc("Germline mutations in BRCA1 cause hereditary breast cancer .")
    gold.ents = [gold.char_span(34, 58, label="Disease")]
    before = nlp.get_pipe("transformer").model.transformer.embeddings.word_embeddings.weight.detach().clone()
    optimizer = Adam(0.01)  # the config's schedule starts at 0
    for _ in range(2):  # spacy-transformers applies the encoder's gradients from the 2nd update on
        losses = nlp.update([Example(nlp.make_doc(gold.text), gold)], sgd=optimizer)
    assert losses["ner"] > 0 and losses["transformer"] > 0
    after = nlp.get_pipe("transformer").model.transformer.embeddings.word_embeddings.weight
    assert (after - before).abs().max() > 0  # gradients reached the encoder

    nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    model = loaded.get_pipe("transformer").model
    assert model._func is length_sorted_forward and model.attrs["max_batch_tokens"] == 2048
    _, original = _outputs(nlp, TEXTS[:3])
    _, reloaded = _outputs(loaded, TEXTS[:3])
    assert all(numpy.abs(a - b).max() < 1e-5 for a, b in zip(original, reloaded) if a.size)


def test_a_sourced_listener_gets_its_own_length_sorted_encoder(nlp, tmp_path):
    # As configs/release.cfg sources ner_gene: replace_listeners gives the ner its own encoder,
    # which must keep the length-sorted architecture and save, load and predict as before.
    nlp.to_disk(tmp_path / "source")
    source = spacy.load(tmp_path / "source")
    source.replace_listeners("transformer", "ner", ["model.tok2vec"])
    # In memory already: the ner's own copy of the encoder predicts length-sorted.
    (own,) = [node for node in source.get_pipe("ner").model.walk() if "get_spans" in node.attrs]
    assert own._func is length_sorted_forward and own.attrs["max_batch_tokens"] == 2048
    tok2vec_cfg = source.config["components"]["ner"]["model"]["tok2vec"]
    assert tok2vec_cfg["@architectures"] == "spacy-biolm.LengthSortedTok2VecTransformer.v1"
    assert tok2vec_cfg["max_batch_tokens"] == 2048
    source.remove_pipe("transformer")
    expected = [[(e.start, e.end, e.label_) for e in d.ents] for d in nlp.pipe(TEXTS[:3])]
    assert [[(e.start, e.end, e.label_) for e in d.ents] for d in source.pipe(TEXTS[:3])] == expected
    source.to_disk(tmp_path / "own")
    loaded = spacy.load(tmp_path / "own")
    assert loaded.pipe_names == ["ner"]
    docs = list(loaded.pipe(TEXTS[:3]))
    assert [[(e.start, e.end, e.label_) for e in d.ents] for d in docs] == expected


def test_hidden_states_are_reassembled_and_attentions_refused(tiny_qa_encoder):
    nlp = _pipeline(tiny_qa_encoder, transformer_config={"output_hidden_states": True}, max_batch_tokens=40)
    doc = list(nlp.pipe(TEXTS))[2]
    output = doc._.trf_data.model_output
    assert len(output.hidden_states) == 3  # embeddings + 2 layers
    assert numpy.abs(output.hidden_states[-1] - output.last_hidden_state).max() < 1e-6
    with pytest.raises(ValueError, match="output_attentions"):
        _pipeline(tiny_qa_encoder, transformer_config={"output_attentions": True})
    with pytest.raises(ValueError, match="max_batch_tokens"):
        _pipeline(tiny_qa_encoder, max_batch_tokens=-1)


def test_split_by_doc_gives_the_stock_split(nlp):
    # Empty Docs, a Doc of several windows, and one Doc object twice in the batch.
    docs = [nlp.make_doc(t) for t in TEXTS]
    docs.append(docs[2])
    batch = nlp.get_pipe("transformer").model.predict(docs)
    ours = batch.cached_doc_data
    assert ours is not None and len(ours) == len(docs)
    batch.cached_doc_data = None
    stock = batch.split_by_doc()
    assert [len(d.align) for d in ours] == [len(d) for d in docs]
    for a, b in zip(ours, stock):
        assert a.align.lengths.tolist() == b.align.lengths.tolist() and a.align.data.tolist() == b.align.data.tolist()
        assert a.wordpieces.strings == b.wordpieces.strings
        assert sorted(a.model_output) == sorted(b.model_output)
        for key in a.model_output:
            assert numpy.array_equal(numpy.asarray(a.model_output[key]), numpy.asarray(b.model_output[key]))
    assert split_by_doc(batch)[4].align.data.tolist() == stock[4].align.data.tolist()


def test_alignment_by_offsets_equals_spacy_transformers(nlp):
    from spacy_transformers.align import get_alignment_via_offset_mapping

    tokenizer = nlp.get_pipe("transformer").model.tokenizer
    texts = TEXTS + ["BRCA1,TP53 ; naïve  T-cells\n(IL-6)é", "  leading spaces", "a", "x" * 40 + " y"]
    docs = [nlp.make_doc(t) for t in texts]
    docs.append(docs[-4])  # one Doc object twice
    spans = [span for doc_spans in nlp.get_pipe("transformer").model.attrs["get_spans"](docs) for span in doc_spans]
    offsets = tokenizer([s.text for s in spans], return_offsets_mapping=True, padding="longest",
                        return_tensors="np")["offset_mapping"]
    ours, stock = align_by_offsets(spans, offsets), get_alignment_via_offset_mapping(spans, offsets)
    assert ours.lengths.tolist() == stock.lengths.tolist() and ours.data.tolist() == stock.data.tolist()
    assert ours.data.dtype == stock.data.dtype and len(ours.lengths) == sum(len(d) for d in docs[:-1])
    assert ours.data.size > 0
