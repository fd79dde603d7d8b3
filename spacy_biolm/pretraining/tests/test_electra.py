"""Replaced-token detection: masking statistics, labels, tied weights, loss wiring."""

import pytest
import torch

from spacy_biolm.pretraining.electra import (
    ElectraRTD,
    ModelSize,
    ObjectiveSettings,
    _gumbel_sample,
    make_configs,
    mask_for_mlm,
    replaced_token_labels,
)

MASK_ID = 4


def _batch(n_rows=64, length=40, pad_from=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(10, 100, (n_rows, length), generator=g)
    ids[:, 0] = 2  # [CLS]
    attention = torch.ones_like(ids, dtype=torch.bool)
    if pad_from is not None:
        ids[:, pad_from:] = 0
        attention[:, pad_from:] = False
        ids[:, pad_from - 1] = 3  # [SEP]
    else:
        ids[:, -1] = 3
    maskable = attention & (ids != 2) & (ids != 3)
    return ids, attention, maskable


def test_mask_selects_fifteen_percent_of_maskable_positions_per_row():
    ids, attention, maskable = _batch(pad_from=30)
    masked, selected = mask_for_mlm(ids, maskable, MASK_ID, 0.15, 0.15, torch.Generator().manual_seed(1))
    n_maskable = maskable.sum(1)  # 28 per row
    assert torch.equal(selected.sum(1), torch.round(n_maskable * 0.15).long())
    assert not (selected & ~maskable).any(), "specials and padding must never be selected"
    assert torch.equal(masked[~selected], ids[~selected])


def test_masked_positions_become_mask_or_stay_never_random():
    ids, attention, maskable = _batch(n_rows=400, length=100)
    masked, selected = mask_for_mlm(ids, maskable, MASK_ID, 0.15, 0.15, torch.Generator().manual_seed(2))
    at_selected = masked[selected]
    became_mask = at_selected == MASK_ID
    stayed = at_selected == ids[selected]
    assert (became_mask | stayed).all(), "no random replacement in ELECTRA's recipe"
    share_mask = became_mask.float().mean().item()
    assert 0.82 < share_mask < 0.88  # 85% expected over ~5,900 selections


def test_short_rows_still_get_one_masked_position():
    ids, attention, maskable = _batch(n_rows=8, length=5)  # 3 maskable -> round(0.45) = 0 -> 1
    _, selected = mask_for_mlm(ids, maskable, MASK_ID, 0.15, 0.0)
    assert torch.equal(selected.sum(1), torch.ones(8, dtype=torch.long))


def test_selection_is_uniform_over_positions():
    ids, attention, maskable = _batch(n_rows=3000, length=22)
    _, selected = mask_for_mlm(ids, maskable, MASK_ID, 0.15, 0.0, torch.Generator().manual_seed(3))
    per_position = selected[:, 1:-1].float().mean(0)  # 20 maskable positions, 3 selected each row
    assert torch.allclose(per_position, torch.full_like(per_position, 0.15), atol=0.025)


def test_replaced_token_labels_count_sampled_originals_as_original():
    original = torch.tensor([[2, 10, 11, 12, 3, 0]])
    corrupted = torch.tensor([[2, 10, 50, 12, 3, 0]])  # pos 1 sampled back to 10, pos 2 replaced
    attention = torch.tensor([[1, 1, 1, 1, 1, 0]])
    labels = replaced_token_labels(original, corrupted, attention)
    assert labels.tolist() == [[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]]


def test_generator_is_a_quarter_of_the_discriminator():
    disc, gen = make_configs(ModelSize(), vocab_size=1000, pad_id=0)
    assert (disc.hidden_size, disc.num_attention_heads, disc.intermediate_size) == (256, 4, 1024)
    assert (gen.hidden_size, gen.num_attention_heads, gen.intermediate_size) == (64, 1, 256)
    assert gen.embedding_size == disc.embedding_size == 128


def _micro_model():
    size = ModelSize(embedding_size=16, hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64,
                     generator_fraction=0.5, max_position_embeddings=64)
    return ElectraRTD(*make_configs(size, vocab_size=120, pad_id=0))


def test_embeddings_are_tied_and_stay_tied_after_an_update():
    torch.manual_seed(0)
    model = _micro_model()
    shared = model.discriminator.electra.embeddings
    assert model.generator.electra.embeddings is shared
    assert model.generator.generator_lm_head.weight is shared.word_embeddings.weight
    ids, attention, maskable = _batch(n_rows=4, length=16)
    ids = ids % 120
    before = shared.word_embeddings.weight.detach().clone()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(ids, attention, maskable, MASK_ID, ObjectiveSettings())["loss"].backward()
    optimizer.step()
    assert not torch.equal(before, shared.word_embeddings.weight)
    assert model.generator.generator_lm_head.weight is shared.word_embeddings.weight
    # One parameter set, not two copies: the tied tensors appear once in parameters().
    n_unique = len({id(p) for p in model.parameters()})
    assert n_unique == len(list(model.parameters()))


def test_generator_vocabulary_head_runs_on_masked_positions_only():
    torch.manual_seed(0)
    model = _micro_model()
    seen = []
    model.generator.generator_lm_head.register_forward_hook(lambda m, i, o: seen.append(i[0].shape[0]))
    ids, attention, maskable = _batch(n_rows=4, length=40)
    ids = ids % 120
    model(ids, attention, maskable, MASK_ID, ObjectiveSettings(), torch.Generator().manual_seed(0))
    assert seen == [4 * round(38 * 0.15)]


def test_loss_is_generator_plus_weighted_discriminator():
    torch.manual_seed(0)
    model = _micro_model()
    ids, attention, maskable = _batch(n_rows=4, length=16)
    out = model(ids % 120, attention, maskable, MASK_ID, ObjectiveSettings(disc_weight=50.0))
    assert out["loss"].item() == pytest.approx(out["gen_loss"].item() + 50.0 * out["disc_loss"].item(), rel=1e-5)
    assert 0.0 <= out["disc_acc"].item() <= 1.0


def _generator_grads(disc_weight: float):
    torch.manual_seed(0)
    model = _micro_model()
    ids, attention, maskable = _batch(n_rows=2, length=16)
    torch.manual_seed(1)  # same dropout in both runs
    out = model(ids % 120, attention, maskable, MASK_ID, ObjectiveSettings(disc_weight=disc_weight),
                torch.Generator().manual_seed(0))
    out["loss"].backward()
    return [p.grad.clone() for p in model.generator.electra.encoder.parameters()]


def test_discriminator_loss_sends_no_gradient_into_the_generator_body():
    # Sampling is not differentiable (ELECTRA trains the generator by MLM only): the
    # generator's own layers get the same gradient whatever the discriminator's weight.
    for with_disc, without in zip(_generator_grads(50.0), _generator_grads(0.0)):
        assert torch.allclose(with_disc, without, atol=1e-7)


def test_gumbel_sampling_follows_the_distribution():
    logits = torch.log(torch.tensor([[0.7, 0.2, 0.1]])).repeat(20000, 1)
    samples = _gumbel_sample(logits, torch.Generator().manual_seed(0))
    freq = torch.bincount(samples, minlength=3).float() / len(samples)
    assert torch.allclose(freq, torch.tensor([0.7, 0.2, 0.1]), atol=0.015)


def test_sdpa_attention_matches_eager_attention_with_padding():
    from transformers import ElectraConfig, ElectraForPreTraining

    from spacy_biolm.pretraining.attention import ElectraSdpaSelfAttention, use_sdpa_attention

    torch.manual_seed(0)
    config = ElectraConfig(vocab_size=300, embedding_size=16, hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=4, intermediate_size=64)
    eager = ElectraForPreTraining(config).eval()
    sdpa = ElectraForPreTraining(config).eval()
    sdpa.load_state_dict(eager.state_dict())
    assert use_sdpa_attention(sdpa) == 2
    assert all(type(layer.attention.self) is ElectraSdpaSelfAttention for layer in sdpa.electra.encoder.layer)
    assert sdpa.state_dict().keys() == eager.state_dict().keys()  # exports stay standard ELECTRA
    ids = torch.randint(5, 300, (3, 20))
    attention = torch.ones_like(ids)
    attention[1, 12:] = 0
    attention[2, 3:] = 0
    expected, got = eager(ids, attention_mask=attention).logits, sdpa(ids, attention_mask=attention).logits
    assert torch.allclose(expected, got, atol=1e-5)
    # Gradients agree too.
    expected.sum().backward()
    got.sum().backward()
    for (name, a), b in zip(eager.named_parameters(), sdpa.parameters()):
        assert torch.allclose(a.grad, b.grad, atol=1e-4), name
