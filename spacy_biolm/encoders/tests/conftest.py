"""Fixtures: a tiny random ELECTRA encoder."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from spacy_biolm.encoders.testing import tiny_qa_encoder  # noqa: E402,F401
