"""The HF shim of ``spacy-biolm.PairEncoder.v1``: spacy-transformers' ``HFShim``, which also loads
a state stored in int8 (:mod:`.half_precision`). Imports spacy-transformers: the pair encoder
imports this module when it is built."""

import srsly
from spacy_transformers.layers.hf_shim import HFShim

from .half_precision import INT8_STORAGE, float_state

__all__ = ["Int8StorageHFShim"]


class Int8StorageHFShim(HFShim):
    """``HFShim`` that turns an int8-stored state back into float32 before loading it."""

    def from_bytes(self, bytes_data):
        msg = srsly.msgpack_loads(bytes_data)
        if msg.pop(INT8_STORAGE, False):
            msg["state"] = float_state(msg["state"])
            bytes_data = srsly.msgpack_dumps(msg)
        return super().from_bytes(bytes_data)
