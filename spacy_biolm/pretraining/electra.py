"""ELECTRA replaced-token detection (Clark et al. 2020), as used for Bio-ELECTRA.

A small generator (masked LM) fills masked positions with samples; the discriminator learns to
tell, for every token, whether it is the original or a replacement. Both are Hugging Face
modules so the discriminator exports as a standard ELECTRA directory, but the generator's
vocabulary projection runs on the masked positions only (15% of tokens), not on every token.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Tuple

import torch
from torch import nn
from torch.nn import functional as F
from transformers import ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining

__all__ = [
    "ModelSize",
    "MaskingSettings",
    "ObjectiveSettings",
    "make_configs",
    "generator_config",
    "mask_for_mlm",
    "replaced_token_labels",
    "ElectraRTD",
]


@dataclass
class ModelSize:
    """Encoder shape. ELECTRA: the discriminator's; the generator takes ``generator_fraction``
    of its width. ALBERT: ``num_layers`` layers sharing the weights of ``num_hidden_groups``."""

    architecture: str = "electra"  # or "albert"
    # "sdpa" (fused scaled-dot-product attention) or "eager" (transformers' matmul/softmax).
    attention: str = "sdpa"
    # Width of the token embeddings; projected to hidden_size when it differs.
    embedding_size: int = 128
    hidden_size: int = 256
    num_layers: int = 12
    # hidden_size must divide into num_heads heads.
    num_heads: int = 4
    intermediate_size: int = 1024
    # ELECTRA: the generator's share of the discriminator's width, heads and FFN (paper: 1/4).
    generator_fraction: float = 0.25
    # The longest sequence the encoder accepts (corpus.max_seq_length may not exceed it).
    max_position_embeddings: int = 512
    dropout: float = 0.1
    # ALBERT: how many distinct weight sets the layers share (1 = all layers one set).
    num_hidden_groups: int = 1


@dataclass
class MaskingSettings:
    """What every masked-LM objective shares: the share of each sequence's maskable positions
    selected for prediction (at least one per sequence)."""

    mask_prob: float = 0.15


@dataclass
class ObjectiveSettings(MaskingSettings):
    """The ``[objective]`` section for ELECTRA."""

    # Of the selected positions, this share keeps its original token instead of [MASK]
    # (ELECTRA's reference recipe uses no random replacement).
    keep_prob: float = 0.15
    # Weight of the discriminator's RTD loss next to the generator's MLM loss (ELECTRA: 50).
    disc_weight: float = 50.0
    # Sampling temperature of the generator's replacements.
    temperature: float = 1.0


def make_configs(size: ModelSize, vocab_size: int, pad_id: int) -> Tuple[ElectraConfig, ElectraConfig]:
    """(discriminator, generator) configs; embeddings are shared, so both use the same size."""
    disc = ElectraConfig(
        vocab_size=vocab_size,
        embedding_size=size.embedding_size,
        max_position_embeddings=size.max_position_embeddings,
        hidden_dropout_prob=size.dropout,
        attention_probs_dropout_prob=size.dropout,
        pad_token_id=pad_id,
        hidden_size=size.hidden_size,
        num_hidden_layers=size.num_layers,
        num_attention_heads=size.num_heads,
        intermediate_size=size.intermediate_size,
    )
    return disc, generator_config(disc, size.generator_fraction)


def generator_config(disc: ElectraConfig, fraction: float) -> ElectraConfig:
    """The generator of discriminator ``disc``: ``fraction`` of its width, heads and FFN, the same
    depth and embeddings (shared; ``embeddings_project`` maps them to the smaller width)."""
    gen_heads = max(1, round(disc.num_attention_heads * fraction))
    gen_hidden = max(gen_heads, round(disc.hidden_size * fraction))
    gen_hidden -= gen_hidden % gen_heads  # hidden must divide into heads
    values = disc.to_dict()
    values.update(
        hidden_size=gen_hidden,
        num_attention_heads=gen_heads,
        intermediate_size=max(1, round(disc.intermediate_size * fraction)),
    )
    for key in ("architectures", "model_type", "transformers_version"):
        values.pop(key, None)
    return ElectraConfig(**values)


def mask_for_mlm(
    input_ids: torch.Tensor,
    maskable: torch.Tensor,
    mask_id: int,
    mask_prob: float,
    keep_prob: float,
    generator: Optional[torch.Generator] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Select ``round(mask_prob * n)`` maskable positions per sequence (at least one).

    Returns (masked input ids, boolean selection). Selected positions become ``mask_id`` except a
    ``keep_prob`` share that keeps the original token; specials and padding are never selected.
    """
    n_maskable = maskable.sum(dim=1)
    n_select = torch.clamp(torch.round(n_maskable.float() * mask_prob).long(), min=1)
    n_select = torch.minimum(n_select, n_maskable)
    scores = torch.rand(input_ids.shape, generator=generator, device=input_ids.device)
    scores = scores.masked_fill(~maskable, -1.0)
    # The k highest random scores of a row are a uniform sample of k of its maskable positions.
    ranks = scores.argsort(dim=1, descending=True).argsort(dim=1)
    selected = ranks < n_select.unsqueeze(1)
    keep = torch.rand(input_ids.shape, generator=generator, device=input_ids.device) < keep_prob
    masked = input_ids.masked_fill(selected & ~keep, mask_id)
    return masked, selected


