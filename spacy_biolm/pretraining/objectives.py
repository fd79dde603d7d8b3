"""The pretraining objectives the loop can run, behind one small interface.

An objective knows how to build its model (fresh, or from an exported directory for continued
pretraining), how rows of the packed corpus are laid out, how a batch of rows becomes model
inputs, and how to export the encoder. The loop (loop.py) only moves batches and gradients.
"""

from pathlib import Path
from typing import Dict, Optional, Tuple

import numpy as np
import torch

from ..errors import PretrainingDataError
from .corpus import PackedCorpus, Packer
from .warm_start import InitSource

__all__ = ["ElectraObjective", "AlbertObjective", "get_objective", "ARCHITECTURES"]


class _Objective:
    """What every objective shares: its settings and tokenizer, and the curve plotted from its
    logged training (and held-out) records."""

    name = ""
    # Logged metrics shown in the progress bar.
    progress_keys: Tuple[str, ...] = ()
    # Whether corpus rows are [CLS] A [SEP] B [SEP] pairs rather than plain packed sequences.
    segment_pairs = False

    def __init__(self, settings, tokenizer):
        self.settings, self.tokenizer = settings, tokenizer

    def plot(self, history, path: Path, heldout=None) -> Path:
        from . import plots

        return getattr(plots, f"plot_{self.name}_curve")(history, path, heldout=heldout)


class ElectraObjective(_Objective):
    """ELECTRA replaced-token detection (electra.py); the discriminator is the encoder."""

    name = "electra"
    progress_keys = ("loss", "disc_acc", "gen_acc")

    def build_model(self, init: Optional[InitSource] = None) -> torch.nn.Module:
        from .electra import ElectraRTD, make_configs

        if init is None:
            disc_cfg, gen_cfg = make_configs(self.settings.model, len(self.tokenizer), self.tokenizer.pad_token_id)
            model = ElectraRTD(disc_cfg, gen_cfg)
        elif init.kind == "run":
            model = ElectraRTD.from_exported(init.path)
        else:
            from .warm_start import electra_from_encoder

            model = electra_from_encoder(init.path, self.settings.model)
        if self.settings.model.attention == "sdpa":
            from .attention import use_sdpa_attention

            use_sdpa_attention(model)
        return model

    def packer(self) -> Optional[Packer]:
        return None  # the corpus default, corpus.pack_documents

    @staticmethod
    def encoder(model) -> torch.nn.Module:
        """The part exported for fine-tuning."""
        return model.discriminator

    def batch(self, corpus: PackedCorpus, rows: np.ndarray, step_seed, device) -> Dict[str, torch.Tensor]:
        ids = torch.from_numpy(corpus.rows(rows).astype(np.int64)).to(device)
        return {"input_ids": ids}

    def loss(self, model, batch, maskable, attention, rng) -> Dict[str, torch.Tensor]:
        return model(batch["input_ids"], attention, maskable, self.tokenizer.mask_token_id, self.settings.objective, rng)

    def export(self, model, output_dir: Path) -> Path:
        from .export import export_electra

        return export_electra(model, self.tokenizer, output_dir, self.settings)



class AlbertObjective(_Objective):
    """ALBERT masked LM + sentence-order prediction (albert.py) over segment-pair rows."""

    name = "albert"
    progress_keys = ("loss", "mlm_acc", "sop_acc")
    segment_pairs = True

    def __init__(self, settings, tokenizer):
        super().__init__(settings, tokenizer)
        # Random replacements (10% of selected positions) never draw a special token.
        self.special_ids = sorted(set(tokenizer.all_special_ids))

    def build_model(self, init: Optional[InitSource] = None) -> torch.nn.Module:
        from .albert import AlbertMLMSOP, make_albert_config

        if init is None:
            config = make_albert_config(
                self.settings.model, len(self.tokenizer), self.tokenizer.pad_token_id,
                num_hidden_groups=self.settings.model.num_hidden_groups,
            )
            return AlbertMLMSOP(config)
        if init.kind != "run":
            raise ValueError(
                f"[paths] init = {init.path}: ALBERT continues only an earlier ALBERT run's directory; "
                "warm starts from an HF encoder are for ELECTRA ([model] architecture = \"electra\")"
            )
        return AlbertMLMSOP.from_exported(init.path)

    def packer(self) -> Optional[Packer]:
        from .albert import pack_sentence_pairs

        tok, length, seed = self.tokenizer, self.settings.corpus.max_seq_length, self.settings.system.seed
        return lambda docs: pack_sentence_pairs(docs, length, tok.cls_token_id, tok.sep_token_id, seed)

    @staticmethod
    def encoder(model) -> torch.nn.Module:
        """The part fine-tuning loads (``AutoModel`` drops the MLM and SOP heads)."""
        return model.model.albert

    def batch(self, corpus: PackedCorpus, rows: np.ndarray, step_seed, device) -> Dict[str, torch.Tensor]:
        from .albert import sentence_order_batch

        if corpus.segment_shards is None:
            raise PretrainingDataError(f"ALBERT needs a segment-pair corpus; {corpus.path} has plain sequences")
        # Swaps are drawn from (seed, step): reproducible on resume without any saved state.
        swap = np.random.default_rng(step_seed).random(len(rows)) < 0.5
        ids, token_types, sop_labels = sentence_order_batch(
            corpus.rows(rows), corpus.first_segment_lengths(rows), corpus.pad_id, swap
        )
        return {"input_ids": ids.to(device), "token_type_ids": token_types.to(device), "sop_labels": sop_labels.to(device)}

    def loss(self, model, batch, maskable, attention, rng) -> Dict[str, torch.Tensor]:
        return model(
            batch["input_ids"], attention, batch["token_type_ids"], maskable, batch["sop_labels"],
            self.tokenizer.mask_token_id, self.settings.objective, rng, self.special_ids,
        )

    def export(self, model, output_dir: Path) -> Path:
        from .albert import export_albert

        return export_albert(model, self.tokenizer, output_dir, self.settings)



ARCHITECTURES = {"electra": ElectraObjective, "albert": AlbertObjective}


def get_objective(settings, tokenizer):
    """The objective named by ``[model] architecture``."""
    name = settings.model.architecture
    if name not in ARCHITECTURES:
        raise ValueError(f"[model] architecture = {name!r}; expected one of {sorted(ARCHITECTURES)}")
    return ARCHITECTURES[name](settings, tokenizer)
