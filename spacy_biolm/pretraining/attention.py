"""Scaled-dot-product attention (``torch.nn.functional.scaled_dot_product_attention``) for
ELECTRA, which transformers implements only "eagerly" (matmul, softmax, dropout, matmul).

SDPA picks a fused kernel (flash or memory-efficient attention on GPU, a fused C++ kernel on CPU)
and never materialises the attention probabilities for backward. The swap changes the class of
each self-attention module only: parameter names and shapes stay, so checkpoints and the exported
HF directory are the same as with eager attention.
"""

import torch
from torch.nn import functional as F
from transformers.models.electra.modeling_electra import ElectraSelfAttention

__all__ = ["ElectraSdpaSelfAttention", "use_sdpa_attention"]


class ElectraSdpaSelfAttention(ElectraSelfAttention):
    """ELECTRA self-attention computed with SDPA; falls back to the eager computation for the
    features SDPA cannot serve (returned attention maps, head masks, cross-attention, caches,
    relative position scores)."""

    def forward(
        self,
        hidden_states,
        attention_mask=None,
        head_mask=None,
        encoder_hidden_states=None,
        encoder_attention_mask=None,
        past_key_value=None,
        output_attentions=False,
    ):
        if (
            output_attentions
            or head_mask is not None
            or encoder_hidden_states is not None
            or past_key_value is not None
            or self.is_decoder
            or self.position_embedding_type != "absolute"
        ):
            return super().forward(
                hidden_states, attention_mask, head_mask, encoder_hidden_states,
                encoder_attention_mask, past_key_value, output_attentions,
            )
        batch, length, _ = hidden_states.shape
        query = self.transpose_for_scores(self.query(hidden_states))
        key = self.transpose_for_scores(self.key(hidden_states))
        value = self.transpose_for_scores(self.value(hidden_states))
        if attention_mask is not None:
            # The model passes an additive mask [batch, 1, 1, length] in float32; under autocast
            # the queries are bf16/fp16 and SDPA wants the mask in their dtype.
            attention_mask = attention_mask.to(query.dtype)
        context = F.scaled_dot_product_attention(
            query, key, value, attn_mask=attention_mask,
            dropout_p=self.dropout.p if self.training else 0.0,
        )
        return (context.transpose(1, 2).reshape(batch, length, self.all_head_size),)


def use_sdpa_attention(model: torch.nn.Module) -> int:
    """Switch every ELECTRA self-attention module inside ``model`` to SDPA, in place; returns how
    many were switched."""
    switched = 0
    for module in model.modules():
        if type(module) is ElectraSelfAttention:
            module.__class__ = ElectraSdpaSelfAttention
            switched += 1
    return switched