def replaced_token_labels(
    original: torch.Tensor, corrupted: torch.Tensor, attention_mask: torch.Tensor
) -> torch.Tensor:
    """1.0 where the discriminator input differs from the original; a sampled token equal to the
    original counts as original, as in ELECTRA."""
    return ((corrupted != original) & attention_mask.bool()).float()


class ElectraRTD(nn.Module):
    """Generator + discriminator with tied token, position and type embeddings."""

    def __init__(self, disc_config: ElectraConfig, gen_config: ElectraConfig):
        super().__init__()
        self.discriminator = ElectraForPreTraining(disc_config)
        self.generator = ElectraForMaskedLM(gen_config)
        self.tie_embeddings()

    @classmethod
    def from_exported(cls, run_dir: Path) -> "ElectraRTD":
        """Both halves of an earlier run's export (``run_dir/model`` and ``run_dir/generator``),
        for continued pretraining; shapes come from the exported configs."""
        run_dir = Path(run_dir)
        for part in ("model", "generator"):
            if not (run_dir / part / "config.json").is_file():
                raise FileNotFoundError(
                    f"Continued pretraining needs {run_dir / part} (an ELECTRA pretraining output directory)"
                )
        model = cls.__new__(cls)
        nn.Module.__init__(model)
        model.discriminator = ElectraForPreTraining.from_pretrained(run_dir / "model")
        model.generator = ElectraForMaskedLM.from_pretrained(run_dir / "generator")
        model.tie_embeddings()
        return model

    def tie_embeddings(self) -> None:
        """Share the discriminator's embedding module with the generator and its LM head."""
        shared = self.discriminator.electra.embeddings
        self.generator.electra.embeddings = shared
        self.generator.generator_lm_head.weight = shared.word_embeddings.weight

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        maskable: torch.Tensor,
        mask_id: int,
        objective: ObjectiveSettings,
        rng: Optional[torch.Generator] = None,
    ) -> Dict[str, torch.Tensor]:
        masked, selected = mask_for_mlm(
            input_ids, maskable, mask_id, objective.mask_prob, objective.keep_prob, rng
        )
        gen_hidden = self.generator.electra(masked, attention_mask=attention_mask)[0]
        # Vocabulary logits only where the MLM loss is taken.
        gen_logits = self.generator.generator_lm_head(
            self.generator.generator_predictions(gen_hidden[selected])
        )
        targets = input_ids[selected]
        gen_loss = F.cross_entropy(gen_logits.float(), targets)

        with torch.no_grad():
            sampled = _gumbel_sample(gen_logits.detach().float() / objective.temperature, rng)
            corrupted = input_ids.clone()
            corrupted[selected] = sampled
            labels = replaced_token_labels(input_ids, corrupted, attention_mask)

        disc_logits = self.discriminator(corrupted, attention_mask=attention_mask).logits
        active = attention_mask.bool()
        disc_loss = F.binary_cross_entropy_with_logits(disc_logits[active].float(), labels[active])
        loss = gen_loss + objective.disc_weight * disc_loss

        with torch.no_grad():
            predicted = disc_logits[active] > 0
            gold = labels[active].bool()
            n_replaced = gold.sum().clamp(min=1)
            metrics = {
                "gen_acc": (gen_logits.argmax(-1) == targets).float().mean(),
                "disc_acc": (predicted == gold).float().mean(),
                "disc_recall": (predicted & gold).sum() / n_replaced,
                "disc_precision": (predicted & gold).sum() / predicted.sum().clamp(min=1),
                "replaced_share": gold.float().mean(),
            }
        return {"loss": loss, "gen_loss": gen_loss.detach(), "disc_loss": disc_loss.detach(), **metrics}


def _gumbel_sample(logits: torch.Tensor, rng: Optional[torch.Generator]) -> torch.Tensor:
    """Sample one id per row of ``logits`` (Gumbel-max: argmax(logits + Gumbel noise))."""
    uniform = torch.rand(logits.shape, generator=rng, device=logits.device)
    gumbel = -torch.log(-torch.log(uniform.clamp(1e-9, 1.0 - 1e-9)))
    return (logits + gumbel).argmax(dim=-1)
