"""A general-domain encoder's vocabulary extended with frequent domain words, before continued
pretraining (the ablation's row (d); exBERT and BioBERT discuss the trade-off).

A WordPiece vocabulary built on general text cuts biomedical words into many pieces
(``adenocarcinoma`` -> ``aden ##oca ##rc ##ino ##ma`` for all-MiniLM-L6-v2). :func:`extend_vocabulary`
counts the words of the domain text as the encoder's own tokenizer normalises and pre-splits them,
takes the most frequent ones it cuts into at least ``min_pieces`` pieces, and appends them to the
vocabulary as whole words. WordPiece matches longest first, so such a word becomes one token. Each
new embedding row starts as the mean of the rows of the pieces it replaces, so the extended
encoder reads the word much as before and continued pretraining refines it. Old ids keep their
rows: the encoder is unchanged on text without the new words.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, List, Sequence, Union

from .sources import open_text

__all__ = ["count_split_words", "extend_vocabulary"]

REPORT_FILE = "vocab_extension.json"


def count_split_words(tokenizer, lines: Iterable[str], min_pieces: int = 3) -> Counter:
    """How often each word of ``lines`` (after the tokenizer's own normalisation and pre-split)
    occurs, for the words it cuts into ``min_pieces`` pieces or more."""
    backend = tokenizer.backend_tokenizer
    counts: Counter = Counter()
    for line in lines:
        text = backend.normalizer.normalize_str(line) if backend.normalizer is not None else line
        counts.update(word for word, _ in backend.pre_tokenizer.pre_tokenize_str(text))
    return Counter({word: n for word, n in counts.items()
                    if len(word) > 1 and len(tokenizer.tokenize(word)) >= min_pieces})


def _lines(paths: Sequence[Union[str, Path]], max_lines: int) -> Iterable[str]:
    seen = 0
    for path in paths:
        with open_text(path) as f:
            for line in f:
                if line.strip():
                    yield line.strip()
                    seen += 1
                    if max_lines and seen >= max_lines:
                        return


def extend_vocabulary(
    encoder_dir: Union[str, Path],
    texts: Sequence[Union[str, Path]],
    output_dir: Union[str, Path],
    new_tokens: int = 2000,
    min_count: int = 20,
    min_pieces: int = 3,
    max_lines: int = 0,
) -> Dict[str, object]:
    """Write ``encoder_dir`` (an HF BERT-family directory with a WordPiece ``vocab.txt``) with its
    vocabulary extended by up to ``new_tokens`` words of ``texts`` (streamed; the first
    ``max_lines`` lines, 0: all) that occur ``min_count`` times or more and that it cuts into
    ``min_pieces`` pieces or more, most frequent first, to ``output_dir``; each new embedding row
    is the mean of its pieces' rows. Returns the report also written to ``vocab_extension.json``."""
    import torch
    from transformers import AutoModel, AutoTokenizer, BertTokenizerFast

    encoder_dir, output_dir = Path(encoder_dir), Path(output_dir)
    if not (encoder_dir / "vocab.txt").is_file():
        raise ValueError(f"{encoder_dir} has no vocab.txt: vocabulary extension needs a WordPiece (BERT-family) encoder")
    tokenizer = AutoTokenizer.from_pretrained(str(encoder_dir))
    counts = count_split_words(tokenizer, _lines(texts, max_lines), min_pieces)
    chosen = [word for word, n in counts.most_common() if n >= min_count][:new_tokens]
    pieces = {word: tokenizer.tokenize(word) for word in chosen}

    model = AutoModel.from_pretrained(str(encoder_dir))
    old_rows = model.get_input_embeddings().weight.detach().clone()
    old_size = old_rows.shape[0]
    model.resize_token_embeddings(old_size + len(chosen), mean_resizing=False)  # rows set below
    with torch.no_grad():
        rows = model.get_input_embeddings().weight
        for i, word in enumerate(chosen):
            rows[old_size + i] = old_rows[tokenizer.convert_tokens_to_ids(pieces[word])].mean(dim=0)

    output_dir.mkdir(parents=True, exist_ok=True)
    vocab = (encoder_dir / "vocab.txt").read_text(encoding="utf8").splitlines()
    if len(vocab) != old_size:
        raise ValueError(f"{encoder_dir}: vocab.txt has {len(vocab)} entries but the embeddings {old_size} rows")
    (output_dir / "vocab.txt").write_text("\n".join(vocab + chosen) + "\n", encoding="utf8")
    extended = BertTokenizerFast(vocab_file=str(output_dir / "vocab.txt"), do_lower_case=tokenizer.do_lower_case
                                 if hasattr(tokenizer, "do_lower_case") else False,
                                 model_max_length=tokenizer.model_max_length)
    extended.save_pretrained(str(output_dir))
    model.save_pretrained(str(output_dir))
    report = {
        "source": str(encoder_dir),
        "texts": [str(t) for t in texts],
        "old_vocab_size": old_size,
        "new_vocab_size": old_size + len(chosen),
        "added": len(chosen),
        "settings": {"new_tokens": new_tokens, "min_count": min_count, "min_pieces": min_pieces, "max_lines": max_lines},
        "examples": [{"word": w, "count": counts[w], "was": pieces[w]} for w in chosen[:25]],
    }
    (output_dir / REPORT_FILE).write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf8")
    return report
